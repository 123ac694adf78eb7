"""What every store does, and the errors a store raises.

A store keeps, per chat, an append-only sequence of events, the blobs that entry versions
point to (stored once per content hash, read only when asked for) and one snapshot of the
folded workspace. It assigns each event its sequence number and timestamp itself.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator, Sequence
from typing import Protocol, runtime_checkable

from geomint.errors import GeomintError, OperatorError, UsageError
from geomint.state.events import BlobRef, Event, EventBody

__all__ = [
    "ConcurrentAppendError",
    "CorruptStoreError",
    "NoSuchChatError",
    "SchemaTooNewError",
    "Store",
    "StoreError",
    "StoreUnavailableError",
    "blob_ref",
]


class StoreError(GeomintError):
    """Root of the errors a store raises."""


class ConcurrentAppendError(StoreError):
    """Another writer appended first; fold the new events and try again.

    Attributes:
        expected: The last sequence number the caller had seen.
        actual: The chat's last sequence number now.
    """

    def __init__(self, chat_id: str, expected: int, actual: int) -> None:
        self.expected = expected
        self.actual = actual
        super().__init__(
            f"chat {chat_id!r} moved on from event {expected} to {actual} while this write "
            "was prepared; fold the new events and append again"
        )


class StoreUnavailableError(StoreError, OperatorError):
    """The store cannot be used now: its server cannot be reached or refused the
    connection, or another process has held its database's write lock too long."""


class NoSuchChatError(StoreError, UsageError):
    """The chat id names no chat in this store."""


class CorruptStoreError(StoreError, OperatorError):
    """The database cannot be read as a geomint store; nothing was written to it."""


class SchemaTooNewError(StoreError, OperatorError):
    """The database was written by a newer geomint; it is left untouched."""


def blob_ref(data: bytes, media_type: str) -> BlobRef:
    """Return the reference a blob of ``data`` is stored under."""
    return BlobRef(sha256=hashlib.sha256(data).hexdigest(), size=len(data), media_type=media_type)


@runtime_checkable
class Store(Protocol):
    """Persistence of chats: events, blobs and snapshots. Safe to share between threads."""

    def append(
        self,
        chat_id: str,
        run_id: str,
        bodies: Sequence[EventBody],
        *,
        expected_last_seq: int | None = None,
    ) -> tuple[Event, ...]:
        """Append events to a chat atomically, creating the chat on its first event.

        Args:
            chat_id: The chat.
            run_id: The run that caused the events.
            bodies: What happened, in order.
            expected_last_seq: Refuse the append unless the chat's last sequence
                number is this (optimistic concurrency); None appends regardless.

        Returns:
            The stored events, numbered and stamped.

        Raises:
            ConcurrentAppendError: ``expected_last_seq`` no longer holds.
        """
        ...

    def read(self, chat_id: str, *, after: int = 0, run_id: str | None = None) -> Iterator[Event]:
        """Yield a chat's events with ``seq > after`` in order, optionally of one run."""
        ...

    def import_events(
        self, chat_id: str, events: Sequence[Event], blobs: Sequence[tuple[bytes, str]] = ()
    ) -> None:
        """Store already-stamped events (an import), and their blobs, into a new chat.

        Either everything is stored or nothing is.

        Args:
            chat_id: The chat; it must have no events.
            events: The chat's events, numbered from 1, beginning with ``chat_created``.
            blobs: ``(data, media_type)`` of each blob the events name.

        Raises:
            UsageError: The chat already has events, or the events do not start a chat
                (see :func:`check_import`).
        """
        ...

    def last_seq(self, chat_id: str) -> int:
        """Return the chat's last sequence number; 0 when the chat has no events."""
        ...

    def chat_ids(self) -> list[str]:
        """Return every chat id in the store, deleted ones included."""
        ...

    def put_blob(self, chat_id: str, data: bytes, media_type: str) -> BlobRef:
        """Store ``data`` once per content hash; return its reference."""
        ...

    def get_blob(self, chat_id: str, ref: BlobRef) -> bytes:
        """Return a stored blob's bytes."""
        ...

    def save_snapshot(self, chat_id: str, seq: int, tag: str, data: bytes) -> None:
        """Keep one snapshot per chat: ``data`` folds events up to ``seq``.

        Atomically, nothing is saved unless the chat exists and has reached ``seq``, so a
        snapshot folded before a purge cannot outlive it; nor does one replace a
        snapshot at a later sequence number.
        """
        ...

    def load_snapshot(self, chat_id: str, tag: str) -> tuple[int, bytes] | None:
        """Return ``(seq, data)`` of the chat's snapshot if it was written with ``tag``."""
        ...

    def purge(self, chat_id: str) -> None:
        """Remove every trace of a chat (retention); events, blobs and snapshot."""
        ...

    def close(self) -> None:
        """Release the store's connections."""
        ...


def check_import(chat_id: str, last_seq: int, events: Sequence[Event]) -> None:
    """Refuse an import into a chat with events, or of events that do not start a chat.

    The events must be numbered 1, 2, 3, ... without gaps, belong to ``chat_id`` and
    begin with ``chat_created``: anything else would leave a chat no fold can open.
    """
    if last_seq:
        raise UsageError(f"chat {chat_id!r} already exists; import it under another id")
    if not events:
        raise UsageError("an import needs at least one event; this one has none")
    if events[0].body.type != "chat_created":
        raise UsageError(
            f"an imported chat must begin with a chat_created event, not {events[0].body.type}"
        )
    if [e.seq for e in events] != list(range(1, len(events) + 1)):
        raise UsageError("imported events must be numbered 1, 2, 3, ... without gaps")
    strays = sorted({e.chat_id for e in events} - {chat_id})
    if strays:
        raise UsageError(f"imported events belong to chat {strays[0]!r}, not {chat_id!r}")


def check_bodies(bodies: Sequence[EventBody]) -> None:
    """Refuse an empty append: a write that records nothing is a caller's mistake."""
    if not bodies:
        raise UsageError("append needs at least one event body")
