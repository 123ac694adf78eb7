"""The web app's HTTP side (FastAPI): health, chats, and a chat turn streamed as SSE.

A chat's id is chosen by the browser and kept in its URL; the client sends only its newest
message (as the AI SDK's ``sendMessage`` body), and the server reads the thread from the
store. The answer streams in the Vercel AI UI-message protocol (:mod:`.stream`). Static
files (the vendored front end and the offline basemap) are served with HTTP Range support,
which PMTiles needs.

Deployments can require a token (``Authorization: Bearer <token>``) on every API call;
chat turns are rate limited per client. Built so far: the API and the stream; the page
and approvals over HTTP come with the rest of the web-app issue.
"""

from __future__ import annotations

import hmac
import math
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

from fastapi import FastAPI, HTTPException, Request
from fastapi.responses import JSONResponse, StreamingResponse
from fastapi.staticfiles import StaticFiles
from pydantic import BaseModel, ConfigDict, Field

from geomint import __version__
from geomint.agent import MapAgent
from geomint.errors import UsageError
from geomint.server.stream import HEADERS, encode_sse, ui_chunks
from geomint.state.events import is_chat_id

__all__ = ["MAX_BODY_BYTES", "TurnLimiter", "create_app"]

#: The largest request body accepted: a chat message, not an upload.
MAX_BODY_BYTES: Final = 64_000
_STATIC: Final = Path(__file__).parent / "static"


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
                    return text
        raise UsageError("the request has no user message with text")


@dataclass
class TurnLimiter:
    """Chat turns per client: a token bucket (``burst`` at once, ``per_minute`` refilled).

    A turn costs model calls and sandbox time; one client must not take them all.
    """

    per_minute: float = 12.0
    burst: int = 4
    clock: Callable[[], float] = time.monotonic
    _buckets: dict[str, tuple[float, float]] = field(default_factory=dict)

    def wait(self, client: str) -> float:
        """Take a turn for ``client``: 0 when allowed, else the seconds until one is."""
        now = self.clock()
        tokens, last = self._buckets.get(client, (float(self.burst), now))
        tokens = min(float(self.burst), tokens + (now - last) * self.per_minute / 60)
        if tokens >= 1:
            self._buckets[client] = (tokens - 1, now)
            return 0.0
        self._buckets[client] = (tokens, now)
        return (1 - tokens) * 60 / self.per_minute


def create_app(
    agent: MapAgent, *, token: str | None = None, limiter: TurnLimiter | None = None
) -> FastAPI:
    """The app for one agent (one store, one sandbox, one set of providers).

    Args:
        agent: The agent every chat runs on.
        token: When set, every ``/api`` call needs ``Authorization: Bearer <token>``
            (for deployments; leave it off on localhost).
        limiter: Chat turns per client (12 a minute, 4 at once by default).
    """
    app = FastAPI(title="geomint", version=__version__, docs_url=None, redoc_url=None)
    turns = limiter or TurnLimiter()

    @app.middleware("http")
    async def _token(request: Request, call_next: Any) -> Any:
        if token is not None and request.url.path.startswith("/api/"):
            given = request.headers.get("authorization", "")
            expected = f"Bearer {token}"
            if not hmac.compare_digest(given.encode(), expected.encode()):
                return JSONResponse({"error": "a valid access token is required"}, status_code=401)
        return await call_next(request)

    @app.middleware("http")
    async def _limit_body(request: Request, call_next: Any) -> Any:
        length = request.headers.get("content-length")
        if length is not None and (not length.isdigit() or int(length) > MAX_BODY_BYTES):
            return JSONResponse(
                {"error": f"the request body is over {MAX_BODY_BYTES:,} bytes"}, status_code=413
            )
        return await call_next(request)

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
        ]

    @app.post("/api/chat")
    async def chat(body: ChatRequest, request: Request) -> StreamingResponse:
        client = request.client.host if request.client else "unknown"
        wait = turns.wait(client)
        if wait > 0:
            raise HTTPException(
                429,
                f"too many questions at once; ask again in {math.ceil(wait)} s",
                headers={"retry-after": str(math.ceil(wait))},
            )
        if not is_chat_id(body.id):
            raise HTTPException(422, "a chat id is 1-64 letters, digits, '-' or '_'")
        try:
            question = body.question()
        except UsageError as exc:
            raise HTTPException(422, str(exc)) from None
        events = agent.run_stream(question, chat_id=body.id)
        return StreamingResponse(
            encode_sse(ui_chunks(events)), media_type="text/event-stream", headers=HEADERS
        )

    if _STATIC.is_dir():
        app.mount("/static", StaticFiles(directory=_STATIC), name="static")
    return app
