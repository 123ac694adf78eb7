"""Discovery in a whole turn: the scripted model calls find_sources on a question the
registry has nothing for, the same model answers the shortlisting sub-agent's request,
the run streams one discovery row that reads back the same, and the sub-agent's tokens
are spent from the turn's budget beside map code's."""

from __future__ import annotations

import asyncio
import io
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from rich.console import Console
from tests.sources.connectors.support import RECORDED, fast, live_source
from tests.sources.test_discovery import SEARCH, search_body

from geomint._commands._render import render_event
from geomint.agent import MapAgent
from geomint.sources import SourceRegistry, Sources
from geomint.store import MemoryStore
from geomint.testing import RecordedServer, Script, tool_returns
from geomint.ui import DiscoveryPart, chat_parts, is_durable

PYORAILY = "hri-catalogue/helsingin-pyorailijamaarat"
ASK = ("find_sources", {"query": "bicycle counts", "country": "FIN"})
SHORTLIST = {"shortlist": [{"id": PYORAILY, "why": "bicycle counts at counting points"}]}


@pytest.fixture
def server() -> Iterator[RecordedServer]:
    with RecordedServer(RECORDED / "ckan") as running:
        running.add("GET", SEARCH, body=search_body(running.base_url))
        yield running


@pytest.fixture
def sources(server: RecordedServer) -> Sources:
    rows = [
        live_source("hri-catalogue", base_url=f"{server.base_url}/hri"),
        live_source("avoindata-catalogue", base_url=f"{server.base_url}/avoindata"),
    ]
    return Sources(SourceRegistry(MemoryStore(), seed=rows), policy=fast(), live=True)


def test_a_turn_shows_one_discovery_row_that_reads_back_the_same(
    make_agent: Callable[..., MapAgent], sources: Sources
) -> None:
    script = Script(
        picks=[{"tools": ["find_sources"], "scopes": {}}],
        steps=[[ASK], "Helsinki publishes bicycle counts; shall I list its files?"],
        shortlists=[SHORTLIST],
    )
    agent = make_agent(script, sources=sources)
    result = asyncio.run(agent.run("How many cyclists pass the counters in Helsinki?"))
    assert [kind for kind, _, _ in script.seen] == ["classifier", "loop", "discovery", "loop"]
    (row,) = [p for p in result.parts if isinstance(p, DiscoveryPart)]
    assert row.summary == "Searched 2 catalogues, 1 candidate"
    (call,) = result.tool_calls
    assert row.call_id == call["call_id"]
    # What the main model read: the shortlist, not the search results.
    ((_, read),) = tool_returns(script.seen[-1][1])
    assert [c["id"] for c in read["catalogues"]["candidates"]] == [PYORAILY]
    assert "liikenteen-laskentatiedot" not in str(read)
    # Live and read back, the same parts in the same order (the row among them).
    streamed = [p for p in result.parts if is_durable(p)]
    assert chat_parts(agent.chats, result.chat_id) == streamed
    # The terminal shows the row, then its steps.
    console = Console(record=True, width=120, file=io.StringIO())
    console.print(render_event(row))
    shown = console.export_text().splitlines()
    assert shown[0].startswith("  ⌕ Searched 2 catalogues, 1 candidate  for 'bicycle counts'")
    assert shown[1:3] == [
        "      searched avoindata-catalogue: 27 match, read 2",
        "      searched hri-catalogue: 27 match, read 2",
    ]
    assert shown[3].startswith(f"      → {PYORAILY}  Helsingin pyöräilijämäärät  (bicycle")


def test_the_sub_agent_spends_from_the_turns_budget(
    make_agent: Callable[..., MapAgent], sources: Sources
) -> None:
    script = Script(
        picks=[{"tools": ["find_sources"], "scopes": {}}],
        steps=[[ASK], [ASK], "Nothing more."],
        shortlists=[SHORTLIST],
    )
    agent = make_agent(script, sources=sources, turn_budget={"max_requests": 1})
    result = asyncio.run(agent.run("Cyclists in Helsinki?"))
    first, second = [p for p in result.parts if isinstance(p, DiscoveryPart)]
    assert first.ranked_by == "model" and first.usage["requests"] == 1
    assert second.ranked_by == "catalogue" and second.usage["requests"] == 0
    assert second.problem == (
        "this turn's budget for second model calls (map code and discovery) of 1 call is spent"
    )
    assert script.discovery_calls == 1
    # A new turn has a budget of its own.
    again = Script(picks=script.picks, steps=[[ASK], "Done."], shortlists=[SHORTLIST])
    agent.model = again.model()
    agent.discovery_model = agent.model
    later = asyncio.run(agent.run("And again?", chat_id=result.chat_id))
    (row,) = [p for p in later.parts if isinstance(p, DiscoveryPart)]
    assert row.ranked_by == "model"


def test_a_discovery_model_of_its_own_is_used_for_the_shortlist(
    make_agent: Callable[..., MapAgent], sources: Sources
) -> None:
    main = Script(picks=[{"tools": ["find_sources"], "scopes": {}}], steps=[[ASK], "Done."])
    helper = Script(shortlists=[SHORTLIST])
    agent = make_agent(main, sources=sources, discovery_model=helper.model(name="small"))
    result = asyncio.run(agent.run("Cyclists in Helsinki?"))
    (row,) = [p for p in result.parts if isinstance(p, DiscoveryPart)]
    assert (main.discovery_calls, helper.discovery_calls) == (0, 1)
    usage: dict[str, Any] = dict(row.usage)
    assert usage["model"] == "small"
