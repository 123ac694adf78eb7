"""The web app as a person uses it, in a real headless Chromium against ``geomint serve``.

The server runs the scripted demo model, so every answer is known: a new chat holds the
Helsinki places (``places-1``) and park boundaries (``geometries-1``), "Bar chart of these
places by category" draws a chart with figure cards, "Union the park boundaries and show
them" needs an approval (the server is started with ``--approve code_entry``), and any
other question gets a long "I only know a few example prompts" answer. What the map holds
is read from the map itself (``window.geomint``), not from the DOM.
"""

from __future__ import annotations

import json
import re
import time
import zipfile
from typing import TYPE_CHECKING, Any

import httpx
import pytest
from playwright.sync_api import Locator, Page, expect

if TYPE_CHECKING:
    from tests.e2e.conftest import BrowserLog, Shot


pytestmark = pytest.mark.e2e

#: A run takes a few seconds on a 2-core machine (the sandbox runs real code); be generous.
RUN_MS = 60_000
expect.set_options(timeout=30_000)

CHART = "Bar chart of these places by category"
UNION = "Union the park boundaries and show them"
UNKNOWN = "Tell me a long story about the islands off Helsinki"

USER = "#messages .msg[data-role='user']"
ASSISTANT = "#messages .msg[data-role='assistant']"

#: Three stops in central Helsinki (the station square, Kamppi, the market square).
STOPS = {
    "type": "FeatureCollection",
    "features": [
        {
            "type": "Feature",
            "properties": {"name": name, "kind": kind},
            "geometry": {"type": "Point", "coordinates": [lon, lat]},
        }
        for name, kind, lon, lat in (
            ("Rautatientori", "bus", 24.9436, 60.1710),
            ("Kamppi", "bus", 24.9316, 60.1690),
            ("Kauppatori", "tram", 24.9526, 60.1675),
        )
    ],
}

_READY = """async () => {
    const timeout = new Promise((_, fail) =>
        setTimeout(() => fail(new Error('window.geomint.ready did not resolve in 60 s')), 60000));
    await Promise.race([window.geomint.ready, timeout]);
    return window.geomint.chatId;
}"""
_ENTRY_SOURCES = """() => Object.keys(window.geomint.map.getStyle().sources)
    .filter((name) => name.startsWith('entry-')).sort()"""
_LAYERS = """(source) => window.geomint.map.getStyle().layers
    .filter((layer) => layer.source === source)
    .map((layer) => [layer.id,
                     window.geomint.map.getLayoutProperty(layer.id, 'visibility') ?? 'visible'])"""
_SOURCE_FEATURES = """async (source) => {
    const found = window.geomint.map.getSource(source);
    if (!found) return null;
    const data = await found.getData();
    return data.type === 'FeatureCollection' ? data.features.length : 1;
}"""
_DROP = """([name, type, text]) => {
    const files = new DataTransfer();
    files.items.add(new File([text], name, {type}));
    const panel = document.querySelector('#chat-panel');
    for (const kind of ['dragenter', 'dragover', 'drop']) {
        panel.dispatchEvent(
            new DragEvent(kind, {bubbles: true, cancelable: true, dataTransfer: files}));
    }
}"""


# -- helpers ---------------------------------------------------------------------------------


def open_chat(page: Page, path: str = "/") -> str:
    """Go to ``path`` and wait for ``window.geomint.ready``; return the chat's id."""
    page.goto(path)
    return wait_ready(page)


def wait_ready(page: Page) -> str:
    page.wait_for_function("() => window.geomint && window.geomint.ready")
    chat_id = page.evaluate(_READY)
    assert isinstance(chat_id, str) and chat_id, f"window.geomint.chatId is {chat_id!r}"
    return chat_id


def busy(page: Page) -> Locator:
    return page.locator("body")


