"""Error bodies a person can read: every refusal the API sends is JSON with a ``message``.

FastAPI answers an error with ``{"detail": ...}``, and for some refusals the detail is only
a status phrase ("Content Too Large"). The page shows what the server says, so each error
body also carries ``message``: what happened and what to do, in words, with the real limit
when a limit was passed. ``detail`` stays as it was, for programs that read it.

A body over the cap (413) says which cap: a chat message may be :data:`MAX_BODY_BYTES`
bytes, a dropped file the agent's ``max_upload_bytes``; the body then also names the limit
as ``limit_bytes``.
"""

from __future__ import annotations

import math
from http import HTTPStatus
from typing import Any

from fastapi import FastAPI, Request
from fastapi.encoders import jsonable_encoder
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from geomint.server.limits import MAX_BODY_BYTES

__all__ = ["ReadableTooLarge", "error_body", "install_error_bodies"]

#: What a bare status means to a person, when the route gave no sentence of its own.
_PLAIN: dict[int, str] = {
    400: "The server could not read this request.",
    404: "Nothing is at this address.",
    405: "This address does not take that kind of request.",
    409: "The server is busy with this chat; try again when it has answered.",
    429: "Too many requests at once; wait a moment and try again.",
    500: "The server failed while answering; try again, and see the server's log if it "
    "keeps failing.",
    503: "The server is not ready; try again in a moment.",
}


def _is_phrase(detail: Any, status: int) -> bool:
    """Whether ``detail`` is only the status's standard phrase (or nothing)."""
    if not isinstance(detail, str) or not detail.strip():
        return True
    try:
        return detail.strip().lower() == HTTPStatus(status).phrase.lower()
    except ValueError:
        return False


def _too_large(path: str, max_upload_bytes: int) -> dict[str, Any]:
    if path.rstrip("/").endswith("/uploads"):
        return {
            "message": (
                f"The file is larger than the server accepts: the limit for a dropped file "
                f"is {max_upload_bytes:,} bytes ({max_upload_bytes / 1e6:.0f} MB). Drop a "
                f"smaller file, or cut this one to the area or the columns you need."
            ),
            "limit_bytes": max_upload_bytes,
        }
    return {
        "message": (
            f"The message is longer than the server accepts: a message may be at most "
            f"{MAX_BODY_BYTES:,} bytes (about {MAX_BODY_BYTES:,} characters of plain text, "
            f"fewer with accents, symbols or line breaks). Shorten it; to give the map "
            f"data, drop it on the chat as a file instead."
        ),
        "limit_bytes": MAX_BODY_BYTES,
    }


def error_body(status: int, detail: Any, path: str, *, max_upload_bytes: int) -> dict[str, Any]:
    """The JSON body for a refusal: ``detail`` as FastAPI gives it, and a ``message``.

    Args:
        status: The HTTP status.
        detail: The route's detail (a sentence, a status phrase, or validation errors).
        path: The request's path (a 413 on an upload names the upload limit).
        max_upload_bytes: The upload route's cap.
    """
    body: dict[str, Any] = {"detail": detail}
    if status == 413:
        body.update(_too_large(path, max_upload_bytes))
    elif not _is_phrase(detail, status) and isinstance(detail, str):
        text = detail.strip()
        body["message"] = text[0].upper() + text[1:]
    else:
        body["message"] = _PLAIN.get(status, f"The server refused the request (HTTP {status}).")
    return body


def _invalid(errors: list[Any]) -> str:
    said = []
    for error in errors[:3]:
        where = ".".join(str(p) for p in error.get("loc", ()) if p != "body")
        said.append(f"{where}: {error.get('msg', 'invalid')}" if where else error.get("msg", ""))
    return "The request was not understood (" + "; ".join(said) + ")."


def _finite(value: Any) -> Any:
    """``value`` with every NaN or infinity spelled as a string: Python's JSON reader takes
    ``NaN`` in a body, and the error quoting it back must still be JSON."""
    if isinstance(value, float) and not math.isfinite(value):
        return repr(value)
    if isinstance(value, list):
        return [_finite(v) for v in value]
    if isinstance(value, dict):
        return {k: _finite(v) for k, v in value.items()}
    return value


def install_error_bodies(app: FastAPI, *, max_upload_bytes: int) -> None:
    """Make every HTTP error of ``app`` answer with :func:`error_body`."""

    async def http_error(request: Request, exc: Exception) -> JSONResponse:
        assert isinstance(exc, StarletteHTTPException)
        body = error_body(
            exc.status_code, exc.detail, request.url.path, max_upload_bytes=max_upload_bytes
        )
        return JSONResponse(body, exc.status_code, headers=exc.headers)

    async def invalid_request(request: Request, exc: Exception) -> JSONResponse:
        assert isinstance(exc, RequestValidationError)
        errors = list(exc.errors())
        body = {"detail": _finite(jsonable_encoder(errors)), "message": _invalid(errors)}
        return JSONResponse(body, 422)

    app.add_exception_handler(StarletteHTTPException, http_error)
    app.add_exception_handler(RequestValidationError, invalid_request)


class ReadableTooLarge:
    """ASGI middleware: a 413 answered as :func:`error_body`, whoever sent it.

    The body caps are Starlette's own middleware, which answers ``Content Too Large`` as
    plain text from outside the app's exception handlers; this sits outside them all and
    swaps that answer for the JSON one (an answer already JSON passes untouched).
    """

    def __init__(self, app: ASGIApp, *, max_upload_bytes: int) -> None:
        self.app = app
        self.max_upload_bytes = max_upload_bytes

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        swallowing = False

        async def readable(message: Message) -> None:
            nonlocal swallowing
            if message["type"] == "http.response.start" and message["status"] == 413:
                headers = dict(message.get("headers", []))
                if not headers.get(b"content-type", b"").startswith(b"application/json"):
                    swallowing = True
                    body = error_body(
                        413,
                        "Content Too Large",
                        scope.get("path", ""),
                        max_upload_bytes=self.max_upload_bytes,
                    )
                    await JSONResponse(body, 413)(scope, receive, send)
                    return
            if swallowing:
                return
            await send(message)

        await self.app(scope, receive, readable)
