"""Map changes over HTTP: the parts a reload reads, the blobs a change names (and nothing
else), a person's undo in an order that keeps later changes whole."""

from __future__ import annotations

import hashlib
from asyncio import run
from collections.abc import Iterator
from pathlib import Path

import pytest
from tests.server.web import call, make_agent

from geomint.agent import MapAgent
from geomint.agent.demo import seed_demo_chat
from geomint.sandbox import Sandbox
from geomint.server import create_app

DOCS = Path(__file__).resolve().parents[2] / "docs" / "map-code.md"


@pytest.fixture
def agent(in_process: Sandbox) -> Iterator[MapAgent]:
    yield make_agent(in_process, require_approval=[])


def _changed(agent: MapAgent, *prompts: str) -> str:
    chat = run(seed_demo_chat(agent, "c1"))
    for prompt in prompts:
        result = run(agent.run(prompt, chat_id=chat))
        assert all(c["ok"] for c in result.tool_calls), result.tool_calls
    return chat


def test_a_reload_reads_the_change_with_sources_at_geomints_routes(agent: MapAgent) -> None:
    _changed(agent, "Extrude the parks by their area")
    parts = run(call(create_app(agent), "GET", "/api/chats/c1/parts")).json()["parts"]
    (change,) = [p for p in parts if p["type"] == "map_change"]
    assert change["change_id"] == "m1" and change["attempts"] == 1
    assert change["usage"]["requests"] == 1 and change["usage"]["model"] == "geomint-demo"
    source = change["diff"]["added"]["sources"]["parks-area"]
    assert source["data"].startswith("/api/chats/c1/map-blobs/")
    served = run(call(create_app(agent), "GET", source["data"]))
    assert served.status_code == 200
    assert served.headers["content-type"] == "application/geo+json"
    assert hashlib.sha256(served.content).hexdigest() == source["data"].rsplit("/", 1)[1]
    assert served.json()["type"] == "FeatureCollection"


def test_an_image_change_serves_its_png(agent: MapAgent) -> None:
    _changed(agent, "A hexagon density surface of the restaurants as an overlay")
    parts = run(call(create_app(agent), "GET", "/api/chats/c1/parts")).json()["parts"]
    (change,) = [p for p in parts if p["type"] == "map_change"]
    source = change["diff"]["added"]["sources"]["restaurant-density"]
    assert "image" not in source and len(source["coordinates"]) == 4
    served = run(call(create_app(agent), "GET", source["url"]))
    assert served.headers["content-type"] == "image/png"
    assert served.content.startswith(b"\x89PNG\r\n\x1a\n")


def test_only_blobs_a_change_names_are_served(agent: MapAgent) -> None:
    _changed(agent, "Heatmap of the cafés")
    app = create_app(agent)
    workspace = agent.chats.open("c1")
    entry_blob = workspace.entries["places-1"].latest.blob.sha256  # stored, but not a map's
    for sha in (entry_blob, "0" * 64):
        assert run(call(app, "GET", f"/api/chats/c1/map-blobs/{sha}")).status_code == 404
    assert run(call(app, "GET", "/api/chats/c1/map-blobs/..%2Fetc")).status_code in (404, 422)
    assert run(call(app, "GET", f"/api/chats/c2/map-blobs/{entry_blob}")).status_code == 404


def test_a_persons_undo_waits_for_the_change_built_on_it(agent: MapAgent) -> None:
    _changed(agent, "Heatmap of the cafés")
    from geomint.tools import DEFAULT_TOOLS

    context = agent.context("c1", "later")
    entry = DEFAULT_TOOLS["execute_map_code"]
    later = 'mapview.set_paint_property("cafe-heat", "heatmap-opacity", 0.5)'
    run(entry.execute(entry.input_schema(intent="fainter", code=later), context))
    app = create_app(agent)
    blocked = run(call(app, "POST", "/api/chats/c1/map-changes/m1/undo"))
    assert blocked.status_code == 409
    assert blocked.json()["detail"] == "m2 builds on what m1 added; undo m2 first"
    assert run(call(app, "POST", "/api/chats/c1/map-changes/m2/undo")).json() == {
        "id": "c1",
        "undone": "m2",
    }
    assert run(call(app, "POST", "/api/chats/c1/map-changes/m1/undo")).status_code == 200
    assert run(call(app, "POST", "/api/chats/c1/map-changes/m1/undo")).status_code == 404
    assert run(call(app, "POST", "/api/chats/c1/map-changes/x1/undo")).status_code == 422
    parts = run(call(app, "GET", "/api/chats/c1/parts")).json()["parts"]
    assert [p["change_id"] for p in parts if p["type"] == "map_undone"] == ["m2", "m1"]


def test_every_mapview_method_is_documented() -> None:
    from geomint.sandbox import MapView

    text = DOCS.read_text()
    public = [n for n in vars(MapView) if not n.startswith("_") and callable(vars(MapView)[n])]
    missing = [n for n in public if n != "diff" and f"`{n}(" not in text]
    assert public and missing == []
