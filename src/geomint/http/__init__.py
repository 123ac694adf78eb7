"""The one outbound HTTP client: every request geomint sends goes through this package.

Two entry points share one guarded connection layer:

* :func:`fetch` (and :func:`exchange`, which says more about the request) for a URL a user
  or a model chose: only public addresses unless the application allows a network, the
  host resolved once and the checked address pinned against DNS rebinding, redirects
  checked again, one deadline, and caps on bytes received and decompressed;
* :func:`request` and :func:`request_json` (and their async twins) for the services an
  operator configured: retries with backoff, a per-host rate limit, a response cache and
  secrets kept out of every message, all set by one :class:`RequestPolicy`.

Both take a ``transport`` (a keyword of :func:`fetch`, a field of :class:`RequestPolicy`):
a test passes a :class:`ScriptedTransport` to answer requests without a network.

The modules behind it, one idea each: ``_addresses`` (which addresses may be reached),
``_guard`` (the connection layer that enforces it), ``_fetch`` (one guarded request:
redirects, statuses, caps), ``_inflate`` (content encodings undone under a cap),
``_redact`` (secrets kept out of text), ``_records`` and ``_errors`` (what a fetch is
given, gives back and raises), ``_request_policy``, ``_limiter``, ``_cache`` and
``_client`` (the provider client), ``_scripted`` (the test double).
"""

from geomint.http._addresses import address_refusal
from geomint.http._cache import DiskCache, MemoryCache, ResponseCache, default_cache_dir
from geomint.http._client import (
    CacheMode,
    ParamValue,
    arequest,
    arequest_json,
    request,
    request_json,
)
from geomint.http._errors import FetchError, FetchErrorCode
from geomint.http._fetch import exchange, fetch
from geomint.http._limiter import RateLimiter
from geomint.http._records import Fetched, FetchPolicy, Method
from geomint.http._redact import printable, redact, shown_url
from geomint.http._request_policy import USER_AGENT, RequestPolicy
from geomint.http._scripted import ScriptedTransport

__all__ = [
    "USER_AGENT",
    "CacheMode",
    "DiskCache",
    "FetchError",
    "FetchErrorCode",
    "FetchPolicy",
    "Fetched",
    "MemoryCache",
    "Method",
    "ParamValue",
    "RateLimiter",
    "RequestPolicy",
    "ResponseCache",
    "ScriptedTransport",
    "address_refusal",
    "arequest",
    "arequest_json",
    "default_cache_dir",
    "exchange",
    "fetch",
    "printable",
    "redact",
    "request",
    "request_json",
    "shown_url",
]
