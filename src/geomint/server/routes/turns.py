"""A chat turn and the approvals it waits for.

``POST /api/chat`` takes the AI SDK's ``sendMessage`` body (the chat's id and its newest
message: the server reads the thread from the store) and streams the answer in the Vercel
AI UI-message protocol (:mod:`geomint.server.stream`). A tool that needs approval waits
for the browser's answer, posted to ``POST /api/chats/<id>/approvals/<approval id>``
(:mod:`geomint.server.approvals`).
"""

from __future__ import annotations

import functools
from typing import Any

from fastapi import APIRouter, Depends, HTTPException
from fastapi.responses import StreamingResponse
from pydantic import BaseModel, ConfigDict, Field, StrictBool

from geomint.errors import UsageError
from geomint.server.routes._deps import (
    Agent,
    ChatId,
    Fresh,
    RateLimit,
    Waiting,
    ensure_idle,
    valid_chat_id,
)
from geomint.server.stream import HEADERS, encode_sse, ui_chunks
from geomint.server.thread import entry_geojson
from geomint.tools.location import DevicePosition

__all__ = ["ChatRequest", "router"]


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


class _Answer(BaseModel):
    """The person's answer to an approval request."""

    model_config = ConfigDict(extra="forbid")

    approved: StrictBool
    reason: str = Field(default="", max_length=500)
    #: The device's position, when the request asked for it (``location``) and the
    #: person shared it.
    location: DevicePosition | None = None


router = APIRouter()


@router.post("/api/chat", dependencies=[Depends(RateLimit("turns"))])
async def chat(
    body: ChatRequest, agent: Agent, approvals: Waiting, fresh: Fresh
) -> StreamingResponse:
    """Ask the chat ``body.id`` its newest question; the answer streams as it is made.

    A chat not stored yet is stored first, with what a new chat starts with.
    """
    chat_id = valid_chat_id(body.id)
    try:
        question = body.question()
    except UsageError as exc:
        raise HTTPException(422, str(exc)) from None
    ensure_idle(agent, chat_id)
    await fresh.start(chat_id)
    parts = agent.run_stream(question, chat_id=chat_id, approve=approvals.ask)
    read = functools.partial(entry_geojson, agent.chats, chat_id)
    return StreamingResponse(
        encode_sse(ui_chunks(parts), read), media_type="text/event-stream", headers=HEADERS
    )


@router.post("/api/chats/{chat_id}/approvals/{approval_id}")
async def answer(
    chat_id: ChatId, approval_id: str, body: _Answer, approvals: Waiting
) -> dict[str, Any]:
    """Hand the person's answer to the run waiting for it."""
    reply = body.location.model_dump() if body.location is not None and body.approved else None
    if not approvals.answer(
        chat_id, approval_id, approved=body.approved, reason=body.reason, reply=reply
    ):
        raise HTTPException(
            404, f"nothing waits for an answer under {approval_id!r} (answered or timed out)"
        )
    return {"approval_id": approval_id, "approved": body.approved}
