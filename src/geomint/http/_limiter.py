"""Space the requests to each host, process-wide, so that none gets more than its rate."""

from __future__ import annotations

import math
import threading
import time
from collections.abc import Callable
from typing import Final

from geomint.errors import UsageError

__all__ = ["SHARED_LIMITER", "RateLimiter"]


class RateLimiter:
    """Space the requests to each host so that none gets more than its rate.

    Each request reserves the next free slot for its host under a lock, then waits
    outside it, so threads calling one host queue up in order while calls to other hosts
    are not held back. The caller does the waiting (it blocks): from asyncio, call
    through ``asyncio.to_thread``, as :func:`arequest` does.

    Hosts are told apart by name, ports ignored: a public service's usage policy (such
    as Nominatim's one request per second) is per host.

    Args:
        clock: Monotonic seconds; a test passes a fake one.
    """

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self._clock = clock
        self._lock = threading.Lock()
        self._next: dict[str, float] = {}

    def reserve(self, host: str, rate_per_s: float, max_wait_s: float = math.inf) -> float:
        """Take the next slot for ``host`` and return the seconds to wait until it.

        If the wait would be longer than ``max_wait_s``, no slot is taken; the returned
        wait says how long it would have been.
        """
        if not rate_per_s > 0:
            raise UsageError(f"rate_per_s={rate_per_s} must be positive")
        host = host.lower()
        with self._lock:
            now = self._clock()
            slot = max(now, self._next.get(host, now))
            if slot - now > max_wait_s:
                return slot - now
            self._next[host] = slot + 1.0 / rate_per_s
            if len(self._next) > 1024:  # forget hosts whose slots are all in the past
                self._next = {name: at for name, at in self._next.items() if at > now}
        return slot - now


#: The limiter a policy uses unless given another: one for the whole process.
SHARED_LIMITER: Final = RateLimiter()
