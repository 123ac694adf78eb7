"""A stream part has a size limit: parts carry no bulk, and an entry rides inline only when
it is small.

The red team once made the page receive one 75 MB part for a large analysis result. Now an
entry part names its GeoJSON by URL (a small one is spliced in from the stored bytes), an
analysis result over 32 kB is stored apart and named by URL, and any part still over
MAX_PART_BYTES is withheld with its size.
"""

from __future__ import annotations

import json
from asyncio import run
from collections.abc import AsyncIterator, Iterator
from datetime import UTC, datetime
from typing import Any

import pytest
from tests.server.web import call, make_agent
from tests.tools.helpers import call as call_tool
from tests.tools.helpers import seed

from geomint.agent import MapAgent
from geomint.sandbox import Sandbox
from geomint.server import create_app
from geomint.server.stream import (
    INLINE_ENTRY_BYTES,
    MAX_PART_BYTES,
    capped,
    encode_sse,
    ui_chunks,
)
from geomint.store import Chats, MemoryStore
from geomint.tools import ToolContext
from geomint.ui import AnalysisPart, ChartPart, EntryPart, Part, ToolCallPart, chat_parts, entry_url

ORIGIN: dict[str, Any] = {"seq": 3, "run_id": "r-1", "at": datetime(2026, 1, 2, tzinfo=UTC)}


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


async def _stream(*parts: Part) -> AsyncIterator[Part]:
    for part in parts:
        yield part


def _sent(stored: dict[tuple[str, int], bytes], *parts: Part) -> list[dict[str, Any]]:
    async def collect() -> list[bytes]:
        read = lambda entry_id, version: stored.get((entry_id, version))  # noqa: E731
        return [line async for line in encode_sse(ui_chunks(_stream(*parts)), read)]

    lines = run(collect())
    assert all(len(line) <= MAX_PART_BYTES + 1_000 for line in lines)
    return [json.loads(line[6:]) for line in lines if line != b"data: [DONE]\n\n"]


def _entry(entry_id: str, size: int) -> EntryPart:
    return EntryPart(
        **ORIGIN,
        entry_id=entry_id,
        kind="byod",
        version=2,
        label="stops",
        bytes=size,
        geojson_url=entry_url("c 1", entry_id, 2),
    )


def test_a_large_entry_is_sent_by_reference_and_a_small_one_whole() -> None:
    big, small = json.dumps(_points(20_000)).encode(), json.dumps(_points(3)).encode()
    assert len(big) > INLINE_ENTRY_BYTES
    stored = {("byod-1", 2): big, ("byod-2", 2): small}
    sent = _sent(stored, _entry("byod-1", len(big)), _entry("byod-2", len(small)))
    [large, whole] = [p["data"] for p in sent if p["type"] == "data-entry"]
    assert "geojson" not in large
    assert large["geojson_url"] == "/api/chats/c%201/entries/byod-1?version=2"
    assert large["label"] == "stops" and large["bytes"] == len(big)
    assert whole["geojson"] == _points(3)
    assert whole["seq"] == 3 and whole["run_id"] == "r-1"


def test_a_part_over_the_limit_is_withheld_with_its_size() -> None:
    config: dict[str, Any] = {"type": "bar", "data": {"labels": list(range(300_000))}}
    chart = ChartPart(**ORIGIN, analysis_id="a1", config=config)
    [sent] = [p for p in _sent({}, chart) if p["type"] == "data-chart"]
    assert sent["data"] == {
        "type": "chart",
        "seq": 3,
        "run_id": "r-1",
        "at": "2026-01-02T00:00:00Z",
        "withheld": True,
        "bytes": sent["data"]["bytes"],
        "limit": MAX_PART_BYTES,
    }
    assert sent["data"]["bytes"] > MAX_PART_BYTES
    assert sent["data"] == capped(chart.model_dump(mode="json"))  # as a chat reads back


def test_a_tool_call_over_the_limit_is_withheld_in_the_sdk_chunk_too() -> None:
    # The red team sent a 3 MB argument: the typed part was withheld, the AI SDK's
    # tool-input-available chunk went out whole.
    call = ToolCallPart(**ORIGIN, call_id="c1", tool="analyse_data", args={"code": "x" * 3_000_000})
    sent = _sent({}, call)
    (sdk,) = [p for p in sent if p["type"] == "tool-input-available"]
    assert sdk["input"]["withheld"] is True and sdk["toolCallId"] == "c1"
    (typed,) = [p for p in sent if p["type"] == "data-tool-call"]
    assert typed["data"]["withheld"] is True and typed["data"]["call_id"] == "c1"


def test_a_large_analysis_result_is_shown_by_reference(in_process: Sandbox) -> None:
    chats = Chats(MemoryStore())
    chats.create("c1")
    ctx = ToolContext(chats=chats, chat_id="c1", run_id="r1", sandbox=in_process)
    run(seed(ctx, "places", _points(3)))
    code = "return list(range(300_000))"
    arguments = {"places_entry_ids": ["places-1"], "name": "big", "code": code}
    run(call_tool(ctx, "analyse_data", arguments))
    [analysis] = [p for p in chat_parts(chats, "c1") if isinstance(p, AnalysisPart)]
    assert analysis.result is None
    assert analysis.result_url == "/api/chats/c1/analyses/a1"
    assert len(analysis.model_dump_json()) < 1_000


@pytest.fixture
def agent(in_process: Sandbox) -> Iterator[MapAgent]:
    yield make_agent(in_process)


def test_an_entry_version_is_served_as_stored(agent: MapAgent) -> None:
    app = create_app(agent)
    run(call(app, "POST", "/api/chats/ref"))  # the demo data: places-1, geometries-1
    response = run(call(app, "GET", "/api/chats/ref/entries/places-1?version=1"))
    assert response.status_code == 200
    assert response.headers["content-type"] == "application/geo+json"
    assert len(response.json()["features"]) == 1346
    latest = run(call(app, "GET", "/api/chats/ref/entries/places-1"))
    assert latest.content == response.content
    for url in (
        "/api/chats/ref/entries/places-1?version=2",
        "/api/chats/ref/entries/nothing-1",
        "/api/chats/nowhere/entries/places-1",
    ):
        assert run(call(app, "GET", url)).status_code == 404
