"""The one outbound HTTP client: fetch a URL someone else chose, without being used by it.

Data intake fetches URLs that a user or a model supplied, so every request is treated as
an attempt at server-side request forgery and at resource exhaustion until checked:

* only ``http`` and ``https``, no credentials in the URL, and a veto hook the application
  may use to refuse any URL, redirect targets included;
* an address guard inside the connection itself: the host is resolved once, every
  address it resolves to must be public (or inside a network the application allows),
  and the socket connects to that checked address, so a second DNS answer cannot swap it
  (DNS rebinding) while TLS and the ``Host`` header keep the host name;
* redirects followed by hand, each target checked again;
* one deadline for the whole exchange, enforced on every socket operation;
* a byte cap on what is received and, separately, on what gzip or deflate expands to.

Each :func:`fetch` builds its own client and closes it: nothing is shared between calls.
"""

from __future__ import annotations

import contextlib
import importlib.metadata
import ipaddress
import re
import socket
import ssl
import threading
import time
import zlib
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import Any, Final, Literal

import httpcore
import httpx

from geomint.errors import ModelFacingError, UsageError

__all__ = [
    "FetchError",
    "FetchErrorCode",
    "FetchPolicy",
    "Fetched",
    "address_refusal",
    "fetch",
]

FetchErrorCode = Literal[
    "scheme",
    "address",
    "vetoed",
    "too_large",
    "timeout",
    "redirects",
    "status",
    "content_type",
    "decompression",
    "connection",
]

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address

_REDIRECT_STATUSES: Final = frozenset({301, 302, 303, 307, 308})
_INFLATE_CHUNK: Final = 1 << 20
_SHARED_ADDRESS_SPACE: Final = ipaddress.IPv4Network("100.64.0.0/10")
_NAT64_PREFIX: Final = ipaddress.IPv6Network("64:ff9b::/96")
_IPV4_COMPATIBLE: Final = ipaddress.IPv6Network("::/96")
_NUMERIC_LABEL: Final = re.compile(r"[0-9]+|0[xX][0-9a-fA-F]*")
_TYPE_NOTES: Final = {
    "text/html": "a web page, not data",
    "application/xhtml+xml": "a web page, not data",
}


def _package_version() -> str:
    try:
        return importlib.metadata.version("geomint")
    except importlib.metadata.PackageNotFoundError:
        return "0"


_USER_AGENT: Final = f"geomint/{_package_version()}"


class FetchError(ModelFacingError):
    """A fetch was refused or failed; the message says what was wrong and what to do.

    Attributes:
        code: What kind of failure, for code that branches on it (see ``FetchErrorCode``).
        url: The URL the caller asked for, with any user name and password removed. When
            a redirect target was the problem, the message names that target too.
        reason: The message without the URL it is about, for a caller that names the
            URL itself; None when a redirect target was the problem.
    """

    def __init__(
        self, code: FetchErrorCode, url: str, message: str, reason: str | None = None
    ) -> None:
        super().__init__(message)
        self.code: FetchErrorCode = code
        self.url = url
        self.reason = reason


@dataclass(frozen=True, kw_only=True)
class Fetched:
    """A response that passed every check, its body decompressed and complete.

    Attributes:
        url: The URL as the caller gave it.
        final_url: The URL that answered, after redirects.
        status: The final HTTP status, always 2xx.
        content_type: The media type, lowercased and without parameters; ``""`` if none.
        headers: The final response's headers, names lowercased, repeats comma-joined.
        body: The body, with gzip or deflate content encoding undone.
        elapsed_s: Seconds from the call to the last byte.
    """

    url: str
    final_url: str
    status: int
    content_type: str
    headers: dict[str, str]
    body: bytes
    elapsed_s: float


