"""The sidebar's chats over HTTP: listed with their dates, renamed by a person (the title
is an event in the chat's log), refused plainly, and deleted."""

from __future__ import annotations

import json
from asyncio import run
from collections.abc import Iterator
from typing import Any

import pytest
from tests.server.web import ask, call, make_agent

from geomint.agent import MapAgent
from geomint.sandbox import Sandbox
from geomint.server import create_app
from geomint.state import ChatRenamed

_STOP = {
    "type": "FeatureCollection",
    "features": [
        {
            "type": "Feature",
            "properties": {"name": "stop"},
            "geometry": {"type": "Point", "coordinates": [24.94, 60.17]},
        }
    ],
}


@pytest.fixture
def agent(in_process: Sandbox) -> Iterator[MapAgent]:
    yield make_agent(in_process)


def _asked(app: Any, chat_id: str, text: str = "What can you do?") -> None:
    run(call(app, "POST", f"/api/chats/{chat_id}"))
    response = run(call(app, "POST", "/api/chat", json=ask(text, chat_id)))
    assert response.status_code == 200, response.text


def _sidebar(app: Any) -> list[dict[str, Any]]:
    response = run(call(app, "GET", "/api/chats"))
    assert response.status_code == 200
    rows: list[dict[str, Any]] = response.json()
    return rows


def test_a_renamed_chat_keeps_the_persons_title_in_its_log(agent: MapAgent) -> None:
    app = create_app(agent)
    _asked(app, "named")
    [row] = _sidebar(app)
    assert row["title"] == "What can you do?" and row["last_message_at"]
    response = run(call(app, "PATCH", "/api/chats/named", json={"title": "  Helsinki cafés  "}))
    assert response.status_code == 200, response.text
    assert response.json() == {"id": "named", "title": "Helsinki cafés"}
    assert [r["title"] for r in _sidebar(app)] == ["Helsinki cafés"]
    assert run(call(app, "GET", "/api/chats/named")).json()["title"] == "Helsinki cafés"
    # One source of truth: the rename is an event, and the export carries it.
    renames = [e.body for e in agent.chats.trace("named") if isinstance(e.body, ChatRenamed)]
    assert renames == [ChatRenamed(title="Helsinki cafés")]
    # A later question does not take the title back; the chat's date is its last message.
    _asked(app, "named", "Bar chart of these places by category")
    [after] = _sidebar(app)
    assert after["title"] == "Helsinki cafés"
    assert after["last_message_at"] > row["last_message_at"]


def test_an_upload_only_chat_is_titled_by_its_first_file(agent: MapAgent) -> None:
    app = create_app(agent)
    for name in ("bus stops.geojson", "trams.geojson"):
        response = run(
            call(
                app,
                "POST",
                "/api/chats/dropped/uploads",
                params={"name": name},
                content=json.dumps(_STOP).encode(),
            )
        )
        assert response.status_code == 200, response.text
    assert [r["title"] for r in _sidebar(app)] == ["bus stops.geojson"]


@pytest.mark.parametrize(
    ("title", "message"),
    [
        ("", "A chat title cannot be empty"),
        ("   \n ", "A chat title cannot be empty"),
        ("x" * 201, "A chat title may be at most 200 characters; this one is 201"),
        (
            "two\nlines",
            "A chat title must be one line of text: it cannot hold control characters (U+000A)",
        ),
        (
            "evil\u202etxt.exe",
            "A chat title cannot hold text-direction overrides (U+202E): they would show it "
            "in another order than it is written",
        ),
    ],
    ids=["empty", "blank", "too-long", "newline", "bidi-override"],
)
def test_a_title_that_cannot_be_one_is_refused_plainly(
    agent: MapAgent, title: str, message: str
) -> None:
    app = create_app(agent)
    _asked(app, "kept")
    response = run(call(app, "PATCH", "/api/chats/kept", json={"title": title}))
    assert response.status_code == 422
    assert response.json()["message"] == message
    assert [r["title"] for r in _sidebar(app)] == ["What can you do?"]  # nothing was written


def test_a_rename_of_no_chat_or_without_a_title_is_refused(agent: MapAgent) -> None:
    app = create_app(agent)
    missing = run(call(app, "PATCH", "/api/chats/nowhere", json={"title": "A"}))
    assert (missing.status_code, missing.json()["message"]) == (404, "No chat 'nowhere'")
    _asked(app, "shape")
    for body in ({}, {"title": 3}, {"title": "A", "colour": "red"}):
        response = run(call(app, "PATCH", "/api/chats/shape", json=body))
        assert response.status_code == 422, body
        assert response.json()["message"].startswith("The request was not understood")
    assert agent.chats.store.chat_ids() == ["shape"]


def test_renames_and_deletes_pass_the_same_checks_as_other_writes(agent: MapAgent) -> None:
    app = create_app(agent, token="s3cret")
    bearer = {"authorization": "Bearer s3cret"}
    run(call(app, "POST", "/api/chats/guarded", headers=bearer))
    rename = {"json": {"title": "Mine"}}
    assert run(call(app, "PATCH", "/api/chats/guarded", **rename)).status_code == 401
    assert run(call(app, "DELETE", "/api/chats/guarded")).status_code == 401
    other_site = {**bearer, "origin": "https://evil.example"}
    for method, kwargs in (("PATCH", rename), ("DELETE", {})):
        response = run(call(app, method, "/api/chats/guarded", headers=other_site, **kwargs))
        assert response.status_code == 403, method
        assert response.json() == {"error": "requests from other sites are refused"}
    assert agent.chats.open("guarded").title is None
    assert not agent.chats.open("guarded").deleted


def test_a_deleted_chat_leaves_the_list_and_cannot_be_renamed(agent: MapAgent) -> None:
    app = create_app(agent)
    _asked(app, "gone")
    _asked(app, "stays", "Bar chart of these places by category")
    response = run(call(app, "DELETE", "/api/chats/gone"))
    assert (response.status_code, response.content) == (204, b"")
    assert [r["id"] for r in _sidebar(app)] == ["stays"]
    assert agent.chats.open("gone").deleted  # a tombstone; retention removes the data
    again = run(call(app, "DELETE", "/api/chats/gone"))
    assert (again.status_code, again.json()["message"]) == (404, "No chat 'gone'")
    renamed = run(call(app, "PATCH", "/api/chats/gone", json={"title": "Back"}))
    assert (renamed.status_code, renamed.json()["message"]) == (404, "No chat 'gone'")
    missing = run(call(app, "DELETE", "/api/chats/nowhere"))
    assert (missing.status_code, missing.json()["message"]) == (404, "No chat 'nowhere'")
