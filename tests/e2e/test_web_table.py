"""The attribute table of a layer, in a real headless Chromium against ``geomint serve``.

The table is opened from the Layers list ("Table" on a layer's row) and shows the layer's
features, read from the page's own map source; these tests compare what it shows with the
entry as the API exports it, and read the camera and the outlined feature from the map
(``window.geomint``).
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

import pytest
from playwright.sync_api import Locator, Page, expect
from tests.e2e.layers import point_grid, upload_point_grid
from tests.e2e.test_web_app import RUN_MS, drop_file, health, open_chat, wait_sources

if TYPE_CHECKING:
    from tests.e2e.conftest import Shot

pytestmark = pytest.mark.e2e

expect.set_options(timeout=30_000)

#: Four stops: a number column with a gap ("riders"), text in natural order ("stop 2" before
#: "stop 10") and a nested value ("lines"). Kauppatori has no riders.
STOPS = {
    "type": "FeatureCollection",
    "features": [
        {
            "type": "Feature",
            "properties": {"name": name, "riders": riders, "lines": lines}
            if riders is not None
            else {"name": name, "lines": lines},
            "geometry": {"type": "Point", "coordinates": [lon, lat]},
        }
        for name, riders, lines, lon, lat in (
            ("stop 10 Rautatientori", 900, {"bus": 12, "tram": [2, 3]}, 24.9436, 60.1710),
            ("stop 2 Kamppi", 95, {"bus": 30}, 24.9316, 60.1690),
            ("stop 3 Kauppatori", None, {"tram": [2]}, 24.9526, 60.1675),
            ("stop 1 Hakaniemi", 1200, {}, 24.9510, 60.1790),
        )
    ],
}

TABLE = "#attribute-table"
ROWS = f"{TABLE} .table-body [role='row']"

_CELLS = """(selector) => [...document.querySelectorAll(selector)]
    .sort((a, b) => a.getAttribute('aria-rowindex') - b.getAttribute('aria-rowindex'))
    .map((row) => [...row.querySelectorAll('[role=gridcell]')].map((cell) => cell.textContent))"""
_READABLE = """async (rows) => {
    const { readable } = await import('/static/app/map.js');
    return rows.map((row) => row.map((value) => readable(value)));
}"""
_CAMERA = """() => { const c = window.geomint.map.getCenter(); return [c.lng, c.lat]; }"""
_HIGHLIGHTED = """() => {
    const source = window.geomint.map.getSource('table-highlight');
    return source ? source.serialize().data.features.map((f) => f.geometry) : [];
}"""
_MOVED = """() => new Promise((resolve) => {
    const map = window.geomint.map;
    if (!map.isMoving()) return resolve();
    map.once('moveend', () => resolve());
})"""
_CLICK_POINT = """([lon, lat]) => {
    const map = window.geomint.map;
    map.jumpTo({ center: [lon, lat], zoom: 16 });
    const box = map.getCanvas().getBoundingClientRect();
    const point = map.project([lon, lat]);
    return [box.left + point.x, box.top + point.y];
}"""


def open_table(page: Page, entry_id: str) -> Locator:
    """Open the Layers list and press the layer's "Table" button; return the table."""
    layers = page.locator("#layers")
    if layers.get_attribute("open") is None:
        page.locator("#layers > summary").click()
    page.locator(f"#layer-list .layer[data-entry-id='{entry_id}'] .layer-table").click()
    table = page.locator(TABLE)
    expect(table).to_be_visible()
    return table


def with_stops(page: Page) -> str:
    """A chat holding :data:`STOPS` as ``byod-1``, dropped into the page; its id."""
    chat_id = open_chat(page)
    drop_file(page, "stops.geojson", json.dumps(STOPS))
    wait_sources(page, "entry-byod-1")
    return chat_id


def shown_rows(page: Page) -> list[list[str]]:
    """The drawn rows' cells (without the "#" column), top to bottom."""
    rows = page.evaluate(_CELLS, ROWS)
    assert isinstance(rows, list)
    return rows


def column(page: Page, name: str) -> list[str]:
    headers = page.locator(f"{TABLE} [role='columnheader']").all_inner_texts()
    at = [h.rstrip(" ▲▼") for h in headers[1:]].index(name)
    return [row[at] for row in shown_rows(page)]


