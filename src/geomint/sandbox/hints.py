"""Self-correcting error hints: a curated table from error text to a fix (stub)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Protocol

__all__ = ["UNPARSABLE_HINT", "ErrorLike", "hint_for"]

UNPARSABLE_HINT = (
    "write a plain Python function body (no markdown around it), ending with `return <value>`"
)


class ErrorLike(Protocol):
    """What a hint is chosen from."""

    @property
    def type(self) -> str: ...
    @property
    def message(self) -> str: ...
    @property
    def code_line(self) -> str | None: ...


def hint_for(error: ErrorLike, inputs: Mapping[str, Any]) -> str | None:
    """Return a targeted suggestion for a known pitfall, or None."""
    return None
