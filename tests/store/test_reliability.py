"""Crash safety and concurrency across processes, on the stores that persist.

Children come from a fork server that has already imported the writers
(:mod:`geomint.store._torture`), so each of the many processes these tests start costs
milliseconds rather than an interpreter start.
"""

from __future__ import annotations

import multiprocessing
import random
import time
from collections.abc import Iterator
from multiprocessing.context import ForkServerContext
from pathlib import Path

import pytest

from geomint.state import ChatCreated
from geomint.store import Store, open_store
from geomint.store._torture import append_forever, append_in_threads, open_at_once

KILLS = 50


@pytest.fixture(scope="module")
def context() -> ForkServerContext:
    ctx = multiprocessing.get_context("forkserver")
    # psycopg takes ~100 ms to import: preload it too, or a child is killed before it acks.
    ctx.set_forkserver_preload(["geomint.store._torture", "geomint.store.postgres"])
    return ctx


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def url(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    if request.param == "sqlite":
        yield str(tmp_path / "geomint.db")
        return
    from tests.store.postgres_server import fresh_database

    store = fresh_database()
    yield store.url
    store.close()


def test_acknowledged_appends_survive_sigkill(
    context: ForkServerContext, url: str, tmp_path: Path
) -> None:
    setup = open_store(url)
    setup.append("c1", "setup", [ChatCreated()])
    setup.close()
    acknowledged = 0
    rng = random.Random(7)
    for kill in range(KILLS):
        acks = tmp_path / f"acks-{kill}"
        child = context.Process(target=append_forever, args=(url, str(acks)))
        child.start()
        time.sleep(rng.uniform(0.02, 0.1))
        child.kill()
        child.join()
        text = acks.read_bytes().decode() if acks.exists() else ""
        complete = [int(line) for line in text.split("\n")[:-1]]  # a torn last line is no ack
        if complete:
            acknowledged = max(acknowledged, complete[-1])
    store = open_store(url)
    try:
        log = list(store.read("c1"))
        assert [e.seq for e in log] == list(range(1, len(log) + 1)), "sequence has a gap"
        assert store.last_seq("c1") == len(log)
        assert len(log) >= acknowledged > 1
        # Appending still works after fifty crashes.
        assert store.append("c1", "after", [ChatCreated()])[0].seq == len(log) + 1
    finally:
        store.close()


def test_two_processes_of_eight_threads_append_in_total_order(
    context: ForkServerContext, url: str
) -> None:
    threads, per_thread = 8, 20
    processes = [
        context.Process(target=append_in_threads, args=(url, p, threads, per_thread))
        for p in range(2)
    ]
    for process in processes:
        process.start()
    for process in processes:
        process.join(timeout=60)
        assert process.exitcode == 0
    store: Store = open_store(url)
    try:
        log = list(store.read("c1"))
    finally:
        store.close()
    assert [e.seq for e in log] == list(range(1, 2 * threads * per_thread + 1))
    reasons = [e.body.reason for e in log]  # type: ignore[union-attr]
    assert len(set(reasons)) == len(reasons), "an event was duplicated"
    for p in range(2):
        for t in range(threads):
            mine = [r for r in reasons if r.startswith(f"{p}/{t}/")]
            assert mine == [f"{p}/{t}/{i}" for i in range(per_thread)]


def test_processes_opening_a_fresh_file_at_once_all_open_it(
    context: ForkServerContext, tmp_path: Path
) -> None:
    # Switching a new file to WAL does not wait on SQLite's busy handler: without a retry,
    # about one opener in sixteen was told the file "cannot be opened as a geomint store".
    openers, rounds = 4, 25
    for round_ in range(rounds):
        url = str(tmp_path / f"fresh-{round_}.db")
        start = context.Barrier(openers)
        processes = [
            context.Process(target=open_at_once, args=(url, start)) for _ in range(openers)
        ]
        for process in processes:
            process.start()
        for process in processes:
            process.join(timeout=60)
        assert [p.exitcode for p in processes] == [0] * openers, f"round {round_}"
    store = open_store(str(tmp_path / "fresh-0.db"))
    try:
        assert store.migrations()
    finally:
        store.close()
