"""A raster on the page: a GeoTIFF added to the chat is drawn as a MapLibre image layer
(the server's picture of it, placed by its corners), listed in the layers panel with its
colour ramp, the values at the ramp's ends and a GeoTIFF export, hidden and faded like
any layer, and drawn the same after a reload."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np
import pytest
from playwright.sync_api import Page, expect
from rasterio.io import MemoryFile
from rasterio.transform import from_origin
from tests.e2e.test_web_app import RUN_MS, open_chat, wait_sources

if TYPE_CHECKING:
    from tests.e2e.conftest import Shot

pytestmark = pytest.mark.e2e

ADDED = ".msg.upload[data-state='added']"
ROW = "#layer-list .layer[data-entry-id='rasters-1']"
#: The raster entry as MapLibre holds it: its source, its layer, and whether the picture
#: has loaded.
_DRAWN = """() => {
    const map = window.geomint.map;
    const style = map.getStyle();
    const source = style.sources['entry-rasters-1'];
    const layer = style.layers.find((l) => l.id === 'entry-rasters-1-raster');
    return {
        source: source ? {type: source.type, url: source.url, coordinates: source.coordinates}
                       : null,
        layer: layer ? {type: layer.type, source: layer.source,
                        opacity: map.getPaintProperty(layer.id, 'raster-opacity')} : null,
        loaded: Boolean(map.getSource('entry-rasters-1')?.loaded()),
    };
}"""


def _density_geotiff() -> bytes:
    """8 x 6 km of central Helsinki in 100 m cells (EPSG:3067): values falling away from
    the Esplanadi, the south-east corner (open sea, in this picture) with no data."""
    rows, cols = 60, 80
    y, x = np.mgrid[0:rows, 0:cols]
    values = (1000 * np.exp(-((x - 30) ** 2 + (y - 35) ** 2) / 300)).astype("float32")
    values[(x > 55) & (y > 40)] = -1
    with MemoryFile() as memory:
        with memory.open(
            driver="GTiff", width=cols, height=rows, count=1, dtype="float32",
            crs="EPSG:3067", transform=from_origin(383_000, 6_676_000, 100, 100), nodata=-1,
        ) as dataset:  # fmt: skip
            dataset.write(values[np.newaxis])
        return bytes(memory.read())


def _add(page: Page) -> None:
    page.locator("#add-data-input").set_input_files(
        [{"name": "density.tif", "mimeType": "image/tiff", "buffer": _density_geotiff()}]
    )
    expect(page.locator(ADDED)).to_have_count(1, timeout=RUN_MS)


def _wait_drawn(page: Page) -> dict[str, Any]:
    page.wait_for_function(f"() => ({_DRAWN})().loaded", timeout=RUN_MS)
    drawn: dict[str, Any] = page.evaluate(_DRAWN)
    return drawn


def _open_layers(page: Page) -> None:
    if page.locator("#layers").get_attribute("open") is None:
        page.locator("#layers > summary").click()
    expect(page.locator("#layer-list")).to_be_visible()


def _check_listed(page: Page) -> None:
    row = page.locator(ROW)
    expect(row).to_be_visible()
    expect(row).to_have_attribute("data-raster", "true")
    expect(row.locator(".layer-label")).to_have_text("density")
    expect(row.locator(".layer-meta")).to_have_text("rasters · 80 × 60 cells · EPSG:3067")
    expect(row.locator(".legend-ramp")).to_be_visible()
    # The ramp's ends, once the server has said: the values at the 2nd and 98th
    # percentiles of what is drawn (the field falls from 1,000 to nearly 0).
    expect(row.locator(".legend-low")).not_to_have_text("low", timeout=RUN_MS)
    low, high = (
        float(row.locator(f".legend-{end}").inner_text().replace(",", ""))
        for end in ("low", "high")
    )
    assert 0 <= low < 1 and 500 < high <= 1000
    # A GeoTIFF says nothing of what its values are: the legend says cell values.
    expect(row.locator(".legend-title")).to_have_text("cell values")
    # No attribute table for cells; the export is the GeoTIFF.
    expect(row.locator("button[data-control='table']")).to_have_count(0)
    formats = row.locator("a[href*='/export?format=']")
    expect(formats).to_have_count(1)
    assert "format=geotiff" in (formats.first.get_attribute("href") or "")


def test_a_geotiff_is_drawn_as_an_image_layer_and_listed_as_a_layer(page: Page, shot: Shot) -> None:
    chat_id = open_chat(page)
    wait_sources(page, "entry-places-1")
    _add(page)
    expect(page.locator(ADDED)).to_contain_text("density.tif: a raster added as rasters-1")
    drawn = _wait_drawn(page)
    assert drawn["source"]["type"] == "image"
    assert drawn["source"]["url"].endswith(
        f"/api/chats/{chat_id}/entries/rasters-1/raster.png?version=1"
    )
    (west, north), _, (east, south), _ = drawn["source"]["coordinates"]
    assert 24.8 < west < east < 25.1 and 60.1 < south < north < 60.25
    assert drawn["layer"] == {"type": "raster", "source": "entry-rasters-1", "opacity": 1}
    _open_layers(page)
    _check_listed(page)

    # Hidden and faded from the panel, as every layer is.
    row = page.locator(ROW)
    row.locator("input.layer-visible").uncheck()
    page.wait_for_function(
        "() => window.geomint.map.getPaintProperty('entry-rasters-1-raster', 'raster-opacity')"
        " === 0"
    )
    row.locator("input.layer-visible").check()
    # One change (the layers tests step the slider by keyboard): the places and parks show
    # through.
    row.locator("input.layer-opacity").fill("0.7")
    page.wait_for_function(
        "() => window.geomint.map.getPaintProperty('entry-rasters-1-raster', 'raster-opacity')"
        " < 0.75"
    )
    page.wait_for_function(
        """async (chat) => {
            const held = await (await fetch(`/api/chats/${chat}`)).json();
            const raster = held.entries.find((e) => e.entry_id === 'rasters-1');
            return Math.abs(raster.style.opacity - 0.7) < 0.01;
        }""",
        arg=chat_id,
        timeout=RUN_MS,
    )
    shot(page, "raster-demo")

    # The chat read back draws the same picture in the same place, at the kept opacity.
    page.reload()
    open_chat(page, f"/chat/{chat_id}")
    again = _wait_drawn(page)
    assert again["source"] == drawn["source"]
    assert again["layer"]["opacity"] == pytest.approx(0.7)
    _open_layers(page)
    _check_listed(page)
