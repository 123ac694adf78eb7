"""Accessibility of the web page: axe-core on its main views, and the keyboard alone.

axe-core is vendored in ``tests/e2e/vendor/`` (``scripts/build_test_assets.py``), so the test
needs no network; it is injected into the page by Playwright. A view passes when axe finds no
serious or critical violation. The keyboard test tabs through the whole page and checks that
every visible control is reached and shows where the focus is.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
from playwright.sync_api import Page, expect
from tests.e2e.test_web_app import CHART, UNKNOWN, ask, open_chat, wait_sources
from tests.e2e.test_web_phone import PHONE

if TYPE_CHECKING:
    from tests.e2e.conftest import Shot

pytestmark = pytest.mark.e2e

VENDOR = Path(__file__).parent / "vendor"
AXE = VENDOR / "axe-core" / "axe.min.js"
SERIOUS = frozenset({"serious", "critical"})

_RUN_AXE = """async () => {
    const found = await window.axe.run(document, {resultTypes: ['violations']});
    return found.violations.map((v) => ({
        id: v.id, impact: v.impact, help: v.help,
        nodes: v.nodes.slice(0, 5).map((n) => n.target.join(' ') + ': ' + n.failureSummary),
    }));
}"""
#: Every control a person could reach: visible, enabled, not inert, not removed from Tab.
_CONTROLS = """() => [...document.querySelectorAll(
        'a[href], button, textarea, input, select, summary, [tabindex]')]
    .filter((e) => e.tabIndex >= 0 && !e.disabled && !e.closest('[inert]')
        && e.getClientRects().length && getComputedStyle(e).visibility !== 'hidden'
        && !e.closest('details:not([open]) > :not(summary)'))
    .map((e) => e.dataset.a11yKey || (e.dataset.a11yKey = String(Math.random())))"""
#: The focused control's key and whether its focus shows (an outline or a ring).
_FOCUSED = """() => {
    const e = document.activeElement;
    if (!e || e === document.body) return null;
    const s = getComputedStyle(e);
    const ring = (s.outlineStyle !== 'none' && parseFloat(s.outlineWidth) > 0)
        || (s.boxShadow && s.boxShadow !== 'none');
    return {key: e.dataset.a11yKey || null, ring, html: e.outerHTML.slice(0, 120)};
}"""


def violations(page: Page) -> list[dict[str, Any]]:
    """axe-core's serious and critical violations on the page as it is now."""
    if not page.evaluate("() => !!window.axe"):
        # Evaluated, not added as a <script>: the page's Content-Security-Policy would refuse it.
        page.evaluate(f"() => {{ {AXE.read_text(encoding='utf-8')}\n }}")
    found = page.evaluate(_RUN_AXE)
    assert isinstance(found, list)
    return [v for v in found if v["impact"] in SERIOUS]


def assert_accessible(page: Page) -> None:
    found = violations(page)
    assert not found, json.dumps(found, indent=1, ensure_ascii=False)


def test_the_vendored_axe_core_is_the_pinned_one() -> None:
    manifest = json.loads((VENDOR / "VENDOR.json").read_text(encoding="utf-8"))
    (axe,) = manifest["packages"]
    assert axe["name"] == "axe-core" and axe["licence"] == "MPL-2.0"
    for path, digest in axe["files"].items():
        assert hashlib.sha256((VENDOR / path).read_bytes()).hexdigest() == digest, path
    assert (VENDOR / axe["licence_file"]).is_file()


def test_an_empty_chat_has_no_serious_violations(page: Page) -> None:
    open_chat(page)
    wait_sources(page, "entry-places-1")
    assert_accessible(page)


def test_a_chat_with_an_answer_and_figures_has_no_serious_violations(page: Page) -> None:
    open_chat(page)
    ask(page, UNKNOWN)
    ask(page, CHART)
    expect(page.locator(".figure-card").first).to_be_visible()
    assert_accessible(page)


def test_the_analysis_dialog_has_no_serious_violations(page: Page) -> None:
    open_chat(page)
    ask(page, CHART)
    page.locator(".figure-card .show-code").first.click()
    expect(page.locator("dialog#analysis[open]")).to_be_visible()
    assert_accessible(page)


def test_the_phone_layout_and_its_drawer_have_no_serious_violations(page: Page) -> None:
    page.set_viewport_size(PHONE)  # type: ignore[arg-type]
    open_chat(page)
    assert_accessible(page)
    page.locator("#menu-button").click()
    expect(page.locator("#sidebar")).to_be_visible()
    assert_accessible(page)


def test_every_control_is_reached_by_tab_and_shows_its_focus(page: Page, shot: Shot) -> None:
    open_chat(page)
    ask(page, CHART)
    page.locator("#layers > summary").click()  # open, so that its export menus count too
    controls = page.evaluate(_CONTROLS)
    assert isinstance(controls, list) and len(controls) > 10, controls

    page.locator("body").focus()
    page.evaluate("() => document.activeElement.blur()")
    reached: set[str] = set()
    unringed: list[str] = []
    for _ in range(len(controls) * 2 + 10):
        page.keyboard.press("Tab")
        focused = page.evaluate(_FOCUSED)
        if focused is None:
            continue
        if focused["key"] in reached:
            break  # round the page once
        if focused["key"]:
            reached.add(focused["key"])
        if not focused["ring"]:
            unringed.append(focused["html"])
    missed = page.evaluate(
        """(reached) => [...document.querySelectorAll('[data-a11y-key]')]
            .filter((e) => !reached.includes(e.dataset.a11yKey))
            .map((e) => e.outerHTML.slice(0, 120))""",
        sorted(reached),
    )
    assert not missed, "not reached by Tab:\n" + "\n".join(missed)
    assert not unringed, "focus not shown on:\n" + "\n".join(unringed)


def test_the_keyboard_opens_a_figure_s_analysis_and_escape_closes_it(page: Page) -> None:
    open_chat(page)
    ask(page, CHART)
    button = page.locator(".figure-card .show-code").first
    button.focus()
    page.keyboard.press("Enter")
    dialog = page.locator("dialog#analysis")
    expect(dialog).to_have_attribute("open", "")
    page.keyboard.press("Escape")
    expect(dialog).not_to_have_attribute("open", "")
    expect(button).to_be_focused()
