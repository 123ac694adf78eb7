"""Approvals guard effects, not tool names.

The red team refused a ``process_data`` call (``--approve process_data``), and the model
then added the same layer with ``analyse_data`` and ``mint.layer``, unasked. Each effect
is now asked for where it happens, whichever tool reaches it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from tests.agent.scripted import Script, run

from geomint.agent import ApprovalRequest, MapAgent
from geomint.agent.demo import seed_demo_chat
from geomint.state import ApprovalAsked

UNION = (
    "parks = gpd.GeoDataFrame.from_features(geometries['features'])\n"
    "return {'geometries': [{'label': 'parks united', 'geometry': "
    "shapely.union_all(parks.geometry)}]}"
)
MINTED = (
    "parks = gpd.GeoDataFrame.from_features(geometries['features'])\n"
    "mint.layer(shapely.union_all(parks.geometry), 'parks united')\n"
    "return len(parks)"
)
COUNT = "return len(geometries['features'])"


def _script(*calls: tuple[str, dict[str, Any]]) -> Script:
    return Script(
        picks=[{"tools": sorted({name for name, _ in calls}), "scopes": {}}],
        steps=[*[[call] for call in calls], "Done."],
    )


def _analyse(code: str, name: str = "parks") -> tuple[str, dict[str, Any]]:
    arguments = {"geometries_entry_ids": ["geometries-1"], "code": code, "name": name}
    return ("analyse_data", arguments)


def _asker(answer: bool, asked: list[ApprovalRequest]) -> Callable[..., Any]:
    async def approve(request: ApprovalRequest) -> tuple[bool, str]:
        asked.append(request)
        return answer, "approved" if answer else "not on my map"

    return approve


def _geometries(agent: MapAgent, chat_id: str) -> list[str]:
    return [e for e in agent.chats.open(chat_id).entries if e.startswith("geometries")]


def test_a_refused_layer_is_not_reached_through_another_tool(
    make_agent: Callable[..., MapAgent],
) -> None:
    asked: list[ApprovalRequest] = []
    process = ("process_data", {"geometries_entry_ids": ["geometries-1"], "code": UNION})
    agent = make_agent(_script(process, _analyse(MINTED)), require_approval=["process_data"])
    chat_id = run(seed_demo_chat(agent, "sidestep"))
    result = run(agent.run("Union the parks", chat_id=chat_id, approve=_asker(False, asked)))
    assert [(r.tool, r.effects) for r in asked] == [
        ("process_data", ("code_entry", "runs_code")),
        ("analyse_data", ("code_entry", "runs_code")),
    ]
    assert _geometries(agent, chat_id) == ["geometries-1"]  # nothing was added
    refusal = result.tool_calls[1]["result"]["error"]
    assert refusal.startswith("analyse_data needs a person's approval to ")
    assert refusal.endswith("and was refused: not on my map")
    assert [m["effect"] for m in asked[1].preview["effects"]] == ["code_entry", "runs_code"]


def test_code_entry_asks_only_when_code_adds_a_layer_and_once_per_call(
    make_agent: Callable[..., MapAgent],
) -> None:
    asked: list[ApprovalRequest] = []
    agent = make_agent(
        _script(_analyse(COUNT, "count"), _analyse(MINTED)), require_approval=["code_entry"]
    )
    chat_id = run(seed_demo_chat(agent, "layers"))
    run(agent.run("Count, then union the parks", chat_id=chat_id, approve=_asker(True, asked)))
    (request,) = asked  # the count ran unasked: it adds nothing to the map
    assert request.tool == "analyse_data" and request.effects == ("code_entry",)
    assert request.preview["about"]["label"] == "parks united"
    assert request.preview["about"]["features"] == 1
    assert "mint.layer" in request.preview["about"]["code"]
    assert _geometries(agent, chat_id) == ["geometries-1", "geometries-2"]
    stored = [e.body for e in agent.chats.trace(chat_id) if isinstance(e.body, ApprovalAsked)]
    assert [b.effects for b in stored] == [("code_entry",)]


def test_a_tool_named_that_declares_no_effects_is_asked_before_each_call(
    make_agent: Callable[..., MapAgent],
) -> None:
    asked: list[ApprovalRequest] = []
    recall = ("recall_state", {})
    agent = make_agent(_script(recall), require_approval=["recall_state"])
    result = run(agent.run("What is here?", chat_id="recall", approve=_asker(False, asked)))
    assert [(r.tool, r.effects) for r in asked] == [("recall_state", ())]
    assert result.tool_calls[0]["result"]["error"] == (
        "recall_state needs a person's approval and was refused: not on my map"
    )
