"""Map changes made by map code: ``GET /api/chats/<id>/map-blobs/<sha256>`` serves the
GeoJSON and PNGs a change names (or one waiting for approval, for its preview), and
``POST /api/chats/<id>/map-changes/<change_id>/undo`` is a person taking one back, kept in
the chat's log as ``map_change_undone`` like the model's ``undo_map_change``."""

from __future__ import annotations

import asyncio
from typing import Any

from fastapi import APIRouter, HTTPException, Path, Response

from geomint.server.routes._deps import Agent, ChatId, IdleChatId
from geomint.state import BlobRef, MapChangeUndone, Workspace
from geomint.store import NoSuchChatError, RefusedEventError, StoreError

__all__ = ["router"]

router = APIRouter()

_SHA256 = r"^[0-9a-f]{64}$"
_CHANGE = r"^m[1-9][0-9]{0,8}$"
#: What a blob a map change names may be served as; nothing else is.
_MEDIA_TYPES = frozenset({"application/geo+json", "image/png"})


def _named(workspace: Workspace, sha256: str) -> BlobRef | None:
    """The blob, if a map change (or an approval waiting to make one) names it."""
    for change in workspace.map_changes:
        for ref in change.blobs:
            if ref.sha256 == sha256:
                return ref
    for approval in workspace.pending_approvals:
        named = approval.asked.about.get("blobs")
        for item in named if isinstance(named, list) else []:
            if isinstance(item, dict) and item.get("sha256") == sha256:
                return BlobRef.model_validate(item)
    return None


@router.get("/api/chats/{chat_id}/map-blobs/{sha256}")
async def map_blob(chat_id: ChatId, agent: Agent, sha256: str = Path(pattern=_SHA256)) -> Response:
    """A GeoJSON source or PNG a map change draws, by its hash (immutable)."""
    try:
        workspace = await asyncio.to_thread(agent.chats.open, chat_id)
    except NoSuchChatError:
        raise HTTPException(404, f"no chat {chat_id!r}") from None
    ref = _named(workspace, sha256)
    if ref is None or ref.media_type not in _MEDIA_TYPES:
        raise HTTPException(404, f"no map data {sha256[:12]}… in chat {chat_id!r}")
    try:
        data = await asyncio.to_thread(agent.chats.read_blob, chat_id, ref)
    except (KeyError, LookupError, StoreError):
        # Named but not stored: an import from before exports carried map blobs.
        raise HTTPException(404, f"map data {sha256[:12]}… is not stored in {chat_id!r}") from None
    return Response(
        data,
        media_type=ref.media_type,
        headers={
            "Cache-Control": "private, max-age=31536000, immutable",
            "X-Content-Type-Options": "nosniff",
        },
    )


@router.post("/api/chats/{chat_id}/map-changes/{change_id}/undo")
async def undo_map_change(
    chat_id: IdleChatId, agent: Agent, change_id: str = Path(pattern=_CHANGE)
) -> dict[str, Any]:
    """Take a map change back (404 for one that is not applied, 409 when a later change
    builds on it and must be undone first)."""
    try:
        workspace = await asyncio.to_thread(agent.chats.open, chat_id)
    except NoSuchChatError:
        raise HTTPException(404, f"no chat {chat_id!r}") from None
    applied = [c.change_id for c in workspace.applied_map_changes]
    if change_id not in applied:
        raise HTTPException(404, f"no applied map change {change_id!r} in chat {chat_id!r}")
    blocker = workspace.map_change_blocker(change_id)
    if blocker is not None:
        raise HTTPException(
            409,
            f"{blocker.change_id} builds on what {change_id} added; undo {blocker.change_id} first",
        )
    try:
        await asyncio.to_thread(
            agent.chats.append, chat_id, "map", [MapChangeUndone(change_id=change_id)]
        )
    except RefusedEventError as exc:
        raise HTTPException(409, str(exc)) from None
    return {"id": chat_id, "undone": change_id}
