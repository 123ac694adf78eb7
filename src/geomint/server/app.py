"""The web app (FastAPI): the page, and the API it talks to, assembled from its parts.

A chat's id is chosen by the browser and kept in its URL (``/chat/<id>``); the client sends
only its newest message, and the server reads the thread from the store. The routes live
in :mod:`.routes` (the page, chats, exports, layers, rasters, turns, uploads), the checks
every request passes first in :mod:`.guards` (the token, the host, the origin).
:func:`create_app` stacks the checks, puts what the routes share on ``app.state``, and
includes the routers.

Deployments can require a token (``Authorization: Bearer <token>``) on every API call;
turns, uploads and new chats are rate limited per client (a chat is stored with its first
message or file, not when the page opens it: :mod:`.new_chat`); bodies are size-capped.
"""

from __future__ import annotations

from collections.abc import Iterable

from fastapi import FastAPI
from starlette.types import ASGIApp

from geomint import __version__
from geomint.agent import MapAgent
from geomint.errors import UsageError
from geomint.server.approvals import Approvals
from geomint.server.errors import ReadableTooLarge, install_error_bodies
from geomint.server.guards import TOKEN_COOKIE, AllowedHosts, RequireToken, SameOriginWrites
from geomint.server.limits import MAX_BODY_BYTES, TurnLimiter
from geomint.server.new_chat import NewChat
from geomint.server.routes import (
    chats,
    exports,
    layers,
    mapcode,
    mapview,
    page,
    rasters,
    turns,
    uploads,
)
from geomint.server.routes._deps import Served

__all__ = ["MAX_BODY_BYTES", "TOKEN_COOKIE", "TurnLimiter", "create_app"]


class _App(FastAPI):
    """FastAPI with :class:`ReadableTooLarge` outside its own body caps."""

    def build_middleware_stack(self) -> ASGIApp:
        stack = super().build_middleware_stack()
        return ReadableTooLarge(stack, max_upload_bytes=self.state.served.max_upload_bytes)


def create_app(
    agent: MapAgent,
    *,
    token: str | None = None,
    limiter: TurnLimiter | None = None,
    approvals: Approvals | None = None,
    allowed_hosts: Iterable[str] | None = None,
) -> FastAPI:
    """The app for one agent (one store, one sandbox, one set of providers).

    Args:
        agent: The agent every chat runs on.
        token: When set, every ``/api`` call needs ``Authorization: Bearer <token>``
            (for deployments; leave it off on localhost).
        limiter: Chat turns and uploads per client (12 a minute, 4 at once by default).
        approvals: Where runs wait for a person's answer (10 minutes, then refused).
        allowed_hosts: Host names the app answers to (``geomint serve`` on localhost passes
            the loopback names, so a web page whose own domain resolves to 127.0.0.1
            cannot reach it: DNS rebinding); None answers to any.

    Requests that change something (POST) from a page of another origin are refused
    whatever the hosts: a site the person visits must not ask questions, upload files or
    answer approvals in their name.
    """
    app = _App(
        title="geomint",
        version=__version__,
        docs_url=None,
        redoc_url=None,
        openapi_url=None,
        # Counted as the body arrives, with or without a Content-Length; uploads have
        # their own limit on their router.
        max_body_size=MAX_BODY_BYTES,
    )
    if token is not None and not token:
        # Two empty strings compare equal: an empty token would let every call through.
        raise UsageError("the access token is empty; pass None for no token")
    max_upload = agent.settings.max_upload_bytes
    app.state.served = Served(
        agent=agent,
        approvals=approvals or Approvals(),
        limiter=limiter or TurnLimiter(),
        token=token,
        max_upload_bytes=max_upload,
        new_chat=NewChat(agent),
    )
    install_error_bodies(app, max_upload_bytes=max_upload)
    # The last added runs first: the token, then the host, then the origin.
    app.add_middleware(SameOriginWrites)
    if allowed_hosts is not None:
        app.add_middleware(AllowedHosts, hosts=tuple(allowed_hosts))
    if token is not None:
        app.add_middleware(RequireToken, token=token)
    app.include_router(page.router)
    app.include_router(chats.router)
    app.include_router(exports.router)
    app.include_router(layers.router)
    app.include_router(rasters.router)
    app.include_router(turns.router)
    app.include_router(mapview.router)
    app.include_router(mapcode.router)
    app.include_router(uploads.router, max_body_size=max_upload)
    return app
