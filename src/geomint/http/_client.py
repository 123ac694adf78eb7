"""The client for services the operator configured: retries, rate limits and a cache.

Providers (geocoding, routing, boundaries...) call web services at base URLs the operator
chose. Their requests go through :func:`~geomint.http.exchange`, the same guarded
connection layer that fetches user-supplied URLs, with what such calls need on top:

* ``GET`` with query parameters, ``POST`` with a JSON or form body, extra headers, and a
  ``User-Agent`` that names geomint and its version on every request;
* secrets (API keys, tokens) shown as ``***`` in every message, log line, error attribute
  and cache key, whether passed as a query parameter or a header;
* retries with exponential backoff and full jitter on 429, 502, 503, 504 and failed
  connections, honouring ``Retry-After``, all inside one deadline;
* a per-host rate limit, shared by the whole process (``_limiter``);
* a cache of successful answers, in memory or on disk (``_cache``);
* operator-trusted base URLs, which may be private addresses (a self-hosted Nominatim
  on 10.0.0.5), while a redirect to any other origin keeps the public-only guard.

How each call behaves is one :class:`~geomint.http.RequestPolicy` (``_request_policy``).

Everything here blocks, sleeps included. From asyncio, call the named twins
:func:`arequest` and :func:`arequest_json`, which run the call in a worker thread; a
cancelled task does not stop that thread, which ends by the policy's deadline at the latest.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import hashlib
import json as jsonlib
import logging
import math
import random
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Final, Literal
from urllib.parse import urlencode

import httpx

from geomint.errors import UsageError
from geomint.http._errors import FetchError
from geomint.http._fetch import exchange
from geomint.http._records import Fetched, FetchPolicy, Method
from geomint.http._redact import SENSITIVE_HEADERS, SENSITIVE_PARAMS, printable, redact, shown_url
from geomint.http._request_policy import RequestPolicy

__all__ = [
    "CacheMode",
    "ParamValue",
    "arequest",
    "arequest_json",
    "request",
    "request_json",
]

CacheMode = Literal["use", "refresh", "skip"]
ParamValue = str | int | float | bool | None

_RETRY_STATUSES: Final = frozenset({429, 502, 503, 504})
_log = logging.getLogger("geomint.http")

_DEFAULT_POLICY: Final = RequestPolicy()


# --- one call ----------------------------------------------------------------------------


@dataclass(frozen=True, kw_only=True)
class _Call:
    """A request made ready to send: its final URL, body and the secrets it carries."""

    method: Method
    url: httpx.URL
    headers: dict[str, str]
    content: bytes | None
    content_type: str | None
    secrets: tuple[str, ...]
    policy: RequestPolicy

    @property
    def shown(self) -> str:
        return shown_url(str(self.url), self.secrets)

    def cache_key(self) -> str:
        """Name the request without its secrets, yet apart from the same one sent with
        other secrets: method, URL with sorted parameters, headers, body and secrets hashed.
        """
        params = sorted(
            (name, redact(value, self.secrets)) for name, value in self.url.params.multi_items()
        )
        base = redact(str(self.url.copy_with(query=None, fragment=None)), self.secrets)
        headers = sorted(
            (name.lower(), redact(value, self.secrets)) for name, value in self.headers.items()
        )
        body = hashlib.sha256(self.content).hexdigest()[:32] if self.content else "-"
        auth = "-"
        if self.secrets:
            auth = hashlib.sha256("\0".join(sorted(self.secrets)).encode()).hexdigest()[:32]
        query = f"?{urlencode(params)}" if params else ""
        return (
            f"{self.method} {base}{query} headers={jsonlib.dumps(headers)} "
            f"body={body} secrets={auth}"
        )


def _prepare(
    method: Method,
    url: str,
    params: Mapping[str, ParamValue] | None,
    json: Any,
    data: Mapping[str, ParamValue] | None,
    headers: Mapping[str, str] | None,
    policy: RequestPolicy,
) -> _Call:
    if method not in ("GET", "POST"):
        raise UsageError(f"method {method!r} is not one geomint sends; use 'GET' or 'POST'")
    if json is not None and data is not None:
        raise UsageError("pass a JSON body (json=) or a form body (data=), not both")
    if method == "GET" and (json is not None or data is not None):
        raise UsageError("a GET request carries no body; send json= or data= with 'POST'")
    try:
        target = httpx.URL(url).copy_merge_params(tuple(_pairs(params or {})))
    except httpx.InvalidURL as exc:
        message = f"refused {shown_url(url, policy.secrets)}: it is not a valid URL ({exc})"
        raise FetchError("scheme", shown_url(url, policy.secrets), message) from None
    content: bytes | None = None
    content_type: str | None = None
    if json is not None:
        text = jsonlib.dumps(json, separators=(",", ":"), ensure_ascii=False, allow_nan=False)
        content, content_type = text.encode(), "application/json"
    elif data is not None:
        content = urlencode(_pairs(data)).encode()
        content_type = "application/x-www-form-urlencoded"
    given = dict(headers or {})
    found = list(policy.secrets)
    found += [v for n, v in target.params.multi_items() if n.lower() in SENSITIVE_PARAMS]
    for name, value in given.items():
        if name.lower() in SENSITIVE_HEADERS:
            found += [value, value.split()[-1] if value.split() else value]
    return _Call(
        method=method,
        url=target,
        headers=given,
        content=content,
        content_type=content_type,
        secrets=tuple(dict.fromkeys(secret for secret in found if secret)),
        policy=policy,
    )


def _pairs(values: Mapping[str, ParamValue]) -> list[tuple[str, str]]:
    """Turn parameters into text, leaving out None and writing booleans as JSON does."""
    pairs = []
    for name, value in values.items():
        if value is None:
            continue
        text = ("true" if value else "false") if isinstance(value, bool) else str(value)
        pairs.append((name, text))
    return pairs


def _run(call: _Call, mode: CacheMode, parse: Callable[[Fetched], Any]) -> tuple[Fetched, Any]:
    """Answer from the cache if allowed and possible, else send; cache what parses."""
    if mode not in ("use", "refresh", "skip"):
        raise UsageError(f"cache={mode!r} is not a cache mode; use 'use', 'refresh' or 'skip'")
    cache = None if mode == "skip" else call.policy.cache
    key = None if cache is None else call.cache_key()
    if cache is not None and key is not None and mode == "use":
        hit = cache.get(key)
        if hit is not None:
            with contextlib.suppress(FetchError):  # kept by request(), unreadable here
                value = parse(hit)
                _log.debug("answered %s %s from the cache", call.method, call.shown)
                return dataclasses.replace(hit, from_cache=True), value
    fetched = _send(call)
    value = parse(fetched)
    if cache is not None and key is not None:
        cache.put(key, fetched, call.policy.cache_ttl_s)
    return fetched, value


def _send(call: _Call) -> Fetched:
    """Send a request until it succeeds, fails for good, or time or attempts run out."""
    policy = call.policy
    deadline = time.monotonic() + policy.timeout_s
    fetch_policy = FetchPolicy(
        max_bytes=policy.max_bytes,
        timeout_s=policy.timeout_s,
        max_redirects=policy.max_redirects,
        allowed_networks=policy.allowed_networks,
        user_agent=policy.user_agent,
    )
    attempt = 0
    while True:
        if policy.rate_per_s is not None:
            _wait_for_slot(call, deadline, attempt)
        attempt += 1
        try:
            return exchange(
                str(call.url),
                fetch_policy,
                method=call.method,
                headers=call.headers,
                content=call.content,
                content_type=call.content_type,
                deadline=deadline,
                trusted_base_urls=policy.trusted_base_urls,
                secrets=call.secrets,
                error_detail=True,
                transport=policy.transport,
            )
        except FetchError as error:
            retryable = error.code == "connection" or (
                error.code == "status" and error.status in _RETRY_STATUSES
            )
            if not retryable:
                raise _again(error, attempts=attempt) from error
            if attempt >= policy.max_attempts:
                raise _given_up(error, attempt) from error
            left = deadline - time.monotonic()
            if error.retry_after is not None:
                wait = error.retry_after
                if wait > left:
                    raise _again(
                        error,
                        attempts=attempt,
                        code="rate_limited",
                        retry_after=wait,
                        note=f"the server asks to wait {wait:g} s before trying again, more "
                        f"than the {max(left, 0):.1f} s left of timeout_s={policy.timeout_s:g}; "
                        f"try again in {math.ceil(wait)} s",
                    ) from error
            else:
                ceiling = min(policy.backoff_max_s, policy.backoff_base_s * 2 ** (attempt - 1))
                wait = random.uniform(0, ceiling)  # noqa: S311 - jitter, not secrecy
                if wait > left:
                    raise _given_up(error, attempt, left=left) from error
            _log.info(
                "retrying %s %s in %.2f s (attempt %d of %d failed: %s)",
                call.method,
                call.shown,
                wait,
                attempt,
                policy.max_attempts,
                error,
            )
            policy.sleep(wait)


def _wait_for_slot(call: _Call, deadline: float, sent: int) -> None:
    """Wait for the host's next free slot, or refuse at once if it comes too late."""
    policy = call.policy
    assert policy.rate_per_s is not None
    host = call.url.host
    left = deadline - time.monotonic()
    wait = policy.limiter.reserve(host, policy.rate_per_s, max_wait_s=max(left, 0.0))
    if wait > left:
        problem = (
            f"geomint sends at most {policy.rate_per_s:g} requests per second to {host}, "
            f"and the next free slot is {wait:.1f} s away, past the {max(left, 0):.1f} s "
            f"left of timeout_s={policy.timeout_s:g}; try again in {math.ceil(wait)} s"
        )
        raise FetchError(
            "rate_limited",
            call.shown,
            f"did not send {call.shown}: {problem}",
            problem,
            retry_after=wait,
            attempts=sent,
        )
    if wait > 0:
        policy.sleep(wait)


