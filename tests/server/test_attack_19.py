"""Attack 19 over the agent and HTTP: map changes' approvals, blobs, undo and stored
events. Each test here failed when written: it shows a weakness, and says what should
happen instead."""

from __future__ import annotations

import copy
import json
from asyncio import run
from collections.abc import Iterator
from typing import Any

import pytest
from tests.server.web import call, make_agent

from geomint.agent import MapAgent
from geomint.agent.demo import seed_demo_chat
from geomint.codegen.style import current_style
from geomint.errors import UsageError
from geomint.providers import bundled
from geomint.sandbox import Sandbox
from geomint.server import create_app
from geomint.tools import DEFAULT_TOOLS, ToolError


@pytest.fixture
def agent(in_process: Sandbox) -> Iterator[MapAgent]:
    yield make_agent(in_process, require_approval=[])


def _map_code(agent: MapAgent, code: str, chat_id: str = "c1") -> dict[str, Any]:
    entry = DEFAULT_TOOLS["execute_map_code"]
    arguments = entry.input_schema(intent="change the map", code=code)
    return run(entry.execute(arguments, agent.context(chat_id, "attack"))).model


def test_the_person_approves_the_diff_not_only_the_intent(in_process: Sandbox) -> None:
    """Attack: with ``require_approval=["map_style"]`` the docs promise two questions: the
    intent before code is written and the *effect* (the diff, drawn as a preview) before it
    is applied. The agent's ``_EffectGuard.authorize`` (agent/_toolset.py) adds
    ``map_style`` to ``approved`` after the first "yes" and answers every later
    ``ctx.require("map_style", ...)`` of the same call with None, so the diff the second
    model wrote is applied without the person ever seeing it: a yes to "heatmap of the
    cafés" approves whatever the generated code does. Instead: a second approval, with
    ``stage: "effect"`` and the diff, before the ``map_changed`` event."""
    agent = make_agent(in_process, require_approval=["map_style"])
    chat = run(seed_demo_chat(agent, "c1"))
    asked: list[Any] = []

    async def approve(request: Any) -> tuple[bool, str]:
        asked.append(request)
        return True, "ok"

    run(agent.run("Heatmap of the cafés", chat_id=chat, approve=approve))
    stages = [(r.preview.get("about") or {}).get("stage") for r in asked]
    assert stages == ["intent", "effect"], stages


def test_an_exported_chat_keeps_its_map_blobs(agent: MapAgent) -> None:
    """Attack (integrity, availability): export a chat with a map change that built
    GeoJSON, import it. ``Chats.export`` (store/chats.py) writes only ``EntryWritten``
    blobs, so the change's GeoJSON (and PNGs) are lost; the imported chat's part still
    names ``/api/chats/c2/map-blobs/<sha>``, the route finds the blob named and reading it
    fails: a 500, not even a 404. Instead: the export carries every blob a map change (or a
    pending approval) names, and the blob is served after the import."""
    chat = run(seed_demo_chat(agent, "c1"))
    result = run(agent.run("Extrude the parks by their area", chat_id=chat))
    assert all(c["ok"] for c in result.tool_calls), result.tool_calls
    agent.chats.import_(agent.chats.export("c1"), chat_id="c2")
    app = create_app(agent)
    parts = run(call(app, "GET", "/api/chats/c2/parts")).json()["parts"]
    (change,) = [p for p in parts if p["type"] == "map_change"]
    url = change["diff"]["added"]["sources"]["parks-area"]["data"]
    assert run(call(app, "GET", url)).status_code == 200


def _export_with_diff(agent: MapAgent, diff: dict[str, Any]) -> dict[str, Any]:
    run(seed_demo_chat(agent, "c1"))
    _map_code(agent, "mapview.fly_to(zoom=3)")
    data = copy.deepcopy(agent.chats.export("c1"))
    (event,) = [e for e in data["events"] if e["body"]["type"] == "map_changed"]
    event["body"]["diff"] = diff
    return data


HOSTILE_URLS = [
    {"type": "raster", "tiles": ["https://evil.example/{z}/{x}/{y}.png"], "tileSize": 256},
    {"type": "geojson", "data": "https://evil.example/leak.json"},
    {"type": "geojson", "data": {"blob": "../../other-chat/map-blobs/" + "0" * 64}},
]


