"""Writers for crash and concurrency tests of a store, run in child processes.

They live in the package, not in the tests, so a fork server can preload them by a name
that resolves the same way everywhere; each child then starts in milliseconds.
"""

from __future__ import annotations

import os
import random
import threading

from geomint.state.events import FetchMissed
from geomint.store import open_store

__all__ = ["append_forever", "append_in_threads", "open_at_once"]


def append_forever(url: str, acks: str) -> None:
    """Append to chat ``c1`` until killed, writing each acknowledged seq to ``acks``.

    Each acknowledgement is one ``write`` of a line after ``append`` returned, so a line
    in the file is a promise the store made.
    """
    ack_fd = os.open(acks, os.O_WRONLY | os.O_CREAT | os.O_APPEND)
    store = open_store(url)
    rng = random.Random(os.getpid())  # noqa: S311 - sizes for a test, not secrets
    while True:
        size = rng.choice((1, 1, 1, 3))
        body = FetchMissed(tool="t", provider="p", reason="x" * rng.randrange(1, 400))
        events = store.append("c1", "child", [body] * size)
        os.write(ack_fd, f"{events[-1].seq}\n".encode())


def append_in_threads(url: str, process: int, threads: int, per_thread: int) -> None:
    """Append ``per_thread`` events to chat ``c1`` from each of ``threads`` threads.

    Each event's reason is ``"<process>/<thread>/<i>"`` so a reader can check order.
    """
    store = open_store(url)

    def write(thread: int) -> None:
        for i in range(per_thread):
            body = FetchMissed(tool="t", provider="p", reason=f"{process}/{thread}/{i}")
            store.append("c1", f"p{process}t{thread}", [body])

    workers = [threading.Thread(target=write, args=(t,)) for t in range(threads)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join()
    store.close()


def open_at_once(url: str, start: threading.Barrier | None = None) -> None:
    """Open the store at ``url`` as soon as ``start`` lets every opener go, and close it.

    ``start`` is a multiprocessing barrier, so the openers race on a fresh file.
    """
    if start is not None:
        start.wait()
    open_store(url).close()
