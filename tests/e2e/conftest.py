"""Fixtures for the web app's end-to-end tests: the real server and a headless Chromium.

The server is ``geomint serve`` with the scripted demo model and the offline provider,
started once for this folder's tests (:mod:`tests.e2e.web_server`). Each test gets a fresh
browser context whose requests may go only to the server: anything else is aborted and
fails the test, as do console errors and uncaught page errors (a test that expects one
says so with ``browser_log.allow``). Without ``/usr/bin/chromium`` the tests are skipped,
or fail when the ``CI`` environment variable is set.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlsplit

import pytest
from playwright.sync_api import (
    Browser,
    BrowserContext,
    ConsoleMessage,
    Error,
    Page,
    Playwright,
    Request,
    Route,
    WebSocket,
    sync_playwright,
)
from tests.e2e.web_server import BROWSER_ARGS, CHROMIUM, running_server

#: Where ``shot`` writes its PNGs when set (``./scripts/screenshots`` sets it and copies
#: them into docs/screenshots); otherwise a temporary folder, so a test run never rewrites
#: tracked files.
SCREENSHOTS_ENV = "GEOMINT_SCREENSHOTS_DIR"
VIEWPORT = {"width": 1280, "height": 800}
#: Console errors every test tolerates, each with its reason. Keep this empty if you can:
#: a test that expects an error allows it itself (``browser_log.allow``).
ALWAYS_ALLOWED: tuple[tuple[str, str], ...] = ()
#: Schemes that never leave the browser.
_LOCAL_SCHEMES = frozenset({"data", "blob", "about", "chrome-error"})


@pytest.hookimpl(tryfirst=True)  # before xdist's own hook reads the groups
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Keep the browser tests on one xdist worker (``--dist loadgroup``).

    One server and one Chromium then serve them all, and the other worker runs the rest of
    the suite beside them rather than a second browser rendering in software.
    """
    here = Path(__file__).parent
    for item in items:
        if item.path.is_relative_to(here):
            item.add_marker(pytest.mark.xdist_group("e2e"))


@pytest.fixture(scope="session")
def chromium() -> Path:
    """Debian's Chromium, or a skip (a failure on CI) when it is not installed."""
    if not CHROMIUM.exists():
        reason = (
            f"{CHROMIUM} is not installed: the e2e tests need Debian's chromium package "
            "(./scripts/bootstrap installs it when run as root)"
        )
        if os.environ.get("CI"):
            pytest.fail(reason)
        pytest.skip(reason)
    return CHROMIUM


@pytest.fixture(scope="package")
def server(chromium: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """The base URL of a real ``geomint serve`` (demo model, offline provider, SQLite)."""
    with running_server(tmp_path_factory.mktemp("geomint-serve")) as running:
        yield running.url


@pytest.fixture(scope="package")
def playwright() -> Iterator[Playwright]:
    """Playwright's sync API, started once for these tests.

    Package-scoped, not session-scoped: while it runs, its event loop counts as running in
    the main thread, and every later test that calls ``asyncio.run`` would fail.
    """
    driver = sync_playwright().start()
    yield driver
    driver.stop()


@pytest.fixture(scope="package")
def browser(chromium: Path, playwright: Playwright) -> Iterator[Browser]:
    """Headless Chromium, launched once for these tests."""
    launched = playwright.chromium.launch(executable_path=str(chromium), args=list(BROWSER_ARGS))
    yield launched
    launched.close()


@dataclass
class BrowserLog:
    """What a page did that a test must know of: outside requests and errors.

    Attributes:
        outside: URLs the page tried to reach beyond the server (each was aborted).
        errors: Console errors and uncaught page errors, as text.
        allowed: ``(pattern, reason)`` pairs of console errors a test expects.
    """

    server: str
    outside: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    allowed: list[tuple[str, str]] = field(default_factory=lambda: list(ALWAYS_ALLOWED))

    def allow(self, pattern: str, reason: str) -> None:
        """Tolerate console errors matching ``pattern`` (a regex) in this test."""
        self.allowed.append((pattern, reason))

    def is_local(self, url: str) -> bool:
        parts = urlsplit(url)
        if parts.scheme in _LOCAL_SCHEMES:
            return True
        return parts.scheme in {"http", "https", "ws", "wss"} and parts.hostname == "127.0.0.1"

    def unexpected(self) -> list[str]:
        return [
            error
            for error in self.errors
            if not any(re.search(pattern, error) for pattern, _ in self.allowed)
        ]


@pytest.fixture
def browser_log(server: str) -> BrowserLog:
    """This test's record of outside requests and page errors (see :class:`BrowserLog`)."""
    return BrowserLog(server=server)


@pytest.fixture
def context(browser: Browser, server: str, browser_log: BrowserLog) -> Iterator[BrowserContext]:
    """A fresh browser context (no cookies or storage) that can reach only the server."""
    made = browser.new_context(
        viewport=VIEWPORT,  # type: ignore[arg-type]
        base_url=server,
        service_workers="block",  # so that every request passes the route below
    )

    def guard(route: Route, request: Request) -> None:
        if browser_log.is_local(request.url):
            route.continue_()
        else:
            browser_log.outside.append(request.url)
            route.abort("blockedbyclient")

    made.route("**/*", guard)
    yield made
    made.close()


@pytest.fixture
def page(context: BrowserContext, browser_log: BrowserLog) -> Iterator[Page]:
    """A page in a 1280x800 viewport; fails the test on outside requests or page errors."""
    opened = context.new_page()

    def console(message: ConsoleMessage) -> None:
        if message.type == "error":
            where = message.location.get("url", "")
            browser_log.errors.append(f"console: {message.text} ({where})")

    def page_error(error: Error) -> None:
        browser_log.errors.append(f"pageerror: {error.name}: {error.message}\n{error.stack}")

    def websocket(socket: WebSocket) -> None:
        if not browser_log.is_local(socket.url):
            browser_log.outside.append(socket.url)

    opened.on("console", console)
    opened.on("pageerror", page_error)
    opened.on("websocket", websocket)
    yield opened
    problems = []
    if browser_log.outside:
        problems.append(
            "the page tried to reach beyond the server (it must work offline):\n  "
            + "\n  ".join(browser_log.outside)
        )
    unexpected = browser_log.unexpected()
    if unexpected:
        problems.append("the page logged errors:\n  " + "\n  ".join(unexpected))
    if problems:
        pytest.fail("\n".join(problems), pytrace=False)


Shot = Callable[[Page, str], Path]


@pytest.fixture(scope="session")
def screenshots_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """``$GEOMINT_SCREENSHOTS_DIR`` when set, else a temporary folder of this session."""
    named = os.environ.get(SCREENSHOTS_ENV)
    if named:
        folder = Path(named)
        folder.mkdir(parents=True, exist_ok=True)
        return folder
    return tmp_path_factory.mktemp("screenshots")


@pytest.fixture
def shot(screenshots_dir: Path) -> Shot:
    """``shot(page, name)``: save a PNG of the page to ``<screenshots_dir>/<name>.png``.

    It waits for the map to finish drawing first (MapLibre's ``idle``), so the picture
    shows the layers rather than tiles still loading.
    """

    def take(page: Page, name: str) -> Path:
        page.evaluate(
            """() => new Promise((resolve) => {
                const map = window.geomint && window.geomint.map;
                if (!map) return resolve(false);
                const timer = setTimeout(() => resolve(false), 10000);
                map.once('idle', () => { clearTimeout(timer); resolve(true); });
                map.triggerRepaint();
            })"""
        )
        path = screenshots_dir / f"{name}.png"
        page.screenshot(path=path)
        return path

    return take
