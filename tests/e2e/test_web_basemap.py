"""The basemap at the opening view (zoom 13 over central Helsinki) reads at first sight.

It names the districts, and draws OpenStreetMap's coast (land and
water from ``static/basemap/helsinki.geojson``) where the world tiles have one straight line.
What is drawn is read from the map (``queryRenderedFeatures``), not guessed from pixels.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest
from playwright.sync_api import Page
from tests.e2e.test_web_app import open_chat

if TYPE_CHECKING:
    from tests.e2e.conftest import Shot

pytestmark = pytest.mark.e2e

#: The page's opening camera (app/map.js), and two points either side of the coast.
OPENING = {"center": [24.945, 60.17], "zoom": 13}
ON_LAND = [24.9414, 60.1710]  # the central railway station
AT_SEA = [24.9600, 60.1600]  # the South Harbour, off the market square

_AT_OPENING_VIEW = """async (view) => {
    const map = window.geomint.map;
    map.jumpTo(view);
    await new Promise((resolve) => map.once('idle', resolve));
}"""
_LABELS = """(layer) => [...new Set(window.geomint.map
    .queryRenderedFeatures({layers: [layer]}).map((f) => f.properties.name))].sort()"""
_LAYERS_AT = """(lngLat) => window.geomint.map
    .queryRenderedFeatures(window.geomint.map.project(lngLat)).map((f) => f.layer.id)"""


def at_opening_view(page: Page) -> None:
    open_chat(page)
    page.evaluate(_AT_OPENING_VIEW, OPENING)


def labels(page: Page, layer: str) -> list[str]:
    found = page.evaluate(_LABELS, layer)
    assert isinstance(found, list)
    return [str(name) for name in found]


def test_the_opening_view_names_the_districts(page: Page, shot: Shot) -> None:
    at_opening_view(page)

    districts = labels(page, "district-names")
    assert {"Kluuvi", "Kaartinkaupunki"} <= set(districts), districts
    # Without clutter: a handful of names, and no street named yet.
    assert len(districts) <= 8, districts
    assert labels(page, "street-names") == []
    shot(page, "opening-view")


def test_the_coast_is_drawn_from_openstreetmap(page: Page) -> None:
    at_opening_view(page)

    assert "city-land" in page.evaluate(_LAYERS_AT, ON_LAND)
    at_sea = page.evaluate(_LAYERS_AT, AT_SEA)
    assert "city-land" not in at_sea and "city-water" in at_sea, at_sea
