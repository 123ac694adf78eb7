"""Map code in the page: each demo diff drawn as the diff says (read back from
``map.getStyle()``), undone, replayed on reload, previewed while its approval waits, and a
hostile body refused before the page sees anything.

The demo prompts run on the package's demo server; the approval test starts one with
``--approve map_style``, and the restyle and hostile tests one on a scripted model
(:mod:`tests.e2e.scripted_serve`) whose ``execute_map_code`` calls carry the test's code.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import httpx
import pytest
from playwright.sync_api import Locator, Page, expect
from tests.e2e.test_web_app import RUN_MS, ask, open_chat, wait_sources
from tests.e2e.web_server import running_server

if TYPE_CHECKING:
    from tests.e2e.conftest import BrowserLog, Shot

pytestmark = pytest.mark.e2e

HEATMAP = "Heatmap of the cafés"
EXTRUDE = "Extrude the parks by their area"
ANIMATE = "Animate the route from start to end"
HEXAGONS = "A hexagon density surface of the restaurants as an overlay"

#: Every way the map differs from a diff: sources and layers added (type, data or url,
#: paint, layout, filter, zooms, place under `before`) and layers updated. An animated
#: paint property is left to the animation's own check.
_MISMATCHES = """(diff) => {
    const map = window.geomint.map, code = window.geomint.mapCode;
    const style = map.getStyle();
    const order = style.layers.map((l) => l.id);
    const same = (a, b) => JSON.stringify(a) === JSON.stringify(b);
    const animated = new Set((diff.animations || []).flatMap((a) =>
        a.keyframes.flatMap((k) => Object.keys(k.paint).map((n) => `${a.layer_id} ${n}`))));
    const out = [];
    for (const [id, source] of Object.entries(diff.added.sources)) {
        const got = style.sources[`mapcode-${id}`];
        if (!got) { out.push(`no source ${id}`); continue; }
        const key = source.type === 'image' ? 'url' : 'data';
        if (got.type !== source.type) out.push(`source ${id} is ${got.type}`);
        // A GeoJSON source reads back as its URL until loaded, then as the data itself
        // (whose features assert_drawn counts against the URL's).
        const loaded = got[key] && got[key].type === 'FeatureCollection';
        if (!loaded && got[key] !== new URL(source[key], location.origin).href) {
            out.push(`source ${id} ${key} ${JSON.stringify(got[key]).slice(0, 80)}`);
        }
        if (source.coordinates && !same(got.coordinates, source.coordinates)) {
            out.push(`source ${id} corners`);
        }
    }
    const check = (id, got, wanted, group) => {
        for (const [name, value] of Object.entries(wanted || {})) {
            if (animated.has(`${id} ${name}`)) continue;
            const shown = (got || {})[name];
            if (!same(shown, value)) out.push(`${id} ${group} ${name}: ${JSON.stringify(shown)}`);
        }
    };
    for (const layer of diff.added.layers) {
        const got = style.layers.find((l) => l.id === `mapcode-${layer.id}`);
        if (!got) { out.push(`no layer ${layer.id}`); continue; }
        if (got.type !== layer.type) out.push(`${layer.id} is ${got.type}`);
        if (got.source !== code.sourceId(layer.source)) out.push(`${layer.id} draws ${got.source}`);
        check(layer.id, got.paint, layer.paint, 'paint');
        check(layer.id, got.layout, layer.layout, 'layout');
        for (const key of ['filter', 'minzoom', 'maxzoom']) {
            if (key in layer && !same(got[key], layer[key])) out.push(`${layer.id} ${key}`);
        }
        const under = layer.before && code.layerId(layer.before);
        if (under && order.indexOf(got.id) > order.indexOf(under)) {
            out.push(`${layer.id} is above ${under}`);
        }
    }
    for (const update of diff.updated.layers) {
        const got = style.layers.find((l) => l.id === code.layerId(update.id));
        if (!got) { out.push(`no layer ${update.id}`); continue; }
        check(update.id, got.paint, update.paint, 'paint');
        check(update.id, got.layout, update.layout, 'layout');
    }
    return out;
}"""
_MAPCODE_IDS = """() => {
    const style = window.geomint.map.getStyle();
    return [style.layers.map((l) => l.id).filter((id) => id.startsWith('mapcode-')),
            Object.keys(style.sources).filter((id) => id.startsWith('mapcode-'))];
}"""
_SERVED = """async (url) => (await (await fetch(url)).json()).features.length"""
_LOADED = """([id, count]) => {
    const data = window.geomint.map.getSource(id).serialize().data;
    return data && data.type === 'FeatureCollection' && data.features.length === count;
}"""
_PAINT = "([layer, name]) => window.geomint.map.getPaintProperty(layer, name)"


def parts(server: str, chat_id: str, kind: str) -> list[dict[str, Any]]:
    """The chat's parts of one type, as a reload reads them."""
    response = httpx.get(f"{server}/api/chats/{chat_id}/parts", timeout=30)
    response.raise_for_status()
    return [p for p in response.json()["parts"] if p["type"] == kind]


