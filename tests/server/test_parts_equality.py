"""A chat read back shows exactly what its run streamed, part for part.

Each demo prompt is asked through ``POST /api/chat`` (the web app's own path: the demo
model, the real classifier, tools, sandbox and store); the durable parts the stream
carried are collected, the chat is read back through ``GET /api/chats/{id}/parts``, and
that run's parts must be equal, in the same order.
"""

from __future__ import annotations

import json
from asyncio import run
from collections.abc import Iterator
from typing import Any

import pytest
from tests.server.web import ask, call, make_agent
from tests.sources.connectors.support import RECORDED, fast, live_source
from tests.sources.test_discovery import SEARCH, search_body

from geomint.agent import MapAgent
from geomint.models.demo import DEMO_PROMPTS
from geomint.sandbox import Sandbox
from geomint.server import create_app
from geomint.sources import SourceRegistry, Sources
from geomint.store import MemoryStore
from geomint.testing import RecordedServer, Script
from geomint.ui import PART_ADAPTER, is_durable


@pytest.fixture
def agent(in_process: Sandbox) -> Iterator[MapAgent]:
    yield make_agent(in_process, require_approval=[])


def _streamed(body: str) -> list[dict[str, Any]]:
    """The typed parts a stream carried (``data-*`` chunks), in order."""
    parts = []
    for line in body.split("\n\n"):
        if not line.startswith("data: {"):
            continue
        chunk = json.loads(line[len("data: ") :])
        if chunk["type"].startswith("data-"):
            parts.append(dict(chunk["data"]))
    return parts


def _bare(part: dict[str, Any]) -> dict[str, Any]:
    """``part`` without the GeoJSON a small entry carries inline (it is the stored layer)."""
    return {key: value for key, value in part.items() if key != "geojson"}


# A prompt that needs the page (the person's location) waits for the page's answer, which
# this test has no page to give: tests/e2e/test_web_maptools.py runs it in a browser.
@pytest.mark.parametrize("prompt", [p.text for p in DEMO_PROMPTS if not p.needs_page])
def test_what_a_run_streamed_reads_back_the_same(agent: MapAgent, prompt: str) -> None:
    app = create_app(agent)
    assert run(call(app, "POST", "/api/chats/same")).status_code == 200  # the demo data
    response = run(call(app, "POST", "/api/chat", json=ask(prompt, "same")))
    assert response.status_code == 200
    streamed = _streamed(response.text)
    durable = [p for p in streamed if is_durable(PART_ADAPTER.validate_python(_bare(p)))]
    transient = [p["type"] for p in streamed if p not in durable]
    assert set(transient) <= {"run_started", "classified", "progress"}
    (question,) = [p for p in durable if p["type"] == "question"]
    assert question["text"] == prompt
    assert durable[-1]["type"] == "run_ended" and durable[-1]["stopped"] is False
    assert all(p["run_id"] == question["run_id"] for p in durable)

    read_back = run(call(app, "GET", "/api/chats/same/parts")).json()["parts"]
    this_run = [p for p in read_back if p["run_id"] == question["run_id"]]
    assert [_bare(p) for p in this_run] == [_bare(p) for p in durable]
    # Read back, an entry's newest part carries the GeoJSON its stream carried inline.
    streamed_data = {p["seq"]: p.get("geojson") for p in durable}
    for part in this_run:
        if "geojson" in part:
            assert part["geojson"] == streamed_data[part["seq"]]


def test_a_live_catalogue_search_streams_and_reads_back_as_one_row(in_process: Sandbox) -> None:
    with RecordedServer(RECORDED / "ckan") as server:
        server.add("GET", SEARCH, body=search_body(server.base_url))
        rows = [live_source("hri-catalogue", base_url=f"{server.base_url}/hri")]
        sources = Sources(SourceRegistry(MemoryStore(), seed=rows), policy=fast(), live=True)
        script = Script(
            picks=[{"tools": ["find_sources"], "scopes": {}}],
            steps=[[("find_sources", {"query": "bicycle counts"})], "One dataset fits."],
            shortlists=[{"shortlist": [{"id": "hri-catalogue/helsingin-pyorailijamaarat",
                                        "why": "bicycle counts"}]}],
        )  # fmt: skip
        app = create_app(make_agent(in_process, script.model(), sources=sources))
        response = run(call(app, "POST", "/api/chat", json=ask("Cyclists?", "found")))
    assert response.status_code == 200
    (streamed,) = [p for p in _streamed(response.text) if p["type"] == "discovery"]
    assert streamed["summary"] == "Searched 1 catalogue, 1 candidate"
    assert streamed["shortlist"][0]["why"] == "bicycle counts"
    read_back = run(call(app, "GET", "/api/chats/found/parts")).json()["parts"]
    assert [p for p in read_back if p["type"] == "discovery"] == [streamed]
