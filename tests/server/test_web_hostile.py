"""Hostile input against the web app: request bodies, model text, uploaded files, approvals
and chart configs that try to break the server or the page.

Each test here failed when it was written: it proves a defect found in review. The
in-process ones drive the app over ASGI like ``test_web_api.py``; the ones marked ``e2e``
serve the app from a thread with uvicorn and drive the page in headless Chromium (they
skip without ``/usr/bin/chromium``). Playwright is started and stopped inside each browser
test, so that later tests may still call ``asyncio.run``.
"""

from __future__ import annotations

import asyncio
import contextlib
import io
import json
import socket
import threading
import time
from asyncio import run
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from tests.hostile_inputs import star_geojson
from tests.server.web import ask, call, make_agent

from geomint.agent import MapAgent
from geomint.agent.demo import seed_demo_chat
from geomint.sandbox import Sandbox
from geomint.server import create_app
from geomint.server.app import MAX_BODY_BYTES, TurnLimiter
from geomint.server.approvals import Approvals
from geomint.store import MemoryStore, SQLiteStore
from geomint.testing import Script
from geomint.ui import ApprovalAskedPart


@pytest.fixture
def agent(in_process: Sandbox) -> Iterator[MapAgent]:
    yield make_agent(in_process)


def _said(script: Script) -> Any:
    return script.model()


# -- request bodies --------------------------------------------------------------------------


def test_a_chunked_message_body_is_capped_like_one_with_a_length(agent: MapAgent) -> None:
    """The 64 kB cap is checked on Content-Length only: sent chunked, with no length, a
    message of any size is read whole into memory, stored in the chat and sent to the
    model."""
    body = json.dumps(ask("x" * (4 * MAX_BODY_BYTES), "chunked")).encode()

    async def chunks() -> AsyncIterator[bytes]:
        for start in range(0, len(body), 16_384):
            yield body[start : start + 16_384]

    app = create_app(agent)
    response = run(
        call(
            app, "POST", "/api/chat", content=chunks(), headers={"content-type": "application/json"}
        )
    )
    assert response.status_code == 413, response.text[:200]
    assert agent.chats.store.chat_ids() == []


def test_only_the_upload_route_gets_the_upload_body_limit(agent: MapAgent) -> None:
    """The larger upload cap is chosen by ``path.endswith('/uploads')``, so any route whose
    last segment a client names ``uploads`` (an approval id, a chat id) takes bodies up to
    the upload limit instead of 64 kB."""
    body = b'{"approved": true}' + b" " * (MAX_BODY_BYTES + 10_000)
    app = create_app(agent)
    for url in ("/api/chats/c/approvals/uploads", "/api/chats/uploads"):
        response = run(
            call(app, "POST", url, content=body, headers={"content-type": "application/json"})
        )
        assert response.status_code == 413, (url, response.status_code, response.text[:200])


# -- text that is not Unicode ----------------------------------------------------------------


def test_a_lone_surrogate_in_the_models_text_ends_the_stream_cleanly(
    in_process: Sandbox,
) -> None:
    """A model's JSON may carry ``\\ud800`` (Python's json accepts it): the SSE encoder
    raises on it mid-stream, the connection drops without an error or ``[DONE]``, and the
    answer is never saved."""
    script = Script(picks=[{"tools": [], "scopes": {}}], steps=["Here \ud800 is the rest."])
    agent = make_agent(in_process, _said(script))
    app = create_app(agent)
    response = run(call(app, "POST", "/api/chat", json=ask("hello", "sur")))
    assert response.status_code == 200
    assert response.text.endswith("data: [DONE]\n\n"), response.text[-300:]
    chat = run(call(app, "GET", "/api/chats/sur/parts"))
    assert chat.status_code == 200
    shown = [p for p in chat.json()["parts"] if p["type"] in ("question", "text")]
    assert [p["type"] for p in shown] == ["question", "text"]
    assert shown[1]["text"].startswith("Here ") and shown[1]["text"].endswith(" is the rest.")


