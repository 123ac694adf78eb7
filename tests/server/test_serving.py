"""What ``geomint serve`` hands uvicorn, driven over real loopback sockets: half-sent
requests cannot starve other clients, and ``X-Forwarded-For`` is not believed from just
anyone.

Each test here failed on the server as it was before: it proves a finding of the red team
(issue 15, findings 4 and 5).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import resource
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

import pytest
import uvicorn
from tests.server.web import make_agent

from geomint import audit
from geomint.sandbox import Sandbox
from geomint.server import create_app
from geomint.server.app import TurnLimiter
from geomint.server.serving import uvicorn_options

TOKEN = "t0ken-for-tests"

#: Opens ``N`` connections to ``PORT``, sends each half a request, and holds them all
#: until its stdin closes. A child of its own, with the open-file limit raised again: its
#: sockets must not count against the server's limit, as they would not in the attack.
_ATTACKER = """
import resource, socket, sys
_, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
port, n = int(sys.argv[1]), int(sys.argv[2])
held = []
for _ in range(n):
    s = socket.create_connection(("127.0.0.1", port), timeout=5)
    s.sendall(b"GET /api/health HTTP/1.1\\r\\nHost: 127.0.0.1\\r\\nX-Slow: ")
    held.append(s)
print(len(held), flush=True)
sys.stdin.read()
"""


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@contextlib.contextmanager
def _running(server: uvicorn.Server, target: Callable[[], object]) -> Iterator[None]:
    thread = threading.Thread(target=target, daemon=True)
    thread.start()
    deadline = time.monotonic() + 30
    while not server.started:
        assert thread.is_alive(), "the server stopped before it started"
        assert time.monotonic() < deadline, "the server did not start"
        time.sleep(0.02)
    try:
        yield
    finally:
        server.should_exit = True
        thread.join(10)


@contextlib.contextmanager
def _geomint_serve(monkeypatch: pytest.MonkeyPatch, port: int) -> Iterator[None]:
    """``geomint serve`` on ``port`` with a token, serving from a thread of this process
    with exactly the options it hands uvicorn."""
    from geomint._commands.serve import serve

    servers: list[uvicorn.Server] = []
    started = threading.Event()

    def run(app: Any, **options: Any) -> None:
        servers.append(uvicorn.Server(uvicorn.Config(app, **options)))
        started.set()
        servers[0].run()

    monkeypatch.setattr(uvicorn, "run", run)
    monkeypatch.setenv("GEOMINT_TOKEN", TOKEN)

    def serving() -> None:
        serve(host="127.0.0.1", port=port, store="memory:", mode="restricted", open_browser=False)

    thread = threading.Thread(target=serving, daemon=True)
    thread.start()
    assert started.wait(60), "geomint serve did not reach uvicorn"
    with _running(servers[0], thread.join):
        yield


@contextlib.contextmanager
def _open_file_limit(soft: int) -> Iterator[None]:
    """This process's open-file limit lowered to ``soft`` (Linux's usual default is 1024)."""
    before = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (min(soft, before[1]), before[1]))
    try:
        yield
    finally:
        resource.setrlimit(resource.RLIMIT_NOFILE, before)


def _until(condition: Callable[[], bool], seconds: float) -> None:
    """Wait for ``condition``, at most ``seconds`` (the asserts after it say what failed)."""
    deadline = time.monotonic() + seconds
    while not condition() and time.monotonic() < deadline:
        time.sleep(0.05)


def _get(port: int, client: socket.socket, *headers: str) -> tuple[int, float]:
    """GET ``/api/health`` on ``client`` (a new socket): the status (0 when nothing came
    within 5 s) and the seconds it took."""
    start = time.monotonic()
    lines = ["GET /api/health HTTP/1.1", "Host: 127.0.0.1", "Connection: close", *headers]
    with client:
        client.settimeout(5.0)
        client.connect(("127.0.0.1", port))
        client.sendall(("\r\n".join(lines) + "\r\n\r\n").encode())
        try:
            head = client.recv(64)
        except TimeoutError:
            head = b""
    status = int(head.split()[1]) if head.startswith(b"HTTP/1.1") else 0
    return status, time.monotonic() - start


@pytest.mark.slow  # about 6 s: the attacker's connections wait their turn in the listen queue
def test_half_sent_requests_do_not_starve_a_client_with_the_token(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """1,100 connections from loopback that each sent half a request used up the
    server's 1,024 file descriptors: uvicorn never closes a request that does not finish,
    so a client holding the token, from the same address, went unanswered until the
    attacker let go."""
    port = _free_port()
    audit.reset()
    with _open_file_limit(1024), _geomint_serve(monkeypatch, port):
        # The client's sockets exist before the attack: in this process, they would
        # otherwise fail for want of a descriptor rather than wait for an answer.
        _get(port, socket.socket())
        clients = [socket.socket(), socket.socket()]
        attacker = subprocess.Popen(
            [sys.executable, "-c", _ATTACKER, str(port), "1100"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        try:
            assert attacker.stdout is not None
            assert attacker.stdout.readline().strip() == "1100"
            # Held, not flooding: once the server has taken the attacker's connections
            # off the listen queue (shedding most), the client must be answered at once.
            _until(lambda: audit.counts()["connection_shed"] >= 1100 - 1024 // 4, 15)
            answers = [_get(port, client, f"Authorization: Bearer {TOKEN}") for client in clients]
        finally:
            attacker.communicate("", timeout=30)
    assert [status for status, _ in answers] == [200, 200]
    assert max(seconds for _, seconds in answers) < 1.0, answers
    assert audit.counts()["connection_shed"] >= 1100 - 1024 // 4


def _tiny_app(stream_s: float) -> Any:
    """An ASGI app that answers ``/stream`` (and ``/api/stream``) with a part now and one
    after ``stream_s``."""

    async def app(scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            return
        await send({"type": "http.response.start", "status": 200, "headers": []})
        if scope["path"].endswith("/stream"):
            await send({"type": "http.response.body", "body": b"first ", "more_body": True})
            await asyncio.sleep(stream_s)
        await send({"type": "http.response.body", "body": b"done"})

    return app


@contextlib.contextmanager
def _guarded(app: Any, **options: Any) -> Iterator[int]:
    port = _free_port()
    config = uvicorn.Config(
        app, host="127.0.0.1", port=port, log_level="warning", **uvicorn_options(**options)
    )
    server = uvicorn.Server(config)
    with _running(server, server.run):
        yield port


def _closed_within(connection: socket.socket, seconds: float) -> bool:
    """Whether the server closes ``connection`` (after whatever it sends) within ``seconds``."""
    connection.settimeout(seconds)
    try:
        while connection.recv(4096):
            pass
    except TimeoutError:
        return False
    except ConnectionResetError:
        return True
    return True


def test_a_request_that_does_not_finish_is_closed_at_the_deadline(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """Trickling bytes do not extend the deadline; an idle keep-alive is closed too, and a
    streamed answer longer than the deadline is not cut."""
    audit.reset()
    with (
        caplog.at_level(logging.WARNING, logger="geomint.security"),
        _guarded(_tiny_app(stream_s=1.0), header_timeout_s=0.4) as port,
    ):
        slow = socket.create_connection(("127.0.0.1", port))
        slow.sendall(b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\n")
        idle = socket.create_connection(("127.0.0.1", port))
        idle.sendall(b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        streaming = socket.create_connection(("127.0.0.1", port))
        streaming.sendall(b"GET /stream HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        for _ in range(3):
            time.sleep(0.1)
            slow.sendall(b"X-Slow: a\r\n")
        assert _closed_within(slow, 2.0)
        assert idle.recv(4096).startswith(b"HTTP/1.1 200")
        assert _closed_within(idle, 2.0)
        streaming.settimeout(3.0)
        received = b""
        while b"done" not in received:
            chunk = streaming.recv(4096)
            assert chunk, f"the stream was cut: {received!r}"
            received += chunk
        for connection in (slow, idle, streaming):
            connection.close()
    assert audit.counts()["slow_connection_closed"] == 1  # the idle keep-alive is no event
    assert '"client": "127.0.0.1"' in caplog.text


def test_the_oldest_waiting_connection_is_closed_when_too_many_wait() -> None:
    audit.reset()
    with _guarded(_tiny_app(stream_s=0), max_waiting=3) as port:
        held = [socket.create_connection(("127.0.0.1", port)) for _ in range(3)]
        for connection in held:
            connection.sendall(b"GET / HTTP/1.1\r\n")
        time.sleep(0.2)
        newest = socket.create_connection(("127.0.0.1", port))
        assert _closed_within(held[0], 2.0)
        newest.sendall(b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n")
        assert newest.recv(4096).startswith(b"HTTP/1.1 200")
        assert not _closed_within(held[1], 0.1)
        for connection in [*held, newest]:
            connection.close()
    assert audit.counts()["connection_shed"] == 1


def _new_chats(port: int, prefix: str) -> list[int]:
    """Eight new chats, each claiming a different client in ``X-Forwarded-For``."""
    statuses = []
    for n in range(8):
        body = b"{}"
        lines = [
            f"POST /api/chats/{prefix}-{n} HTTP/1.1",
            "Host: 127.0.0.1",
            "Connection: close",
            "Content-Type: application/json",
            f"Content-Length: {len(body)}",
            f"X-Forwarded-For: 203.0.113.{n + 1}",
        ]
        with socket.create_connection(("127.0.0.1", port), timeout=10) as client:
            client.sendall(("\r\n".join(lines) + "\r\n\r\n").encode() + body)
            statuses.append(int(client.recv(64).split()[1]))
    return statuses


def test_x_forwarded_for_is_believed_only_from_a_named_proxy(in_process: Sandbox) -> None:
    """uvicorn trusts ``X-Forwarded-For`` from 127.0.0.1 unless told otherwise: a local
    client that named a new address each time made 8 new chats where the limit allows 4."""
    agent = make_agent(in_process)
    app = create_app(agent, limiter=TurnLimiter(per_minute=1, burst=4))
    with _guarded(app) as port:
        rotated = _new_chats(port, "direct")
    assert rotated == [200] * 4 + [429] * 4

    behind_proxy = create_app(agent, limiter=TurnLimiter(per_minute=1, burst=4))
    with _guarded(behind_proxy, forwarded_allow_ips=["127.0.0.1"]) as port:
        assert _new_chats(port, "proxied") == [200] * 8  # the proxy's clients, each


def _big_app(size: int) -> Any:
    """An ASGI app that answers every request with ``size`` bytes."""

    async def app(scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            return
        await send({"type": "http.response.start", "status": 200, "headers": []})
        await send({"type": "http.response.body", "body": b"x" * size})

    return app


def test_an_answer_the_client_does_not_read_is_cut_off_and_a_reader_is_not() -> None:
    """From the second red team: connections that asked for a large file and never read
    it were answered, so never waiting, and held their descriptors until the attacker
    let go; 1,900 of them starved a client with the token."""
    audit.reset()
    with _guarded(_big_app(8_000_000), write_timeout_s=0.5) as port:
        stalled = socket.socket()
        stalled.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        stalled.connect(("127.0.0.1", port))
        stalled.sendall(b"GET /big HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        reader = socket.create_connection(("127.0.0.1", port))
        reader.sendall(b"GET /big HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n")
        reader.settimeout(10)
        got = 0
        while chunk := reader.recv(1 << 20):
            got += len(chunk)
        assert got > 8_000_000  # read at once, however long: never cut
        _until(lambda: audit.counts()["slow_connection_closed"] >= 1, 5)
        assert audit.counts()["slow_connection_closed"] == 1
        assert _closed_within(stalled, 2.0)  # what was buffered, then the end
        for connection in (stalled, reader):
            connection.close()


def test_beyond_the_open_cap_the_oldest_non_api_answer_makes_room() -> None:
    """From the third red team: a thousand connections pipelining small requests and
    reading just above the floor were answered, so never waiting, and held the server's
    descriptors. Beyond the cap on open connections, the oldest that is not answering an
    /api request is closed, and whoever arrives is served."""
    audit.reset()
    with _guarded(_tiny_app(stream_s=5.0), max_open=3) as port:
        api = socket.create_connection(("127.0.0.1", port))
        api.sendall(b"GET /api/stream HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        time.sleep(0.2)
        held = []
        for _ in range(2):
            connection = socket.create_connection(("127.0.0.1", port))
            connection.sendall(b"GET /stream HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
            held.append(connection)
            time.sleep(0.2)
        newcomer = socket.create_connection(("127.0.0.1", port))
        newcomer.sendall(b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n")
        newcomer.settimeout(3)
        assert newcomer.recv(4096).startswith(b"HTTP/1.1 200")
        assert _closed_within(held[0], 2.0)  # the oldest non-API answer, cut
        assert not _closed_within(api, 0.2)  # the API stream, older still, kept
        for connection in [api, *held, newcomer]:
            connection.close()
    assert audit.counts()["connection_shed"] == 1
