"""How a provider's requests are sent, retried, spaced out and cached: one frozen record."""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Final

import httpx

from geomint.errors import UsageError
from geomint.http._addresses import parse_bases, parse_networks
from geomint.http._cache import ResponseCache
from geomint.http._limiter import SHARED_LIMITER, RateLimiter
from geomint.http._records import FETCH_USER_AGENT

__all__ = ["USER_AGENT", "RequestPolicy"]

#: The ``User-Agent`` providers send: public services (Nominatim's policy among them) ask
#: callers to say who they are.
USER_AGENT: Final = f"{FETCH_USER_AGENT} (+https://github.com/geomint)"


@dataclass(frozen=True, kw_only=True)
class RequestPolicy:
    """How a provider's requests are sent, retried, spaced out and cached.

    Attributes:
        timeout_s: Seconds for the whole call: every attempt, every wait between them,
            every redirect and body byte. No wait runs past it.
        max_bytes: Most bytes accepted in an answer, received or decompressed.
        max_attempts: Most times a request is sent (1 means no retry).
        backoff_base_s: The first retry waits up to this long; each later one up to
            twice the one before (the wait is drawn uniformly: "full jitter").
        backoff_max_s: The most any backoff waits (a ``Retry-After`` may ask for more).
        rate_per_s: Most requests per second to one host, or None for no limit.
        limiter: Where the rate is kept; by default one limiter for the whole process.
        cache: Where successful answers are kept, or None to keep none.
        cache_ttl_s: Seconds a cached answer is served.
        secrets: Strings (API keys, tokens) never to show: they appear as ``***`` in
            messages, logs, ``FetchError.url`` and cache keys, and this policy's repr
            leaves them out. Values of query parameters and headers that are credentials
            by name (``key``, ``token``, ``Authorization``...) are hidden even if unlisted.
        trusted_base_urls: Base URLs the operator configured: requests to their host and
            port may reach private and loopback addresses. Every other host, redirect
            targets included, must be public (or inside ``allowed_networks``).
        allowed_networks: CIDR networks any host may resolve to although not public.
        max_redirects: Most redirects followed.
        user_agent: The ``User-Agent`` sent with every request.
        sleep: Called to wait between attempts and for the rate limit; a test passes one
            that records the waits instead of sleeping.
        transport: Where requests go instead of the network, or None (the default) for
            the guarded connection layer. A transport replaces that layer, the address
            guard and the per-socket deadline with it, so it is for tests (a
            :class:`~geomint.http.ScriptedTransport`) and for a service answered in
            process; retries, the rate limit, the cache, secrets, redirects and the caps
            all still apply. Calls share it and never close it.
    """

    timeout_s: float = 20.0
    max_bytes: int = 20_000_000
    max_attempts: int = 3
    backoff_base_s: float = 0.5
    backoff_max_s: float = 8.0
    rate_per_s: float | None = None
    limiter: RateLimiter = SHARED_LIMITER
    cache: ResponseCache | None = None
    cache_ttl_s: float = 3600.0
    secrets: tuple[str, ...] = dataclasses.field(default=(), repr=False)
    trusted_base_urls: tuple[str, ...] = ()
    allowed_networks: tuple[str, ...] = ()
    max_redirects: int = 3
    user_agent: str = USER_AGENT
    sleep: Callable[[float], None] = time.sleep
    transport: httpx.BaseTransport | None = None

    def __post_init__(self) -> None:
        checks = {
            "timeout_s": self.timeout_s > 0,
            "max_bytes": self.max_bytes >= 1,
            "max_attempts": self.max_attempts >= 1,
            "backoff_base_s": self.backoff_base_s >= 0,
            "backoff_max_s": self.backoff_max_s >= 0,
            "rate_per_s": self.rate_per_s is None or self.rate_per_s > 0,
            "cache_ttl_s": self.cache_ttl_s > 0,
            "max_redirects": self.max_redirects >= 0,
        }
        for name, good in checks.items():
            if not good:
                raise UsageError(
                    f"RequestPolicy({name}={getattr(self, name)!r}) is out of range: "
                    "attempts and sizes count from 1, seconds and rates must be positive"
                )
        parse_bases(self.trusted_base_urls)
        parse_networks(self.allowed_networks)
