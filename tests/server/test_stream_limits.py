"""A stream part has a size limit: a large entry or analysis result goes by reference.

The red team made the page receive one 75 MB part for a large analysis result. Parts
over MAX_PART_BYTES now carry a URL the page fetches when it needs the data.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Iterator
from typing import Any

import pytest
from tests.agent.scripted import run
from tests.server.web import call, make_agent

from geomint.agent import AgentEvent, MapAgent
from geomint.sandbox import Sandbox
from geomint.server import create_app
from geomint.server.stream import MAX_PART_BYTES, encode_sse, ui_chunks


def _points(n: int) -> dict[str, Any]:
    return {
        "type": "FeatureCollection",
        "features": [
            {
                "type": "Feature",
                "properties": {"name": f"stop {i}"},
                "geometry": {"type": "Point", "coordinates": [24.9 + i / 1e5, 60.17]},
            }
            for i in range(n)
        ],
    }


async def _events(*events: AgentEvent) -> AsyncIterator[AgentEvent]:
    for event in events:
        yield event


def _parts(*events: AgentEvent) -> list[dict[str, Any]]:
    async def collect() -> list[bytes]:
        return [line async for line in encode_sse(ui_chunks(_events(*events)), "c 1")]

    lines = run(collect())
    assert all(len(line) <= MAX_PART_BYTES + 1_000 for line in lines)
    return [json.loads(line[6:]) for line in lines if line != b"data: [DONE]\n\n"]


def test_a_large_entry_is_sent_by_reference_and_a_small_one_whole() -> None:
    big, small = _points(20_000), _points(3)
    assert len(json.dumps(big)) > MAX_PART_BYTES
    entry = {"entry_id": "byod-1", "kind": "byod", "version": 2, "label": "stops"}
    parts = _parts(
        AgentEvent("entry", {**entry, "geojson": big}),
        AgentEvent("entry", {**entry, "entry_id": "byod-2", "geojson": small}),
    )
    [large, whole] = [p["data"] for p in parts if p["type"] == "data-entry"]
    assert "geojson" not in large
    assert large["geojson_url"] == "/api/chats/c%201/entries/byod-1?version=2"
    assert large["label"] == "stops" and large["bytes"] > MAX_PART_BYTES
    assert whole["geojson"] == small


def test_a_large_analysis_result_is_sent_by_reference_and_anything_else_withheld() -> None:
    result = list(range(300_000))
    parts = _parts(
        AgentEvent("analysis", {"analysis_id": "a1", "ok": True, "result": result}),
        AgentEvent("chart", {"config": {"data": result}}),
    )
    analysis, chart = (p["data"] for p in parts if p["type"] in ("data-analysis", "data-chart"))
    assert analysis == {
        "analysis_id": "a1",
        "ok": True,
        "result_url": "/api/chats/c%201/analyses/a1",
        "bytes": analysis["bytes"],
    }
    assert chart == {"withheld": True, "bytes": chart["bytes"], "limit": MAX_PART_BYTES}


@pytest.fixture
def agent(in_process: Sandbox) -> Iterator[MapAgent]:
    yield make_agent(in_process)


def test_an_entry_version_is_served_as_stored(agent: MapAgent) -> None:
    app = create_app(agent)
    run(call(app, "POST", "/api/chats/ref"))  # the demo data: places-1, geometries-1
    response = run(call(app, "GET", "/api/chats/ref/entries/places-1?version=1"))
    assert response.status_code == 200
    assert response.headers["content-type"] == "application/geo+json"
    assert len(response.json()["features"]) == 1326
    latest = run(call(app, "GET", "/api/chats/ref/entries/places-1"))
    assert latest.content == response.content
    for url in (
        "/api/chats/ref/entries/places-1?version=2",
        "/api/chats/ref/entries/nothing-1",
        "/api/chats/nowhere/entries/places-1",
    ):
        assert run(call(app, "GET", url)).status_code == 404
