"""The eval harness, proven with a scripted model: it scores right answers right, and a
wrong figure, a typed number or a figure under another's name wrong."""

from __future__ import annotations

import asyncio
import re
from collections.abc import Iterator

import pytest
from benchmarks.evals import ground
from benchmarks.evals.harness import Score, run_question
from benchmarks.evals.questions import QUESTIONS, Question

from geomint import create_map_agent
from geomint.agent import MapAgent
from geomint.testing import Script, Step

BY_ID = {q.id: q for q in QUESTIONS}


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
    answer = question.steps[-1]
    assert isinstance(answer, str)
    cites = len(set(re.findall(r"\{v\d+\}", answer)))
    assert (score.cited, score.unminted, score.tool_errors, score.wasted_calls) == (cites, 0, 0, 0)
    assert score.requests == len(question.steps)
    assert score.prompt_chars_per_request > 1_000


def test_the_truths_are_the_bundled_datas() -> None:
    assert ground.count_cafes() == 85 and len(ground.stops()) == 125
    assert ground.stops_near_cafes(200) == 119
    assert 14.0 < ground.largest_park_ha() < 14.3  # hectares
    assert ground.zone_cafes() == {"South": 40, "Centre": 36, "North": 4}
    assert ground.zone_edge_clearance_m() > 3  # which zone holds a café is no close call
    assert ground.populations("Helsinki", "Espoo") == {"Helsinki": 658_864, "Espoo": 323_910}
    # Every school of the extract is within 212 m of a bus stop: none is beyond 800 m.
    assert ground.schools_beyond_m(800) == [] and len(ground.schools_beyond_m(200)) == 1
    assert ground.places_within_m(ground.CATHEDRAL, 1000) == 1292
    # Parks, gardens and squares only; Tekla Hultinin aukio is two outlines.
    assert len(ground.wholly_within_m(ground.CATHEDRAL, 1000)) == 19
    must, lacks = ground.capabilities()
    assert "routes" in must and "where: central Helsinki" in must and list(lacks) == ["traffic"]


def test_the_station_truths_are_the_road_graph_walked() -> None:
    # A 10-minute walk: 57 cafés within 25 m of a street reached in time, and 5 more deep in
    # blocks the reached streets enclose (three in one department store), none near the edge.
    assert ground.cafes_within_walk(ground.STATION, 600) == (57, 62)
    assert ground.reach_edge_clearance_m(ground.STATION, 600) > 9
    nearest = ground.nearest(ground.STATION, "cafe", 6)
    assert [name for name, _ in nearest[:5]] == [
        "Amin's cafe",
        "Isabella Cafe",
        "Robert's Coffee",
        "Foto Cafe",
        "Coffee house",
    ]
    assert 1.0 < nearest[0][1] < 1.2 and nearest[5][1] - nearest[4][1] > 25  # no close call
    assert 862 < ground.walk_m(ground.STATION, ground.CATHEDRAL) < 863
    pharmacies = ground.pharmacies_from_walk_m(ground.STATION, ground.CATHEDRAL)
    assert sorted(name for name, m in pharmacies.items() if m <= 200) == [
        "Apteekki Eliel",
        "Kluuvin Apteekki",
        "Yliopiston Apteekki Kaivopiha",
        "Yliopiston apteekki",
    ]
    assert all(abs(m - 200) > 9 for m in pharmacies.values())  # none is a close call


def test_a_wrong_figure_or_a_typed_number_is_scored_wrong(ask: object) -> None:
    cafes = BY_ID["cafes"]
    restaurants = cafes.steps[0][0][1]["code"].replace('"cafe"', '"restaurant"')  # type: ignore[index]
    wrong: Score = ask(  # type: ignore[operator]
        cafes,
        [[("analyse_data", {**cafes.steps[0][0][1], "code": restaurants})], "There are {v1}."],  # type: ignore[index]
    )
    assert not wrong.right and wrong.answered not in ("-", "85")
    typed: Score = ask(cafes, ["There are 85 cafés in central Helsinki."])  # type: ignore[operator]
    assert not typed.right and typed.answered == "-"
    assert (typed.cited, typed.unminted) == (0, 1)


def test_a_figure_minted_under_another_zones_name_is_scored_wrong(ask: object) -> None:
    zones = BY_ID["cafes-per-zone"]
    load, analyse, _ = zones.steps
    # The counts are right, but each is labelled with the next zone's name.
    shifted = analyse[0][1]["code"].replace(  # type: ignore[index]
        '"cafés in the " + name',
        '"cafés in the " + {"South": "Centre", "Centre": "North", "North": "South"}[name]',
    )
    steps = [load, [("analyse_data", {**analyse[0][1], "code": shifted})], "{v1}, {v2}, {v3}."]  # type: ignore[index]
    score: Score = ask(zones, steps)  # type: ignore[operator]
    assert not score.right and score.cited == 3
    assert "no figure about South of 40" in score.wrong
