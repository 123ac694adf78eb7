"""How ``geomint serve`` hands the app to uvicorn: a guard on connections, and the socket
peer as the client.

uvicorn closes an idle keep-alive connection, but not one that is still sending its
request: a client that sends half a request line and then a byte now and then holds a
connection (and a file descriptor) for as long as it likes, and the token check only
runs on complete requests. Enough of them and the server cannot accept anyone else.
:func:`uvicorn_options` swaps in an HTTP protocol that counts the connections *waiting*
(not being answered: a request still arriving, an idle keep-alive, a body still trickling
in after the answer was sent) and:

- closes one that is still waiting :data:`HEADER_TIMEOUT_S` after it started to
  (a header-read deadline that trickling bytes do not extend);
- closes the oldest waiting connection when :data:`MAX_WAITING` are waiting, so that
  one client holding many cannot starve another, even from the same address.

A connection whose request the app is answering (a streamed answer, a run waiting for
an approval) is not waiting, however long it takes, unless the client stops reading
it: an answer whose bytes back up (the transport pauses writing) waits too, and must
drain within :data:`WRITE_TIMEOUT_S` (a client reading under some 5 KB/s is cut off).
Without that, connections that ask for a large file and never read it held their
descriptors for as long as they liked. Timed-out and shed connections are aborted, not
closed, so a full write buffer cannot keep their socket open.

Clients that do read, slowly (pipelining thousands of small requests and reading just
above the floor), are answered, not waiting; so the open connections are capped too:
beyond half the open-file limit, a new connection closes the oldest one that is not
answering an ``/api`` request (those need the token, and carry chat streams and
approvals), so whoever arrives is served rather than refused.

The client address the rate limits count is the socket peer: uvicorn's default trusts
``X-Forwarded-For`` from 127.0.0.1, which lets any local client pick its own address.
Proxy headers are read only from the proxies the operator names.
"""

from __future__ import annotations

import asyncio
import ipaddress
import resource
from collections.abc import Iterable
from typing import Any, Final

import h11
from uvicorn.protocols.http.h11_impl import H11Protocol

from geomint import audit

__all__ = [
    "HEADER_TIMEOUT_S",
    "LOOPBACK_NAMES",
    "MAX_WAITING",
    "WRITE_TIMEOUT_S",
    "is_loopback",
    "uvicorn_options",
]

#: Seconds a connection may wait without the app answering a request of it: to send its
#: request's headers, or idle between requests.
HEADER_TIMEOUT_S: Final = 5.0
#: Seconds an answer may stay backed up (the client not reading) before it is cut off.
WRITE_TIMEOUT_S: Final = 10.0
#: Waiting connections kept at most (fewer when the open-file limit is low): beyond it the
#: oldest is closed.
MAX_WAITING: Final = 1000
#: uvicorn's default listen backlog, kept when the open-file limit allows.
_BACKLOG: Final = 2048


#: The names a server on localhost answers to (DNS rebinding: no other name reaches it).
LOOPBACK_NAMES: Final = ("localhost", "127.0.0.1", "::1")


