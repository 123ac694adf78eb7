"""What a guarded fetch is given and gives back: its policy, and the response it accepted."""

from __future__ import annotations

import importlib.metadata
from collections.abc import Callable
from dataclasses import dataclass
from typing import Final, Literal

from geomint.errors import UsageError
from geomint.http._addresses import parse_networks

__all__ = ["FETCH_USER_AGENT", "FetchPolicy", "Fetched", "Method"]

Method = Literal["GET", "POST"]


def _package_version() -> str:
    try:
        return importlib.metadata.version("geomint")
    except importlib.metadata.PackageNotFoundError:
        return "0"


#: The ``User-Agent`` a fetch sends unless its policy names another: geomint and its version.
FETCH_USER_AGENT: Final = f"geomint/{_package_version()}"


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
    user_agent: str = FETCH_USER_AGENT

    def __post_init__(self) -> None:
        if self.max_bytes < 1:
            raise UsageError(f"FetchPolicy(max_bytes={self.max_bytes}) must be at least 1")
        if not self.timeout_s > 0:
            raise UsageError(f"FetchPolicy(timeout_s={self.timeout_s}) must be positive")
        if self.max_redirects < 0:
            raise UsageError(f"FetchPolicy(max_redirects={self.max_redirects}) must be >= 0")
        parse_networks(self.allowed_networks)
