"""The web app on a phone (390x844) and an upright tablet (820x1180).

At 900 px or less the map sits above the chat and the two share the whole height; the chat
list is a drawer that the menu button opens (``app/drawer.js``). Sizes are read from the
page's own boxes, so a layout that leaves a gap, overflows the screen or hides the
composer fails here.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

import pytest
from playwright.sync_api import Page, expect
from tests.e2e.test_web_app import ask, open_chat, wait_sources

if TYPE_CHECKING:
    from tests.e2e.conftest import Shot

pytestmark = pytest.mark.e2e

PHONE = {"width": 390, "height": 844}
TABLET = {"width": 820, "height": 1180}

_BOX = """(selector) => {
    const r = document.querySelector(selector).getBoundingClientRect();
    return {top: r.top, bottom: r.bottom, left: r.left, right: r.right};
}"""
_FOCUS_IN = "(selector) => !!document.activeElement?.closest(selector)"
#: The screen point (page pixels) of the places entry's feature nearest the map's right edge.
_RIGHTMOST_PLACE = """() => {
    const map = window.geomint.map;
    const box = map.getContainer().getBoundingClientRect();
    const found = map.queryRenderedFeatures({layers: ['entry-places-1-circle']})
        .map((f) => map.project(f.geometry.coordinates))
        .filter((p) => p.x > 10 && p.y > 10 && p.x < box.width - 50 && p.y < box.height - 10);
    found.sort((a, b) => b.x - a.x);
    return found.length ? {x: box.left + found[0].x, y: box.top + found[0].y} : null;
}"""


def box(page: Page, selector: str) -> dict[str, float]:
    found = page.evaluate(_BOX, selector)
    assert isinstance(found, dict)
    return {key: float(value) for key, value in found.items()}


def focus_in(page: Page, selector: str) -> bool:
    return bool(page.evaluate(_FOCUS_IN, selector))


def idle(page: Page) -> None:
    page.wait_for_function("() => window.geomint.map.loaded()")


@pytest.mark.parametrize("size", [PHONE, TABLET], ids=["phone", "tablet"])
def test_the_map_and_the_chat_share_the_whole_height(
    page: Page, shot: Shot, size: dict[str, int]
) -> None:
    page.set_viewport_size(size)  # type: ignore[arg-type]
    open_chat(page)
    wait_sources(page, "entry-places-1")

    header, layout = box(page, ".top"), box(page, ".layout")
    chat, map_ = box(page, "#chat-panel"), box(page, "#map")
    composer = box(page, "#composer")
    assert layout["top"] == pytest.approx(header["bottom"], abs=1)
    assert layout["bottom"] == pytest.approx(size["height"], abs=1), "the page leaves a gap"
    assert map_["top"] == pytest.approx(layout["top"], abs=1)
    assert chat["top"] == pytest.approx(map_["bottom"], abs=1), "map above, chat below"
    assert chat["bottom"] == pytest.approx(size["height"], abs=1)
    for part in (chat, map_):
        assert part["left"] == pytest.approx(0, abs=1)
        assert part["right"] == pytest.approx(size["width"], abs=1)
    assert map_["bottom"] - map_["top"] >= 0.3 * size["height"], "the map is too small to read"
    assert composer["bottom"] <= size["height"] + 0.5, "the question box is off the screen"
    assert page.evaluate("() => document.documentElement.scrollWidth") <= size["width"]
    expect(page.locator("#sidebar")).not_to_be_visible()
    expect(page.locator("#menu-button")).to_be_visible()
    expect(page.locator("#prompt")).to_be_in_viewport()
    idle(page)
    shot(page, f"{'phone' if size is PHONE else 'tablet'}")


def test_the_chat_list_is_a_drawer_the_keyboard_opens_and_closes(page: Page, shot: Shot) -> None:
    page.set_viewport_size(PHONE)  # type: ignore[arg-type]
    open_chat(page)
    menu = page.locator("#menu-button")
    drawer = page.locator("#sidebar")
    expect(menu).to_have_attribute("aria-expanded", "false")

    menu.focus()
    page.keyboard.press("Enter")
    expect(drawer).to_be_visible()
    expect(menu).to_have_attribute("aria-expanded", "true")
    assert focus_in(page, "#sidebar"), "focus did not move into the drawer"
    # The rest of the page is inert, and Tab goes round the drawer's own controls.
    for key in ["Tab"] * 8 + ["Shift+Tab"] * 8:
        page.keyboard.press(key)
        assert focus_in(page, "#sidebar"), page.evaluate("() => document.activeElement.outerHTML")
    expect(drawer).to_be_in_viewport(ratio=1)  # slid fully in
    idle(page)
    shot(page, "phone-drawer")

    page.keyboard.press("Escape")
    expect(drawer).not_to_be_visible()
    expect(menu).to_be_focused()
    expect(menu).to_have_attribute("aria-expanded", "false")


def test_a_click_outside_the_drawer_or_a_chosen_chat_closes_it(page: Page) -> None:
    page.set_viewport_size(PHONE)  # type: ignore[arg-type]
    first = open_chat(page)
    ask(page, "What can you do?")  # a chat is listed once it has a message
    menu, drawer = page.locator("#menu-button"), page.locator("#sidebar")

    menu.click()
    expect(drawer).to_be_visible()
    page.mouse.click(PHONE["width"] - 10, PHONE["height"] // 2)  # on the dimmed page
    expect(drawer).not_to_be_visible()
    expect(menu).to_be_focused()

    menu.click()
    page.locator("#drawer-close").click()
    expect(drawer).not_to_be_visible()

    menu.click()
    page.locator("#new-chat").click()
    expect(drawer).not_to_be_visible()
    page.wait_for_function("(first) => window.geomint.chatId !== first", arg=first)
    expect(page).not_to_have_url(re.compile(rf"/chat/{first}$"))
    # The list holds both chats; picking the first one brings it back.
    menu.click()
    page.locator(f"#sidebar .chat-link[href='/chat/{first}']").click()
    expect(drawer).not_to_be_visible()
    page.wait_for_function("(first) => window.geomint.chatId === first", arg=first)


def test_a_map_popup_stays_inside_a_phone_screen(page: Page, shot: Shot) -> None:
    page.set_viewport_size(PHONE)  # type: ignore[arg-type]
    open_chat(page)
    wait_sources(page, "entry-places-1")
    idle(page)

    point = page.evaluate(_RIGHTMOST_PLACE)
    assert point, "no place is drawn on the map"
    page.mouse.click(point["x"], point["y"])
    popup = page.locator(".maplibregl-popup")
    expect(popup).to_be_visible()
    found, map_ = popup.bounding_box(), box(page, "#map")
    assert found is not None
    # Inside the map (which clips it), and so inside the screen.
    assert found["x"] >= map_["left"] and found["y"] >= map_["top"], (found, map_)
    assert found["x"] + found["width"] <= map_["right"], (found, map_)
    assert found["y"] + found["height"] <= map_["bottom"], (found, map_)
    assert map_["right"] <= PHONE["width"] and map_["bottom"] <= PHONE["height"]
    shot(page, "phone-popup")


def test_a_wide_screen_keeps_the_chat_list_as_a_column(page: Page) -> None:
    open_chat(page)

    expect(page.locator("#menu-button")).to_be_hidden()
    expect(page.locator("#drawer-close")).to_be_hidden()
    expect(page.locator("#sidebar")).to_be_visible()
    expect(page.locator("#new-chat")).to_be_in_viewport()
