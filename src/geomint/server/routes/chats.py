"""Chats read back, renamed and deleted: the list, one chat (opened, or created), its
parts, an analysis and an entry's GeoJSON.

``GET /api/chats``; ``GET|POST /api/chats/<id>`` (read; open, creating it when new, with
the demo data when the model is the demo model: for API clients, the page stores a chat
with its first message or file instead); ``PATCH /api/chats/<id>`` with
``{"title": ...}`` (rename: a ``chat_renamed`` event in the chat's log); ``DELETE
/api/chats/<id>`` (a tombstone: the chat leaves the list); ``GET /api/chats/<id>/parts``
(a chat not stored yet reads as a new one: :mod:`geomint.server.new_chat`, whose
entries' GeoJSON is ``GET /api/new-chat/entries/<entry id>?version=<n>``); ``GET
/api/chats/<id>/analyses/<analysis id>``; ``GET /api/chats/<id>/entries/<entry
id>?version=<n>`` (for parts that name their GeoJSON by reference; a raster entry has
none: :mod:`.rasters` draws it). What each returns is built in
:mod:`geomint.server.thread`.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from typing import Any
from urllib.parse import quote

from fastapi import APIRouter, HTTPException, Request
from fastapi.encoders import jsonable_encoder
from fastapi.responses import Response
from pydantic import BaseModel, ConfigDict

from geomint.server.routes._deps import Agent, ChatId, Fresh, IdleChatId, store_new_chat
from geomint.server.thread import analysis_view, chat_view, entry_version, is_raster, parts_view
from geomint.state.events import title_problem
from geomint.store import NoSuchChatError, RefusedEventError
from geomint.ui import raster_url

__all__ = ["router"]

router = APIRouter()


async def _json(read: Callable[..., Any], *args: Any, plain: bool = False) -> Response:
    """``read(*args)`` as a JSON response, read and encoded off the event loop: a chat with
    large results or many events takes a while, and every other stream would wait.
    ``plain``: what ``read`` returns holds only JSON's types already (FastAPI's encoder,
    which walks every value, took 85 ms of 165 over a 50-turn chat's inline GeoJSON)."""

    def encoded() -> bytes:
        found = read(*args)
        if found is None:
            raise LookupError
        return json.dumps(found if plain else jsonable_encoder(found), ensure_ascii=False).encode()

    return Response(await asyncio.to_thread(encoded), media_type="application/json")


def _sidebar(agent: Any) -> list[dict[str, Any]]:
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


@router.get("/api/chats")
async def list_chats(agent: Agent) -> Response:
    """The chats with a message, for the sidebar."""
    return await _json(_sidebar, agent)


@router.get("/api/chats/{chat_id}")
async def read_chat(chat_id: ChatId, agent: Agent) -> dict[str, Any]:
    """The chat's title, entries and camera."""
    try:
        # Off the event loop: a chat with big entries takes a while to read back.
        return await asyncio.to_thread(chat_view, agent.chats, chat_id)
    except NoSuchChatError:
        raise HTTPException(404, f"no chat {chat_id!r}") from None


@router.get("/api/chats/{chat_id}/parts", response_model=None)
async def read_parts(chat_id: ChatId, agent: Agent, fresh: Fresh) -> Response | dict[str, Any]:
    """Everything the chat showed, in order: the parts its runs streamed, read back.

    A chat not stored yet answers with what it will start with (``"stored": false``):
    the page opens chats before they are stored, and a 404 would read as an error.
    """
    await fresh.settled(chat_id)  # not half stored
    try:
        return await _json(parts_view, agent.chats, chat_id, plain=True)
    except NoSuchChatError:
        return {"chat_id": chat_id, "stored": False, "parts": await fresh.parts()}


@router.get("/api/new-chat/entries/{entry_id}")
async def new_chat_entry(entry_id: str, fresh: Fresh, version: int | None = None) -> Response:
    """The GeoJSON of an entry every new chat starts with."""
    data = await fresh.entry(entry_id, version)
    if data is None:
        which = entry_id if version is None else f"{entry_id} v{version}"
        raise HTTPException(404, f"a new chat starts with no entry {which!r}")
    return Response(data, media_type="application/geo+json")


@router.post("/api/chats/{chat_id}")
async def open_chat(
    chat_id: ChatId, request: Request, agent: Agent, fresh: Fresh
) -> dict[str, Any]:
    """Open a chat, creating it when new (with the demo data for the demo model)."""
    if not await store_new_chat(request, chat_id):
        await fresh.start(chat_id)  # a stored demo chat from before chats began with data
    return await asyncio.to_thread(chat_view, agent.chats, chat_id)


class Rename(BaseModel):
    """The body of a rename: the new title (space around it is trimmed)."""

    model_config = ConfigDict(extra="forbid")

    title: str


@router.patch("/api/chats/{chat_id}")
async def rename_chat(chat_id: ChatId, rename: Rename, agent: Agent) -> dict[str, Any]:
    """Give the chat a title of the person's choosing (422 saying why one is refused)."""
    title = rename.title.strip()
    problem = title_problem(title)
    if problem is not None:
        raise HTTPException(422, problem)
    try:  # a deleted chat refuses the event: it is gone, as far as a person can tell
        workspace = await asyncio.to_thread(agent.chats.rename, chat_id, title)
    except (NoSuchChatError, RefusedEventError):
        raise HTTPException(404, f"no chat {chat_id!r}") from None
    return {"id": chat_id, "title": workspace.title}


@router.delete("/api/chats/{chat_id}", status_code=204)
async def delete_chat(chat_id: IdleChatId, agent: Agent) -> Response:
    """Delete the chat: it leaves the list (its data goes when retention runs)."""
    try:
        await asyncio.to_thread(agent.chats.delete, chat_id)
    except (NoSuchChatError, RefusedEventError):
        raise HTTPException(404, f"no chat {chat_id!r}") from None
    return Response(status_code=204)


@router.get("/api/chats/{chat_id}/analyses/{analysis_id}")
async def analysis(chat_id: ChatId, analysis_id: str, agent: Agent) -> Response:
    """One analysis: its code, hash, input entry versions and result."""
    try:
        return await _json(analysis_view, agent.chats, chat_id, analysis_id)
    except (NoSuchChatError, LookupError):
        raise HTTPException(404, f"no analysis {analysis_id!r} in chat {chat_id!r}") from None


@router.get("/api/chats/{chat_id}/entries/{entry_id}")
async def entry(
    chat_id: ChatId, entry_id: str, agent: Agent, version: int | None = None
) -> Response:
    """An entry version's GeoJSON (the latest by default), as stored; 409 for a raster,
    which has none (the answer says where its picture and its GeoTIFF are)."""
    try:
        written = await asyncio.to_thread(entry_version, agent.chats, chat_id, entry_id, version)
    except NoSuchChatError:
        written = None
    if written is None:
        raise HTTPException(404, f"no entry {entry_id!r} v{version} in chat {chat_id!r}")
    if is_raster(written):
        chat, entry = quote(chat_id, safe=""), quote(entry_id, safe="")
        raise HTTPException(
            409,
            f"{entry_id} is a raster, not GeoJSON: its picture is at "
            f"{raster_url(chat_id, entry_id, written.version)} and it downloads as a GeoTIFF "
            f"from /api/chats/{chat}/entries/{entry}/export?format=geotiff&version="
            f"{written.version}",
        )
    data = await asyncio.to_thread(agent.chats.read_blob, chat_id, written.blob)
    return Response(data, media_type="application/geo+json")
