"""The application's side of intake: hand a source to a confined child, read its verdict.

One template process per application imports GDAL, Arrow, geopandas and the pipeline
once (:mod:`geomint.intake._child`); each source is judged by a child forked from it and
confined with every layer :mod:`geomint.confine` can apply here, under a memory budget
sized to the file, a private scratch tmpfs, and a wall clock the host enforces with
SIGKILL. At most :data:`MAX_CHILDREN` sources are judged at once; waiting for a turn
counts against the source's ``timeout_s``. The answer is hostile output too: it is read up
to a cap and decoded by the C JSON parser, whose cost is linear in its size and whose
nesting is bounded by the interpreter's recursion limit, then checked for shape.
"""

from __future__ import annotations

import atexit
import fcntl
import json
import os
import stat
import threading
import time
from pathlib import Path
from typing import Any, Final

import orjson

from geomint import audit, confine
from geomint.intake._decoded import EXPANSION
from geomint.intake._parse import gc_paused
from geomint.intake.errors import IntakeError
from geomint.intake.report import IntakeReport, Repair

__all__ = ["MAX_CHILDREN", "confinement_level", "judge_confined", "read_raster_confined"]

#: Sources judged at once; more wait their turn (the machine's cores are the limit).
MAX_CHILDREN: Final = max(2, min(4, os.cpu_count() or 2))
# Headroom for the child's working set over the bytes it reads: parsed JSON and GeoJSON
# text of a binary layer are many times the file, and the parts and the text coexist.
_MEMORY_FLOOR_MB: Final = 1024
_MEMORY_PER_INPUT_BYTE: Final = 40
# Scratch holds a binary file and what a zip unpacks to (within max_bytes).
_SCRATCH_FLOOR_MB: Final = 16
_ENVIRONMENT: Final = {
    # Arrow's allocator starts a background thread at import unless told not to, and a
    # template must be single-threaded when it forks (Landlock before ABI 8).
    "JE_ARROW_MALLOC_CONF": "background_thread:false",
    # Arrow's allocator (mimalloc) reserves 1 GB of address space on first use, which the
    # child's address-space cap counts as used: the cap would leave nothing for the rest.
    "MIMALLOC_ARENA_RESERVE": "64MiB",
}
_REPORT_SLACK: Final = 1 << 20
_ZIPPED: Final = frozenset({"shapefile", "kmz"})
# An answer may open one list or object per 4 bytes of its text, not more.
_BYTES_PER_CONTAINER: Final = 4
_MIN_CONTAINERS: Final = 10_000
# What the slower parser may read of an integer orjson refused (past 64 bits).
_MAX_INT_DIGITS: Final = 100


