"""Adding data as a person does it: the "Add data" button (from the keyboard), files dropped
on the chat or the map, several at once added in turn with each file's state in its row,
a refused file that does not stop the others, a file that waits for an answer being
written, a large file's upload percentage, and a server that asks the page to slow down."""

from __future__ import annotations

import json
import re
from typing import TYPE_CHECKING, Any

import pytest
from playwright.sync_api import Page, Request, Response, Route, expect
from tests.e2e.test_web_app import (
    RUN_MS,
    STOPS,
    UNION,
    busy,
    features_on_map,
    open_chat,
    wait_sources,
)

if TYPE_CHECKING:
    from tests.e2e.conftest import BrowserLog

pytestmark = pytest.mark.e2e

UPLOADS = re.compile(r"/api/chats/[^/]+/uploads")
ADDED = ".msg.upload[data-state='added']"
REFUSED = ".msg.upload[data-state='refused']"
#: What a 4xx answer makes Chromium log, which tests that provoke one allow.
LOGGED_4XX = r"Failed to load resource: the server responded with a status of 4\d\d"

_DROP_MANY = """([selector, files]) => {
    const dropped = new DataTransfer();
    for (const [name, text] of files) {
        dropped.items.add(new File([text], name, {type: 'application/octet-stream'}));
    }
    const target = document.querySelector(selector);
    for (const kind of ['dragenter', 'dragover', 'drop']) {
        target.dispatchEvent(
            new DragEvent(kind, {bubbles: true, cancelable: true, dataTransfer: dropped}));
    }
}"""


def drop(page: Page, *files: tuple[str, str], on: str = "#chat-panel") -> None:
    """Drop ``(name, text)`` files at once on ``on``, as a person dragging them would."""
    page.evaluate(_DROP_MANY, [on, [list(f) for f in files]])


def stops(n: int, *, note: str = "") -> str:
    """``n`` stops in central Helsinki as GeoJSON (each with ``note``, to make it large)."""
    features = [
        {
            "type": "Feature",
            "properties": {"name": f"stop {i}", "note": note},
            "geometry": {"type": "Point", "coordinates": [24.93 + i * 1e-5, 60.17]},
        }
        for i in range(n)
    ]
    return json.dumps({"type": "FeatureCollection", "features": features})


class UploadTraffic:
    """The page's upload requests: how many were in flight at most, and every status."""

    def __init__(self, page: Page) -> None:
        self.open = 0
        self.most = 0
        self.statuses: list[int] = []
        page.on("request", self._sent)
        # Answered, not "requestfinished": the browser may report a body read to its end
        # after the page, which sends the next file once the answer is in, has sent it.
        page.on("requestfailed", self._done)
        page.on("response", self._answered)

    def _sent(self, request: Request) -> None:
        if UPLOADS.search(request.url):
            self.open += 1
            self.most = max(self.most, self.open)

    def _done(self, request: Request) -> None:
        if UPLOADS.search(request.url):
            self.open -= 1

    def _answered(self, response: Response) -> None:
        if UPLOADS.search(response.url):
            self.open -= 1
            self.statuses.append(response.status)


def test_add_data_is_a_button_that_picks_several_files_from_the_keyboard(page: Page) -> None:
    open_chat(page)
    button = page.get_by_role("button", name="Add data")
    expect(button).to_be_visible()
    picker = page.locator("input#add-data-input[type='file']")
    expect(picker).to_have_attribute("multiple", "")
    accept = (picker.get_attribute("accept") or "").split(",")
    for ending in (".geojson", ".parquet", ".csv", ".zip", ".gpkg"):
        assert ending in accept, accept

    # Focus and Enter in one step: on a busy machine the page may still be settling (the
    # chat list arriving), and a separate focus() could be lost before the key press.
    with page.expect_file_chooser() as chosen:
        button.press("Enter")
    assert chosen.value.is_multiple()
    chosen.value.set_files(
        [
            {
                "name": "stops.geojson",
                "mimeType": "application/geo+json",
                "buffer": stops(3).encode(),
            },
            {
                "name": "more.geojson",
                "mimeType": "application/geo+json",
                "buffer": stops(2).encode(),
            },
        ]
    )

    # The first file also stores the new chat with its demo data: slow on a busy machine.
    expect(page.locator(ADDED)).to_have_count(2, timeout=RUN_MS)
    expect(page.locator(ADDED).nth(0)).to_contain_text("stops.geojson: 3 features added as byod-1")
    expect(page.locator(ADDED).nth(1)).to_contain_text("more.geojson: 2 features added as byod-2")
    wait_sources(page, "entry-byod-1", "entry-byod-2")


