"""The demo chat: the bundled Helsinki places and park boundaries written into a chat as
entries, with their real provenance, so the scripted demo model (and a person trying
geomint without a key) has data to ask about.

Until the offline provider can search places itself, this is how a demo chat gets them:
the same events a fetch writes (``FetchMade`` beside each ``EntryWritten``), with the
OpenStreetMap licence and the extract's date on every entry.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from geomint.agent.map_agent import MapAgent
from geomint.models.demo import DEMO_PROMPTS
from geomint.provenance import Provenance
from geomint.providers import bundled
from geomint.state import FetchMade
from geomint.state.events import EntryKind
from geomint.tools import ToolContext
from geomint.ui import (
    ChartPart,
    EntryPart,
    FigurePart,
    MapChangePart,
    MonitorRanPart,
    Part,
    RunEndedPart,
    TextDeltaPart,
    TextPart,
    ToolCallPart,
    ToolResultPart,
)

__all__ = ["DEMO_PROMPTS", "seed_demo_chat", "seed_demo_data"]


def _open_spaces(boundaries: dict[str, Any]) -> dict[str, Any]:
    """The parks, gardens and squares of the bundled outlines, as the demo's entry says:
    the landmark buildings' outlines stay with get_boundaries."""
    kept = [
        f for f in boundaries["features"] if f["properties"]["kind"] in {"park", "garden", "square"}
    ]
    return {**boundaries, "features": kept}


async def seed_demo_chat(agent: MapAgent, chat_id: str | None = None) -> str:
    """Create (or reuse) a chat holding the demo places and boundaries; return its id.

    A chat that already has entries is left as it is.
    """
    chat_id = agent.open_chat(chat_id)
    await seed_demo_data(agent.context(chat_id, "demo-seed"))
    return chat_id


async def seed_demo_data(context: ToolContext) -> None:
    """Write the demo places and boundaries into the context's chat, unless it has entries.

    The web app also seeds a chat held in memory with it, to show a new chat's data before
    anything is stored (:mod:`geomint.server.new_chat`): one seeding, so the two agree.
    """
    if context.workspace.entries:
        return
    seeds: tuple[tuple[EntryKind, str, str, dict[str, Any]], ...] = (
        ("places", "helsinki_places", "places in central Helsinki", bundled.demo_places()),
        (
            "geometries",
            "helsinki_boundaries",
            "parks, gardens and squares of central Helsinki",
            _open_spaces(bundled.demo_boundaries()),
        ),
    )
    for kind, name, label, data in seeds:
        source = Provenance(**bundled.source(name))
        written = await context.write_entry(kind=kind, data=data, label=label, sources=[source])
        context.append(
            [
                FetchMade(
                    tool="demo",
                    provider="bundled",
                    request={"file": name},
                    entry_id=written.entry_id,
                    sources=(source,),
                )
            ]
        )


#: What a transcript keeps of a map change.
_MAP_CHANGE = {"change_id", "intent", "description", "diff", "attempts", "usage", "spec_version"}


def transcript(prompt: str, parts: Sequence[Part]) -> dict[str, Any]:
    """One prompt's run as JSON: tools called, entries written, figures, charts, errors,
    the answer as written (``text``, figures cited by id) and as read (``rendered``), and
    what it cited, which typed numbers matched a minted value and which matched none."""
    calls = {p.call_id: p for p in parts if isinstance(p, ToolCallPart)}
    tools: list[dict[str, Any]] = []
    for part in parts:
        if isinstance(part, ToolResultPart):
            call = calls.get(part.call_id)
            row: dict[str, Any] = {
                "name": part.tool,
                "ok": part.ok,
                "args": call.args if call is not None else {},
            }
            if not part.ok:
                row["error"] = part.error
            tools.append(row)
    ended = next((p for p in parts if isinstance(p, RunEndedPart)), None)
    return {
        "prompt": prompt,
        "tools": tools,
        "entries": [
            {
                "entry_id": p.entry_id,
                "kind": p.kind,
                "version": p.version,
                "label": p.label,
                "features": p.features,
            }
            for p in parts
            if isinstance(p, EntryPart)
        ],
        "figures": [
            f.model_dump(mode="json") for p in parts if isinstance(p, FigurePart) for f in p.figures
        ],
        "charts": [p.config for p in parts if isinstance(p, ChartPart)],
        "map_changes": [
            p.model_dump(
                mode="json",
                include={
                    "change_id",
                    "intent",
                    "description",
                    "diff",
                    "attempts",
                    "usage",
                    "spec_version",
                },
            )
            for p in parts
            if isinstance(p, MapChangePart)
        ],
        "monitors": [
            p.model_dump(mode="json", exclude={"seq", "run_id", "at", "type"})
            for p in parts
            if isinstance(p, MonitorRanPart)
        ],
        "errors": [ended.error] if ended is not None and ended.error else [],
        "text": "".join(p.delta for p in parts if isinstance(p, TextDeltaPart)),
        "rendered": "".join(p.rendered for p in parts if isinstance(p, TextPart)),
        "cited": (ended.cited or 0) if ended is not None else 0,
        "matched": (ended.matched or 0) if ended is not None else 0,
        "unminted": (ended.unminted or 0) if ended is not None else 0,
        "steps": ended.steps if ended is not None else 0,
    }
