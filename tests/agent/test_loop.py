"""The agent's loop: the seed example end to end, the two-failure rule, max_steps counting
model steps, a chat resumed after a restart, hooks, custom tools."""

from __future__ import annotations

import asyncio
from asyncio import run
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel

from geomint.agent import ApprovalRequest, MapAgent, create_map_agent
from geomint.agent._toolset import STOP_MESSAGE
from geomint.agent.demo import seed_demo_chat
from geomint.errors import ModelFacingError, UsageError
from geomint.models.demo import DemoModel
from geomint.providers import bundled
from geomint.state import AnalysisRecorded, FigurePresented, MessageAdded, RunEnded, ToolFailed
from geomint.store import Chats, SQLiteStore
from geomint.testing import Script, tool_returns
from geomint.tools import ToolEntry, ToolError, ToolSettings
from geomint.ui import QuestionPart, TextDeltaPart

_CHART = """\
from collections import Counter
counts = Counter(f["properties"]["category"] for f in places["features"])
mint.value(len(places["features"]), "places counted", unit="places")
top = counts.most_common(5)
return {"type": "bar", "data": {"labels": [c for c, _ in top],
        "datasets": [{"label": "Places", "data": [n for _, n in top]}]}}"""


def _chart_script() -> Script:
    return Script(
        picks=[
            {
                "tools": ["analyse_data", "present_figure"],
                "scopes": {"analyse_data": {"kinds": ["places"]}},
            }
        ],
        steps=[
            [
                (
                    "analyse_data",
                    {
                        "places_entry_ids": ["places-1"],
                        "name": "category-bar",
                        "output_format": "chart",
                        "code": _CHART,
                    },
                )
            ],
            [("present_figure", {"value_ids": ["v1"], "title": "Places"})],
            "Here is the chart.",
        ],
    )


def test_seed_example_bar_chart_of_places_by_category_end_to_end(
    make_agent: Callable[..., MapAgent],
) -> None:
    script = _chart_script()
    agent = make_agent(script)
    chat = run(seed_demo_chat(agent, "seed"))
    result = run(agent.run("Bar chart of these places by category", chat_id=chat))

    assert result.errors == []
    assert result.text == "Here is the chart."
    assert [c["name"] for c in result.tool_calls] == ["analyse_data", "present_figure"]
    assert all(c["ok"] for c in result.tool_calls)
    (chart,) = result.charts
    assert chart["type"] == "bar"
    assert chart["data"]["labels"][0] == "restaurant"  # the most common category in the data
    (figure,) = result.figures
    assert (figure.id, figure.value, figure.unit) == ("v1", 1346, "places")
    assert figure.licences == ("ODbL-1.0",)
    assert figure.sources[0].publisher == "OpenStreetMap contributors"
    # The classifier's scope narrowed analyse_data to places for the loop's request.
    (_, _, info) = next(s for s in script.seen if s[0] == "loop")
    (tool,) = [t for t in info.function_tools if t.name == "analyse_data"]
    properties = tool.parameters_json_schema["properties"]
    assert "places_entry_ids" in properties and "routes_entry_ids" not in properties
    # The others are left out, within reach through use_tools.
    assert {t.name for t in info.function_tools} == {"analyse_data", "present_figure", "use_tools"}
    # The log holds the analysis, the figure shown, and both messages.
    events = [e.body for e in agent.chats.trace(chat, result.run_id)]
    assert any(isinstance(b, AnalysisRecorded) and b.name == "category-bar" for b in events)
    assert any(isinstance(b, FigurePresented) and b.value_ids == ("v1",) for b in events)
    roles = [b.role for b in events if isinstance(b, MessageAdded)]
    assert roles == ["user", "assistant"]
    # Bytes never enter the model's context: the analyse_data result is a digest.
    (_, messages, _) = script.seen[-1]
    returned = dict(tool_returns(messages))
    assert "features" not in str(returned["analyse_data"])
    assert returned["analyse_data"]["figures"][0]["id"] == "v1"