def ask(page: Page, question: str, *, enter: bool = False, wait: bool = True) -> Locator:
    """Send ``question`` (with the button, or Enter); with ``wait``, until the run ends.

    Returns the newest assistant message.
    """
    users = page.locator(USER).count()
    answers = page.locator(ASSISTANT).count()
    prompt = page.locator("textarea#prompt")
    prompt.fill(question)
    if enter:
        prompt.press("Enter")
    else:
        page.locator("button#send").click()
    expect(page.locator(USER)).to_have_count(users + 1)
    expect(page.locator(USER).last).to_contain_text(question)
    if wait:
        page.wait_for_function(
            "([selector, n]) => document.querySelectorAll(selector).length > n",
            arg=[ASSISTANT, answers],
            timeout=RUN_MS,
        )
        expect(busy(page)).to_have_attribute("data-busy", "false", timeout=RUN_MS)
    return page.locator(ASSISTANT).last


def answer_text(message: Locator) -> str:
    """An assistant message's text parts, whitespace folded."""
    return " ".join(" ".join(message.locator(".text").all_inner_texts()).split())


def entry_sources(page: Page) -> list[str]:
    """The map's ``entry-*`` sources."""
    found = page.evaluate(_ENTRY_SOURCES)
    assert isinstance(found, list)
    return [str(name) for name in found]


def wait_sources(page: Page, *names: str) -> None:
    page.wait_for_function(
        "(names) => names.every((name) => window.geomint.map.getSource(name))",
        arg=list(names),
        timeout=RUN_MS,
    )


def features_on_map(page: Page, entry_id: str) -> tuple[Any, Any]:
    """The entry's feature count as the page reports it, and as its map source holds."""
    reported = page.evaluate("(id) => window.geomint.entryFeatures(id)", entry_id)
    held = page.evaluate(_SOURCE_FEATURES, f"entry-{entry_id}")
    return reported, held


def drop_file(page: Page, name: str, text: str, kind: str = "application/geo+json") -> None:
    """Drop a file onto the chat panel as a person dragging it from their desktop would."""
    page.evaluate(_DROP, [name, kind, text])


def conversation(page: Page) -> list[tuple[str, str]]:
    """Each user and assistant message's role and text, whitespace folded."""
    out: list[tuple[str, str]] = []
    for message in page.locator(f"{USER}, {ASSISTANT}").all():
        role = message.get_attribute("data-role") or ""
        text = (
            answer_text(message) if role == "assistant" else " ".join(message.inner_text().split())
        )
        out.append((role, text))
    return out


def health(server: str) -> dict[str, Any]:
    response = httpx.get(f"{server}/api/health", timeout=10)
    response.raise_for_status()
    body = response.json()
    assert isinstance(body, dict)
    return body


# -- tests -----------------------------------------------------------------------------------


def test_the_root_opens_a_new_chat_at_its_own_address(page: Page) -> None:
    chat_id = open_chat(page, "/")

    expect(page).to_have_url(re.compile(rf"/chat/{re.escape(chat_id)}$"))
    wait_sources(page, "entry-places-1", "entry-geometries-1")
    assert page.evaluate("() => window.geomint.entryFeatures('places-1')") > 0


def test_a_chat_address_opens_that_chat(page: Page) -> None:
    chat_id = open_chat(page, "/chat/e2e-by-address")

    assert chat_id == "e2e-by-address"
    expect(page).to_have_url(re.compile(r"/chat/e2e-by-address$"))
    wait_sources(page, "entry-places-1", "entry-geometries-1")


def test_a_bar_chart_is_drawn_with_its_tool_calls(page: Page, shot: Shot) -> None:
    open_chat(page)

    answer = ask(page, CHART)

    expect(page.locator(".tool[data-tool='analyse_data']")).to_have_attribute("data-state", "done")
    expect(page.locator(".tool[data-tool='present_figure']")).to_have_attribute(
        "data-state", "done"
    )
    chart = page.locator(".chart canvas[data-rendered='true']")
    expect(chart).to_have_count(1)
    expect(chart).to_be_visible()
    assert "bar chart" in answer_text(answer).lower()
    chart.scroll_into_view_if_needed()
    shot(page, "chart")


