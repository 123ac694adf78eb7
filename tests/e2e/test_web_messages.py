"""What the page says when something goes wrong, in words a person reads: a message too
long to send, a server that stopped and came back, an approval whose run has stopped, and
tool rows named for what they did (the tool's own name on hover)."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
from playwright.sync_api import Page, expect
from tests.e2e.test_web_app import (
    ASSISTANT,
    CHART,
    RUN_MS,
    UNION,
    USER,
    answer_text,
    ask,
    busy,
    open_chat,
    wait_ready,
    wait_sources,
)
from tests.e2e.web_server import RunningServer, running_server

if TYPE_CHECKING:
    from tests.e2e.conftest import BrowserLog

pytestmark = pytest.mark.e2e


def test_a_message_too_long_says_the_limit_and_stays_in_the_box(
    page: Page, browser_log: BrowserLog
) -> None:
    browser_log.allow("status of 413", "the test sends a message over the server's limit")
    open_chat(page)
    long_text = "Count the cafés near" + " the harbour" * 5_833  # 70,016 characters, é 2 bytes

    prompt = page.locator("textarea#prompt")
    prompt.fill(long_text)
    page.locator("button#send").click()

    note = page.locator("#composer-note")
    expect(note).to_be_visible()
    expect(note).to_contain_text("this message is 70,016 characters (70,017 bytes)")
    expect(note).to_contain_text("a message may be at most 64,000 bytes")
    expect(note).to_contain_text("Your text is still in the box")
    assert "413" not in note.inner_text() and "Too Large" not in note.inner_text()
    expect(prompt).to_have_value(long_text)
    expect(page.locator(USER)).to_have_count(0)  # nothing was sent, nothing is shown as sent
    expect(busy(page)).to_have_attribute("data-busy", "false")


@pytest.fixture
def own_server(tmp_path: Path) -> Iterator[RunningServer]:
    """A server of this test's own, which it may stop."""
    with running_server(tmp_path / "home") as running:
        yield running


def test_the_page_reconnects_when_the_server_comes_back(
    page: Page, browser_log: BrowserLog, own_server: RunningServer
) -> None:
    browser_log.allow("ERR_CONNECTION_REFUSED", "the test stops the server the page talks to")
    open_chat(page, f"{own_server.url}/chat/e2e-reconnect")
    port = int(own_server.url.rsplit(":", 1)[1])
    own_server.process.terminate()
    own_server.process.wait(timeout=30)

    prompt = page.locator("textarea#prompt")
    prompt.fill(CHART)
    page.locator("button#send").click()

    note = page.locator("#composer-note")
    expect(note).to_contain_text("The server could not be reached")
    assert "Failed to fetch" not in note.inner_text()
    expect(prompt).to_have_value(CHART)
    banner = page.locator("#banner-connection")
    expect(banner).to_be_visible()
    expect(banner).to_have_attribute("data-state", "reconnecting")
    expect(banner).to_contain_text("reconnecting…")

    with running_server(own_server.home, port=port):
        expect(banner).to_have_attribute("data-state", "connected", timeout=30_000)
        expect(banner).to_contain_text("Connected to the server again")
        answer = ask(page, CHART)
        assert "bar chart" in answer_text(answer).lower()
        expect(banner).to_be_hidden(timeout=10_000)


def test_approve_and_refuse_are_disabled_once_the_run_has_stopped(page: Page) -> None:
    open_chat(page)
    wait_sources(page, "entry-places-1", "entry-geometries-1")

    ask(page, UNION, wait=False)
    approval = page.locator(".approval[data-approval-id]")
    expect(approval).to_be_visible(timeout=RUN_MS)
    expect(approval.locator("button.approve")).to_be_enabled()
    page.locator("button#stop").click()

    expect(busy(page)).to_have_attribute("data-busy", "false", timeout=RUN_MS)
    expect(approval.locator("button.approve")).to_be_disabled()
    expect(approval.locator("button.refuse")).to_be_disabled()
    expect(approval).to_have_attribute("data-state", "closed")
    expect(approval.locator(".answer")).to_contain_text("Not answered")


def test_a_tool_row_shows_what_it_did_and_its_name_on_hover(page: Page) -> None:
    open_chat(page)

    ask(page, CHART)

    row = page.locator(f"{ASSISTANT} .tool[data-tool='analyse_data']")
    expect(row).to_have_attribute("data-state", "done")
    expect(row).to_have_text("Analysed data")
    expect(row).to_have_attribute("title", "analyse_data")
    figure = page.locator(f"{ASSISTANT} .tool[data-tool='present_figure']")
    expect(figure).to_have_text("Presented figures")
    expect(figure).to_have_attribute("title", "present_figure")

    # Read back after a reload, the rows say the same.
    page.reload()
    wait_ready(page)
    expect(page.locator(f"{ASSISTANT} .tool[data-tool='analyse_data']")).to_have_text(
        "Analysed data"
    )
    expect(page.locator(f"{ASSISTANT} .tool[data-tool='analyse_data']")).to_have_attribute(
        "title", "analyse_data"
    )


def test_a_tool_without_a_name_of_its_own_reads_as_words(page: Page) -> None:
    open_chat(page)

    named = page.evaluate(
        """async () => {
            const { toolName } = await import('/static/app/render.js');
            return [toolName('get_bus_stops'), toolName('get_bus_stops', {done: false}),
                    toolName('locate_place')];
        }"""
    )

    assert named == ["Get bus stops", "Get bus stops", "Located a place"]
    assert re.fullmatch(r"[A-Z][a-z ]+", named[0])
