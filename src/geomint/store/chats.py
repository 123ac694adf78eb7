"""Chats over a store: open a workspace, append with checks, list, delete, export, import.

:class:`Chats` is what the agent and the server use. Opening a chat folds its events onto
the stored snapshot, so only the events since the snapshot are read; appending checks each
event against the folded workspace (:meth:`Workspace.refusal`) and appends with
optimistic concurrency, re-folding and re-checking when another writer got there first.
"""

from __future__ import annotations

import base64
import hashlib
import json
import secrets
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from functools import cache
from typing import Any

from pydantic import ValidationError

from geomint.errors import UsageError
from geomint.state.events import (
    EVENT_ADAPTER,
    AnalysisRecorded,
    BlobRef,
    ChatCreated,
    ChatDeleted,
    ChatRenamed,
    EntryWritten,
    Event,
    EventBody,
    MapChanged,
    is_chat_id,
    title_problem,
)
from geomint.state.workspace import CorruptLogError, Workspace, fold
from geomint.store.base import ConcurrentAppendError, NoSuchChatError, Store, StoreError

__all__ = [
    "EXPORT_FORMAT",
    "Appended",
    "ChatSummary",
    "Chats",
    "RefusedEventError",
    "export_text",
]

#: Bump when the fold changes what a Workspace holds; old snapshots are then ignored.
FOLD_VERSION = 2
#: The ``format`` member of an exported chat.
EXPORT_FORMAT = "geomint-chat"


def export_text(data: dict[str, Any]) -> str:
    """What :meth:`Chats.export` returned, as the JSON text ``geomint chats export`` writes
    (and the web app serves): one line, non-ASCII kept as it is."""
    return json.dumps(data, ensure_ascii=False)


_RETRIES = 8


class RefusedEventError(StoreError, UsageError):
    """An event cannot follow the chat's current state; nothing was appended."""


@dataclass(frozen=True, kw_only=True)
class ChatSummary:
    """One row of a chat list; every field is computed from the chat's events.

    Attributes:
        chat_id: The chat.
        title: The title a person gave it, else its first user question, else the name
            of the first file dropped on it; None until it has one of these.
        message_count: How many messages it has.
        last_message_at: When its newest message was added; chats list newest first.
        created_at: When it began.
    """

    chat_id: str
    title: str | None
    message_count: int
    last_message_at: datetime | None
    created_at: datetime | None


@cache
def _snapshot_tag() -> str:
    schema = json.dumps(Workspace.model_json_schema(), sort_keys=True).encode()
    return f"fold-{FOLD_VERSION}-{hashlib.sha256(schema).hexdigest()[:12]}"


