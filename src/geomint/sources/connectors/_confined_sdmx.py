"""The application's side of SDMX parsing: hand a body to a confined child, check its rows.

One template process per application imports ``sdmx1`` and pandas once
(:mod:`geomint.sources.connectors._sdmx_child`); each body is parsed by a child forked
from it and confined with every layer :mod:`geomint.confine` applies here, under a
memory budget, a CPU limit, and a wall clock the host enforces with SIGKILL. At most
:data:`MAX_CHILDREN` bodies are parsed at once; waiting for a turn counts against the
fetch's time. The answer is hostile output too: it is read up to a cap, its containers
counted before it is decoded by the C JSON parser, and every row checked for shape.

Where no confined child can start, nothing is parsed: the fetch is ``unavailable``, as
intake refuses a file it cannot judge confined.
"""

from __future__ import annotations

import atexit
import math
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Final, NoReturn, TypeGuard

import orjson

from geomint import audit, confine
from geomint.sources.connectors._sdmx_child import MAX_BODY, MAX_ROWS
from geomint.sources.connectors.base import SourceFetchError

__all__ = ["MAX_BODY", "MAX_CHILDREN", "Parsed", "Reader", "decode", "read_in_child"]

#: Bodies parsed at once; more wait their turn.
MAX_CHILDREN: Final = 2
_HANDLER: Final = "geomint.sources.connectors._sdmx_child"
# sdmx1 on an 8 MB body peaks near 400 MB; twice that leaves room and bounds a bomb.
_MEMORY_MB: Final = 1024
_SCRATCH_MB: Final = 8
_ENVIRONMENT: Final = {
    # pandas imports Arrow when it is installed: as for intake, its allocator must not
    # start a thread before the template forks, nor reserve 1 GB of address space.
    "JE_ARROW_MALLOC_CONF": "background_thread:false",
    "MIMALLOC_ARENA_RESERVE": "64MiB",
}
# A reply of MAX_ROWS rows of a dozen short columns is well under this.
_MAX_REPLY: Final = 16 << 20
_MAX_NAMES: Final = 64
_MAX_TEXT: Final = 200

Reader = Callable[[bytes, float, str], bytes]
"""Parse an SDMX body within a wall clock and return the child's raw answer:
``reader(body, timeout_s, what)``, ``what`` naming the service in messages. The default is
:func:`read_in_child`; a test passes one that calls the handler's ``answer`` in process."""


@dataclass(frozen=True, kw_only=True)
class Parsed:
    """What a data message held, checked.

    Attributes:
        dims: The dimension names, in each row's order.
        attributes: The observation attributes' names, after the value.
        rows: Per observation: the dimension values, the value (a finite number or
            None), then the attributes (text or None).
        deferred: The message has no data and points at a later download.
    """

    dims: tuple[str, ...]
    attributes: tuple[str, ...]
    rows: tuple[tuple[Any, ...], ...]
    deferred: bool = False


class _UnavailableError(Exception):
    """No confined child can start on this machine."""


