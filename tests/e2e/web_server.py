"""The real web server for the end-to-end tests and the web benchmark, run as a subprocess.

:func:`running_server` starts ``geomint serve`` on a free loopback port with its own
``GEOMINT_HOME`` and SQLite store, the scripted demo model (no model variables or keys are
passed on) and the offline provider, waits until ``/api/health`` answers 200, and stops it
on exit. When it does not come up, the error carries the server's own output.
"""

from __future__ import annotations

import contextlib
import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Final

import httpx

__all__ = ["BROWSER_ARGS", "CHROMIUM", "RunningServer", "running_server"]

#: Debian's Chromium, driven by Playwright (Playwright's own browser cannot be fetched here).
CHROMIUM: Final = Path("/usr/bin/chromium")
#: Chromium's switches: headless, no outside traffic of its own (updates, sync, probes).
BROWSER_ARGS: Final = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
)
#: Variables that would send the server to a real model or provider, or to another store.
_WITHHELD: Final = (
    "GEOMINT_MODEL",
    "GEOMINT_STORE",
    "OPENAI_API_KEY",
    "ANTHROPIC_API_KEY",
    "OPENAI_BASE_URL",
    "ANTHROPIC_BASE_URL",
    "TOMTOM_API_KEY",
)


@dataclass(frozen=True)
class RunningServer:
    """A started server.

    Attributes:
        url: Its base URL, ``http://127.0.0.1:<port>`` (no trailing slash).
        home: Its ``GEOMINT_HOME`` (the store ``chats.db`` is in it).
        process: The ``geomint serve`` process.
        log: The file its stdout and stderr go to.
    """

    url: str
    home: Path
    process: subprocess.Popen[bytes]
    log: Path

    def output(self) -> str:
        """What the server has printed so far."""
        return self.log.read_text(errors="replace") if self.log.exists() else ""


_REPO: Final = Path(__file__).resolve().parents[2]


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _geomint() -> Path:
    """The ``geomint`` script of the interpreter running this (``.venv/bin/geomint``)."""
    return Path(sys.executable).with_name("geomint")


@contextlib.contextmanager
def running_server(
    home: Path,
    *,
    approve: Sequence[str] = ("code_entry",),
    turns_per_minute: float = 600.0,
    timeout_s: float = 90.0,
    port: int | None = None,
    module: str | None = None,
) -> Iterator[RunningServer]:
    """Start ``geomint serve`` with its state in ``home``; stop it on exit.

    Args:
        home: An empty folder for the server's ``GEOMINT_HOME`` and store.
        approve: Effects that wait for a person's approval in the page.
        turns_per_minute: Chat turns and uploads a minute from one client: the tests ask
            a dozen questions in a minute or two, all from 127.0.0.1, beyond the default 12.
        timeout_s: How long to wait for ``/api/health`` to answer 200.
        port: The loopback port (a free one when None): a test restarting a server
            passes the port of the one it stopped.
        module: A test module to run instead of ``geomint serve`` (``python -m module``
            with the same options), for a server on a scripted model of the test's own,
            e.g. ``"tests.e2e.scripted_serve"``.

    Raises:
        RuntimeError: The server exited or did not answer in time (with its output).
    """
    home.mkdir(parents=True, exist_ok=True)
    port = port or _free_port()
    url = f"http://127.0.0.1:{port}"
    program = [sys.executable, "-m", module] if module else [str(_geomint())]
    command = [
        *program,
        "serve",
        "--host",
        "127.0.0.1",
        "--port",
        str(port),
        "--store",
        f"sqlite:///{home / 'chats.db'}",
        *(arg for tool in approve for arg in ("--approve", tool)),
        "--turns-per-minute",
        str(turns_per_minute),
        "--no-open",
    ]
    env = {k: v for k, v in os.environ.items() if k not in _WITHHELD}
    env.update(GEOMINT_HOME=str(home), GEOMINT_PROVIDER="offline", PYTHONUNBUFFERED="1")
    log = home / "server.log"
    with log.open("wb") as sink:
        process = subprocess.Popen(
            command,
            stdout=sink,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            env=env,
            cwd=_REPO,  # so that `python -m tests.e2e...` finds the tests
        )
    server = RunningServer(url=url, home=home, process=process, log=log)
    try:
        _wait_healthy(server, timeout_s)
        yield server
    finally:
        _stop(process)


def _wait_healthy(server: RunningServer, timeout_s: float) -> None:
    deadline = time.monotonic() + timeout_s
    last = "no answer yet"
    while time.monotonic() < deadline:
        code = server.process.poll()
        if code is not None:
            raise RuntimeError(
                f"`geomint serve` exited with status {code} before answering "
                f"/api/health; its output:\n{server.output()}"
            )
        try:
            response = httpx.get(f"{server.url}/api/health", timeout=5)
        except httpx.HTTPError as exc:
            last = f"{type(exc).__name__}: {exc}"
        else:
            if response.status_code == 200:
                return
            last = f"HTTP {response.status_code}: {response.text[:500]}"
        time.sleep(0.2)
    raise RuntimeError(
        f"`geomint serve` did not answer /api/health with 200 within {timeout_s:.0f} s "
        f"(last: {last}); its output:\n{server.output()}"
    )


def _stop(process: subprocess.Popen[bytes]) -> None:
    if process.poll() is None:
        process.terminate()
        try:
            process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=15)