@dataclass(frozen=True, kw_only=True)
class FetchPolicy:
    """The limits and permissions one fetch runs under.

    Attributes:
        max_bytes: Most bytes accepted, counted both as received and after decompression.
        timeout_s: Seconds for the whole exchange: resolving, connecting, every redirect
            and every body byte.
        max_redirects: Most redirects followed.
        allowed_networks: CIDR networks the application trusts although they are not
            public, e.g. ``("127.0.0.0/8",)`` in tests or an intranet range.
        veto: Called with every URL before it is requested, redirect targets included;
            a returned string is the reason to refuse it.
        content_types: If given, the only media types accepted (lowercase, no parameters).
        user_agent: The ``User-Agent`` header sent.
    """

    max_bytes: int = 25_000_000
    timeout_s: float = 15.0
    max_redirects: int = 5
    allowed_networks: tuple[str, ...] = ()
    veto: Callable[[str], str | None] | None = None
    content_types: frozenset[str] | None = None
    user_agent: str = _USER_AGENT

    def __post_init__(self) -> None:
        if self.max_bytes < 1:
            raise UsageError(f"FetchPolicy(max_bytes={self.max_bytes}) must be at least 1")
        if not self.timeout_s > 0:
            raise UsageError(f"FetchPolicy(timeout_s={self.timeout_s}) must be positive")
        if self.max_redirects < 0:
            raise UsageError(f"FetchPolicy(max_redirects={self.max_redirects}) must be >= 0")
        _parse_networks(self.allowed_networks)


def _parse_networks(cidrs: Iterable[str]) -> list[ipaddress.IPv4Network | ipaddress.IPv6Network]:
    networks = []
    for cidr in cidrs:
        try:
            networks.append(ipaddress.ip_network(cidr))
        except ValueError as exc:
            raise UsageError(
                f"allowed_networks entry {cidr!r} is not a network: {exc}; "
                "write it in CIDR form, such as '10.0.0.0/8' or '127.0.0.1/32'"
            ) from None
    return networks


# --- which addresses may be reached ------------------------------------------------------


def address_refusal(address: str, allowed_networks: Iterable[str] = ()) -> str | None:
    """Say why geomint refuses to connect to an IP address, or ``None`` if it may.

    An address may be reached when it is public, or when it lies in one of
    ``allowed_networks``. IPv6 forms that carry an IPv4 address (mapped, compatible,
    6to4, Teredo, NAT64) are judged by the IPv4 address they carry as well.

    >>> address_refusal("8.8.8.8") is None
    True
    >>> address_refusal("10.0.0.5")
    'a private address'
    >>> address_refusal("10.0.0.5", ["10.0.0.0/8"]) is None
    True
    """
    ip = ipaddress.ip_address(address)
    mapped = ip.ipv4_mapped if isinstance(ip, ipaddress.IPv6Address) else None
    for network in _parse_networks(allowed_networks):
        if ip in network or (mapped is not None and mapped in network):
            return None
    return _non_public(ip)


def _non_public(ip: IPAddress) -> str | None:
    if isinstance(ip, ipaddress.IPv6Address):
        carried = _carried_ipv4(ip)
        if carried is not None:
            form, ipv4 = carried
            problem = _non_public(ipv4)
            if problem is not None:
                return f"an IPv6 address carrying {ipv4} ({form}), {problem}"
            if form == "IPv4-mapped":
                return None  # on the wire this is the public IPv4 address itself
    if ip.is_unspecified:
        return "the unspecified address"
    if ip.is_loopback:
        return "a loopback address (this machine)"
    if ip.is_link_local:
        return "a link-local address (where cloud metadata services answer)"
    if ip.is_multicast:
        return "a multicast address"
    if isinstance(ip, ipaddress.IPv4Address) and ip in _SHARED_ADDRESS_SPACE:
        return "a shared carrier-grade NAT address"
    if isinstance(ip, ipaddress.IPv6Address) and ip.is_site_local:
        return "a site-local address"
    if ip.is_private:
        return "a private address"
    if ip.is_reserved:
        return "a reserved address"
    if not ip.is_global:
        return "not a public address"
    return None


def _carried_ipv4(ip: ipaddress.IPv6Address) -> tuple[str, ipaddress.IPv4Address] | None:
    if ip.ipv4_mapped is not None:
        return "IPv4-mapped", ip.ipv4_mapped
    if ip.sixtofour is not None:
        return "6to4", ip.sixtofour
    if ip.teredo is not None:
        return "Teredo", ip.teredo[1]
    low = ipaddress.IPv4Address(int(ip) & 0xFFFF_FFFF)
    if ip in _NAT64_PREFIX:
        return "NAT64", low
    if ip in _IPV4_COMPATIBLE and int(ip) > 1:
        return "IPv4-compatible", low
    return None


