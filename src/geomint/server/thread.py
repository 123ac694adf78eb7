"""A chat read back: its parts in order, the state its map is in, one analysis, one entry,
one chart's config and one figure with its provenance.

Nothing here rebuilds what was shown: :func:`chat_parts` is the projection the live stream
used (:mod:`geomint.ui`), so the page draws a reopened chat with the code that drew it
live. :func:`chat_view` is the chat's folded state (title, entries, camera) for clients
that want where the map ended up without replaying it.
"""

from __future__ import annotations

import json
from typing import Any, Final

from geomint.sandbox import RASTER_MEDIA_TYPE
from geomint.server.stream import INLINE_ENTRY_BYTES, MAX_PART_BYTES, capped
from geomint.state import AnalysisRecorded, EntryWritten, LayerStyle, entry_style
from geomint.store import Chats
from geomint.ui import chat_parts, entry_url, raster_url

__all__ = [
    "INLINE_CHAT_BYTES",
    "analysis_view",
    "chart_config",
    "chat_view",
    "entry_geojson",
    "entry_version",
    "figure_view",
    "is_raster",
    "parts_view",
]

#: The most GeoJSON a chat read back carries inline, in all (see :func:`parts_view`).
INLINE_CHAT_BYTES: Final = 4_000_000


def parts_view(chats: Chats, chat_id: str) -> dict[str, Any]:
    """The chat's durable parts in order, each with its run id (raises NoSuchChatError).

    The newest part of each entry carries the entry's GeoJSON inline (``geojson``), as the
    live stream does, when it is small: see :func:`_inline_entries`.
    """
    parts = [capped(p.model_dump(mode="json")) for p in chat_parts(chats, chat_id)]
    _inline_entries(chats, chat_id, parts)
    return {"chat_id": chat_id, "stored": True, "parts": parts}


def _inline_entries(chats: Chats, chat_id: str, parts: list[dict[str, Any]]) -> None:
    """Put each entry's GeoJSON in its newest part, for entries of up to
    :data:`~geomint.server.stream.INLINE_ENTRY_BYTES` (whose part stays under
    :data:`~geomint.server.stream.MAX_PART_BYTES`, the stream's rule), up to
    :data:`INLINE_CHAT_BYTES` in all, in the chat's order. The page draws only an entry's
    newest version, and fetched each by its URL: 52 requests for a chat of 50 turns, each
    opening the chat again on the server. A larger entry is still fetched by its URL.
    A raster has no GeoJSON: its part names its picture instead."""
    newest: dict[str, dict[str, Any]] = {}
    for part in parts:
        if part.get("type") == "entry" and not part.get("withheld"):
            newest[part["entry_id"]] = part
    newest = {k: p for k, p in newest.items() if "raster" not in p}
    if not newest:
        return
    entries = chats.open(chat_id).entries
    budget = INLINE_CHAT_BYTES
    for part in newest.values():
        size = part["bytes"]
        if size > INLINE_ENTRY_BYTES or size > budget:
            continue
        if len(json.dumps(part, ensure_ascii=False).encode()) + size > MAX_PART_BYTES:
            continue
        entry = entries.get(part["entry_id"])
        versions = entry.versions if entry else ()
        written = next((w for w in versions if w.version == part["version"]), None)
        if written is None or is_raster(written):
            continue
        try:
            # Parsed, not spliced as the stream does: bytes that are not JSON stay by
            # reference, as before, rather than making the whole answer unreadable.
            part["geojson"] = json.loads(chats.read_blob(chat_id, written.blob))
        except ValueError:
            continue
        budget -= size


def chat_view(chats: Chats, chat_id: str) -> dict[str, Any]:
    """The chat's title, entries (latest versions, by reference) and camera.

    Raises:
        NoSuchChatError: There is no such chat.
    """
    workspace = chats.open(chat_id)
    entries = []
    for entry_id, entry in workspace.entries.items():
        latest = entry.latest
        raster = is_raster(latest)
        entries.append(
            {
                "entry_id": entry_id,
                "kind": entry.kind,
                "version": latest.version,
                "label": latest.label,
                "visible": entry.visible,
                "removed": entry.removed,
                "style": style.model_dump(mode="json")
                if (style := entry_style(workspace, entry_id))
                else None,
                "sources": [s.model_dump(mode="json") for s in latest.sources],
                "bytes": latest.blob.size,
                "geojson_url": None if raster else entry_url(chat_id, entry_id, latest.version),
                **({"raster_url": raster_url(chat_id, entry_id, latest.version)} if raster else {}),
            }
        )
    return {
        "id": chat_id,
        "title": workspace.title,
        "entries": entries,
        "view": workspace.view.model_dump(mode="json") if workspace.view else None,
    }


