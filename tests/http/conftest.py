"""No test of the HTTP client reaches the internet.

Most tests answer requests through the transport seam (a ``ScriptedTransport``) and open
no socket at all; the tests of the connection layer talk to a server on 127.0.0.1 that
they start. Either way, this autouse fixture fails any test that connects anywhere else,
and hands the connects it saw to a test that asserts on them.

This folder has no ``__init__.py`` on purpose: pytest would then import these modules as
a package named ``http``, in place of the standard library's.
"""

from __future__ import annotations

import socket
from typing import Any

import pytest


@pytest.fixture(autouse=True)
def connections(monkeypatch: pytest.MonkeyPatch) -> list[object]:
    """Record every outbound connect, and fail the test if one leaves 127.0.0.1."""
    attempted: list[object] = []
    real_connect = socket.socket.connect

    def connect(sock: socket.socket, address: Any) -> None:
        attempted.append(address)
        if address[0] != "127.0.0.1":
            pytest.fail(f"a test tried to connect to {address}")
        real_connect(sock, address)

    monkeypatch.setattr(socket.socket, "connect", connect)
    return attempted
