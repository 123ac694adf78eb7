"""Why a model call failed, in words a person can act on.

pydantic-ai sorts a provider's failures into exception classes (a rate limit, a server
error, a broken connection, a refusal, a model that kept writing unusable tool calls);
their messages are written for a developer and carry the raw response body. A turn that
ends on one shows the person :func:`model_failure`'s sentence instead: what happened,
what the server said, and what to do next. Retries have already happened by then: the
provider SDK retries a 429, a 5xx and a failed connection before the error is raised
(``max_retries`` of :func:`~geomint.models.resolve_model`, two by default), honouring a
``Retry-After`` header.
"""

from __future__ import annotations

import json
import re
from typing import Any, Final

from pydantic_ai.exceptions import (
    ContentFilterError,
    ModelAPIError,
    ModelAuthenticationError,
    ModelConnectionError,
    ModelContextWindowExceededError,
    ModelHTTPError,
    ModelNotFoundError,
    ModelRateLimitError,
    ModelServerError,
    ModelUnavailableError,
    UnexpectedModelBehavior,
)

__all__ = ["ARGUMENT_RETRIES", "model_failure", "refusal_message"]

#: How many times in a row the model may write a tool call whose arguments cannot be read
#: (not JSON) and be asked to write it again, before the turn ends on it.
ARGUMENT_RETRIES: Final = 2

_MAX_CHARS: Final = 1_000
_SAID_CHARS: Final = 300
_EXCEEDED = re.compile(r"Tool '([^']+)' exceeded max retries count of (\d+)")


def model_failure(exc: BaseException) -> str:
    """Say why a turn's model call failed, for the person reading the chat.

    Args:
        exc: What the model call raised (pydantic-ai's exceptions are recognised; any
            other is named with its message).

    Returns:
        One or two sentences: what went wrong, what the server said, what to try.

    Example:
        >>> from pydantic_ai.exceptions import ModelHTTPError
        >>> error = ModelHTTPError(503, "gpt-4.1", {"message": "overloaded"})
        >>> print(model_failure(error))
        The model server is unavailable (HTTP 503: overloaded). Ask again in a minute.
    """
    said = _said(exc)
    match exc:
        case ContentFilterError():
            return refusal_message(_refusal(exc))
        case ModelRateLimitError() | ModelHTTPError(status_code=429):
            return _cut(
                f"The model server is limiting requests (HTTP 429{said}{_wait(exc)}). Wait a "
                "minute and ask again; a higher rate limit or quota from the provider stops it."
            )
        case ModelAuthenticationError() | ModelHTTPError(status_code=401 | 403):
            return _cut(
                f"The model server refused the API key{_status(exc, said)}. Check the key "
                "(OPENAI_API_KEY or ANTHROPIC_API_KEY) and the server it is for."
            )
        case ModelNotFoundError() | ModelHTTPError(status_code=404):
            return _cut(
                f"The model server does not know the model {exc.model_name!r}"
                f"{_status(exc, said)}. Check GEOMINT_MODEL and the base URL."
            )
        case ModelContextWindowExceededError():
            return _cut(
                f"The conversation is too long for the model {exc.model_name!r}"
                f"{_status(exc, said)}. Start a new chat, or use a model with a longer context."
            )
        case ModelUnavailableError() | ModelHTTPError(status_code=502 | 503 | 504 | 529):
            return _cut(
                f"The model server is unavailable{_status(exc, said)}. Ask again in a minute."
            )
        case ModelServerError() | ModelHTTPError(status_code=500):
            return _cut(
                f"The model server failed{_status(exc, said)}, also when geomint's client "
                "retried. It is usually brief: ask again in a moment."
            )
        case ModelConnectionError():
            return _cut(
                "The connection to the model server broke off before its answer was complete "
                f"({_transport(exc)}). What was said so far is kept; ask again to go on."
            )
        case ModelHTTPError():
            return _cut(f"The model server refused the request{_status(exc, said)}.")
        case ModelAPIError():
            return _cut(f"The model server could not be used: {exc.message}")
        case UnexpectedModelBehavior() if (found := _EXCEEDED.search(exc.message)) is not None:
            tool, limit = found.group(1), int(found.group(2))
            reason = _cause(exc)
            return _cut(
                f"The model kept writing calls of {tool} that could not be read "
                f"({limit + 1} in a row{reason}), so the turn was stopped. Ask again; if it "
                "goes on, use a model that handles tool calls (docs/models.md)."
            )
        case UnexpectedModelBehavior():
            return _cut(f"The model's answer could not be used: {exc.message}")
    return _cut(f"The model failed: {type(exc).__name__}: {exc}")


def refusal_message(refusal: str | None) -> str:
    """Say that the model declined to answer, with its reason when it gave one.

    >>> print(refusal_message("Not that."))
    The model declined to answer, saying: “Not that.” Ask in other words, or ask something else.
    """
    said = f", saying: “{_short(refusal)}”" if refusal else " (it gave no reason)."
    return _cut(f"The model declined to answer{said} Ask in other words, or ask something else.")


def _refusal(exc: ContentFilterError) -> str | None:
    """The refusal's text, from the response the error carries."""
    try:
        responses = json.loads(exc.body or "[]")
        details = responses[-1].get("provider_details") or {}
    except (ValueError, AttributeError, IndexError, TypeError):
        return None
    refusal = details.get("refusal")
    return refusal if isinstance(refusal, str) and refusal.strip() else None


def _said(exc: BaseException) -> str:
    """What the server's error body says, as ``": <message>"`` (empty when nothing)."""
    body: Any = getattr(exc, "body", None)
    message: Any = None
    if isinstance(body, dict):
        inner = body.get("error")
        message = inner.get("message") if isinstance(inner, dict) else body.get("message")
    elif isinstance(body, str):
        message = body
    return f": {_short(message)}" if isinstance(message, str) and message.strip() else ""


def _status(exc: BaseException, said: str) -> str:
    code = getattr(exc, "status_code", None)
    if code is None:
        return f" ({said.removeprefix(': ')})" if said else ""
    return f" (HTTP {code}{said})"


def _wait(exc: ModelAPIError) -> str:
    if exc.retry_after is None:
        return ""
    return f"; it asked for a wait of {exc.retry_after:g} s"


def _transport(exc: ModelConnectionError) -> str:
    """The transport's own words for a broken connection (the SDK's are often just
    "Connection error.")."""
    root: BaseException = exc
    seen = 0
    while root.__cause__ is not None and seen < 5:
        root, seen = root.__cause__, seen + 1
    return _short(str(root) or exc.message)


def _cause(exc: BaseException) -> str:
    cause = exc.__cause__
    if cause is None:
        return ""
    first = str(cause).strip().splitlines()
    detail = next((line.strip() for line in first[1:] if line.strip()), "")
    return f"; the last: {_short(detail)}" if detail else ""


def _short(text: str | None) -> str:
    text = " ".join((text or "").split())
    return text if len(text) <= _SAID_CHARS else text[: _SAID_CHARS - 1] + "…"


def _cut(text: str) -> str:
    return text if len(text) <= _MAX_CHARS else text[: _MAX_CHARS - 1] + "…"
