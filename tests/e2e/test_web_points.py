"""A layer of many points (at least ``MANY_POINTS`` in map.js), drawn by the page's own WebGL
(points.js) rather than by MapLibre's circle layer, in a real headless Chromium.

What is checked is what a person sees and does: the colour drawn at a point's pixel (read
from the map's canvas in the frame MapLibre just drew), hiding and showing it from the
layers panel, a click on a point (its popup, its row in the table), its labels once the map
is at their zoom, map code that styles the entry's own layer, and that the colours and
sizes points.js gives each feature are the ones MapLibre's expression for the same style
evaluates to.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pytest
from playwright.sync_api import Page, expect
from tests.e2e.layers import upload_point_grid
from tests.e2e.test_web_app import RUN_MS, open_chat

if TYPE_CHECKING:
    from collections.abc import Iterator

pytestmark = pytest.mark.e2e

expect.set_options(timeout=30_000)

#: Above map.js's MANY_POINTS (20,000), and quick to upload.
COUNT = 25_000
CHAT = "e2e-many-points"

_DRAWN = """() => {
    const layer = window.geomint.map.getLayer('entry-byod-1-points');
    return Boolean(layer && layer.implementation.drawn);
}"""

#: The colour of the map's pixel at [x, y] (CSS pixels), read in the frame just drawn.
_PIXEL = """([x, y]) => new Promise((resolve) => {
    const map = window.geomint.map;
    map.once('render', () => {
        const gl = map.painter.context.gl;
        const ratio = map.getPixelRatio();
        const pixel = new Uint8Array(4);
        gl.readPixels(Math.round(x * ratio), Math.round(gl.drawingBufferHeight - y * ratio),
                      1, 1, gl.RGBA, gl.UNSIGNED_BYTE, pixel);
        resolve([...pixel]);
    });
    map.triggerRepaint();
})"""

#: Where [lon, lat] is in the map, after the camera is put on it at `zoom`: [x, y] in the
#: map's canvas and in the page (CSS pixels).
_LOOK_AT = """([lon, lat, zoom]) => new Promise((resolve) => {
    const map = window.geomint.map;
    map.once('idle', () => {
        const p = map.project([lon, lat]);
        const box = map.getCanvas().getBoundingClientRect();
        resolve([[p.x, p.y], [box.left + p.x, box.top + p.y]]);
    });
    map.jumpTo({center: [lon, lat], zoom});
})"""


#: Lose the map's WebGL context and get it back, as a GPU reset does.
_LOSE_CONTEXT = """() => new Promise((resolve) => {
    const map = window.geomint.map;
    const lose = map.painter.context.gl.getExtension('WEBGL_lose_context');
    map.once('webglcontextlost', () => setTimeout(() => lose.restoreContext(), 50));
    map.once('webglcontextrestored', () => map.once('idle', resolve));
    lose.loseContext();
})"""


def _grid_point(n: int) -> tuple[float, float]:
    """Feature ``n`` of the grid (``tests/e2e/layers.py``), as ``[lon, lat]``."""
    return round(24.80 + n % 400 * 0.0007, 6), round(60.12 + n // 400 * 0.0003, 6)


def _hex(colour: str) -> list[int]:
    return [int(colour[i : i + 2], 16) for i in (1, 3, 5)]


def _near(pixel: list[int], rgb: list[int], tolerance: int = 4) -> bool:
    return all(abs(a - b) <= tolerance for a, b in zip(pixel[:3], rgb, strict=True))


@pytest.fixture(scope="module")
def many_points(server: str) -> Iterator[str]:
    """A chat holding the grid of :data:`COUNT` points as ``byod-1``."""
    assert upload_point_grid(server, CHAT, COUNT, timeout=120) == "byod-1"
    yield CHAT


def test_many_points_are_drawn_by_the_page_and_handled_as_any_layer(
    page: Page, many_points: str
) -> None:
    open_chat(page, f"/chat/{many_points}")
    page.wait_for_function(_DRAWN, timeout=RUN_MS)
    # Drawn without MapLibre's source: no worker tiling at the view that fits the grid.
    assert page.evaluate("() => window.geomint.map.getSource('entry-byod-1')") is None
    assert page.evaluate("() => window.geomint.entryFeatures('byod-1')") == COUNT
    chat = page.request.get(f"/api/chats/{many_points}").json()
    colour = _hex(next(e for e in chat["entries"] if e["entry_id"] == "byod-1")["style"]["color"])

    # At street level each point is its own circle: its centre is the layer's colour, the
    # space between two points is not.
    lon, lat = _grid_point(4010)
    (x, y), (page_x, page_y) = page.evaluate(_LOOK_AT, [lon, lat, 15])
    assert _near(page.evaluate(_PIXEL, [x, y]), colour)
    between = page.evaluate("([lon, lat]) => { const p = window.geomint.map.project([lon, lat]);"
                            " return [p.x, p.y]; }", [lon + 0.00035, lat + 0.00015])  # fmt: skip
    assert not _near(page.evaluate(_PIXEL, between), colour)
    # Its labels come with the zoom that shows them, from a source added then.
    page.wait_for_function(
        "() => window.geomint.map.queryRenderedFeatures({layers: ['entry-byod-1-label']})"
        ".some((f) => f.properties.name === 'point 4010')",
        timeout=RUN_MS,
    )

    # A click on the point opens its popup, and selects its row when the table is open.
    page.mouse.click(page_x, page_y)
    popup = page.locator(".maplibregl-popup .popup")
    expect(popup.locator("strong")).to_have_text("point 4010")
    expect(popup).to_contain_text("n: 4,010")
    page.locator(".maplibregl-popup-close-button").click()
    page.locator("#layers > summary").click()
    page.locator("#layer-list .layer[data-entry-id='byod-1'] .layer-table").click()
    table = page.locator("#attribute-table")
    expect(table.locator("[role='grid']")).to_have_attribute("aria-rowcount", str(COUNT + 1))
    page.mouse.click(page_x, page_y)
    selected = table.locator(".table-body [role='row'][aria-selected='true']")
    expect(selected).to_contain_text("point 4010")
    table.get_by_role("button", name="Close").click()

    # Hidden from the layers panel: the point's pixel is the basemap's; shown, it is back.
    shown = page.locator("#layer-list .layer[data-entry-id='byod-1'] input[type='checkbox']")
    shown.uncheck()
    page.wait_for_function("() => !window.geomint.shown('byod-1')")
    assert not _near(page.evaluate(_PIXEL, [x, y]), colour)
    shown.check()
    page.wait_for_function("() => window.geomint.shown('byod-1')")
    assert _near(page.evaluate(_PIXEL, [x, y]), colour)

    # A switch of basemap keeps the layer (MapLibre's new style leaves out custom layers).
    page.get_by_label("Basemap style").select_option("Dark")
    page.wait_for_function(
        "() => window.geomint.map.getLayer('streets-major')"
        " && window.geomint.map.getPaintProperty('streets-major', 'line-color') === '#3a3f45'"
    )
    assert (
        page.evaluate("() => window.geomint.map.getLayer('entry-byod-1-points').type") == "custom"
    )
    assert _near(page.evaluate(_PIXEL, [x, y]), colour)

    # So does a lost WebGL context, restored: MapLibre rebuilds its style without it.
    page.evaluate(_LOSE_CONTEXT)
    page.wait_for_function(
        "() => window.geomint.map.getLayer('entry-byod-1-points')", timeout=RUN_MS
    )
    assert _near(page.evaluate(_PIXEL, [x, y]), colour)


def test_map_code_over_many_points_styles_maplibres_layer_of_them(
    page: Page, many_points: str
) -> None:
    open_chat(page, f"/chat/{many_points}")
    page.wait_for_function(_DRAWN, timeout=RUN_MS)
    change = {
        "type": "map_change", "change_id": "m1", "intent": "pink", "description": "pink",
        "code": "", "usage": {},
        "diff": {
            "removed": {"sources": [], "layers": []}, "added": {"sources": {}, "layers": []},
            "updated": {"layers": [{"id": "byod-1-circle", "paint": {"circle-color": "#ff00ff"}}]},
            "camera": None, "animations": [],
        },
    }  # fmt: skip
    page.evaluate("(part) => window.geomint.mapCode.add(part)", change)
    # The entry is now MapLibre's source and layers, which map code styles as it says.
    page.wait_for_function(
        "() => window.geomint.map.getPaintProperty('entry-byod-1-circle', 'circle-color')"
        " === '#ff00ff'"
    )
    assert page.evaluate("() => window.geomint.map.getLayer('entry-byod-1-points')") is None
    page.wait_for_function(
        "() => window.geomint.map.isSourceLoaded('entry-byod-1') && window.geomint.map"
        ".queryRenderedFeatures({layers: ['entry-byod-1-circle']}).length > 0",
        timeout=RUN_MS,
    )
    assert page.evaluate("() => window.geomint.entryFeatures('byod-1')") == COUNT


#: A style with every kind of class, and features whose values try each rule: numbers that
#: read as a class's text, text that reads as a number, none, null, true, nested values.
_STYLES: list[dict[str, Any]] = [
    {
        "color": "#495057",
        "color_by": {"property": "kind", "kind": "categorical", "classes": [
            {"value": "cafe", "color": "#e03131", "count": 3},
            {"value": 2, "color": "#1971c2", "count": 2},
            {"value": "true", "color": "#2f9e44", "count": 1},
            {"other": True, "color": "#868e96", "count": 4},
        ]},
        "size_by": {"property": "size", "low": 10, "high": 50, "smallest": 3, "largest": 12},
    },
    {
        "color": "teal",
        "color_by": {"property": "kind", "kind": "graduated", "classes": [
            {"low": 0, "high": 10, "color": "#fff5eb", "count": 3},
            {"low": 10, "high": 100, "color": "#fd8d3c", "count": 3},
            {"low": 100, "high": 1000, "color": "#7f2704", "count": 3},
            {"other": True, "color": "rebeccapurple", "count": 1},
        ]},
        "size_by": {"property": "size", "low": 5, "high": 5, "smallest": 4, "largest": 9},
    },
    {"color": "#f08c0080", "color_by": None, "size_by": None},
    {
        "color": "#495057",
        "color_by": {"property": "constructor", "kind": "categorical", "classes": [
            {"value": "", "color": "#e03131", "count": 1},
            {"other": True, "color": "#1971c2", "count": 1},
        ]},
        "size_by": {"property": "toString", "low": 0, "high": 10, "smallest": 2, "largest": 8},
    },
]  # fmt: skip
#: A feature without the property at all.
MISSING = "(missing)"
_VALUES = [
    *["cafe", 2, "2", True, False, None, -5, 0, 9.99, 10, 99, 100, 5000, "12", "", " ", "x"],
    *[{"a": 1}, [1, 2], [5], MISSING],
]

#: For each style and property value: what MapLibre evaluates colourOf's and the circle
#: radius's expressions to (read from a circle layer of a source of its own), and what
#: points.js's tables give.
_BOTH = """async ([styles, values, missing]) => {
    const { paintOf, colourTable, sizeTable } = await import('/static/app/styles.js');
    const map = window.geomint.map;
    const empty = {type: 'FeatureCollection', features: []};
    map.addSource('parity', {type: 'geojson', data: empty});
    const results = [];
    for (const [i, style] of styles.entries()) {
        const id = `parity-${i}`;
        const paint = paintOf(style);
        map.addLayer({id, type: 'circle', source: 'parity', paint: {
            'circle-color': paint.circle['circle-color'],
            'circle-radius': paint.circle['circle-radius']}});
        await new Promise((resolve) => { map.once('idle', resolve); map.triggerRepaint(); });
        const layer = map.style._layers[id];
        const colours = colourTable(style);
        const sizes = sizeTable(style);
        for (const value of values) {
            const properties = value === missing ? {} : {kind: value, size: value,
                constructor: value, toString: value};
            const feature = {type: 1, properties, geometry: []};
            const c = layer.paint.get('circle-color').evaluate(feature, {});
            const maplibre = [c.r, c.g, c.b, c.a].map((v, k) => Math.round(
                (k < 3 && c.a > 0 ? v / c.a : v) * 255));
            const radius = layer.paint.get('circle-radius').evaluate(feature, {});
            results.push({style: i, value, maplibre, page: [...colours(properties)],
                          radius, size: sizes ? sizes(properties) : null});
        }
    }
    return results;
}"""


def test_points_are_coloured_and_sized_as_maplibres_expression_for_the_style_says(
    page: Page,
) -> None:
    open_chat(page)
    results = page.evaluate(_BOTH, [_STYLES, _VALUES, MISSING])
    assert len(results) == len(_STYLES) * len(_VALUES)
    for result in results:
        assert all(
            abs(a - b) <= 1 for a, b in zip(result["maplibre"], result["page"], strict=True)
        ), result
        if result["size"] is not None:
            assert result["size"] == pytest.approx(result["radius"], abs=1e-6), result
