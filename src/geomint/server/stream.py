"""A run's parts in the Vercel AI UI-message stream protocol, as server-sent events.

The browser speaks a standard protocol rather than one of ours. Answer text arrives as
``text-start`` / ``text-delta`` / ``text-end``, tool calls as ``tool-input-available`` and
``tool-output-available`` / ``tool-output-error``, and a run's error as ``error`` (so any
AI SDK client shows them); every typed part (:mod:`geomint.ui.parts`) follows as a
``data-<type>`` part whose data is the part itself (``data-tool-call``, ``data-entry``, ...),
and the page reads only those. Transient parts (progress, the
run's start, the classification) are marked ``transient``; every other part carries the
``seq`` and ``run_id`` of the event it was projected from, and reads back the same from
``GET /api/chats/{id}/parts``. The chunk types are pydantic-ai's own
(:mod:`pydantic_ai.ui.vercel_ai`).

An entry part names its GeoJSON by URL; a small one is also sent inline (``geojson``),
spliced from the stored bytes without parsing them, so the map draws it at once. A raster
entry's part names its picture instead, and nothing is inlined.
"""

from __future__ import annotations

import asyncio
import json
import secrets
from collections.abc import AsyncIterator, Callable
from typing import Any, Final

from pydantic import PrivateAttr
from pydantic_ai.ui.vercel_ai.response_types import (
    BaseChunk,
    DataChunk,
    ErrorChunk,
    FinishChunk,
    StartChunk,
    TextDeltaChunk,
    TextEndChunk,
    TextStartChunk,
    ToolInputAvailableChunk,
    ToolOutputAvailableChunk,
    ToolOutputErrorChunk,
)
from pydantic_core import PydanticSerializationError

from geomint.ui import (
    EntryPart,
    Part,
    RunEndedPart,
    TextDeltaPart,
    ToolCallPart,
    ToolResultPart,
    is_durable,
)

__all__ = [
    "HEADERS",
    "INLINE_ENTRY_BYTES",
    "MAX_PART_BYTES",
    "capped",
    "encode_sse",
    "ui_chunks",
]

#: Response headers the AI SDK's client expects for this protocol.
HEADERS: Final = {
    "x-vercel-ai-ui-message-stream": "v1",
    "cache-control": "no-cache",
    "x-accel-buffering": "no",
}
_SDK_VERSION: Final = 5
#: The most a ``data-*`` part may hold, as JSON; a larger one is withheld with its size
#: (parts carry no bulk, so only a pathological label or result gets there).
MAX_PART_BYTES: Final = 1_000_000
#: An entry's GeoJSON up to this size rides inline with its part.
INLINE_ENTRY_BYTES: Final = 900_000

#: Reads an entry version's stored GeoJSON: ``(entry_id, version) -> bytes``.
ReadEntry = Callable[[str, int], "bytes | None"]


class _EntryChunk(DataChunk):
    """A ``data-entry`` chunk whose GeoJSON is spliced in when it is encoded."""

    _part: EntryPart = PrivateAttr()

    @classmethod
    def of(cls, part: EntryPart) -> _EntryChunk:
        chunk = cls(type="data-entry", data=part.model_dump(mode="json"))
        chunk._part = part
        return chunk


async def ui_chunks(parts: AsyncIterator[Part]) -> AsyncIterator[BaseChunk]:
    """Translate a run's parts into UI-message stream chunks."""
    text_id: str | None = None
    yield StartChunk(message_id="m-" + secrets.token_urlsafe(9))
    async for part in parts:
        if isinstance(part, TextDeltaPart):
            if text_id is None:
                text_id = "t-" + secrets.token_urlsafe(6)
                yield TextStartChunk(id=text_id)
            yield TextDeltaChunk(id=text_id, delta=part.delta)
            continue
        if text_id is not None:
            # Text between tool calls is its own part: close it before anything else.
            yield TextEndChunk(id=text_id)
            text_id = None
        for chunk in _sdk_chunks(part):
            yield chunk
        if isinstance(part, EntryPart):
            yield _EntryChunk.of(part)
            continue
        kind = f"data-{part.type.replace('_', '-')}"
        yield DataChunk(
            type=kind, data=part.model_dump(mode="json"), transient=not is_durable(part)
        )
    if text_id is not None:
        yield TextEndChunk(id=text_id)
    yield FinishChunk()


