"""``execute_map_code``: change the map with Python that never reaches the page.

The intent (and optionally a body the model already wrote) goes through the codegen
pipeline (:mod:`geomint.codegen`): skills, a second model call that writes the code, a dry
run in the sandbox against a recording ``mapview``, the diff validated against the MapLibre
style specification and geomint's caps, retries with every violation. What is kept is a
:class:`~geomint.state.MapChanged` event holding the diff (data) and the blobs it names;
the page applies it through MapLibre's API, replays it on reload, and can undo it.
"""

from __future__ import annotations

import hashlib
from typing import Any, Final

from pydantic import BaseModel, ConfigDict, Field

from geomint.codegen import stylespec
from geomint.codegen.pipeline import MapCodeOutcome, generate_verified_map_code
from geomint.codegen.style import current_style
from geomint.sandbox.results import to_json_safe
from geomint.state import MapChanged, MapChangeUndone, MapUsage
from geomint.tools._analysis import entry_ids_by_kind, gather_inputs
from geomint.tools.context import ToolContext
from geomint.tools.registry import ToolEntry
from geomint.tools.results import ToolError, ToolResult

__all__ = ["EXECUTE_MAP_CODE", "UNDO_MAP_CHANGE", "map_change_result"]

_MAX_ENTRIES: Final = 20


class MapCodeInput(BaseModel):
    """Change the map's style with map code."""

    model_config = ConfigDict(extra="forbid")

    intent: str = Field(
        min_length=1,
        max_length=2_000,
        description="What should change on the map, in the person's words (e.g. 'heatmap of "
        "the cafés in places-1')",
    )
    entry_ids: list[str] = Field(
        default_factory=list,
        max_length=_MAX_ENTRIES,
        description="The entries the change concerns (their data is given to the code)",
    )
    code: str | None = Field(
        default=None,
        max_length=20_000,
        description="Optional: a Python body you already wrote that calls `mapview`; it is "
        "checked like generated code, and rewritten if it fails",
    )


class UndoInput(BaseModel):
    """Undo one map change."""

    model_config = ConfigDict(extra="forbid")

    change_id: str = Field(pattern=r"^m[1-9][0-9]*$", description="The change, e.g. 'm2'")


async def _execute(arguments: MapCodeInput, ctx: ToolContext) -> ToolResult:
    workspace = ctx.workspace
    ids = list(dict.fromkeys(arguments.entry_ids))
    missing = [i for i in ids if i not in workspace.entries]
    if missing:
        known = ", ".join(workspace.entries) or "none yet"
        raise ToolError(
            f"no entry {', '.join(map(repr, missing))} in this chat",
            hint=f"the entries are {known}",
        )
    style = current_style(workspace)
    # The person sees the intent before any code is written, as in the seed.
    await ctx.require(
        "map_style", {"intent": arguments.intent, "entry_ids": ids, "stage": "intent"}
    )
    inputs, read = gather_inputs(ctx, entry_ids_by_kind(ids))
    digests = [_digest(ctx, entry_id) for entry_id in ids]
    ctx.progress("execute_map_code", None, "running")
    outcome = await generate_verified_map_code(
        intent=arguments.intent,
        style=style,
        entries=digests,
        inputs=inputs,
        sandbox=ctx.sandbox,
        model=ctx.codegen_model,
        code=arguments.code,
        budget=ctx.budget,
    )
    ctx.progress("execute_map_code", None, "done", round(sum(outcome.timings.values())))
    if outcome.verified is None:
        raise ToolError(
            outcome.error or "the map code was refused",
            hint=(
                "nothing on the map changed; say what should change more simply, or use a "
                "display tool (update_places_display, fly_to) when one covers it"
            ),
        )
    verified = outcome.verified
    # The blobs are stored first, so the approval's preview can draw them; one refused
    # stays unnamed by any change (content-addressed, it costs its bytes once).
    blobs = [
        ctx.chats.store.put_blob(ctx.chat_id, data, media_type)
        for data, media_type in verified.blobs.values()
    ]
    # ...and the effect before it is applied: the diff in words, and as data the page
    # draws as a preview.
    await ctx.require(
        "map_style",
        {"intent": arguments.intent, "stage": "effect", "description": verified.description,
         "diff": verified.diff, "blobs": [b.model_dump(mode="json") for b in blobs]},
        again=True,
    )  # fmt: skip
    change = MapChanged(
        change_id=ctx.workspace.next_map_change_id(),
        intent=arguments.intent,
        description=verified.description,
        diff=verified.diff,
        blobs=tuple(blobs),
        code=outcome.code,
        code_hash=hashlib.sha256(outcome.code.encode()).hexdigest(),
        entry_ids=tuple(r.entry_id for r in read),
        attempts=len(outcome.attempts),
        usage=MapUsage(**outcome.usage.as_dict()),
        spec_version=stylespec.SPEC_VERSION,
    )
    ctx.append([change])
    return ToolResult(model=map_change_result(change, outcome))


