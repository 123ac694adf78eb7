"""The sidebar's chats as a person uses them: each with the date of its last message (the
exact time on hover), renamed in place from the keyboard, deleted after a confirmation,
a chat made only of a dropped file titled by the file's name, and a new chat stored and
listed only once its first message is sent."""

from __future__ import annotations

import json
import re
from datetime import UTC, datetime
from typing import TYPE_CHECKING

import httpx
import pytest
from playwright.sync_api import Locator, Page, expect
from tests.e2e.test_web_app import (
    STOPS,
    USER,
    ask,
    drop_file,
    open_chat,
    wait_ready,
    wait_sources,
)

if TYPE_CHECKING:
    from tests.e2e.conftest import BrowserLog

pytestmark = pytest.mark.e2e


def row(page: Page, chat_id: str) -> Locator:
    return page.locator(f"#chats li.chat[data-chat-id='{chat_id}']")


def test_each_chat_shows_when_it_was_last_used_and_the_exact_time_on_hover(page: Page) -> None:
    chat_id = open_chat(page)
    ask(page, "What can you do?")
    date = row(page, chat_id).locator("time.chat-date")
    expect(date).to_have_text(re.compile(r"^(just now|[1-5] min ago)$"))
    stamp = date.get_attribute("datetime")
    assert stamp is not None
    when = datetime.fromisoformat(stamp)
    assert abs((datetime.now(UTC) - when).total_seconds()) < 300, stamp
    # The exact time is the element's title (shown on hover): the full date and seconds.
    exact = date.get_attribute("title") or ""
    assert str(when.astimezone().year) in exact and re.search(r"\d{1,2}:\d\d:\d\d", exact), exact


def test_a_chat_is_renamed_in_place_with_the_keyboard(page: Page, browser_log: BrowserLog) -> None:
    browser_log.allow("status of 422", "the test gives the chat an empty title")
    chat_id = open_chat(page)
    ask(page, "What can you do?")
    chat = row(page, chat_id)
    rename = chat.locator("button.chat-rename")
    expect(rename).to_have_attribute("aria-label", "Rename the chat What can you do?")
    rename.focus()
    page.keyboard.press("Enter")
    field = chat.locator("input.chat-title-input")
    expect(field).to_be_focused()
    expect(field).to_have_value("What can you do?")

    # Escape cancels: the old title stays, and the focus goes back to the button.
    page.keyboard.type("Never saved")
    page.keyboard.press("Escape")
    expect(field).to_have_count(0)
    expect(chat.locator(".chat-title")).to_have_text("What can you do?")
    expect(rename).to_be_focused()

    # A title the server refuses is said under the field, which stays open.
    page.keyboard.press("Enter")
    page.keyboard.press("Control+A")
    page.keyboard.press("Space")
    page.keyboard.press("Enter")
    expect(chat.locator(".chat-note")).to_have_text("Not renamed: A chat title cannot be empty")
    expect(field).to_be_focused()

    page.keyboard.press("Control+A")
    page.keyboard.type("Helsinki's islands")
    page.keyboard.press("Enter")
    expect(chat.locator(".chat-title")).to_have_text("Helsinki's islands")
    expect(chat.locator("input.chat-title-input")).to_have_count(0)
    expect(chat.locator("button.chat-rename")).to_be_focused()

    # The server keeps it: a reload reads the person's title back, not the question.
    page.reload()
    wait_ready(page)
    expect(row(page, chat_id).locator(".chat-title")).to_have_text("Helsinki's islands")


def test_a_chat_is_deleted_only_after_the_person_confirms(page: Page) -> None:
    kept = open_chat(page)
    ask(page, "What can you do?")
    doomed = open_chat(page)
    ask(page, "Help me get started")
    chat = row(page, doomed)

    chat.locator("button.chat-delete").click()
    confirm = chat.locator(".chat-confirm")
    expect(confirm).to_contain_text("Delete this chat?")
    # Cancel is focused (the safe choice); Escape keeps the chat too.
    expect(confirm.locator("button.chat-delete-cancel")).to_be_focused()
    page.keyboard.press("Escape")
    expect(confirm).to_have_count(0)
    expect(chat.locator("button.chat-delete")).to_be_focused()

    page.keyboard.press("Enter")
    chat.locator("button.chat-delete-confirm").click()
    expect(row(page, doomed)).to_have_count(0)
    expect(row(page, kept)).to_have_count(1)
    # The open chat was the one deleted: the page moved to a new chat.
    page.wait_for_function("(old) => window.geomint.chatId !== old", arg=doomed)
    expect(page).not_to_have_url(re.compile(rf"/chat/{re.escape(doomed)}$"))
    expect(page.locator(USER)).to_have_count(0)

    page.reload()
    wait_ready(page)
    expect(row(page, kept)).to_have_count(1)
    expect(row(page, doomed)).to_have_count(0)


def test_a_chat_of_only_a_dropped_file_is_titled_by_its_name(page: Page) -> None:
    chat_id = open_chat(page)
    drop_file(page, "harbour stops.geojson", json.dumps(STOPS))
    expect(row(page, chat_id).locator(".chat-title")).to_have_text("harbour stops.geojson")


def test_a_new_chat_is_stored_and_listed_only_once_its_first_message_is_sent(
    page: Page, server: str
) -> None:
    chat_id = open_chat(page)
    wait_sources(page, "entry-places-1", "entry-geometries-1")  # what it will start with
    page.locator("button#new-chat").click()
    page.wait_for_function("(old) => window.geomint.chatId !== old", arg=chat_id)
    chat_id = wait_ready(page)
    page.reload()  # a chat not stored yet opens again at its address, still new
    assert wait_ready(page) == chat_id
    wait_sources(page, "entry-places-1", "entry-geometries-1")
    expect(row(page, chat_id)).to_have_count(0)
    assert httpx.get(f"{server}/api/chats/{chat_id}", timeout=10).status_code == 404

    ask(page, "What can you do?")

    expect(row(page, chat_id)).to_have_count(1)
    expect(row(page, chat_id).locator(".chat-title")).to_have_text("What can you do?")
    stored = httpx.get(f"{server}/api/chats/{chat_id}", timeout=10).json()
    assert [e["entry_id"] for e in stored["entries"]] == ["places-1", "geometries-1"]