@pytest.mark.parametrize("kind", ["memory", "sqlite"])
def test_a_lone_surrogate_in_a_question_breaks_neither_the_turn_nor_the_sidebar(
    in_process: Sandbox, tmp_path: Path, kind: str
) -> None:
    """A question with ``\\ud800`` (valid JSON, not valid Unicode) is accepted. On SQLite
    the turn's stream crashes; on the memory store it is saved, and from then on
    ``GET /api/chats`` (the sidebar, which every page load reads) and the chat answer 500:
    one request breaks the page for every chat."""
    store = MemoryStore() if kind == "memory" else SQLiteStore(tmp_path / "chats.db")
    app = create_app(make_agent(in_process, store=store))
    raw = json.dumps(ask("What can you do? \ud800", "sur"))  # ensure_ascii: "\\ud800"
    turn = run(
        call(app, "POST", "/api/chat", content=raw, headers={"content-type": "application/json"})
    )
    # Refused (422) or answered to the end: either is fine; a broken stream is not.
    assert turn.status_code == 422 or turn.text.endswith("data: [DONE]\n\n"), turn.text[-200:]
    assert run(call(app, "GET", "/api/chats")).status_code == 200
    assert run(call(app, "GET", "/api/chats/sur")).status_code in (200, 404)


# -- uploads ---------------------------------------------------------------------------------


def _parquet_bomb(rows: int, chars: int) -> bytes:
    import geopandas as gpd
    from shapely.geometry import Point

    frame = gpd.GeoDataFrame(
        {"note": ["x" * chars] * rows}, geometry=[Point(24.94, 60.17)] * rows, crs="EPSG:4326"
    )
    buffer = io.BytesIO()
    frame.to_parquet(buffer, compression="zstd")
    return buffer.getvalue()


def test_a_tiny_geoparquet_that_decodes_to_megabytes_is_refused(agent: MapAgent) -> None:
    """``max_bytes`` is "measured after decompression" for zips, but a GeoParquet's own
    compression is not measured: ~5 kB decode to 4 MB of GeoJSON (20x this agent's
    200 kB limit; with the default 25 MB limit, gigabytes), which is stored, returned in
    the upload's answer, streamed and read back on every reload."""
    bomb = _parquet_bomb(rows=200, chars=20_000)
    assert len(bomb) < 20_000
    app = create_app(agent)
    response = run(
        call(app, "POST", "/api/chats/bomb/uploads", params={"name": "a.parquet"}, content=bomb)
    )
    assert response.status_code in (413, 422), (response.status_code, len(response.content))
    assert agent.chats.store.chat_ids() == []  # a refused file does not even start the chat


@pytest.mark.parametrize(
    "name",
    ["stops\x00.geojson", "stops\r\nApproved.geojson", "\u202egnp.geojson", "stops\x1b[2J.geojson"],
    ids=["nul", "newline", "bidi-override", "escape"],
)
def test_a_dropped_files_name_reaches_the_label_without_control_characters(
    agent: MapAgent, name: str
) -> None:
    """The name is cut to its last path part and 200 characters, but NUL, line breaks,
    escapes and bidi overrides (``\u202e`` shows "gnp.geojson" as "geojson.png") go into
    the entry's label, the chat's upload message and the model's state note as given."""
    stops = {
        "type": "FeatureCollection",
        "features": [
            {
                "type": "Feature",
                "properties": {},
                "geometry": {"type": "Point", "coordinates": [24.9, 60.2]},
            }
        ],
    }
    app = create_app(agent)
    response = run(
        call(
            app,
            "POST",
            "/api/chats/names/uploads",
            params={"name": name},
            content=json.dumps(stops).encode(),
        )
    )
    assert response.status_code == 200, response.text
    added = response.json()
    for shown in (added["name"], added["label"]):
        assert shown.isprintable(), repr(shown)


# -- a chat busy waiting for a person --------------------------------------------------------


@contextlib.asynccontextmanager
async def _pending_approval(agent: MapAgent, approvals: Approvals, chat_id: str) -> Any:
    """A turn in ``chat_id`` waiting for a person's answer to its process_data call."""
    await seed_demo_chat(agent, chat_id)
    asked: asyncio.Future[str] = asyncio.get_running_loop().create_future()

    async def turn() -> None:
        stream = agent.run_stream(
            "Union the park boundaries and show them", chat_id=chat_id, approve=approvals.ask
        )
        async for part in stream:
            if isinstance(part, ApprovalAskedPart) and not asked.done():
                asked.set_result(part.approval_id)

    task = asyncio.create_task(turn())
    approval_id = await asyncio.wait_for(asked, 10)
    try:
        yield approval_id
    finally:
        approvals.answer(chat_id, approval_id, approved=False, reason="test over")
        await asyncio.wait_for(task, 10)