def _sdk_chunks(part: Part) -> list[BaseChunk]:
    """The AI SDK's own chunks for a tool call, its end and a run's error, so any AI SDK
    client shows them; the page reads the typed part that follows instead."""
    match part:
        case ToolCallPart(call_id=str(call_id)):
            return [ToolInputAvailableChunk(tool_call_id=call_id, tool_name=part.tool,
                                            input=part.args)]  # fmt: skip
        case ToolResultPart(call_id=str(call_id), ok=True):
            return [ToolOutputAvailableChunk(tool_call_id=call_id, output=part.result)]
        case ToolResultPart(call_id=str(call_id)):
            error = part.error or "the tool failed"
            return [ToolOutputErrorChunk(tool_call_id=call_id, error_text=error)]
        case RunEndedPart(error=str(error)):
            return [ErrorChunk(error_text=error)]
    return []


async def encode_sse(
    chunks: AsyncIterator[BaseChunk], read_entry: ReadEntry | None = None
) -> AsyncIterator[bytes]:
    """Server-sent events: one ``data:`` line per chunk, then ``[DONE]``.

    An entry's GeoJSON of up to :data:`INLINE_ENTRY_BYTES` is read with ``read_entry`` and
    sent inline. A part whose line is over :data:`MAX_PART_BYTES` is withheld with its
    size. Text that is not valid Unicode (a lone surrogate from a model or a file) is
    replaced, not allowed to end the stream halfway with no ``[DONE]``.
    """
    async for chunk in chunks:
        line = _line(chunk)
        if isinstance(chunk, _EntryChunk) and read_entry is not None:
            part = chunk._part
            small = part.bytes <= INLINE_ENTRY_BYTES and len(line) + part.bytes <= MAX_PART_BYTES
            if small and part.raster is None:  # a raster's part names its picture instead
                stored = await asyncio.to_thread(read_entry, part.entry_id, part.version)
                line = _with_geojson(line, stored)
        if len(line) > MAX_PART_BYTES:
            line = _line(_withheld_chunk(chunk, len(line)))
        yield line
    yield b"data: [DONE]\n\n"


def capped(part: dict[str, Any]) -> dict[str, Any]:
    """``part`` as it is sent: whole, or, when its JSON is over :data:`MAX_PART_BYTES`, its
    type and where it came from, and that it was withheld, with its size. The stream and
    a chat read back cap a part alike, so both show the same."""
    size = len(json.dumps(part, ensure_ascii=False, separators=(",", ":")).encode())
    if size <= MAX_PART_BYTES:
        return part
    kept: dict[str, Any] = {
        key: part[key] for key in ("type", "seq", "run_id", "at", "call_id", "tool") if key in part
    }
    return {**kept, "withheld": True, "bytes": size, "limit": MAX_PART_BYTES}


def _withheld_chunk(chunk: BaseChunk, size: int) -> BaseChunk:
    """``chunk`` with its bulk replaced by a note that it was withheld, and why."""
    note = {"withheld": True, "bytes": size, "limit": MAX_PART_BYTES}
    if isinstance(chunk, DataChunk):
        data = chunk.data if isinstance(chunk.data, dict) else {}
        if isinstance(chunk, _EntryChunk):
            data = chunk._part.model_dump(mode="json")  # without the GeoJSON spliced in
        return DataChunk(type=chunk.type, data=capped(data), transient=chunk.transient)
    if isinstance(chunk, ToolInputAvailableChunk):
        return chunk.model_copy(update={"input": note})
    if isinstance(chunk, ToolOutputAvailableChunk):
        return chunk.model_copy(update={"output": note})
    if isinstance(chunk, ToolOutputErrorChunk):
        return chunk.model_copy(update={"error_text": chunk.error_text[:10_000]})
    if isinstance(chunk, ErrorChunk):
        return chunk.model_copy(update={"error_text": chunk.error_text[:10_000]})
    return chunk


def _with_geojson(line: bytes, geojson: bytes | None) -> bytes:
    """``line``'s part with ``"geojson": <the stored bytes>`` added to its data."""
    if not geojson:
        return line
    head, tail = b"data: ", b"}}\n\n"
    if not (line.startswith(head) and line.endswith(tail)):
        return line
    # The stored GeoJSON is JSON geomint wrote itself (``allow_nan=False``), so it is
    # spliced as it is: no parse and no second serialisation of a large layer. A line
    # break would end the event early: such bytes (written by anything else) are not sent.
    if b"\n" in geojson or b"\r" in geojson:
        return line
    return line[: -len(tail)] + b',"geojson":' + geojson + tail


def _line(chunk: BaseChunk) -> bytes:
    try:
        return f"data: {chunk.encode(_SDK_VERSION)}\n\n".encode()
    except (UnicodeEncodeError, PydanticSerializationError):
        data = chunk.model_dump(mode="python", by_alias=True, exclude_none=True)
        text = json.dumps(data, ensure_ascii=False, separators=(",", ":"), default=str)
        return f"data: {text}\n\n".encode("utf-8", "replace")
