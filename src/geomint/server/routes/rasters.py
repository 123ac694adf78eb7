"""A raster entry on the map: its picture and what its legend needs.

- ``GET /api/chats/<id>/entries/<entry id>/raster.png?version=<n>``: the entry version
  (the latest by default) drawn for the map, a PNG on a Web Mercator grid
  (:func:`geomint.server.rasters.render`), for a MapLibre ``image`` source.
- ``GET /api/chats/<id>/entries/<entry id>/raster.json?version=<n>``: where the picture's
  corners go (``[lon, lat]``, top left then clockwise), the values at the colour ramp's ends
  and its colours, and the raster's summary: what the page's legend shows.

Both pass the checks every ``/api`` call passes (token, host) and draw the picture once per
entry version (:class:`~geomint.server.rasters.RasterImages`). A named version never
changes: it is cached for a year; the latest is revalidated by its ETag. A features entry
asked for as a raster answers 409 saying where its GeoJSON is; a raster whose extent has
no longitude and latitude answers 422.
"""

from __future__ import annotations

import asyncio
from typing import Final

from fastapi import APIRouter, HTTPException, Request
from fastapi.responses import JSONResponse, Response

from geomint import __version__
from geomint.agent import MapAgent
from geomint.geo.errors import GeoInputError
from geomint.geo.raster import image_corners
from geomint.sandbox import bytes_raster
from geomint.server.rasters import RasterImage, RasterImages, render
from geomint.server.routes._deps import Agent, ChatId, Pictures
from geomint.server.thread import entry_version, is_raster
from geomint.state import EntryWritten
from geomint.store import NoSuchChatError
from geomint.tools._digest import digest_bbox
from geomint.ui import entry_url, raster_url

__all__ = ["router"]

router = APIRouter()

_IMMUTABLE: Final = "private, max-age=31536000, immutable"
_REVALIDATE: Final = "private, no-cache"


def _headers(written: EntryWritten, version: int | None, what: str) -> dict[str, str]:
    return {
        # The stored grid and the code that drew it make the picture.
        "etag": f'"{written.blob.sha256}.{what}.{__version__}"',
        "cache-control": _REVALIDATE if version is None else _IMMUTABLE,
        "x-content-type-options": "nosniff",
    }


def _not_modified(request: Request, headers: dict[str, str]) -> bool:
    given = request.headers.get("if-none-match", "")
    return given.strip() == "*" or headers["etag"] in (t.strip() for t in given.split(","))


async def _raster_version(
    agent: MapAgent, chat_id: str, entry_id: str, version: int | None
) -> EntryWritten:
    """The raster entry version asked for (404 when there is none, 409 for features)."""
    try:
        written = await asyncio.to_thread(entry_version, agent.chats, chat_id, entry_id, version)
    except NoSuchChatError:
        written = None
    if written is None:
        which = entry_id if version is None else f"{entry_id} v{version}"
        raise HTTPException(404, f"no entry {which!r} in chat {chat_id!r}")
    if not is_raster(written):
        raise HTTPException(
            409,
            f"{entry_id} holds features, not a raster; its GeoJSON is at "
            f"{entry_url(chat_id, entry_id, written.version)}",
        )
    return written


async def _drawn(
    agent: MapAgent, pictures: RasterImages, chat_id: str, written: EntryWritten
) -> RasterImage:
    bbox = digest_bbox(written.digest)
    unplaced = HTTPException(
        422,
        f"{written.entry_id} cannot be drawn on the map: its extent could not be put in "
        "longitude and latitude (its CRS has no transformation to EPSG:4326)",
    )
    if bbox is None:
        raise unplaced
    try:
        image_corners(bbox)  # from the digest: a picture that cannot be placed is not read
    except GeoInputError:
        raise unplaced from None

    def draw() -> RasterImage:
        grid = bytes_raster(agent.chats.read_blob(chat_id, written.blob))
        return render(grid, bbox)

    key = (chat_id, written.entry_id, written.version, written.blob.sha256)
    try:
        return await asyncio.to_thread(pictures.get, key, draw)
    except GeoInputError:
        raise unplaced from None


@router.get("/api/chats/{chat_id}/entries/{entry_id}/raster.png")
async def raster_png(
    chat_id: ChatId,
    entry_id: str,
    request: Request,
    agent: Agent,
    pictures: Pictures,
    version: int | None = None,
) -> Response:
    """A raster entry version drawn for the map: a PNG on a Web Mercator grid, its values
    coloured from low to high, cells with no data transparent."""
    written = await _raster_version(agent, chat_id, entry_id, version)
    headers = _headers(written, version, "png")
    if _not_modified(request, headers):
        return Response(status_code=304, headers=headers)
    image = await _drawn(agent, pictures, chat_id, written)
    return Response(image.png, media_type="image/png", headers=headers)


@router.get("/api/chats/{chat_id}/entries/{entry_id}/raster.json")
async def raster_legend(
    chat_id: ChatId,
    entry_id: str,
    request: Request,
    agent: Agent,
    pictures: Pictures,
    version: int | None = None,
) -> Response:
    """Where a raster entry version's picture goes and what its legend shows: the corners,
    the values at the colour ramp's ends, its colours, and the raster's summary."""
    written = await _raster_version(agent, chat_id, entry_id, version)
    headers = _headers(written, version, "json")
    if _not_modified(request, headers):
        return Response(status_code=304, headers=headers)
    image = await _drawn(agent, pictures, chat_id, written)
    summary = written.digest.get("raster")
    body = {
        "entry_id": entry_id,
        "version": written.version,
        "label": written.label,
        "image_url": raster_url(chat_id, entry_id, written.version),
        **image.legend(),
        "summary": summary if isinstance(summary, dict) else {},
    }
    return JSONResponse(body, headers=headers)