@pytest.mark.parametrize("what", ["turn", "upload"])
def test_a_chat_waiting_for_an_approval_answers_a_second_tab_at_once(
    agent: MapAgent, what: str
) -> None:
    """Turns and uploads of a chat share one lock, held while a run waits up to 10 minutes
    for an approval: a second tab's question (or a dropped file) hangs silently until then,
    with no word of why. It should be told at once (e.g. 409: the chat is busy)."""
    approvals = Approvals()
    app = create_app(agent, approvals=approvals)
    stops = json.dumps(
        {
            "type": "FeatureCollection",
            "features": [
                {
                    "type": "Feature",
                    "properties": {},
                    "geometry": {"type": "Point", "coordinates": [24.9, 60.2]},
                }
            ],
        }
    )

    async def scenario() -> httpx.Response:
        async with _pending_approval(agent, approvals, "busy"):
            if what == "turn":
                second = call(app, "POST", "/api/chat", json=ask("What can you do?", "busy"))
            else:
                second = call(app, "POST", "/api/chats/busy/uploads?name=s.geojson", content=stops)
            try:
                return await asyncio.wait_for(second, 3)
            except TimeoutError:
                pytest.fail(f"the second tab's {what} still hangs after 3 s")

    response = run(scenario())
    assert response.status_code in (409, 423, 429), response.status_code


# -- rate limits -----------------------------------------------------------------------------


def test_the_turn_limiter_forgets_clients_whose_bucket_has_refilled() -> None:
    """One bucket per client address, never dropped: an IPv6 client rotating addresses in
    its /64 (or any scan) grows the dict without bound."""
    now = [0.0]
    limiter = TurnLimiter(clock=lambda: now[0])
    for n in range(20_000):
        limiter.wait(f"2001:db8::{n:x}")
    now[0] += 3_600.0  # an hour later every one of those buckets is full again
    limiter.wait("2001:db8::ffff:1")
    assert len(limiter._buckets) < 1_000, len(limiter._buckets)


def test_creating_chats_is_rate_limited(agent: MapAgent) -> None:
    """``POST /api/chats/<new id>`` creates a chat (and, with the demo model, writes the
    demo data into it: ~0.5 MB and ~70 ms each, on the event loop) with no limit, while
    turns and uploads are limited per client."""
    app = create_app(agent, limiter=TurnLimiter(per_minute=0.001, burst=2))

    async def create(count: int) -> list[int]:
        return [(await call(app, "POST", f"/api/chats/new-{n}")).status_code for n in range(count)]

    codes = run(create(6))
    assert 429 in codes, codes
    # Opening a chat that exists (a reload, the sidebar) stays free.
    assert run(call(app, "POST", "/api/chats/new-0")).status_code == 200


# -- in the page (headless Chromium) ---------------------------------------------------------


@contextlib.contextmanager
def _serving(app: Any) -> Iterator[str]:
    """Serve ``app`` with uvicorn from a thread on a free loopback port."""
    import uvicorn

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 10
    while not server.started:
        assert time.monotonic() < deadline, "uvicorn did not start"
        time.sleep(0.02)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(10)


@contextlib.contextmanager
def _browser_page(base: str, errors: list[str]) -> Iterator[Any]:
    """A headless Chromium page on ``base``; page errors are appended to ``errors``."""
    from playwright.sync_api import sync_playwright
    from tests.e2e.web_server import BROWSER_ARGS, CHROMIUM

    if not CHROMIUM.exists():
        pytest.skip(f"{CHROMIUM} is not installed")
    driver = sync_playwright().start()
    try:
        browser = driver.chromium.launch(executable_path=str(CHROMIUM), args=list(BROWSER_ARGS))
        context = browser.new_context(viewport={"width": 1280, "height": 800}, base_url=base)
        page = context.new_page()
        page.on("pageerror", lambda error: errors.append(error.message))
        yield page
        browser.close()
    finally:
        driver.stop()