def is_loopback(host: str) -> bool:
    """Whether ``host`` (a listening address) is reachable from this machine only."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def uvicorn_options(
    *,
    forwarded_allow_ips: Iterable[str] = (),
    header_timeout_s: float = HEADER_TIMEOUT_S,
    max_waiting: int | None = None,
    write_timeout_s: float = WRITE_TIMEOUT_S,
    max_open: int | None = None,
) -> dict[str, Any]:
    """The keyword arguments for ``uvicorn.run`` / ``uvicorn.Config`` beyond app, host, port.

    Args:
        forwarded_allow_ips: The reverse proxies whose ``X-Forwarded-For`` and
            ``X-Forwarded-Proto`` are believed (addresses or networks); none by default,
            so the client is the socket peer.
        header_timeout_s: How long a connection may wait (see the module docstring).
        max_waiting: How many may wait at once; by default :data:`MAX_WAITING`, or a
            quarter of the open-file limit when that is lower, so that the waiting
            connections can never take the descriptors that answering needs.
        write_timeout_s: How long an answer may stay backed up by a client not reading.
        max_open: How many connections may be open at once; by default twice
            ``max_waiting`` (half the open-file limit).
    """
    proxies = list(forwarded_allow_ips)
    fitting, backlog = _within_open_file_limit()
    guard = _Guard(
        header_timeout_s=header_timeout_s,
        max_waiting=max_waiting if max_waiting is not None else fitting,
        write_timeout_s=write_timeout_s,
        max_open=max_open if max_open is not None else 2 * fitting,
    )

    class _GuardedProtocol(_GuardedH11Protocol):
        _guard = guard

    return {
        "http": _GuardedProtocol,
        "timeout_keep_alive": max(1, int(header_timeout_s)),
        "backlog": backlog,
        "proxy_headers": bool(proxies),
        "forwarded_allow_ips": proxies or None,
    }


def _within_open_file_limit() -> tuple[int, int]:
    """How many connections may wait, and how many asyncio may accept at once.

    A connection is counted (and the oldest shed) only once its protocol starts, after the
    event loop accepted a whole batch of up to ``backlog`` sockets: with 1,024 descriptors,
    1,000 waiting plus a batch of 2,048 (uvicorn's default) ran out, and then asyncio stops
    accepting anyone for a second. A quarter of the limit waiting and an eighth per batch
    leave room for two batches in flight and for the answering itself.
    """
    soft, _ = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft == resource.RLIM_INFINITY:
        return MAX_WAITING, _BACKLOG
    return max(16, min(MAX_WAITING, soft // 4)), max(16, min(_BACKLOG, soft // 8))


class _Guard:
    """The connections of one server that are waiting, oldest first."""

    def __init__(
        self, *, header_timeout_s: float, max_waiting: int, write_timeout_s: float, max_open: int
    ) -> None:
        self.header_timeout_s = header_timeout_s
        self.write_timeout_s = write_timeout_s
        self.max_open = max_open
        #: Every open connection, oldest first.
        self.open: dict[_GuardedH11Protocol, None] = {}
        self.max_waiting = max_waiting
        # A dict keeps insertion order: the first key is the connection waiting longest.
        self.waiting: dict[_GuardedH11Protocol, None] = {}


class _GuardedH11Protocol(H11Protocol):
    """uvicorn's h11 protocol, told when it waits and closed when it waits too long."""

    _guard: _Guard
    _deadline: asyncio.TimerHandle | None = None
    _heard: bool = False  # bytes arrived since this connection started waiting
    _stalled: bool = False  # the client stopped reading the answer (writing is paused)

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        super().connection_made(transport)  # type: ignore[arg-type]
        guard = self._guard
        guard.open[self] = None
        if len(guard.open) > guard.max_open:
            oldest = next((c for c in guard.open if not c._answering_api()), None)
            if oldest is not None and oldest is not self:
                oldest._close("connection_shed", open=len(guard.open), limit=guard.max_open)
        self._track()

    def connection_lost(self, exc: Exception | None) -> None:
        self._stop_waiting()
        self._guard.open.pop(self, None)
        super().connection_lost(exc)

    def _answering_api(self) -> bool:
        """Whether an ``/api`` request of this connection is being answered."""
        cycle = self.cycle
        if cycle is None or cycle.response_complete:
            return False
        return str(cycle.scope.get("path", "")).startswith("/api/")

    def data_received(self, data: bytes) -> None:
        self._heard = True
        super().data_received(data)

    def handle_events(self) -> None:
        super().handle_events()
        self._track()

    def on_response_complete(self) -> None:
        super().on_response_complete()
        self._track()

    def pause_writing(self) -> None:
        super().pause_writing()
        self._stalled = True
        self._stop_waiting()  # a fresh deadline: the answer's, not the request's
        self._track()

    def resume_writing(self) -> None:
        super().resume_writing()
        self._stalled = False
        self._stop_waiting()
        self._track()

    def _is_waiting(self) -> bool:
        if self.transport.is_closing() or self.conn.our_state is h11.ERROR:
            return False
        return self._stalled or self.cycle is None or self.cycle.response_complete

    def _track(self) -> None:
        if not self._is_waiting():
            self._stop_waiting()
        elif self not in self._guard.waiting:
            self._start_waiting()

    def _start_waiting(self) -> None:
        guard = self._guard
        guard.waiting[self] = None
        self._heard = False
        timeout = guard.write_timeout_s if self._stalled else guard.header_timeout_s
        self._deadline = self.loop.call_later(timeout, self._too_slow)
        while len(guard.waiting) > guard.max_waiting:
            oldest = next(iter(guard.waiting))
            oldest._close("connection_shed", waiting=len(guard.waiting), limit=guard.max_waiting)

    def _stop_waiting(self) -> None:
        self._guard.waiting.pop(self, None)
        if self._deadline is not None:
            self._deadline.cancel()
            self._deadline = None

    def _too_slow(self) -> None:
        self._deadline = None
        if self._stalled:
            self._close("slow_connection_closed", reading_for_s=self._guard.write_timeout_s)
        elif self._heard:
            self._close("slow_connection_closed", after_s=self._guard.header_timeout_s)
        else:  # an idle keep-alive (or a connection never used): ordinary, not an event
            self._close(None)

    def _close(self, event: str | None, **fields: int | float) -> None:
        self._stop_waiting()
        if event is not None:
            audit.record(event, client=self.client[0] if self.client else None, **fields)
        # Aborted, not closed: close() keeps the socket until its write buffer drains.
        self._guard.open.pop(self, None)
        self.transport.abort()
