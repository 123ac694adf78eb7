"""A file dropped into a chat: ``POST /api/chats/<id>/uploads?name=<file name>`` with the
file as the body, through intake into a byod entry (a GeoTIFF into a rasters entry) and a
message of the chat; the answer holds the entry, its data (a raster: where its picture is)
and the style the map draws it with.

The route's body cap is the agent's ``max_upload_bytes``, set where ``create_app``
includes :data:`router` (every other route keeps the 64 kB of a message); it is counted as
the body arrives, with or without a Content-Length.
"""

from __future__ import annotations

import asyncio
from typing import Any

from fastapi import APIRouter, Depends, HTTPException, Request

from geomint.errors import UsageError
from geomint.server.routes._deps import Agent, Fresh, IdleChatId, RateLimit
from geomint.server.thread import is_raster
from geomint.state import entry_style
from geomint.tools._digest import digest_bbox
from geomint.ui import raster_view

__all__ = ["router"]

router = APIRouter()


@router.post("/api/chats/{chat_id}/uploads", dependencies=[Depends(RateLimit("uploads"))])
async def upload(
    chat_id: IdleChatId, name: str, request: Request, agent: Agent, fresh: Fresh
) -> dict[str, Any]:
    """Load the body as the file ``name`` into the chat (422 with intake's reasons).

    A chat not stored yet is stored once the file is read, with what a new chat starts
    with; a refused file stores nothing.
    """
    body = await request.body()  # capped as it arrives by the router's max_body_size
    if not body:
        raise HTTPException(422, f"{name!r} is empty")
    try:
        added = await agent.upload(body, name, chat_id=chat_id, start_chat=fresh.start)
    except UsageError as exc:
        raise HTTPException(422, str(exc)) from None
    # The style the new layer is drawn with is the server's, as for every other entry.
    workspace = await asyncio.to_thread(agent.chats.open, chat_id)
    entry_id = str(added["entry_id"])
    style = entry_style(workspace, entry_id)
    shown = {**added, "style": style.model_dump(mode="json") if style else None}
    written = workspace.entries[entry_id].latest
    if is_raster(written):  # a GeoTIFF: drawn as a picture, as its entry part says
        shown["raster"] = raster_view(chat_id, written).model_dump(mode="json")
        shown["bbox"] = digest_bbox(written.digest)
    return shown