def _chart_agent(sandbox: Sandbox, options: dict[str, Any]) -> MapAgent:
    """An agent whose model answers any question with a bar chart carrying ``options``."""
    code = (
        "from collections import Counter\n"
        "counts = Counter(f['properties']['category'] for f in places['features'])\n"
        "top = counts.most_common(3)\n"
        "return {'type': 'bar', 'data': {'labels': [c for c, _ in top], 'datasets': "
        f"[{{'label': 'Places', 'data': [n for _, n in top]}}]}}, 'options': {options!r}}}"
    )
    script = Script(
        picks=[{"tools": ["analyse_data"], "scopes": {"analyse_data": {"kinds": ["places"]}}}],
        steps=[
            [
                (
                    "analyse_data",
                    {
                        "places_entry_ids": ["places-1"],
                        "name": "bar",
                        "output_format": "chart",
                        "code": code,
                    },
                )
            ],
            "Here is the chart.",
        ],
    )
    return make_agent(sandbox, _said(script))


def _ask_in_page(page: Any, question: str) -> None:
    page.fill("#prompt", question)
    page.press("#prompt", "Enter")
    page.wait_for_function(
        "() => document.body.dataset.busy === 'false'"
        " && document.querySelectorAll('#messages > li').length >= 2",
        timeout=15_000,
    )


@pytest.mark.e2e
@pytest.mark.parametrize(
    "options",
    [
        {"scales": {"x": {"type": "time"}}},  # an honest model's time axis: no date adapter
        {"plugins": {"legend": {"labels": {"filter": "none"}}}},  # a string where a function goes
    ],
    ids=["time-axis", "string-callback"],
)
def test_browser_a_chart_chartjs_cannot_draw_does_not_cut_off_the_answer(
    in_process: Sandbox, options: dict[str, Any]
) -> None:
    """``new Chart`` throws inside the stream's chunk handler; the throw ends the reading
    loop, so everything after the chart (figure cards, the answer's text) is never shown,
    the page shows Chart.js's internal message, and the run goes on unseen."""
    agent = _chart_agent(in_process, options)
    run(seed_demo_chat(agent, "chart"))
    errors: list[str] = []
    with _serving(create_app(agent)) as base, _browser_page(base, errors) as page:
        page.goto("/chat/chart")
        assert page.evaluate("() => window.geomint.ready")
        _ask_in_page(page, "chart please")
        texts = page.locator("#messages li[data-role='assistant'] .text").all_inner_texts()
        notes = page.locator("#messages .error-note").all_inner_texts()
    assert "Here is the chart." in texts, f"answer cut off; the page said {notes}"
    assert not errors, errors


@pytest.mark.e2e
def test_browser_a_chart_cannot_choose_its_own_device_pixel_ratio(in_process: Sandbox) -> None:
    """The chart's options reach Chart.js unfiltered: ``devicePixelRatio: 30`` makes a
    12,450 x 7,800 canvas (~390 MB) for a 415-pixel chart, redrawn on every reload."""
    agent = _chart_agent(in_process, {"devicePixelRatio": 30})
    run(seed_demo_chat(agent, "dpr"))
    errors: list[str] = []
    with _serving(create_app(agent)) as base, _browser_page(base, errors) as page:
        page.goto("/chat/dpr")
        assert page.evaluate("() => window.geomint.ready")
        _ask_in_page(page, "chart please")
        page.wait_for_selector("canvas[data-rendered]")
        width, shown = page.evaluate(
            "() => { const c = document.querySelector('canvas[data-rendered]');"
            " return [c.width, c.clientWidth]; }"
        )
    assert width <= 4 * shown, (width, shown)


_SLOW_CHAT = """
(() => {
  const original = window.fetch;
  window.fetch = async (input, init) => {
    const url = String(input);
    if (url.endsWith('/api/chats/slow') && init && init.method === 'POST') {
      await new Promise((resolve) => setTimeout(resolve, 1500));
    }
    return original(input, init);
  };
})();
"""