def test_a_cited_figure_reads_as_its_value_and_opens_its_card(page: Page) -> None:
    chat_id = open_chat(page)
    answer = ask(page, CHART)

    chip = answer.locator(".text .cite[data-ref='v1']")
    expect(chip).to_have_text("1,346 places")
    assert "{v1}" not in answer_text(answer)
    assert answer.locator(".text .number.unminted").count() == 0
    chip.click()
    card = answer.locator(".figure-card.cited[data-value-id='v1']")
    expect(card).to_be_visible()
    expect(card.locator(".figure-label")).to_have_text("places counted")
    expect(card.locator(".show-code")).to_be_visible()

    page.reload()
    assert wait_ready(page) == chat_id
    expect(page.locator(f"{ASSISTANT} .text .cite[data-ref='v1']")).to_have_text("1,346 places")


def test_a_dropped_geojson_file_becomes_a_layer_on_the_map(page: Page, shot: Shot) -> None:
    open_chat(page)
    wait_sources(page, "entry-places-1")

    drop_file(page, "stops.geojson", json.dumps(STOPS))

    upload = page.locator(".msg.upload[data-entry-id]")
    expect(upload).to_have_attribute("data-entry-id", "byod-1")
    expect(upload).to_contain_text("stops.geojson")
    wait_sources(page, "entry-byod-1")
    page.wait_for_function("() => window.geomint.entryFeatures('byod-1') === 3", timeout=RUN_MS)
    assert features_on_map(page, "byod-1") == (3, 3)
    shot(page, "upload")


def test_a_broken_file_is_refused_with_a_plain_reason(page: Page, browser_log: BrowserLog) -> None:
    browser_log.allow(
        r"Failed to load resource: the server responded with a status of 4\d\d",
        "the server answers a broken upload with a 4xx status, which Chromium logs",
    )
    open_chat(page)
    wait_sources(page, "entry-places-1", "entry-geometries-1")
    before = entry_sources(page)

    drop_file(page, "broken.geojson", '{"type": "Feature"')

    error = page.locator(".msg.upload.error")
    expect(error).to_be_visible()
    reason = " ".join(error.inner_text().split())
    assert reason, "the error names no reason"
    assert "Traceback" not in reason and not reason.startswith("{"), reason
    assert len(reason) < 800, reason
    expect(page.locator(".msg.upload[data-entry-id]")).to_have_count(0)
    assert entry_sources(page) == before


def test_a_figure_card_shows_its_sources_and_the_code_that_minted_it(page: Page) -> None:
    open_chat(page)
    ask(page, CHART)

    card = page.locator(".figure-card").filter(
        has=page.locator(".figure-label", has_text="places counted")
    )
    expect(card).to_have_count(1)
    expect(card.locator(".figure-value")).to_have_text(re.compile(r"\d.*places"))

    card.locator(".sources-toggle").click()
    sources = card.locator(".sources li")
    expect(sources.first).to_be_visible()
    for source in sources.all():
        expect(source).to_contain_text("OpenStreetMap contributors")  # publisher
        expect(source).to_contain_text("ODbL")  # licence
        expect(source).to_contain_text("2019")  # retrieved at 2019-04-21T09:50:14Z

    card.locator(".show-code").click()
    dialog = page.locator("dialog#analysis[open]")
    expect(dialog).to_be_visible()
    expect(dialog.locator("pre.code")).to_contain_text("Counter(")
    expect(dialog.locator("pre.code")).to_contain_text('mint.value(len(places["features"])')
    expect(dialog.locator(".inputs li").first).to_be_visible()
    expect(dialog.locator(".inputs")).to_contain_text(re.compile("places", re.IGNORECASE))


