"""The map's own controls in a real Chromium: the basemap style and label language (kept
in the chat, so a reload shows the same map) and the person's location, read from the
browser's Geolocation API when they share it."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

import pytest
from playwright.sync_api import BrowserContext, Page, expect
from tests.e2e.test_web_app import (
    ASSISTANT,
    RUN_MS,
    ask,
    busy,
    entry_sources,
    open_chat,
    wait_ready,
    wait_sources,
)

if TYPE_CHECKING:
    from tests.e2e.conftest import BrowserLog, Shot

pytestmark = pytest.mark.e2e

_PAINT = """([layer, property]) => window.geomint.map.getPaintProperty(layer, property)"""
_TEXT_FIELD = """() => JSON.stringify(
  window.geomint.map.getLayoutProperty('entry-places-1-label', 'text-field'))"""
#: The label the page gives the central station, a place with a Swedish name.
_STATION_LABEL = """() => {
  const features = window.geomint.map.querySourceFeatures('entry-places-1');
  const station = features.find((f) => f.properties['name:sv'] === 'Helsingfors järnvägsstation');
  return station ? window.geomint.settings.liveMap.labelName(station.properties) : null;
}"""
HELSINKI_STATION = {"longitude": 24.9414, "latitude": 60.1710, "accuracy": 30}


def basemap(page: Page) -> str | None:
    return page.locator("#map").get_attribute("data-basemap")


def test_a_dark_basemap_survives_a_reload_and_the_switcher_changes_it_back(
    page: Page, shot: Shot
) -> None:
    chat_id = open_chat(page)
    wait_sources(page, "entry-places-1", "entry-geometries-1")
    expect(page.locator("#map")).to_have_attribute("data-basemap", "light")

    ask(page, "Switch the map to dark mode")
    expect(page.locator("#map")).to_have_attribute("data-basemap", "dark")
    assert page.evaluate(_PAINT, ["background", "background-color"]) == "#0f1a24"
    assert page.evaluate(_PAINT, ["streets-major", "line-color"]) == "#3a3f45"
    sources = entry_sources(page)
    assert "entry-places-1" in sources  # the entries stay over the new basemap
    # So do the city's land, water and district names, in the dark style's colours.
    assert page.evaluate(_PAINT, ["city-water", "fill-color"]) == "#0f1a24"
    assert page.evaluate(_PAINT, ["city-land", "fill-color"]) == "#1f2326"
    assert page.evaluate(_PAINT, ["district-names", "text-halo-color"]) == "#15181b"
    shot(page, "dark-basemap")

    page.reload()
    assert wait_ready(page) == chat_id
    expect(page.locator("#map")).to_have_attribute("data-basemap", "dark")
    expect(page.get_by_label("Basemap style")).to_have_value("dark")
    assert page.evaluate(_PAINT, ["background", "background-color"]) == "#0f1a24"
    assert entry_sources(page) == sources

    # The person's own switch is kept in the chat as well.
    with page.expect_response(re.compile(r"/api/chats/[^/]+/map$")) as kept:
        page.get_by_label("Basemap style").select_option("light")
    assert kept.value.ok
    expect(page.locator("#map")).to_have_attribute("data-basemap", "light")
    page.reload()
    wait_ready(page)
    expect(page.locator("#map")).to_have_attribute("data-basemap", "light")
    assert page.evaluate(_PAINT, ["background", "background-color"]) == "#dfe8ee"
    assert page.evaluate(_PAINT, ["city-land", "fill-color"]) == "#f7f5f0"


def test_swedish_labels_name_the_station_in_swedish(page: Page) -> None:
    open_chat(page)
    wait_sources(page, "entry-places-1")
    page.wait_for_function("() => window.geomint.map.getLayer('entry-places-1-label')")
    # querySourceFeatures reads the tiles loaded so far; points are cut into tiles with a
    # 4-pixel margin, so the station is in one tile only: wait until that one is loaded.
    page.wait_for_function(f"() => ({_STATION_LABEL})() !== null")
    assert page.evaluate(_STATION_LABEL) == "Helsinki"  # its `name`, as signed

    ask(page, "Show the place names in Swedish")
    expect(page.locator("#map")).to_have_attribute("data-language", "sv")
    expect(page.get_by_label("Label language")).to_have_value("sv")
    assert "name:sv" in page.evaluate(_TEXT_FIELD)
    assert page.evaluate(_STATION_LABEL) == "Helsingfors järnvägsstation"

    page.reload()
    wait_ready(page)
    expect(page.locator("#map")).to_have_attribute("data-language", "sv")
    assert "name:sv" in page.evaluate(_TEXT_FIELD)


def test_a_shared_location_lands_as_a_place_and_finds_cafes_near_it(
    page: Page, context: BrowserContext, server: str
) -> None:
    context.grant_permissions(["geolocation"], origin=server)
    context.set_geolocation(HELSINKI_STATION)
    open_chat(page)
    wait_sources(page, "entry-places-1", "entry-geometries-1")

    ask(page, "Cafés near me", wait=False)
    approval = page.locator(".approval[data-approval-id]")
    expect(approval).to_be_visible(timeout=RUN_MS)
    expect(approval).to_contain_text("reads where the person is from their device")
    approval.get_by_role("button", name="Share my location").click()

    expect(approval).to_have_attribute("data-state", "given")
    expect(busy(page)).to_have_attribute("data-busy", "false", timeout=RUN_MS)
    wait_sources(page, "entry-places-2", "entry-places-3")
    location = page.evaluate(
        "() => window.geomint.map.getSource('entry-places-2').serialize().data.features[0]"
    )
    assert location["geometry"]["coordinates"] == [24.9414, 60.171]
    assert location["properties"]["accuracy_m"] == 30
    assert page.evaluate("() => window.geomint.entryFeatures('places-3')") > 0
    tools = page.locator(".tool[data-tool='get_current_location']")
    expect(tools).to_have_attribute("data-state", "done")


def test_a_location_the_browser_will_not_share_is_a_refusal_the_model_reads(
    page: Page, browser_log: BrowserLog
) -> None:
    open_chat(page)  # no geolocation permission granted: the browser says no
    wait_sources(page, "entry-places-1")
    before = entry_sources(page)

    ask(page, "Cafés near me", wait=False)
    approval = page.locator(".approval[data-approval-id]")
    expect(approval).to_be_visible(timeout=RUN_MS)
    approval.get_by_role("button", name="Share my location").click()

    expect(approval).to_have_attribute("data-state", "refused")
    expect(approval).to_contain_text("permission denied")
    expect(busy(page)).to_have_attribute("data-busy", "false", timeout=RUN_MS)
    expect(page.locator(".tool[data-tool='get_current_location']")).to_have_attribute(
        "data-state", "error"
    )
    expect(page.locator(ASSISTANT).last).to_contain_text("permission denied")
    assert entry_sources(page) == before