def exported(page: Page, chat_id: str, entry_id: str) -> dict[str, Any]:
    response = page.request.get(f"/api/chats/{chat_id}/entries/{entry_id}/export?format=geojson")
    assert response.ok, response.status
    body = response.json()
    assert isinstance(body, dict)
    return body


def test_a_layers_table_shows_its_features_and_properties(page: Page) -> None:
    chat_id = open_chat(page)
    wait_sources(page, "entry-places-1")

    table = open_table(page, "places-1")

    features = exported(page, chat_id, "places-1")["features"]
    names: list[str] = []
    for feature in features:
        names.extend(k for k in feature["properties"] if k not in names)
    headers = table.locator("[role='columnheader']").all_inner_texts()
    assert headers == ["#", *names]
    grid = table.locator("[role='grid']")
    expect(grid).to_have_attribute("aria-rowcount", str(len(features) + 1))
    expect(grid).to_have_attribute("aria-colcount", str(len(names) + 1))
    expect(table).to_contain_text(f"{len(features):,} features")
    # The rows drawn are the first features, in order, each value as the map's popup reads it.
    drawn = shown_rows(page)
    assert 0 < len(drawn) < len(features)
    expected = page.evaluate(
        _READABLE, [[f["properties"].get(k) for k in names] for f in features[: len(drawn)]]
    )
    assert drawn == expected
    numbers = table.locator(".table-body [role='rowheader']").all_inner_texts()
    assert sorted(numbers, key=int)[:3] == ["1", "2", "3"]


def test_a_header_sorts_numbers_as_numbers_and_missing_values_last(page: Page) -> None:
    with_stops(page)
    table = open_table(page, "byod-1")
    riders = table.locator("[role='columnheader']", has_text="riders")
    expect(riders).to_have_attribute("aria-sort", "none")
    assert column(page, "name")[0] == "stop 10 Rautatientori"
    # Nested values read as words, not [object Object].
    assert column(page, "lines")[0] == "bus: 12; tram: 2, 3"

    riders.locator("button").click()
    expect(riders).to_have_attribute("aria-sort", "ascending")
    assert column(page, "riders") == ["95", "900", "1,200", "–"]

    riders.locator("button").click()
    expect(riders).to_have_attribute("aria-sort", "descending")
    assert column(page, "riders") == ["1,200", "900", "95", "–"]

    name = table.locator("[role='columnheader']", has_text="name")
    name.locator("button").press("Enter")
    expect(name).to_have_attribute("aria-sort", "ascending")
    expect(riders).to_have_attribute("aria-sort", "none")
    assert column(page, "name") == [
        "stop 1 Hakaniemi",
        "stop 2 Kamppi",
        "stop 3 Kauppatori",
        "stop 10 Rautatientori",
    ]


def test_a_row_click_flies_to_its_feature_and_outlines_it(page: Page, shot: Shot) -> None:
    with_stops(page)
    open_table(page, "byod-1")
    before = page.evaluate(_CAMERA)

    page.locator(ROWS, has_text="Kamppi").click()

    page.wait_for_function("() => window.geomint.map.isMoving()", timeout=5000)
    page.evaluate(_MOVED)
    lon, lat = page.evaluate(_CAMERA)
    assert (lon, lat) != tuple(before)
    # The feature is in view above the drawer (the camera is offset by the drawer's height).
    assert page.evaluate(
        """([lon, lat]) => {
            const map = window.geomint.map;
            const point = map.project([lon, lat]);
            const drawer = document.querySelector('#attribute-table').offsetHeight;
            return point.y > 0 && point.y < map.getCanvas().clientHeight - drawer
                && map.getBounds().contains([lon, lat]);
        }""",
        [24.9316, 60.1690],
    )
    assert page.evaluate(_HIGHLIGHTED) == [{"type": "Point", "coordinates": [24.9316, 60.1690]}]
    expect(page.locator(ROWS, has_text="Kamppi")).to_have_attribute("aria-selected", "true")
    shot(page, "attribute-table")


