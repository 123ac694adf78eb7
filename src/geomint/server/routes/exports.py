"""Downloads: a layer, a chart's data, a figure with its provenance, the whole chat.

- ``GET /api/chats/<id>/entries/<entry id>/export?format=geojson|csv|parquet|geotiff&version=<n>``:
  an entry version (the latest by default) as stored (GeoJSON), as CSV, or as GeoParquet
  (EPSG:4326); a raster entry as a Cloud Optimized GeoTIFF (its own CRS, every band, its
  nodata), the format it downloads as when none is named. A named version never changes:
  it is served with an ETag and cached for a year; the latest is revalidated each time
  (its ETag is the version's content hash).
- ``GET /api/chats/<id>/analyses/<analysis id>/chart.csv``: the data a chart drew.
- ``GET /api/chats/<id>/figures/<value id>/export``: the figure as JSON, with its sources,
  the entry versions it came from and the code that minted it.
- ``GET /api/chats/<id>/export``: the chat as JSON, exactly what ``geomint chats export``
  writes (``geomint chats import`` restores it).
- ``GET /api/chats/<id>/export.zip?format=notebook|script``: the chat as a Jupyter notebook
  (or a Python script) that re-runs every analysis in geomint's sandbox and checks its
  figures, with the folder of the exact inputs it reads, zipped: what
  ``geomint chats export --format notebook`` writes.

Every answer is an attachment named after what it holds (:func:`.exports.content_disposition`)
and passes the same checks as every other ``/api`` call (token, host). Files are streamed
in chunks: CSV as it is written, GeoParquet from a temporary file that spills to disk.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable, Iterator
from typing import IO, Any, Final, Literal, TypeVar

from fastapi import APIRouter, HTTPException, Request
from fastapi.responses import Response, StreamingResponse
from starlette.background import BackgroundTask

from geomint import __version__
from geomint.sandbox import bytes_raster
from geomint.server.exports import (
    CHUNK_BYTES,
    chart_csv,
    content_disposition,
    features_csv,
    features_parquet,
    safe_filename,
)
from geomint.server.rasters import geotiff
from geomint.server.routes._deps import Agent, ChatId, Fresh
from geomint.server.thread import chart_config, entry_version, figure_view, is_raster
from geomint.store import NoSuchChatError, export_text

T = TypeVar("T")

__all__ = ["router"]

router = APIRouter()

#: Each export format: its file extension and media type.
FORMATS: Final = {
    "geojson": ("geojson", "application/geo+json"),
    "csv": ("csv", "text/csv; charset=utf-8"),
    "parquet": ("parquet", "application/vnd.apache.parquet"),
    "geotiff": ("tif", "image/tiff; application=geotiff; profile=cloud-optimized"),
}
_JSON: Final = "application/json"
_IMMUTABLE: Final = "private, max-age=31536000, immutable"
_REVALIDATE: Final = "private, no-cache"


def _headers(name: str, extension: str, **more: str) -> dict[str, str]:
    return {
        "content-disposition": content_disposition(name, extension),
        "x-content-type-options": "nosniff",
        "cache-control": _REVALIDATE,
        **more,
    }


def _chunks(data: bytes) -> Iterator[bytes]:
    view = memoryview(data)
    for start in range(0, len(view), CHUNK_BYTES):
        yield bytes(view[start : start + CHUNK_BYTES])


def _file_chunks(file: IO[bytes]) -> Iterator[bytes]:
    try:
        while chunk := file.read(CHUNK_BYTES):
            yield chunk
    finally:
        file.close()


def _file_size(file: IO[bytes]) -> int:
    size = file.seek(0, 2)
    file.seek(0)
    return size


def _matches(request: Request, etag: str) -> bool:
    given = request.headers.get("if-none-match", "")
    return given.strip() == "*" or etag in (t.strip() for t in given.split(","))


async def _found(missing: str, look: Callable[..., T | None], *args: Any) -> T:
    """What ``look(*args)`` finds (run off the event loop), or a 404 saying ``missing``
    when it finds nothing or the chat does not exist."""
    try:
        found = await asyncio.to_thread(look, *args)
    except NoSuchChatError:
        found = None
    if found is None:
        raise HTTPException(404, missing)
    return found


@router.get("/api/chats/{chat_id}/entries/{entry_id}/export")
async def export_entry(
    chat_id: ChatId,
    entry_id: str,
    request: Request,
    fresh: Fresh,
    format: Literal["geojson", "csv", "parquet", "geotiff"] | None = None,
    version: int | None = None,
) -> Response:
    """An entry version as a GeoJSON, CSV or GeoParquet file named after its label, a
    raster as a GeoTIFF (a new chat's, before it is stored, from what every new chat starts
    with). Without a format: GeoJSON, or GeoTIFF for a raster."""
    chats, held_as = await fresh.holder(chat_id)
    written = await _found(
        f"no entry {entry_id!r} v{version} in chat {chat_id!r}",
        entry_version, chats, held_as, entry_id, version,
    )  # fmt: skip
    raster = is_raster(written)
    format = format or ("geotiff" if raster else "geojson")
    if raster and format != "geotiff":
        raise HTTPException(
            409, f"{entry_id} is a raster: it downloads as a GeoTIFF (format=geotiff), not {format}"
        )
    if not raster and format == "geotiff":
        raise HTTPException(
            409, f"{entry_id} holds features, not a raster: it downloads as geojson, csv or parquet"
        )
    extension, media_type = FORMATS[format]
    # The stored content and the code that turned it into this format make the file.
    etag = f'"{written.blob.sha256}.{format}.{__version__}"'
    headers = _headers(written.label, extension, etag=etag)
    if version is not None:
        headers["cache-control"] = _IMMUTABLE
    if _matches(request, etag):
        return Response(status_code=304, headers=headers)
    data = await asyncio.to_thread(chats.read_blob, held_as, written.blob)
    if format == "geotiff":
        tiff = await asyncio.to_thread(lambda: geotiff(bytes_raster(data), label=written.label))
        headers["content-length"] = str(len(tiff))
        return StreamingResponse(_chunks(tiff), media_type=media_type, headers=headers)
    if format == "geojson":
        headers["content-length"] = str(len(data))
        return StreamingResponse(_chunks(data), media_type=media_type, headers=headers)
    collection = await asyncio.to_thread(json.loads, data)
    if format == "csv":
        # Written row by row as the client reads it (a sync iterator runs in the threadpool).
        return StreamingResponse(features_csv(collection), media_type=media_type, headers=headers)
    file = await asyncio.to_thread(features_parquet, collection)
    headers["content-length"] = str(_file_size(file))
    # Closed when sent, and also when the client leaves before the first chunk.
    return StreamingResponse(
        _file_chunks(file),
        media_type=media_type,
        headers=headers,
        background=BackgroundTask(file.close),
    )


@router.get("/api/chats/{chat_id}/analyses/{analysis_id}/chart.csv")
async def export_chart(chat_id: ChatId, analysis_id: str, agent: Agent) -> Response:
    """The data of the chart an analysis drew, as CSV named after the chart."""
    name, config = await _found(
        f"no chart {analysis_id!r} in chat {chat_id!r}",
        chart_config, agent.chats, chat_id, analysis_id,
    )  # fmt: skip
    return StreamingResponse(
        chart_csv(config), media_type=FORMATS["csv"][1], headers=_headers(name, "csv")
    )


@router.get("/api/chats/{chat_id}/figures/{value_id}/export")
async def export_figure(chat_id: ChatId, value_id: str, agent: Agent) -> Response:
    """A figure as JSON with its provenance, named after its label."""
    found = await _found(
        f"no figure {value_id!r} in chat {chat_id!r}", figure_view, agent.chats, chat_id, value_id
    )
    body = json.dumps(found, ensure_ascii=False, indent=1).encode()
    label: Any = found["figure"].get("label") or value_id
    return Response(body, media_type=_JSON, headers=_headers(str(label), "json"))


def _chat_export(agent: Any, chat_id: str) -> tuple[str, bytes]:
    data = agent.chats.export(chat_id)
    title = agent.chats.open(chat_id).title
    return (title or chat_id), export_text(data).encode()


@router.get("/api/chats/{chat_id}/export")
async def export_chat(chat_id: ChatId, agent: Agent) -> Response:
    """The whole chat as the JSON ``geomint chats export`` writes, named after its title."""
    try:
        title, body = await asyncio.to_thread(_chat_export, agent, chat_id)
    except NoSuchChatError:
        raise HTTPException(404, f"no chat {chat_id!r}") from None
    headers = _headers(title, "json", **{"content-length": str(len(body))})
    return StreamingResponse(_chunks(body), media_type=_JSON, headers=headers)


def _notebook_zip(agent: Any, chat_id: str, format_: Literal["notebook", "script"]) -> bytes:
    from geomint.replay import export_zip  # noqa: PLC0415 - nbformat only when asked

    title = agent.chats.open(chat_id).title or chat_id
    extension = "ipynb" if format_ == "notebook" else "py"
    return export_zip(agent.chats, chat_id, safe_filename(title, extension), format_)


@router.get("/api/chats/{chat_id}/export.zip")
async def export_notebook(
    chat_id: ChatId, agent: Agent, format: Literal["notebook", "script"] = "notebook"
) -> Response:
    """The chat as a notebook (or script) that recomputes its figures, with its inputs."""
    try:
        body = await asyncio.to_thread(_notebook_zip, agent, chat_id, format)
        title = await asyncio.to_thread(lambda: agent.chats.open(chat_id).title or chat_id)
    except NoSuchChatError:
        raise HTTPException(404, f"no chat {chat_id!r}") from None
    headers = _headers(str(title), "zip", **{"content-length": str(len(body))})
    return StreamingResponse(_chunks(body), media_type="application/zip", headers=headers)
