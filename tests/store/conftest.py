"""Every store test runs against every store: memory, SQLite, and PostgreSQL."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from geomint.store import Chats, MemoryStore, SQLiteStore, Store

STORES = ["memory", "sqlite", pytest.param("postgres", marks=pytest.mark.postgres)]


def make_store(kind: str, tmp_path: Path) -> Store:
    if kind == "memory":
        return MemoryStore()
    if kind == "sqlite":
        return SQLiteStore(tmp_path / "geomint.db")
    from tests.store.postgres_server import fresh_database

    return fresh_database()


@pytest.fixture(params=STORES)
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Store]:
    made = make_store(request.param, tmp_path)
    yield made
    made.close()


@pytest.fixture
def chats(store: Store) -> Chats:
    return Chats(store, snapshot_after=5)
