"""Discovery's sub-agent: a scripted second model shortlists search results, and code holds
it to its job: ids from the search only, at most five, one line each, no figures, and a
plain fallback when it cannot be asked or answers in another shape."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from pydantic_ai.messages import ModelMessage, ModelResponse, TextPart
from pydantic_ai.models.function import AgentInfo

from geomint.models import DISCOVERY_MARKER, TurnBudget, Usage
from geomint.models.demo import scripted_model
from geomint.sources import Candidate, Shortlist, shortlist_results
from geomint.sources.shortlist import MAX_SHORTLIST, prompt_for
from geomint.testing import DemoModel, Script


def candidate(number: int, catalogue: str = "hri-catalogue", **fields: Any) -> Candidate:
    name = f"aineisto-{number}"
    return Candidate(
        id=name,
        title=fields.pop("title", f"Pyöräilijämäärät {number}"),
        kind="dataset",
        catalogue=catalogue,
        fetch={"source_id": catalogue, "filters": {"dataset": name}},
        description=fields.pop("description", "Bicycle counts at the counting points, 2015 on."),
        publisher="Helsingin kaupunki",
        licence="CC BY 4.0",
        **fields,
    )


RESULTS = [candidate(n) for n in range(1, 9)] + [candidate(9, "avoindata-catalogue")]


def run(script: Script, candidates: list[Candidate] = RESULTS, **options: Any) -> Shortlist:
    return asyncio.run(
        shortlist_results("bicycle counts", candidates, model=script.model(), **options)
    )


def test_the_shortlist_keeps_at_most_five_named_results_each_with_why() -> None:
    named = [{"id": c.ref, "why": f"counts for {c.title}"} for c in RESULTS[:7]]
    kept = run(Script(shortlists=[{"shortlist": named}]))
    assert kept.ranked_by == "model" and kept.read == len(RESULTS)
    assert len(kept.picks) == MAX_SHORTLIST == 5
    assert [p.candidate.ref for p in kept.picks] == [c.ref for c in RESULTS[:5]]
    assert kept.picks[0].why == "counts for Pyöräilijämäärät 1"
    assert any("more than 5" in note for note in kept.notes)
    assert kept.usage.requests == 1 and kept.usage.tokens > 0


def test_an_invented_id_is_dropped_and_said() -> None:
    answer = {
        "shortlist": [
            {"id": "hri-catalogue/no-such-dataset", "why": "sounds right"},
            {"id": RESULTS[8].ref, "why": "national counts"},
            {"id": RESULTS[8].ref, "why": "named twice"},
        ]
    }
    kept = run(Script(shortlists=[answer]))
    assert [p.candidate.ref for p in kept.picks] == ["avoindata-catalogue/aineisto-9"]
    assert kept.dropped == ("hri-catalogue/no-such-dataset",)


def test_a_reason_quoting_a_number_the_result_does_not_hold_is_not_kept() -> None:
    answer = {
        "shortlist": [
            {"id": RESULTS[0].ref, "why": "about 650,000 riders a year"},
            {"id": RESULTS[1].ref, "why": "counts from 2015 on"},  # the description's year
        ]
    }
    first, second = run(Script(shortlists=[answer])).picks
    assert first.why is None
    assert second.why == "counts from 2015 on"


def test_a_reason_is_one_short_line() -> None:
    answer = {"shortlist": [{"id": RESULTS[0].ref, "why": "holds\n\ncounts  " + "x" * 500}]}
    (pick,) = run(Script(shortlists=[answer])).picks
    assert pick.why is not None and "\n" not in pick.why
    assert pick.why.startswith("holds counts x") and len(pick.why) <= 240


@pytest.mark.parametrize(
    ("answer", "problem"),
    [
        ("I would pick the first one.", "did not answer with the JSON asked for"),
        ('{"shortlist": "the first"}', "did not answer with the JSON asked for"),
        (RuntimeError("the provider is down"), "failed (RuntimeError: the provider is down)"),
    ],
)
def test_an_answer_that_cannot_be_used_gives_the_catalogues_first_results(
    answer: Any, problem: str
) -> None:
    kept = run(Script(shortlists=[answer]))
    assert kept.ranked_by == "catalogue"
    assert kept.problem is not None and problem in kept.problem
    # Taken in turn from each catalogue, in its own order, with no reasons.
    assert [p.candidate.ref for p in kept.picks] == [
        "hri-catalogue/aineisto-1",
        "avoindata-catalogue/aineisto-9",
        "hri-catalogue/aineisto-2",
        "hri-catalogue/aineisto-3",
        "hri-catalogue/aineisto-4",
    ]
    assert all(p.why is None for p in kept.picks)


def test_the_call_is_counted_against_the_turn_and_refused_once_it_is_spent() -> None:
    script = Script(shortlists=[{"shortlist": [{"id": RESULTS[0].ref, "why": "counts"}]}])
    budget = TurnBudget(max_requests=1)
    first = run(script, budget=budget)
    assert budget.used.requests == 1 and budget.used.tokens == first.usage.tokens > 0
    second = run(script, budget=budget)
    assert script.discovery_calls == 1  # not asked again
    assert second.ranked_by == "catalogue"
    assert second.problem == (
        "this turn's budget for second model calls (map code and discovery) of 1 call is spent"
    )
    spent = TurnBudget(max_tokens=10, used=Usage(requests=1, input_tokens=9, output_tokens=1))
    assert "of 10 tokens is spent (10 used)" in str(run(script, budget=spent).problem)


def test_without_a_model_the_catalogues_order_is_said() -> None:
    kept = asyncio.run(shortlist_results("bicycle counts", RESULTS, model=None))
    assert kept.ranked_by == "catalogue"
    assert kept.problem == "no model is configured to shortlist with"


def test_nothing_searched_asks_nobody() -> None:
    script = Script()
    kept = run(script, [])
    assert (kept.picks, kept.read, script.discovery_calls) == ((), 0, 0)


def test_the_sub_agent_has_no_tools_and_reads_only_the_query_and_the_results() -> None:
    seen: list[tuple[list[ModelMessage], AgentInfo]] = []

    def answer(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        seen.append((messages, info))
        return ModelResponse(parts=[TextPart('{"shortlist": []}')])

    asyncio.run(
        shortlist_results("bicycle counts", RESULTS, model=scripted_model(answer), country="FIN")
    )
    ((messages, info),) = seen
    # No tool at all: it cannot fetch, land an entry, run code or mint a figure.
    assert info.function_tools == [] and info.output_tools == []
    (request,) = messages
    system, user = (p.content for p in request.parts)  # type: ignore[union-attr]
    assert str(system).startswith(DISCOVERY_MARKER)
    assert "Never state a figure" in str(system)
    assert str(user) == prompt_for("bicycle counts", RESULTS, country="FIN")
    assert str(user).count('{"id": ') == len(RESULTS)


def test_the_demo_model_shortlists_the_first_results_and_says_it_read_no_further() -> None:
    kept = asyncio.run(shortlist_results("bicycle counts", RESULTS, model=DemoModel()))
    assert [p.candidate.ref for p in kept.picks] == [c.ref for c in RESULTS[:3]]
    assert all("reads no further" in str(p.why) for p in kept.picks)
