"""What only the SQLite store does: its file, migrations, damage, group commit and locks."""

from __future__ import annotations

import os
import sqlite3
import threading
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from pydantic import ValidationError

from geomint.errors import OperatorError
from geomint.state import ChatCreated
from geomint.store import (
    CorruptStoreError,
    SchemaTooNewError,
    SQLiteStore,
    StoreUnavailableError,
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


# -- appends in one group commit, readers beside a waiting writer --------------------------


def test_a_bad_append_does_not_fail_the_others_in_its_group(tmp_path: Path) -> None:
    store = SQLiteStore(tmp_path / "g.db")
    results: dict[str, object] = {}

    def append(name: str, chat_id: str, run_id: str) -> None:
        try:
            results[name] = store.append(chat_id, run_id, [ChatCreated()])
        except Exception as exc:  # the test compares outcomes
            results[name] = exc

    store._lock.acquire()  # a commit in progress: the next appenders queue behind it
    threads = {
        "good": threading.Thread(target=append, args=("good", "chat-b", "run-ok")),
        "bad": threading.Thread(target=append, args=("bad", "chat-a", "r" * 129)),
    }
    for thread in threads.values():
        thread.start()
    threads["bad"].join(timeout=0.5)
    _wait_for(lambda: len(store._queue) >= 1)
    store._lock.release()
    for thread in threads.values():
        thread.join()
    assert isinstance(results["bad"], ValidationError)
    assert [e.seq for e in results["good"]] == [1]  # type: ignore[attr-defined]
    assert (store.chat_ids(), store.last_seq("chat-b")) == (["chat-b"], 1)
    store.close()


def test_reads_do_not_wait_for_an_append_waiting_on_another_process(tmp_path: Path) -> None:
    store = SQLiteStore(tmp_path / "w.db")
    store.append("c1", "r", [ChatCreated()])
    ref = store.put_blob("c1", b"x", "text/plain")
    store.save_snapshot("c1", 1, "t", b"s")
    other = sqlite3.connect(tmp_path / "w.db", isolation_level=None, check_same_thread=False)
    other.execute("BEGIN IMMEDIATE")  # another process's writer holds the lock
    release = threading.Lock()

    def commit_other() -> None:
        with release:
            if other.in_transaction:
                other.execute("COMMIT")

    appender = threading.Thread(target=store.append, args=("c1", "r", [ChatCreated()]))
    appender.start()
    _wait_for(store._lock.locked)
    backstop = threading.Timer(3.0, commit_other)  # before the fix, reads wait for this
    backstop.start()
    started = time.monotonic()
    seen = (
        [e.seq for e in store.read("c1")],
        store.last_seq("c1"),
        store.chat_ids(),
        store.get_blob("c1", ref),
        store.load_snapshot("c1", "t"),
    )
    waited = time.monotonic() - started
    backstop.cancel()
    commit_other()
    appender.join()
    assert seen == ([1], 1, ["c1"], b"x", (1, b"s"))
    assert waited < 1.0
    assert store.last_seq("c1") == 2
    other.close()
    store.close()


def test_a_write_lock_held_too_long_is_an_operator_error(tmp_path: Path) -> None:
    store = SQLiteStore(tmp_path / "busy.db")
    store._db.execute("PRAGMA busy_timeout = 50")  # not 30 s, for the test
    other = sqlite3.connect(tmp_path / "busy.db", isolation_level=None)
    other.execute("BEGIN IMMEDIATE")
    for write in (
        lambda: store.append("c1", "r", [ChatCreated()]),
        lambda: store.put_blob("c1", b"x", "text/plain"),
        lambda: store.purge("c1"),
    ):
        with pytest.raises(StoreUnavailableError) as caught:
            write()
        assert isinstance(caught.value, OperatorError)
        assert str(caught.value).startswith(
            f"another process has held the write lock of {store.path} for over 30 s "
            "(database is locked); nothing was stored"
        )
    other.execute("COMMIT")
    assert store.append("c1", "r", [ChatCreated()])[0].seq == 1
    other.close()
    store.close()


def _wait_for(condition: Callable[[], bool]) -> None:
    deadline = time.monotonic() + 5
    while not condition():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.01)
