"""The token guards the API however the app is served: at the root, under an ASGI
root_path, or mounted in a parent application (from the red team of issue 16)."""

from __future__ import annotations

import asyncio
from asyncio import run
from collections.abc import Iterator

import httpx
import pytest
from fastapi import FastAPI
from tests.server.web import make_agent

from geomint.agent import MapAgent
from geomint.errors import UsageError
from geomint.sandbox import Sandbox
from geomint.server import create_app


@pytest.fixture
def agent(in_process: Sandbox) -> Iterator[MapAgent]:
    yield make_agent(in_process)


async def _get(app: object, url: str, *, root_path: str = "", **headers: str) -> int:
    transport = httpx.ASGITransport(app=app, root_path=root_path)  # type: ignore[arg-type]
    async with httpx.AsyncClient(transport=transport, base_url="http://geomint.test") as client:
        return (await client.get(url, headers=headers)).status_code


def test_a_mounted_app_still_needs_the_token(agent: MapAgent) -> None:
    parent = FastAPI()
    parent.mount("/geomint", create_app(agent, token="secret"))
    assert run(_get(parent, "/geomint/api/chats")) == 401
    assert run(_get(parent, "/geomint/api/health")) == 401
    assert run(_get(parent, "/geomint/api/chats", authorization="Bearer secret")) == 200


def test_an_app_under_a_root_path_still_needs_the_token(agent: MapAgent) -> None:
    app = create_app(agent, token="secret")
    assert run(_get(app, "/geomint/api/chats", root_path="/geomint")) == 401
    assert run(_get(app, "/api/chats")) == 401


def test_the_token_is_a_bearer_token_and_never_empty(agent: MapAgent) -> None:
    app = create_app(agent, token="secret")
    assert run(_get(app, "/api/chats", authorization="secret")) == 401
    assert run(_get(app, "/api/chats", authorization="Bearer secret")) == 200
    with pytest.raises(UsageError, match="the access token is empty"):
        create_app(agent, token="")


def test_a_chat_id_with_a_trailing_newline_is_refused_not_a_crash(agent: MapAgent) -> None:
    from tests.server.web import ask, call

    app = create_app(agent)
    assert run(call(app, "POST", "/api/chats/x%0A")).status_code == 422
    assert run(call(app, "POST", "/api/chat", json=ask("hello", "x\n"))).status_code == 422


def test_two_tabs_opening_a_new_chat_at_once_both_get_it(agent: MapAgent) -> None:
    from tests.server.web import call

    app = create_app(agent)

    async def both() -> list[int]:
        opened = await asyncio.gather(*(call(app, "POST", "/api/chats/twice") for _ in range(3)))
        return [r.status_code for r in opened]

    assert run(both()) == [200, 200, 200]
    assert list(agent.chats.open("twice").entries) == ["places-1", "geometries-1"]
