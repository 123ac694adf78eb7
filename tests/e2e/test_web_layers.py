"""The layers panel and the styles the server holds, as a person uses them: each entry in a
colour of its own, drawn as the server says; shown, hidden, faded and reordered from the
panel with the keyboard, and the same after a reload; colour by a property with a legend
whose counts are the data's; a result highlighted and shown when it arrives."""

from __future__ import annotations

import json
import time
from collections import Counter
from typing import TYPE_CHECKING, Any

import pytest
from playwright.sync_api import Page, expect
from tests.e2e.layers import point_grid
from tests.e2e.test_web_app import RUN_MS, STOPS, ask, drop_file, open_chat, wait_sources

if TYPE_CHECKING:
    from tests.e2e.conftest import Shot

pytestmark = pytest.mark.e2e

_PAINT = """([layer, name]) => {
    const value = window.geomint.map.getPaintProperty(layer, name);
    return value === undefined ? null : value;
}"""
_SHOWN = "(entry) => window.geomint.shown(entry)"
WALK = "Cafés within 10 minutes' walk of the central station"
_ORDER = """() => window.geomint.map.getStyle().layers.map((l) => l.id)
    .filter((id) => id.startsWith('entry-') && id.endsWith('-circle'))"""


def _styles(page: Page, chat_id: str) -> dict[str, Any]:
    chat = page.request.get(f"/api/chats/{chat_id}").json()
    return {e["entry_id"]: e for e in chat["entries"]}


def _open_layers(page: Page) -> None:
    summary = page.locator("#layers > summary")
    if page.locator("#layers").get_attribute("open") is None:
        summary.focus()
        page.keyboard.press("Enter")
    expect(page.locator("#layer-list")).to_be_visible()


def test_each_entry_is_drawn_in_the_colour_the_server_holds(page: Page) -> None:
    chat_id = open_chat(page)
    wait_sources(page, "entry-places-1", "entry-geometries-1")
    drop_file(page, "stops.geojson", json.dumps(STOPS))
    wait_sources(page, "entry-byod-1")
    held = _styles(page, chat_id)
    drawn = {
        "places-1": page.evaluate(_PAINT, ["entry-places-1-circle", "circle-color"]),
        "geometries-1": page.evaluate(_PAINT, ["entry-geometries-1-fill", "fill-color"]),
        "byod-1": page.evaluate(_PAINT, ["entry-byod-1-circle", "circle-color"]),
    }
    assert drawn == {entry_id: held[entry_id]["style"]["color"] for entry_id in drawn}
    assert len(set(drawn.values())) == 3  # three entries, three colours
    # The panel's swatch is the same colour.
    _open_layers(page)
    row = page.locator("#layer-list .layer[data-entry-id='byod-1']")
    swatch = row.locator(".swatch").evaluate("(n) => n.style.getPropertyValue('--swatch')")
    assert swatch == held["byod-1"]["style"]["color"]
    expect(row.locator(".layer-meta")).to_have_text("byod · 3 features")


def test_hide_fade_and_reorder_from_the_keyboard_survive_a_reload(page: Page) -> None:
    chat_id = open_chat(page)
    wait_sources(page, "entry-places-1")
    drop_file(page, "stops.geojson", json.dumps(STOPS))
    wait_sources(page, "entry-byod-1")
    _open_layers(page)
    # Topmost first: the dropped stops were written last, so they are on top.
    rows = page.locator("#layer-list .layer")
    expect(rows.first).to_have_attribute("data-entry-id", "byod-1")
    assert page.evaluate(_ORDER)[-1] == "entry-byod-1-circle"

    places = page.locator("#layer-list .layer[data-entry-id='places-1']")
    places.locator("input.layer-visible").focus()
    page.keyboard.press("Space")
    page.wait_for_function(
        "() => !window.geomint.shown('places-1')"
        " && window.geomint.map.getPaintProperty('entry-places-1-circle', 'circle-opacity') === 0"
    )
    stops = page.locator("#layer-list .layer[data-entry-id='byod-1']")
    opacity = stops.locator("input.layer-opacity")
    opacity.focus()
    for _ in range(4):
        page.keyboard.press("ArrowLeft")  # 1.0 -> 0.8, kept when the slider changes
    page.wait_for_function(
        "() => window.geomint.map.getPaintProperty('entry-byod-1-circle', 'circle-opacity') < 0.85"
    )
    down = stops.locator("button[data-control='down']")
    down.focus()
    page.keyboard.press("Enter")
    expect(rows.first).not_to_have_attribute("data-entry-id", "byod-1")
    page.wait_for_function(
        """() => { const ids = window.geomint.map.getStyle().layers.map((l) => l.id);
                   return ids.indexOf('entry-byod-1-circle')
                       < ids.indexOf('entry-geometries-1-circle'); }"""
    )
    # The focus stays on the control the person used, in the row's new place.
    expect(
        page.locator("#layer-list .layer[data-entry-id='byod-1'] button[data-control='down']")
    ).to_be_focused()

    # Each step of the slider is kept by its own request; the last may still be on its way.
    deadline = time.monotonic() + 10
    held = _styles(page, chat_id)
    while held["byod-1"]["style"]["opacity"] != pytest.approx(0.8) and time.monotonic() < deadline:
        page.wait_for_timeout(100)
        held = _styles(page, chat_id)
    assert held["places-1"]["visible"] is False
    assert held["byod-1"]["style"]["opacity"] == pytest.approx(0.8)
    order_before = page.evaluate(_ORDER)

    page.reload()
    open_chat(page, f"/chat/{chat_id}")
    wait_sources(page, "entry-places-1", "entry-byod-1")
    assert page.evaluate(_SHOWN, "places-1") is False
    assert page.evaluate(_PAINT, ["entry-places-1-circle", "circle-opacity"]) == 0
    assert page.evaluate(_PAINT, ["entry-byod-1-circle", "circle-opacity"]) == pytest.approx(0.8)
    assert page.evaluate(_ORDER) == order_before