def test_two_failures_with_the_same_arguments_tell_the_model_to_stop(
    make_agent: Callable[..., MapAgent],
) -> None:
    bad = ("analyse_data", {"places_entry_ids": ["places-9"], "name": "x", "code": "return 1"})
    script = Script(
        picks=[{"tools": ["analyse_data"], "scopes": {"analyse_data": {"kinds": ["places"]}}}],
        steps=[[bad], [bad], [bad], "I could not find that entry."],
    )
    agent = make_agent(script)
    chat = run(seed_demo_chat(agent, "two"))
    result = run(agent.run("chart places-9", chat_id=chat))

    first, second, third = result.tool_calls
    assert not first["ok"] and "places-9" in first["result"]["error"]
    assert "stop" not in first["result"]
    assert second["result"]["stop"] == STOP_MESSAGE.format(tool="analyse_data")
    assert third["result"]["not_run"] is True  # a third identical call is not run
    failures = [e.body for e in agent.chats.trace(chat) if isinstance(e.body, ToolFailed)]
    # Every call's end is kept, the third's too; it says it was not run.
    assert [isinstance(f.result, dict) and f.result.get("not_run") is True for f in failures] == [
        False,
        False,
        True,
    ]
    assert result.text == "I could not find that entry."


def test_a_different_argument_is_a_new_attempt(make_agent: Callable[..., MapAgent]) -> None:
    calls = [
        ("fly_to", {"center": [24.9, 160.2]}),
        ("fly_to", {"center": [24.9, 160.2]}),
        ("fly_to", {"center": [24.94, 60.17]}),
    ]
    script = Script(
        picks=[{"tools": ["fly_to"], "scopes": {}}],
        steps=[[calls[0]], [calls[1]], [calls[2]], "Done."],
    )
    agent = make_agent(script)
    result = run(agent.run("go to helsinki", chat_id="diff"))
    assert [c["ok"] for c in result.tool_calls] == [False, False, True]
    assert "stop" in result.tool_calls[1]["result"]


def test_max_steps_counts_model_steps_not_tool_calls(make_agent: Callable[..., MapAgent]) -> None:
    parallel = [("recall_state", {}), ("recall_places", {}), ("recall_byod", {})]
    script = Script(
        picks=[{"tools": ["recall_state", "recall_places", "recall_byod"], "scopes": {}}],
        steps=[parallel, "All three read in one step."],
    )
    agent = make_agent(script, max_steps=2)
    result = run(agent.run("what do we have?", chat_id="steps"))
    assert len(result.tool_calls) == 3  # three calls ...
    assert result.steps == 2  # ... in one step, then the answer
    assert not result.stopped and result.errors == []


def test_a_run_that_never_answers_stops_at_max_steps(make_agent: Callable[..., MapAgent]) -> None:
    script = Script(
        picks=[{"tools": ["recall_state"], "scopes": {}}], steps=[[("recall_state", {})]]
    )
    agent = make_agent(script, max_steps=3)
    result = run(agent.run("loop forever", chat_id="loop"))
    assert result.stopped
    assert script.loop_calls == 3
    assert len(result.tool_calls) == 3
    assert "3 model steps" in result.errors[0]
    # The question is saved, and how the run ended (it had no answer to keep).
    bodies = [e.body for e in agent.chats.trace("loop")]
    messages = [b for b in bodies if isinstance(b, MessageAdded)]
    assert [m.role for m in messages] == ["user"]
    (ended,) = [b for b in bodies if isinstance(b, RunEnded)]
    assert ended.stopped and ended.steps == 3
    assert ended.error is not None and "3 model steps" in ended.error


def test_a_chat_resumes_after_a_restart_with_the_same_chat_id(
    tmp_path: Path, make_agent: Callable[..., MapAgent]
) -> None:
    path = tmp_path / "chats.db"
    first = make_agent(_chart_script(), chats=Chats(SQLiteStore(path)))
    run(seed_demo_chat(first, "resume"))
    run(first.run("Bar chart of these places by category", chat_id="resume"))
    first.chats.store.close()

    script = Script(
        picks=[{"tools": ["recall_state", "present_figure"], "scopes": {}}],
        steps=[
            [("recall_state", {})],
            [("present_figure", {"value_ids": ["v1"]})],
            "Still 1,346 places.",
        ],
    )
    second = make_agent(script, chats=Chats(SQLiteStore(path)))  # a new process, same file
    result = run(second.run("and how many places was that?", chat_id="resume"))
    second.chats.store.close()

    assert result.errors == [] and all(c["ok"] for c in result.tool_calls)
    state = result.tool_calls[0]["result"]
    assert [e["entry_id"] for e in state["entries"]] == ["places-1", "geometries-1"]
    assert state["values"][0]["id"] == "v1"
    assert result.figures[0].value == 1346
    # The model saw the earlier question and answer, not the earlier tool results.
    (_, messages, _) = next(s for s in script.seen if s[0] == "loop")
    text = str(messages)
    assert "Bar chart of these places by category" in text and "Here is the chart." in text
    assert "category-bar" not in text  # no tool call or result from the first run


