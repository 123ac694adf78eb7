"""What an exported notebook carries: the chat read once into cells, a manifest and blobs.

:func:`read_chat` folds a stored chat into a :class:`Bundle`: the messages and analyses in
the order they happened, and a manifest (``chat.json``) that says, for each analysis, its
exact code, the entry versions it read (each by the sha256 of the blob the store holds),
the names it was given besides the entries (``now``, ``previous``, ``log``) and the
figures the chat's ledger recorded for it. The replay runtime reads only the manifest and
the blobs: everything that interprets the chat happens here, on the exporting side.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, Final, Literal

from geomint.provenance import Layer, Value
from geomint.provenance.citations import check_text
from geomint.sandbox import RASTER_MEDIA_TYPE
from geomint.state import (
    AnalysisRecorded,
    EntryWritten,
    Event,
    LayerMinted,
    MessageAdded,
    ToolCalled,
)
from geomint.store import Chats, NoSuchChatError

__all__ = [
    "MANIFEST_FORMAT",
    "MANIFEST_VERSION",
    "AnalysisCell",
    "Bundle",
    "MessageCell",
    "read_chat",
]

#: The ``format`` member of a replay manifest.
MANIFEST_FORMAT: Final = "geomint-replay"
MANIFEST_VERSION: Final = 1
#: Tools whose code is given ``now``, ``previous`` and ``log`` besides the entries.
_TIMED_TOOLS: Final = frozenset({"analyse_data", "create_tracker"})
#: Tools whose recorded result is their check's reading of what the code returned (what
#: a layer write planned, a clustering, a verdict), not the return itself: not compared.
_CHECKED_TOOLS: Final = frozenset({"process_data", "cluster_incidents", "create_tracker"})
#: How many earlier runs a monitor's ``log`` holds (as ``geomint.tools.watch`` keeps it).
_LOG_KEPT: Final = 20


@dataclass(frozen=True, kw_only=True)
class MessageCell:
    """A message of the chat, as a person read it.

    Attributes:
        role: ``user`` or ``assistant``.
        segments: The text in stretches, ``(text, cited)``: ``cited`` marks a figure
            shown as its value and unit, as the answer showed it.
    """

    role: Literal["user", "assistant"]
    segments: tuple[tuple[str, bool], ...]


@dataclass(frozen=True, kw_only=True)
class AnalysisCell:
    """One recorded run of code; its manifest entry has the rest.

    Attributes:
        analysis_id: ``a1``, ``a2``, ...
        code: The code exactly as it ran.
        heading: What the run was, in words (its tool, its name, what it read).
    """

    analysis_id: str
    code: str
    heading: str


@dataclass(frozen=True, kw_only=True)
class Bundle:
    """A chat ready to be written as a notebook or a script.

    Attributes:
        chat_id: The chat.
        title: Its title, when it has one.
        cells: Messages and analyses in the order they happened.
        manifest: What the replay runtime reads (``chat.json``).
        blobs: The bytes of every entry version an analysis read, by sha256.
    """

    chat_id: str
    title: str | None
    cells: tuple[MessageCell | AnalysisCell, ...]
    manifest: dict[str, Any]
    blobs: dict[str, bytes] = field(repr=False)


def read_chat(chats: Chats, chat_id: str) -> Bundle:
    """Read a stored chat into the cells and the manifest of its notebook.

    Raises:
        NoSuchChatError: The store has no such chat.
    """
    events = chats.trace(chat_id)
    if not events:
        raise NoSuchChatError(f"no chat {chat_id!r} in this store")
    workspace = chats.open(chat_id)
    values = {v.id: v for v in workspace.values}
    reader = _Reader(chats, chat_id, values)
    cells: list[MessageCell | AnalysisCell] = []
    for event in events:
        cell = reader.read(event)
        if cell is not None:
            cells.append(cell)
    by_analysis = set(reader.analyses)
    manifest = {
        "format": MANIFEST_FORMAT,
        "version": MANIFEST_VERSION,
        "chat_id": chat_id,
        "title": workspace.title,
        "analyses": reader.analyses,
        "blobs": {
            sha: {"size": len(data), "media_type": reader.media[sha]}
            for sha, data in reader.blobs.items()
        },
        "not_by_code": [
            _value_record(v) for v in workspace.values if v.minted_by not in by_analysis
        ],
    }
    return Bundle(
        chat_id=chat_id,
        title=workspace.title,
        cells=tuple(cells),
        manifest=manifest,
        blobs=reader.blobs,
    )


class _Reader:
    """Reads events in order, keeping what the manifest needs of the ones before."""

    def __init__(self, chats: Chats, chat_id: str, values: dict[str, Value]) -> None:
        self.chats = chats
        self.chat_id = chat_id
        self.values = values
        self.versions: dict[tuple[str, int], EntryWritten] = {}
        self.layers: dict[str, Layer] = {}
        self.runs: list[tuple[AnalysisRecorded, Any]] = []
        self.calling: str | None = None
        self.analyses: dict[str, dict[str, Any]] = {}
        self.blobs: dict[str, bytes] = {}
        self.media: dict[str, str] = {}

    def read(self, event: Event) -> MessageCell | AnalysisCell | None:
        body = event.body
        if isinstance(body, EntryWritten):
            self.versions[(body.entry_id, body.version)] = body
        elif isinstance(body, ToolCalled):
            self.calling = body.tool
        elif isinstance(body, LayerMinted):
            self.layers[body.layer.id] = body.layer
        elif isinstance(body, MessageAdded) and body.role in ("user", "assistant"):
            return self._message(body)
        elif isinstance(body, AnalysisRecorded):
            return self._analysis(event, body)
        return None

    def _message(self, body: MessageAdded) -> MessageCell | None:
        text = body.text().strip()
        if not text:
            return None
        role: Literal["user", "assistant"] = "user" if body.role == "user" else "assistant"
        if role == "user":
            return MessageCell(role=role, segments=((text, False),))
        checked = check_text(text, self.values)
        segments = tuple((s.shown, s.state == "cited") for s in checked.segments)
        return MessageCell(role=role, segments=segments or ((text, False),))

    def _analysis(self, event: Event, body: AnalysisRecorded) -> AnalysisCell:
        inputs = []
        for version in body.inputs:
            written = self.versions[(version.entry_id, version.version)]
            sha = self._saved(written)
            inputs.append(
                {
                    "entry_id": version.entry_id,
                    "kind": written.kind,
                    "version": version.version,
                    "sha256": sha,
                }
            )
        result = self._result(body)
        self.analyses[body.analysis_id] = {
            "analysis_id": body.analysis_id,
            "name": body.name,
            "tool": body.tool,
            "code": body.code,
            "code_hash": body.code_hash,
            "output_format": body.output_format,
            "inputs": inputs,
            "extra": self._extra(event, body),
            "values": [_value_record(self.values[v]) for v in body.values if v in self.values],
            "layers": [self._layer(i) for i in body.layers if i in self.layers],
            "error": body.error,
            "result": None if body.tool in _CHECKED_TOOLS else result,
        }
        self.runs.append((body, result))
        read = ", ".join(f"{i['entry_id']} v{i['version']}" for i in inputs) or "nothing"
        named = f" {body.name!r}" if body.name else ""
        heading = f"{body.analysis_id}: {body.tool or 'analysis'}{named}, reading {read}"
        return AnalysisCell(analysis_id=body.analysis_id, code=body.code, heading=heading)

    def _saved(self, written: EntryWritten) -> str:
        """Keep the bytes of an entry version for the export; return their sha256."""
        sha = written.blob.sha256
        if sha not in self.blobs:
            self.blobs[sha] = self.chats.read_blob(self.chat_id, written.blob)
            self.media[sha] = written.blob.media_type
        return sha

    def _layer(self, layer_id: str) -> dict[str, Any]:
        """A layer the run minted, with the bytes the store kept of it (to compare with)."""
        layer = self.layers[layer_id]
        written = self.versions[(layer.entry.entry_id, layer.entry.version)]
        return {
            "id": layer.id,
            "label": layer.label,
            "feature_count": layer.feature_count,
            "raster": written.blob.media_type == RASTER_MEDIA_TYPE,
            "sha256": self._saved(written),
        }

    def _result(self, body: AnalysisRecorded) -> Any:
        if body.result_blob is not None:
            return json.loads(self.chats.read_blob(self.chat_id, body.result_blob))
        return body.result

    def _extra(self, event: Event, body: AnalysisRecorded) -> dict[str, Any]:
        """The names the run was given besides the entries, as the tool that ran it gave
        them: the time (the run's record is the nearest the chat keeps), and for a
        monitor's or tracker's re-run its earlier results."""
        earlier = [(r, result) for r, result in self.runs if body.name and r.name == body.name]
        if body.tool == "cluster_incidents":
            # The last run's clustering, when it was one (as geomint.tools.clusters reads it).
            last = earlier[-1][1] if earlier else None
            clustering = isinstance(last, dict) and isinstance(last.get("clusters"), list)
            return {"previous": last if clustering else None}
        if body.tool is not None and body.tool not in _TIMED_TOOLS:
            return {}
        now = event.at.isoformat()
        if body.trigger is None and self.calling != "monitor_analysis":
            return {"now": now, "previous": None, "log": []}
        succeeded = [(r, result) for r, result in earlier if r.error is None]
        if body.tracker:
            log = [_verdict(r, result) for r, result in succeeded if isinstance(result, dict)]
            log = log[-_LOG_KEPT:]
            return {"now": now, "log": log, "previous": log[-1] if log else None}
        previous = earlier[-1][1] if earlier else None
        if body.trigger is None:  # switched on as a monitor: it ran again, once
            return {"now": now, "previous": previous, "log": []}
        log = [{"analysis_id": r.analysis_id, "result": result} for r, result in succeeded]
        return {"now": now, "previous": previous, "log": log[-_LOG_KEPT:]}


def _verdict(record: AnalysisRecorded, result: dict[str, Any]) -> dict[str, Any]:
    return {
        "analysis_id": record.analysis_id,
        "active": result.get("active"),
        "summary": result.get("summary"),
        "members": result.get("members"),
    }


def _value_record(value: Value) -> dict[str, Any]:
    return {
        "id": value.id,
        "label": value.label,
        "value": value.value,
        "unit": value.unit,
        "minted_by": value.minted_by,
    }
