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

:func:`exchange` is the same machinery with more said about the request (a method, a body,
headers, secrets to keep out of every message, origins the operator trusts with private
addresses, a deadline chosen by the caller); ``geomint._http_client`` builds the provider
client (retries, rate limits, a response cache) on it.
"""

from __future__ import annotations

import contextlib
import email.utils
import importlib.metadata
import ipaddress
import re
import socket
import ssl
import threading
import time
import zlib
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from datetime import UTC
from typing import Any, Final, Literal
from urllib.parse import quote, quote_plus, unquote_plus, urlsplit

import httpcore
import httpx

from geomint import audit
from geomint.errors import ModelFacingError, UsageError

__all__ = [
    "FetchError",
    "FetchErrorCode",
    "FetchPolicy",
    "Fetched",
    "Method",
    "address_refusal",
    "exchange",
    "fetch",
    "printable",
    "redact",
    "shown_url",
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
    "rate_limited",
    "malformed",
]
Method = Literal["GET", "POST"]
#: The codes that are a refusal of what was asked, rather than a failure of the server.
_REFUSALS: Final = frozenset({"scheme", "address", "vetoed", "too_large", "redirects"})

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address

_REDIRECT_STATUSES: Final = frozenset({301, 302, 303, 307, 308})
_INFLATE_CHUNK: Final = 1 << 20
_SHARED_ADDRESS_SPACE: Final = ipaddress.IPv4Network("100.64.0.0/10")
_NAT64_PREFIX: Final = ipaddress.IPv6Network("64:ff9b::/96")
_IPV4_COMPATIBLE: Final = ipaddress.IPv6Network("::/96")
_NUMERIC_LABEL: Final = re.compile(r"[0-9]+|0[xX][0-9a-fA-F]*")
_SENSITIVE_PARAMS: Final = frozenset({"key", "apikey", "api_key", "access_token", "token"})
_SENSITIVE_HEADERS: Final = frozenset(
    {"authorization", "proxy-authorization", "cookie", "x-api-key", "api-key"}
)
_RESERVED_HEADERS: Final = frozenset(
    {
        "host",
        "user-agent",
        "accept-encoding",
        "content-length",
        "content-type",
        "transfer-encoding",
        "connection",
    }
)
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
        url: The URL the caller asked for, with any user name and password removed and
            every secret replaced by ``***``. When a redirect target was the problem, the
            message names that target too.
        reason: The message without the URL it is about, for a caller that names the
            URL itself; None when a redirect target was the problem.
        status: The HTTP status of the answer that failed (code ``status`` or
            ``rate_limited``), else None.
        retry_after: Seconds the server asked the client to wait (``Retry-After``), or
            the wait a rate limit imposed, when known.
        attempts: How many times the request was sent before giving up.
        detail: The start of an error answer's body, printable and redacted, when the
            caller asked for it (the provider client does); else None.
    """

    def __init__(
        self,
        code: FetchErrorCode,
        url: str,
        message: str,
        reason: str | None = None,
        *,
        status: int | None = None,
        retry_after: float | None = None,
        attempts: int = 1,
        detail: str | None = None,
    ) -> None:
        super().__init__(message)
        self.code: FetchErrorCode = code
        self.url = url
        self.reason = reason
        self.status = status
        self.retry_after = retry_after
        self.attempts = attempts
        self.detail = detail

    def __repr__(self) -> str:
        return f"FetchError({self.code!r}, {self.url!r}, {str(self)!r})"


