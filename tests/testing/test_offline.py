"""The suite's switch: no connection beyond loopback, no request from a real model class.

These tests run under the guard ``tests/conftest.py`` holds for the whole session, so
they show both the guard itself (:func:`geomint.testing.offline`) and the fixture that
fails a test it refused even when the code under test swallowed the error.
"""

from __future__ import annotations

import asyncio
import os
import socket
import subprocess
import sys
import textwrap
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from pydantic_ai import Agent

import geomint
from geomint.models import resolve_model
from geomint.testing import NetworkGuard, OfflineError, offline

ROOT = Path(__file__).resolve().parents[2]

#: TEST-NET-1 and the IPv6 documentation prefix: never routable, so nothing can answer.
UNROUTABLE_V4 = ("192.0.2.1", 80)
UNROUTABLE_V6 = ("2001:db8::1", 80, 0, 0)


def _connect(address: tuple[object, ...], family: int = socket.AF_INET) -> None:
    with socket.socket(family, socket.SOCK_STREAM) as sock:
        sock.settimeout(1)
        sock.connect(address)


def _connect_ex(address: tuple[object, ...]) -> None:
    with socket.socket() as sock:
        sock.settimeout(1)
        sock.connect_ex(address)


async def _asyncio_connect() -> None:
    await asyncio.open_connection(*UNROUTABLE_V4)


WAYS: dict[str, tuple[Callable[[], object], str]] = {
    "socket.connect": (lambda: _connect(UNROUTABLE_V4), "192.0.2.1"),
    "socket.connect_ex": (lambda: _connect_ex(UNROUTABLE_V4), "192.0.2.1"),
    "socket.create_connection": (
        lambda: socket.create_connection(UNROUTABLE_V4, timeout=1),
        "192.0.2.1",
    ),
    "IPv6": (lambda: _connect(UNROUTABLE_V6, socket.AF_INET6), "2001:db8::1"),
    "IPv4-mapped IPv6": (
        lambda: _connect(("::ffff:192.0.2.1", 80), socket.AF_INET6),
        "::ffff:192.0.2.1",
    ),
    "asyncio": (lambda: asyncio.run(_asyncio_connect()), "192.0.2.1"),
    "a name lookup": (lambda: socket.getaddrinfo("example.com", 443), "example.com"),
    "a connect by name": (lambda: _connect(("example.com", 80)), "example.com"),
}


@pytest.mark.parametrize("way", WAYS)
def test_every_way_out_is_refused(way: str, refused: list[str]) -> None:
    attempt, host = WAYS[way]
    with pytest.raises(OfflineError, match=r"offline\(\) refused .* would leave this machine"):
        attempt()
    assert refused == [host]


def test_the_refusal_reads_as_a_network_that_is_down(refused: list[str]) -> None:
    with pytest.raises(ConnectionRefusedError) as caught:
        socket.create_connection(UNROUTABLE_V4, timeout=1)
    assert isinstance(caught.value, geomint.GeomintError)
    assert str(caught.value) == (
        "offline() refused a connection to ('192.0.2.1', 80): it would leave this machine; "
        "answer it with a test double from geomint.testing (ScriptedTransport, "
        "RecordedServer, StubLLMServer) on 127.0.0.1"
    )


@pytest.fixture
def listener() -> Iterator[socket.socket]:
    """A listening socket on 127.0.0.1 (its backlog completes a connect; nothing accepts)."""
    with socket.create_server(("127.0.0.1", 0)) as server:
        yield server


def test_loopback_passes_and_is_recorded(listener: socket.socket, network: NetworkGuard) -> None:
    port = listener.getsockname()[1]
    with socket.create_connection(("localhost", port), timeout=5):
        pass
    assert ("127.0.0.1", port) in network.attempts
    assert network.refused == []


def test_unix_sockets_pass(tmp_path: Path, network: NetworkGuard) -> None:
    path = str(tmp_path / "s")
    with socket.socket(socket.AF_UNIX) as server, socket.socket(socket.AF_UNIX) as client:
        server.bind(path)
        server.listen()
        client.connect(path)
    assert network.attempts == [] and network.refused == []


def test_a_real_model_class_is_refused_before_it_sends(network: NetworkGuard) -> None:
    async def ask() -> None:
        model = resolve_model("openai:gpt-4.1", api_key="sk-not-a-key", max_retries=0)
        async with model:  # type: ignore[attr-defined]
            await Agent(model).run("ping")

    with pytest.raises(RuntimeError, match="Model requests are not allowed"):
        asyncio.run(ask())
    assert network.attempts == []  # refused before a socket was opened


def test_blocks_nest_and_restore_what_they_found() -> None:
    before = (socket.socket.connect, socket.socket.connect_ex, socket.getaddrinfo)
    with offline() as inner:
        with pytest.raises(OfflineError):
            socket.create_connection(UNROUTABLE_V4, timeout=1)
        assert inner.refused == ["192.0.2.1"]
    assert (socket.socket.connect, socket.socket.connect_ex, socket.getaddrinfo) == before


def test_a_swallowed_refusal_still_fails_the_test(tmp_path: Path) -> None:
    # The suite's own fixtures, in a pytest run of their own over two small tests.
    (tmp_path / "conftest.py").write_text(
        "from tests.conftest import _offline_session, network, refused  # noqa: F401\n"
    )
    (tmp_path / "test_swallowed.py").write_text(
        textwrap.dedent(
            """
            import socket

            def test_swallows_the_error():
                try:
                    socket.create_connection(("192.0.2.1", 80), timeout=1)
                except OSError:
                    pass  # as a provider would: "service unavailable"

            def test_expects_the_refusal(refused):
                try:
                    socket.create_connection(("192.0.2.1", 80), timeout=1)
                except OSError:
                    pass
                assert refused == ["192.0.2.1"]
            """
        )
    )
    source = Path(geomint.__file__).parents[1]
    run = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-c", os.devnull,
         "--rootdir", str(tmp_path), str(tmp_path)],
        env={**os.environ, "PYTHONPATH": os.pathsep.join([str(source), str(ROOT)])},
        capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert (
        "2 passed, 1 error" in run.stdout
    )  # the swallowing test errs at teardown, run.stdout + run.stderr
    assert "the test tried to reach ['192.0.2.1'] beyond loopback" in run.stdout
    assert "ERROR at teardown of test_swallows_the_error" in run.stdout