def mapcode_ids(page: Page) -> tuple[list[str], list[str]]:
    layers, sources = page.evaluate(_MAPCODE_IDS)
    return sorted(layers), sorted(sources)


def card(page: Page, change_id: str) -> Locator:
    return page.locator(f".map-change[data-change-id='{change_id}']")


def assert_drawn(page: Page, diff: dict[str, Any]) -> None:
    """The map holds what ``diff`` added and updated; each GeoJSON source, once loaded,
    as many features as its URL serves."""
    assert page.evaluate(_MISMATCHES, diff) == []
    for id_, source in diff["added"]["sources"].items():
        if source["type"] != "geojson":
            continue
        served = page.evaluate(_SERVED, source["data"])
        page.wait_for_function(_LOADED, arg=[f"mapcode-{id_}", served])


@pytest.fixture(scope="module")
def approving_server(chromium: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A demo server on which every map change waits for the person's approval."""
    with running_server(tmp_path_factory.mktemp("approving"), approve=("map_style",)) as s:
        yield s.url


@pytest.fixture(scope="module")
def scripted_server(chromium: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A server whose model runs the map code of :mod:`tests.e2e.scripted_serve`."""
    with running_server(
        tmp_path_factory.mktemp("scripted"), approve=(), module="tests.e2e.scripted_serve"
    ) as s:
        yield s.url


@pytest.mark.parametrize(
    ("question", "name"),
    [(HEATMAP, "heatmap"), (EXTRUDE, "extrude"), (ANIMATE, "animate"), (HEXAGONS, "hexagons")],
)
def test_a_demo_map_change_is_drawn_as_its_diff_says(
    page: Page, server: str, shot: Shot, question: str, name: str
) -> None:
    chat_id = open_chat(page)
    wait_sources(page, "entry-places-1", "entry-geometries-1")

    ask(page, question)

    (change,) = parts(server, chat_id, "map_change")
    diff = change["diff"]
    found = card(page, change["change_id"])
    expect(found).to_be_visible()
    expect(found.locator(".map-change-description")).to_have_text(change["description"])
    expect(found.locator(".map-change-intent")).to_contain_text(change["intent"])
    expect(found.locator(".map-change-cost")).to_contain_text(
        f"{change['usage']['input_tokens'] + change['usage']['output_tokens']:,} tokens"
    )
    code = found.locator(".map-change-code pre")
    expect(code).to_be_hidden()
    found.locator(".map-change-code summary").click()
    expect(code).to_contain_text("mapview.")
    assert_drawn(page, diff)
    layers, sources = mapcode_ids(page)
    assert layers == sorted(f"mapcode-{layer['id']}" for layer in diff["added"]["layers"])
    assert sources == sorted(f"mapcode-{id_}" for id_ in diff["added"]["sources"])
    if diff["camera"] and "pitch" in diff["camera"]:
        page.wait_for_function(
            "(pitch) => Math.abs(window.geomint.map.getPitch() - pitch) < 0.5",
            arg=diff["camera"]["pitch"],
        )
    for animation in diff["animations"]:
        # The player ends on the last keyframe.
        last = animation["keyframes"][-1]["paint"]
        page.wait_for_function(
            """([layer, paint]) => Object.entries(paint).every(([name, value]) =>
                JSON.stringify(window.geomint.map.getPaintProperty(layer, name))
                === JSON.stringify(value))""",
            arg=[f"mapcode-{animation['layer_id']}", last],
            timeout=animation["duration_ms"] + 20_000,
        )
    shot(page, f"mapcode-{name}")


def test_undo_and_reload_draw_the_changes_still_applied(page: Page, server: str) -> None:
    chat_id = open_chat(page)
    wait_sources(page, "entry-places-1", "entry-geometries-1")
    ask(page, HEATMAP)
    ask(page, EXTRUDE)
    heat, extrude = parts(server, chat_id, "map_change")
    assert mapcode_ids(page)[0] == ["mapcode-cafe-heat", "mapcode-parks-3d"]

    undo = card(page, extrude["change_id"]).get_by_role("button", name=re.compile("Undo"))
    undo.focus()
    page.keyboard.press("Enter")  # keyboard operable

    expect(card(page, extrude["change_id"])).to_have_attribute("data-state", "undone")
    expect(undo).to_be_disabled()
    assert mapcode_ids(page) == (["mapcode-cafe-heat"], [])
    assert_drawn(page, heat["diff"])
    assert [p["change_id"] for p in parts(server, chat_id, "map_undone")] == ["m2"]

    page.reload()
    open_chat(page, f"/chat/{chat_id}")
    expect(card(page, heat["change_id"])).to_have_attribute("data-state", "applied")
    expect(card(page, extrude["change_id"])).to_have_attribute("data-state", "undone")
    assert mapcode_ids(page) == (["mapcode-cafe-heat"], [])
    assert_drawn(page, heat["diff"])


def test_a_reload_draws_every_demo_change_again(page: Page, server: str) -> None:
    chat_id = open_chat(page)
    wait_sources(page, "entry-places-1", "entry-geometries-1")
    for question in (HEATMAP, ANIMATE, HEXAGONS):
        ask(page, question)
    changes = parts(server, chat_id, "map_change")
    before = mapcode_ids(page)

    open_chat(page, f"/chat/{chat_id}")

    assert mapcode_ids(page) == before
    for change in changes:
        assert_drawn(page, change["diff"])
    # A replayed animation shows its end.
    (animation,) = changes[1]["diff"]["animations"]
    gradient = page.evaluate(_PAINT, ["mapcode-route-drawn", "line-gradient"])
    assert gradient == animation["keyframes"][-1]["paint"]["line-gradient"]


def test_map_code_restyling_an_entry_survives_its_restyle_and_undo_puts_it_back(
    page: Page, scripted_server: str, browser_log: BrowserLog
) -> None:
    browser_log.allow(r"status of 409 .*/map-changes/m1/undo", "m1 is undone before m2 once")
    chat_id = open_chat(page, f"{scripted_server}/")
    wait_sources(page, "entry-places-1")
    original = page.evaluate(_PAINT, ["entry-places-1-circle", "circle-color"])
    radius = page.evaluate(_PAINT, ["entry-places-1-circle", "circle-radius"])

    ask(page, "pink places please")
    (pink,) = parts(scripted_server, chat_id, "map_change")
    assert page.evaluate(_PAINT, ["entry-places-1-circle", "circle-color"]) == "#ff00ff"
    assert_drawn(page, pink["diff"])
    # The person changes the entry's opacity: geomint restyles it, map code's colour stays.
    page.evaluate("() => document.querySelector('.chat-header .layers').open = true")
    slider = page.locator(".layer[data-entry-id='places-1'] input.layer-opacity")
    slider.fill("0.5")
    slider.dispatch_event("change")
    page.wait_for_function(
        "() => window.geomint.map.getPaintProperty('entry-places-1-circle', 'circle-opacity')"
        " === 0.5"
    )
    assert page.evaluate(_PAINT, ["entry-places-1-circle", "circle-color"]) == "#ff00ff"

    ask(page, "a wider ring")
    assert page.evaluate(_PAINT, ["mapcode-places-ring", "circle-radius"]) == 24
    # m2 builds on m1: the server says so, and the page shows it.
    card(page, "m1").get_by_role("button", name=re.compile("Undo")).click()
    expect(card(page, "m1").locator(".map-change-status")).to_contain_text("undo m2 first")
    expect(card(page, "m1")).to_have_attribute("data-state", "applied")

    card(page, "m2").get_by_role("button", name=re.compile("Undo")).click()
    expect(card(page, "m2")).to_have_attribute("data-state", "undone")
    assert page.evaluate(_PAINT, ["mapcode-places-ring", "circle-radius"]) == 16
    card(page, "m1").get_by_role("button", name=re.compile("Undo")).click()
    expect(card(page, "m1")).to_have_attribute("data-state", "undone")

    assert mapcode_ids(page) == ([], [])
    assert page.evaluate(_PAINT, ["entry-places-1-circle", "circle-color"]) == original
    assert page.evaluate(_PAINT, ["entry-places-1-circle", "circle-radius"]) == radius
    assert page.evaluate(_PAINT, ["entry-places-1-circle", "circle-opacity"]) == 0.5

    open_chat(page, f"{scripted_server}/chat/{chat_id}")
    assert mapcode_ids(page) == ([], [])
    assert page.evaluate(_PAINT, ["entry-places-1-circle", "circle-color"]) == original


def test_the_page_stacks_layers_as_the_code_did(page: Page, scripted_server: str) -> None:
    """A layer added under one the same change moves: the page places them from the top of
    the final order down, as the server's fold does, so both agree with the code."""
    chat_id = open_chat(page, f"{scripted_server}/")
    wait_sources(page, "entry-places-1")
    ask(page, "restack please")
    (change,) = parts(scripted_server, chat_id, "map_change")
    wanted = [i for i in change["diff"]["order"] if i.startswith("places-1-") or i == "under-fill"]
    assert wanted[-2:] == ["under-fill", "places-1-fill"]
    on_map = page.evaluate("() => window.geomint.map.getLayersOrder()")
    names = {f"entry-{i}": i for i in wanted} | {"mapcode-under-fill": "under-fill"}
    assert [names[i] for i in on_map if i in names] == wanted


def test_an_approval_previews_the_diff_until_it_is_refused(
    page: Page, approving_server: str, shot: Shot
) -> None:
    chat_id = open_chat(page, f"{approving_server}/")
    wait_sources(page, "entry-places-1", "entry-geometries-1")

    ask(page, HEATMAP, wait=False)
    intent = page.locator(".approval[data-approval-id]").last
    expect(intent).to_contain_text("Intent: heatmap of the cafés", timeout=RUN_MS)
    assert mapcode_ids(page) == ([], [])  # nothing to draw before there is code
    intent.locator("button.approve").click()

    effect = page.locator(".approval[data-approval-id]").nth(1)
    expect(effect).to_contain_text("adds a heatmap layer cafe-heat", timeout=RUN_MS)
    page.wait_for_function("() => window.geomint.map.getLayer('mapcode-cafe-heat')")
    shot(page, "mapcode-preview")
    effect.locator("button.refuse").click()

    expect(effect).to_have_attribute("data-state", "refused")
    expect(page.locator("body")).to_have_attribute("data-busy", "false", timeout=RUN_MS)
    assert mapcode_ids(page) == ([], [])
    assert parts(approving_server, chat_id, "map_change") == []


def test_an_approved_diff_is_drawn_once_as_the_change(page: Page, approving_server: str) -> None:
    chat_id = open_chat(page, f"{approving_server}/")
    wait_sources(page, "entry-places-1", "entry-geometries-1")

    ask(page, HEXAGONS, wait=False)
    for index in (0, 1):
        approval = page.locator(".approval[data-approval-id]").nth(index)
        expect(approval.locator("button.approve")).to_be_visible(timeout=RUN_MS)
        approval.locator("button.approve").click()
    expect(page.locator("body")).to_have_attribute("data-busy", "false", timeout=RUN_MS)

    (change,) = parts(approving_server, chat_id, "map_change")
    expect(card(page, change["change_id"])).to_be_visible()
    assert mapcode_ids(page) == (["mapcode-restaurant-density"], ["mapcode-restaurant-density"])
    assert_drawn(page, change["diff"])


def test_a_hostile_diff_is_refused_before_the_page_sees_it(
    page: Page, scripted_server: str, browser_log: BrowserLog
) -> None:
    chat_id = open_chat(page, f"{scripted_server}/")
    wait_sources(page, "entry-places-1")

    ask(page, "Put evil tiles under the places")

    assert parts(scripted_server, chat_id, "map_change") == []
    (result,) = parts(scripted_server, chat_id, "tool_result")
    assert result["tool"] == "execute_map_code" and not result["ok"]
    assert "map code adds 'geojson' sources" in result["error"]
    tool = page.locator(".tool[data-tool='execute_map_code']")
    expect(tool).to_have_attribute("data-state", "error")
    expect(tool).to_contain_text("geojson")
    style = page.evaluate("() => JSON.stringify(window.geomint.map.getStyle())")
    assert "evil.example" not in style
    assert mapcode_ids(page) == ([], [])
    assert not any("evil.example" in url for url in browser_log.outside)


_CHECKS = """async () => {
    const m = await import('/static/app/mapcode.js');
    const chat = window.geomint.chatId;
    const own = (path) => m.ownUrl(path, chat);
    return {
        own: own(`/api/chats/${chat}/map-blobs/ab`),
        others: [`/api/chats/other/map-blobs/ab`, `https://evil.example/api/chats/${chat}/x`,
                 `//evil.example/api/chats/${chat}/x`, `/api/chats/${chat}/../other/x`,
                 `/api/chats/${chat}`, `javascript:alert(1)`, `/api/chats/${chat}/\\\\evil`,
                 42, null].map(own),
        raster: m.checkedSource('t', {type: 'raster', tiles: ['/api/chats/x/{z}']}, chat).refused,
        tiles: m.checkedSource('g', {type: 'geojson', data: `/api/chats/${chat}/e`,
                                     tiles: ['https://evil.example/{z}']}, chat).refused,
        between: m.between(['step', ['line-progress'], '#e63946', 0, 'red'],
                           ['step', ['line-progress'], '#e63946', 1, 'blue'], 0.25),
        ended: m.between({a: 1, b: 'x'}, {a: 3, b: 'y'}, 1),
        at: m.paintAt([{at: 0, paint: {w: 0}}, {at: 0.5, paint: {w: 10}},
                       {at: 1, paint: {w: 0}}], 0.75),
    };
}"""


def test_the_page_draws_sources_only_from_this_chats_routes(page: Page) -> None:
    chat_id = open_chat(page)
    found = page.evaluate(_CHECKS)
    assert found["own"] == f"{page.url.split('/chat/')[0]}/api/chats/{chat_id}/map-blobs/ab"
    assert found["others"] == [None] * 9
    assert "of type raster" in found["raster"]
    assert 'has a "tiles"' in found["tiles"]
    assert found["between"] == ["step", ["line-progress"], "#e63946", 0.25, "red"]
    assert found["ended"] == {"a": 3, "b": "y"}
    assert found["at"] == {"w": 5}
