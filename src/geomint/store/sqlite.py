"""The default store: one SQLite file in WAL mode, nothing to start.

Appends run in ``BEGIN IMMEDIATE`` transactions, so writers in other threads and other
processes queue on SQLite's lock (with a busy timeout) rather than interleave, and each
chat's sequence numbers are assigned inside the transaction without gaps. With
``synchronous=FULL`` a returned append has reached the disk.

The store holds two connections: one writes, one reads. WAL lets the reader see the last
commit while a writer (here or in another process) holds the write lock, so reads never
queue behind an append waiting for that lock.
"""

from __future__ import annotations

import os
import sqlite3
import threading
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path

from geomint.state.events import BODY_ADAPTER, BlobRef, Event, EventBody
from geomint.store._migrations import SQLITE, unknown_migrations
from geomint.store.base import (
    ConcurrentAppendError,
    CorruptStoreError,
    SchemaTooNewError,
    StoreError,
    StoreUnavailableError,
    blob_ref,
    check_bodies,
    check_import,
)
from geomint.store.catalogue import CatalogueRow, Revision, filter_sql

__all__ = ["DEFAULT_PATH", "SQLiteStore", "default_path"]

#: Where the default store lives unless ``GEOMINT_HOME`` or a path says otherwise.
DEFAULT_PATH = Path("~/.local/share/geomint/geomint.db")

_BUSY_TIMEOUT_MS = 30_000
# Ids per IN (...) list: well under SQLite's limit on bound parameters.
_SQL_BATCH = 500


def default_path() -> Path:
    """Return the default database path: ``$GEOMINT_HOME/geomint.db`` or DEFAULT_PATH."""
    home = os.environ.get("GEOMINT_HOME")
    return Path(home) / "geomint.db" if home else DEFAULT_PATH.expanduser()


def _is_lock(exc: sqlite3.OperationalError) -> bool:
    return "locked" in str(exc) or "busy" in str(exc)


def _enter_wal(db: sqlite3.Connection) -> None:
    """Switch a connection's database to WAL, waiting out other processes opening it.

    Changing the journal mode takes an exclusive lock without calling the busy handler,
    so two processes opening a fresh file at once see ``database is locked`` at once
    rather than after the busy timeout; retry it ourselves for as long as that timeout.
    """
    deadline = time.monotonic() + _BUSY_TIMEOUT_MS / 1000
    pause = 0.001
    while True:
        try:
            db.execute("PRAGMA journal_mode = WAL")
            return
        except sqlite3.OperationalError as exc:
            if not _is_lock(exc) or time.monotonic() + pause > deadline:
                raise
        time.sleep(pause)
        pause = min(pause * 2, 0.1)


class _Append:
    """One caller's append, validated and serialised, queued for the next group commit."""

    __slots__ = ("bodies", "chat_id", "done", "drafts", "error", "events", "expected")

    def __init__(self, drafts: tuple[Event, ...], expected: int | None) -> None:
        self.chat_id = drafts[0].chat_id
        self.drafts = drafts
        # Serialised here, outside the write lock, so a group commit only runs SQL.
        self.bodies = [(e.body.type, e.body.model_dump_json()) for e in drafts]
        self.expected = expected
        self.events: tuple[Event, ...] = ()
        self.error: BaseException | None = None
        self.done = False


def _stamp(job: _Append, last: int, at: datetime) -> tuple[Event, ...]:
    # The drafts were validated when the append was queued; only the numbers and time change.
    return tuple(
        Event.model_construct(
            seq=last + e.seq, at=at, chat_id=e.chat_id, run_id=e.run_id, body=e.body
        )
        for e in job.drafts
    )


