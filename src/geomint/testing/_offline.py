"""A switch that keeps tests on this machine: no connection beyond loopback, no real model.

Inside :func:`offline`, a connection from this process to any address but loopback
(127.0.0.0/8, ``::1``) is refused with :class:`OfflineError`, a name other than
``localhost`` is not looked up, and pydantic-ai's real model classes refuse to send a
request (``pydantic_ai.models.ALLOW_MODEL_REQUESTS`` is False). Every refusal is also
recorded, because code under test may catch the error (a provider turns a refused
connection into a "service unavailable" answer): a test fixture should fail a test
whose refusals it did not expect, rather than trust the error to surface.

What it covers, and what not:

* It patches ``socket.socket.connect`` and ``connect_ex`` (which ``socket.create_connection``,
  asyncio, httpx and urllib all go through) and ``socket.getaddrinfo``. Unix sockets pass.
* Only this process: a subprocess a test starts (sandbox workers, intake children, a
  ``geomint serve``, a browser) has sockets of its own. So do C libraries that connect
  without Python's ``socket`` module (libpq under psycopg).
* The test doubles in :mod:`geomint.testing` need none of it lifted:
  :class:`~geomint.http.ScriptedTransport` opens no socket, the servers listen on
  127.0.0.1, and scripted models (pydantic-ai's ``FunctionModel`` and ``TestModel``) are
  not subject to ``ALLOW_MODEL_REQUESTS``. A test that drives a real model class against
  :class:`~geomint.testing.StubLLMServer` allows requests for its duration with
  ``pydantic_ai.models.override_allow_model_requests(True)``.
"""

from __future__ import annotations

import ipaddress
import socket
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from geomint.errors import GeomintError

__all__ = ["NetworkGuard", "OfflineError", "offline"]

_DOUBLES = (
    "answer it with a test double from geomint.testing (ScriptedTransport, RecordedServer, "
    "StubLLMServer) on 127.0.0.1"
)


class OfflineError(GeomintError, ConnectionRefusedError):
    """A connection or name lookup beyond loopback, refused by :func:`offline`.

    It is a ``ConnectionRefusedError``, so the code under test meets it as it would meet
    a network that is down.
    """


@dataclass(eq=False)
class NetworkGuard:
    """What :func:`offline` saw, for a test to assert on.

    Attributes:
        attempts: Every connection to an internet address tried, allowed or not, as the
            address given to ``connect`` (``(host, port)``, four items for IPv6).
        refused: The host of each connection and name lookup refused, in order.
    """

    attempts: list[Any] = field(default_factory=list)
    refused: list[str] = field(default_factory=list)

    def forget(self) -> None:
        """Start a new record (a fixture calls it before each test)."""
        self.attempts.clear()
        self.refused.clear()


def _host_text(host: object) -> str:
    return host.decode() if isinstance(host, bytes) else str(host)


def _is_loopback(host: object) -> bool:
    text = _host_text(host)
    if text == "localhost":
        return True
    try:
        address = ipaddress.ip_address(text.split("%", 1)[0])  # an IPv6 scope is not an address
    except ValueError:
        return False
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        return address.ipv4_mapped.is_loopback
    return address.is_loopback


def _is_address(host: object) -> bool:
    try:
        ipaddress.ip_address(_host_text(host).split("%", 1)[0])
    except ValueError:
        return False
    return True


@contextmanager
def offline() -> Iterator[NetworkGuard]:
    """Refuse, for the block's duration, every connection and lookup that would leave
    this machine, and every request of a real model class.

    See the module docstring for what it covers. Blocks nest; each restores what it found.

    Yields:
        The record of attempts and refusals.

    Example:
        >>> import socket
        >>> with offline() as guard:
        ...     try:
        ...         socket.create_connection(("192.0.2.1", 80), timeout=1)
        ...     except OfflineError as refusal:
        ...         print(refusal)
        offline() refused a connection to ('192.0.2.1', 80): it would leave this machine; ...
        >>> guard.refused
        ['192.0.2.1']
    """
    # pydantic-ai is imported here, not at the top, so `import geomint.testing` stays light.
    from pydantic_ai.models import override_allow_model_requests  # noqa: PLC0415

    guard = NetworkGuard()
    real_connect = socket.socket.connect
    real_connect_ex = socket.socket.connect_ex
    real_getaddrinfo = socket.getaddrinfo

    def check(sock: socket.SocketType, address: Any) -> None:
        if sock.family not in (socket.AF_INET, socket.AF_INET6):
            return
        guard.attempts.append(address)
        if not _is_loopback(address[0]):
            guard.refused.append(_host_text(address[0]))
            raise OfflineError(
                f"offline() refused a connection to {address!r}: it would leave this "
                f"machine; {_DOUBLES}"
            )

    def connect(sock: socket.SocketType, address: Any) -> None:
        check(sock, address)
        real_connect(sock, address)

    def connect_ex(sock: socket.SocketType, address: Any) -> int:
        check(sock, address)
        return real_connect_ex(sock, address)

    def getaddrinfo(host: Any, *args: Any, **kwargs: Any) -> Any:
        # A literal address resolves without a lookup; its connection is checked later.
        if host is not None and not _is_loopback(host) and not _is_address(host):
            guard.refused.append(_host_text(host))
            raise OfflineError(
                f"offline() refused to look up {_host_text(host)!r}: the lookup would leave "
                f"this machine; {_DOUBLES}"
            )
        return real_getaddrinfo(host, *args, **kwargs)

    # What socket.socket itself defines (nothing, unless an outer block patched it), so
    # that leaving restores the class as it was rather than shadowing _socket's methods.
    own = {name: vars(socket.socket).get(name) for name in ("connect", "connect_ex")}
    socket.socket.connect = connect  # type: ignore[method-assign]
    socket.socket.connect_ex = connect_ex  # type: ignore[method-assign]
    socket.getaddrinfo = getaddrinfo
    try:
        with override_allow_model_requests(False):
            yield guard
    finally:
        for name, method in own.items():
            if method is None:
                delattr(socket.socket, name)
            else:
                setattr(socket.socket, name, method)
        socket.getaddrinfo = real_getaddrinfo