@dataclass(frozen=True, kw_only=True)
class Fetched:
    """A response that passed every check, its body decompressed and complete.

    Attributes:
        url: The URL as the caller gave it (with secrets shown as ``***`` when the
            caller named any).
        final_url: The URL that answered, after redirects (secrets likewise hidden).
        status: The final HTTP status, always 2xx.
        content_type: The media type, lowercased and without parameters; ``""`` if none.
        headers: The final response's headers, names lowercased, repeats comma-joined.
        body: The body, with gzip or deflate content encoding undone.
        elapsed_s: Seconds from the call to the last byte.
        from_cache: True when a response cache answered and no request was sent.
    """

    url: str
    final_url: str
    status: int
    content_type: str
    headers: dict[str, str]
    body: bytes
    elapsed_s: float
    from_cache: bool = False


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
        if _obfuscated_ipv4(host):
            raise _AddressRefused(
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


def _retry_after(headers: httpx.Headers) -> float | None:
    """Read ``Retry-After`` (seconds or an HTTP date) as seconds from now, if present."""
    value = headers.get("retry-after", "").strip()
    if not value:
        return None
    if re.fullmatch(r"[0-9]+(\.[0-9]+)?", value):
        return float(value)
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError, IndexError):
        return None
    if when.tzinfo is None:  # "-0000": UTC by RFC 5322
        when = when.replace(tzinfo=UTC)
    return max(0.0, when.timestamp() - time.time())


def redact(text: str, secrets: Iterable[str]) -> str:
    """Replace every secret in ``text``, as written or percent-encoded, with ``***``.

    >>> redact("GET /search?q=x&key=s3cr%2Ft", ["s3cr/t"])
    'GET /search?q=x&key=***'
    """
    forms = {
        form
        for secret in secrets
        if secret
        for form in (secret, quote(secret, safe=""), quote_plus(secret), quote(secret))
    }
    for form in sorted(forms, key=len, reverse=True):
        text = text.replace(form, "***")
    return text


def shown_url(url: str, secrets: Iterable[str] = ()) -> str:
    """Return a URL fit to print: no user name or password, no secret, and not endless.

    A query parameter whose value is one of ``secrets``, or whose name is a credential's
    (``key``, ``apikey``, ``api_key``, ``access_token``, ``token``), shows ``***``.

    >>> shown_url("https://api.example.com/geocode?q=Lyon&key=abc123")
    'https://api.example.com/geocode?q=Lyon&key=***'
    """
    secrets = tuple(secrets)
    with contextlib.suppress(httpx.InvalidURL):
        parsed = httpx.URL(url)
        if parsed.userinfo:
            url = str(parsed.copy_with(userinfo=b""))
    head, mark, query = url.partition("?")
    if mark:
        query, hash_mark, fragment = query.partition("#")
        pairs = []
        for pair in query.split("&"):
            name, equals, value = pair.partition("=")
            named = unquote_plus(name).lower() in _SENSITIVE_PARAMS
            hidden = equals and value and (named or unquote_plus(value) in secrets)
            pairs.append(f"{name}=***" if hidden else pair)
        url = f"{head}?{'&'.join(pairs)}{hash_mark}{fragment}"
    url = redact(url, secrets)
    return url if len(url) <= 300 else url[:300] + "..."


def printable(data: bytes, limit: int = 80, secrets: Iterable[str] = ()) -> str:
    """Show the start of a body as one printable line of at most ``limit`` characters.

    Secrets are replaced by ``***`` before anything is cut, so no part of one shows.

    >>> printable(b'<html>\\n  <body>oops</body>', 20)
    '<html> <body>oops...'
    """
    secrets = tuple(secret for secret in secrets if secret)
    longest = max((len(secret) for secret in secrets), default=0)
    window = limit * 4 + 3 * longest
    text = redact(data[:window].decode("utf-8", "replace"), secrets)
    if len(data) > window and longest:
        text = text[:-longest]  # the cut may have left the start of a secret at the end
    text = " ".join("".join(c if c.isprintable() else " " for c in text).split())
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _origin(url: httpx.URL) -> tuple[str, str, int | None]:
    return url.scheme, url.host.lower(), url.port


def _host_port(url: httpx.URL) -> tuple[str, int]:
    """The host and port as the connection layer sees them (IDNA-encoded, port filled in)."""
    port = url.port if url.port is not None else (443 if url.scheme == "https" else 80)
    return url.raw_host.decode("ascii").lower(), port