def test_hooks_see_the_classification_and_every_tool_call(
    make_agent: Callable[..., MapAgent],
) -> None:
    classified: list[dict[str, Any]] = []
    executed: list[tuple[str, dict[str, Any], dict[str, Any]]] = []
    agent = make_agent(
        _chart_script(),
        on_classify=classified.append,
        on_tool_execute=lambda n, a, r: executed.append((n, a, r)),
    )
    run(seed_demo_chat(agent, "hooks"))
    run(agent.run("Bar chart of these places by category", chat_id="hooks"))
    assert classified[0]["active"] == ["analyse_data", "present_figure"]
    assert classified[0]["scopes"] == {"analyse_data": {"kinds": ["places"]}}
    assert [n for n, _, _ in executed] == ["analyse_data", "present_figure"]
    assert executed[1][2]["presented"] == ["v1"]


class _VehicleInput(BaseModel):
    vehicle_id: str


async def _vehicle(arguments: _VehicleInput, ctx: Any) -> dict[str, Any]:
    data = {
        "type": "FeatureCollection",
        "features": [
            {
                "type": "Feature",
                "properties": {"name": f"Vehicle {arguments.vehicle_id}"},
                "geometry": {"type": "Point", "coordinates": [24.94, 60.17]},
            }
        ],
    }
    written = await ctx.write_entry(kind="places", data=data, label="fleet vehicle")
    return {"entry_id": written.entry_id}


def test_a_custom_tool_takes_part_in_classification_and_runs(
    make_agent: Callable[..., MapAgent],
) -> None:
    fleet = ToolEntry(
        description="Get a fleet vehicle's position and add it to the places.",
        input_schema=_VehicleInput,
        execute=_vehicle,  # type: ignore[arg-type]
        classification_prompt="Locate a fleet vehicle by its id.",
    )
    script = Script(
        picks=[{"tools": ["get_fleet_vehicle"], "scopes": {}}],
        steps=[[("get_fleet_vehicle", {"vehicle_id": "TT-001"})], "It is there."],
    )
    agent = make_agent(script, tools={"get_fleet_vehicle": fleet, "help": False})
    result = run(agent.run("Where is vehicle TT-001?", chat_id="fleet"))
    assert result.tool_calls[0]["result"] == {"entry_id": "places-1"}
    assert "help" not in agent.registry
    (_, messages, _) = script.seen[0]
    assert "get_fleet_vehicle: Locate a fleet vehicle by its id." in str(
        script.seen[0][2].instructions
    )
    assert messages  # the classifier saw the conversation


async def _locate(arguments: _VehicleInput, ctx: Any) -> dict[str, Any]:
    if arguments.vehicle_id == "TT-9":
        raise ToolError("no vehicle 'TT-9' in the fleet", hint="the vehicles are TT-001, TT-002")
    if arguments.vehicle_id == "TT-8":
        raise ModelFacingError("vehicle 'TT-8' was retired; the vehicles are TT-001, TT-002")
    raise KeyError(arguments.vehicle_id)  # a fault in the tool, not in the call


@pytest.mark.parametrize(
    ("vehicle_id", "model_reads"),
    [
        (
            "TT-9",
            {"error": "no vehicle 'TT-9' in the fleet", "hint": "the vehicles are TT-001, TT-002"},
        ),
        ("TT-8", {"error": "vehicle 'TT-8' was retired; the vehicles are TT-001, TT-002"}),
        (
            "TT-7",
            {
                "error": "locate failed unexpectedly (KeyError: 'TT-7')",
                "hint": "this is a fault in the tool, not in your call; try another way",
            },
        ),
    ],
)
def test_a_tool_raising_tells_the_model_whose_error_it_is(
    make_agent: Callable[..., MapAgent],
    caplog: pytest.LogCaptureFixture,
    vehicle_id: str,
    model_reads: dict[str, str],
) -> None:
    locate = ToolEntry(
        description="Locate a fleet vehicle.",
        input_schema=_VehicleInput,
        execute=_locate,  # type: ignore[arg-type]
        classification_prompt="Locate a fleet vehicle by its id.",
    )
    script = Script(
        picks=[{"tools": ["locate"], "scopes": {}}],
        steps=[[("locate", {"vehicle_id": vehicle_id})], "It could not be found."],
    )
    agent = make_agent(script, tools={"locate": locate})
    result = run(agent.run(f"Where is vehicle {vehicle_id}?", chat_id="fleet"))
    (call,) = result.tool_calls
    assert not call["ok"]
    assert call["result"] == model_reads
    # Only the fault is logged: a refusal the model can act on is not the operator's.
    logged = [r for r in caplog.records if r.getMessage() == "tool locate failed"]
    assert len(logged) == (vehicle_id == "TT-7")