@pytest.mark.e2e
def test_browser_switching_chats_quickly_shows_only_the_last_one(in_process: Sandbox) -> None:
    """``openChat`` has no check that it is still the chat being opened: when an earlier
    chat's read-back arrives after a later one's, its messages are appended under the later
    chat and its entries replace the later chat's on the map (both have a ``byod-1``).
    The same holds for a file dropped just before switching chats."""
    script = Script(picks=[{"tools": [], "scopes": {}}], steps=["ok"])
    agent = make_agent(in_process, _said(script))

    def points(count: int) -> bytes:
        features = [
            {
                "type": "Feature",
                "properties": {"n": n},
                "geometry": {"type": "Point", "coordinates": [24.94 + n / 1000, 60.17]},
            }
            for n in range(count)
        ]
        return json.dumps({"type": "FeatureCollection", "features": features}).encode()

    run(agent.upload(points(3), "slow.geojson", chat_id="slow"))
    run(agent.upload(points(1), "fast.geojson", chat_id="fast"))
    errors: list[str] = []
    with _serving(create_app(agent)) as base, _browser_page(base, errors) as page:
        page.add_init_script(_SLOW_CHAT)
        page.goto("/chat/fast")
        assert page.evaluate("() => window.geomint.ready")
        # Back to "slow", then on to "fast" before "slow" has answered (as with two quick
        # clicks in the sidebar, or Back then Forward).
        page.evaluate(
            """() => {
              for (const id of ['slow', 'fast']) {
                history.pushState({}, '', '/chat/' + id);
                dispatchEvent(new PopStateEvent('popstate'));
              }
            }"""
        )
        page.wait_for_timeout(2_500)
        chat_id = page.evaluate("() => window.geomint.chatId")
        shown = page.locator("#messages > li").all_inner_texts()
        on_map = page.evaluate("() => window.geomint.entryFeatures('byod-1')")
    # Expected: only the fast chat's upload message, and its 1-feature byod-1 on the map.
    assert (chat_id, shown, on_map) == (
        "fast",
        ["fast.geojson: 1 features added as byod-1 (geojson)"],
        1,
    )


@pytest.mark.e2e
def test_browser_the_page_works_when_the_api_needs_a_token(agent: MapAgent) -> None:
    """``GEOMINT_TOKEN`` makes every /api call need ``Authorization: Bearer``, but the page
    has no way to send one (no prompt, cookie or header anywhere in static/app), so the
    documented deployment (``GEOMINT_TOKEN=... geomint serve --host 0.0.0.0``) serves a
    page that cannot start."""
    errors: list[str] = []
    app = create_app(agent, token="s3cret-token")
    with _serving(app) as base, _browser_page(base, errors) as page:
        page.goto("/chat/tok?token=s3cret-token")  # the link `geomint serve` prints
        ready = page.evaluate("() => window.geomint.ready")
        said = page.locator(".error-note").all_inner_texts()
        address = page.url
    assert ready is True, said
    assert address.endswith("/chat/tok")  # the token left the address bar (and history)


def test_slow_uploads_cost_only_their_own_requests(in_process: Sandbox) -> None:
    """Six uploads of a polygon that keeps make_valid busy filled the event loop's default
    thread pool with host CPU work, after which chat reads and sandbox calls hung. Now
    each is judged in a confined child killed at its timeout, on intake's own threads."""
    from dataclasses import replace

    agent = make_agent(in_process)
    agent.settings = replace(agent.settings, fetch_timeout_s=2.0)
    app = create_app(agent, limiter=TurnLimiter(per_minute=1000, burst=10))
    star = star_geojson((24.9, 60.1))

    async def go() -> tuple[list[int], dict[str, float]]:
        uploads = [
            asyncio.create_task(
                call(app, "POST", f"/api/chats/star-{i}/uploads?name=star.geojson", content=star)
            )
            for i in range(6)
        ]
        await asyncio.sleep(0.5)  # the first stars are being judged
        waited: dict[str, float] = {}
        started = time.monotonic()
        health = await call(app, "GET", "/api/health")
        waited["health"] = time.monotonic() - started
        started = time.monotonic()
        await asyncio.to_thread(lambda: None)  # the loop's default executor is free
        waited["executor"] = time.monotonic() - started
        started = time.monotonic()
        result = await in_process.arun("return 6 * 7")
        waited["sandbox"] = time.monotonic() - started
        assert health.status_code == 200 and result.value == 42
        statuses = [response.status_code for response in await asyncio.gather(*uploads)]
        return statuses, waited

    statuses, waited = run(go())
    assert all(status == 422 for status in statuses), statuses
    assert all(seconds < 1.0 for seconds in waited.values()), waited