def test_an_approved_process_data_call_adds_geometries_to_the_map(page: Page, shot: Shot) -> None:
    open_chat(page)
    wait_sources(page, "entry-places-1", "entry-geometries-1")
    before = entry_sources(page)

    ask(page, UNION, wait=False)
    approval = page.locator(".approval[data-approval-id]")
    expect(approval).to_be_visible(timeout=RUN_MS)
    expect(approval.locator("pre.code")).to_contain_text("shapely.union_all")
    expect(busy(page)).to_have_attribute("data-busy", "true")
    shot(page, "approval")
    approval.locator("button.approve").click()

    expect(approval).to_have_attribute("data-state", "given")
    expect(busy(page)).to_have_attribute("data-busy", "false", timeout=RUN_MS)
    expect(page.locator(".tool[data-tool='process_data']")).to_have_attribute("data-state", "done")
    added = sorted(set(entry_sources(page)) - set(before))
    assert len(added) == 1 and added[0].startswith("entry-geometries-"), added
    assert features_on_map(page, added[0].removeprefix("entry-")) == (1, 1)


def test_a_refused_process_data_call_changes_nothing(page: Page) -> None:
    open_chat(page)
    wait_sources(page, "entry-places-1", "entry-geometries-1")
    before = entry_sources(page)

    ask(page, UNION, wait=False)
    approval = page.locator(".approval[data-approval-id]")
    expect(approval).to_be_visible(timeout=RUN_MS)
    approval.locator("button.refuse").click()

    expect(approval).to_have_attribute("data-state", "refused")
    expect(busy(page)).to_have_attribute("data-busy", "false", timeout=RUN_MS)
    expect(page.locator(".tool[data-tool='process_data']")).to_have_attribute("data-state", "error")
    expect(page.locator(ASSISTANT).last.locator(".text").last).to_contain_text(
        re.compile("refused", re.IGNORECASE)
    )
    assert entry_sources(page) == before


def test_a_reloaded_chat_shows_the_same_messages_chart_and_layers(page: Page) -> None:
    chat_id = open_chat(page)
    ask(page, CHART)
    expect(page.locator(".chart canvas[data-rendered='true']")).to_have_count(1)
    drop_file(page, "stops.geojson", json.dumps(STOPS))
    page.wait_for_function("() => window.geomint.entryFeatures('byod-1') === 3", timeout=RUN_MS)
    said = conversation(page)
    sources = entry_sources(page)
    layers = {source: page.evaluate(_LAYERS, source) for source in sources}
    assert "entry-byod-1" in sources and layers["entry-byod-1"], layers

    page.reload()

    assert wait_ready(page) == chat_id
    expect(page.locator(".chart canvas[data-rendered='true']")).to_have_count(1)
    assert conversation(page) == said
    assert entry_sources(page) == sources
    assert {source: page.evaluate(_LAYERS, source) for source in sources} == layers
    assert features_on_map(page, "byod-1") == (3, 3)


def test_a_reloaded_chat_draws_its_small_layers_with_no_request_each(page: Page) -> None:
    chat_id = open_chat(page)
    drop_file(page, "stops.geojson", json.dumps(STOPS))
    page.wait_for_function("() => window.geomint.entryFeatures('byod-1') === 3", timeout=RUN_MS)
    sources = entry_sources(page)
    asked: list[str] = []
    page.on("request", lambda request: asked.append(request.url))

    page.reload()

    assert wait_ready(page) == chat_id
    # Their GeoJSON came inline with the chat's parts (a chat of 50 turns made 52 requests).
    assert [url for url in asked if "/parts" in url]
    assert not [url for url in asked if "/entries/" in url], asked
    assert entry_sources(page) == sources
    assert features_on_map(page, "byod-1") == (3, 3)
    assert features_on_map(page, "places-1")[0] > 0