@dataclass(frozen=True, kw_only=True)
class _Outbound:
    """What an :func:`exchange` says beyond a plain ``GET``."""

    method: Method = "GET"
    headers: Mapping[str, str] = field(default_factory=dict)
    content: bytes | None = None
    content_type: str | None = None
    deadline: float | None = None
    trusted: frozenset[tuple[str, int]] = frozenset()
    secrets: tuple[str, ...] = ()
    error_detail: bool = False


# --- one fetch ---------------------------------------------------------------------------


class _Fetch:
    """The state of one :func:`fetch`: its deadline, where it has got to, its messages."""

    def __init__(self, url: str, policy: FetchPolicy, outbound: _Outbound | None = None) -> None:
        self.url = url
        self.policy = policy
        self.out = _Outbound() if outbound is None else outbound
        self.started = time.monotonic()
        self.deadline = (
            self.started + policy.timeout_s if self.out.deadline is None else self.out.deadline
        )
        self.first: httpx.URL | None = None
        self.current: httpx.URL | None = None

    def shown(self, url: str) -> str:
        return shown_url(url, self.out.secrets)

    def error(
        self,
        code: FetchErrorCode,
        problem: str,
        verb: str = "refused",
        at: str | None = None,
        **details: Any,
    ) -> FetchError:
        """Build the error for ``at`` (by default the URL being requested)."""
        if at is None:
            at = self.url if self.current is None else str(self.current)
        where = self.shown(at)
        redirected = self.current is not None and at != str(self.first)
        if redirected:
            where += f" (reached by redirect from {self.shown(self.url)})"
        problem = redact(problem, self.out.secrets)
        reason = None if redirected else problem
        message = f"{verb} {where}: {problem}"
        if code in _REFUSALS:  # the host, never the path or query (they may hold secrets)
            audit.record("url_refused", code=code, host=urlsplit(at).hostname or "")
        return FetchError(code, self.shown(self.url), message, reason, **details)

    def timed_out(self) -> FetchError:
        return self.error(
            "timeout",
            f"the whole fetch must finish within timeout_s={self.policy.timeout_s:g} s, "
            "and it did not; pass a larger timeout_s or fetch a smaller file",
            verb="gave up on",
        )

    def run(self) -> Fetched:
        backend = _GuardedBackend(self.policy.allowed_networks, self.deadline, self.out.trusted)
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
        method, content = self.out.method, self.out.content
        headers = dict(self.out.headers)
        if content is not None and self.out.content_type is not None:
            headers["Content-Type"] = self.out.content_type
        visited: set[str] = set()
        while True:
            visited.add(str(target))
            self.current = target
            try:
                with client.stream(method, target, headers=headers, content=content) as response:
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
            previous = target
            try:
                target = self._checked(str(target.join(location)))
            except httpx.InvalidURL:  # the join itself failed
                raise self.error(
                    "redirects", f"it redirects to {location!r}, which is not a valid URL"
                ) from None
            if str(target) in visited:
                raise self.error(
                    "redirects", f"the redirects loop back to {self.shown(str(target))}"
                )
            if response.status_code == 303 or (
                response.status_code in {301, 302} and method == "POST"
            ):  # what browsers do: the redirect is fetched with GET and no body
                method, content = "GET", None
                headers.pop("Content-Type", None)
            if _origin(target) != _origin(previous):  # credentials stay with their origin
                headers = {
                    name: value
                    for name, value in headers.items()
                    if name.lower() not in _SENSITIVE_HEADERS
                    and redact(value, self.out.secrets) == value
                }

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
            answered = f"the server answered {response.status_code} {response.reason_phrase}"
            detail = self._detail(response) if self.out.error_detail else None
            if detail:
                answered += f" ({detail})"
            elif not self.out.error_detail:
                answered += "; check that the URL is right and publicly readable"
            raise self.error(
                "status",
                answered,
                verb="could not fetch",
                status=response.status_code,
                retry_after=_retry_after(response.headers),
                detail=detail,
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
            url=self.shown(self.url) if self.out.secrets else self.url,
            final_url=self.shown(str(response.url)) if self.out.secrets else str(response.url),
            status=response.status_code,
            content_type=media_type,
            headers={
                name: redact(value, self.out.secrets) for name, value in response.headers.items()
            },
            body=body,
            elapsed_s=time.monotonic() - self.started,
        )

    def _detail(self, response: httpx.Response) -> str | None:
        """The start of an error answer's body, when it is plain and arrives in time."""
        if response.headers.get("content-encoding", "identity").lower() != "identity":
            return None
        head = bytearray()
        with contextlib.suppress(httpx.HTTPError):
            for chunk in response.iter_raw():
                head += chunk
                if len(head) >= 2048 or time.monotonic() > self.deadline:
                    break
        return printable(bytes(head), 200, self.out.secrets) or None

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


