"""Tools the classifier left out stay within reach: ``use_tools`` activates them, and a call
to one says it is active now. Approvals and the log hold as for any tool."""

from __future__ import annotations

from asyncio import run
from collections.abc import Callable
from typing import Any

import pytest

from geomint.agent import ApprovalRequest, MapAgent
from geomint.agent._surface import USE_TOOLS
from geomint.errors import UsageError
from geomint.state import ApprovalAsked, ToolCalled, ToolFailed, ToolReturned
from geomint.testing import Script, tool_returns
from geomint.tools import DEFAULT_TOOLS, ToolEntry
from geomint.ui import chat_parts, is_durable

_LEFT_OUT = {
    "error": "discover_places was not active this turn, so this call did not run",
    "hint": "it is active now: call discover_places again, with the parameters in its schema",
    "not_run": True,
}
_ACTIVATED = {
    "active": ["discover_places"],
    "hint": "call them now: they are in your tool list, with their parameters",
}
_CAFES = {"category": "cafe", "where": {"queries": [{"query": "Esplanadinpuisto"}]}}
_PICK = {"tools": ["locate_place"], "scopes": {}}


def _shown(script: Script) -> list[set[str]]:
    """The tools each of the loop's requests showed the model, in order."""
    return [
        {t.name for t in info.function_tools} for kind, _, info in script.seen if kind == "loop"
    ]


def test_a_call_to_a_tool_left_out_does_not_run_and_says_it_is_active_now(
    make_agent: Callable[..., MapAgent],
) -> None:
    script = Script(
        picks=[_PICK],
        steps=[[("discover_places", _CAFES)], [("discover_places", _CAFES)], "Cafés found."],
    )
    agent = make_agent(script)
    result = run(agent.run("Cafés in the Esplanade park", chat_id="left-out"))

    first, second = result.tool_calls
    assert first["result"] == _LEFT_OUT and first["ok"] is False
    assert second["ok"] is True and second["result"]["entry_id"] == "places-1"
    assert result.text == "Cafés found." and result.errors == []
    # Shown from the step after the call, with its full description, for the rest of the turn.
    before, after, last = _shown(script)
    assert "discover_places" not in before and {"locate_place", USE_TOOLS} <= before
    assert "discover_places" in after and "discover_places" in last
    (_, _, info) = script.seen[2]
    (tool,) = [t for t in info.function_tools if t.name == "discover_places"]
    assert tool.description is not None
    assert tool.description.startswith(DEFAULT_TOOLS["discover_places"].description)
    # The call that did not run is kept as a call that was not run, not as a failure to
    # count: the log has both calls and how each ended.
    events = [e.body for e in agent.chats.trace("left-out", result.run_id)]
    ended = [b for b in events if isinstance(b, ToolFailed | ToolReturned)]
    assert [type(b).__name__ for b in ended] == ["ToolFailed", "ToolReturned"]
    assert isinstance(ended[0], ToolFailed) and ended[0].result == _LEFT_OUT


def test_use_tools_activates_a_tool_for_the_rest_of_the_turn(
    make_agent: Callable[..., MapAgent],
) -> None:
    script = Script(
        picks=[_PICK],
        steps=[
            [(USE_TOOLS, {"names": ["discover_places"]})],
            [("discover_places", _CAFES)],
            "Cafés found.",
        ],
    )
    agent = make_agent(script)
    result = run(agent.run("Cafés in the Esplanade park", chat_id="use"))

    use, discover = result.tool_calls
    assert use["ok"] is True and use["result"] == _ACTIVATED
    assert discover["ok"] is True and discover["result"]["entry_id"] == "places-1"
    before, after, _ = _shown(script)
    assert "discover_places" not in before and "discover_places" in after
    assert dict(tool_returns(script.seen[-1][1]))[USE_TOOLS] == _ACTIVATED


def test_a_tool_activated_in_a_step_runs_from_the_next_step_on(
    make_agent: Callable[..., MapAgent],
) -> None:
    # Named to use_tools and called in the same response: the call was made without the
    # tool's schema, so it does not run, whichever of the two calls runs first.
    both = [(USE_TOOLS, {"names": ["discover_places"]}), ("discover_places", _CAFES)]
    script = Script(picks=[_PICK], steps=[both, [("discover_places", _CAFES)], "Cafés found."])
    agent = make_agent(script)
    result = run(agent.run("Cafés in the Esplanade park", chat_id="same-step"))

    assert [(c["name"], c["ok"]) for c in result.tool_calls] == [
        (USE_TOOLS, True),
        ("discover_places", False),
        ("discover_places", True),
    ]
    assert result.tool_calls[1]["result"] == _LEFT_OUT


