"""The connection layer of the SSRF guard: resolve once, check every address, pin, time out.

A request for a URL someone else chose is an attempt at server-side request forgery
until checked, and the check belongs where the socket is opened: the host is resolved
once, every address it resolves to must pass the address policy (``_addresses``), and the
socket connects to that checked address, so a second DNS answer cannot swap it (DNS
rebinding) while TLS and the ``Host`` header keep the host name. Every blocking socket
operation, resolving included, is capped at the time left before one deadline.

:class:`GuardedTransport` is that layer as an httpx transport (HTTP/1.1, no retries,
bodies handed over raw). It is the only way geomint reaches the network; a transport
passed to :func:`~geomint.http.fetch` replaces it, and with it everything here.
"""

from __future__ import annotations

import contextlib
import ipaddress
import socket
import ssl
import threading
import time
from collections.abc import Iterable, Iterator
from typing import Any, Final

import httpcore
import httpx

from geomint.http._addresses import address_refusal, obfuscated_ipv4

__all__ = ["AddressRefused", "GuardedTransport"]


class AddressRefused(httpx.ConnectError):
    """The address guard refused a host; ``reason`` completes "refused <url>: ..."."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


def _time_left(deadline: float, timeout: float | None, late: type[Exception]) -> float:
    remaining = deadline - time.monotonic()
    if remaining <= 0:
        raise late("the fetch's time budget is spent")
    return remaining if timeout is None else min(timeout, remaining)


def _resolve(host: str, port: int, budget: float) -> list[str]:
    """Resolve a host within ``budget`` seconds, returning its distinct addresses.

    ``getaddrinfo`` has no timeout of its own, so it runs in a daemon thread that is
    abandoned (not stopped: it ends with the resolver's own timeout) if it runs late.
    """
    with contextlib.suppress(ValueError):
        return [str(ipaddress.ip_address(host))]
    answers: list[tuple[Any, ...]] = []
    failures: list[OSError | UnicodeError] = []

    def lookup() -> None:
        try:
            answers.extend(socket.getaddrinfo(host, port, type=socket.SOCK_STREAM))
        except (OSError, UnicodeError) as exc:
            failures.append(exc)

    thread = threading.Thread(target=lookup, name=f"geomint-resolve {host}", daemon=True)
    thread.start()
    thread.join(budget)
    if thread.is_alive():
        raise httpcore.ConnectTimeout(f"resolving {host} did not finish in time")
    if failures or not answers:
        raise httpcore.ConnectError(f"cannot resolve {host}: {failures[0] if failures else ''}")
    return list(dict.fromkeys(str(answer[4][0]) for answer in answers))


class _GuardedBackend(httpcore.SyncBackend):
    """Connect only to checked addresses, and only until the deadline.

    ``trusted`` names the ``(host, port)`` pairs the operator configured: they may resolve
    to any address, private ones included, but are still resolved once and pinned.
    """

    def __init__(
        self,
        allowed_networks: tuple[str, ...],
        deadline: float,
        trusted: frozenset[tuple[str, int]] = frozenset(),
    ) -> None:
        self._allowed = allowed_networks
        self._deadline = deadline
        self._trusted = trusted

    def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,
        local_address: str | None = None,
        socket_options: Iterable[httpcore.SOCKET_OPTION] | None = None,
    ) -> httpcore.NetworkStream:
        if obfuscated_ipv4(host):
            raise AddressRefused(
                f"{host} is an IP address written as a number in an unusual form; "
                "write the address in the usual dotted form, a.b.c.d"
            )
        budget = _time_left(self._deadline, timeout, httpcore.ConnectTimeout)
        addresses = _resolve(host, port, budget)
        trusted = (host.lower(), port) in self._trusted
        for address in [] if trusted else addresses:
            problem = address_refusal(address, self._allowed)
            if problem is not None:
                named = f"{host} is" if address == host else f"{host} resolves to {address},"
                raise AddressRefused(
                    f"{named} {problem}; geomint fetches only public addresses unless "
                    "the application allows this network"
                )
        failure: httpcore.ConnectError | None = None
        for address in addresses:
            try:
                stream = super().connect_tcp(
                    address,
                    port,
                    timeout=_time_left(self._deadline, timeout, httpcore.ConnectTimeout),
                    local_address=local_address,
                    socket_options=socket_options,
                )
            except httpcore.ConnectError as exc:
                failure = exc
            else:
                return _DeadlineStream(stream, self._deadline)
        assert failure is not None  # _resolve returns at least one address
        raise failure


class _DeadlineStream(httpcore.NetworkStream):
    """Cap every blocking socket operation at the time left before the deadline."""

    def __init__(self, inner: httpcore.NetworkStream, deadline: float) -> None:
        self._inner = inner
        self._deadline = deadline

    def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        left = _time_left(self._deadline, timeout, httpcore.ReadTimeout)
        return self._inner.read(max_bytes, left)

    def write(self, buffer: bytes, timeout: float | None = None) -> None:
        self._inner.write(buffer, _time_left(self._deadline, timeout, httpcore.WriteTimeout))

    def close(self) -> None:
        self._inner.close()

    def start_tls(
        self,
        ssl_context: ssl.SSLContext,
        server_hostname: str | None = None,
        timeout: float | None = None,
    ) -> httpcore.NetworkStream:
        left = _time_left(self._deadline, timeout, httpcore.ConnectTimeout)
        return _DeadlineStream(
            self._inner.start_tls(ssl_context, server_hostname, left), self._deadline
        )

    def get_extra_info(self, info: str) -> Any:
        return self._inner.get_extra_info(info)


_HTTPCORE_TO_HTTPX: Final[tuple[tuple[type[Exception], type[httpx.TransportError]], ...]] = (
    (httpcore.ConnectTimeout, httpx.ConnectTimeout),
    (httpcore.ReadTimeout, httpx.ReadTimeout),
    (httpcore.WriteTimeout, httpx.WriteTimeout),
    (httpcore.PoolTimeout, httpx.PoolTimeout),
    (httpcore.ConnectError, httpx.ConnectError),
    (httpcore.ReadError, httpx.ReadError),
    (httpcore.WriteError, httpx.WriteError),
    (httpcore.RemoteProtocolError, httpx.RemoteProtocolError),
    (httpcore.LocalProtocolError, httpx.LocalProtocolError),
    (httpcore.UnsupportedProtocol, httpx.UnsupportedProtocol),
    (httpcore.ProxyError, httpx.ProxyError),
)


@contextlib.contextmanager
def _as_httpx_errors() -> Iterator[None]:
    try:
        yield
    except Exception as exc:
        for core, mapped in _HTTPCORE_TO_HTTPX:
            if isinstance(exc, core):
                raise mapped(str(exc)) from exc
        raise


class _GuardedStream(httpx.SyncByteStream):
    def __init__(self, response: httpcore.Response) -> None:
        self._response = response

    def __iter__(self) -> Iterator[bytes]:
        with _as_httpx_errors():
            yield from self._response.iter_stream()

    def close(self) -> None:
        with _as_httpx_errors():
            self._response.close()


class GuardedTransport(httpx.BaseTransport):
    """An HTTP/1.1 transport whose every connection goes through :class:`_GuardedBackend`.

    It hands bodies over raw: decoding content encodings is the caller's business.

    Args:
        allowed_networks: CIDR networks any host may resolve to although not public.
        deadline: A ``time.monotonic()`` instant after which no socket operation runs.
        trusted: ``(host, port)`` pairs the operator configured, which may resolve to
            any address (see :func:`~geomint.http._addresses.host_port`).
    """

    def __init__(
        self,
        allowed_networks: tuple[str, ...],
        deadline: float,
        trusted: frozenset[tuple[str, int]] = frozenset(),
    ) -> None:
        self._pool = httpcore.ConnectionPool(
            # None: httpcore builds its certifi-verifying context per https connection, so
            # a plain http fetch does not pay the ~30 ms of loading the CA bundle
            ssl_context=None,
            http1=True,
            http2=False,
            retries=0,
            network_backend=_GuardedBackend(allowed_networks, deadline, trusted),
        )

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        assert isinstance(request.stream, httpx.SyncByteStream)
        core_request = httpcore.Request(
            method=request.method,
            url=httpcore.URL(
                scheme=request.url.raw_scheme,
                host=request.url.raw_host,
                port=request.url.port,
                target=request.url.raw_path,
            ),
            headers=request.headers.raw,
            content=request.stream,
            extensions=request.extensions,
        )
        with _as_httpx_errors():
            response = self._pool.handle_request(core_request)
        return httpx.Response(
            status_code=response.status,
            headers=response.headers,
            stream=_GuardedStream(response),
            extensions=response.extensions,
        )

    def close(self) -> None:
        self._pool.close()
