"""Tests that need the machine to themselves when the suite runs on several xdist workers.

``./scripts/test`` runs pytest on two workers (``-n 2``). A test marked ``serial`` bounds
a duration that a test running beside it would stretch (an event loop's longest stall, a
payload killed within the wall clock plus a slack), so under xdist it runs while every
other worker waits between tests: each test holds a shared lock for its whole protocol
(its fixtures' setup and teardown too), a serial one an exclusive lock. A serial test
waiting for its turn also holds a gate that the others pass before taking their shared
lock, so a busy worker cannot keep it waiting forever. Without xdist nothing is locked.
"""

from __future__ import annotations

import contextlib
import fcntl
import shutil
import tempfile
from collections.abc import Generator, Iterator
from pathlib import Path
from typing import IO

import pytest

__all__ = ["SERIAL"]

#: The marker's name.
SERIAL = "serial"

_TURNS = pytest.StashKey["_Turns"]()


class _Turns:
    """A readers-writer lock over two files that every worker of one run opens."""

    def __init__(self, folder: Path) -> None:
        folder.mkdir(parents=True, exist_ok=True)
        self.folder = folder
        self._gate: IO[bytes] = (folder / "gate.lock").open("a+b")
        self._room: IO[bytes] = (folder / "room.lock").open("a+b")

    @contextlib.contextmanager
    def shared(self) -> Iterator[None]:
        fcntl.flock(self._gate, fcntl.LOCK_EX)  # wait behind a serial test's turn
        fcntl.flock(self._gate, fcntl.LOCK_UN)
        fcntl.flock(self._room, fcntl.LOCK_SH)
        try:
            yield
        finally:
            fcntl.flock(self._room, fcntl.LOCK_UN)

    @contextlib.contextmanager
    def alone(self) -> Iterator[None]:
        fcntl.flock(self._gate, fcntl.LOCK_EX)
        try:
            fcntl.flock(self._room, fcntl.LOCK_EX)
            try:
                yield
            finally:
                fcntl.flock(self._room, fcntl.LOCK_UN)
        finally:
            fcntl.flock(self._gate, fcntl.LOCK_UN)

    def close(self) -> None:
        self._gate.close()
        self._room.close()


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers",
        f"{SERIAL}: bounds a duration that a test running beside it would stretch; under "
        "pytest-xdist it runs while the other workers wait (tests/serial.py)",
    )
    workerinput = getattr(config, "workerinput", None)
    if workerinput is not None:
        # Every worker opens the files before the first test is handed out.
        folder = Path(tempfile.gettempdir()) / f"geomint-serial-{workerinput['testrunuid']}"
        config.stash[_TURNS] = _Turns(folder)


def pytest_unconfigure(config: pytest.Config) -> None:
    turns = config.stash.get(_TURNS, None)
    if turns is not None:
        turns.close()
        # The other workers hold the files open, so removing them changes nothing for them.
        shutil.rmtree(turns.folder, ignore_errors=True)


@pytest.hookimpl(wrapper=True, tryfirst=True)
def pytest_runtest_protocol(item: pytest.Item) -> Generator[None, object, object]:
    turns = item.config.stash.get(_TURNS, None)
    if turns is None:
        return (yield)
    turn = turns.alone() if item.get_closest_marker(SERIAL) else turns.shared()
    with turn:
        return (yield)
