"""Measure the stores: append throughput, opening a long chat, a large entry.

Run: ``.venv/bin/python benchmarks/bench_store.py [--postgres URL]``. Without ``--postgres``
the PostgreSQL rows use ``$GEOMINT_TEST_POSTGRES_URL`` or a throwaway server the test
helper starts (``tests/store/postgres_server.py``), here with fsync and synchronous_commit
on and its data on disk; if neither works they are skipped with the reason. Prints a
Markdown table for docs/performance.md.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path

from geomint.state import ChatCreated, EntryWritten, FetchMissed, MessageAdded
from geomint.store import Chats, SQLiteStore, Store

rows: list[tuple[str, str, str]] = []


def _row(what: str, value: str, note: str = "") -> None:
    rows.append((what, value, note))
    print(f"{what:<60} {value:>18}  {note}", flush=True)


def _small(i: int) -> FetchMissed:
    return FetchMissed(tool="search_places", provider="offline", reason=f"nothing near {i}")


def appends(make: Callable[[], Store], label: str) -> None:
    store = make()
    store.append("warm", "r", [ChatCreated()])
    n = 3000
    started = time.perf_counter()
    for i in range(n):
        store.append("single", "r", [_small(i)])
    rate = n / (time.perf_counter() - started)
    _row(f"{label}: 1 event per append, one writer", f"{rate:,.0f} events/s")
    batches = 500
    started = time.perf_counter()
    for i in range(batches):
        store.append("batched", "r", [_small(i)] * 10)
    rate = batches * 10 / (time.perf_counter() - started)
    _row(f"{label}: 10 events per append, one writer", f"{rate:,.0f} events/s")
    per_thread = 500

    def writer(t: int) -> None:
        for i in range(per_thread):
            store.append("threads", f"t{t}", [_small(i)])

    threads = [threading.Thread(target=writer, args=(t,)) for t in range(8)]
    started = time.perf_counter()
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    rate = 8 * per_thread / (time.perf_counter() - started)
    _row(f"{label}: 1 event per append, 8 threads, one chat", f"{rate:,.0f} events/s")
    store.close()


def long_chat(make: Callable[[], Store], label: str) -> None:
    store = make()
    chats = Chats(store)
    chats.create("long")
    for i in range(0, 10_000 - 1, 100):
        bodies = [
            MessageAdded(
                message_id=f"m{i + j}",
                role="user" if j % 2 else "assistant",
                parts=({"kind": "text", "text": f"message {i + j} " * 5},),
            )
            if j % 3
            else _small(i + j)
            for j in range(100)
        ]
        store.append("long", "r", bodies[: min(100, 10_000 - 1 - i)])
    assert store.last_seq("long") == 10_000
    fresh = Chats(store, snapshot_after=10**9)  # never writes a snapshot
    started = time.perf_counter()
    workspace = fresh.open("long")
    first = time.perf_counter() - started
    chats.open("long")  # writes the snapshot
    started = time.perf_counter()
    again = chats.open("long")
    second = time.perf_counter() - started
    assert again == workspace
    _row(f"{label}: open a 10,000-event chat, no snapshot", f"{first * 1000:,.0f} ms", "<= 1 s")
    _row(f"{label}: open it again (snapshot)", f"{second * 1000:,.1f} ms", "<= 100 ms")
    store.close()


def large_entry(make: Callable[[], Store], label: str) -> None:
    features = [
        {
            "type": "Feature",
            "properties": {"i": i},
            "geometry": {"type": "Point", "coordinates": [i % 360 - 180, i % 170 - 85]},
        }
        for i in range(1_000_000)
    ]
    data = json.dumps({"type": "FeatureCollection", "features": features}).encode()
    del features
    store = make()
    chats = Chats(store)
    chats.create("big")
    started = time.perf_counter()
    ref = store.put_blob("big", data, "application/geo+json")
    stored = time.perf_counter() - started
    entry = EntryWritten(entry_id="byod-1", kind="byod", version=1, label="1M points", blob=ref)
    chats.append("big", "r", [entry])
    for _ in range(20):  # twenty events that mention the same data
        ref_again = store.put_blob("big", data, "application/geo+json")
        assert ref_again == ref
    del data
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    started = time.perf_counter()
    workspace = Chats(store, snapshot_after=10**9).open("big")
    opened = time.perf_counter() - started
    grew = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - rss
    _row(
        f"{label}: store a 1M-feature layer ({ref.size / 1e6:,.0f} MB)",
        f"{stored * 1000:,.0f} ms",
        "kept once per content hash; 20 more puts of it returned the same reference",
    )
    _row(
        f"{label}: open that chat",
        f"{opened * 1000:,.1f} ms",
        f"peak memory +{grew / 1024:,.0f} MB: the layer is not read ({workspace.byod[0].entry_id})",
    )
    started = time.perf_counter()
    size = len(chats.read_blob("big", ref))
    _row(
        f"{label}: read the layer when asked",
        f"{(time.perf_counter() - started) * 1000:,.0f} ms",
        f"{size / 1e6:,.0f} MB",
    )
    store.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--postgres", help="a postgresql:// URL of an empty database")
    args = parser.parse_args()
    print(f"# {platform.platform()}, Python {platform.python_version()}")
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        counter = iter(range(1000))

        def sqlite() -> Store:
            return SQLiteStore(folder / f"bench-{next(counter)}.db")

        appends(sqlite, "SQLite (synchronous=FULL)")
        long_chat(sqlite, "SQLite")
        large_entry(sqlite, "SQLite")
        postgres = _postgres(args.postgres)
        if isinstance(postgres, str):
            _row("PostgreSQL", "skipped", postgres)
        else:
            appends(postgres, "PostgreSQL")
            long_chat(postgres, "PostgreSQL")
            large_entry(postgres, "PostgreSQL")
    print("\n| What | Measured | Note |\n|---|---|---|")
    for what, value, note in rows:
        print(f"| {what} | {value} | {note} |")


def _postgres(url: str | None) -> Callable[[], Store] | str:
    try:
        if url:
            from geomint.store.postgres import PostgresStore

            return lambda: PostgresStore(url)
        sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
        os.environ["GEOMINT_TEST_POSTGRES_DURABLE"] = "1"  # fsync on, data on disk
        from tests.store.postgres_server import fresh_database

        return fresh_database
    except Exception as exc:
        return f"no server: {exc}"


if __name__ == "__main__":
    main()