class Chats:
    """The chats in one store.

    Args:
        store: Where events, blobs and snapshots live.
        snapshot_after: Save a new snapshot when opening a chat folded at least this
            many events past the stored one.
    """

    def __init__(self, store: Store, *, snapshot_after: int = 100) -> None:
        self.store = store
        self.snapshot_after = snapshot_after

    # -- creating and opening ------------------------------------------------------------

    @staticmethod
    def new_chat_id() -> str:
        """Return a fresh URL-safe chat id."""
        return secrets.token_urlsafe(12)

    def create(self, chat_id: str | None = None, *, run_id: str = "create") -> Workspace:
        """Start a chat, with the caller's id or a generated one.

        Raises:
            UsageError: The id is not URL-safe, or a chat with it exists.
        """
        chat_id = chat_id or self.new_chat_id()
        if not is_chat_id(chat_id):
            raise UsageError(
                f"chat id {chat_id!r} must be 1-64 letters, digits, '-' or '_' (URL-safe)"
            )
        try:
            self.store.append(chat_id, run_id, [ChatCreated()], expected_last_seq=0)
        except ConcurrentAppendError:
            raise UsageError(f"a chat with id {chat_id!r} already exists") from None
        return self.open(chat_id)

    def open(self, chat_id: str) -> Workspace:
        """Return the chat's workspace: the stored snapshot plus the events after it.

        Raises:
            NoSuchChatError: The store has no events for this chat.
        """
        start: Workspace | None = None
        tag = _snapshot_tag()
        held = self.store.load_snapshot(chat_id, tag)
        if held is not None:
            try:
                start = Workspace.model_validate_json(held[1])
            except ValidationError:
                start = None  # a damaged snapshot costs a full fold, never the chat
            # A snapshot past the log's end is not this chat's (a purge raced the save
            # that wrote it, in an older geomint): fold from the start instead.
            if start is not None and start.last_seq > self.store.last_seq(chat_id):
                start = None
        base = start.last_seq if start is not None else 0
        workspace = fold(self.store.read(chat_id, after=base), start or chat_id)
        if workspace.last_seq == 0:
            raise NoSuchChatError(f"no chat {chat_id!r} in this store")
        if workspace.last_seq - base >= self.snapshot_after:
            self.store.save_snapshot(
                chat_id, workspace.last_seq, tag, workspace.model_dump_json().encode()
            )
        return workspace

    # -- appending -----------------------------------------------------------------------

    def append(self, chat_id: str, run_id: str, bodies: Sequence[EventBody]) -> Workspace:
        """Append events after checking each against the chat's state; return the new state.

        Raises:
            RefusedEventError: An event cannot follow; nothing was appended.
            NoSuchChatError: The chat does not exist.
        """
        return self.append_traced(chat_id, run_id, bodies).workspace

    def append_traced(self, chat_id: str, run_id: str, bodies: Sequence[EventBody]) -> Appended:
        """:meth:`append`, returning the stored events too and the state they followed.

        Raises:
            RefusedEventError: An event cannot follow; nothing was appended.
            NoSuchChatError: The chat does not exist.
        """
        for _ in range(_RETRIES):
            workspace = self.open(chat_id)
            checked = workspace
            for index, body in enumerate(bodies):
                reason = checked.refusal(body)
                if reason is not None:
                    raise RefusedEventError(
                        f"event {index} ({body.type}) refused: {reason}; nothing was appended"
                    )
                checked = fold([_provisional(checked, run_id, body)], checked)
            try:
                events = self.store.append(
                    chat_id, run_id, bodies, expected_last_seq=workspace.last_seq
                )
            except ConcurrentAppendError:
                continue
            return Appended(
                before=workspace, events=tuple(events), workspace=fold(events, workspace)
            )
        raise StoreError(
            f"chat {chat_id!r} kept changing under {_RETRIES} attempts to append; try again"
        )

    # -- listing and deleting --------------------------------------------------------------

    def list_chats(self, *, include_deleted: bool = False) -> list[ChatSummary]:
        """Return the chats, newest message first."""
        rows = []
        for chat_id in self.store.chat_ids():
            workspace = self.open(chat_id)
            if workspace.deleted and not include_deleted:
                continue
            rows.append(
                ChatSummary(
                    chat_id=chat_id,
                    title=workspace.title,
                    message_count=workspace.message_count,
                    last_message_at=workspace.last_message_at,
                    created_at=workspace.created_at,
                )
            )
        epoch = datetime.min.replace(tzinfo=UTC)
        rows.sort(key=lambda r: r.last_message_at or r.created_at or epoch, reverse=True)
        return rows

    def rename(self, chat_id: str, title: str, *, run_id: str = "rename") -> Workspace:
        """Give the chat a title of a person's choosing; it wins over the derived one.

        Raises:
            RefusedEventError: The title is not one (see :func:`title_problem`), or the
                chat was deleted; nothing was appended.
            NoSuchChatError: The chat does not exist.
        """
        problem = title_problem(title)
        if problem is not None:
            raise RefusedEventError(f"cannot rename chat {chat_id!r}: {problem}")
        return self.append(chat_id, run_id, [ChatRenamed(title=title)])

    def delete(self, chat_id: str, *, run_id: str = "delete") -> None:
        """Append a tombstone: the chat leaves listings; :meth:`purge_deleted` removes it."""
        self.append(chat_id, run_id, [ChatDeleted()])

    def purge_deleted(self) -> list[str]:
        """Remove every deleted chat's data (retention); return their ids."""
        purged = []
        for chat_id in self.store.chat_ids():
            if self.open(chat_id).deleted:
                self.store.purge(chat_id)
                purged.append(chat_id)
        return purged

    def trace(self, chat_id: str, run_id: str | None = None) -> list[Event]:
        """Return a chat's events in order: the trace of one run, or of the whole chat."""
        return list(self.store.read(chat_id, run_id=run_id))

    # -- export and import -----------------------------------------------------------------

    def export(self, chat_id: str) -> dict[str, Any]:
        """Return the chat as JSON-serialisable data: its events and the blobs they name."""
        events = self.trace(chat_id)
        if not events:
            raise NoSuchChatError(f"no chat {chat_id!r} in this store")
        blobs: dict[str, dict[str, str]] = {}
        for event in events:
            for ref in _blobs_named(event.body):
                if ref.sha256 not in blobs:
                    data = self.store.get_blob(chat_id, ref)
                    blobs[ref.sha256] = {
                        "media_type": ref.media_type,
                        "data": base64.b64encode(data).decode(),
                    }
        return {
            "format": EXPORT_FORMAT,
            "version": 1,
            "chat_id": chat_id,
            "events": [EVENT_ADAPTER.dump_python(e, mode="json") for e in events],
            "blobs": blobs,
        }

    def import_(self, data: dict[str, Any], *, chat_id: str | None = None) -> str:
        """Restore an exported chat exactly (same sequence numbers, times and runs).

        Everything is checked before anything is written (the id, the events, each
        blob's hash), and the events and blobs are stored in one step, so a refused
        import leaves nothing behind.

        Args:
            data: What :meth:`export` returned.
            chat_id: Store it under another id; by default its own.

        Returns:
            The chat id it was stored under.

        Raises:
            UsageError: Not an export, a damaged one, an invalid chat id, or the chat id
                is taken.
        """
        if not isinstance(data, dict) or data.get("format") != EXPORT_FORMAT:
            raise UsageError(f"not a geomint chat export (its 'format' is not {EXPORT_FORMAT!r})")
        target = chat_id if chat_id is not None else data.get("chat_id")
        if not isinstance(target, str) or not is_chat_id(target):
            raise UsageError(
                f"cannot import under chat id {target!r}: a chat id is 1-64 letters, digits, "
                "'-' or '_' (URL-safe); pass chat_id= to choose one"
            )
        try:
            events = [EVENT_ADAPTER.validate_python(e) for e in data["events"]]
            blobs = {
                sha: (base64.b64decode(b["data"], validate=True), str(b["media_type"]))
                for sha, b in data.get("blobs", {}).items()
            }
        except (KeyError, TypeError, ValueError, AttributeError) as exc:
            raise UsageError(f"the chat export is damaged: {exc}") from None
        if not events:
            raise UsageError("the chat export has no events; a chat begins with chat_created")
        if not isinstance(events[0].body, ChatCreated):
            raise UsageError(
                f"the chat export is damaged: it begins with {events[0].body.type}, "
                "not chat_created"
            )
        sources = sorted({e.chat_id for e in events})
        if len(sources) > 1:
            raise UsageError(
                f"the chat export is damaged: its events belong to {len(sources)} chats "
                f"({', '.join(map(repr, sources))}); an export holds one"
            )
        for sha, (blob, _) in blobs.items():
            if hashlib.sha256(blob).hexdigest() != sha:
                raise UsageError(f"the chat export is damaged: blob {sha[:12]}... does not match")
        events = [e.model_copy(update={"chat_id": target}) for e in events]
        try:
            fold(events, target)
        except CorruptLogError as exc:
            raise UsageError(f"the chat export is damaged: {exc}") from None
        self.store.import_events(target, events, list(blobs.values()))
        return target

    def read_blob(self, chat_id: str, ref: BlobRef) -> bytes:
        """Return the data of an entry version."""
        return self.store.get_blob(chat_id, ref)


def _blobs_named(body: EventBody) -> tuple[BlobRef, ...]:
    """The blobs an event names: an entry version's data, an analysis result kept apart,
    the GeoJSON and PNGs of a map change."""
    if isinstance(body, EntryWritten):
        return (body.blob,)
    if isinstance(body, AnalysisRecorded) and body.result_blob is not None:
        return (body.result_blob,)
    if isinstance(body, MapChanged):
        return body.blobs
    return ()


@dataclass(frozen=True)
class Appended:
    """What one append stored.

    Attributes:
        before: The chat's state the events were checked against.
        events: The events as stored (with their sequence numbers and times).
        workspace: The state after them.
    """

    before: Workspace
    events: tuple[Event, ...]
    workspace: Workspace


def _provisional(workspace: Workspace, run_id: str, body: EventBody) -> Event:
    return Event(
        seq=workspace.last_seq + 1,
        at=datetime.now(UTC),
        chat_id=workspace.chat_id,
        run_id=run_id,
        body=body,
    )