_LABELS = """() => {
    const map = window.geomint.map;
    return [map.getLayoutProperty('entry-places-1-label', 'visibility') ?? 'visible',
            map.getPaintProperty('entry-places-1-label', 'text-opacity')];
}"""


def test_a_hidden_layers_labels_are_laid_out_again_only_where_they_show(page: Page) -> None:
    open_chat(page)
    wait_sources(page, "entry-places-1")
    page.evaluate("() => window.geomint.map.jumpTo({center: [24.945, 60.17], zoom: 12})")
    page.evaluate("() => window.geomint.setDisplay('places-1', false)")
    # Below the names' zoom nothing is laid out: the text is transparent, the layout kept
    # (changing it re-lays out the whole source).
    assert page.evaluate(_LABELS) == ["visible", 0]
    page.evaluate("() => window.geomint.map.jumpTo({zoom: 15})")
    assert page.evaluate(_LABELS) == ["none", 0]  # where names show, they make way
    page.evaluate("() => window.geomint.setDisplay('places-1', true)")
    assert page.evaluate(_LABELS) == ["visible", 1]


def test_a_layer_removed_from_the_map_is_listed_apart_and_put_back(page: Page) -> None:
    chat_id = open_chat(page)
    wait_sources(page, "entry-places-1", "entry-geometries-1")
    _open_layers(page)
    expect(page.locator("#layer-count")).to_have_text("2")
    parks = page.locator("#layer-list .layer[data-entry-id='geometries-1']")
    parks.locator("button[data-control='remove']").focus()
    page.keyboard.press("Enter")

    removed = page.locator("#layer-list .layers-removed .layer[data-entry-id='geometries-1']")
    expect(removed).to_be_visible()
    expect(removed.locator("button[data-control='restore']")).to_be_focused()
    expect(page.locator("#layer-list > .layer")).to_have_count(1)  # only the places listed
    expect(page.locator("#layer-count")).to_have_text("1")
    page.wait_for_function("() => !window.geomint.shown('geometries-1')")
    assert _styles(page, chat_id)["geometries-1"]["removed"] is True

    page.reload()
    open_chat(page, f"/chat/{chat_id}")
    wait_sources(page, "entry-places-1", "entry-geometries-1")
    _open_layers(page)
    expect(removed).to_be_visible()
    assert page.evaluate(_SHOWN, "geometries-1") is False

    removed.locator("button[data-control='restore']").click()
    expect(page.locator("#layer-list .layers-removed")).to_have_count(0)
    expect(parks.locator("button[data-control='remove']")).to_be_focused()
    page.wait_for_function("() => window.geomint.shown('geometries-1')")
    assert _styles(page, chat_id)["geometries-1"]["removed"] is False