@pytest.mark.parametrize("source", HOSTILE_URLS, ids=["raster", "geojson-url", "blob-path"])
def test_an_imported_map_change_cannot_carry_a_url_to_the_page(
    agent: MapAgent, source: dict[str, Any]
) -> None:
    """Attack: a chat export shared with someone (``geomint chats import``) holds a
    ``map_changed`` event whose diff adds a raster source with tiles on another host, a
    GeoJSON URL, or a blob "hash" that is a path. ``Chats.import_`` validates events with
    the schema (``MapChanged.diff`` is any JSON) and folds them; nothing re-checks the diff,
    and ``routed_diff`` (ui/project.py) passes URLs through and builds
    ``/api/chats/<chat>/map-blobs/<whatever>`` from an unchecked ``blob``. So the part the
    page applies names another host (every page that opens the chat requests it) or another
    chat's route, against "no URL to another host ever reaches the page's map". Instead:
    the import refuses the event (or the part carries no URL outside
    ``/api/chats/<chat>/``)."""
    diff = {"added": {"sources": {"s": source}, "layers": []},
            "removed": {"sources": [], "layers": []}, "updated": {"layers": []},
            "camera": None, "animations": []}  # fmt: skip
    data = _export_with_diff(agent, diff)
    try:
        agent.chats.import_(data, chat_id="c2")
    except UsageError:
        return  # refused: fine
    parts = run(call(create_app(agent), "GET", "/api/chats/c2/parts")).json()["parts"]
    (change,) = [p for p in parts if p["type"] == "map_change"]
    text = json.dumps(change["diff"])
    assert "evil.example" not in text and ".." not in text, text


@pytest.mark.parametrize(
    "diff",
    [{"added": {"sources": {"s": 5}}}, {"added": "x"},
     {"animations": [{"layer_id": "places-1-circle", "keyframes": []}]}],
    ids=["source-not-an-object", "added-not-an-object", "no-keyframes"],
)  # fmt: skip
def test_a_corrupt_stored_map_change_does_not_break_the_chat(
    agent: MapAgent, diff: dict[str, Any]
) -> None:
    """Attack: an imported (or corrupted) ``map_changed`` whose diff is not a diff's shape.
    The import accepts it; then reading the chat's parts is a 500 (``routed_diff`` calls
    ``.get`` on whatever is there) and every later ``execute_map_code`` in the chat fails
    with a ``TypeError``/``AttributeError``/``IndexError`` from ``current_style``'s
    ``apply_diff`` (codegen/style.py), for good. Instead: the import refuses the event, or
    the chat reads and takes map code as if the change were not there."""
    data = _export_with_diff(agent, diff)
    try:
        agent.chats.import_(data, chat_id="c2")
    except UsageError:
        return  # refused: fine
    app = create_app(agent)
    assert run(call(app, "GET", "/api/chats/c2/parts")).status_code == 200
    current_style(agent.chats.open("c2"))


def test_undo_cannot_leave_two_layers_with_one_id(agent: MapAgent) -> None:
    """Attack: m1 adds layer ``a``; m2 removes it; m3 adds a new ``a`` (a heatmap). A
    person undoes m2 on the page. ``map_change_blocker`` (state/workspace.py) only asks
    whether a later change touches what m2 *added* (nothing), so the undo is allowed, and
    the map now holds m1's ``a`` and m3's ``a``: the page's ``addLayer`` of the second
    throws, and ``current_style`` hands the next run two layers with one id (a restyle of
    ``a`` then records "changes nothing"). Instead: m3 blocks undoing m2 (it re-uses an id
    m2 freed), so the undo is a 409."""
    run(seed_demo_chat(agent, "c1"))
    _map_code(agent, 'mapview.add_layer({"id": "a", "type": "circle", "source": "places-1"})')
    _map_code(agent, 'mapview.remove_layer("a")')
    _map_code(agent, 'mapview.add_layer({"id": "a", "type": "heatmap", "source": "places-1"})')
    undo = run(call(create_app(agent), "POST", "/api/chats/c1/map-changes/m2/undo"))
    ids = [layer["id"] for layer in current_style(agent.chats.open("c1"))["layers"]]
    assert undo.status_code == 409 or ids.count("a") == 1, (undo.status_code, ids)


def test_map_code_cannot_take_the_ids_of_a_future_entry(agent: MapAgent) -> None:
    """Attack: entry ids are predictable (``places-2`` comes after ``places-1``). Map code
    adds a source ``places-2`` and a layer ``places-2-circle`` before that entry exists;
    the recorder only refuses ids that exist now. When the person's next search writes
    ``places-2``, ``current_style`` lets the map change's source replace the entry's own
    (no longer marked geomint: its ``{"entry": "places-2"}`` is then refused, and the
    code's fake data is what the entry's layers draw) and holds two ``places-2-circle``
    layers; on the page the entry's ``addSource``/``addLayer`` collide with the change's.
    Instead: map code may not use ids of the shape geomint gives entries and their layers
    (or the fold keeps the entry's own)."""
    run(seed_demo_chat(agent, "c1"))
    try:
        _map_code(
            agent,
            'mapview.add_source("places-2", {"type": "geojson", "data": '
            '{"type": "Point", "coordinates": [0, 0]}})\n'
            'mapview.add_layer({"id": "places-2-circle", "type": "circle", "source": "places-2"})',
        )
    except ToolError as refused:  # refused: fine, if it says why
        assert "has the shape of an entry's id" in refused.message
        return
    context = agent.context("c1", "search")
    written = run(context.write_entry(kind="places", data=bundled.demo_places(), label="more"))
    assert written.entry_id == "places-2"
    style = current_style(agent.chats.open("c1"))
    ids = [layer["id"] for layer in style["layers"]]
    assert style["sources"]["places-2"].get("geomint") is True, style["sources"]["places-2"]
    assert ids.count("places-2-circle") == 1, ids