def test_a_click_on_a_feature_on_the_map_selects_its_row(page: Page) -> None:
    with_stops(page)
    open_table(page, "byod-1")
    hakaniemi = STOPS["features"][3]["geometry"]["coordinates"]
    x, y = page.evaluate(_CLICK_POINT, hakaniemi)

    page.mouse.click(x, y)

    row = page.locator(f"{ROWS}[aria-selected='true']")
    expect(row).to_have_count(1)
    expect(row).to_contain_text("stop 1 Hakaniemi")
    expect(row).to_have_attribute("data-feature", "3")
    expect(row).to_be_in_viewport()
    assert page.evaluate(_HIGHLIGHTED) == [{"type": "Point", "coordinates": hakaniemi}]


def test_the_table_is_used_with_the_keyboard_alone(page: Page) -> None:
    with_stops(page)
    summary = page.locator("#layers > summary")
    summary.focus()
    page.keyboard.press("Enter")
    button = page.locator("#layer-list .layer[data-entry-id='byod-1'] .layer-table")
    button.focus()
    page.keyboard.press("Enter")

    rows = page.locator(ROWS)
    expect(rows.first).to_be_focused()
    page.keyboard.press("ArrowDown")
    selected = page.locator(f"{ROWS}[aria-selected='true']")
    expect(selected).to_have_attribute("aria-rowindex", "3")
    expect(selected).to_be_focused()
    page.keyboard.press("End")
    expect(selected).to_have_attribute("aria-rowindex", "5")
    page.keyboard.press("PageUp")
    expect(selected).to_have_attribute("aria-rowindex", "2")
    page.keyboard.press("PageDown")
    expect(selected).to_have_attribute("aria-rowindex", "5")
    page.keyboard.press("Home")
    expect(selected).to_have_attribute("aria-rowindex", "2")
    page.keyboard.press("ArrowUp")  # already at the top: stays there
    expect(selected).to_have_attribute("aria-rowindex", "2")
    page.keyboard.press("ArrowDown")
    page.keyboard.press("Enter")
    page.wait_for_function("() => window.geomint.map.isMoving()", timeout=5000)
    page.evaluate(_MOVED)
    assert page.evaluate(_HIGHLIGHTED) == [STOPS["features"][1]["geometry"]]

    # Back through the headers (the tab order: Close, the headers' buttons, then the rows).
    page.keyboard.press("Shift+Tab")
    expect(page.locator(f"{TABLE} [role='columnheader'] button").last).to_be_focused()
    page.keyboard.press("Enter")
    expect(page.locator(f"{TABLE} [role='columnheader']").last).to_have_attribute(
        "aria-sort", "ascending"
    )

    page.keyboard.press("Escape")
    expect(page.locator(TABLE)).to_be_hidden()
    expect(button).to_be_focused()
    assert page.evaluate(_HIGHLIGHTED) == []


def test_the_close_button_closes_the_table(page: Page) -> None:
    with_stops(page)
    table = open_table(page, "byod-1")
    table.get_by_role("button", name="Close").click()
    expect(table).to_be_hidden()


def test_a_table_of_100000_points_draws_only_the_rows_in_view(page: Page, server: str) -> None:
    assert len(point_grid(100_000)) < health(server)["max_upload_bytes"]
    chat_id = "e2e-table-100k"
    upload_point_grid(server, chat_id, 100_000, timeout=120)
    open_chat(page, f"/chat/{chat_id}")
    # Drawn by the page's own point layer (points.js), whose data the table reads.
    page.wait_for_function(
        "() => window.geomint.map.getLayer('entry-byod-1-points')", timeout=RUN_MS
    )
    table = open_table(page, "byod-1")

    expect(table.locator("[role='grid']")).to_have_attribute("aria-rowcount", "100001")
    assert 0 < page.locator(ROWS).count() <= 60
    table.locator("[role='grid']").evaluate("(grid) => { grid.scrollTop = grid.scrollHeight; }")

    last = page.locator(f"{ROWS}[aria-rowindex='100001']")
    expect(last).to_be_in_viewport()
    expect(last.locator("[role='rowheader']")).to_have_text("100000")
    expect(last).to_contain_text("point 99999")
    assert page.locator(ROWS).count() <= 60