def exchange(
    url: str,
    policy: FetchPolicy,
    *,
    method: Method = "GET",
    headers: Mapping[str, str] | None = None,
    content: bytes | None = None,
    content_type: str | None = None,
    deadline: float | None = None,
    trusted_base_urls: Iterable[str] = (),
    secrets: Iterable[str] = (),
    error_detail: bool = False,
) -> Fetched:
    """Send one request under the guard of :func:`fetch`, saying more about it.

    Args:
        url: An ``http`` or ``https`` URL, query included.
        policy: The limits and permissions, as for :func:`fetch`.
        method: ``GET`` or ``POST``. A 303 redirect, or a 301 or 302 one after a
            ``POST``, is followed with ``GET`` and no body; 307 and 308 keep both.
        headers: More request headers. ``User-Agent`` comes from the policy, and the
            framing headers (``Host``, ``Content-Length``, ``Content-Type``...) from
            the client; headers that carry credentials are dropped when a redirect
            leaves the origin.
        content: The request body.
        content_type: Its media type, sent as ``Content-Type``.
        deadline: A ``time.monotonic()`` instant by which everything must be over,
            instead of ``policy.timeout_s`` from now (for a caller that retries).
        trusted_base_urls: URLs of services the operator configured: a request to their
            host and port may reach any address, private ones included, while every
            other host, redirect targets included, keeps the public-only guard.
        secrets: Strings (API keys, tokens) replaced by ``***`` in every message, in
            ``FetchError.url`` and in the returned ``url`` and ``final_url``.
        error_detail: Whether an error status's message quotes the start of its body.

    Returns:
        The final 2xx response with its whole body, decompressed.

    Raises:
        FetchError: As for :func:`fetch`; ``status`` and ``retry_after`` are set when
            the server answered with an error status.
        UsageError: A header the client sets itself, or a trusted URL that is not one.
    """
    given = dict(headers or {})
    reserved = sorted(name for name in given if name.lower() in _RESERVED_HEADERS)
    if reserved:
        raise UsageError(
            f"headers {reserved} are set by geomint's HTTP client; set the User-Agent "
            "through the policy and pass the body's type as content_type"
        )
    outbound = _Outbound(
        method=method,
        headers=given,
        content=content,
        content_type=content_type,
        deadline=deadline,
        trusted=frozenset(_host_port(base) for base in _parse_bases(trusted_base_urls)),
        secrets=tuple(secret for secret in secrets if secret),
        error_detail=error_detail,
    )
    return _Fetch(url, policy, outbound).run()


def _parse_bases(urls: Iterable[str]) -> list[httpx.URL]:
    """Parse trusted base URLs, refusing anything that is not a plain http(s) URL."""
    parsed = []
    for url in urls:
        try:
            base = httpx.URL(url)
        except httpx.InvalidURL as exc:
            raise UsageError(f"trusted base URL {url!r} is not a valid URL ({exc})") from None
        if base.scheme not in {"http", "https"} or not base.host or base.userinfo:
            raise UsageError(
                f"trusted base URL {shown_url(url)!r} must be an http or https URL with a "
                "host name and no user name or password, such as 'http://10.0.0.5:8080/'"
            )
        parsed.append(base)
    return parsed
