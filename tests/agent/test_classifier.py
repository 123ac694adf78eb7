"""The per-turn classifier: picks, scopes, the scope retry, failing open."""

from __future__ import annotations

from asyncio import run
from collections.abc import Callable
from typing import Any

from pydantic import BaseModel
from pydantic_ai.messages import ModelMessage

from geomint.agent import MapAgent, classify
from geomint.agent.classifier import SCOPE_RETRIES, classifier_prompt
from geomint.testing import Script
from geomint.tools import DEFAULT_TOOLS, ToolEntry, resolve_tools
from geomint.tools._kinds import DataScope

_SCOPED = {"analyse_data": {"kinds": ["places"]}}


def _classify(script: Script, registry: Any = DEFAULT_TOOLS, history: Any = ()) -> Any:
    return run(classify(script.model(), registry, list(history), "chart it"))


def all_text(messages: list[ModelMessage]) -> str:
    """Every part's content in a request history, joined (reprs cut long text short)."""
    return "\n".join(
        str(getattr(part, "content", "")) for message in messages for part in message.parts
    )


def test_a_pick_with_its_scope_is_taken_and_scoped() -> None:
    script = Script(picks=[{"tools": ["analyse_data", "present_figure"], "scopes": _SCOPED}])
    result = _classify(script)
    assert result.active == ("analyse_data", "present_figure")
    assert result.scopes["analyse_data"] == DataScope(kinds=["places"])
    assert result.retries == 0 and result.unscoped == () and result.failed is None
    assert script.classifier_calls == 1


def test_a_missing_scope_is_sent_back_with_the_reason_and_then_taken() -> None:
    script = Script(
        picks=[
            {"tools": ["analyse_data"], "scopes": {}},
            {"tools": ["analyse_data"], "scopes": _SCOPED},
        ]
    )
    result = _classify(script)
    assert script.classifier_calls == 2
    assert result.retries == 1
    assert result.scopes == {"analyse_data": DataScope(kinds=["places"])}
    # The second request carried the validation error naming the missing scope.
    (_, messages, _) = script.seen[1]
    assert "analyse_data was picked without a valid scope" in all_text(messages)


def test_an_invalid_scope_counts_as_missing() -> None:
    script = Script(
        picks=[
            {"tools": ["analyse_data"], "scopes": {"analyse_data": {"kinds": ["shops"]}}},
            {"tools": ["analyse_data"], "scopes": _SCOPED},
        ]
    )
    result = _classify(script)
    assert result.retries == 1 and "analyse_data" in result.scopes
    assert "unknown kinds ['shops']" in all_text(script.seen[1][1])


def test_after_two_retries_the_tool_stays_with_its_terse_surface(
    make_agent: Callable[..., MapAgent],
) -> None:
    script = Script(picks=[{"tools": ["analyse_data", "present_figure"], "scopes": {}}])
    result = _classify(script)
    assert script.classifier_calls == 1 + SCOPE_RETRIES == 3
    assert result.retries == SCOPE_RETRIES
    assert result.active == ("analyse_data", "present_figure")
    assert result.unscoped == ("analyse_data",) and result.scopes == {}
    agent = make_agent(script)
    (entry,) = [e for n, e in agent.tools_for(result).items() if n == "analyse_data"]
    assert entry.description == DEFAULT_TOOLS["analyse_data"].description


def test_a_failed_classifier_fails_open() -> None:
    script = Script(picks=[RuntimeError("provider down")])
    result = _classify(script)
    assert result.active == tuple(DEFAULT_TOOLS)
    assert result.failed is not None and "provider down" in result.failed
    assert result.scopes == {}


def test_unknown_tool_names_are_sent_back() -> None:
    script = Script(picks=[{"tools": ["analyse"], "scopes": {}}, {"tools": ["help"], "scopes": {}}])
    result = _classify(script)
    assert result.active == ("help",)
    assert "unknown tools ['analyse']" in all_text(script.seen[1][1])


def test_depends_on_is_added_to_the_pick() -> None:
    class _In(BaseModel):
        pass

    async def _noop(_: BaseModel, __: Any) -> dict[str, Any]:
        return {}

    needs = ToolEntry(
        description="Uses recall_state first.",
        input_schema=_In,
        execute=_noop,
        classification_prompt="A tool that needs recall_state.",
        depends_on=("recall_state",),
    )
    registry = resolve_tools(DEFAULT_TOOLS, {"needs_state": needs})
    script = Script(picks=[{"tools": ["needs_state"], "scopes": {}}])
    result = _classify(script, registry)
    assert result.active == ("needs_state", "recall_state")
    assert "needs_state: A tool that needs recall_state. (needs recall_state)" in (
        classifier_prompt(registry)
    )


def test_the_classifier_reads_the_last_messages_cut_short() -> None:
    history = [("user", f"question {i} " + "x" * 1_000) for i in range(10)]
    script = Script(picks=[{"tools": [], "scopes": {}}])
    _classify(script, history=history)
    (_, messages, _) = script.seen[0]
    text = all_text(messages)
    assert "question 9" in text and "question 3" not in text  # the last six only
    assert "x" * 500 not in text  # each cut short


def test_a_scopable_custom_builder_receives_the_scope() -> None:
    class FleetScope(BaseModel):
        kinds: list[str]

    class _In(BaseModel):
        vehicle: str | None = None

    async def _noop(_: BaseModel, __: Any) -> dict[str, Any]:
        return {}

    seen: list[Any] = []

    def build(scope: BaseModel | None) -> ToolEntry[Any]:
        seen.append(scope)
        kinds = scope.kinds if isinstance(scope, FleetScope) else ["vehicles", "jobs"]
        return ToolEntry(
            description=f"Analyse {' + '.join(kinds)}.",
            input_schema=_In,
            execute=_noop,
            scope_schema=FleetScope,
            scope_prompt='{"kinds": ["vehicles" | "jobs"]}',
            classification_prompt="Analyse fleet vehicles or jobs.",
            prepare=build,
        )

    fleet = build(None)
    registry = resolve_tools(DEFAULT_TOOLS, {"fleet_analyse": fleet})
    assert "fleet_analyse: Analyse fleet vehicles or jobs. [scope: " in classifier_prompt(registry)
    script = Script(
        picks=[{"tools": ["fleet_analyse"], "scopes": {"fleet_analyse": {"kinds": ["jobs"]}}}]
    )
    result = _classify(script, registry)
    assert result.scopes["fleet_analyse"] == FleetScope(kinds=["jobs"])
    entry = fleet.for_scope(result.scopes["fleet_analyse"])
    assert entry.description == "Analyse jobs."


def test_classifier_false_keeps_every_tool_terse(make_agent: Callable[..., MapAgent]) -> None:
    script = Script(steps=["No classifier was asked."])
    agent = make_agent(script, classifier=False)
    result = run(agent.run("anything", chat_id="noclass"))
    assert script.classifier_calls == 0 and result.classification is None
    (_, _, info) = script.seen[0]
    # Every tool the offline provider can answer: traffic is not among them.
    traffic = {"get_traffic_incidents", "get_traffic_area_analytics", "cluster_incidents"}
    offered = set(DEFAULT_TOOLS) - traffic
    assert {t.name for t in info.function_tools} == offered
    (tool,) = [t for t in info.function_tools if t.name == "analyse_data"]
    assert tool.description == DEFAULT_TOOLS["analyse_data"].description
