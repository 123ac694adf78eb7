"""The guarded fetch: one request for a URL someone else chose, without being used by it.

Data intake fetches URLs that a user or a model supplied, so every request is treated as
an attempt at server-side request forgery and at resource exhaustion until checked:

* only ``http`` and ``https``, no credentials in the URL, and a veto hook the application
  may use to refuse any URL, redirect targets included;
* an address guard inside the connection itself (``_guard``): the host is resolved once,
  every address it resolves to must be public (or inside a network the application
  allows), and the socket connects to that checked address;
* redirects followed by hand, each target checked again;
* one deadline for the whole exchange, enforced on every socket operation;
* a byte cap on what is received and, separately, on what gzip or deflate expands to.

Each :func:`fetch` builds its own client and closes it: nothing is shared between calls,
but for a ``transport`` the caller passes in place of the connection layer (a test's).

:func:`exchange` is the same machinery with more said about the request (a method, a body,
headers, secrets to keep out of every message, origins the operator trusts with private
addresses, a deadline chosen by the caller); the provider client (``_client``: retries,
rate limits, a response cache) is built on it.
"""

from __future__ import annotations

import contextlib
import email.utils
import re
import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import UTC
from typing import Any, Final, Literal
from urllib.parse import urlsplit

import httpx

from geomint import audit
from geomint.errors import UsageError
from geomint.http._addresses import host_port, parse_bases
from geomint.http._errors import REFUSALS, FetchError, FetchErrorCode
from geomint.http._guard import AddressRefused, GuardedTransport
from geomint.http._inflate import CorruptError, ExpandedError, Inflater
from geomint.http._records import Fetched, FetchPolicy, Method
from geomint.http._redact import SENSITIVE_HEADERS, printable, redact, shown_url

__all__ = ["exchange", "fetch"]

_REDIRECT_STATUSES: Final = frozenset({301, 302, 303, 307, 308})
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


# --- reading response headers ------------------------------------------------------------


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


def _origin(url: httpx.URL) -> tuple[str, str, int | None]:
    return url.scheme, url.host.lower(), url.port


# --- what a request says, and where it goes ---------------------------------------------


@dataclass(frozen=True, kw_only=True)
class _Outbound:
    """What an :func:`exchange` says beyond a plain ``GET``, and where it is sent."""

    method: Method = "GET"
    headers: Mapping[str, str] = field(default_factory=dict)
    content: bytes | None = None
    content_type: str | None = None
    deadline: float | None = None
    trusted: frozenset[tuple[str, int]] = frozenset()
    secrets: tuple[str, ...] = ()
    error_detail: bool = False
    transport: httpx.BaseTransport | None = None


class _Given(httpx.BaseTransport):
    """A transport the caller passed: used for every request, never closed, bodies kept raw.

    httpx reads a response built from bytes (as ``httpx.MockTransport``'s usually are)
    while building it, and then refuses to stream it raw; the fetch reads bodies raw, to
    undo content encodings under its own cap. So each response is handed on rebuilt
    around the same byte stream, which can be read again.
    """

    def __init__(self, inner: httpx.BaseTransport) -> None:
        self._inner = inner

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        response = self._inner.handle_request(request)
        return httpx.Response(
            status_code=response.status_code,
            headers=response.headers,
            stream=response.stream,
            extensions=response.extensions,
        )

    def close(self) -> None:
        pass  # the caller's to close: a policy may send many requests through it


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
        if code in REFUSALS:  # the host, never the path or query (they may hold secrets)
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
        transport: httpx.BaseTransport
        if self.out.transport is None:
            allowed = self.policy.allowed_networks
            transport = GuardedTransport(allowed, self.deadline, self.out.trusted)
        else:
            transport = _Given(self.out.transport)
        headers = {"User-Agent": self.policy.user_agent, "Accept-Encoding": "gzip, deflate"}
        try:
            with httpx.Client(
                transport=transport,
                trust_env=False,  # no proxy (it would bypass the guard), no .netrc
                follow_redirects=False,
                timeout=self.policy.timeout_s,
                headers=headers,
            ) as client:
                return self._follow(client)
        except AddressRefused as exc:
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
                    if name.lower() not in SENSITIVE_HEADERS
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
        inflater = None if encoding is None else Inflater(encoding, limit)
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
        except ExpandedError:
            raise self.error(
                "too_large",
                f"the {encoding}-compressed response expands past max_bytes={limit:,}; pass "
                "a larger max_bytes only if the data really is that big (a small download "
                "that expands without end is a decompression bomb)",
            ) from None
        except CorruptError as exc:
            raise self.error(
                "decompression",
                f"the {encoding}-compressed response is broken ({exc}); try again later",
                verb="could not fetch",
            ) from None
        return bytes(body)


# --- the calls ---------------------------------------------------------------------------

_DEFAULT_POLICY: Final = FetchPolicy()


def fetch(
    url: str,
    policy: FetchPolicy = _DEFAULT_POLICY,
    *,
    transport: httpx.BaseTransport | None = None,
) -> Fetched:
    """Fetch a URL someone else chose, refusing anything unsafe or over the limits.

    Args:
        url: An ``http`` or ``https`` URL.
        policy: The limits and permissions; the defaults suit public data files.
        transport: Where requests go instead of the network, or None (the default) for
            the guarded connection layer. A transport replaces that layer, and with it
            the address guard and the deadline on each socket operation: it is the seam
            where a test answers requests (see :class:`~geomint.http.ScriptedTransport`),
            not something to pass for a URL a user or a model chose. Everything above
            the connection still holds: schemes, credentials in the URL, the veto,
            redirects, statuses, media types, sizes, encodings, and the deadline
            checked between body chunks. The fetch neither shares nor closes it.

    Returns:
        The final 2xx response with its whole body, decompressed.

    Raises:
        FetchError: The URL, an address, a redirect or the response was refused, or the
            exchange failed; ``code`` says which, the message says what to do.
    """
    return _Fetch(url, policy, _Outbound(transport=transport)).run()


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
    transport: httpx.BaseTransport | None = None,
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
        transport: Where requests go instead of the network, as for :func:`fetch`.

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
        trusted=frozenset(host_port(base) for base in parse_bases(trusted_base_urls)),
        secrets=tuple(secret for secret in secrets if secret),
        error_detail=error_detail,
        transport=transport,
    )
    return _Fetch(url, policy, outbound).run()
