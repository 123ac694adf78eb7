"""What one client may cost the server: turns per minute.

:class:`TurnLimiter` is a token bucket per client; IPv6 clients are counted per /64 (the
block one subscriber usually holds), and buckets that have refilled are forgotten so that
the table cannot grow without bound. Request bodies are capped by FastAPI's own
``max_body_size``, counted as they arrive (see :mod:`.app`).
"""

from __future__ import annotations

import ipaddress
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Final

__all__ = ["MAX_BODY_BYTES", "TurnLimiter", "client_key"]

#: The largest request body accepted: a chat message, not an upload.
MAX_BODY_BYTES: Final = 64_000
#: Buckets kept before the refilled ones are swept out.
_SWEEP_AT: Final = 512
_SWEEP_EVERY_S: Final = 60.0


def client_key(host: str) -> str:
    """Who a turn is counted against: the address, or its /64 for IPv6."""
    try:
        address = ipaddress.ip_address(host)
    except ValueError:
        return host
    if isinstance(address, ipaddress.IPv6Address):
        if address.ipv4_mapped is not None:
            return str(address.ipv4_mapped)
        return str(ipaddress.IPv6Network((address, 64), strict=False))
    return str(address)


@dataclass
class TurnLimiter:
    """Chat turns per client: a token bucket (``burst`` at once, ``per_minute`` refilled).

    A turn costs model calls and sandbox time; one client must not take them all.
    """

    per_minute: float = 12.0
    burst: int = 4
    clock: Callable[[], float] = time.monotonic
    _buckets: dict[str, tuple[float, float]] = field(default_factory=dict)
    _sweep_at: int = _SWEEP_AT
    _swept: float = 0.0

    def wait(self, client: str) -> float:
        """Take a turn for ``client``: 0 when allowed, else the seconds until one is."""
        now = self.clock()
        if len(self._buckets) >= self._sweep_at or now - self._swept >= _SWEEP_EVERY_S:
            self._sweep(now)
            # Sweeping once a minute, or when the table has doubled, keeps each turn O(1)
            # on average however many clients are still waiting for their bucket.
            self._swept = now
            self._sweep_at = max(_SWEEP_AT, 2 * len(self._buckets))
        tokens, last = self._buckets.get(client, (float(self.burst), now))
        tokens = self._refilled(tokens, last, now)
        if tokens >= 1:
            self._buckets[client] = (tokens - 1, now)
            return 0.0
        self._buckets[client] = (tokens, now)
        return (1 - tokens) * 60 / self.per_minute

    def _refilled(self, tokens: float, last: float, now: float) -> float:
        return min(float(self.burst), tokens + (now - last) * self.per_minute / 60)

    def _sweep(self, now: float) -> None:
        """Forget the clients whose bucket is full again: they are as good as new."""
        self._buckets = {
            client: (tokens, last)
            for client, (tokens, last) in self._buckets.items()
            if self._refilled(tokens, last, now) < self.burst
        }
