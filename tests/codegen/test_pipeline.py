"""The map-code pipeline with a scripted second model: it writes wrong code first, and the
retry, given every violation as data, corrects it."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from typing import Any

import pytest
from pydantic_ai.messages import ModelMessage, ModelResponse, TextPart, UserPromptPart
from pydantic_ai.models.function import AgentInfo

from geomint.codegen.pipeline import TurnBudget, extract_code, generate_verified_map_code
from geomint.models.demo import scripted_model
from geomint.sandbox import Sandbox

STYLE: dict[str, Any] = {
    "sources": {"places-1": {"type": "geojson", "geomint": True}},
    "layers": [{"id": "places-1-circle", "type": "circle", "source": "places-1", "geomint": True}],
    "entries": ["places-1"],
}
ENTRIES = [{"id": "places-1", "kind": "places", "label": "places", "feature_count": 120}]

GOOD = """```python
mapview.add_layer({"id": "cafe-heat", "type": "heatmap", "source": "places-1",
                   "paint": {"heatmap-radius": 20}}, before="places-1-circle")
```"""

#: Each first answer is wrong in one way; the retry must see why.
WRONG: dict[str, tuple[str, str]] = {
    "layer type": (
        'mapview.add_layer({"id": "cafe-heat", "type": "heat-map", "source": "places-1"})',
        "Did you mean 'heatmap'?",
    ),
    "paint property": (
        'mapview.add_layer({"id": "h", "type": "heatmap", "source": "places-1", '
        '"paint": {"heatmap-radious": 20}})',
        "Did you mean 'heatmap-radius'?",
    ),
    "expression": (
        'mapview.add_layer({"id": "h", "type": "circle", "source": "places-1", '
        '"paint": {"circle-color": ["colour-of", ["get", "category"]]}})',
        "colour-of",
    ),
    "url": (
        'mapview.add_source("tiles", {"type": "geojson", "data": "https://evil.example/x.json"})',
        "URLs are not allowed",
    ),
    "gate 1": ("import os\nmapview.fly_to(zoom=3)", "Gate 1 refused"),
    "runtime": ('mapview.set_paint_property("nope", "circle-color", "red")', "no layer 'nope'"),
}


class Scripted:
    """A second model answering from a list, keeping the prompts it was sent."""

    def __init__(self, answers: list[str]) -> None:
        self.answers: Iterator[str] = iter(answers)
        self.prompts: list[str] = []

    def __call__(self, messages: list[ModelMessage], _: AgentInfo) -> ModelResponse:
        first = messages[0]
        asked = [p.content for p in first.parts if isinstance(p, UserPromptPart)]  # type: ignore[union-attr]
        self.prompts.append(str(asked[-1]))
        return ModelResponse(parts=[TextPart(next(self.answers))])


def _run(sandbox: Sandbox, script: Scripted, **options: Any) -> Any:
    return asyncio.run(
        generate_verified_map_code(
            intent="heatmap of the cafés", style=STYLE, entries=ENTRIES, inputs={},
            sandbox=sandbox, model=scripted_model(script), **options,
        )
    )  # fmt: skip


@pytest.mark.parametrize("case", WRONG, ids=list(WRONG))
def test_a_wrong_first_answer_is_corrected_by_the_retry(in_process: Sandbox, case: str) -> None:
    code, reason = WRONG[case]
    script = Scripted([f"```python\n{code}\n```", GOOD])
    outcome = _run(in_process, script)
    assert outcome.error is None, outcome.error
    assert [a.problem is None for a in outcome.attempts] == [False, True]
    assert reason in (outcome.attempts[0].problem or "")
    # The second prompt carries the first body and what was wrong with it, as data.
    assert code.splitlines()[0] in script.prompts[1]
    assert reason in script.prompts[1]
    assert outcome.verified.diff["added"]["layers"][0]["id"] == "cafe-heat"
    assert outcome.usage.requests == 2 and outcome.usage.input_tokens > 0


def test_after_three_retries_the_failure_says_what_stayed_wrong(in_process: Sandbox) -> None:
    bad = '```python\nmapview.add_layer({"id": "h", "type": "heat-map", "source": "places-1"})\n```'
    script = Scripted([bad] * 4)
    outcome = _run(in_process, script)
    assert outcome.verified is None and len(outcome.attempts) == 4
    assert outcome.error.startswith("the map code was refused 4 times; what stayed wrong:")
    assert "'heat-map' is not a layer type" in outcome.error.replace('"', "'")


def test_given_code_is_checked_without_a_model_call(in_process: Sandbox) -> None:
    script = Scripted([])
    outcome = _run(in_process, script, code=extract_code(GOOD))
    assert outcome.error is None and outcome.usage.requests == 0
    assert outcome.attempts[0].generated is False and script.prompts == []


def test_given_code_that_fails_is_rewritten_by_the_model(in_process: Sandbox) -> None:
    script = Scripted([GOOD])
    outcome = _run(in_process, script, code=WRONG["layer type"][0])
    assert [a.generated for a in outcome.attempts] == [False, True]
    assert outcome.verified is not None


def test_the_turn_budget_stops_generation_with_the_reason(in_process: Sandbox) -> None:
    bad = "```python\nmapview.fly_to(zoom=99)\n```"
    budget = TurnBudget(max_requests=2)
    outcome = _run(in_process, Scripted([bad] * 4), budget=budget)
    assert outcome.verified is None and len(outcome.attempts) == 2
    assert outcome.error == (
        "this turn's budget for second model calls (map code and discovery) of 2 calls is "
        "spent; the map was not changed"
    )
    assert budget.used.requests == 2


def test_the_prompt_has_the_matched_skill_the_api_card_and_the_map(in_process: Sandbox) -> None:
    script = Scripted([GOOD])
    outcome = _run(in_process, script)
    prompt = script.prompts[0]
    assert outcome.skills[0] == "heatmap" and "heatmap-density" in prompt
    assert "- places-1-circle: circle from places-1 (geomint)" in prompt
    assert '"id": "places-1"' in prompt
    assert outcome.prompt_chars > len(prompt) > outcome.skill_chars > 0


def test_an_answer_without_code_is_a_problem_to_fix(in_process: Sandbox) -> None:
    outcome = _run(in_process, Scripted(["I cannot do that.", GOOD]))
    assert outcome.attempts[0].problem == (
        "the answer held no code: answer with the body in one ```python block"
    )
    assert outcome.verified is not None


def test_extract_code_takes_the_first_fenced_block() -> None:
    assert extract_code("Here:\n```python\nx = 1\n```\nand ```py\ny\n```") == "x = 1"
    assert extract_code("mapview.fly_to(zoom=3)") == "mapview.fly_to(zoom=3)"
    assert extract_code("Sorry, I cannot.") == ""