def test_closing_the_stream_early_keeps_the_partial_answer(
    make_agent: Callable[..., MapAgent],
) -> None:
    script = Script(
        picks=[{"tools": [], "scopes": {}}], steps=["one two three four five six seven"]
    )
    agent = make_agent(script)

    async def read_three() -> list[str]:
        seen = []
        stream = agent.run_stream("say something", chat_id="stop")
        async for part in stream:
            if isinstance(part, TextDeltaPart):
                seen.append(part.delta)
                if len(seen) == 3:
                    break
        await stream.aclose()  # type: ignore[attr-defined]
        return seen

    assert run(read_three()) == ["one", " two", " three"]
    bodies = [e.body for e in agent.chats.trace("stop")]
    messages = [b for b in bodies if isinstance(b, MessageAdded)]
    assert messages[-1].role == "assistant"
    assert messages[-1].text().startswith("one two three")
    assert isinstance(bodies[-1], RunEnded) and bodies[-1].stopped


def test_create_map_agent_on_the_defaults_names_its_mode_and_model(tmp_path: Path) -> None:
    agent = create_map_agent("demo", store=f"sqlite:///{tmp_path / 'c.db'}")
    try:
        assert agent.model_info == {
            "name": "geomint-demo",
            "provider": "geomint-demo",
            "demo": True,
        }
        assert agent.code_execution_mode in {"isolated", "restricted", "not-started"}
    finally:
        agent.close()


def _approval_tool(ran: list[str]) -> ToolEntry:
    async def execute(arguments: _VehicleInput, ctx: Any) -> dict[str, Any]:
        ran.append(arguments.vehicle_id)
        return {"dispatched": arguments.vehicle_id}

    return ToolEntry(
        description="Dispatch a vehicle.",
        input_schema=_VehicleInput,
        execute=execute,  # type: ignore[arg-type]
        classification_prompt="Dispatch a vehicle.",
        requires_approval=True,
    )


def _dispatch_script() -> Script:
    return Script(
        picks=[{"tools": ["dispatch"], "scopes": {}}],
        steps=[[("dispatch", {"vehicle_id": "TT-7"})], "Done."],
    )


def test_a_tool_needing_approval_runs_when_approved(make_agent: Callable[..., MapAgent]) -> None:
    ran: list[str] = []
    asked: list[tuple[str, dict[str, Any]]] = []

    async def approve(request: ApprovalRequest) -> tuple[bool, str]:
        asked.append((request.tool, request.args))
        return True, ""

    agent = make_agent(_dispatch_script(), tools={"dispatch": _approval_tool(ran)}, approve=approve)
    result = run(agent.run("dispatch TT-7", chat_id="ok"))
    assert ran == ["TT-7"] and asked == [("dispatch", {"vehicle_id": "TT-7"})]
    assert result.tool_calls[0]["result"] == {"dispatched": "TT-7"}
    approval = next(iter(agent.chats.open("ok").approvals.values()))
    assert approval.answer == "given" and approval.asked.tool == "dispatch"


def test_a_refused_or_unaskable_approval_does_not_run_the_tool(
    make_agent: Callable[..., MapAgent],
) -> None:
    ran: list[str] = []

    async def refuse(request: ApprovalRequest) -> tuple[bool, str]:
        return False, "not now"

    refused = make_agent(
        _dispatch_script(), tools={"dispatch": _approval_tool(ran)}, approve=refuse
    )
    result = run(refused.run("dispatch TT-7", chat_id="no"))
    assert ran == []
    assert "refused: not now" in result.tool_calls[0]["result"]["error"]
    (approval,) = refused.chats.open("no").approvals.values()
    assert (approval.answer, approval.reason) == ("refused", "not now")

    nobody = make_agent(_dispatch_script(), tools={"dispatch": _approval_tool(ran)})
    result = run(nobody.run("dispatch TT-7", chat_id="nobody"))
    assert ran == []  # fail closed: no approver, no call
    assert "no one can approve" in result.tool_calls[0]["result"]["error"]


