"""What only the SQLite store does: its file, its migrations, damage and newer schemas."""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path

import pytest

from geomint.state import ChatCreated
from geomint.store import (
    CorruptStoreError,
    SchemaTooNewError,
    SQLiteStore,
    default_path,
    open_store,
)
from geomint.store._migrations import SQLITE


def test_the_default_file_is_under_geomint_home(tmp_path: Path) -> None:
    assert default_path() == Path(os.environ["GEOMINT_HOME"]) / "geomint.db"
    store = open_store()
    assert isinstance(store, SQLiteStore) and store.path == default_path()
    store.append("c1", "r", [ChatCreated()])
    store.close()
    assert default_path().exists()


def test_wal_and_every_migration_on_a_new_file(tmp_path: Path) -> None:
    with SQLiteStore(tmp_path / "new.db") as store:
        assert store.migrations() == [name for name, _ in SQLITE]
    with sqlite3.connect(tmp_path / "new.db") as db:
        assert db.execute("PRAGMA journal_mode").fetchone() == ("wal",)


def test_an_old_database_is_migrated_and_keeps_its_rows(tmp_path: Path) -> None:
    path = tmp_path / "old.db"
    with sqlite3.connect(path) as db:
        db.execute("CREATE TABLE migrations (name TEXT PRIMARY KEY, applied_at TEXT)")
        db.execute("CREATE TABLE notes (text TEXT)")
        db.execute("INSERT INTO notes VALUES ('kept')")
    with SQLiteStore(path) as store:
        assert store.migrations() == [name for name, _ in SQLITE]
        store.append("c1", "r", [ChatCreated()])
    with sqlite3.connect(path) as db:
        assert db.execute("SELECT text FROM notes").fetchall() == [("kept",)]


def test_a_newer_schema_is_refused_untouched(tmp_path: Path) -> None:
    path = tmp_path / "newer.db"
    with SQLiteStore(path) as store:
        store.append("c1", "r", [ChatCreated()])
    with sqlite3.connect(path) as db:
        db.execute("INSERT INTO migrations VALUES ('0999_from_the_future', 'x')")
    before = path.read_bytes()
    with pytest.raises(SchemaTooNewError, match="'0999_from_the_future', unknown to this version"):
        SQLiteStore(path)
    assert path.read_bytes() == before


@pytest.mark.parametrize(
    "damage",
    [b"", b"not a database at all" * 50, b"SQLite format 3\x00" + b"\xff" * 4000],
)
def test_a_damaged_file_is_refused_untouched(tmp_path: Path, damage: bytes) -> None:
    path = tmp_path / "damaged.db"
    path.write_bytes(damage)
    if not damage:
        # An empty file is a new database to SQLite: it is migrated, not refused.
        with SQLiteStore(path) as store:
            assert store.migrations()
        return
    with pytest.raises(CorruptStoreError, match="cannot be opened as a geomint store"):
        SQLiteStore(path)
    assert path.read_bytes() == damage


def test_an_unknown_store_url_is_a_usage_error() -> None:
    with pytest.raises(ValueError, match="unknown store URL 'redis://x'"):
        open_store("redis://x")


def test_memory_url() -> None:
    store = open_store("memory:")
    store.append("c", "r", [ChatCreated()])
    assert store.last_seq("c") == 1
