"""The map's settings: ``GET /api/map`` (the basemap styles the switcher offers and the
languages labels come in) and ``POST /api/chats/<id>/map``, a person's switch of either,
kept in the chat's log as the model's would be (``basemap_changed``,
``language_changed``), so a reload shows the map they chose."""

from __future__ import annotations

import asyncio
from typing import Any

from fastapi import APIRouter, HTTPException, Request
from pydantic import BaseModel, ConfigDict, Field

from geomint.server.routes._deps import Agent, ChatId, store_new_chat
from geomint.state import BasemapChanged, EventBody, LanguageChanged
from geomint.store import NoSuchChatError, RefusedEventError
from geomint.tools.basemaps import LABEL_LANGUAGES, UNTRANSLATED

__all__ = ["router"]

router = APIRouter()


@router.get("/api/map")
async def map_settings(agent: Agent) -> dict[str, Any]:
    """The basemap styles the switcher offers (the first is the default), and the
    languages map labels can be drawn in."""
    styles = agent.settings.map_styles
    return {
        "styles": [
            {"name": s.name, "label": s.label, "url": s.url, "theme": s.theme} for s in styles
        ],
        "default_style": styles[0].name,
        "languages": dict(LABEL_LANGUAGES),
        "untranslated": UNTRANSLATED,
    }


class MapChange(BaseModel):
    """A person's switch of the basemap style, the labels' language, or both."""

    model_config = ConfigDict(extra="forbid")

    style: str | None = Field(default=None, max_length=40)
    language: str | None = Field(default=None, max_length=3)


@router.post("/api/chats/{chat_id}/map")
async def change_map(
    chat_id: ChatId, change: MapChange, request: Request, agent: Agent
) -> dict[str, Any]:
    """Keep a person's switch in the chat's log (422 for a style or language there is
    not); a new chat is stored with it."""
    bodies: list[EventBody] = []
    if change.style is not None:
        names = [s.name for s in agent.settings.map_styles]
        if change.style not in names:
            raise HTTPException(
                422, f"there is no map style {change.style!r}; the styles are {', '.join(names)}"
            )
        bodies.append(BasemapChanged(style=change.style))
    if change.language is not None:
        if change.language not in LABEL_LANGUAGES:
            raise HTTPException(
                422,
                f"labels cannot be shown in {change.language!r}; the languages are "
                f"{', '.join(LABEL_LANGUAGES)}",
            )
        bodies.append(LanguageChanged(language=change.language))
    if not bodies:
        raise HTTPException(422, "send a style, a language, or both")
    await store_new_chat(request, chat_id)
    try:
        workspace = await asyncio.to_thread(agent.chats.append, chat_id, "map", bodies)
    except (NoSuchChatError, RefusedEventError):
        raise HTTPException(404, f"no chat {chat_id!r}") from None
    return {"id": chat_id, "style": workspace.basemap, "language": workspace.language}