def test_use_tools_lists_each_tool_left_out_in_one_line(
    make_agent: Callable[..., MapAgent],
) -> None:
    script = Script(picks=[_PICK], steps=["Nothing to do."])
    agent = make_agent(script)
    run(agent.run("Where is Kamppi?", chat_id="list"))

    (_, _, info) = script.seen[-1]
    (use,) = [t for t in info.function_tools if t.name == USE_TOOLS]
    assert use.description is not None
    intro, *lines = use.description.split("\n")
    assert intro == (
        "Activate tools for the rest of this turn; they join your tool list at your next "
        "step. Not active now:"
    )
    assert (
        "- discover_places: Find places (cafés, schools, shops...) by kind or name in an area."
        in lines
    )
    # The picked tool is not listed, nor are tools no provider here answers.
    listed = [line.split(":", 1)[0].removeprefix("- ") for line in lines]
    offered = [n for n in DEFAULT_TOOLS if n not in agent.not_offered and n != "locate_place"]
    assert listed == offered


@pytest.mark.parametrize(
    ("names", "error"),
    [
        (
            ["discover_place"],
            "there is no tool named 'discover_place'; did you mean 'discover_places'?",
        ),
        (
            ["get_traffic_incidents"],
            "get_traffic_incidents is not offered here: no provider answers traffic",
        ),
    ],
)
def test_use_tools_refuses_a_name_it_cannot_activate(
    make_agent: Callable[..., MapAgent], names: list[str], error: str
) -> None:
    script = Script(
        picks=[_PICK],
        steps=[[(USE_TOOLS, {"names": [*names, "help"]})], [("help", {})], "Sorry."],
    )
    agent = make_agent(script)
    result = run(agent.run("Traffic in Kamppi?", chat_id="refused"))

    use, help_call = result.tool_calls
    assert use["result"] == {
        "error": error,
        "hint": "name tools from the list in use_tools' description; nothing was activated",
    }
    # Nothing was activated, help among them: its call did not run.
    assert help_call["result"]["not_run"] is True


def test_a_tool_activated_this_way_asks_for_approval_like_any_other(
    make_agent: Callable[..., MapAgent],
) -> None:
    asked: list[ApprovalRequest] = []

    async def refuse(request: ApprovalRequest) -> tuple[bool, str]:
        asked.append(request)
        return False, "not now"

    script = Script(
        picks=[_PICK],
        steps=[[("discover_places", _CAFES)], [("discover_places", _CAFES)], "Refused."],
    )
    agent = make_agent(script, require_approval=["network"], approve=refuse)
    result = run(agent.run("Cafés in the Esplanade park", chat_id="asked"))

    assert [(r.tool, r.effects) for r in asked] == [("discover_places", ("network",))]
    assert result.tool_calls[1]["ok"] is False
    assert "needs a person's approval" in result.tool_calls[1]["result"]["error"]
    events = [e.body for e in agent.chats.trace("asked", result.run_id)]
    assert [b.tool for b in events if isinstance(b, ApprovalAsked)] == ["discover_places"]


def test_what_a_run_that_activated_a_tool_streamed_reads_back_the_same(
    make_agent: Callable[..., MapAgent],
) -> None:
    script = Script(
        picks=[_PICK],
        steps=[
            [("discover_places", _CAFES)],
            [(USE_TOOLS, {"names": ["fit_bounds"]})],
            [("fit_bounds", {"entry_ids": ["places-1"]})],
            "Done.",
        ],
    )
    agent = make_agent(script)
    result = run(agent.run("Cafés in the Esplanade park", chat_id="same"))

    assert [c["name"] for c in result.tool_calls] == [
        "discover_places",
        USE_TOOLS,
        "fit_bounds",
    ]
    streamed = [p for p in result.parts if is_durable(p)]
    assert chat_parts(agent.chats, "same", run_id=result.run_id) == streamed
    called = [e.body.tool for e in agent.chats.trace("same") if isinstance(e.body, ToolCalled)]
    assert called == ["discover_places", USE_TOOLS, "fit_bounds"]


def test_without_a_classifier_every_tool_is_shown_and_there_is_no_use_tools(
    make_agent: Callable[..., MapAgent],
) -> None:
    script = Script(steps=["Every tool."])
    agent = make_agent(script, classifier=False)
    run(agent.run("anything", chat_id="all"))
    (shown,) = _shown(script)
    assert USE_TOOLS not in shown and "discover_places" in shown
    assert USE_TOOLS not in agent.tools_for(None)


def test_a_tool_may_not_take_the_name_use_tools(make_agent: Callable[..., MapAgent]) -> None:
    entry: ToolEntry[Any] = DEFAULT_TOOLS["help"]
    with pytest.raises(UsageError) as raised:
        make_agent(Script(), tools={USE_TOOLS: entry})
    assert str(raised.value) == (
        "'use_tools' is the agent's own tool (it activates tools the classifier did not "
        "pick); give your tool another name"
    )
