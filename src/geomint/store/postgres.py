"""A store in PostgreSQL, for servers that share chats between processes and machines.

Each call borrows one of the store's connections (kept for reuse, at most
``max_connections``). An append is one SQL statement, so one round trip and one
transaction: it bumps the chat's ``last_seq`` (``INSERT ... ON CONFLICT DO UPDATE`` or
``UPDATE ... RETURNING``), which locks the chat's row until it commits, and inserts the
events numbered from the value it got. Appenders to one chat, in any thread or process,
queue on that row lock and each gets the next numbers without gaps; appends to different
chats run side by side. The commit waits for the server's ``synchronous_commit`` (on by
default), so a returned append is as durable as the server makes it.

The store stamps events with the server's clock, read once the chat's row is locked, so
times never go backwards along a chat's sequence numbers even with many appenders.

Migrations run when the store opens, in one transaction under an advisory lock, so
processes opening a new database at once apply them once.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from datetime import UTC, datetime
from typing import Any

import psycopg
from psycopg import conninfo

from geomint.errors import UsageError
from geomint.state.events import BODY_ADAPTER, BlobRef, Event, EventBody
from geomint.store._migrations import POSTGRES, unknown_migrations
from geomint.store.base import (
    ConcurrentAppendError,
    CorruptStoreError,
    SchemaTooNewError,
    StoreUnavailableError,
    blob_ref,
    check_bodies,
    check_import,
)
from geomint.store.catalogue import CatalogueRow, Revision, filter_sql

__all__ = ["PostgresStore", "describe_url"]

#: The advisory lock key migrations run under (the bytes of "geomint" as an integer).
_MIGRATION_LOCK = int.from_bytes(b"geomint", "big")
_CONNECT_TIMEOUT_S = 10
_POOL_TIMEOUT_S = 30.0  # how long a call waits for a free connection


def describe_url(url: str) -> str:
    """Return ``url`` as a ``postgresql://`` URL without its password, for messages.

    Examples:
        >>> describe_url("postgresql://ana:secret@db.example:5433/geomint")
        'postgresql://ana@db.example:5433/geomint'
        >>> describe_url("host=/run/postgresql dbname=chats")
        'postgresql:///chats?host=/run/postgresql'
    """
    try:
        params = conninfo.conninfo_to_dict(url)
    except psycopg.ProgrammingError:
        return "(an unreadable connection URL)"
    host = str(params.get("host") or "")
    port = str(params.get("port") or "")
    user = str(params.get("user") or "")
    dbname = str(params.get("dbname") or "")
    socket = host.startswith("/")
    netloc = "" if socket else host + (f":{port}" if port else "")
    if user:
        netloc = f"{user}@{netloc}"
    query = f"?host={host}" + (f"&port={port}" if port else "") if socket else ""
    return f"postgresql://{netloc}/{dbname}{query}"


class PostgresStore:
    """A :class:`~geomint.store.base.Store` in a PostgreSQL database.

    Args:
        url: A libpq connection URL (``postgresql://user:password@host:port/dbname``) or
            key-value string. The database must exist; the store creates its tables.
        max_connections: The most connections the store holds at once.

    Raises:
        UsageError: ``url`` is not a connection string.
        StoreUnavailableError: The server cannot be reached or refused the login.
        CorruptStoreError: The database holds tables geomint cannot read as a store.
        SchemaTooNewError: A newer geomint wrote the database.
    """

    def __init__(self, url: str, *, max_connections: int = 10) -> None:
        #: The connection URL, password included (for handing to another process).
        self.url = url
        self._where = describe_url(url)
        try:
            conninfo.conninfo_to_dict(url)
        except psycopg.ProgrammingError as exc:
            raise _bad_url(exc) from None
        self._max_connections = max_connections
        self._slots = threading.BoundedSemaphore(max_connections)
        self._lock = threading.Lock()
        self._idle: list[psycopg.Connection[Any]] = []
        self._closed = False
        first = self._connect()
        try:
            self._migrate(first)
        except BaseException:
            first.close()
            raise
        self._idle.append(first)

    # -- connections -----------------------------------------------------------------------

    def __repr__(self) -> str:
        return f"PostgresStore({self._where!r})"

    def _unavailable(self, reason: object) -> StoreUnavailableError:
        return StoreUnavailableError(
            f"cannot use the PostgreSQL store at {self._where} ({_one_line(reason)}). "
            "Check that the server is running and reachable there, and that the user, "
            "password and database in the URL are right (the database must exist)"
        )

    def _connect(self) -> psycopg.Connection[Any]:
        try:
            return psycopg.connect(self.url, autocommit=True, connect_timeout=_CONNECT_TIMEOUT_S)
        except psycopg.OperationalError as exc:
            raise self._unavailable(exc) from None
        except psycopg.ProgrammingError as exc:
            raise _bad_url(exc) from None

    @contextmanager
    def _connection(self) -> Iterator[psycopg.Connection[Any]]:
        """Lend a connection in autocommit mode (each statement is a transaction).

        Connections are kept for reuse, at most ``max_connections`` at once; one that
        broke, or was left inside a transaction, is closed instead of kept.
        """
        if self._closed:
            raise UsageError("this PostgresStore is closed; open a new one")
        if not self._slots.acquire(timeout=_POOL_TIMEOUT_S):
            raise self._unavailable(
                f"all {self._max_connections} connections stayed busy for {_POOL_TIMEOUT_S:.0f} s"
            )
        conn = None
        try:
            with self._lock:
                conn = self._idle.pop() if self._idle else None
            if conn is None:
                conn = self._connect()
            yield conn
        except psycopg.OperationalError as exc:
            if _lost(exc, conn):
                raise self._unavailable(exc) from None
            raise
        finally:
            if conn is not None:
                if self._closed or conn.broken or conn.info.transaction_status != _IDLE:
                    conn.close()
                else:
                    with self._lock:
                        self._idle.append(conn)
            self._slots.release()

    @contextmanager
    def _transaction(self) -> Iterator[psycopg.Connection[Any]]:
        """Lend a connection inside one transaction, committed when the block ends."""
        with self._connection() as conn, conn.transaction():
            yield conn

    # -- schema ----------------------------------------------------------------------------

    def _migrate(self, conn: psycopg.Connection[Any]) -> None:
        # Opening an up-to-date database costs one round trip: no lock, no DDL.
        try:
            if [r[0] for r in conn.execute(_APPLIED)] == [name for name, _ in POSTGRES]:
                return
        except psycopg.OperationalError as exc:
            raise self._unavailable(exc) from None
        except psycopg.DatabaseError:
            pass  # a new database, or a broken one: the locked path below sorts them out
        try:
            with conn.transaction():
                conn.execute("SELECT pg_advisory_xact_lock(%s)", (_MIGRATION_LOCK,))
                conn.execute(
                    "CREATE TABLE IF NOT EXISTS migrations ("
                    "position BIGINT GENERATED ALWAYS AS IDENTITY, "
                    "name TEXT PRIMARY KEY, "
                    "applied_at TIMESTAMPTZ NOT NULL DEFAULT now())"
                )
                applied = [r[0] for r in conn.execute(_APPLIED)]
                newer = unknown_migrations(applied, POSTGRES)
                if newer:
                    raise SchemaTooNewError(
                        f"the database at {self._where} was written by a newer geomint (it "
                        f"has migration {newer[-1]!r}, unknown to this version); it was not "
                        "changed. Upgrade geomint to open it"
                    )
                for name, sql in POSTGRES:
                    if name not in applied:
                        conn.execute(sql)
                        conn.execute("INSERT INTO migrations (name) VALUES (%s)", (name,))
        except psycopg.errors.InsufficientPrivilege as exc:
            raise StoreUnavailableError(
                f"the user in {self._where} may not set up geomint's tables there "
                f"({_one_line(exc)}); nothing was changed. Make that user the database's "
                "owner, or grant it CREATE on the schema"
            ) from None
        except psycopg.OperationalError as exc:
            raise self._unavailable(exc) from None
        except psycopg.DatabaseError as exc:
            raise CorruptStoreError(
                f"the database at {self._where} cannot be opened as a geomint store "
                f"({_one_line(exc)}); it was not changed. Give geomint a database of its "
                "own, or restore this one from a backup"
            ) from None

    def migrations(self) -> list[str]:
        """Return the names of the migrations applied to this database, in order."""
        with self._connection() as conn:
            return [r[0] for r in conn.execute(_APPLIED)]

    # -- events ----------------------------------------------------------------------------

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
        # Build the events before writing, as the other stores do, so an invalid chat id,
        # run id or body is refused with nothing stored; the numbers and time come after.
        drafts = tuple(
            Event(seq=i, at=datetime.now(UTC), chat_id=chat_id, run_id=run_id, body=body)
            for i, body in enumerate(bodies, start=1)
        )
        if expected_last_seq is None:
            statement = _APPEND_ANY
        elif expected_last_seq == 0:
            statement = _APPEND_NEW
        else:
            statement = _APPEND_FROM
        params = {
            "chat_id": chat_id,
            "run_id": run_id,
            "n": len(bodies),
            "expected": expected_last_seq,
            "types": [e.body.type for e in drafts],
            "bodies": [e.body.model_dump_json() for e in drafts],
        }
        with self._connection() as conn:
            row = conn.execute(statement, params).fetchone()
            if row is None:
                actual = conn.execute(_LAST_SEQ, (chat_id,)).fetchone()
                assert expected_last_seq is not None
                raise ConcurrentAppendError(chat_id, expected_last_seq, actual[0] if actual else 0)
        base, at = int(row[0]), row[1].astimezone(UTC)
        return tuple(e.model_copy(update={"seq": base + e.seq, "at": at}) for e in drafts)

    def import_events(
        self, chat_id: str, events: Sequence[Event], blobs: Sequence[tuple[bytes, str]] = ()
    ) -> None:
        """Store already-stamped events and their blobs into a chat that has none."""
        refs = [(blob_ref(data, media_type), bytes(data)) for data, media_type in blobs]
        with self._transaction() as conn:
            # Creating or touching the row locks it, so two imports cannot both succeed.
            row = conn.execute(
                "INSERT INTO chats AS c (chat_id, last_seq) VALUES (%s, 0) "
                "ON CONFLICT (chat_id) DO UPDATE SET last_seq = c.last_seq "
                "RETURNING last_seq",
                (chat_id,),
            ).fetchone()
            assert row is not None
            check_import(chat_id, int(row[0]), events)
            conn.execute(
                "INSERT INTO events (chat_id, seq, run_id, at, type, body) "
                "SELECT %s, e.seq, e.run_id, e.at, e.type, e.body FROM unnest("
                "%b::bigint[], %b::text[], %b::timestamptz[], %b::text[], %b::text[]"
                ") AS e(seq, run_id, at, type, body)",
                (
                    chat_id,
                    [e.seq for e in events],
                    [e.run_id for e in events],
                    [e.at for e in events],
                    [e.body.type for e in events],
                    [e.body.model_dump_json() for e in events],
                ),
            )
            conn.execute(
                "UPDATE chats SET last_seq = %s WHERE chat_id = %s", (len(events), chat_id)
            )
            for ref, data in refs:
                conn.execute(
                    "INSERT INTO blobs (chat_id, sha256, media_type, size, data) "
                    "VALUES (%s, %s, %s, %s, %s) ON CONFLICT DO NOTHING",
                    (chat_id, ref.sha256, ref.media_type, ref.size, data),
                )

    def read(self, chat_id: str, *, after: int = 0, run_id: str | None = None) -> Iterator[Event]:
        """Yield a chat's events after ``after``, in order; see the Store protocol."""
        query = "SELECT seq, run_id, at, body FROM events WHERE chat_id = %s AND seq > %s"
        params: tuple[object, ...] = (chat_id, after)
        if run_id is not None:
            query += " AND run_id = %s"
            params += (run_id,)
        with self._connection() as conn:
            rows = conn.execute(query + " ORDER BY seq", params).fetchall()
        for seq, run, at, body in rows:
            yield Event.model_construct(
                seq=seq,
                at=at.astimezone(UTC),
                chat_id=chat_id,
                run_id=run,
                body=BODY_ADAPTER.validate_json(body),
            )

    def last_seq(self, chat_id: str) -> int:
        """Return the chat's last sequence number (0 when it has none)."""
        with self._connection() as conn:
            row = conn.execute(_LAST_SEQ, (chat_id,)).fetchone()
        return int(row[0]) if row else 0

    def chat_ids(self) -> list[str]:
        """Return every chat id, deleted ones included."""
        with self._connection() as conn:
            rows = conn.execute('SELECT chat_id FROM chats ORDER BY chat_id COLLATE "C"')
            return [r[0] for r in rows]

    # -- blobs and snapshots ---------------------------------------------------------------

    def put_blob(self, chat_id: str, data: bytes, media_type: str) -> BlobRef:
        """Store ``data`` once per content hash in this chat; return its reference."""
        ref = blob_ref(data, media_type)
        with self._connection() as conn:
            conn.execute(
                "INSERT INTO blobs (chat_id, sha256, media_type, size, data) "
                "VALUES (%s, %s, %s, %s, %s) ON CONFLICT DO NOTHING",
                (chat_id, ref.sha256, media_type, ref.size, bytes(data)),
            )
        return ref

    def get_blob(self, chat_id: str, ref: BlobRef) -> bytes:
        """Return a blob's bytes.

        Raises:
            KeyError: No such blob in this chat.
        """
        with self._connection() as conn:
            row = conn.execute(
                "SELECT data FROM blobs WHERE chat_id = %s AND sha256 = %s",
                (chat_id, ref.sha256),
                binary=True,
            ).fetchone()
        if row is None:
            raise KeyError(f"no blob {ref.sha256[:12]}... in chat {chat_id!r}")
        return bytes(row[0])

    def save_snapshot(self, chat_id: str, seq: int, tag: str, data: bytes) -> None:
        """Keep the newest snapshot of a chat that has reached ``seq``.

        One statement checks the chat and writes. It locks the chat's row (``FOR SHARE``),
        so a purge, which deletes that row first, either waits for the snapshot and then
        deletes it, or has deleted the row and the snapshot is not written.
        """
        with self._connection() as conn:
            conn.execute(
                "INSERT INTO snapshots AS s (chat_id, seq, tag, data) "
                "SELECT %(chat_id)s, %(seq)s, %(tag)s, %(data)s WHERE EXISTS ("
                "SELECT 1 FROM chats WHERE chat_id = %(chat_id)s AND last_seq >= %(seq)s "
                "FOR SHARE) "
                "ON CONFLICT (chat_id) DO UPDATE SET seq = excluded.seq, tag = excluded.tag, "
                "data = excluded.data WHERE excluded.seq >= s.seq",
                {"chat_id": chat_id, "seq": seq, "tag": tag, "data": bytes(data)},
            )

    def load_snapshot(self, chat_id: str, tag: str) -> tuple[int, bytes] | None:
        """Return the chat's snapshot if one was written with ``tag``."""
        with self._connection() as conn:
            row = conn.execute(
                "SELECT seq, data FROM snapshots WHERE chat_id = %s AND tag = %s",
                (chat_id, tag),
                binary=True,
            ).fetchone()
        return (int(row[0]), bytes(row[1])) if row else None

    def purge(self, chat_id: str) -> None:
        """Remove every trace of a chat."""
        with self._transaction() as conn:
            # The chats row first: it waits for (and then blocks) appends in flight.
            for table in ("chats", "events", "blobs", "snapshots"):
                conn.execute(f"DELETE FROM {table} WHERE chat_id = %s", (chat_id,))  # noqa: S608

    # -- the source registry (geomint.store.catalogue) --------------------------------------

    def put_sources(self, rows: Sequence[CatalogueRow]) -> None:
        """Insert or replace source rows by id, in one transaction."""
        with self._transaction() as conn:
            conn.execute("UPDATE source_writes SET n = n + 1")
            with conn.cursor() as cur:
                cur.executemany(
                    "DELETE FROM source_countries WHERE source_id = %s", [(r.id,) for r in rows]
                )
                cur.executemany(
                    "INSERT INTO sources VALUES (%s, %s, %s, %s, %s, %s) "
                    "ON CONFLICT (source_id) DO UPDATE SET body = EXCLUDED.body, "
                    "modality = EXCLUDED.modality, start_year = EXCLUDED.start_year, "
                    "end_year = EXCLUDED.end_year, world = EXCLUDED.world",
                    [(r.id, r.body, r.modality, r.start, r.end, r.world) for r in rows],
                )
                cur.executemany(
                    "INSERT INTO source_countries VALUES (%s, %s) ON CONFLICT DO NOTHING",
                    [(r.id, c) for r in rows for c in r.countries],
                )

    def delete_sources(self, ids: Sequence[str]) -> None:
        """Remove source rows by id."""
        with self._transaction() as conn:
            conn.execute("UPDATE source_writes SET n = n + 1")
            conn.execute("DELETE FROM source_countries WHERE source_id = ANY(%s)", (list(ids),))
            conn.execute("DELETE FROM sources WHERE source_id = ANY(%s)", (list(ids),))

    def source_bodies(self, ids: Sequence[str] | None = None) -> dict[str, str]:
        """The JSON bodies of ``ids`` (every row when None), by id."""
        with self._connection() as conn:
            if ids is None:
                rows = conn.execute("SELECT source_id, body FROM sources").fetchall()
            else:
                rows = conn.execute(
                    "SELECT source_id, body FROM sources WHERE source_id = ANY(%s)", (list(ids),)
                ).fetchall()
        return {r[0]: r[1] for r in rows}

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
        where, args = filter_sql(country, start, end, modality, mark="%s")
        with self._connection() as conn:
            rows = conn.execute(f"SELECT s.source_id FROM sources s{where}", args)  # noqa: S608
            return [r[0] for r in rows]

    def sources_revision(self) -> Revision:
        """Changes whenever a source row is written or deleted."""
        with self._connection() as conn:
            row = conn.execute(
                "SELECT (SELECT n FROM source_writes), (SELECT COUNT(*) FROM sources)"
            ).fetchone()
        assert row is not None  # the migration inserted the counter's row
        return (int(row[0]), int(row[1]))

    def close(self) -> None:
        """Close the connections; the store cannot be used afterwards."""
        self._closed = True
        with self._lock:
            idle, self._idle = self._idle, []
        for conn in idle:
            conn.close()

    def __enter__(self) -> PostgresStore:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()


_IDLE = psycopg.pq.TransactionStatus.IDLE


def _one_line(error: object) -> str:
    return " ".join(str(error).split()).rstrip(".?")


def _bad_url(exc: Exception) -> UsageError:
    # The URL itself is not quoted: it may hold a password.
    return UsageError(
        f"the store URL is not a PostgreSQL connection URL ({_one_line(exc)}); write it as "
        "postgresql://user:password@host:port/dbname"
    )


def _lost(exc: psycopg.OperationalError, conn: psycopg.Connection[Any] | None) -> bool:
    """Tell a lost or refused connection (class 08, a shutdown) from a failed statement."""
    state = exc.sqlstate or ""
    return conn is None or conn.broken or not state or state.startswith(("08", "57P"))


_APPLIED = "SELECT name FROM migrations ORDER BY position"
_LAST_SEQ = "SELECT last_seq FROM chats WHERE chat_id = %s"

# How an append moves a chat's counter by n, returning the row only when the chat was where
# the caller expected; the row stays locked until the statement's transaction ends.
_BUMP_ANY = """
    INSERT INTO chats AS c (chat_id, last_seq) VALUES (%(chat_id)s, %(n)s)
    ON CONFLICT (chat_id) DO UPDATE SET last_seq = c.last_seq + excluded.last_seq
    RETURNING c.last_seq - %(n)s AS base, clock_timestamp() AS at
"""
_BUMP_NEW = """
    INSERT INTO chats AS c (chat_id, last_seq) VALUES (%(chat_id)s, %(n)s)
    ON CONFLICT (chat_id) DO UPDATE SET last_seq = c.last_seq + excluded.last_seq
        WHERE c.last_seq = 0
    RETURNING c.last_seq - %(n)s AS base, clock_timestamp() AS at
"""
_BUMP_FROM = """
    UPDATE chats AS c SET last_seq = c.last_seq + %(n)s
    WHERE c.chat_id = %(chat_id)s AND c.last_seq = %(expected)s
    RETURNING c.last_seq - %(n)s AS base, clock_timestamp() AS at
"""
# The time is the server's, read after the row is locked, so times rise with seq per chat.
_APPEND = """
WITH bumped AS ({bump}),
stored AS (
    INSERT INTO events (chat_id, seq, run_id, at, type, body)
    SELECT %(chat_id)s, bumped.base + b.ord, %(run_id)s, bumped.at, b.type, b.body
    FROM bumped, unnest(%(types)b::text[], %(bodies)b::text[])
        WITH ORDINALITY AS b(type, body, ord)
)
SELECT base, at FROM bumped
"""
_APPEND_ANY = _APPEND.format(bump=_BUMP_ANY)
_APPEND_NEW = _APPEND.format(bump=_BUMP_NEW)
_APPEND_FROM = _APPEND.format(bump=_BUMP_FROM)
