"""Measure the web app: how fast the page is usable, and how soon an answer starts.

Run: ``.venv/bin/python benchmarks/bench_web.py [--runs N] [--only page|stream|big|long|mapcode]``.
Starts ``geomint serve`` as the end-to-end tests do (``tests/e2e/web_server.py``: the
scripted demo model, the offline provider, a throwaway SQLite store) and drives Debian's
Chromium (``/usr/bin/chromium``) through Playwright. Each browser run opens ``/`` in a
fresh context (a first visit, empty cache, a new chat) and measures, from the navigation's start:

- DOMContentLoaded;
- the map's first ``idle`` (style, basemap tiles and sources drawn);
- ``window.geomint.ready`` resolved (map style loaded and the chat read back);
- the map ``idle`` after ready (the chat's layers drawn too);

then asks "What can you do?" and measures from the click on Send to the first text in the
assistant's message, all with the page's own clock. Separately, the time from sending a
turn to the first ``text-delta`` chunk is measured with httpx against ``/api/chat``, and
to the end of the stream.

Then, for the attribute table (issue 18), a chat holding a 100,000-point upload
(``tests/e2e/layers.py``) is opened in a fresh context per run, measuring: the layer drawn
(from its GeoJSON parsed on the page, or the map loaded if that is later, to the first map
``idle`` with it drawn: its source loaded, or, drawn by the page's own point layer
(``static/app/points.js``), its points drawn in a frame); the layer hidden, and
shown again (``window.geomint.setDisplay`` to ``idle``); its table opened (the click on
"Table" to the next painted frame), scrolled to its last row, and sorted by its text
column (each to the next painted frame). Last, a chat of 50 turns (the demo's questions
in turn, built through the API) is reloaded: its ``window.geomint.ready``, from the
reload's navigation start. For map code (issue 19), a chat holding a 10,000-point upload
is opened per run and a map_change part handed to the page as the stream would: a circle
layer over a new GeoJSON source of the entry's 10,000 features (fetched from the chat's
route), and a heatmap over the entry's own source, each from the part's arrival to the
map's next ``idle``. Prints the median and p90 of each, with its target, as a Markdown
table, and the machine's load average.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import platform
import secrets
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from tests.e2e.layers import upload_point_grid
from tests.e2e.web_server import BROWSER_ARGS, CHROMIUM, running_server

if TYPE_CHECKING:
    from playwright.sync_api import Browser, BrowserContext

QUESTION = "What can you do?"
#: The long chat's questions, asked in turn: the demo model's, less the one that waits for
#: an approval (the union of the parks).
LONG_CHAT = (
    QUESTION,
    "Bar chart of these places by category",
    "Which cafés are inside the Esplanade park?",
    "Cafés within 10 minutes' walk of the central station",
    "Route from the central station to the cathedral avoiding motorways",
)
LONG_CHAT_TURNS = 50
BIG_LAYER_POINTS = 100_000
#: The features of the source a map-code diff draws (issue 19).
MAPCODE_POINTS = 10_000
#: The issue's targets (ms); a measurement without one has none.
TARGETS = {
    "100,000 points: GeoJSON parsed (map loaded) → drawn, idle": 1500,
    "100,000 points: hidden (setDisplay → idle)": 200,
    "100,000 points: shown again (setDisplay → idle)": 200,
    "100,000 points: table opened (click → painted)": 300,
    "100,000 points: table scrolled to its end (→ painted)": 100,
    "50-turn chat: reload → window.geomint.ready": 2000,
    "map code: circle layer over a new 10,000-feature source (part → idle)": 100,
    "map code: heatmap over a 10,000-point entry (part → idle)": 100,
}

#: Runs before the page's scripts: note when window.geomint appears, when its ready
#: resolves, and every map `idle`, on the page's clock (ms since the navigation started).
_HOOKS = """(() => {
    const marks = window.__bench = {idle: [], drawnSources: []};
    let value;
    Object.defineProperty(window, 'geomint', {
        configurable: true,
        get() { return value; },
        set(given) {
            value = given;
            if (given && given.map && !marks.hooked) {
                marks.hooked = true;
                const map = given.map;
                map.once('load', () => { marks.load = performance.now(); });
                map.on('idle', () => {
                    marks.idle.push(performance.now());
                    // The entries drawn at this idle: a source loaded, with its layers, or
                    // a layer of many points (the page's own, points.js) that drew its data.
                    const order = map.getLayersOrder();
                    marks.drawnSources.push([...new Set(order
                        .filter((id) => id.startsWith('entry-') && id.endsWith('-circle'))
                        .map((id) => id.slice(0, -'-circle'.length)))]
                        .filter((id) => map.getSource(id) && map.isSourceLoaded(id))
                        .concat(order
                            .filter((id) => id.startsWith('entry-') && id.endsWith('-points')
                                && map.getLayer(id).implementation.drawn)
                            .map((id) => id.slice(0, -'-points'.length))));
                });
            }
            if (given && given.ready && !marks.waiting) {
                marks.waiting = true;
                Promise.resolve(given.ready).then(() => { marks.ready = performance.now(); });
            }
        },
    });
})();"""

_LOAD = """async () => {
    await window.geomint.ready;
    const marks = window.__bench;
    const exact = marks.ready !== undefined;
    const ready = exact ? marks.ready : performance.now();
    const map = window.geomint.map;
    if (!marks.idle.some((t) => t >= ready)) {
        await new Promise((resolve) => {
            const timer = setTimeout(resolve, 15000);
            map.once('idle', () => { clearTimeout(timer); resolve(); });
            map.triggerRepaint();
        });
    }
    const nav = performance.getEntriesByType('navigation')[0];
    return {
        dom: nav.domContentLoadedEventEnd,
        ready,
        exact,
        firstIdle: marks.idle.length ? marks.idle[0] : null,
        drawn: marks.idle.find((t) => t >= ready) ?? null,
    };
}"""

_FIRST_TOKEN = """async (question) => {
    const selector = '#messages .msg[data-role="assistant"] .text';
    const before = document.querySelectorAll(selector).length;
    const prompt = document.querySelector('#prompt');
    prompt.value = question;
    prompt.dispatchEvent(new Event('input', {bubbles: true}));
    const seen = new Promise((resolve, fail) => {
        const timer = setTimeout(() => fail(new Error('no answer text within 60 s')), 60000);
        const check = () => {
            const parts = document.querySelectorAll(selector);
            if (parts.length > before && parts[parts.length - 1].textContent.trim()) {
                clearTimeout(timer);
                observer.disconnect();
                resolve(performance.now());
                return true;
            }
            return false;
        };
        const observer = new MutationObserver(check);
        observer.observe(document.querySelector('#messages'),
                         {childList: true, subtree: true, characterData: true});
    });
    const start = performance.now();
    document.querySelector('#send').click();
    const first = await seen;
    await new Promise((resolve) => {
        const done = () => document.body.dataset.busy === 'false';
        if (done()) return resolve();
        new MutationObserver((_, observer) => {
            if (done()) { observer.disconnect(); resolve(); }
        }).observe(document.body, {attributes: true, attributeFilter: ['data-busy']});
    });
    return {first: first - start, end: performance.now() - start};
}"""


#: Runs after _HOOKS: note when an entry's GeoJSON fetched by URL (a large entry) has been
#: parsed, which is when its data has arrived on the page.
_DATA_HOOK = """(() => {
    const fetchOriginal = window.fetch;
    window.fetch = async (...args) => {
        const response = await fetchOriginal(...args);
        if (String(args[0]).includes('/entries/')) {
            const json = response.json.bind(response);
            response.json = async () => {
                const data = await json();
                window.__bench.data = performance.now();
                return data;
            };
        }
        return response;
    };
})();"""

#: After ready: from when the big layer could first be drawn (its data parsed on the page,
#: and the map loaded: the page reads a chat while the map loads, so its data may come
#: first) to the first map idle with its source loaded and drawn.
_BIG_DRAWN = """async (entryId) => {
    await window.geomint.ready;
    const marks = window.__bench;
    if (marks.data === undefined) throw new Error('the big layer was not fetched by URL');
    const start = Math.max(marks.data, marks.load);
    const drawn = () => marks.idle.find((t, i) => t >= start
        && marks.drawnSources[i].includes(`entry-${entryId}`));
    const map = window.geomint.map;
    while (drawn() === undefined) {
        await new Promise((resolve) => map.once('idle', () => setTimeout(resolve, 0)));
    }
    return drawn() - start;
}"""

#: A function that resolves after the browser has painted the next frame.
_PAINTED = """const painted = () => new Promise((resolve) =>
    requestAnimationFrame(() => setTimeout(resolve, 0)));"""

_TOGGLE = """async (entryId) => {
    const map = window.geomint.map;
    const toggle = async (visible) => {
        const idle = new Promise((resolve) => map.once('idle', () => resolve(performance.now())));
        const start = performance.now();
        window.geomint.setDisplay(entryId, visible);
        return (await idle) - start;
    };
    return { hidden: await toggle(false), shown: await toggle(true) };
}"""

_TABLE = f"""async (entryId) => {{
    {_PAINTED}
    const button = document.querySelector(
        `#layer-list .layer[data-entry-id="${{entryId}}"] .layer-table`);
    let start = performance.now();
    button.click();
    await painted();
    const opened = performance.now() - start;
    const grid = document.querySelector('#attribute-table [role=grid]');
    const rows = grid.querySelectorAll('.table-body [role=row]').length;
    start = performance.now();
    grid.scrollTop = grid.scrollHeight;
    await painted();
    const scrolled = performance.now() - start;
    const last = grid.querySelector(`[aria-rowindex="${{grid.getAttribute('aria-rowcount')}}"]`);
    if (!last) throw new Error('the last row was not drawn after the scroll');
    const name = [...grid.querySelectorAll('[role=columnheader] button')]
        .find((header) => header.textContent === 'name');
    start = performance.now();
    name.click();
    await painted();
    return {{ opened, scrolled, sorted: performance.now() - start, rows }};
}}"""


def _median_p90(values: list[float]) -> tuple[float, float]:
    ordered = sorted(values)
    return statistics.median(ordered), ordered[max(0, math.ceil(0.9 * len(ordered)) - 1)]


def _fresh_context(browser: Browser, url: str) -> BrowserContext:
    """A context with an empty cache that reaches only the server, with the page hooks."""
    context = browser.new_context(viewport={"width": 1280, "height": 800}, service_workers="block")
    context.route(
        "**/*",
        lambda route, request: (
            route.continue_()
            if request.url.startswith((url, "data:", "blob:"))
            else route.abort("blockedbyclient")
        ),
    )
    context.add_init_script(_HOOKS)
    context.add_init_script(_DATA_HOOK)
    return context


def browser_runs(browser: Browser, url: str, runs: int) -> dict[str, list[float]]:
    """Page load and first-token times in Chromium, one fresh context per run."""
    times: dict[str, list[float]] = {}
    inexact = 0
    for run in range(runs + 1):  # the first run warms the server and is not counted
        context = _fresh_context(browser, url)
        page = context.new_page()
        page.goto(f"{url}/")
        page.wait_for_function("() => window.geomint && window.geomint.ready")
        load: dict[str, Any] = page.evaluate(_LOAD)
        answer: dict[str, Any] = page.evaluate(_FIRST_TOKEN, QUESTION)
        context.close()
        if run == 0:
            continue
        inexact += not load["exact"]
        for name, value in (
            ("DOMContentLoaded", load["dom"]),
            ("map first idle", load["firstIdle"]),
            ("window.geomint.ready", load["ready"]),
            ("map idle after ready (chat layers drawn)", load["drawn"]),
            ("click Send → first answer text (page)", answer["first"]),
            ("click Send → run finished (page)", answer["end"]),
        ):
            if value is not None:
                times.setdefault(name, []).append(float(value))
        print(f"browser run {run}: {json.dumps(load)} {json.dumps(answer)}", flush=True)
    if inexact:
        print(
            f"note: in {inexact} run(s) window.geomint was not assigned as a plain property, "
            "so 'ready' is when the benchmark saw it (an upper bound)",
            flush=True,
        )
    return times


def _timed_turn(client: httpx.Client, chat_id: str, question: str) -> tuple[float | None, float]:
    """Ask ``question`` in the chat through the API; the ms to the first ``text-delta``
    chunk (None when none came) and to the end of the stream."""
    body = {
        "id": chat_id,
        "messages": [{"id": "m1", "role": "user", "parts": [{"type": "text", "text": question}]}],
    }
    first: float | None = None
    start = time.perf_counter()
    with client.stream("POST", "/api/chat", json=body) as response:
        response.raise_for_status()
        for line in response.iter_lines():
            if first is None and line.startswith("data: {"):
                chunk = json.loads(line.removeprefix("data: "))
                if chunk.get("type") == "text-delta":
                    first = (time.perf_counter() - start) * 1000
    return first, (time.perf_counter() - start) * 1000


def stream_runs(url: str, runs: int) -> dict[str, list[float]]:
    """The time to the first ``text-delta`` chunk and to the end, straight from the API."""
    times: dict[str, list[float]] = {}
    with httpx.Client(base_url=url, timeout=60) as client:
        for run in range(runs + 1):
            chat_id = f"bench-{secrets.token_hex(6)}"
            client.post(f"/api/chats/{chat_id}").raise_for_status()
            first, end = _timed_turn(client, chat_id, QUESTION)
            if first is None:
                raise RuntimeError(f"the answer to {QUESTION!r} streamed no text-delta chunk")
            if run == 0:
                continue
            times.setdefault("POST /api/chat → first text-delta (httpx)", []).append(first)
            times.setdefault("POST /api/chat → end of stream (httpx)", []).append(end)
            print(f"stream run {run}: first {first:.0f} ms, end {end:.0f} ms", flush=True)
    return times


def big_layer_runs(browser: Browser, url: str, runs: int) -> dict[str, list[float]]:
    """A 100,000-point layer drawn, hidden, shown, and its attribute table used."""
    chat_id = f"bench-big-{secrets.token_hex(4)}"
    start = time.perf_counter()
    entry_id = upload_point_grid(url, chat_id, BIG_LAYER_POINTS)
    print(
        f"uploaded {BIG_LAYER_POINTS:,} points in {time.perf_counter() - start:.1f} s", flush=True
    )
    times: dict[str, list[float]] = {}
    for run in range(runs + 1):  # the first run warms the server and is not counted
        context = _fresh_context(browser, url)
        page = context.new_page()
        page.goto(f"{url}/chat/{chat_id}")
        page.wait_for_function("() => window.geomint && window.geomint.ready")
        drawn: float = page.evaluate(_BIG_DRAWN, entry_id)
        toggled: dict[str, float] = page.evaluate(_TOGGLE, entry_id)
        page.locator("#layers > summary").click()
        table: dict[str, float] = page.evaluate(_TABLE, entry_id)
        context.close()
        print(f"big layer run {run}: drawn {drawn:.0f} {json.dumps(toggled)} {json.dumps(table)}")
        if run == 0:
            continue
        for name, value in (
            ("100,000 points: GeoJSON parsed (map loaded) → drawn, idle", drawn),
            ("100,000 points: hidden (setDisplay → idle)", toggled["hidden"]),
            ("100,000 points: shown again (setDisplay → idle)", toggled["shown"]),
            ("100,000 points: table opened (click → painted)", table["opened"]),
            ("100,000 points: table scrolled to its end (→ painted)", table["scrolled"]),
            ("100,000 points: table sorted by its text column (click → painted)", table["sorted"]),
        ):
            times.setdefault(name, []).append(float(value))
    return times


_APPLY_DIFF = """async ([part, source]) => {
    const map = window.geomint.map;
    if (!map.loaded()) await new Promise((resolve) => map.once('idle', resolve));
    const start = performance.now();
    const idle = new Promise((resolve) => map.once('idle', resolve));
    window.geomint.mapCode.add(part);
    const applied = performance.now() - start;  // the page's MapLibre calls, returned
    await idle;
    if (source && !map.isSourceLoaded(source)) throw new Error(`${source} is not loaded at idle`);
    return {applied, drawn: performance.now() - start};
}"""


def _map_change(change_id: str, diff: dict[str, Any]) -> dict[str, Any]:
    """A map_change part as the stream carries it (the page reads only these fields)."""
    empty = {"removed": {"sources": [], "layers": []}, "updated": {"layers": []}}
    return {"type": "map_change", "change_id": change_id, "intent": "bench",
            "description": "bench", "code": "", "usage": {},
            "diff": {**empty, "camera": None, "animations": [], **diff}}  # fmt: skip


def mapcode_runs(browser: Browser, url: str, runs: int) -> dict[str, list[float]]:
    """A map change over 10,000 features applied in the page: the part to map idle."""
    chat_id = f"bench-mapcode-{secrets.token_hex(4)}"
    entry_id = upload_point_grid(url, chat_id, MAPCODE_POINTS)
    source = {"type": "geojson", "data": f"/api/chats/{chat_id}/entries/{entry_id}?version=1"}
    dots = _map_change("m1", {"added": {"sources": {"dots": source}, "layers": [
        {"id": "dots", "type": "circle", "source": "dots", "before": None,
         "paint": {"circle-radius": 3, "circle-color": ["interpolate", ["linear"],
                   ["get", "value"], 0, "#2166ac", 100, "#b2182b"]}}]}})  # fmt: skip
    heat = _map_change("m2", {"added": {"sources": {}, "layers": [
        {"id": "heat", "type": "heatmap", "source": entry_id, "before": f"{entry_id}-circle",
         "paint": {"heatmap-radius": 20, "heatmap-opacity": 0.8}}]}})  # fmt: skip
    times: dict[str, list[float]] = {}
    for run in range(runs + 1):  # the first run warms the server and is not counted
        context = _fresh_context(browser, url)
        page = context.new_page()
        page.goto(f"{url}/chat/{chat_id}")
        page.wait_for_function("() => window.geomint && window.geomint.ready")
        new_source: dict[str, float] = page.evaluate(_APPLY_DIFF, [dots, "mapcode-dots"])
        over_entry: dict[str, float] = page.evaluate(_APPLY_DIFF, [heat, None])
        context.close()
        print(f"map code run {run}: new source {new_source}, over the entry {over_entry}")
        if run == 0:
            continue
        for name, value in (
            (
                "map code: circle layer over a new 10,000-feature source (part → applied)",
                new_source["applied"],
            ),
            (
                "map code: circle layer over a new 10,000-feature source (part → idle)",
                new_source["drawn"],
            ),
            ("map code: heatmap over a 10,000-point entry (part → applied)", over_entry["applied"]),
            ("map code: heatmap over a 10,000-point entry (part → idle)", over_entry["drawn"]),
        ):
            times.setdefault(name, []).append(float(value))
    return times


def long_chat_runs(browser: Browser, url: str, runs: int) -> dict[str, list[float]]:
    """A chat of :data:`LONG_CHAT_TURNS` turns reloaded: the time to ready."""
    chat_id = f"bench-long-{secrets.token_hex(4)}"
    start = time.perf_counter()
    with httpx.Client(base_url=url, timeout=120) as client:
        client.post(f"/api/chats/{chat_id}").raise_for_status()
        for turn in range(LONG_CHAT_TURNS):
            _timed_turn(client, chat_id, LONG_CHAT[turn % len(LONG_CHAT)])
    print(f"asked {LONG_CHAT_TURNS} questions in {time.perf_counter() - start:.0f} s", flush=True)
    times: dict[str, list[float]] = {}
    for run in range(runs + 1):
        context = _fresh_context(browser, url)
        page = context.new_page()
        page.goto(f"{url}/chat/{chat_id}")
        page.wait_for_function("() => window.geomint && window.geomint.ready")
        page.evaluate(_LOAD)
        page.reload()
        page.wait_for_function("() => window.geomint && window.geomint.ready")
        load: dict[str, Any] = page.evaluate(_LOAD)
        messages = page.locator("#messages .msg[data-role='user']").count()
        context.close()
        print(f"long chat run {run}: {json.dumps(load)}, {messages} questions shown", flush=True)
        if messages != LONG_CHAT_TURNS:
            raise RuntimeError(
                f"the reloaded chat shows {messages} questions, not {LONG_CHAT_TURNS}"
            )
        if run == 0:
            continue
        times.setdefault("50-turn chat: reload → window.geomint.ready", []).append(load["ready"])
        times.setdefault("50-turn chat: reload → map idle after ready", []).append(load["drawn"])
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--runs", type=int, default=7, help="measured runs of each (after 1 warm-up)"
    )
    parser.add_argument(
        "--only",
        choices=["page", "stream", "big", "long", "mapcode"],
        action="append",
        help="run only these parts (repeatable): the first visit, the stream, the "
        "100,000-point layer, the 50-turn chat, a map-code diff over 10,000 features",
    )
    args = parser.parse_args()
    parts = set(args.only or ["page", "stream", "big", "long", "mapcode"])
    from playwright.sync_api import sync_playwright

    if not CHROMIUM.exists():
        sys.exit(f"{CHROMIUM} is not installed (./scripts/bootstrap installs it as root)")
    print(
        f"{platform.platform()}, Python {platform.python_version()}, {os.cpu_count()} CPUs; "
        f"{args.runs} runs after one warm-up",
        flush=True,
    )
    with (
        tempfile.TemporaryDirectory(prefix="geomint-bench-web-") as folder,
        running_server(Path(folder) / "home") as server,
        sync_playwright() as driver,
    ):
        browser = driver.chromium.launch(executable_path=str(CHROMIUM), args=list(BROWSER_ARGS))
        times: dict[str, list[float]] = {}
        if "page" in parts:
            times.update(browser_runs(browser, server.url, args.runs))
        if "stream" in parts:
            times.update(stream_runs(server.url, args.runs))
        if "big" in parts:
            times.update(big_layer_runs(browser, server.url, args.runs))
        if "long" in parts:
            times.update(long_chat_runs(browser, server.url, args.runs))
        if "mapcode" in parts:
            times.update(mapcode_runs(browser, server.url, args.runs))
        browser.close()
    print("\n| What (ms, demo model) | Median | p90 | Target | Runs |\n|---|---:|---:|---:|---:|")
    for what, values in times.items():
        median, p90 = _median_p90(values)
        target = TARGETS.get(what)
        met = "" if target is None else f"≤ {target:,}" + ("" if median <= target else " (missed)")
        print(f"| {what} | {median:.0f} | {p90:.0f} | {met} | {len(values)} |")
    print(f"\nload average (1, 5, 15 min) at the end: {os.getloadavg()}")


if __name__ == "__main__":
    main()
