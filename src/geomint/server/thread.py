"""A chat as the page shows it again after a reload: its messages and what the map held.

The thread holds what was shown, read back from the chat's events: each question, then each
answer with its tool calls, the charts and figure cards its run produced and the approvals
it asked for; and the entries with their display state and GeoJSON, and the last camera
move. Data parts have the same shapes as the stream's ``data-*`` parts, so the page draws a
restored chat with the code that draws a live one.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any, Final
from urllib.parse import quote

from geomint.agent import approval_preview
from geomint.state import (
    AnalysisRecorded,
    ApprovalAsked,
    ApprovalGiven,
    ApprovalRefused,
    Event,
    FigurePresented,
    MessageAdded,
    Workspace,
)
from geomint.store import Chats
from geomint.tools import figure_card

__all__ = ["analysis_view", "chat_view", "entry_geojson"]

#: The largest entry shown again on reload; bigger ones are listed without their data.
_MAX_ENTRY_BYTES: Final = 20_000_000


def chat_view(chats: Chats, chat_id: str) -> dict[str, Any]:
    """The chat's messages, entries and view (raises NoSuchChatError for an unknown id)."""
    workspace = chats.open(chat_id)
    events = chats.trace(chat_id)
    return {
        "id": chat_id,
        "title": workspace.title,
        "messages": _messages(chats, workspace, events),
        "entries": [_entry(chats, workspace, entry_id) for entry_id in workspace.entries],
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


def _messages(chats: Chats, workspace: Workspace, events: Iterable[Event]) -> list[dict[str, Any]]:
    messages: list[dict[str, Any]] = []
    shown: dict[str, list[dict[str, Any]]] = {}  # run id -> data parts, in order
    asked: dict[str, dict[str, Any]] = {}
    values = {v.id: v for v in workspace.values}
    for event in events:
        body = event.body
        parts = shown.setdefault(event.run_id, [])
        if isinstance(body, AnalysisRecorded) and body.output_format == "chart" and not body.error:
            config = _result(chats, workspace.chat_id, body)
            if isinstance(config, dict):
                parts.append(
                    {
                        "type": "data-chart",
                        "data": {
                            "analysis_id": body.analysis_id,
                            "name": body.name,
                            "config": config,
                        },
                    }
                )
        elif isinstance(body, FigurePresented):
            cards = [figure_card(values[v]) for v in body.value_ids if v in values]
            parts.append({"type": "data-figure", "data": {"title": body.title, "figures": cards}})
        elif isinstance(body, ApprovalAsked):
            asked[body.approval_id] = {
                "approval_id": body.approval_id,
                "tool": body.tool,
                "args": body.arguments,
                "preview": approval_preview(
                    body.tool,
                    body.arguments,
                    workspace.entries,
                    effects=body.effects,
                    about=body.about,
                ),
                "state": "pending",
            }
            parts.append({"type": "data-approval", "data": asked[body.approval_id]})
        elif isinstance(body, ApprovalGiven | ApprovalRefused) and body.approval_id in asked:
            asked[body.approval_id]["state"] = (
                "given" if isinstance(body, ApprovalGiven) else "refused"
            )
            if isinstance(body, ApprovalRefused):
                asked[body.approval_id]["reason"] = body.reason
        elif isinstance(body, MessageAdded):
            messages.append(_message(body, event, parts))
    return messages


def _message(body: MessageAdded, event: Event, shown: list[dict[str, Any]]) -> dict[str, Any]:
    parts: list[dict[str, Any]] = []
    text = ""
    stopped = False
    for part in body.parts:
        kind = part.get("kind")
        if kind == "text":
            text += str(part.get("text") or "")
        elif kind == "tool":
            parts.append(
                {
                    "type": "tool",
                    "name": part.get("name"),
                    "ok": part.get("ok"),
                    "args": part.get("args"),
                }
            )
        elif kind == "upload":
            parts.append({"type": "data-upload", "data": dict(part)})
        elif kind == "stopped":
            stopped = True
    if body.role == "assistant":
        parts.extend(shown)
    if text:
        parts.append({"type": "text", "text": text})
    return {
        "id": body.message_id,
        "role": body.role,
        "run_id": event.run_id,
        "at": event.at.isoformat(),
        "stopped": stopped,
        "parts": parts,
    }


def _entry(chats: Chats, workspace: Workspace, entry_id: str) -> dict[str, Any]:
    entry = workspace.entries[entry_id]
    latest = entry.latest
    geojson: Any = None
    url = None
    if latest.blob.size <= _MAX_ENTRY_BYTES:
        geojson = json.loads(chats.read_blob(workspace.chat_id, latest.blob))
    else:  # the page fetches it by reference, as it does a large entry in a stream
        chat, named = quote(workspace.chat_id, safe=""), quote(entry_id, safe="")
        url = f"/api/chats/{chat}/entries/{named}?version={latest.version}"
    return {
        "entry_id": entry_id,
        "kind": entry.kind,
        "version": latest.version,
        "label": latest.label,
        "visible": entry.visible,
        "style": entry.style,
        "sources": [s.model_dump(mode="json") for s in latest.sources],
        "geojson": geojson,
        **({"geojson_url": url} if url else {}),
    }


def entry_geojson(
    chats: Chats, chat_id: str, entry_id: str, version: int | None = None
) -> bytes | None:
    """An entry version's stored GeoJSON (the latest by default), or None if there is none.

    Raises:
        NoSuchChatError: There is no such chat.
    """
    entry = chats.open(chat_id).entries.get(entry_id)
    if entry is None:
        return None
    wanted = entry.latest.version if version is None else version
    for written in entry.versions:
        if written.version == wanted:
            return chats.read_blob(chat_id, written.blob)
    return None


def _result(chats: Chats, chat_id: str, record: AnalysisRecorded) -> Any:
    if record.result_blob is not None:
        return json.loads(chats.read_blob(chat_id, record.result_blob))
    return record.result
