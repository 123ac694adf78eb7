"""A new chat over HTTP: the page shows it before anything is stored, and its first
message stores it with what the page showed; the example questions come from the server."""

from __future__ import annotations

from asyncio import run
from collections.abc import Iterator
from typing import Any

import pytest
from pydantic_ai.models.test import TestModel
from tests.server.web import ask, call, make_agent

from geomint.agent import MapAgent
from geomint.models.demo import DEMO_PROMPTS
from geomint.sandbox import Sandbox
from geomint.server import create_app


@pytest.fixture
def agent(in_process: Sandbox) -> Iterator[MapAgent]:
    yield make_agent(in_process)


def _get(app: Any, url: str) -> Any:
    response = run(call(app, "GET", url))
    assert response.status_code == 200, (url, response.text)
    return response


def _entries(parts: list[dict[str, Any]]) -> list[tuple[str, str, int | None]]:
    return [(p["entry_id"], p["label"], p["features"]) for p in parts if p["type"] == "entry"]


def test_the_page_and_its_startup_calls_store_nothing(agent: MapAgent) -> None:
    app = create_app(agent)
    # What main.js asks for when `/` opens a new chat (start, loadHealth, loadExamples,
    # openChat, loadChats), and the GeoJSON of each entry it draws.
    _get(app, "/")
    _get(app, "/api/health")
    _get(app, "/api/examples")
    opened = _get(app, "/api/chats/c-0123456789abcdef01/parts").json()
    for part in opened["parts"]:
        if part["type"] == "entry":
            assert part["geojson_url"].startswith("/api/new-chat/entries/")
            _get(app, part["geojson_url"])
    assert _get(app, "/api/chats").json() == []

    assert agent.chats.store.chat_ids() == []
    assert opened["stored"] is False
    assert _entries(opened["parts"]) == [
        ("places-1", "places in central Helsinki", 1346),
        ("geometries-1", "parks, gardens and squares of central Helsinki", 20),
    ]


def test_the_first_message_stores_the_chat_as_the_page_showed_it(agent: MapAgent) -> None:
    app = create_app(agent)
    shown = _get(app, "/api/chats/later/parts").json()["parts"]
    places = _get(app, "/api/new-chat/entries/places-1?version=1").content

    response = run(call(app, "POST", "/api/chat", json=ask("What can you do?", "later")))
    assert response.status_code == 200, response.text

    assert agent.chats.store.chat_ids() == ["later"]
    stored = _get(app, "/api/chats/later/parts").json()
    assert stored["stored"] is True
    assert _entries(stored["parts"]) == _entries(shown)
    assert _get(app, "/api/chats/later/entries/places-1?version=1").content == places
    assert [row["id"] for row in _get(app, "/api/chats").json()] == ["later"]


def test_a_persons_change_to_a_new_chats_map_stores_it(agent: MapAgent) -> None:
    app = create_app(agent)
    shown = _get(app, "/api/chats/mapped/parts").json()["parts"]
    switched = run(call(app, "POST", "/api/chats/mapped/map", json={"style": "dark"}))
    assert switched.json() == {"id": "mapped", "style": "dark", "language": None}
    hidden = run(
        call(app, "PATCH", "/api/chats/faded/entries/places-1/display", json={"visible": False})
    )
    assert hidden.status_code == 200, hidden.text

    assert sorted(agent.chats.store.chat_ids()) == ["faded", "mapped"]
    for chat_id in ("faded", "mapped"):
        stored = _get(app, f"/api/chats/{chat_id}/parts").json()["parts"]
        assert _entries(stored) == _entries(shown)
    assert agent.chats.open("mapped").basemap == "dark"
    assert agent.chats.open("faded").entries["places-1"].visible is False
    # A layer no new chat starts with is not there to change, and nothing is stored.
    missing = run(
        call(app, "PATCH", "/api/chats/other/entries/byod-1/display", json={"visible": False})
    )
    assert missing.status_code == 404
    assert "other" not in agent.chats.store.chat_ids()


def test_a_new_chat_has_no_entry_it_does_not_start_with(agent: MapAgent) -> None:
    app = create_app(agent)
    missing = run(call(app, "GET", "/api/new-chat/entries/byod-1"))
    assert (missing.status_code, missing.json()["message"]) == (
        404,
        "A new chat starts with no entry 'byod-1'",
    )
    later = run(call(app, "GET", "/api/new-chat/entries/places-1?version=2"))
    assert later.json()["message"] == "A new chat starts with no entry 'places-1 v2'"


def test_every_demo_prompt_is_offered_as_an_example(agent: MapAgent) -> None:
    examples = _get(create_app(agent), "/api/examples").json()["examples"]
    assert examples == [prompt.text for prompt in DEMO_PROMPTS]
    assert len(examples) >= 12


def test_a_real_model_offers_no_examples_and_starts_chats_empty(in_process: Sandbox) -> None:
    app = create_app(make_agent(in_process, TestModel()))
    assert _get(app, "/api/examples").json() == {"examples": []}
    opened = _get(app, "/api/chats/blank/parts").json()
    assert opened == {"chat_id": "blank", "stored": False, "parts": []}
