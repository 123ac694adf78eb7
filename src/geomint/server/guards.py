"""Who the app answers: the checks every request passes before any route sees it.

Three small ASGI middlewares, each refusing with a JSON ``{"error": ...}`` and letting
everything else through untouched (a streamed answer is not buffered, a disconnect reaches
the route). :func:`geomint.server.create_app` stacks them so that the token is checked
first, then the host, then the origin:

- :class:`RequireToken`: every ``/api/`` call needs the access token, as
  ``Authorization: Bearer <token>`` or the :data:`TOKEN_COOKIE` the page's token link set
  (401).
- :class:`AllowedHosts`: the app answers only to the host names it was given (421), so a
  site whose own domain resolves to 127.0.0.1 cannot reach a server on localhost (DNS
  rebinding).
- :class:`SameOriginWrites`: a request that changes something (POST, PATCH, DELETE)
  from a page of another site is refused (403), whatever the host: a site the person
  visits must not ask questions, upload files, answer approvals, or rename or delete
  chats in their name.

Request bodies are capped by FastAPI's own ``max_body_size`` (see :mod:`.app`), not here.
"""

from __future__ import annotations

import hmac
from collections.abc import Iterable
from typing import Final
from urllib.parse import urlsplit

from starlette.requests import HTTPConnection
from starlette.responses import JSONResponse
from starlette.types import ASGIApp, Receive, Scope, Send

__all__ = ["TOKEN_COOKIE", "AllowedHosts", "RequireToken", "SameOriginWrites"]

#: The cookie the access token travels in after the page was opened with ``?token=``.
TOKEN_COOKIE: Final = "geomint_token"  # noqa: S105 - a cookie's name, not a secret
_SAFE_METHODS: Final = frozenset({"GET", "HEAD", "OPTIONS"})


class RequireToken:
    """Refuse a call under ``prefix`` (``/api/``) without the access token (compared in
    constant time), as the bearer header or, where ``cookie``, the page's cookie."""

    def __init__(
        self, app: ASGIApp, *, token: str, prefix: str = "/api/", cookie: bool = True
    ) -> None:
        if not token:
            raise ValueError("an access token must not be empty: pass None for no token")
        self.app = app
        self.token = token.encode()
        self.prefix = prefix
        self.cookie = cookie  # the page's cookie; an MCP client sends the header

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] in ("http", "websocket"):
            request = HTTPConnection(scope)
            if _route_path(scope).startswith(self.prefix):
                header = request.headers.get("authorization", "")
                given = header[len("Bearer ") :] if header.startswith("Bearer ") else ""
                if self.cookie:
                    given = given or request.cookies.get(TOKEN_COOKIE, "")
                if not hmac.compare_digest(given.encode(), self.token):
                    refusal = JSONResponse({"error": "a valid access token is required"}, 401)
                    await refusal(scope, receive, send)
                    return
        await self.app(scope, receive, send)


def _route_path(scope: Scope) -> str:
    """The path the router matches: without the prefix the app is served under (an ASGI
    ``root_path``, or a parent app's mount), which ``scope["path"]`` still carries."""
    path: str = scope["path"]
    root: str = scope.get("root_path", "")
    return path[len(root) :] if root and path.startswith(root) else path


class AllowedHosts:
    """Answer only to the named hosts (``[::1]:8000`` is ``::1``); others get 421.

    Not starlette's ``TrustedHostMiddleware``, which answers 400 where 421 (Misdirected
    Request) says what happened and is what clients and our tests expect; it also keeps the
    brackets of an IPv6 host (``::1`` would not match ``[::1]:8000``), reads an entry
    starting with ``*`` as a wildcard (changing what ``geomint serve --allowed-host``
    means) and can redirect a bare domain to its ``www.`` name.
    """

    def __init__(self, app: ASGIApp, *, hosts: Iterable[str]) -> None:
        self.app = app
        self.hosts = frozenset(h.lower().strip("[]") for h in hosts)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            host = HTTPConnection(scope).headers.get("host", "")
            if urlsplit(f"//{host}").hostname not in self.hosts:
                refusal = JSONResponse({"error": f"this server does not answer to {host!r}"}, 421)
                await refusal(scope, receive, send)
                return
        await self.app(scope, receive, send)


class SameOriginWrites:
    """Refuse a POST (any unsafe method) sent by a page of another site with 403."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and scope["method"] not in _SAFE_METHODS:
            headers = HTTPConnection(scope).headers
            origin = headers.get("origin")
            cross = headers.get("sec-fetch-site") == "cross-site"
            if cross or (origin is not None and urlsplit(origin).netloc != headers.get("host", "")):
                refusal = JSONResponse({"error": "requests from other sites are refused"}, 403)
                await refusal(scope, receive, send)
                return
        await self.app(scope, receive, send)