def test_three_files_dropped_at_once_are_added_in_turn_past_a_refused_one(
    page: Page, browser_log: BrowserLog
) -> None:
    browser_log.allow(LOGGED_4XX, "the broken file is answered 422")
    open_chat(page)
    traffic = UploadTraffic(page)

    drop(
        page,
        ("first.geojson", json.dumps(STOPS)),
        ("broken.geojson", '{"type": "Feature"'),
        ("third.geojson", stops(2)),
    )

    rows = page.locator(".msg.upload")
    expect(rows).to_have_count(3)
    expect(rows.nth(2)).to_have_attribute("data-state", "added", timeout=RUN_MS)
    expect(rows.nth(0)).to_have_attribute("data-state", "added")
    expect(rows.nth(0)).to_contain_text("first.geojson: 3 features added as byod-1")
    expect(rows.nth(1)).to_have_attribute("data-state", "refused")
    expect(rows.nth(1)).to_contain_text("broken.geojson was not added:")
    expect(rows.nth(1)).to_contain_text(re.compile("could not be loaded", re.IGNORECASE))
    expect(rows.nth(2)).to_contain_text("third.geojson: 2 features added as byod-2")
    assert features_on_map(page, "byod-2") == (2, 2)
    # One at a time, so that the chat's one-upload-at-once and the rate limit refuse none.
    assert traffic.most == 1
    assert traffic.statuses == [200, 422, 200]


def test_a_file_dropped_on_the_map_is_added(page: Page) -> None:
    open_chat(page)

    drop(page, ("stops.geojson", json.dumps(STOPS)), on="#map")

    expect(page.locator(ADDED)).to_contain_text(
        "stops.geojson: 3 features added as byod-1", timeout=RUN_MS
    )
    wait_sources(page, "entry-byod-1")


def test_a_file_added_while_an_answer_is_written_waits_for_it_and_says_so(page: Page) -> None:
    open_chat(page)
    page.locator("textarea#prompt").fill(UNION)
    page.locator("button#send").click()
    approval = page.locator(".approval[data-approval-id]")
    expect(approval).to_be_visible(timeout=RUN_MS)  # the answer waits for the person

    drop(page, ("stops.geojson", json.dumps(STOPS)))

    row = page.locator(".msg.upload")
    expect(row).to_have_attribute("data-state", "waiting")
    expect(row).to_contain_text("waits for the answer being written to finish")
    approval.locator("button.approve").click()
    expect(busy(page)).to_have_attribute("data-busy", "false", timeout=RUN_MS)
    expect(row).to_have_attribute("data-state", "added", timeout=RUN_MS)
    expect(row).to_contain_text("stops.geojson: 3 features added as byod-1")


def test_a_large_file_shows_how_much_of_it_has_been_sent(page: Page) -> None:
    open_chat(page)
    # Slow the upload down (about 200 kB/s) so that the page sees it under way.
    cdp = page.context.new_cdp_session(page)
    cdp.send("Network.enable")
    cdp.send(
        "Network.emulateNetworkConditions",
        {"offline": False, "latency": 0, "downloadThroughput": -1, "uploadThroughput": 200_000},
    )
    page.evaluate(
        """() => {
            window.uploadStates = [];
            new MutationObserver(() => {
                const row = document.querySelector('.msg.upload');
                if (row) window.uploadStates.push(`${row.dataset.state}: ${row.textContent}`);
            }).observe(document.querySelector('#messages'),
                       {subtree: true, childList: true, characterData: true, attributes: true});
        }"""
    )

    drop(page, ("big.geojson", stops(8000, note="x" * 60)))

    expect(page.locator(ADDED)).to_contain_text("big.geojson: 8,000 features", timeout=RUN_MS)
    states: list[Any] = page.evaluate("() => window.uploadStates")
    under_way = [int(m.group(1)) for s in states if (m := re.search(r"uploading (\d+)%", str(s)))]
    assert any(0 < p < 100 for p in under_way), states
    assert under_way == sorted(under_way), under_way
    assert any(str(s).startswith("reading:") for s in states), states


def test_a_file_the_server_asks_to_wait_for_is_sent_again_when_it_may(
    page: Page, browser_log: BrowserLog
) -> None:
    browser_log.allow(LOGGED_4XX, "the first upload is answered 429 on purpose")
    open_chat(page)
    asked: list[str] = []

    def too_many_once(route: Route) -> None:
        asked.append(route.request.url)
        if len(asked) > 1:
            route.fallback()
            return
        route.fulfill(
            status=429,
            headers={"retry-after": "1", "content-type": "application/json"},
            body=json.dumps({"message": "Too many requests at once; try again in 1 s"}),
        )

    page.route(UPLOADS, too_many_once)

    drop(page, ("stops.geojson", json.dumps(STOPS)))

    row = page.locator(".msg.upload")
    expect(row).to_contain_text("trying again in 1 s")
    expect(row).to_have_attribute("data-state", "added", timeout=RUN_MS)
    assert len(asked) == 2
