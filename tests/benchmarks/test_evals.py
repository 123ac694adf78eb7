"""The eval harness, proven with a scripted model: it scores right answers right, and a
wrong figure or a typed number wrong."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator

import pytest
from benchmarks.evals.harness import Score, run_question
from benchmarks.evals.questions import QUESTIONS, Question

from geomint import create_map_agent
from geomint.agent import MapAgent
from geomint.testing import Script, Step


@pytest.fixture
def ask() -> Iterator[object]:
    made: list[MapAgent] = []

    def ask(question: Question, steps: list[Step] | None = None) -> Score:
        script = Script(picks=[question.picks], steps=steps or question.steps)
        agent = create_map_agent(
            script.model(), store="memory:", code_execution={"mode": "in-process"}
        )
        made.append(agent)
        return asyncio.run(run_question(agent, question))

    yield ask
    for agent in made:
        agent.close()


@pytest.mark.parametrize("question", QUESTIONS, ids=[q.id for q in QUESTIONS])
def test_a_scripted_right_answer_is_scored_right(ask: object, question: Question) -> None:
    score: Score = ask(question)  # type: ignore[operator]
    assert score.right, score
    assert (score.cited, score.unminted, score.tool_errors, score.wasted_calls) == (1, 0, 0, 0)
    assert score.requests == len(question.steps)
    assert score.prompt_chars_per_request > 1_000


def test_the_truths_are_the_bundled_datas(ask: object) -> None:
    truths = {q.id: q.truth() for q in QUESTIONS}
    assert truths["cafes"] == 85 and truths["stops"] == 125
    assert truths["stops-near-cafes"] == 119
    assert 14.0 < truths["largest-park"] < 14.3  # hectares


def test_a_wrong_figure_or_a_typed_number_is_scored_wrong(ask: object) -> None:
    (cafes,) = [q for q in QUESTIONS if q.id == "cafes"]
    restaurants = cafes.steps[0][0][1]["code"].replace('"cafe"', '"restaurant"')  # type: ignore[index]
    wrong: Score = ask(  # type: ignore[operator]
        cafes,
        [[("analyse_data", {**cafes.steps[0][0][1], "code": restaurants})], "There are {v1}."],  # type: ignore[index]
    )
    assert not wrong.right and wrong.answered not in (None, 85)
    typed: Score = ask(cafes, ["There are 85 cafés in central Helsinki."])  # type: ignore[operator]
    assert not typed.right and typed.answered is None
    assert (typed.cited, typed.unminted) == (0, 1)
