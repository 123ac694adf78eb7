"""What a person changes of a layer from the page: shown or hidden, its opacity, its place
in the draw order, removed from the map (and its layer list) or put back.

``PATCH /api/chats/<id>/entries/<entry id>/display`` with any of ``{"visible": bool,
"opacity": 0-1, "order": int, "removed": bool}`` appends an ``entry_display_changed``
event, as the display tools do, so a reload, the terminal and the model (which reads the
chat's state) see the change; it returns the entry's whole style after it.
"""

from __future__ import annotations

import asyncio
from typing import Any

from fastapi import APIRouter, HTTPException, Request
from pydantic import BaseModel, ConfigDict, Field, JsonValue, StrictBool, model_validator

from geomint.server.routes._deps import Agent, ChatId, Fresh, store_new_chat
from geomint.state import EntryDisplayChanged, entry_style
from geomint.store import NoSuchChatError, RefusedEventError

__all__ = ["router"]

router = APIRouter()


class DisplayChange(BaseModel):
    """The body of a layer change from the page: at least one of its fields."""

    model_config = ConfigDict(extra="forbid")

    visible: StrictBool | None = None
    opacity: float | None = Field(default=None, ge=0, le=1)
    order: int | None = Field(default=None, ge=0, le=1_000_000)
    removed: StrictBool | None = None

    @model_validator(mode="after")
    def _something(self) -> DisplayChange:
        if all(v is None for v in (self.visible, self.opacity, self.order, self.removed)):
            raise ValueError("say what changes: visible, opacity, order or removed")
        return self


@router.patch("/api/chats/{chat_id}/entries/{entry_id}/display")
async def change_display(
    chat_id: ChatId,
    entry_id: str,
    change: DisplayChange,
    request: Request,
    agent: Agent,
    fresh: Fresh,
) -> dict[str, Any]:
    """Show, hide, fade or reorder one layer; 404 when the chat has no such entry.

    A change to a layer every new chat starts with stores the new chat first.
    """
    if await fresh.entry(entry_id) is not None:
        await store_new_chat(request, chat_id)
    asked: dict[str, JsonValue] = {"opacity": change.opacity, "order": change.order}
    style: dict[str, JsonValue] = {k: v for k, v in asked.items() if v is not None}

    def append() -> dict[str, Any] | None:
        if entry_id not in agent.chats.open(chat_id).entries:
            return None
        body = EntryDisplayChanged(
            entry_id=entry_id, visible=change.visible, style=style or None, removed=change.removed
        )
        workspace = agent.chats.append(chat_id, "display", [body])
        drawn = entry_style(workspace, entry_id)
        return {
            "entry_id": entry_id,
            "visible": workspace.entries[entry_id].visible,
            "removed": workspace.entries[entry_id].removed,
            "style": drawn.model_dump(mode="json") if drawn else None,
        }

    try:
        shown = await asyncio.to_thread(append)
    except (NoSuchChatError, RefusedEventError):
        shown = None
    if shown is None:
        raise HTTPException(404, f"no entry {entry_id!r} in chat {chat_id!r}")
    return shown
