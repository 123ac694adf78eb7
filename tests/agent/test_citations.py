"""An answer cites minted figures by id and its typed numbers are checked, on every surface
that reads the run: the stream's parts, the log, RunResult and a chat read back."""

from __future__ import annotations

from asyncio import run
from collections.abc import Callable

from geomint.agent import MapAgent
from geomint.agent.demo import seed_demo_chat
from geomint.state import MessageAdded, RunEnded
from geomint.testing import Script
from geomint.ui import TextPart, chat_parts

_COUNT = 'mint.value(len(places["features"]), "places counted", unit="places")\nreturn 1'


def _script(answer: str) -> Script:
    return Script(
        picks=[{"tools": ["analyse_data"], "scopes": {"analyse_data": {"kinds": ["places"]}}}],
        steps=[
            [
                (
                    "analyse_data",
                    {"places_entry_ids": ["places-1"], "name": "count", "code": _COUNT},
                )
            ],
            answer,
        ],
    )


def test_a_cited_figure_reads_as_its_value_and_a_typed_number_is_marked(
    make_agent: Callable[..., MapAgent],
) -> None:
    agent = make_agent(_script("There are {v1} here, about 1,300, and 42 museums."))
    chat = run(seed_demo_chat(agent, "cite"))
    result = run(agent.run("How many places are there among the 12 largest?", chat_id=chat))

    assert result.text == "There are {v1} here, about 1,300, and 42 museums."
    assert result.rendered == "There are 1,346 places here, about 1,300, and 42 museums."
    assert (result.cited, result.matched, result.unminted) == (1, 1, 1)
    (block,) = [p for p in result.parts if isinstance(p, TextPart)]
    marked = [(s.text, s.state, s.ref) for s in block.segments if s.state != "plain"]
    assert marked == [("{v1}", "cited", "v1"), ("1,300", "matched", "v1"), ("42", "unminted", None)]
    # The check is kept with the answer, and the counts with how the run ended.
    bodies = [e.body for e in agent.chats.trace(chat, result.run_id)]
    (answer,) = [b for b in bodies if isinstance(b, MessageAdded) and b.role == "assistant"]
    assert [p["kind"] for p in answer.parts] == ["text", "checked"]
    (ended,) = [b for b in bodies if isinstance(b, RunEnded)]
    assert (ended.cited, ended.matched, ended.unminted) == (1, 1, 1)
    # Read back, the block is the same part, segments and all.
    (kept,) = [
        p for p in chat_parts(agent.chats, chat, run_id=result.run_id) if isinstance(p, TextPart)
    ]
    assert kept == block


def test_an_unknown_id_is_shown_as_such_and_numbers_from_the_question_are_not_marked(
    make_agent: Callable[..., MapAgent],
) -> None:
    agent = make_agent(_script("Of the 12 largest, {v7} is not a figure; {v1} are."))
    chat = run(seed_demo_chat(agent, "unknown"))
    result = run(agent.run("What about the 12 largest?", chat_id=chat))

    assert (
        result.rendered
        == "Of the 12 largest, [v7: no such figure] is not a figure; 1,346 places are."
    )
    assert (result.cited, result.matched, result.unminted) == (1, 0, 1)
