"""A person's changes to a layer from the page: shown, hidden, faded, reordered. Each is an
event in the chat's log, so a reload (and the model) sees it; a bad change is refused and
writes nothing."""

from __future__ import annotations

import json
from asyncio import run
from collections.abc import Iterator
from typing import Any

import pytest
from tests.server.web import call, make_agent

from geomint.agent import MapAgent
from geomint.sandbox import Sandbox
from geomint.server import create_app
from geomint.state import PALETTE, EntryDisplayChanged

_STOPS = {
    "type": "FeatureCollection",
    "features": [
        {
            "type": "Feature",
            "properties": {"name": f"stop {i}"},
            "geometry": {"type": "Point", "coordinates": [24.94 + i / 100, 60.17]},
        }
        for i in range(3)
    ],
}


@pytest.fixture
def agent(in_process: Sandbox) -> Iterator[MapAgent]:
    yield make_agent(in_process)


def _uploaded(app: Any, chat_id: str, name: str) -> tuple[str, dict[str, Any]]:
    response = run(
        call(
            app,
            "POST",
            f"/api/chats/{chat_id}/uploads",
            params={"name": name},
            content=json.dumps(_STOPS).encode(),
        )
    )
    assert response.status_code == 200, response.text
    entry_id: str = response.json()["entry_id"]
    style: dict[str, Any] = response.json()["style"]
    return entry_id, style


def _display(app: Any, chat_id: str, entry_id: str, body: Any) -> Any:
    return run(call(app, "PATCH", f"/api/chats/{chat_id}/entries/{entry_id}/display", json=body))


def test_hiding_fading_and_reordering_a_layer_are_kept_in_the_log(agent: MapAgent) -> None:
    app = create_app(agent)
    first, drawn = _uploaded(app, "mine", "stops.geojson")
    second, second_drawn = _uploaded(app, "mine", "more stops.geojson")
    colour = drawn["color"]
    assert colour in PALETTE and second_drawn["color"] in PALETTE
    assert colour != second_drawn["color"] and second_drawn["order"] < 5

    hidden = _display(app, "mine", first, {"visible": False, "opacity": 0.4})
    assert hidden.status_code == 200, hidden.text
    assert hidden.json()["visible"] is False
    assert hidden.json()["style"]["opacity"] == 0.4
    assert hidden.json()["style"]["color"] == colour
    # Moved above the second layer: its order is now the higher one.
    moved = _display(app, "mine", first, {"order": 5})
    assert moved.json()["style"]["order"] == 5

    changes = [e.body for e in agent.chats.trace("mine") if isinstance(e.body, EntryDisplayChanged)]
    assert changes == [
        EntryDisplayChanged(entry_id=first, visible=False, style={"opacity": 0.4}),
        EntryDisplayChanged(entry_id=first, style={"order": 5}),
    ]
    # Read back as the page reads a chat: the whole style, the same as the answer said.
    read = run(call(app, "GET", "/api/chats/mine")).json()
    by_id = {e["entry_id"]: e for e in read["entries"]}
    assert by_id[first]["visible"] is False
    assert by_id[first]["style"] == moved.json()["style"]
    assert by_id[second]["style"] == second_drawn  # the other layer is as it was


def test_a_layer_removed_from_the_map_is_kept_in_the_chat_and_put_back(agent: MapAgent) -> None:
    app = create_app(agent)
    entry_id, _ = _uploaded(app, "mine", "stops.geojson")
    removed = _display(app, "mine", entry_id, {"removed": True})
    assert (removed.json()["visible"], removed.json()["removed"]) == (False, True)
    read = run(call(app, "GET", "/api/chats/mine")).json()
    assert {e["entry_id"]: e["removed"] for e in read["entries"]}[entry_id] is True
    # The page replays it from the parts; the model reads it in its state.
    parts = run(call(app, "GET", "/api/chats/mine/parts")).json()["parts"]
    last = [p for p in parts if p["type"] == "display" and p["entry_id"] == entry_id][-1]
    assert (last["visible"], last["removed"]) == (False, True)
    assert agent.chats.open("mine").entries[entry_id].removed
    # Its data is still there to export.
    exported = run(call(app, "GET", f"/api/chats/mine/entries/{entry_id}/export"))
    assert exported.status_code == 200 and len(exported.json()["features"]) == 3

    back = _display(app, "mine", entry_id, {"removed": False})
    assert (back.json()["visible"], back.json()["removed"]) == (True, False)


@pytest.mark.parametrize(
    "body",
    [{}, {"opacity": 2}, {"visible": "no"}, {"order": -1}, {"colour": "red"}, {"removed": 1}],
    ids=["nothing", "opacity", "visible", "order", "unknown", "removed"],
)
def test_a_change_that_is_not_one_is_refused_and_writes_nothing(
    agent: MapAgent, body: dict[str, Any]
) -> None:
    app = create_app(agent)
    entry_id, _ = _uploaded(app, "mine", "stops.geojson")
    before = agent.chats.open("mine").last_seq
    response = _display(app, "mine", entry_id, body)
    assert response.status_code == 422, response.text
    assert agent.chats.open("mine").last_seq == before


def test_a_change_to_no_entry_or_no_chat_is_a_404(agent: MapAgent) -> None:
    app = create_app(agent)
    _uploaded(app, "mine", "stops.geojson")
    for chat_id, entry_id in (("mine", "byod-9"), ("nowhere", "byod-1")):
        response = _display(app, chat_id, entry_id, {"visible": False})
        assert response.status_code == 404
        assert entry_id in response.json()["message"]


def test_a_layer_change_passes_the_same_checks_as_other_writes(agent: MapAgent) -> None:
    app = create_app(agent, token="s3cret")
    bearer = {"authorization": "Bearer s3cret"}
    response = run(
        call(
            app, "POST", "/api/chats/guarded/uploads", params={"name": "s.geojson"},
            content=json.dumps(_STOPS).encode(), headers=bearer,
        )
    )  # fmt: skip
    entry_id = response.json()["entry_id"]
    path = f"/api/chats/guarded/entries/{entry_id}/display"
    assert run(call(app, "PATCH", path, json={"visible": False})).status_code == 401
    other_site = {**bearer, "origin": "https://evil.example"}
    refused = run(call(app, "PATCH", path, json={"visible": False}, headers=other_site))
    assert refused.status_code == 403
    assert agent.chats.open("guarded").entries[entry_id].visible