def analysis_view(chats: Chats, chat_id: str, analysis_id: str) -> dict[str, Any] | None:
    """One analysis: the code that ran, the entry versions it read, and how it ended."""
    workspace = chats.open(chat_id)
    record = workspace.analyses.get(analysis_id)
    if record is None:
        return None
    inputs = []
    for read in record.inputs:
        entry = workspace.entries.get(read.entry_id)
        inputs.append(
            {**read.model_dump(mode="json"), "label": entry.latest.label if entry else None}
        )
    return {
        "analysis_id": analysis_id,
        "tool": record.tool,
        "name": record.name,
        "code": record.code,
        "code_hash": record.code_hash,
        "inputs": inputs,
        "values": list(record.values),
        "layers": list(record.layers),
        "error": record.error,
        "output_format": record.output_format,
        "result": _result(chats, chat_id, record),
    }


def entry_geojson(
    chats: Chats, chat_id: str, entry_id: str, version: int | None = None
) -> bytes | None:
    """An entry version's stored GeoJSON (the latest by default), or None if there is none
    (no such entry or version, or a raster, which is not GeoJSON).

    Raises:
        NoSuchChatError: There is no such chat.
    """
    written = entry_version(chats, chat_id, entry_id, version)
    if written is None or is_raster(written):
        return None
    return chats.read_blob(chat_id, written.blob)


def is_raster(written: EntryWritten) -> bool:
    """Whether an entry version holds a raster (its blob is a stored grid, not GeoJSON)."""
    return written.blob.media_type == RASTER_MEDIA_TYPE


def entry_version(
    chats: Chats, chat_id: str, entry_id: str, version: int | None = None
) -> EntryWritten | None:
    """An entry's version (the latest by default): its label and the blob it wrote.

    Raises:
        NoSuchChatError: There is no such chat.
    """
    entry = chats.open(chat_id).entries.get(entry_id)
    if entry is None:
        return None
    wanted = entry.latest.version if version is None else version
    return next((w for w in entry.versions if w.version == wanted), None)


def chart_config(chats: Chats, chat_id: str, analysis_id: str) -> tuple[str, Any] | None:
    """The name and Chart.js config of the chart an analysis drew, or None if it drew none.

    Raises:
        NoSuchChatError: There is no such chat.
    """
    record = chats.open(chat_id).analyses.get(analysis_id)
    if record is None or record.output_format != "chart" or record.error is not None:
        return None
    config = _result(chats, chat_id, record)
    return (record.name or analysis_id, config) if isinstance(config, dict) else None


def figure_view(chats: Chats, chat_id: str, value_id: str) -> dict[str, Any] | None:
    """A minted figure with its provenance: the value record (label, unit, sources,
    licences, the entry versions it was computed from, when) and the analysis that minted
    it (its code and the code's hash), or None if the chat minted no such figure.

    Raises:
        NoSuchChatError: There is no such chat.
    """
    workspace = chats.open(chat_id)
    value = next((v for v in workspace.values if v.id == value_id), None)
    if value is None:
        return None
    record = workspace.analyses.get(value.minted_by) if value.minted_by else None
    analysis = None
    if record is not None:
        analysis = {
            "analysis_id": value.minted_by,
            "tool": record.tool,
            "name": record.name,
            "code": record.code,
            "code_hash": record.code_hash,
            "inputs": [read.model_dump(mode="json") for read in record.inputs],
        }
    return {
        "format": "geomint-figure",
        "version": 1,
        "chat_id": chat_id,
        "figure": value.model_dump(mode="json"),
        "analysis": analysis,
    }


def _result(chats: Chats, chat_id: str, record: AnalysisRecorded) -> Any:
    if record.result_blob is not None:
        return json.loads(chats.read_blob(chat_id, record.result_blob))
    return record.result


def _json(style: LayerStyle | None) -> dict[str, Any] | None:
    return style.model_dump(mode="json") if style else None