def _given_up(error: FetchError, attempts: int, left: float | None = None) -> FetchError:
    if left is not None:
        note = f"gave up after {attempts} attempts, with {max(left, 0):.1f} s left of the deadline"
    else:
        note = f"gave up after {attempts} attempts"
    if error.status == 429:
        note += "; the service limits how often it may be called: try again later"
        return _again(error, attempts=attempts, code="rate_limited", note=note)
    return _again(error, attempts=attempts, note=note)


def _again(
    error: FetchError,
    *,
    attempts: int,
    code: Literal["rate_limited"] | None = None,
    note: str | None = None,
    retry_after: float | None = None,
) -> FetchError:
    """The same failure, told with how many attempts it took and what to do now."""
    suffix = f"; {note}" if note else ""
    return FetchError(
        code or error.code,
        error.url,
        f"{error}{suffix}",
        None if error.reason is None else error.reason + suffix,
        status=error.status,
        retry_after=error.retry_after if retry_after is None else retry_after,
        attempts=attempts,
        detail=error.detail,
    )


def _as_is(fetched: Fetched) -> None:
    return None


def _json_of(secrets: tuple[str, ...]) -> Callable[[Fetched], Any]:
    def parse(fetched: Fetched) -> Any:
        try:
            return jsonlib.loads(fetched.body)
        except (ValueError, RecursionError) as exc:
            why = "it nests too deeply" if isinstance(exc, RecursionError) else str(exc)
            head = printable(fetched.body, 80, secrets)
            starts = f"it starts {head!r}" if head else "it is empty"
            problem = redact(
                f"the answer is not valid JSON ({why}); {starts}; check that the base URL "
                "points at the service's API, or try again later",
                secrets,
            )
            message = f"could not read {fetched.url}: {problem}"
            raise FetchError("malformed", fetched.url, message, problem) from None

    return parse


