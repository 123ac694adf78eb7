"""Named, ordered, append-only schema migrations, one list per database dialect.

Never edit or reorder a migration that has shipped: add a new one at the end. A database
that has applied a migration this list does not know was written by a newer geomint and
is refused untouched.
"""

from __future__ import annotations

__all__ = ["POSTGRES", "SQLITE", "unknown_migrations"]

SQLITE: tuple[tuple[str, str], ...] = (
    (
        "0001_events_blobs_snapshots",
        """
        CREATE TABLE chats (
            chat_id TEXT PRIMARY KEY,
            last_seq INTEGER NOT NULL
        ) WITHOUT ROWID;
        CREATE TABLE events (
            chat_id TEXT NOT NULL,
            seq INTEGER NOT NULL,
            run_id TEXT NOT NULL,
            at TEXT NOT NULL,
            type TEXT NOT NULL,
            body TEXT NOT NULL,
            PRIMARY KEY (chat_id, seq)
        ) WITHOUT ROWID;
        CREATE INDEX events_by_run ON events (chat_id, run_id, seq);
        CREATE TABLE blobs (
            chat_id TEXT NOT NULL,
            sha256 TEXT NOT NULL,
            media_type TEXT NOT NULL,
            size INTEGER NOT NULL,
            data BLOB NOT NULL,
            PRIMARY KEY (chat_id, sha256)
        );
        CREATE TABLE snapshots (
            chat_id TEXT PRIMARY KEY,
            seq INTEGER NOT NULL,
            tag TEXT NOT NULL,
            data BLOB NOT NULL
        );
        """,
    ),
    (
        # The source registry (geomint.sources): one JSON body per source, and the
        # columns find_sources filters by before ranking.
        "0002_sources",
        """
        CREATE TABLE sources (
            source_id TEXT PRIMARY KEY,
            body TEXT NOT NULL,
            modality TEXT NOT NULL,
            start_year INTEGER,
            end_year INTEGER,
            world INTEGER NOT NULL
        ) WITHOUT ROWID;
        CREATE INDEX sources_by_modality ON sources (modality);
        CREATE TABLE source_countries (
            source_id TEXT NOT NULL,
            country TEXT NOT NULL,
            PRIMARY KEY (country, source_id)
        ) WITHOUT ROWID;
        CREATE INDEX source_countries_by_source ON source_countries (source_id);
        CREATE TABLE source_writes (n BIGINT NOT NULL);
        INSERT INTO source_writes VALUES (0);
        """,
    ),
)

POSTGRES: tuple[tuple[str, str], ...] = (
    (
        "0001_events_blobs_snapshots",
        """
        CREATE TABLE chats (
            chat_id TEXT PRIMARY KEY,
            last_seq BIGINT NOT NULL
        );
        CREATE TABLE events (
            chat_id TEXT NOT NULL,
            seq BIGINT NOT NULL,
            run_id TEXT NOT NULL,
            at TIMESTAMPTZ NOT NULL,
            type TEXT NOT NULL,
            body JSONB NOT NULL,
            PRIMARY KEY (chat_id, seq)
        );
        CREATE INDEX events_by_run ON events (chat_id, run_id, seq);
        CREATE TABLE blobs (
            chat_id TEXT NOT NULL,
            sha256 TEXT NOT NULL,
            media_type TEXT NOT NULL,
            size BIGINT NOT NULL,
            data BYTEA NOT NULL,
            PRIMARY KEY (chat_id, sha256)
        );
        CREATE TABLE snapshots (
            chat_id TEXT PRIMARY KEY,
            seq BIGINT NOT NULL,
            tag TEXT NOT NULL,
            data BYTEA NOT NULL
        );
        """,
    ),
    (
        # JSONB cannot hold every JSON text SQLite keeps (the NUL character) and rewrites
        # numbers (1e300 came back as digits); events are stored as the text written.
        "0002_event_bodies_as_text",
        "ALTER TABLE events ALTER COLUMN body TYPE TEXT USING body::text",
    ),
    (
        # The source registry (geomint.sources): one JSON body per source, and the
        # columns find_sources filters by before ranking.
        "0003_sources",
        """
        CREATE TABLE sources (
            source_id TEXT PRIMARY KEY,
            body TEXT NOT NULL,
            modality TEXT NOT NULL,
            start_year INTEGER,
            end_year INTEGER,
            world BOOLEAN NOT NULL
        );
        CREATE INDEX sources_by_modality ON sources (modality);
        CREATE TABLE source_countries (
            source_id TEXT NOT NULL,
            country TEXT NOT NULL,
            PRIMARY KEY (country, source_id)
        );
        CREATE INDEX source_countries_by_source ON source_countries (source_id);
        CREATE TABLE source_writes (n BIGINT NOT NULL);
        INSERT INTO source_writes VALUES (0);
        """,
    ),
)


def unknown_migrations(applied: list[str], known: tuple[tuple[str, str], ...]) -> list[str]:
    """Return the applied migrations this geomint does not know, in order."""
    names = {name for name, _ in known}
    return [name for name in applied if name not in names]
