"""The shapes of the ids this package deals in, and how to read and list them.

Value ids are ``v<n>`` and layer ids ``l<n>``, each numbered from 1 per chat; entry ids
are ``<kind>-<n>`` (``places-1``, ``byod-0``) and belong to the state of the chat.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Final

__all__ = [
    "ENTRY_ID",
    "LAYER_ID",
    "NEAR_LAYER_ID",
    "NEAR_VALUE_ID",
    "VALUE_ID",
    "describe_ids",
    "number_of",
]

VALUE_ID: Final = re.compile(r"v[1-9][0-9]*")
LAYER_ID: Final = re.compile(r"l[1-9][0-9]*")
ENTRY_ID: Final = re.compile(r"[a-z_]+-(?:0|[1-9][0-9]*)")

# "V3", " v3 ", "value 3", "v#3": near misses worth naming back, never silently taken.
NEAR_VALUE_ID: Final = re.compile(r"\s*v(?:alue)?[\s_#-]*0*([1-9][0-9]*)\s*", re.IGNORECASE)
NEAR_LAYER_ID: Final = re.compile(r"\s*l(?:ayer)?[\s_#-]*0*([1-9][0-9]*)\s*", re.IGNORECASE)

# Past this many runs of consecutive ids a listing shows its start and its end only.
_LISTED_RUNS: Final = 6


def number_of(record_id: str) -> int:
    """Return the number of an id known to be a value or layer id: ``"v12"`` -> 12."""
    return int(record_id[1:])


def describe_ids(prefix: str, numbers: Iterable[int]) -> str:
    """List ids compactly, as runs of consecutive numbers.

    Example:
        >>> describe_ids("v", [1, 2, 3, 5, 7, 8])
        'v1..v3, v5, v7..v8'
        >>> describe_ids("v", range(1, 40, 2))
        'v1, v3, …, v35, v37, v39 (20 in all)'
    """
    ordered = sorted(set(numbers))
    runs: list[tuple[int, int]] = []
    for n in ordered:
        if runs and runs[-1][1] == n - 1:
            runs[-1] = (runs[-1][0], n)
        else:
            runs.append((n, n))
    parts = [f"{prefix}{a}" if a == b else f"{prefix}{a}..{prefix}{b}" for a, b in runs]
    if len(parts) <= _LISTED_RUNS:
        return ", ".join(parts)
    return f"{', '.join(parts[:2])}, …, {', '.join(parts[-3:])} ({len(ordered)} in all)"