def test_colour_by_category_draws_the_classes_and_the_legend_counts_them(
    page: Page, shot: Shot
) -> None:
    chat_id = open_chat(page)
    wait_sources(page, "entry-places-1")
    ask(page, "Colour the places by category")
    page.wait_for_function(
        "() => Array.isArray("
        "window.geomint.map.getPaintProperty('entry-places-1-circle', 'circle-color'))"
    )
    style = _styles(page, chat_id)["places-1"]["style"]
    classes = style["color_by"]["classes"]
    data = page.request.get(f"/api/chats/{chat_id}/entries/places-1").json()
    counts = Counter(f["properties"].get("category") for f in data["features"])
    named = [c for c in classes if not c.get("other")]
    assert [(c["value"], c["count"]) for c in named] == counts.most_common(len(named))
    assert sum(c["count"] for c in classes) == len(data["features"])
    # The map's expression gives each class its colour.
    expression = page.evaluate(_PAINT, ["entry-places-1-circle", "circle-color"])
    pairs = dict(zip(expression[2:-1:2], expression[3:-1:2], strict=True))
    assert all(pairs[str(c["value"])] == c["color"] for c in named)
    # The legend, read from the panel, is the same classes and counts.
    _open_layers(page)
    legend = page.locator("#layer-list .layer[data-entry-id='places-1'] .legend-classes li")
    expect(legend).to_have_count(len(classes))
    first = legend.first
    expect(first.locator(".legend-value")).to_have_text(str(named[0]["value"]))
    expect(first.locator(".legend-count")).to_have_text(f"{named[0]['count']:,}")
    shot(page, "layers-legend")


def test_a_result_does_not_move_the_map_the_person_moved_while_it_ran(page: Page) -> None:
    open_chat(page)
    wait_sources(page, "entry-places-1")
    ask(page, WALK, wait=False)
    # The person drags the map while the answer is on its way.
    box = page.locator("#map").bounding_box()
    assert box is not None
    x, y = box["x"] + box["width"] / 2, box["y"] + box["height"] / 2
    page.mouse.move(x, y)
    page.mouse.down()
    page.mouse.move(x + 120, y + 40, steps=5)
    page.mouse.up()
    moved = page.evaluate("() => window.geomint.map.getCenter().toArray()")
    expect(page.locator("body")).to_have_attribute("data-busy", "false", timeout=RUN_MS)
    assert page.evaluate("() => window.geomint.map.getSource('entry-places-2') !== undefined")
    after = page.evaluate("() => window.geomint.map.getCenter().toArray()")
    assert after == pytest.approx(moved, abs=1e-9)


def test_a_result_is_highlighted_and_shown_when_it_arrives(page: Page) -> None:
    open_chat(page)
    wait_sources(page, "entry-places-1")
    page.evaluate("() => window.geomint.map.jumpTo({center: [25.2, 60.3], zoom: 9})")
    # The highlight is brief: watch for it while the answer streams.
    page.evaluate(
        """() => { window.__flashed = new Set();
            const map = window.geomint.map;
            const watch = () => {
                for (const l of map.getStyle().layers) {
                    if (l.type !== 'circle' || !l.id.startsWith('entry-')) continue;
                    const width = map.getPaintProperty(l.id, 'circle-stroke-width');
                    if (width === 3) window.__flashed.add(l.source);
                }
                requestAnimationFrame(watch);
            };
            watch(); }"""
    )
    ask(page, WALK)
    wait_sources(page, "entry-places-2")
    page.wait_for_function("() => window.__flashed.has('entry-places-2')")
    # The camera went to the new result: the cafés near the station, not the far view.
    center = page.evaluate("() => window.geomint.map.getCenter().toArray()")
    assert center[0] == pytest.approx(24.94, abs=0.05) and center[1] == pytest.approx(
        60.17, abs=0.03
    )


_DRAWN_POINTS = """(entry) => {
    const map = window.geomint.map;
    const features = map.queryRenderedFeatures({layers: [`entry-${entry}-circle`]});
    return {
        drawn: new Set(features.map((f) => f.properties.n)).size,
        buffer: map.getSource(`entry-${entry}`).serialize().buffer ?? null,
        mixedBuffer: map.getSource('entry-geometries-1').serialize().buffer ?? null,
    };
}"""


def test_a_points_only_layer_is_cut_into_tiles_with_a_small_margin_and_all_drawn(
    page: Page,
) -> None:
    # 1,200 points over 0.28° by 0.001°: at the view that fits them, several tiles wide,
    # with points on the tiles' edges.
    open_chat(page)
    drop_file(page, "grid.geojson", point_grid(1200).decode())
    wait_sources(page, "entry-byod-1")
    page.wait_for_function("() => window.geomint.entryFeatures('byod-1') === 1200", timeout=RUN_MS)
    page.evaluate(
        "() => new Promise((done) => { const m = window.geomint.map;"
        " if (m.loaded()) done(); else m.once('idle', done); })"
    )
    found = page.evaluate(_DRAWN_POINTS, "byod-1")
    # MapLibre's margin of 128 px stays for lines and areas (the outlines); points get 4 px.
    assert found["buffer"] == 4 and found["mixedBuffer"] is None, found
    # Every point is drawn once: none lost at a tile's edge.
    assert found["drawn"] == 1200, found