class _Reader:
    """The template and the turns: started on first use, replaced when it dies."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._turns = threading.BoundedSemaphore(MAX_CHILDREN)
        self._worker: confine.WorkerProcess | None = None
        self._level = ""
        atexit.register(self.close)

    def level(self) -> str:
        """The confinement the children reach here, starting the template if needed."""
        with self._lock:
            return self._started()[1]

    def _started(self) -> tuple[confine.WorkerProcess, str]:
        if self._worker is not None and self._worker.alive():
            return self._worker, self._level
        self._close_worker()
        try:
            worker = confine.WorkerProcess(
                handler="geomint.intake._child",
                memory_mb=_MEMORY_FLOOR_MB,
                cpu_s=60,
                scratch_mb=_SCRATCH_FLOOR_MB,
                environment=_ENVIRONMENT,
            )
        except confine.WorkerStartError as exc:
            raise _UnavailableError(str(exc)) from None
        for level in ("isolated", "restricted"):
            if worker.probe(level).get("ok"):
                self._worker, self._level = worker, level
                return worker, level
        reasons = "; ".join(f"{lv}: {worker.probe(lv).get('reason')}" for lv in ("isolated",
                            "restricted"))  # fmt: skip
        worker.close()
        raise _UnavailableError(reasons)

    def child(self, limits: dict[str, int], timeout_s: float) -> tuple[confine.Child, str]:
        """Fork one child with its own limits, waiting at most ``timeout_s`` for it."""
        if not self._lock.acquire(timeout=max(0.0, timeout_s)):
            raise confine.WorkerStartError("the reader's template is busy handing over a child")
        try:
            worker, level = self._started()
            try:
                worker.request_spare(level, limits)
                return worker.take_spare(level, timeout_s=max(0.05, timeout_s)), level
            except (confine.WorkerStartError, OSError):
                self._close_worker()  # the next source starts a new template
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


class _UnavailableError(Exception):
    """No confined reader can start on this machine."""


_READER = _Reader()


def confinement_level() -> str:
    """The level intake's children reach on this machine (``isolated`` or ``restricted``).

    Raises:
        IntakeError: No confined reader can start here.
    """
    try:
        return _READER.level()
    except _UnavailableError as exc:
        raise IntakeError([_unavailable(str(exc))], source="intake") from None


def _unavailable(reason: str) -> str:
    return (
        f"the confined reader cannot start on this machine ({reason[:300]}); intake reads "
        "no user data outside it"
    )


def judge_confined(
    source: bytes | Path,
    fmt: str,
    *,
    name: str,
    max_bytes: int,
    timeout_s: float,
    layer: str | None = None,
    format_name: str | None = None,
    source_crs: str | None = "EPSG:4326",
) -> tuple[dict[str, Any], IntakeReport]:
    """Judge one source in a confined child; return its data and report.

    Args:
        source: The bytes, or a regular file the host already sized (opened here and
            handed over as a read-only descriptor; the child never sees its path).
        fmt: The sniffed format.
        name: The source's name in messages.
        max_bytes: The input limit; the answer may be :data:`EXPANSION` times that.
        timeout_s: The wall clock for waiting, parsing, validating and repairing.
        layer: Which layer of a multi-layer file to read.
        format_name: What the report calls the format, when not ``fmt``.
        source_crs: The CRS the source had before it was turned into GeoJSON.

    Raises:
        IntakeError: The child refused the source, crashed, ran out of memory or time,
            or no confined reader can start here.
    """
    size = source.stat().st_size if isinstance(source, Path) else len(source)
    limits = {
        "memory_mb": max(_MEMORY_FLOOR_MB, size * _MEMORY_PER_INPUT_BYTE >> 20),
        # The file itself, and what a zip unpacks to (its declared sizes are held to
        # max_bytes before a member is written); SQLite's side files for a GeoPackage.
        "scratch_mb": _SCRATCH_FLOOR_MB + ((size + (max_bytes if fmt in _ZIPPED else size)) >> 20),
        "cpu_s": int(timeout_s) + 1,
    }
    started = time.monotonic()
    if not _READER.turn(timeout_s):
        raise IntakeError(
            [
                f"the reader was busy with other files for all of timeout_s={timeout_s:g} s; "
                "try again, or pass a larger timeout_s"
            ],
            source=name,
        )
    try:
        reply = _call(source, fmt, name, max_bytes, layer, format_name, source_crs, limits,
                      timeout_s - (time.monotonic() - started))  # fmt: skip
    finally:
        _READER.done()
    return _answer(reply, name, limits["memory_mb"], timeout_s)


def read_raster_confined(
    source: bytes | Path, *, name: str, max_bytes: int, timeout_s: float
) -> tuple[dict[str, Any], memoryview]:
    """Read a GeoTIFF in a confined child; return its grid (header) and its cells.

    Neither is trusted yet: :func:`geomint.intake.load_raster` checks the cells against
    the header before building the raster.

    Raises:
        IntakeError: The child refused the file, crashed, ran out of memory or time, or
            no confined reader can start here.
    """
    from geomint.intake._raster import MAX_DECODED, decode_answer  # noqa: PLC0415

    size = source.stat().st_size if isinstance(source, Path) else len(source)
    limits = {
        # The file, GDAL's block cache and the decoded cells, with the array copied once.
        "memory_mb": _MEMORY_FLOOR_MB + ((size * 2 + MAX_DECODED * 2) >> 20),
        "scratch_mb": _SCRATCH_FLOOR_MB,
        "cpu_s": int(timeout_s) + 1,
    }
    started = time.monotonic()
    if not _READER.turn(timeout_s):
        raise IntakeError(
            [f"the reader was busy with other files for all of timeout_s={timeout_s:g} s"],
            source=name,
        )
    try:
        reply = _call(source, "geotiff", name, max_bytes, None, None, None, limits,
                      timeout_s - (time.monotonic() - started),
                      max_reply=MAX_DECODED + _REPORT_SLACK)  # fmt: skip
    finally:
        _READER.done()
    if isinstance(reply, bytes) and reply.startswith(b"{"):
        _answer(reply, name, limits["memory_mb"], timeout_s)  # a refusal: raises it
    if reply in ("timeout", "died", "overflow") or not isinstance(reply, bytes):
        _answer(reply, name, limits["memory_mb"], timeout_s)
        raise _malformed(name)
    try:
        return decode_answer(reply)
    except ValueError:
        raise _malformed(name) from None


def _call(
    source: bytes | Path,
    fmt: str,
    name: str,
    max_bytes: int,
    layer: str | None,
    format_name: str | None,
    source_crs: str | None,
    limits: dict[str, int],
    remaining: float,
    *,
    max_reply: int | None = None,
) -> bytes | str:
    request = {
        "format": fmt,
        "name": name,
        "max_bytes": max_bytes,
        "layer": layer,
        "format_name": format_name,
        "source_crs": source_crs,
    }
    fd = _descriptor(source)
    started = time.monotonic()
    try:
        try:
            child, _ = _READER.child(limits, remaining)
        except (_UnavailableError, confine.WorkerStartError, OSError) as exc:
            raise IntakeError([_unavailable(str(exc))], source=name) from None
        try:
            return child.call(
                json.dumps(request).encode(),
                timeout_s=max(0.05, remaining - (time.monotonic() - started)),
                max_reply=max_reply or EXPANSION * max_bytes + _REPORT_SLACK,
                fds=[fd],
            )
        except confine.CallTimeoutError:
            return "timeout"
        except confine.ConfinementRefusedError as exc:
            problem = f"the reader could not confine itself: {exc}"
            raise IntakeError([problem], source=name) from None
        except (confine.ChildDiedError, confine.ChildLostError):
            return "died"
        except OverflowError:
            return "overflow"
    finally:
        os.close(fd)


def _descriptor(source: bytes | Path) -> int:
    """A read-only descriptor of the source for the child: the file itself, or a memfd."""
    if isinstance(source, Path):
        # Opened without blocking and checked on the descriptor itself: a FIFO swapped in
        # after the size check would otherwise block this thread in open() for good.
        fd = os.open(source, os.O_RDONLY | os.O_CLOEXEC | os.O_NONBLOCK)
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            os.close(fd)
            raise IntakeError(["not a regular file (a folder, pipe or device); pass a file"],
                              source=str(source))  # fmt: skip
        os.set_blocking(fd, True)
        return fd
    fd = os.memfd_create("geomint-intake-source", os.MFD_CLOEXEC | os.MFD_ALLOW_SEALING)
    try:
        view = memoryview(source)
        while view:
            view = view[os.write(fd, view) :]
        os.lseek(fd, 0, os.SEEK_SET)
        # The child may read it, never change or grow it.
        seals = fcntl.F_SEAL_SHRINK | fcntl.F_SEAL_GROW | fcntl.F_SEAL_WRITE | fcntl.F_SEAL_SEAL
        fcntl.fcntl(fd, fcntl.F_ADD_SEALS, seals)
    except BaseException:
        os.close(fd)
        raise
    return fd


def _answer(reply: bytes | str, name: str, memory_mb: int, timeout_s: float) -> tuple[
    dict[str, Any], IntakeReport
]:  # fmt: skip
    if reply in ("timeout", "died"):
        audit.record(
            "child_killed",
            by="intake",
            limit="time" if reply == "timeout" else "memory, CPU or a crash",
        )
    if reply == "timeout":
        raise IntakeError(
            [
                f"reading the file took longer than {timeout_s:g} s and was stopped; "
                "pass a larger timeout_s for a large file"
            ],
            source=name,
            timed_out=True,
        )
    if reply == "died":
        raise IntakeError(
            [
                "the reader stopped while parsing the file (it crashed, or went past its "
                f"{memory_mb:,} MB of memory or its CPU time); the file is corrupt or crafted "
                "to crash readers: re-export it from the program that made it"
            ],
            source=name,
        )
    if reply == "overflow" or not isinstance(reply, bytes):
        raise IntakeError(
            ["the reader's answer was larger than the layer may be; the file is refused"],
            source=name,
        )
    containers = reply.count(b"[") + reply.count(b"{")
    if containers > max(_MIN_CONTAINERS, len(reply) // _BYTES_PER_CONTAINER):
        # An empty list costs the host some 64 bytes for 3 of text: 90 MB of `[],` grew it
        # by 2.5 GB. Honest GeoJSON opens one list or object per 6 bytes at the densest
        # (`[0,0],`), so this keeps what decoding costs near what honest text costs.
        raise _malformed(name)
    view = memoryview(reply)
    end = reply.find(b"\n")
    answer = _decode(view[: len(reply) if end < 0 else end])
    if not isinstance(answer, dict):
        raise _malformed(name)
    if answer.get("ok") is not True:
        if answer.get("memory"):
            raise IntakeError(
                [f"reading the file needed more than {memory_mb:,} MB and was stopped"],
                source=name,
            )
        problems = answer.get("problems")
        if not (isinstance(problems, list) and problems) or not all(
            isinstance(p, str) for p in problems
        ):
            raise _malformed(name)
        raise IntakeError([p[:2000] for p in problems[:1000]], source=name)
    data, lines = answer.get("data"), answer.get("lines")
    if not (isinstance(data, dict) and data.get("type") == "FeatureCollection"):
        raise _malformed(name)
    if not isinstance(lines, int) or lines < 0:
        raise _malformed(name)
    features: list[Any] = []
    for _ in range(lines):
        if end < 0:
            raise _malformed(name)
        start, end = end + 1, reply.find(b"\n", end + 1)
        batch = _decode(view[start : len(reply) if end < 0 else end])
        if not isinstance(batch, list):
            raise _malformed(name)
        features.extend(batch)  # between lines, the event loop's thread may run
    if end >= 0 or not all(map(_is_feature, features)):
        raise _malformed(name)
    data["features"] = features
    try:
        report = _report(answer.get("report"), len(features))
    except (TypeError, ValueError, KeyError, OverflowError):
        raise _malformed(name) from None
    return data, report


def _decode(reply: memoryview) -> Any:
    """Decode the answer; None when it is not JSON. Both parsers are linear in the size
    and bound the nesting (orjson at 1,024 levels, json at the recursion limit)."""
    with gc_paused():
        try:
            return orjson.loads(reply)
        except orjson.JSONDecodeError:
            pass  # what orjson does not read (an integer past 64 bits): the slower parser
        try:
            return json.loads(bytes(reply), parse_int=_bounded_int)
        except (ValueError, RecursionError):
            return None


def _is_feature(value: Any) -> bool:
    """What every later step assumes of a feature (the child validated far more)."""
    if type(value) is not dict or value.get("type") != "Feature":
        return False
    properties, geometry = value.get("properties"), value.get("geometry")
    return (properties is None or type(properties) is dict) and (
        geometry is None or (type(geometry) is dict and type(geometry.get("type")) is str)
    )


def _bounded_int(text: str) -> int:
    if len(text) > _MAX_INT_DIGITS:  # int() is quadratic in the digits
        raise ValueError("integer too long")
    return int(text)


def _malformed(name: str) -> IntakeError:
    return IntakeError(["the reader's answer was malformed; the file is refused"], source=name)


def _report(raw: Any, features: int) -> IntakeReport:
    """Rebuild the child's report, checking every field's type (it is untrusted)."""
    if not isinstance(raw, dict) or raw["feature_count"] != features:
        raise ValueError("report")
    bbox = raw["bbox"]
    if bbox is not None and not (
        isinstance(bbox, list) and len(bbox) == 4 and all(isinstance(v, int | float) for v in bbox)
    ):
        raise ValueError("bbox")
    types = raw["geometry_types"]
    if not (isinstance(types, dict) and all(isinstance(v, int) for v in types.values())):
        raise ValueError("geometry_types")
    repairs = tuple(
        Repair(
            kind=_text(r["kind"]),
            count=int(r["count"]),
            feature_indices=tuple(int(i) for i in r["feature_indices"]),
        )
        for r in raw["repairs"]
    )
    crs = raw["source_crs"]
    return IntakeReport(
        source=_text(raw["source"]),
        feature_count=features,
        geometry_types={_text(k): int(v) for k, v in types.items()},
        repairs=repairs,
        warnings=tuple(_text(w) for w in raw["warnings"]),
        bbox=(float(bbox[0]), float(bbox[1]), float(bbox[2]), float(bbox[3])) if bbox else None,
        format=_text(raw["format"]),
        source_crs=None if crs is None else _text(crs),
    )


def _text(value: Any) -> str:
    if not isinstance(value, str):
        raise TypeError("text")
    return value[:4000]
