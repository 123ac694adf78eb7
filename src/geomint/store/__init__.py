"""Persistence of chats: events, the blobs entry versions point to, and snapshots.

:class:`Chats` is the API: create, open (a folded :class:`~geomint.state.Workspace`),
append with checks, list, delete, export and import. Underneath, a :class:`Store`:
:class:`SQLiteStore` by default (one file, WAL, nothing to start), :class:`MemoryStore`
for tests, and PostgreSQL from a ``postgresql://`` URL (:func:`open_store`).
"""

from __future__ import annotations

from pathlib import Path

from geomint.store.base import (
    ConcurrentAppendError,
    CorruptStoreError,
    NoSuchChatError,
    SchemaTooNewError,
    Store,
    StoreError,
    StoreUnavailableError,
)
from geomint.store.chats import (
    EXPORT_FORMAT,
    Appended,
    Chats,
    ChatSummary,
    RefusedEventError,
    export_text,
)
from geomint.store.memory import MemoryStore
from geomint.store.sqlite import SQLiteStore, default_path

__all__ = [
    "EXPORT_FORMAT",
    "Appended",
    "ChatSummary",
    "Chats",
    "ConcurrentAppendError",
    "CorruptStoreError",
    "MemoryStore",
    "NoSuchChatError",
    "RefusedEventError",
    "SQLiteStore",
    "SchemaTooNewError",
    "Store",
    "StoreError",
    "StoreUnavailableError",
    "default_path",
    "export_text",
    "open_store",
]


def open_store(url: str | Path | None = None) -> Store:
    """Open a store from a URL or path.

    Args:
        url: ``None`` for the default SQLite file, a path or ``sqlite:///path`` for a
            SQLite file, ``memory:`` for a store in memory, or a ``postgresql://`` URL.

    Raises:
        UsageError: The URL names no kind of store geomint has.
    """
    from geomint.errors import UsageError  # noqa: PLC0415

    if url is None:
        return SQLiteStore()
    text = str(url)
    if text == "memory:":
        return MemoryStore()
    if text.startswith(("postgresql://", "postgres://")):
        from geomint.store.postgres import PostgresStore  # noqa: PLC0415 - psycopg is optional

        return PostgresStore(text)
    if text.startswith("sqlite:///"):
        return SQLiteStore(text.removeprefix("sqlite:///"))
    if "://" in text:
        raise UsageError(
            f"unknown store URL {text!r}; use a file path, sqlite:///path, memory: or "
            "postgresql://user@host/db"
        )
    return SQLiteStore(text)
