"""The web app's HTTP side (FastAPI): health, chats, and a chat turn streamed as SSE.

A chat's id is chosen by the browser and kept in its URL; the client sends only its newest
message (as the AI SDK's ``sendMessage`` body), and the server reads the thread from the
store. The answer streams in the Vercel AI UI-message protocol (:mod:`.stream`). Static
files (the vendored front end and the offline basemap) are served with HTTP Range support,
which PMTiles needs.

Built so far: the API and the stream. The page, approvals over HTTP, rate limits and
access tokens come with the rest of the web-app issue.
"""

from __future__ import annotations

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

__all__ = ["MAX_BODY_BYTES", "create_app"]

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


def create_app(agent: MapAgent) -> FastAPI:
    """The app for one agent (one store, one sandbox, one set of providers)."""
    app = FastAPI(title="geomint", version=__version__, docs_url=None, redoc_url=None)

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
    async def chat(body: ChatRequest) -> StreamingResponse:
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