def test_require_approval_gates_a_default_tool_and_shows_its_code(
    make_agent: Callable[..., MapAgent],
) -> None:
    asked: list[ApprovalRequest] = []

    async def approve(request: ApprovalRequest) -> tuple[bool, str]:
        asked.append(request)
        return False, "not on my map"

    agent = make_agent(DemoModel(), require_approval=["process_data"])
    chat_id = run(seed_demo_chat(agent, "gate"))
    result = run(agent.run("Union the park boundaries", chat_id=chat_id, approve=approve))
    (request,) = asked
    assert request.tool == "process_data" and request.chat_id == "gate"
    assert "shapely.union_all" in request.preview["code"]
    assert request.preview["reads"] == [
        {"entry_id": "geometries-1", "label": "parks, gardens and squares of central Helsinki"}
    ]
    assert request.preview["adds"].startswith("new map layers")
    assert "refused: not on my map" in result.tool_calls[0]["result"]["error"]
    assert [e for e in agent.chats.open(chat_id).entries if e.startswith("geometries")] == [
        "geometries-1"
    ]  # nothing was written


def test_a_refused_step_of_the_demo_stops_its_script_and_hides_nothing(
    make_agent: Callable[..., MapAgent],
) -> None:
    # Refusing the cafés layer used to be followed by the script's next step anyway,
    # which hid places-1: the map was left empty.
    async def approve(request: ApprovalRequest) -> tuple[bool, str]:
        return False, "not now"

    agent = make_agent(DemoModel(), require_approval=["process_data"])
    chat_id = run(seed_demo_chat(agent, "refused"))
    result = run(agent.run("Show only the cafés on the map", chat_id=chat_id, approve=approve))

    assert [c["name"] for c in result.tool_calls] == ["process_data"]
    assert agent.chats.open(chat_id).entries["places-1"].visible
    assert "A step failed" in result.text


def test_require_approval_refuses_unknown_names_with_the_near_miss(
    make_agent: Callable[..., MapAgent],
) -> None:
    with pytest.raises(UsageError) as caught:
        make_agent(DemoModel(), require_approval=["proces_data", "code_entry"])
    assert str(caught.value) == (
        "require_approval names 'proces_data' (did you mean 'process_data'?), neither an "
        "effect nor a tool; the effects are runs_code, code_entry, fetched_entry, display, "
        "map_style, network, location"
    )


def test_a_run_stopped_while_waiting_for_approval_records_a_refusal(
    make_agent: Callable[..., MapAgent],
) -> None:
    ran: list[str] = []
    waiting = asyncio.Event()

    async def approve(request: ApprovalRequest) -> tuple[bool, str]:
        waiting.set()
        await asyncio.sleep(60)
        return True, ""

    agent = make_agent(_dispatch_script(), tools={"dispatch": _approval_tool(ran)})

    async def stop_midway() -> None:
        stream = agent.run_stream("dispatch TT-7", chat_id="stopped", approve=approve)
        async for event in stream:
            if event.type == "approval":
                await asyncio.wait_for(waiting.wait(), 5)
                break
        await stream.aclose()  # type: ignore[attr-defined]

    run(stop_midway())
    assert ran == []
    (approval,) = agent.chats.open("stopped").approvals.values()
    assert (approval.answer, approval.reason) == ("refused", "the run was stopped")


def test_a_tool_no_provider_can_answer_is_not_offered(tmp_path: Path) -> None:
    agent = create_map_agent("demo", store=f"sqlite:///{tmp_path / 'c.db'}")
    try:
        # The offline provider answers places, boundaries, routes and reachable areas;
        # nothing answers traffic, so the model is never offered a tool that must fail.
        assert agent.not_offered == {
            "get_traffic_incidents": ["traffic"],
            "get_traffic_area_analytics": ["traffic_analytics"],
            # It clusters incidents entries, which only a traffic provider writes.
            "cluster_incidents": ["traffic"],
        }
        assert "get_traffic_incidents" not in agent.registry
        assert {"locate_place", "discover_places", "set_route"} <= set(agent.registry)
        assert "get_traffic_incidents" not in agent.tools_for(None)
    finally:
        agent.close()


