"""Recall tools: read what the chat has gathered back from its state. They never fetch.

Tool results do not stay in the model's history; these are how a later turn learns what
an earlier one found. Each returns handles and digests; the full data of one entry goes
to the UI.
"""

from __future__ import annotations

from typing import Any, Final

from pydantic import BaseModel, ConfigDict, Field

from geomint.state import Workspace
from geomint.state.workspace import Entry
from geomint.tools.context import ToolContext
from geomint.tools.registry import ToolEntry
from geomint.tools.results import ToolError, ToolResult

__all__ = ["RECALL_STATE", "RECALL_TOOLS"]


class RecallInput(BaseModel):
    """List the entries of one kind, or describe one in more detail."""

    model_config = ConfigDict(extra="forbid")

    id: str | None = Field(default=None, description="One entry id; omit to list them all.")


def _row(entry: Entry) -> dict[str, Any]:
    digest = entry.latest.digest
    return {
        "entry_id": entry.entry_id,
        "label": entry.latest.label,
        "version": entry.version,
        "feature_count": digest.get("feature_count"),
        "bbox": digest.get("bbox"),
        "visible": entry.visible,
        "removed": entry.removed,
    }


def _recall_tool(kind: str, what: str) -> ToolEntry[Any]:
    async def execute(arguments: RecallInput, ctx: ToolContext) -> ToolResult:
        entries = ctx.workspace.of_kind(kind)
        if arguments.id is None:
            return ToolResult(model={"kind": kind, "entries": [_row(e) for e in entries]})
        entry = ctx.workspace.entries.get(arguments.id)
        if entry is None or entry.kind != kind:
            raise ToolError(
                f"no {kind} entry {arguments.id!r}",
                hint=f"the {kind} entries are {', '.join(e.entry_id for e in entries) or 'none'}",
            )
        written = entry.latest
        detail = {
            **_row(entry),
            "digest": written.digest,
            "sources": [
                {"title": s.title, "publisher": s.publisher, "licence": s.licence}
                for s in written.sources
            ],
            "derived_from": [d.model_dump() for d in written.derived_from],
            "analyses": [
                {
                    "analysis_id": a.analysis_id,
                    "name": a.name,
                    "tool": a.tool,
                    "ok": a.error is None,
                }
                for a in ctx.workspace.analyses_of(entry.entry_id)[-20:]
            ],
            "note": "this is its digest; read its features with analyse_data",
        }
        return ToolResult(model=detail)

    return ToolEntry(
        changes_chat=False,
        description=(
            f"Recall the {what} this chat has gathered: a list (ids, labels, counts, bbox), "
            "or one entry's digest and sources by id. Reads state; never fetches."
        ),
        input_schema=RecallInput,
        execute=execute,
        classification_prompt=f"Look up {what} found earlier in this chat.",
        tags=("recall",),
        example_prompts=(f"What were those {what} again?",),
    )


RECALL_TOOLS: Final = {
    "recall_places": _recall_tool("places", "places"),
    "recall_routes": _recall_tool("routes", "routes"),
    "recall_ranges": _recall_tool("ranges", "reachable areas"),
    "recall_geometries": _recall_tool("geometries", "boundaries and shapes"),
    "recall_byod": _recall_tool("byod", "user layers"),
}


class StateInput(BaseModel):
    """No arguments."""

    model_config = ConfigDict(extra="forbid")


def state_summary(workspace: Workspace) -> dict[str, Any]:
    """What the chat holds, as handles: entries, analyses, figures, view, misses."""
    latest: dict[str, Any] = {}
    succeeded: set[str] = set()
    for analysis in workspace.analyses.values():
        latest[analysis.name or analysis.analysis_id] = analysis
        if analysis.error is None:
            succeeded.add(analysis.name or analysis.analysis_id)
    return {
        "entries": [_row(e) | {"kind": e.kind} for e in workspace.entries.values()],
        "analyses": [
            {
                "name": name,
                "analysis_id": a.analysis_id,
                "tool": a.tool,
                "ok": a.error is None,
                # A monitor whose runs all failed watches nothing (it never re-runs).
                "monitoring": (a.monitored or a.tracker)
                and name in succeeded
                and name not in workspace.switched_off,
                "tracker": a.tracker,
            }
            for name, a in latest.items()
        ],
        "values": [
            {"id": v.id, "label": v.label, "value": v.value, "unit": v.unit}
            for v in workspace.values
        ],
        "view": workspace.view.model_dump(exclude={"type"}) if workspace.view else None,
        "misses": [
            {"tool": m.tool, "reason": m.reason, **({"code": m.code} if m.code else {})}
            for m in workspace.misses[-5:]
        ],
        "map_changes": [
            {
                "id": c.change_id,
                "intent": c.intent,
                "applied": c.description,
                "undone": c.change_id in workspace.undone,
            }
            for c in workspace.map_changes
        ],
    }


async def _recall_state(_: StateInput, ctx: ToolContext) -> ToolResult:
    workspace = ctx.workspace
    return ToolResult(model=state_summary(workspace))


RECALL_STATE: Final = ToolEntry(
    changes_chat=False,
    description=(
        "Recall everything this chat holds: entries of every kind, analyses (and which are "
        "monitoring), minted figures with their ids, the map view, the map changes made with "
        "map code. Reads state; never fetches."
    ),
    input_schema=StateInput,
    execute=_recall_state,
    classification_prompt="Recall what this chat has gathered so far, or which ids exist.",
    tags=("recall",),
    example_prompts=("What do we have so far?",),
)
