"""The one error a fetch or a provider request raises, and the codes that tell its kinds apart."""

from __future__ import annotations

from typing import Final, Literal

from geomint.errors import ModelFacingError

__all__ = ["REFUSALS", "FetchError", "FetchErrorCode"]

FetchErrorCode = Literal[
    "scheme",
    "address",
    "vetoed",
    "too_large",
    "timeout",
    "redirects",
    "status",
    "content_type",
    "decompression",
    "connection",
    "rate_limited",
    "malformed",
]
#: The codes that are a refusal of what was asked, rather than a failure of the server.
REFUSALS: Final = frozenset({"scheme", "address", "vetoed", "too_large", "redirects"})


class FetchError(ModelFacingError):
    """A fetch was refused or failed; the message says what was wrong and what to do.

    Attributes:
        code: What kind of failure, for code that branches on it (see ``FetchErrorCode``).
        url: The URL the caller asked for, with any user name and password removed and
            every secret replaced by ``***``. When a redirect target was the problem, the
            message names that target too.
        reason: The message without the URL it is about, for a caller that names the
            URL itself; None when a redirect target was the problem.
        status: The HTTP status of the answer that failed (code ``status`` or
            ``rate_limited``), else None.
        retry_after: Seconds the server asked the client to wait (``Retry-After``), or
            the wait a rate limit imposed, when known.
        attempts: How many times the request was sent before giving up.
        detail: The start of an error answer's body, printable and redacted, when the
            caller asked for it (the provider client does); else None.
    """

    def __init__(
        self,
        code: FetchErrorCode,
        url: str,
        message: str,
        reason: str | None = None,
        *,
        status: int | None = None,
        retry_after: float | None = None,
        attempts: int = 1,
        detail: str | None = None,
    ) -> None:
        super().__init__(message)
        self.code: FetchErrorCode = code
        self.url = url
        self.reason = reason
        self.status = status
        self.retry_after = retry_after
        self.attempts = attempts
        self.detail = detail

    def __repr__(self) -> str:
        return f"FetchError({self.code!r}, {self.url!r}, {str(self)!r})"
