"""A chat read back carries its small entries' GeoJSON inline.

The page draws an entry's newest version only, and fetched each by its URL: a chat of 50
turns asked for 52 layers before it was ready. ``GET /api/chats/{id}/parts`` now puts the
stored GeoJSON in each entry's newest part, as the live stream does, within a size budget;
what is over it stays by reference.
"""

from __future__ import annotations

import json
from asyncio import run
from collections.abc import Iterator
from typing import Any

import pytest
from tests.server.web import ask, call, make_agent

from geomint.agent import MapAgent
from geomint.sandbox import Sandbox
from geomint.server import create_app, thread


@pytest.fixture
def agent(in_process: Sandbox) -> Iterator[MapAgent]:
    yield make_agent(in_process, require_approval=[])


def _chat(agent: MapAgent) -> tuple[Any, list[dict[str, Any]]]:
    """A chat of the demo data and a stops layer loaded twice (its versions 1 and 2), and
    its entry parts read back."""
    app = create_app(agent)
    assert run(call(app, "POST", "/api/chats/inline")).status_code == 200
    for _ in range(2):
        response = run(call(app, "POST", "/api/chat", json=ask("Reload my stops file", "inline")))
        assert response.status_code == 200
    parts = run(call(app, "GET", "/api/chats/inline/parts")).json()["parts"]
    return app, [p for p in parts if p["type"] == "entry"]


def test_each_entrys_newest_part_carries_its_stored_geojson(agent: MapAgent) -> None:
    app, entries = _chat(agent)
    stops = [p for p in entries if p["entry_id"] == "byod-1"]
    assert [p["version"] for p in stops] == [1, 2]
    # The page draws the newest version only: an older one stays by reference.
    assert "geojson" not in stops[0]
    newest = {p["entry_id"]: p for p in entries}
    assert sorted(newest) == ["byod-1", "geometries-1", "places-1"]
    for part in newest.values():
        stored = run(call(app, "GET", part["geojson_url"]))
        assert part["geojson"] == stored.json(), part["entry_id"]
        assert part["bytes"] == len(stored.content)


def test_what_is_over_the_budgets_stays_by_reference(
    agent: MapAgent, monkeypatch: pytest.MonkeyPatch
) -> None:
    app, entries = _chat(agent)
    first = entries[0]
    # A budget for the chat that the first entry fills: the others are not inlined.
    monkeypatch.setattr(thread, "INLINE_CHAT_BYTES", first["bytes"])
    read = run(call(app, "GET", "/api/chats/inline/parts")).json()["parts"]
    inlined = [p["entry_id"] for p in read if "geojson" in p]
    assert inlined == [first["entry_id"]]
    # An entry over the size one may ride inline is fetched by its URL, as before.
    monkeypatch.setattr(thread, "INLINE_ENTRY_BYTES", first["bytes"] - 1)
    read = run(call(app, "GET", "/api/chats/inline/parts")).json()["parts"]
    assert first["entry_id"] not in [p["entry_id"] for p in read if "geojson" in p]
    assert all(p["geojson_url"] for p in read if p["type"] == "entry")


def test_a_stored_layer_that_is_not_json_stays_by_reference(
    agent: MapAgent, monkeypatch: pytest.MonkeyPatch
) -> None:
    app, entries = _chat(agent)
    broken = entries[0]["entry_id"]
    read_blob = agent.chats.read_blob

    def corrupt(chat_id: str, ref: Any) -> bytes:
        data = read_blob(chat_id, ref)
        return data[:-1] if json.loads(data) == entries[0].get("geojson") else data

    monkeypatch.setattr(agent.chats, "read_blob", corrupt)
    response = run(call(app, "GET", "/api/chats/inline/parts"))
    assert response.status_code == 200
    read = {p["entry_id"]: p for p in response.json()["parts"] if p["type"] == "entry"}
    assert "geojson" not in read[broken]
    assert all("geojson" in p for entry_id, p in read.items() if entry_id != broken)
