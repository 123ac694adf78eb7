"""Open data on the page: figures read from published sources show their period on the
card and their source, licence and period in its list; a table read from a source is
charted, and reloading shows the same."""

from __future__ import annotations

import pytest
from playwright.sync_api import Page, expect
from tests.e2e.conftest import Shot
from tests.e2e.test_web_app import ASSISTANT, ask, open_chat, wait_ready

pytestmark = pytest.mark.e2e


def test_cards_of_sourced_figures_say_their_period_and_licence(page: Page, shot: Shot) -> None:
    chat_id = open_chat(page)
    answer = ask(page, "Population of Helsinki against Espoo")
    cards = answer.locator(".figure-card")
    expect(cards).to_have_count(2)
    expect(cards.first.locator(".figure-period")).to_have_text("period: not stated")
    cards.first.locator(".sources-toggle").click()
    source = cards.first.locator(".sources li")
    expect(source).to_contain_text("GeoNames")
    expect(source).to_contain_text("licence CC-BY-4.0")
    expect(source).to_contain_text("period not stated")

    nordic = ask(page, "Population of the Nordic countries in the latest year, as a bar chart")
    nordic.locator(".chart canvas").scroll_into_view_if_needed()  # charts draw when near
    expect(nordic.locator(".chart canvas[data-rendered='true']")).to_have_count(1)
    periods = nordic.locator(".figure-card .figure-period")
    expect(periods).to_have_count(5)
    expect(periods).to_have_text(["period: 2020"] * 5)
    shot(page, "sources-nordic-population")

    page.reload()
    assert wait_ready(page) == chat_id
    expect(page.locator(f"{ASSISTANT} .figure-card .figure-period")).to_have_count(7)