# --- the calls ---------------------------------------------------------------------------


def request(
    method: Method,
    url: str,
    *,
    params: Mapping[str, ParamValue] | None = None,
    json: Any = None,
    data: Mapping[str, ParamValue] | None = None,
    headers: Mapping[str, str] | None = None,
    policy: RequestPolicy = _DEFAULT_POLICY,
    cache: CacheMode = "use",
) -> Fetched:
    """Send a request to a configured service, retrying, rate limiting and caching.

    Args:
        method: ``GET`` or ``POST``.
        url: The service URL; ``params`` are added to any query it has.
        params: Query parameters; None values are left out, booleans sent as
            ``true``/``false``.
        json: A body to send as JSON (``POST`` only).
        data: A body to send as a form, ``application/x-www-form-urlencoded``
            (``POST`` only), such as Overpass's ``{"data": query}``.
        headers: More request headers (the ``User-Agent`` comes from the policy).
        policy: Limits, retries, rate, cache, secrets and trusted base URLs.
        cache: ``use`` answers from the policy's cache when it can and stores what it
            fetches; ``refresh`` always sends and stores; ``skip`` neither reads nor writes.

    Returns:
        The 2xx answer, its URLs free of secrets; ``from_cache`` says whether it was sent.

    Raises:
        FetchError: It failed for good. ``code`` is ``status`` for an error answer
            (``status`` holds it), ``rate_limited`` for a 429 that outlasted the retries
            or a wait (the server's or the rate limit's) that would pass the deadline
            (``retry_after`` holds it), else as for :func:`~geomint.http.fetch`.
            ``attempts`` says how many requests were sent.
        UsageError: The call itself is wrong (a body with ``GET``, both bodies...).
    """
    call = _prepare(method, url, params, json, data, headers, policy)
    return _run(call, cache, _as_is)[0]


