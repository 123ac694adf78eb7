"""The demo chat: the bundled Helsinki places and park boundaries written into a chat as
entries, with their real provenance, so the scripted demo model (and a person trying
geomint without a key) has data to ask about.

Until the offline provider can search places itself, this is how a demo chat gets them:
the same events a fetch writes (``FetchMade`` beside each ``EntryWritten``), with the
OpenStreetMap licence and the extract's date on every entry.
"""

from __future__ import annotations

from typing import Any

from geomint.agent.events import AgentEvent
from geomint.agent.map_agent import MapAgent
from geomint.models.demo import DEMO_PROMPTS
from geomint.provenance import Provenance
from geomint.providers import bundled
from geomint.state import FetchMade

__all__ = ["DEMO_PROMPTS", "seed_demo_chat"]


async def seed_demo_chat(agent: MapAgent, chat_id: str | None = None) -> str:
    """Create (or reuse) a chat holding the demo places and boundaries; return its id.

    A chat that already has entries is left as it is.
    """
    chat_id = agent.open_chat(chat_id)
    context = agent.context(chat_id, "demo-seed")
    if context.workspace.entries:
        return chat_id
    for kind, name, label, data in (
        ("places", "helsinki_places", "places in central Helsinki", bundled.demo_places()),
        (
            "geometries",
            "helsinki_boundaries",
            "parks, gardens and squares of central Helsinki",
            bundled.demo_boundaries(),
        ),
    ):
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
    return chat_id


def transcript(prompt: str, events: list[AgentEvent]) -> dict[str, Any]:
    """One prompt's run as JSON: tools called, entries written, figures, charts, errors."""
    tools = [
        {"name": e.data.get("name"), "ok": e.data.get("ok"), "args": _args(e.data)}
        for e in events
        if e.type == "tool_result"
    ]
    calls = {e.data.get("id"): e.data.get("args") for e in events if e.type == "tool_call"}
    for row, event in zip(tools, [e for e in events if e.type == "tool_result"], strict=True):
        row["args"] = calls.get(event.data.get("id"), row["args"])
        if not event.data.get("ok"):
            result = event.data.get("result") or {}
            row["error"] = result.get("error") if isinstance(result, dict) else str(result)
    done = next((e for e in events if e.type == "done"), None)
    return {
        "prompt": prompt,
        "tools": tools,
        "entries": [
            {
                "entry_id": e.data["entry_id"],
                "kind": e.data["kind"],
                "version": e.data["version"],
                "label": e.data["label"],
                "features": len(e.data["geojson"].get("features", [])),
            }
            for e in events
            if e.type == "entry"
        ],
        "figures": [f for e in events if e.type == "figure" for f in e.data.get("figures", [])],
        "charts": [e.data.get("config") for e in events if e.type == "chart"],
        "monitors": [e.data for e in events if e.type == "monitor_ran"],
        "errors": [e.data.get("message") for e in events if e.type == "error"],
        "text": done.data.get("text") if done else "",
        "steps": done.data.get("steps") if done else 0,
    }


def _args(data: dict[str, Any]) -> Any:
    return data.get("args")