def _obfuscated_ipv4(host: str) -> bool:
    """Whether a host name is an IPv4 address spelled oddly ("2130706433", "0x7f.1")."""
    bare = host.removesuffix(".")
    if ":" in bare or not _NUMERIC_LABEL.fullmatch(bare.rsplit(".", 1)[-1]):
        return False
    try:
        ipaddress.IPv4Address(bare)
    except ValueError:
        return True
    return False


# --- the connection layer: resolve, check, pin, and keep to the deadline -----------------


class _AddressRefused(httpx.ConnectError):
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
    """Connect only to checked addresses, and only until the deadline."""

    def __init__(self, allowed_networks: tuple[str, ...], deadline: float) -> None:
        self._allowed = allowed_networks
        self._deadline = deadline

    def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,
        local_address: str | None = None,
        socket_options: Iterable[httpcore.SOCKET_OPTION] | None = None,
    ) -> httpcore.NetworkStream:
        if _obfuscated_ipv4(host):
            raise _AddressRefused(
                f"{host} is an IP address written as a number in an unusual form; "
                "write the address in the usual dotted form, a.b.c.d"
            )
        budget = _time_left(self._deadline, timeout, httpcore.ConnectTimeout)
        addresses = _resolve(host, port, budget)
        for address in addresses:
            problem = address_refusal(address, self._allowed)
            if problem is not None:
                named = f"{host} is" if address == host else f"{host} resolves to {address},"
                raise _AddressRefused(
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


class _GuardedTransport(httpx.BaseTransport):
    """An HTTP/1.1 transport whose every connection goes through :class:`_GuardedBackend`.

    It hands bodies over raw: decoding content encodings is the caller's business.
    """

    def __init__(self, backend: _GuardedBackend) -> None:
        self._pool = httpcore.ConnectionPool(
            # None: httpcore builds its certifi-verifying context per https connection, so
            # a plain http fetch does not pay the ~30 ms of loading the CA bundle
            ssl_context=None,
            http1=True,
            http2=False,
            retries=0,
            network_backend=backend,
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


# --- bodies: content encodings, undone under a cap ---------------------------------------


class _ExpandedError(Exception):
    """The decompressed body grew past the limit."""


class _CorruptError(Exception):
    """The compressed body is not a valid gzip or deflate stream."""


class _Inflater:
    """Undo gzip or deflate while never producing more than ``limit`` bytes in total."""

    def __init__(self, encoding: Literal["gzip", "deflate"], limit: int) -> None:
        self._encoding = encoding
        self._limit = limit
        self._produced = 0
        self._head = b""  # deflate: the first bytes, until they tell zlib from raw
        self._inflate = zlib.decompressobj(16 + zlib.MAX_WBITS) if encoding == "gzip" else None

    def feed(self, data: bytes) -> bytes:
        if self._inflate is None:
            self._head += data
            if len(self._head) < 2:
                return b""
            zlib_header = (self._head[0] & 0x0F) == 8 and int.from_bytes(self._head[:2]) % 31 == 0
            self._inflate = zlib.decompressobj(zlib.MAX_WBITS if zlib_header else -zlib.MAX_WBITS)
            data, self._head = self._head, b""
        try:
            return self._inflate_all(data)
        except zlib.error as exc:
            raise _CorruptError(str(exc)) from None

    def _inflate_all(self, data: bytes) -> bytes:
        inflate = self._inflate
        assert inflate is not None
        out = bytearray()
        while True:
            if inflate.eof:
                if not data:
                    return bytes(out)
                if self._encoding != "gzip":
                    raise _CorruptError("data follows the end of the deflate stream")
                inflate = self._inflate = zlib.decompressobj(16 + zlib.MAX_WBITS)  # next member
            # max_length keeps each step small, so a bomb never exists in memory beyond it
            asked = min(self._limit - self._produced + 1, _INFLATE_CHUNK)
            piece = inflate.decompress(data, asked)
            self._produced += len(piece)
            if self._produced > self._limit:
                raise _ExpandedError
            out += piece
            data = inflate.unused_data if inflate.eof else inflate.unconsumed_tail
            if not data and len(piece) < asked:
                return bytes(out)

    def finish(self) -> None:
        started = self._inflate is not None or self._head
        if started and (self._inflate is None or not self._inflate.eof):
            raise _CorruptError("the compressed stream ends early")


def _media_type(headers: httpx.Headers) -> str:
    return str(headers.get("content-type", "")).split(";", 1)[0].strip().lower()


def _content_length(headers: httpx.Headers) -> int | None:
    try:
        return int(headers.get("content-length", ""))
    except ValueError:
        return None


def _shown(url: str) -> str:
    """A URL fit to print: no user name or password, and not endless."""
    with contextlib.suppress(httpx.InvalidURL):
        parsed = httpx.URL(url)
        if parsed.userinfo:
            url = str(parsed.copy_with(userinfo=b""))
    return url if len(url) <= 300 else url[:300] + "..."


# --- one fetch ---------------------------------------------------------------------------


class _Fetch:
    """The state of one :func:`fetch`: its deadline, where it has got to, its messages."""

    def __init__(self, url: str, policy: FetchPolicy) -> None:
        self.url = url
        self.policy = policy
        self.started = time.monotonic()
        self.deadline = self.started + policy.timeout_s
        self.first: httpx.URL | None = None
        self.current: httpx.URL | None = None

    def error(
        self, code: FetchErrorCode, problem: str, verb: str = "refused", at: str | None = None
    ) -> FetchError:
        """Build the error for ``at`` (by default the URL being requested)."""
        if at is None:
            at = self.url if self.current is None else str(self.current)
        where = _shown(at)
        redirected = self.current is not None and at != str(self.first)
        if redirected:
            where += f" (reached by redirect from {_shown(self.url)})"
        reason = None if redirected else problem
        return FetchError(code, _shown(self.url), f"{verb} {where}: {problem}", reason)

    def timed_out(self) -> FetchError:
        return self.error(
            "timeout",
            f"the whole fetch must finish within timeout_s={self.policy.timeout_s:g} s, "
            "and it did not; pass a larger timeout_s or fetch a smaller file",
            verb="gave up on",
        )

    def run(self) -> Fetched:
        backend = _GuardedBackend(self.policy.allowed_networks, self.deadline)
        headers = {"User-Agent": self.policy.user_agent, "Accept-Encoding": "gzip, deflate"}
        try:
            with httpx.Client(
                transport=_GuardedTransport(backend),
                trust_env=False,  # no proxy (it would bypass the guard), no .netrc
                follow_redirects=False,
                timeout=self.policy.timeout_s,
                headers=headers,
            ) as client:
                return self._follow(client)
        except _AddressRefused as exc:
            raise self.error("address", exc.reason) from exc
        except httpx.TimeoutException as exc:
            raise self.timed_out() from exc
        except httpx.TransportError as exc:
            raise self.error(
                "connection",
                f"{str(exc) or type(exc).__name__}; check the host name and that the server is up",
                verb="could not fetch",
            ) from exc

    def _follow(self, client: httpx.Client) -> Fetched:
        target = self.first = self._checked(self.url)
        visited: set[str] = set()
        while True:
            visited.add(str(target))
            self.current = target
            try:
                with client.stream("GET", target) as response:
                    location = response.headers.get("location")
                    if response.status_code not in _REDIRECT_STATUSES or location is None:
                        return self._accept(response)
            except httpx.RemoteProtocolError as exc:
                # httpx parses every Location even when it will not follow it, and says
                # "invalid" through a protocol error raised while handling InvalidURL
                if not isinstance(exc.__context__, httpx.InvalidURL):
                    raise
                raise self.error(
                    "redirects", f"it redirects to an invalid URL ({exc.__context__})"
                ) from exc
            if len(visited) > self.policy.max_redirects:
                raise self.error(
                    "redirects",
                    f"it redirects more than max_redirects={self.policy.max_redirects} times; "
                    "pass a larger max_redirects if the site really needs more",
                )
            try:
                target = self._checked(str(target.join(location)))
            except httpx.InvalidURL:  # the join itself failed
                raise self.error(
                    "redirects", f"it redirects to {location!r}, which is not a valid URL"
                ) from None
            if str(target) in visited:
                raise self.error("redirects", f"the redirects loop back to {_shown(str(target))}")

    def _checked(self, url: str) -> httpx.URL:
        """Parse a URL and refuse its form or the application's veto, before any request."""
        try:
            parsed = httpx.URL(url)
        except httpx.InvalidURL as exc:
            raise self.error("scheme", f"it is not a valid URL ({exc})", at=url) from None
        if parsed.scheme not in {"http", "https"}:
            kind = f"{parsed.scheme}: URLs" if parsed.scheme else "URLs without a scheme"
            raise self.error(
                "scheme", f"geomint fetches only http and https URLs, not {kind}", at=url
            )
        if not parsed.host:
            raise self.error("scheme", "the URL has no host name; write http://host/path", at=url)
        if parsed.userinfo:
            raise self.error(
                "scheme",
                "the URL carries a user name or password; remove them from the URL "
                "(geomint does not send credentials to user-supplied addresses)",
                at=url,
            )
        if self.policy.veto is not None:
            reason = self.policy.veto(str(parsed))
            if reason is not None:
                raise self.error("vetoed", reason, at=url)
        return parsed

    def _accept(self, response: httpx.Response) -> Fetched:
        """Check a final response and read its body under the caps."""
        if not response.is_success:
            raise self.error(
                "status",
                f"the server answered {response.status_code} {response.reason_phrase}; "
                "check that the URL is right and publicly readable",
                verb="could not fetch",
            )
        encoding = self._encoding(response.headers)
        media_type = _media_type(response.headers)
        accepted = self.policy.content_types
        if accepted is not None and media_type not in {kind.lower() for kind in accepted}:
            note = _TYPE_NOTES.get(media_type)
            received = f"{media_type or 'no media type'}" + (f" ({note})" if note else "")
            raise self.error(
                "content_type",
                f"the server sent {received}, and only {', '.join(sorted(accepted))} "
                "is accepted here; link to the data file itself",
            )
        announced = _content_length(response.headers)
        if announced is not None and announced > self.policy.max_bytes:
            raise self.error(
                "too_large", self._too_large(f"announces {announced:,} bytes, more than")
            )
        body = self._read(response, encoding)
        return Fetched(
            url=self.url,
            final_url=str(response.url),
            status=response.status_code,
            content_type=media_type,
            headers=dict(response.headers.items()),
            body=body,
            elapsed_s=time.monotonic() - self.started,
        )

    def _too_large(self, what: str) -> str:
        limit = self.policy.max_bytes
        return f"the response {what} max_bytes={limit:,}; pass a larger max_bytes"

    def _encoding(self, headers: httpx.Headers) -> Literal["gzip", "deflate"] | None:
        value = headers.get("content-encoding", "").lower()
        layers = [token.strip() for token in value.split(",") if token.strip() != "identity"]
        layers = [layer for layer in layers if layer]
        if not layers:
            return None
        if layers in (["gzip"], ["x-gzip"]):
            return "gzip"
        if layers == ["deflate"]:
            return "deflate"
        raise self.error(
            "decompression",
            f"the server encoded the response as {', '.join(layers)}, which geomint does "
            "not decode (it asks for gzip or deflate only); fetch it uncompressed instead",
        )

    def _read(self, response: httpx.Response, encoding: Literal["gzip", "deflate"] | None) -> bytes:
        limit = self.policy.max_bytes
        inflater = None if encoding is None else _Inflater(encoding, limit)
        body = bytearray()
        received = 0
        try:
            for chunk in response.iter_raw():
                received += len(chunk)
                if received > limit:
                    raise self.error("too_large", self._too_large("grew past"))
                body += chunk if inflater is None else inflater.feed(chunk)
                if time.monotonic() > self.deadline:
                    raise self.timed_out()
            if inflater is not None:
                inflater.finish()
        except _ExpandedError:
            raise self.error(
                "too_large",
                f"the {encoding}-compressed response expands past max_bytes={limit:,}; pass "
                "a larger max_bytes only if the data really is that big (a small download "
                "that expands without end is a decompression bomb)",
            ) from None
        except _CorruptError as exc:
            raise self.error(
                "decompression",
                f"the {encoding}-compressed response is broken ({exc}); try again later",
                verb="could not fetch",
            ) from None
        return bytes(body)


_DEFAULT_POLICY: Final = FetchPolicy()


def fetch(url: str, policy: FetchPolicy = _DEFAULT_POLICY) -> Fetched:
    """Fetch a URL someone else chose, refusing anything unsafe or over the limits.

    Args:
        url: An ``http`` or ``https`` URL.
        policy: The limits and permissions; the defaults suit public data files.

    Returns:
        The final 2xx response with its whole body, decompressed.

    Raises:
        FetchError: The URL, an address, a redirect or the response was refused, or the
            exchange failed; ``code`` says which, the message says what to do.
    """
    return _Fetch(url, policy).run()
