"""The web API over ASGI in-process: health, chats, and a turn streamed as UI-message SSE."""

from __future__ import annotations

import json
import logging
from asyncio import run
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from tests.server.web import make_agent

from geomint import audit
from geomint.agent import MapAgent
from geomint.sandbox import Sandbox
from geomint.server import create_app
from geomint.server.app import MAX_BODY_BYTES, TurnLimiter


@pytest.fixture
def agent(in_process: Sandbox) -> Iterator[MapAgent]:
    yield make_agent(in_process, require_approval=[])


async def _request(agent: MapAgent, method: str, url: str, **kwargs: Any) -> httpx.Response:
    transport = httpx.ASGITransport(app=create_app(agent))
    async with httpx.AsyncClient(transport=transport, base_url="http://geomint.test") as client:
        return await client.request(method, url, **kwargs)


def _events(body: str) -> list[Any]:
    lines = [line.removeprefix("data: ") for line in body.split("\n\n") if line]
    assert lines[-1] == "[DONE]"
    return [json.loads(line) for line in lines[:-1]]


def test_health_names_the_store_the_sandbox_and_the_demo_model(agent: MapAgent) -> None:
    response = run(_request(agent, "GET", "/api/health"))
    assert response.status_code == 200
    health = response.json()
    assert health["status"] == "ok" and health["store"] == "ok"
    assert health["sandbox"] == "in-process"
    assert health["model"]["demo"] is True
    assert set(health["security"]) == set(audit.EVENTS)
    assert all(isinstance(n, int) for n in health["security"].values())
    # The page's file picker offers what intake reads, zipped Shapefiles and all.
    for ending in (".geojson", ".parquet", ".csv", ".zip", ".gpkg", ".fgb", ".kml"):
        assert ending in health["upload_suffixes"], ending


def test_a_turn_streams_as_ui_message_chunks_and_the_chat_is_listed(agent: MapAgent) -> None:
    body = {
        "id": "web-1",
        "messages": [
            {
                "id": "m1",
                "role": "user",
                "parts": [{"type": "text", "text": "Load my bus and tram stops file"}],
            }
        ],
    }
    response = run(_request(agent, "POST", "/api/chat", json=body))
    assert response.status_code == 200
    assert response.headers["x-vercel-ai-ui-message-stream"] == "v1"
    assert response.headers["content-type"].startswith("text/event-stream")
    chunks = _events(response.text)
    kinds = [c["type"] for c in chunks]
    assert kinds[0] == "start" and kinds[-1] == "finish"
    assert "data-classified" in kinds
    (call,) = [c for c in chunks if c["type"] == "tool-input-available"]
    assert call["toolName"] == "add_byod_layer"
    (output,) = [c for c in chunks if c["type"] == "tool-output-available"]
    assert output["toolCallId"] == call["toolCallId"]
    assert output["output"]["entry_id"] == "byod-1"
    (entry,) = [c for c in chunks if c["type"] == "data-entry"]
    assert len(entry["data"]["geojson"]["features"]) == 125  # the full layer, for the map
    text = "".join(c["delta"] for c in chunks if c["type"] == "text-delta")
    assert "stops file is on the map" in text
    assert kinds.index("text-start") < kinds.index("text-end")
    listed = run(_request(agent, "GET", "/api/chats")).json()
    assert [(c["id"], c["title"], c["messages"]) for c in listed] == [
        ("web-1", "Load my bus and tram stops file", 2)
    ]


@pytest.mark.parametrize(
    ("body", "status"),
    [
        (
            {
                "id": "bad id!",
                "messages": [{"role": "user", "parts": [{"type": "text", "text": "x"}]}],
            },
            422,
        ),
        ({"id": "ok", "messages": [{"role": "user", "parts": []}]}, 422),
        ({"id": "ok", "messages": []}, 422),
    ],
)
def test_bad_requests_are_refused(agent: MapAgent, body: dict[str, Any], status: int) -> None:
    assert run(_request(agent, "POST", "/api/chat", json=body)).status_code == status


def test_an_oversized_body_is_refused_before_it_is_read(agent: MapAgent) -> None:
    big = "x" * (MAX_BODY_BYTES + 1)
    response = run(
        _request(
            agent, "POST", "/api/chat", content=big, headers={"content-type": "application/json"}
        )
    )
    assert response.status_code == 413


def test_static_files_answer_range_requests_for_pmtiles(agent: MapAgent) -> None:
    response = run(
        _request(agent, "GET", "/static/basemap/world.pmtiles", headers={"range": "bytes=0-126"})
    )
    assert response.status_code == 206
    assert response.content[:7] == b"PMTiles"


def test_a_token_guards_every_api_call_when_set(agent: MapAgent) -> None:
    async def go(headers: dict[str, str]) -> int:
        transport = httpx.ASGITransport(app=create_app(agent, token="s3cret"))
        async with httpx.AsyncClient(transport=transport, base_url="http://x") as client:
            return (await client.get("/api/health", headers=headers)).status_code

    assert run(go({})) == 401
    assert run(go({"authorization": "Bearer wrong"})) == 401
    assert run(go({"authorization": "Bearer s3cret"})) == 200


def test_turns_are_rate_limited_per_client(
    agent: MapAgent, caplog: pytest.LogCaptureFixture
) -> None:
    now = [0.0]
    limiter = TurnLimiter(per_minute=6, burst=2, clock=lambda: now[0])
    assert [limiter.wait("a"), limiter.wait("a")] == [0.0, 0.0]
    assert limiter.wait("a") == pytest.approx(10.0)  # one turn every 10 s
    assert limiter.wait("b") == 0.0  # another client has its own bucket
    now[0] = 10.0
    assert limiter.wait("a") == 0.0

    async def go() -> list[httpx.Response]:
        app = create_app(agent, limiter=TurnLimiter(per_minute=1, burst=1))
        transport = httpx.ASGITransport(app=app)
        body = {
            "id": "rl",
            "messages": [{"role": "user", "parts": [{"type": "text", "text": "What can you do?"}]}],
        }
        async with httpx.AsyncClient(transport=transport, base_url="http://x") as client:
            return [await client.post("/api/chat", json=body) for _ in range(2)]

    audit.reset()
    with caplog.at_level(logging.WARNING, logger="geomint.security"):
        first, second = run(go())
    assert first.status_code == 200
    assert second.status_code == 429
    # The operator sees who was refused and by which limit, never what they asked.
    [line] = [r.getMessage() for r in caplog.records if r.name == "geomint.security"]
    assert json.loads(line) == {"event": "rate_limited", "client": "127.0.0.1", "limit": "turns"}
    assert audit.counts()["rate_limited"] == 1
    assert int(second.headers["retry-after"]) > 0
    assert "try again in" in second.json()["detail"]