def map_change_result(change: MapChanged, outcome: MapCodeOutcome | None = None) -> dict[str, Any]:
    """What the model reads of a change: its id, the diff's ids in words, the cost."""
    diff: dict[str, Any] = dict(change.diff)
    added: dict[str, Any] = diff.get("added") or {}
    out: dict[str, Any] = {
        "change_id": change.change_id,
        "applied": change.description,
        "layers_added": [layer.get("id") for layer in added.get("layers") or []],
        "sources_added": list(added.get("sources") or {}),
        "attempts": change.attempts,
        "undo": f"undo_map_change(change_id={change.change_id!r})",
    }
    if change.usage.requests:
        out["generation"] = {
            "calls": change.usage.requests,
            "tokens": change.usage.input_tokens + change.usage.output_tokens,
        }
    if outcome is not None and outcome.skills:
        out["skills"] = list(outcome.skills)
    return out


def _digest(ctx: ToolContext, entry_id: str) -> dict[str, Any]:
    entry = ctx.workspace.entries[entry_id]
    latest = entry.versions[-1]
    digest = to_json_safe(dict(latest.digest)) if latest.digest else {}
    out: dict[str, Any] = {"id": entry_id, "kind": entry.kind, "label": latest.label}
    if isinstance(digest, dict):
        out.update({k: v for k, v in digest.items() if k not in out})
    return out


async def _undo(arguments: UndoInput, ctx: ToolContext) -> ToolResult:
    workspace = ctx.workspace
    known = [c.change_id for c in workspace.applied_map_changes]
    if arguments.change_id not in known:
        raise ToolError(
            f"no applied map change {arguments.change_id!r}",
            hint=f"the applied changes are {', '.join(known)}" if known else "none is applied",
        )
    blocker = workspace.map_change_blocker(arguments.change_id)
    if blocker is not None:
        raise ToolError(
            f"{blocker.change_id} builds on what {arguments.change_id} added",
            hint=f"undo {blocker.change_id} first",
        )
    await ctx.require("map_style", {"undo": arguments.change_id, "stage": "effect"})
    ctx.append([MapChangeUndone(change_id=arguments.change_id)])
    return ToolResult(model={"undone": arguments.change_id})


_DESCRIPTION: Final = (
    "Change how the map looks with Python for anything the display tools do not cover: "
    "heatmaps, 3D extrusions, data-driven colours and sizes, labels, filters, raster "
    "overlays the code renders (a hexagon density surface), animations, camera moves. "
    "Give `intent` (what should change, in the person's words) and the `entry_ids` it "
    "concerns; a second model writes the code against `mapview`, an object that stands for "
    "MapLibre's `map` (add_source, add_layer, set_paint_property, set_filter, move_layer, "
    "fly_to, animate, get_style...), and it is checked against the MapLibre style "
    "specification before anything changes. Optionally pass `code`, a body you wrote. The "
    "code runs isolated and never reaches the page: only a validated style diff does. "
    "URLs are not allowed. The result names the change (m1, m2...), which undo_map_change "
    "takes back."
)

EXECUTE_MAP_CODE: Final = ToolEntry(
    description=_DESCRIPTION,
    input_schema=MapCodeInput,
    execute=_execute,
    effects=frozenset({"runs_code", "map_style"}),
    classification_prompt=(
        "Change the map's look in ways the display tools cannot: heatmaps, 3D, animation, "
        "overlays, data-driven styling, custom layers."
    ),
    tags=("map", "code"),
    examples=("execute_map_code(intent='heatmap of the cafés', entry_ids=['places-1'])",),
    example_prompts=(
        "Heatmap of the cafés",
        "Extrude the parks by their area",
        "Animate the route from start to end",
    ),
    related_tools=("undo_map_change", "update_places_display", "fly_to"),
)

UNDO_MAP_CHANGE: Final = ToolEntry(
    description="Take back a change execute_map_code made (by its id, e.g. 'm2'); the map "
    "shows the rest as before. A later change that builds on it must be undone first.",
    input_schema=UndoInput,
    execute=_undo,
    effects=frozenset({"map_style"}),
    classification_prompt="Undo or take back a map change made with map code.",
    tags=("map",),
    examples=("undo_map_change(change_id='m1')",),
    example_prompts=("Undo that heatmap",),
    related_tools=("execute_map_code",),
)
