"""The web app (FastAPI): the page, and the API it talks to.

A chat's id is chosen by the browser and kept in its URL (``/chat/<id>``); the client sends
only its newest message (as the AI SDK's ``sendMessage`` body), and the server reads the
thread from the store. The answer streams in the Vercel AI UI-message protocol
(:mod:`.stream`); a tool that needs approval waits for the browser's answer
(:mod:`.approvals`). A reload reads the chat back (:mod:`.thread`). Files dropped into
the chat go through intake. Static files (the vendored front end and the offline basemap)
are served with HTTP Range support, which PMTiles needs.

Routes: ``GET /`` and ``/chat/<id>`` (the page), ``/api/health``, ``GET /api/chats``,
``GET|POST /api/chats/<id>`` (read; create, with the demo data when the model is the demo
model), ``POST /api/chat`` (a turn), ``POST /api/chats/<id>/approvals/<approval id>``,
``POST /api/chats/<id>/uploads?name=<file name>`` (the file as the body),
``GET /api/chats/<id>/analyses/<analysis id>``, ``GET /api/chats/<id>/entries/<entry
id>?version=<n>`` (an entry's GeoJSON, for parts sent by reference), ``GET
/basemap/streets.geojson`` (the
bundled Helsinki streets under the map's entries).

Deployments can require a token (``Authorization: Bearer <token>``) on every API call;
turns and uploads are rate limited per client; bodies are size-capped.
"""

from __future__ import annotations

import asyncio
import functools
import gzip
import hmac
import math
from collections.abc import Iterable
from pathlib import Path
from typing import Any, Final
from urllib.parse import urlsplit

from fastapi import FastAPI, HTTPException, Request
from fastapi.responses import (
    FileResponse,
    JSONResponse,
    RedirectResponse,
    Response,
    StreamingResponse,
)
from fastapi.staticfiles import StaticFiles
from pydantic import BaseModel, ConfigDict, Field

from geomint import __version__, audit
from geomint.agent import MapAgent
from geomint.errors import UsageError
from geomint.providers import bundled
from geomint.server.approvals import Approvals
from geomint.server.limits import MAX_BODY_BYTES, TurnLimiter, client_key
from geomint.server.stream import HEADERS, encode_sse, ui_chunks
from geomint.server.thread import analysis_view, chat_view, entry_geojson, parts_view
from geomint.state.events import is_chat_id
from geomint.store import NoSuchChatError

__all__ = ["MAX_BODY_BYTES", "TOKEN_COOKIE", "TurnLimiter", "create_app"]

#: The cookie the access token travels in after the page was opened with ``?token=``.
TOKEN_COOKIE: Final = "geomint_token"  # noqa: S105 - a cookie's name, not a secret
_STATIC: Final = Path(__file__).parent / "static"
_SAFE_METHODS: Final = frozenset({"GET", "HEAD", "OPTIONS"})
#: The page runs only its own scripts and talks only to this server (workers come from
#: blob: URLs MapLibre makes); nothing a chat shows can load or run anything else.
_PAGE_HEADERS: Final = {
    "content-security-policy": (
        "default-src 'self'; script-src 'self'; worker-src 'self' blob:; "
        "img-src 'self' data: blob:; style-src 'self'; "
        "connect-src 'self'; font-src 'self'; object-src 'none'; base-uri 'none'; "
        "frame-ancestors 'none'"
    ),
    "x-content-type-options": "nosniff",
    "referrer-policy": "no-referrer",
    "cache-control": "no-cache",
}


class _Answer(BaseModel):
    """The person's answer to an approval request."""

    model_config = ConfigDict(extra="forbid")

    approved: bool
    reason: str = Field(default="", max_length=500)


class _Part(BaseModel):
    model_config = ConfigDict(extra="allow")

    type: str
    text: str | None = None


class _Message(BaseModel):
    model_config = ConfigDict(extra="allow")

    id: str = ""
    role: str
    parts: list[_Part] = Field(default_factory=list)