class SQLiteStore:
    """A :class:`~geomint.store.base.Store` in one SQLite file.

    Args:
        path: The database file; created (with its folder) on first use.
        durable: ``synchronous=FULL`` (True, the default) or ``NORMAL``, which survives
            a crash of the application but not of the machine.

    Raises:
        CorruptStoreError: The file is not a SQLite database.
        StoreUnavailableError: Another process held the file locked for over 30 s.
        SchemaTooNewError: A newer geomint wrote the file.
    """

    def __init__(self, path: str | Path | None = None, *, durable: bool = True) -> None:
        self.path = Path(path) if path is not None else default_path()
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._lock = threading.Lock()  # the writing connection
        self._read_lock = threading.Lock()  # the reading connection
        self._queue_lock = threading.Lock()
        self._queue: list[_Append] = []
        try:
            self._db = self._connect()
            _enter_wal(self._db)
            self._db.execute(f"PRAGMA synchronous = {'FULL' if durable else 'NORMAL'}")
            self._migrate()
            self._reader = self._connect()
        except sqlite3.DatabaseError as exc:
            self._close_quietly()
            if isinstance(exc, sqlite3.OperationalError) and _is_lock(exc):
                raise self._unavailable(exc) from exc
            raise CorruptStoreError(
                f"{self.path} cannot be opened as a geomint store ({exc}); it was not "
                "changed. Move it aside to start a new store, or restore it from a backup"
            ) from None

    def _connect(self) -> sqlite3.Connection:
        db = sqlite3.connect(self.path, isolation_level=None, check_same_thread=False)
        db.execute(f"PRAGMA busy_timeout = {_BUSY_TIMEOUT_MS}")
        return db

    def _unavailable(self, exc: sqlite3.OperationalError) -> StoreError:
        """Say what an operational error (a lock held too long, a full disk) means."""
        if _is_lock(exc):
            return StoreUnavailableError(
                f"another process has held the write lock of {self.path} for over "
                f"{_BUSY_TIMEOUT_MS // 1000} s ({exc}); nothing was stored. Find the "
                "process writing to it, or try again when it has finished"
            )
        return StoreUnavailableError(
            f"cannot write to {self.path} ({exc}); nothing was stored. Check that the "
            "disk has room and the file and its folder are writable"
        )

    @contextmanager
    def _writing(self) -> Iterator[sqlite3.Connection]:
        """Lend the writing connection in one ``BEGIN IMMEDIATE`` transaction."""
        with self._lock:
            db = self._db
            try:
                db.execute("BEGIN IMMEDIATE")
                yield db
                db.execute("COMMIT")
            except BaseException as exc:
                if db.in_transaction:
                    db.execute("ROLLBACK")
                if isinstance(exc, sqlite3.OperationalError):
                    raise self._unavailable(exc) from exc
                raise

    # -- schema ----------------------------------------------------------------------------

    def _migrate(self) -> None:
        db = self._db
        db.execute("BEGIN IMMEDIATE")
        try:
            db.execute(
                "CREATE TABLE IF NOT EXISTS migrations (name TEXT PRIMARY KEY, applied_at TEXT)"
            )
            applied = [r[0] for r in db.execute("SELECT name FROM migrations ORDER BY rowid")]
            newer = unknown_migrations(applied, SQLITE)
            if newer:
                raise SchemaTooNewError(
                    f"{self.path} was written by a newer geomint (it has migration "
                    f"{newer[-1]!r}, unknown to this version); it was not changed. "
                    "Upgrade geomint to open it"
                )
            for name, sql in SQLITE:
                if name in applied:
                    continue
                for statement in sql.split(";"):
                    if statement.strip():
                        db.execute(statement)
                db.execute(
                    "INSERT INTO migrations VALUES (?, ?)", (name, datetime.now(UTC).isoformat())
                )
            db.execute("COMMIT")
        except BaseException:
            if db.in_transaction:
                db.execute("ROLLBACK")
            raise

    def migrations(self) -> list[str]:
        """Return the names of the migrations applied to this database, in order."""
        with self._read_lock:
            rows = self._reader.execute("SELECT name FROM migrations ORDER BY rowid")
            return [r[0] for r in rows]

    # -- events ----------------------------------------------------------------------------

    def append(
        self,
        chat_id: str,
        run_id: str,
        bodies: Sequence[EventBody],
        *,
        expected_last_seq: int | None = None,
    ) -> tuple[Event, ...]:
        """Append events atomically; see :meth:`geomint.store.base.Store.append`.

        Threads appending at once share commits (group commit): whichever takes the write
        lock commits every append queued behind it in one transaction, so the disk sync
        that durability costs is paid once per group rather than once per append. Each
        append still succeeds or fails on its own: each is validated before it joins a
        group, so one caller's bad chat id, run id or body cannot fail another's.

        Raises:
            ConcurrentAppendError: ``expected_last_seq`` no longer holds.
            pydantic.ValidationError: The chat id, run id or a body is invalid.
            StoreUnavailableError: Another process held the write lock for over 30 s.
        """
        check_bodies(bodies)
        at = datetime.now(UTC)
        job = _Append(
            tuple(
                Event(seq=i, at=at, chat_id=chat_id, run_id=run_id, body=body)
                for i, body in enumerate(bodies, start=1)
            ),
            expected_last_seq,
        )
        with self._queue_lock:
            self._queue.append(job)
        with self._lock:
            if not job.done:
                with self._queue_lock:
                    jobs, self._queue = self._queue, []
                self._commit(jobs)
        if job.error is not None:
            raise job.error
        return job.events

    def _commit(self, jobs: list[_Append]) -> None:
        db = self._db
        try:
            db.execute("BEGIN IMMEDIATE")
            last: dict[str, int] = {}
            rows: list[tuple[str, int, str, str, str, str]] = []
            at = datetime.now(UTC)
            stamp = at.isoformat()
            for job in jobs:
                if job.chat_id not in last:
                    row = db.execute(
                        "SELECT last_seq FROM chats WHERE chat_id = ?", (job.chat_id,)
                    ).fetchone()
                    last[job.chat_id] = row[0] if row else 0
                seq = last[job.chat_id]
                if job.expected is not None and job.expected != seq:
                    job.error = ConcurrentAppendError(job.chat_id, job.expected, seq)
                    continue
                job.events = _stamp(job, seq, at)
                last[job.chat_id] = job.events[-1].seq
                rows.extend(
                    (e.chat_id, e.seq, e.run_id, stamp, kind, body)
                    for e, (kind, body) in zip(job.events, job.bodies, strict=True)
                )
            db.executemany(
                "INSERT INTO events (chat_id, seq, run_id, at, type, body) "
                "VALUES (?, ?, ?, ?, ?, ?)",
                rows,
            )
            # Only chats that received events: a refused append must not create a chat.
            written = {job.chat_id for job in jobs if job.events}
            db.executemany(
                "INSERT INTO chats (chat_id, last_seq) VALUES (?, ?) "
                "ON CONFLICT (chat_id) DO UPDATE SET last_seq = excluded.last_seq",
                [(chat, seq) for chat, seq in last.items() if chat in written],
            )
            db.execute("COMMIT")
        except BaseException as exc:
            if db.in_transaction:
                db.execute("ROLLBACK")
            # The whole group failed (the jobs were validated, so the database refused
            # it): every append in it fails with the same cause.
            for job in jobs:
                job.events = ()
                if isinstance(exc, sqlite3.OperationalError):
                    job.error = self._unavailable(exc)
                elif isinstance(exc, Exception):
                    job.error = exc
                else:
                    job.error = StoreError(
                        f"the append was interrupted ({type(exc).__name__}); nothing was stored"
                    )
            if not isinstance(exc, Exception):
                raise
        finally:
            for job in jobs:
                job.done = True

    def import_events(
        self, chat_id: str, events: Sequence[Event], blobs: Sequence[tuple[bytes, str]] = ()
    ) -> None:
        """Store already-stamped events and their blobs into a chat that has none."""
        refs = [(blob_ref(data, media_type), data) for data, media_type in blobs]
        with self._writing() as db:
            row = db.execute("SELECT last_seq FROM chats WHERE chat_id = ?", (chat_id,)).fetchone()
            check_import(chat_id, row[0] if row else 0, events)
            db.executemany(
                "INSERT INTO events (chat_id, seq, run_id, at, type, body) "
                "VALUES (?, ?, ?, ?, ?, ?)",
                [
                    (
                        chat_id,
                        e.seq,
                        e.run_id,
                        e.at.isoformat(),
                        e.body.type,
                        e.body.model_dump_json(),
                    )
                    for e in events
                ],
            )
            db.execute(
                "INSERT INTO chats (chat_id, last_seq) VALUES (?, ?)", (chat_id, len(events))
            )
            db.executemany(
                "INSERT INTO blobs (chat_id, sha256, media_type, size, data) "
                "VALUES (?, ?, ?, ?, ?) ON CONFLICT DO NOTHING",
                [(chat_id, ref.sha256, ref.media_type, ref.size, data) for ref, data in refs],
            )

    def read(self, chat_id: str, *, after: int = 0, run_id: str | None = None) -> Iterator[Event]:
        """Yield a chat's events after ``after``, in order; see the Store protocol."""
        query = "SELECT seq, run_id, at, body FROM events WHERE chat_id = ? AND seq > ?"
        params: tuple[object, ...] = (chat_id, after)
        if run_id is not None:
            query += " AND run_id = ?"
            params += (run_id,)
        with self._read_lock:
            rows = self._reader.execute(query + " ORDER BY seq", params).fetchall()
        for seq, run, at, body in rows:
            yield Event.model_construct(
                seq=seq,
                at=datetime.fromisoformat(at),
                chat_id=chat_id,
                run_id=run,
                body=BODY_ADAPTER.validate_json(body),
            )

    def last_seq(self, chat_id: str) -> int:
        """Return the chat's last sequence number (0 when it has none)."""
        with self._read_lock:
            row = self._reader.execute(
                "SELECT last_seq FROM chats WHERE chat_id = ?", (chat_id,)
            ).fetchone()
        return int(row[0]) if row else 0

    def chat_ids(self) -> list[str]:
        """Return every chat id, deleted ones included."""
        with self._read_lock:
            rows = self._reader.execute("SELECT chat_id FROM chats ORDER BY chat_id")
            return [r[0] for r in rows]

    # -- blobs and snapshots ---------------------------------------------------------------

    def put_blob(self, chat_id: str, data: bytes, media_type: str) -> BlobRef:
        """Store ``data`` once per content hash in this chat; return its reference."""
        ref = blob_ref(data, media_type)
        with self._writing() as db:
            db.execute(
                "INSERT INTO blobs (chat_id, sha256, media_type, size, data) "
                "VALUES (?, ?, ?, ?, ?) ON CONFLICT DO NOTHING",
                (chat_id, ref.sha256, media_type, ref.size, data),
            )
        return ref

    def get_blob(self, chat_id: str, ref: BlobRef) -> bytes:
        """Return a blob's bytes.

        Raises:
            KeyError: No such blob in this chat.
        """
        with self._read_lock:
            row = self._reader.execute(
                "SELECT data FROM blobs WHERE chat_id = ? AND sha256 = ?", (chat_id, ref.sha256)
            ).fetchone()
        if row is None:
            raise KeyError(f"no blob {ref.sha256[:12]}... in chat {chat_id!r}")
        return bytes(row[0])

    def save_snapshot(self, chat_id: str, seq: int, tag: str, data: bytes) -> None:
        """Keep the newest snapshot of a chat that has reached ``seq``.

        One statement checks the chat and writes, so a purge cannot slip in between.
        """
        with self._writing() as db:
            db.execute(
                "INSERT INTO snapshots (chat_id, seq, tag, data) SELECT ?, ?, ?, ? "
                "WHERE EXISTS (SELECT 1 FROM chats WHERE chat_id = ? AND last_seq >= ?) "
                "ON CONFLICT (chat_id) DO UPDATE SET seq = excluded.seq, tag = excluded.tag, "
                "data = excluded.data WHERE excluded.seq >= snapshots.seq",
                (chat_id, seq, tag, data, chat_id, seq),
            )

    def load_snapshot(self, chat_id: str, tag: str) -> tuple[int, bytes] | None:
        """Return the chat's snapshot if one was written with ``tag``."""
        with self._read_lock:
            row = self._reader.execute(
                "SELECT seq, data FROM snapshots WHERE chat_id = ? AND tag = ?", (chat_id, tag)
            ).fetchone()
        return (int(row[0]), bytes(row[1])) if row else None

    def purge(self, chat_id: str) -> None:
        """Remove every trace of a chat."""
        with self._writing() as db:
            for table in ("events", "blobs", "snapshots", "chats"):
                db.execute(f"DELETE FROM {table} WHERE chat_id = ?", (chat_id,))  # noqa: S608

    def close(self) -> None:
        """Close the connections."""
        with self._lock, self._read_lock:
            self._close_quietly()

    # -- the source registry (geomint.store.catalogue) --------------------------------------

    def put_sources(self, rows: Sequence[CatalogueRow]) -> None:
        """Insert or replace source rows by id, in one transaction."""
        with self._writing() as db:
            db.execute("UPDATE source_writes SET n = n + 1")
            for row in rows:
                db.execute("DELETE FROM source_countries WHERE source_id = ?", (row.id,))
                db.execute(
                    "INSERT OR REPLACE INTO sources VALUES (?, ?, ?, ?, ?, ?)",
                    (row.id, row.body, row.modality, row.start, row.end, int(row.world)),
                )
                db.executemany(
                    "INSERT OR IGNORE INTO source_countries VALUES (?, ?)",
                    [(row.id, c) for c in row.countries],
                )

    def delete_sources(self, ids: Sequence[str]) -> None:
        """Remove source rows by id."""
        with self._writing() as db:
            db.execute("UPDATE source_writes SET n = n + 1")
            for source_id in ids:
                db.execute("DELETE FROM source_countries WHERE source_id = ?", (source_id,))
                db.execute("DELETE FROM sources WHERE source_id = ?", (source_id,))

    def source_bodies(self, ids: Sequence[str] | None = None) -> dict[str, str]:
        """The JSON bodies of ``ids`` (every row when None), by id."""
        with self._read_lock:
            if ids is None:
                rows = self._reader.execute("SELECT source_id, body FROM sources").fetchall()
            else:
                rows = []
                for start in range(0, len(ids), _SQL_BATCH):
                    batch = list(ids[start : start + _SQL_BATCH])
                    marks = ", ".join("?" * len(batch))
                    rows += self._reader.execute(
                        f"SELECT source_id, body FROM sources WHERE source_id IN ({marks})",  # noqa: S608
                        batch,
                    ).fetchall()
        return dict(rows)

    def matching_sources(
        self,
        *,
        country: str | None = None,
        start: int | None = None,
        end: int | None = None,
        modality: str | None = None,
    ) -> list[str]:
        """The ids of rows that cover ``country``, overlap ``start``..``end`` and have
        ``modality``, chosen by one SQL predicate."""
        where, args = filter_sql(country, start, end, modality, mark="?")
        with self._read_lock:
            rows = self._reader.execute(f"SELECT s.source_id FROM sources s{where}", args)  # noqa: S608
            return [r[0] for r in rows]

    def sources_revision(self) -> Revision:
        """Changes whenever a source row is written or deleted."""
        with self._read_lock:
            row = self._reader.execute(
                "SELECT (SELECT n FROM source_writes), (SELECT COUNT(*) FROM sources)"
            )
            rev, count = row.fetchone()
        return (int(rev), int(count))

    def _close_quietly(self) -> None:
        for name in ("_reader", "_db"):
            db = getattr(self, name, None)
            if db is not None:
                db.close()

    def __enter__(self) -> SQLiteStore:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()
