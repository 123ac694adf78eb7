"""A run's events in the Vercel AI UI-message stream protocol, as server-sent events.

The browser speaks a standard protocol rather than one of ours: text arrives as
``text-start`` / ``text-delta`` / ``text-end``, tool calls as ``tool-input-available`` and
``tool-output-available`` (the model's handle and digest), and everything the map and the
figure cards need (an entry's GeoJSON, a chart, figure cards, camera moves) as ``data-*``
parts. The chunk types are pydantic-ai's own (:mod:`pydantic_ai.ui.vercel_ai`).
"""

from __future__ import annotations

import json
import secrets
from collections.abc import AsyncIterator
from typing import Any, Final
from urllib.parse import quote

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

from geomint.agent import AgentEvent

__all__ = ["HEADERS", "MAX_PART_BYTES", "encode_sse", "ui_chunks"]

#: Response headers the AI SDK's client expects for this protocol.
HEADERS: Final = {
    "x-vercel-ai-ui-message-stream": "v1",
    "cache-control": "no-cache",
    "x-accel-buffering": "no",
}
_SDK_VERSION: Final = 5
#: The most a ``data-*`` part may hold, as JSON. A larger entry or analysis result is sent
#: by reference (the page fetches it when it needs it); anything else larger is withheld
#: with its size. One part used to carry a 75 MB analysis result.
MAX_PART_BYTES: Final = 1_000_000
#: AgentEvent kinds sent as ``data-<kind>`` parts for the page.
_DATA_KINDS: Final = frozenset(
    {"run_started", "classified", "progress", "entry", "analysis", "chart", "figure",
     "observation", "view", "display", "monitor", "monitor_ran", "approval",
     "approval_answered", "miss"}
)  # fmt: skip


async def ui_chunks(events: AsyncIterator[AgentEvent]) -> AsyncIterator[BaseChunk]:
    """Translate a run's events into UI-message stream chunks."""
    text_id: str | None = None
    yield StartChunk(message_id="m-" + secrets.token_urlsafe(9))
    async for event in events:
        data = event.data
        if event.type == "text":
            if text_id is None:
                text_id = "t-" + secrets.token_urlsafe(6)
                yield TextStartChunk(id=text_id)
            yield TextDeltaChunk(id=text_id, delta=str(data.get("delta", "")))
            continue
        if text_id is not None:
            # Text between tool calls is its own part: close it before anything else.
            yield TextEndChunk(id=text_id)
            text_id = None
        if event.type == "tool_call":
            yield ToolInputAvailableChunk(
                tool_call_id=str(data["id"]), tool_name=str(data["name"]), input=data.get("args")
            )
        elif event.type == "tool_result":
            if data.get("ok", True):
                yield ToolOutputAvailableChunk(
                    tool_call_id=str(data["id"]), output=data.get("result")
                )
            else:
                result = data.get("result") or {}
                message = result.get("error") if isinstance(result, dict) else str(result)
                yield ToolOutputErrorChunk(
                    tool_call_id=str(data["id"]), error_text=str(message or "the tool failed")
                )
        elif event.type == "error":
            yield ErrorChunk(error_text=str(data.get("message", "the run failed")))
        elif event.type == "done":
            yield DataChunk(type="data-done", data=data)
        elif event.type in _DATA_KINDS:
            yield DataChunk(type=f"data-{event.type.replace('_', '-')}", data=data)
    if text_id is not None:
        yield TextEndChunk(id=text_id)
    yield FinishChunk()


def _by_reference(kind: str, data: dict[str, Any], chat_id: str, size: int) -> dict[str, Any]:
    """What a part of ``size`` bytes, over MAX_PART_BYTES, is sent as instead of ``data``."""
    base = f"/api/chats/{quote(chat_id, safe='')}"
    if kind == "data-entry" and "entry_id" in data:
        entry, version = quote(str(data["entry_id"]), safe=""), data.get("version")
        return {
            **{k: v for k, v in data.items() if k != "geojson"},
            "geojson_url": f"{base}/entries/{entry}?version={version}",
            "bytes": size,
        }
    if kind == "data-analysis" and "analysis_id" in data:
        analysis = quote(str(data["analysis_id"]), safe="")
        slim = {k: v for k, v in data.items() if k not in ("result", "code")}
        return {**slim, "result_url": f"{base}/analyses/{analysis}", "bytes": size}
    return {"withheld": True, "bytes": size, "limit": MAX_PART_BYTES}


async def encode_sse(chunks: AsyncIterator[BaseChunk], chat_id: str = "") -> AsyncIterator[bytes]:
    """Server-sent events: one ``data:`` line per chunk, then ``[DONE]``.

    A ``data-*`` part whose line is over :data:`MAX_PART_BYTES` is sent by reference
    instead (``chat_id`` names the chat in its URL); it is measured as it is encoded, so
    no part is serialised twice unless it is too large. Text that is not valid Unicode
    (a lone surrogate from a model or a file) is replaced, not allowed to end the stream
    halfway with no ``[DONE]``.
    """
    async for chunk in chunks:
        line = _line(chunk)
        if isinstance(chunk, DataChunk) and len(line) > MAX_PART_BYTES:
            data = chunk.data if isinstance(chunk.data, dict) else {}
            slim = _by_reference(chunk.type, data, chat_id, len(line))
            line = _line(DataChunk(type=chunk.type, data=slim))
            if len(line) > MAX_PART_BYTES:  # even without its bulk (a huge label, say)
                withheld = {"withheld": True, "bytes": len(line), "limit": MAX_PART_BYTES}
                line = _line(DataChunk(type=chunk.type, data=withheld))
        yield line
    yield b"data: [DONE]\n\n"


def _line(chunk: BaseChunk) -> bytes:
    try:
        return f"data: {chunk.encode(_SDK_VERSION)}\n\n".encode()
    except (UnicodeEncodeError, PydanticSerializationError):
        data = chunk.model_dump(mode="python", by_alias=True, exclude_none=True)
        text = json.dumps(data, ensure_ascii=False, separators=(",", ":"), default=str)
        return f"data: {text}\n\n".encode("utf-8", "replace")
