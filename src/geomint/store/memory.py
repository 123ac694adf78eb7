"""A store in memory, for tests and throwaway sessions; it behaves like the others."""

from __future__ import annotations

import threading
from collections.abc import Iterator, Sequence
from datetime import UTC, datetime

from geomint.state.events import BlobRef, Event, EventBody
from geomint.store.base import ConcurrentAppendError, blob_ref, check_bodies, check_import
from geomint.store.catalogue import CatalogueRow, Revision, row_matches

__all__ = ["MemoryStore"]


class MemoryStore:
    """A :class:`~geomint.store.base.Store` held in dicts; gone when the process ends."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._events: dict[str, list[Event]] = {}
        self._blobs: dict[tuple[str, str], bytes] = {}
        self._snapshots: dict[str, tuple[int, str, bytes]] = {}
        self._sources: dict[str, CatalogueRow] = {}
        self._source_writes = 0

    def append(
        self,
        chat_id: str,
        run_id: str,
        bodies: Sequence[EventBody],
        *,
        expected_last_seq: int | None = None,
    ) -> tuple[Event, ...]:
        """Append events atomically; see :meth:`geomint.store.base.Store.append`."""
        check_bodies(bodies)
        with self._lock:
            log = self._events.get(chat_id, [])
            last = len(log)
            if expected_last_seq is not None and expected_last_seq != last:
                raise ConcurrentAppendError(chat_id, expected_last_seq, last)
            at = datetime.now(UTC)
            # Validating here is what the SQL stores do before they write; an invalid
            # chat id, run id or body is refused before the chat is created.
            events = tuple(
                Event(seq=last + i, at=at, chat_id=chat_id, run_id=run_id, body=body)
                for i, body in enumerate(bodies, start=1)
            )
            self._events[chat_id] = log
            log.extend(events)
        return events

    def import_events(
        self, chat_id: str, events: Sequence[Event], blobs: Sequence[tuple[bytes, str]] = ()
    ) -> None:
        """Store already-stamped events and their blobs into a chat that has none."""
        refs = [(blob_ref(data, media_type), bytes(data)) for data, media_type in blobs]
        with self._lock:
            check_import(chat_id, len(self._events.get(chat_id, ())), events)
            self._events[chat_id] = list(events)
            for ref, data in refs:
                self._blobs.setdefault((chat_id, ref.sha256), data)

    def read(self, chat_id: str, *, after: int = 0, run_id: str | None = None) -> Iterator[Event]:
        """Yield a chat's events after ``after``, in order."""
        with self._lock:
            events = list(self._events.get(chat_id, ())[after:])
        yield from (e for e in events if run_id is None or e.run_id == run_id)

    def last_seq(self, chat_id: str) -> int:
        """Return the chat's last sequence number (0 when it has none)."""
        with self._lock:
            return len(self._events.get(chat_id, ()))

    def chat_ids(self) -> list[str]:
        """Return every chat id, deleted ones included."""
        with self._lock:
            return sorted(self._events)

    def put_blob(self, chat_id: str, data: bytes, media_type: str) -> BlobRef:
        """Store ``data`` once per content hash in this chat; return its reference."""
        ref = blob_ref(data, media_type)
        with self._lock:
            self._blobs.setdefault((chat_id, ref.sha256), bytes(data))
        return ref

    def get_blob(self, chat_id: str, ref: BlobRef) -> bytes:
        """Return a blob's bytes; KeyError when there is none."""
        with self._lock:
            try:
                return self._blobs[(chat_id, ref.sha256)]
            except KeyError:
                raise KeyError(f"no blob {ref.sha256[:12]}... in chat {chat_id!r}") from None

    def save_snapshot(self, chat_id: str, seq: int, tag: str, data: bytes) -> None:
        """Keep the newest snapshot of a chat that has reached ``seq``."""
        with self._lock:
            if len(self._events.get(chat_id, ())) < max(seq, 1):
                return  # no such chat (purged, perhaps), or not that far yet
            held = self._snapshots.get(chat_id)
            if held is None or seq >= held[0]:
                self._snapshots[chat_id] = (seq, tag, bytes(data))

    def load_snapshot(self, chat_id: str, tag: str) -> tuple[int, bytes] | None:
        """Return the chat's snapshot if one was written with ``tag``."""
        with self._lock:
            held = self._snapshots.get(chat_id)
        return (held[0], held[2]) if held and held[1] == tag else None

    def purge(self, chat_id: str) -> None:
        """Remove every trace of a chat."""
        with self._lock:
            self._events.pop(chat_id, None)
            self._snapshots.pop(chat_id, None)
            for key in [k for k in self._blobs if k[0] == chat_id]:
                del self._blobs[key]

    def close(self) -> None:
        """Nothing to release."""

    # -- the source registry (geomint.store.catalogue) --------------------------------------

    def put_sources(self, rows: Sequence[CatalogueRow]) -> None:
        """Insert or replace source rows by id."""
        with self._lock:
            for row in rows:
                self._sources[row.id] = row
            self._source_writes += 1

    def delete_sources(self, ids: Sequence[str]) -> None:
        """Remove source rows by id."""
        with self._lock:
            for source_id in ids:
                self._sources.pop(source_id, None)
            self._source_writes += 1

    def source_bodies(self, ids: Sequence[str] | None = None) -> dict[str, str]:
        """The JSON bodies of ``ids`` (every row when None), by id."""
        with self._lock:
            wanted = self._sources if ids is None else ids
            return {i: self._sources[i].body for i in wanted if i in self._sources}

    def matching_sources(
        self,
        *,
        country: str | None = None,
        start: int | None = None,
        end: int | None = None,
        modality: str | None = None,
    ) -> list[str]:
        """The ids of rows the filter keeps (see :func:`~geomint.store.catalogue.row_matches`)."""
        with self._lock:
            rows = list(self._sources.values())
        return [
            r.id
            for r in rows
            if row_matches(r, country=country, start=start, end=end, modality=modality)
        ]

    def sources_revision(self) -> Revision:
        """Changes whenever a source row is written or deleted."""
        with self._lock:
            return (self._source_writes, len(self._sources))