def request_json(
    method: Method,
    url: str,
    *,
    params: Mapping[str, ParamValue] | None = None,
    json: Any = None,
    data: Mapping[str, ParamValue] | None = None,
    headers: Mapping[str, str] | None = None,
    policy: RequestPolicy = _DEFAULT_POLICY,
    cache: CacheMode = "use",
) -> Any:
    """Send a request as :func:`request` does and return its answer parsed as JSON.

    An ``Accept: application/json`` header is sent unless ``headers`` name another.
    An answer that does not parse is not cached.

    Raises:
        FetchError: As for :func:`request`, and with code ``malformed`` when the
            answer is not JSON (the message quotes its first 80 characters).
    """
    given = dict(headers or {})
    if not any(name.lower() == "accept" for name in given):
        given["Accept"] = "application/json"
    call = _prepare(method, url, params, json, data, given, policy)
    return _run(call, cache, _json_of(call.secrets))[1]


async def arequest(
    method: Method,
    url: str,
    *,
    params: Mapping[str, ParamValue] | None = None,
    json: Any = None,
    data: Mapping[str, ParamValue] | None = None,
    headers: Mapping[str, str] | None = None,
    policy: RequestPolicy = _DEFAULT_POLICY,
    cache: CacheMode = "use",
) -> Fetched:
    """Run :func:`request` in a worker thread, for asyncio callers."""
    return await asyncio.to_thread(
        request,
        method,
        url,
        params=params,
        json=json,
        data=data,
        headers=headers,
        policy=policy,
        cache=cache,
    )


async def arequest_json(
    method: Method,
    url: str,
    *,
    params: Mapping[str, ParamValue] | None = None,
    json: Any = None,
    data: Mapping[str, ParamValue] | None = None,
    headers: Mapping[str, str] | None = None,
    policy: RequestPolicy = _DEFAULT_POLICY,
    cache: CacheMode = "use",
) -> Any:
    """Run :func:`request_json` in a worker thread, for asyncio callers."""
    return await asyncio.to_thread(
        request_json,
        method,
        url,
        params=params,
        json=json,
        data=data,
        headers=headers,
        policy=policy,
        cache=cache,
    )
