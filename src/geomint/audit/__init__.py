"""What an operator sees of security: one structured log line and a counter per event.

Every layer that refuses or stops something hostile (Gate 1, a child killed at a limit, a
refused URL or approval, a rate-limited client, a closed slow connection) calls
:func:`record`. The line goes to the ``geomint.security`` logger as JSON, for whatever
the operator ships logs to; the counters are what ``/api/health`` shows. Neither ever
holds a secret, the code a model wrote or a user's data: callers pass short, fixed
reasons and sizes, and :func:`record` cuts every string field to 200 characters.

This package imports nothing of geomint's, so every layer may use it.
"""

from __future__ import annotations

import json
import logging
import threading
from collections import Counter
from typing import Final

__all__ = ["EVENTS", "counts", "record", "reset"]

#: The events, and what each means (docs/security.md lists them for operators).
EVENTS: Final = {
    "gate1_refused": "Gate 1 refused model-written code before it ran",
    "child_killed": "a confined child was stopped at a limit (time, memory, reply size)",
    "url_refused": "a URL was refused (private address, scheme, size, or a veto)",
    "upload_refused": "an uploaded or fetched file was refused by intake",
    "approval_refused": "a person refused a call that needed approval",
    "rate_limited": "a client was refused for going over a rate limit",
    "slow_connection_closed": "a connection that did not finish its request in time was closed",
    "connection_shed": "a connection was closed because too many had not finished a request",
}

_MAX_FIELD: Final = 200
_log = logging.getLogger("geomint.security")
_lock = threading.Lock()
_counts: Counter[str] = Counter()


def record(event: str, **fields: str | int | float | bool | None) -> None:
    """Count ``event`` and log it as one JSON line with ``fields``.

    Raises:
        ValueError: ``event`` is not one of :data:`EVENTS` (a typo must not hide a count).
    """
    if event not in EVENTS:
        raise ValueError(f"unknown security event {event!r}; the events are {sorted(EVENTS)}")
    with _lock:
        _counts[event] += 1
    line: dict[str, object] = {"event": event}
    for key, value in fields.items():
        line[key] = value[:_MAX_FIELD] if isinstance(value, str) else value
    _log.warning("%s", json.dumps(line, sort_keys=True, default=str))


def counts() -> dict[str, int]:
    """How many times each event happened in this process, every event listed."""
    with _lock:
        return {event: _counts[event] for event in EVENTS}


def reset() -> None:
    """Zero the counters (for tests)."""
    with _lock:
        _counts.clear()
