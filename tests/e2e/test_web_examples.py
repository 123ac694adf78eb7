"""The example questions as a person uses them: every one the demo model answers is
offered, before and after the first question, and a click asks it."""

from __future__ import annotations

import pytest
from playwright.sync_api import Page, expect
from tests.e2e.test_web_app import ASSISTANT, RUN_MS, USER, busy, open_chat

from geomint.models.demo import DEMO_PROMPTS

pytestmark = pytest.mark.e2e

EXAMPLES = "#examples"


def offered(page: Page) -> list[str]:
    return [" ".join(t.split()) for t in page.locator(f"{EXAMPLES} li button").all_inner_texts()]


def test_every_example_is_offered_and_still_offered_after_a_question(page: Page) -> None:
    open_chat(page)
    every = [prompt.text for prompt in DEMO_PROMPTS]
    expect(page.locator(f"{EXAMPLES}[open]")).to_be_visible()  # a new chat shows them
    assert offered(page) == every

    bar_chart = "Bar chart of these places by category"
    page.locator(EXAMPLES).get_by_role("button", name=bar_chart).click()
    expect(page.locator(USER)).to_have_text(["Bar chart of these places by category"])
    expect(busy(page)).to_have_attribute("data-busy", "false", timeout=RUN_MS)
    expect(page.locator(f"{ASSISTANT} .chart canvas[data-rendered='true']")).to_have_count(1)

    # Folded once there is a question, but still there with every example.
    summary = page.locator(f"{EXAMPLES} > summary")
    expect(summary).to_be_visible()
    expect(page.locator(f"{EXAMPLES}[open]")).to_have_count(0)
    summary.click()
    assert offered(page) == every
    page.locator(EXAMPLES).get_by_role("button", name="What can you do?").click()
    expect(page.locator(USER)).to_have_count(2)
    expect(busy(page)).to_have_attribute("data-busy", "false", timeout=RUN_MS)
    expect(page.locator(".tool[data-tool='help']")).to_have_attribute("data-state", "done")