class ChatRequest(BaseModel):
    """What the browser sends: the chat's id and its newest message (older ones ignored)."""

    model_config = ConfigDict(extra="allow")

    id: str
    messages: list[_Message] = Field(min_length=1)

    def question(self) -> str:
        """The newest user message's text."""
        for message in reversed(self.messages):
            if message.role == "user":
                text = "\n".join(p.text for p in message.parts if p.type == "text" and p.text)
                if text.strip():
                    try:
                        text.encode("utf-8")
                    except UnicodeEncodeError:
                        raise UsageError(
                            "the message holds text that is not valid Unicode"
                        ) from None
                    return text
        raise UsageError("the request has no user message with text")


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
    app = FastAPI(
        title="geomint",
        version=__version__,
        docs_url=None,
        redoc_url=None,
        openapi_url=None,
        # Counted as the body arrives, with or without a Content-Length; uploads have
        # their own limit on their route.
        max_body_size=MAX_BODY_BYTES,
    )
    turns = limiter or TurnLimiter()
    waiting = approvals or Approvals()
    max_upload = agent.settings.max_upload_bytes
    hosts = None if allowed_hosts is None else {h.lower().strip("[]") for h in allowed_hosts}

    @app.middleware("http")
    async def _same_origin(request: Request, call_next: Any) -> Any:
        host = request.headers.get("host", "")
        if hosts is not None and urlsplit(f"//{host}").hostname not in hosts:
            return JSONResponse({"error": f"this server does not answer to {host!r}"}, 421)
        if request.method not in _SAFE_METHODS:
            origin = request.headers.get("origin")
            cross = request.headers.get("sec-fetch-site") == "cross-site"
            if cross or (origin is not None and urlsplit(origin).netloc != host):
                return JSONResponse({"error": "requests from other sites are refused"}, 403)
        return await call_next(request)

    @app.middleware("http")
    async def _token(request: Request, call_next: Any) -> Any:
        if token is not None and request.url.path.startswith("/api/"):
            given = request.headers.get("authorization", "").removeprefix("Bearer ")
            given = given or request.cookies.get(TOKEN_COOKIE, "")
            if not hmac.compare_digest(given.encode(), token.encode()):
                return JSONResponse({"error": "a valid access token is required"}, status_code=401)
        return await call_next(request)

    def _take_turn(request: Request, limit: str) -> None:
        client = client_key(request.client.host if request.client else "unknown")
        wait = turns.wait(client)
        if wait > 0:
            audit.record("rate_limited", client=client, limit=limit)
            raise HTTPException(
                429,
                f"too many requests at once; try again in {math.ceil(wait)} s",
                headers={"retry-after": str(math.ceil(wait))},
            )

    def _not_busy(chat_id: str) -> None:
        if agent.is_busy(chat_id):
            raise HTTPException(
                409,
                "this chat is still answering (perhaps in another tab, or waiting for an "
                "approval there); wait for that answer or stop it, then try again",
            )

    def _chat_id(chat_id: str) -> str:
        if not is_chat_id(chat_id):
            raise HTTPException(422, "a chat id is 1-64 letters, digits, '-' or '_'")
        return chat_id

    # -- the page ----------------------------------------------------------------------------

    def _page(request: Request) -> Response:
        given = request.query_params.get("token")
        if token is None or given is None:
            return FileResponse(_STATIC / "index.html", headers=_PAGE_HEADERS)
        # The link `geomint serve` prints carries the token once: it becomes a cookie the
        # page's API calls send (HttpOnly: no script reads it), and leaves the address bar.
        if not hmac.compare_digest(given.encode(), token.encode()):
            return JSONResponse({"error": "that access token is not this server's"}, 401)
        response = RedirectResponse(request.url.remove_query_params("token").path, 303)
        response.set_cookie(
            TOKEN_COOKIE, token, httponly=True, samesite="strict", path="/", max_age=30 * 86400
        )
        return response

    @app.get("/", include_in_schema=False)
    async def page(request: Request) -> Response:
        return _page(request)

    @app.get("/chat/{chat_id}", include_in_schema=False)
    async def chat_page(chat_id: str, request: Request) -> Response:
        _chat_id(chat_id)
        return _page(request)

    # -- the API -----------------------------------------------------------------------------

    @app.get("/api/health")
    async def health() -> dict[str, Any]:
        try:
            agent.chats.store.chat_ids()
            store = "ok"
        except Exception as exc:  # the health check reports, it does not fail
            store = f"unavailable: {type(exc).__name__}"
        return {
            "status": "ok" if store == "ok" else "degraded",
            "version": __version__,
            "store": store,
            "sandbox": agent.code_execution_mode,
            "model": agent.model_info,
            "max_upload_bytes": max_upload,
            "security": audit.counts(),
        }

    @app.get("/api/chats")
    async def chats() -> list[dict[str, Any]]:
        return [
            {
                "id": c.chat_id,
                "title": c.title,
                "last_message_at": c.last_message_at,
                "messages": c.message_count,
            }
            for c in agent.chats.list_chats()
            if c.message_count
        ]

    @app.get("/api/chats/{chat_id}")
    async def read_chat(chat_id: str) -> dict[str, Any]:
        try:
            # Off the event loop: a chat with big entries takes a while to read back.
            return await asyncio.to_thread(chat_view, agent.chats, _chat_id(chat_id))
        except NoSuchChatError:
            raise HTTPException(404, f"no chat {chat_id!r}") from None

    @app.get("/api/chats/{chat_id}/parts")
    async def read_parts(chat_id: str) -> dict[str, Any]:
        """Everything the chat showed, in order: the parts its runs streamed, read back."""
        try:
            return await asyncio.to_thread(parts_view, agent.chats, _chat_id(chat_id))
        except NoSuchChatError:
            raise HTTPException(404, f"no chat {chat_id!r}") from None

    @app.post("/api/chats/{chat_id}")
    async def open_chat(chat_id: str, request: Request) -> dict[str, Any]:
        """Open a chat, creating it when new (with the demo data for the demo model)."""
        try:
            agent.chats.open(_chat_id(chat_id))
        except NoSuchChatError:
            _take_turn(request, "new chats")  # making a chat writes data: limited like a turn
            agent.open_chat(chat_id)
        if agent.model_info.get("demo"):
            from geomint.agent.demo import seed_demo_chat  # noqa: PLC0415

            await seed_demo_chat(agent, chat_id)
        return await asyncio.to_thread(chat_view, agent.chats, chat_id)

    @app.post("/api/chat")
    async def chat(body: ChatRequest, request: Request) -> StreamingResponse:
        _take_turn(request, "turns")
        chat_id = _chat_id(body.id)
        try:
            question = body.question()
        except UsageError as exc:
            raise HTTPException(422, str(exc)) from None
        _not_busy(chat_id)
        parts = agent.run_stream(question, chat_id=chat_id, approve=waiting.ask)
        read = functools.partial(entry_geojson, agent.chats, chat_id)
        return StreamingResponse(
            encode_sse(ui_chunks(parts), read), media_type="text/event-stream", headers=HEADERS
        )

    @app.post("/api/chats/{chat_id}/approvals/{approval_id}")
    async def answer(chat_id: str, approval_id: str, body: _Answer) -> dict[str, Any]:
        if not waiting.answer(
            _chat_id(chat_id), approval_id, approved=body.approved, reason=body.reason
        ):
            raise HTTPException(
                404, f"nothing waits for an answer under {approval_id!r} (answered or timed out)"
            )
        return {"approval_id": approval_id, "approved": body.approved}

    @app.post("/api/chats/{chat_id}/uploads", max_body_size=max_upload)
    async def upload(chat_id: str, name: str, request: Request) -> dict[str, Any]:
        _take_turn(request, "uploads")
        _not_busy(_chat_id(chat_id))
        body = await request.body()  # capped as it arrives by the route's max_body_size
        if not body:
            raise HTTPException(422, f"{name!r} is empty")
        try:
            return await agent.upload(body, name, chat_id=chat_id)
        except UsageError as exc:
            raise HTTPException(422, str(exc)) from None

    @app.get("/api/chats/{chat_id}/analyses/{analysis_id}")
    async def analysis(chat_id: str, analysis_id: str) -> dict[str, Any]:
        try:
            found = analysis_view(agent.chats, _chat_id(chat_id), analysis_id)
        except NoSuchChatError:
            found = None
        if found is None:
            raise HTTPException(404, f"no analysis {analysis_id!r} in chat {chat_id!r}")
        return found

    @app.get("/api/chats/{chat_id}/entries/{entry_id}")
    async def entry(chat_id: str, entry_id: str, version: int | None = None) -> Response:
        """An entry version's GeoJSON (the latest by default), as stored."""
        try:
            data = await asyncio.to_thread(
                entry_geojson, agent.chats, _chat_id(chat_id), entry_id, version
            )
        except NoSuchChatError:
            data = None
        if data is None:
            raise HTTPException(404, f"no entry {entry_id!r} v{version} in chat {chat_id!r}")
        return Response(data, media_type="application/geo+json")

    @app.get("/basemap/streets.geojson", include_in_schema=False)
    async def streets(request: Request) -> Response:
        """The bundled Helsinki streets, drawn under the entries (gzipped: 670 -> 90 KB)."""
        headers = {"cache-control": "public, max-age=86400", "vary": "accept-encoding"}
        if "gzip" in request.headers.get("accept-encoding", ""):
            body = await asyncio.to_thread(_gzipped_streets)
            headers["content-encoding"] = "gzip"
        else:
            body = bundled.street_lines()
        return Response(body, media_type="application/geo+json", headers=headers)

    if _STATIC.is_dir():
        app.mount("/static", StaticFiles(directory=_STATIC), name="static")
    return app


@functools.cache
def _gzipped_streets() -> bytes:
    return gzip.compress(bundled.street_lines(), mtime=0)