class _Children:
    """The template and the turns: started on first use, replaced when it dies."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._turns = threading.BoundedSemaphore(MAX_CHILDREN)
        self._worker: confine.WorkerProcess | None = None
        self._level = ""
        atexit.register(self.close)

    def _started(self) -> tuple[confine.WorkerProcess, str]:
        if self._worker is not None and self._worker.alive():
            return self._worker, self._level
        self._close_worker()
        try:
            worker = confine.WorkerProcess(
                handler=_HANDLER,
                memory_mb=_MEMORY_MB,
                cpu_s=60,
                scratch_mb=_SCRATCH_MB,
                environment=_ENVIRONMENT,
            )
        except confine.WorkerStartError as exc:
            raise _UnavailableError(str(exc)) from None
        for level in ("isolated", "restricted"):
            if worker.probe(level).get("ok"):
                self._worker, self._level = worker, level
                return worker, level
        reasons = "; ".join(
            f"{level}: {worker.probe(level).get('reason')}" for level in ("isolated", "restricted")
        )
        worker.close()
        raise _UnavailableError(reasons)

    def child(self, cpu_s: int, timeout_s: float) -> confine.Child:
        """Fork one child, waiting at most ``timeout_s`` for it."""
        if not self._lock.acquire(timeout=max(0.0, timeout_s)):
            raise confine.WorkerStartError("the SDMX reader's template is busy")
        try:
            worker, level = self._started()
            try:
                worker.request_spare(level, {"cpu_s": cpu_s})
                return worker.take_spare(level, timeout_s=max(0.05, timeout_s))
            except (confine.WorkerStartError, OSError):
                self._close_worker()  # the next body starts a new template
                raise
        finally:
            self._lock.release()

    def turn(self, timeout_s: float) -> bool:
        """Wait for a free turn; False when none came within ``timeout_s``."""
        return self._turns.acquire(timeout=max(0.0, timeout_s))

    def done(self) -> None:
        """Give the turn back."""
        self._turns.release()

    def _close_worker(self) -> None:
        if self._worker is not None:
            self._worker.close()
            self._worker = None

    def close(self) -> None:
        """Stop the template (at exit)."""
        with self._lock:
            self._close_worker()


_CHILDREN = _Children()


def read_in_child(body: bytes, timeout_s: float, what: str) -> bytes:
    """Parse ``body`` in a confined child within ``timeout_s`` and return its raw answer.

    Raises:
        SourceFetchError: ``timeout`` when the parse (or the wait for a turn) overran;
            ``unavailable`` when the child died (memory, CPU, a crash), its answer was
            over the cap, or no confined child can start here (nothing is parsed
            outside one).
    """
    if len(body) > MAX_BODY:
        raise _too_large(what, f"{len(body):,} bytes, over the {MAX_BODY:,} geomint parses")
    started = time.monotonic()
    if not _CHILDREN.turn(timeout_s):
        raise SourceFetchError(
            "timeout",
            f"the SDMX reader was busy with other answers for all of {timeout_s:.1f} s; try "
            "again, or ask for fewer countries or years",
        )
    try:
        left = timeout_s - (time.monotonic() - started)
        try:
            child = _CHILDREN.child(int(timeout_s) + 1, left)
        except (_UnavailableError, confine.WorkerStartError, OSError) as exc:
            raise _unavailable(what, str(exc)) from None
        try:
            return child.call(
                body,
                timeout_s=max(0.05, timeout_s - (time.monotonic() - started)),
                max_reply=_MAX_REPLY,
            )
        except confine.CallTimeoutError:
            audit.record("child_killed", by="sources", limit="time")
            raise SourceFetchError(
                "timeout",
                f"reading {what}'s answer took longer than {timeout_s:.1f} s and was stopped; "
                "ask for fewer countries or years",
            ) from None
        except confine.ConfinementRefusedError as exc:
            raise _unavailable(what, f"the reader could not confine itself: {exc}") from None
        except (confine.ChildDiedError, confine.ChildLostError):
            audit.record("child_killed", by="sources", limit="memory, CPU or a crash")
            raise _too_large(
                what, f"reading it went past {_MEMORY_MB:,} MB of memory, its CPU time, or crashed"
            ) from None
        except OverflowError:
            audit.record("child_killed", by="sources", limit="reply size")
            raise _too_large(what, "its rows are more than geomint takes at once") from None
    finally:
        _CHILDREN.done()


def decode(reply: bytes, what: str) -> Parsed:
    """Check the child's answer and return what the message held.

    Raises:
        SourceFetchError: ``malformed`` when the body was not SDMX data (or the answer is
            not the handler's shape); ``unavailable`` when it held too many rows or ran
            out of memory.
    """
    containers = reply.count(b"[") + reply.count(b"{")
    if containers > 2 * MAX_ROWS + 16:
        raise _bad_answer(what)
    try:
        answer = orjson.loads(reply)
    except orjson.JSONDecodeError:
        raise _bad_answer(what) from None
    if not isinstance(answer, dict):
        raise _bad_answer(what)
    if answer.get("ok") is not True:
        _refusal(answer, what)
    dims, attributes, rows = answer.get("dims"), answer.get("attributes"), answer.get("rows")
    if not _names(dims) or not _names(attributes) or not isinstance(rows, list):
        raise _bad_answer(what)
    if len(rows) > MAX_ROWS:
        raise _too_many(what, len(rows))
    width = len(dims) + 1 + len(attributes)
    checked = tuple(_row(row, len(dims), width, what) for row in rows)
    return Parsed(
        dims=tuple(dims),
        attributes=tuple(attributes),
        rows=checked,
        deferred=answer.get("deferred") is True,
    )


def _refusal(answer: dict[str, Any], what: str) -> NoReturn:
    if answer.get("memory") is True:
        raise _too_large(what, f"reading it needed more than {_MEMORY_MB:,} MB")
    too_many = answer.get("too_many")
    if isinstance(too_many, int) and not isinstance(too_many, bool):
        raise _too_many(what, too_many)
    problem = answer.get("problem")
    if not isinstance(problem, str) or not problem:
        raise _bad_answer(what)
    shown = " ".join("".join(c if c.isprintable() else " " for c in problem[:300]).split())
    raise SourceFetchError("malformed", f"{what} sent an answer geomint cannot read: {shown}")


def _names(value: Any) -> TypeGuard[list[str]]:
    return (
        isinstance(value, list)
        and len(value) <= _MAX_NAMES
        and all(isinstance(name, str) and 0 < len(name) <= _MAX_TEXT for name in value)
    )


def _row(row: Any, dims: int, width: int, what: str) -> tuple[Any, ...]:
    if not isinstance(row, list) or len(row) != width:
        raise _bad_answer(what)
    value = row[dims]
    if not all(isinstance(key, str) and len(key) <= _MAX_TEXT for key in row[:dims]) or not all(
        text is None or (isinstance(text, str) and len(text) <= _MAX_TEXT)
        for text in row[dims + 1 :]
    ):
        raise _bad_answer(what)
    if value is not None and (
        isinstance(value, bool)
        or not isinstance(value, int | float)
        or not math.isfinite(float(value))
    ):
        raise SourceFetchError(
            "malformed",
            f"{what} sent an answer geomint cannot read: an observation's value "
            f"{str(value)[:40]!r} is not a finite number",
        )
    return tuple(row)


def _too_large(what: str, why: str) -> SourceFetchError:
    return SourceFetchError(
        "unavailable",
        f"{what} sent more than geomint reads at once ({why}); ask for fewer countries or years",
    )


def _too_many(what: str, count: int) -> SourceFetchError:
    return _too_large(what, f"{count:,} observations, over the {MAX_ROWS:,} one fetch holds")


def _unavailable(what: str, reason: str) -> SourceFetchError:
    return SourceFetchError(
        "unavailable",
        f"the confined SDMX reader cannot start on this machine ({reason[:300]}); geomint "
        f"parses no answer of {what} outside it",
    )


def _bad_answer(what: str) -> SourceFetchError:
    return SourceFetchError(
        "malformed",
        f"the SDMX reader's answer for {what} was malformed; the answer is refused",
    )