def test_fetches_made_in_one_step_each_write_their_own_entry(
    make_agent: Callable[..., MapAgent],
) -> None:
    # Both calls of one response used to read the chat before either wrote: the second
    # took the id the first had just used, and failed as "a fault in the tool".
    both = [("locate_place", {"query": city, "limit": 1}) for city in ("Helsinki", "Espoo")]
    script = Script(
        picks=[{"tools": ["locate_place"], "scopes": {}}], steps=[both, "Both are found."]
    )
    agent = make_agent(script)
    result = run(agent.run("Helsinki and Espoo", chat_id="two"))
    assert [(c["ok"], c["result"]["entry_id"]) for c in result.tool_calls] == [
        (True, "places-1"),
        (True, "places-2"),
    ]
    assert result.entries == ["places-1", "places-2"]


def test_the_note_on_the_chats_entries_is_current_at_every_step(
    make_agent: Callable[..., MapAgent],
) -> None:
    script = Script(
        picks=[{"tools": ["locate_place", "recall_state"], "scopes": {}}],
        steps=[[("locate_place", {"query": "Helsinki", "limit": 1})], [("recall_state", {})], "ok"],
    )
    agent = make_agent(script)
    run(agent.run("where is Helsinki?", chat_id="note"))
    steps = [info.instructions or "" for stage, _, info in script.seen if stage == "loop"]
    assert "The chat has no entries yet." in steps[0]
    # The fetch of step one is in the note the model reads at step two.
    assert "places-1" in steps[1] and "no entries yet" not in steps[1]


def test_the_model_is_told_which_bundled_files_it_can_load(
    make_agent: Callable[..., MapAgent],
) -> None:
    # The stops file used to be found only by a model that guessed its path; one said
    # "the data has no bus stops".
    script = Script(picks=[{"tools": [], "scopes": {}}], steps=["ok"])
    agent = make_agent(script, settings=ToolSettings(byod_dirs=(bundled.DATA_DIR,)))
    run(agent.run("what data is there?", chat_id="files"))
    (note,) = [info.instructions or "" for stage, _, info in script.seen if stage == "loop"]
    assert (
        "Files you can load with add_byod_layer(path=...): " in note
        and "helsinki_stops.csv (OpenStreetMap: Helsinki centre bus and tram stops)" in note
    )
    # An agent whose folders do not include them is told of none.
    quiet = make_agent(Script(picks=[{"tools": [], "scopes": {}}], steps=["ok"]))
    assert quiet.loadable_files == ()


def test_the_model_reads_what_the_providers_cover_in_the_tools(tmp_path: Path) -> None:
    agent = create_map_agent("demo", store=f"sqlite:///{tmp_path / 'c.db'}")
    try:
        tools = agent.tools_for(None)
        west, south, east, north = bundled.bounds()
        box = f"(bbox {west:.3f}, {south:.3f}, {east:.3f}, {north:.3f})"
        for name in ("locate_place", "discover_places", "get_boundaries", "set_route"):
            coverage = tools[name].description.rsplit("\n", 1)[-1]
            assert coverage.startswith("Coverage: offline: bundled data only: places, landmarks")
            assert box in coverage and "cities of 100,000 people or more" in coverage
        assert "Coverage" not in tools["analyse_data"].description  # not a provider's tool
    finally:
        agent.close()


def test_a_run_stopped_while_the_classifier_chooses_is_kept_as_stopped(
    make_agent: Callable[..., MapAgent],
) -> None:
    agent = make_agent(Script(picks=[{"tools": [], "scopes": {}}], steps=["never said"]))

    async def stop_at_the_start() -> None:
        stream = agent.run_stream("say something", chat_id="early")
        async for part in stream:
            if isinstance(part, QuestionPart):
                break  # the question is kept; the classifier has not chosen yet
        await stream.aclose()  # type: ignore[attr-defined]

    run(stop_at_the_start())
    bodies = [e.body for e in agent.chats.trace("early")]
    assert isinstance(bodies[-1], RunEnded) and bodies[-1].stopped