def test_a_stopped_answer_is_kept_and_marked_stopped(page: Page) -> None:
    open_chat(page)

    ask(page, UNKNOWN, wait=False)
    first_words = page.locator(f"{ASSISTANT} .text").first
    expect(first_words).to_have_text(re.compile(r"\S"), timeout=RUN_MS)
    stop = page.locator("button#stop")
    expect(stop).to_be_visible()
    stop.click()

    expect(busy(page)).to_have_attribute("data-busy", "false", timeout=RUN_MS)
    expect(stop).to_be_hidden()
    answer = page.locator(ASSISTANT).last
    expect(answer).to_have_attribute("data-stopped", "true")
    shown = answer_text(answer)
    assert shown, "the stopped answer shows no text"
    assert "for a real model" not in shown, (
        "the whole answer had arrived before stop was clicked, so nothing was stopped "
        "(the demo model must stream slowly enough to be stopped midway)"
    )

    page.reload()
    wait_ready(page)

    kept = page.locator(f"{ASSISTANT}[data-stopped='true']")
    expect(kept).to_have_count(1)
    kept_text = answer_text(kept)
    # The server may have written a few more words than the page had shown before it
    # learnt of the stop, never fewer.
    assert kept_text.startswith(shown[:40]), (shown, kept_text)
    assert "for a real model" not in kept_text


def test_the_sidebar_lists_chats_by_their_first_question_newest_first(page: Page) -> None:
    first = open_chat(page)
    ask(page, "What can you do?", enter=True)  # Enter submits, like the button

    page.locator("button#new-chat").click()
    page.wait_for_function(
        "(old) => window.geomint && window.geomint.chatId && window.geomint.chatId !== old",
        arg=first,
    )
    second = wait_ready(page)
    expect(page).to_have_url(re.compile(rf"/chat/{re.escape(second)}$"))
    expect(page.locator(f"{USER}, {ASSISTANT}")).to_have_count(0)
    ask(page, "Help me get started")

    links = page.locator("#chats a.chat-link")
    expect(links.nth(0)).to_contain_text("Help me get started")
    expect(links.nth(1)).to_contain_text("What can you do?")
    expect(links.nth(0)).to_have_attribute("href", re.compile(rf"/chat/{re.escape(second)}$"))
    expect(links.nth(1)).to_have_attribute("href", re.compile(rf"/chat/{re.escape(first)}$"))

    links.nth(1).click()
    page.wait_for_function("(id) => window.geomint && window.geomint.chatId === id", arg=first)
    wait_ready(page)
    expect(page.locator(USER)).to_have_count(1)
    expect(page.locator(USER)).to_contain_text("What can you do?")


def test_the_banners_say_demo_model_and_sandbox_isolation(page: Page, server: str) -> None:
    # The sandbox starts in the background: read its mode once it has started.
    deadline = time.monotonic() + 60
    state = health(server)
    while state["sandbox"] == "not-started" and time.monotonic() < deadline:
        time.sleep(0.5)
        state = health(server)
    assert state["model"]["demo"] is True, state

    open_chat(page)

    expect(page.locator("#banner-demo")).to_be_visible()
    if state["sandbox"] == "isolated":
        expect(page.locator("#banner-sandbox")).to_be_hidden()
    else:
        expect(page.locator("#banner-sandbox")).to_be_visible()


def test_a_monitor_that_runs_again_is_shown(page: Page) -> None:
    # The page had no drawing for a monitor's re-run: it showed "could not be shown".
    open_chat(page)
    ask(page, "Keep counting my stops whenever the stops layer changes")
    answer = ask(page, "Reload my stops file")
    ran = answer.locator("[data-monitor]")
    expect(ran.first).to_contain_text("ran again after byod-1 v2")
    assert "could not be shown" not in " ".join(answer.all_inner_texts())


def test_a_popup_spells_out_nested_values(page: Page) -> None:
    # A route's summary showed "[object Object]".
    open_chat(page, "/chat/e2e-popup")
    said = page.evaluate(
        """async () => {
            const { readable } = await import("/static/app/map.js");
            return [
                readable('{"length_m": 1234.5, "duration_s": 900, "legs": [1, 2]}'),
                readable({ departure: "2026-12-05T10:00:00Z", traffic: null }),
                readable("{not json"),
                readable("x".repeat(500)).length,
            ];
        }"""
    )
    assert said == [
        "length_m: 1,234.5; duration_s: 900; legs: 1, 2",
        "departure: 2026-12-05T10:00:00Z; traffic: –",
        "{not json",
        200,
    ]


