"""Error bodies a person can read (:mod:`geomint.server.errors`): every refusal is JSON
with a ``message`` the page shows as it is, naming the real limit when one was passed."""

from __future__ import annotations

from asyncio import run
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from tests.server.web import UPLOAD_LIMIT, ask, call, make_agent

from geomint.agent import MapAgent
from geomint.sandbox import Sandbox
from geomint.server import create_app
from geomint.server.app import MAX_BODY_BYTES, TurnLimiter


@pytest.fixture
def agent(in_process: Sandbox) -> Iterator[MapAgent]:
    yield make_agent(in_process)  # not closed: the sandbox is the session's


def _post(app: Any, url: str, **kwargs: Any) -> httpx.Response:
    return run(call(app, "POST", url, **kwargs))


def test_a_message_over_the_limit_says_the_limit_and_what_to_do(agent: MapAgent) -> None:
    response = _post(create_app(agent), "/api/chat", json=ask("x" * 70_000, "long"))

    assert response.status_code == 413
    body = response.json()
    assert body["limit_bytes"] == MAX_BODY_BYTES == 64_000
    assert "a message may be at most 64,000 bytes" in body["message"]
    assert "Shorten it" in body["message"]
    assert "Content Too Large" not in body["message"]
    assert agent.chats.store.chat_ids() == []


def test_a_file_over_the_upload_limit_says_the_upload_limit(agent: MapAgent) -> None:
    response = _post(
        create_app(agent),
        "/api/chats/big/uploads",
        params={"name": "huge.geojson"},
        content=b"x" * (UPLOAD_LIMIT + 1),
    )

    assert response.status_code == 413
    body = response.json()
    assert body["limit_bytes"] == UPLOAD_LIMIT
    assert f"the limit for a dropped file is {UPLOAD_LIMIT:,} bytes" in body["message"]


def test_a_refusal_with_a_sentence_keeps_it_as_the_message(agent: MapAgent) -> None:
    app = create_app(agent)
    response = _post(app, "/api/chats/c/approvals/nothing", json={"approved": True})

    assert response.status_code == 404
    body = response.json()
    assert body["detail"].startswith("nothing waits for an answer")
    assert body["message"].startswith("Nothing waits for an answer under 'nothing'")


def test_a_rate_limited_turn_says_when_to_try_again(agent: MapAgent) -> None:
    app = create_app(agent, limiter=TurnLimiter(per_minute=1, burst=0))
    response = _post(app, "/api/chat", json=ask("hello", "limited"))

    assert response.status_code == 429
    assert response.headers["retry-after"]
    assert response.json()["message"].startswith("Too many requests at once; try again in")


def test_a_request_the_server_cannot_read_says_which_field(agent: MapAgent) -> None:
    response = _post(create_app(agent), "/api/chat", json={"id": "ok", "messages": []})

    assert response.status_code == 422
    body = response.json()
    assert isinstance(body["detail"], list)  # FastAPI's own, for programs
    assert body["message"].startswith("The request was not understood (messages:")


def test_an_unknown_address_says_so_in_words(agent: MapAgent) -> None:
    response = run(call(create_app(agent), "GET", "/api/nothing-here"))

    assert response.status_code == 404
    assert response.json() == {"detail": "Not Found", "message": "Nothing is at this address."}