def test_the_map_has_a_scale_bar_and_a_fullscreen_control(page: Page) -> None:
    open_chat(page, "/chat/e2e-controls")
    expect(page.locator(".maplibregl-ctrl-scale")).to_be_visible()
    expect(page.locator("button.maplibregl-ctrl-fullscreen")).to_be_visible()


def test_a_layer_is_exported_through_its_menu_with_the_keyboard(page: Page) -> None:
    chat_id = open_chat(page)
    wait_sources(page, "entry-places-1")
    drop_file(page, 'pysäkit "keskusta".geojson', json.dumps(STOPS))
    wait_sources(page, "entry-byod-1")

    layers = page.locator("#layers > summary")
    layers.focus()
    page.keyboard.press("Enter")
    row = page.locator("#layer-list .layer[data-entry-id='byod-1']")
    expect(row).to_contain_text("pysäkit")
    menu = row.locator(".export-menu > summary")
    menu.focus()
    page.keyboard.press("Enter")
    geojson = row.locator(".export-item[data-format='geojson']")
    expect(geojson).to_be_visible()
    geojson.focus()
    with page.expect_download() as download_info:
        page.keyboard.press("Enter")
    download = download_info.value
    assert download.suggested_filename == "pysäkit _keskusta.geojson"
    with open(download.path(), encoding="utf-8") as file:
        exported = json.load(file)
    stored = page.request.get(f"/api/chats/{chat_id}/entries/byod-1").json()
    assert exported == stored
    assert [f["properties"]["name"] for f in exported["features"]] == [
        f["properties"]["name"] for f in STOPS["features"]
    ]
    assert [f["geometry"]["coordinates"] for f in exported["features"]] == [
        f["geometry"]["coordinates"] for f in STOPS["features"]
    ]
    # Choosing an item closes the menu and gives the focus back to its button.
    expect(row.locator(".export-menu")).not_to_have_attribute("open", "")
    expect(menu).to_be_focused()

    # The whole chat, from the header: what `geomint chats export` writes.
    with page.expect_download() as download_info:
        page.locator("#export-chat").click()
    with open(download_info.value.path(), encoding="utf-8") as file:
        whole = json.load(file)
    assert whole == page.request.get(f"/api/chats/{chat_id}/export").json()
    assert any(e["body"].get("entry_id") == "byod-1" for e in whole["events"])

    # ... and as a notebook that recomputes its figures, zipped with its inputs.
    with page.expect_download() as download_info:
        page.locator("#export-notebook").click()
    with zipfile.ZipFile(download_info.value.path()) as archive:
        names = archive.namelist()
    assert any(n.endswith(".ipynb") for n in names)
    assert any(n.endswith(".replay/chat.json") for n in names)


def test_a_charts_data_and_image_are_exported_from_its_menu(page: Page) -> None:
    chat_id = open_chat(page)
    message = ask(page, CHART)
    expect(message.locator(".chart canvas[data-rendered='true']")).to_have_count(1)
    menu = message.locator(".chart-export .export-menu")
    menu.locator("summary").click()
    with page.expect_download() as download_info:
        menu.locator(".export-item[data-format='csv']").click()
    analysis_id = message.locator(".chart-export").get_attribute("data-analysis-id")
    served = page.request.get(f"/api/chats/{chat_id}/analyses/{analysis_id}/chart.csv")
    with open(download_info.value.path(), "rb") as file:
        assert file.read() == served.body()
    assert download_info.value.suggested_filename.endswith(".csv")
    menu.locator("summary").click()
    with page.expect_download() as download_info:
        menu.locator(".export-item[data-format='png']").click()
    with open(download_info.value.path(), "rb") as file:
        assert file.read(8) == b"\x89PNG\r\n\x1a\n"
    assert download_info.value.suggested_filename.endswith(".png")
