"""Run :mod:`geomint.intake._convert` in a child process with caps, and read its answer."""

from __future__ import annotations

import atexit
import json
import select
import signal
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from geomint.intake._table_json import feature_collection, records
from geomint.intake.errors import IntakeError

__all__ = ["Converted", "convert_confined"]

# Headroom for the child's working set over the bytes it reads: GeoJSON text of a binary
# layer is several times its size, and the frame and the text exist together at the peak.
_MEMORY_FLOOR_MB = 1024
# One thread per numeric library: the child must be single-threaded to enter a new user
# namespace (and so leave the network), and a reader needs no thread pool.
_CHILD_ENV = {
    "PATH": "/usr/bin:/bin",
    "LANG": "C.UTF-8",
    "OMP_NUM_THREADS": "1",
    "OPENBLAS_NUM_THREADS": "1",
    "MKL_NUM_THREADS": "1",
    "NUMEXPR_NUM_THREADS": "1",
    # Arrow's allocator starts a background thread at import unless told not to.
    "JE_ARROW_MALLOC_CONF": "background_thread:false",
    # Arrow's allocator (mimalloc) reserves 1 GB of address space on first use, which the
    # child's address-space cap counts as used: the cap would leave nothing for the rest.
    "MIMALLOC_ARENA_RESERVE": "64MiB",
}
# How long past its own deadline the server may take to report a child it killed.
_SERVER_GRACE_S = 5.0
_MEMORY_PER_INPUT_BYTE = 40


@dataclass(frozen=True)
class Converted:
    """What the child produced: the layer as JSON texts, and what it learned on the way."""

    columns: list[str]
    float_columns: list[str]
    rows: bytes
    floats: bytes
    geometries: bytes
    crs: str | None
    layers: tuple[str, ...]
    notes: tuple[str, ...]
    network: str = ""

    def feature_collection(
        self, rows: Any, floats: Any, geometries: Any, source: str
    ) -> dict[str, Any]:
        """Zip the parsed parts into a FeatureCollection dict.

        The child is confined because its input is hostile, so its output is checked
        for shape here rather than trusted.
        """
        try:
            properties = records(self.columns, rows, self.float_columns, floats)
            return feature_collection(properties, geometries)
        except (TypeError, ValueError):
            raise IntakeError(
                ["the reader returned parts that do not fit together; the file may be corrupt"],
                source=source,
            ) from None


def convert_confined(
    path: Path,
    fmt: str,
    *,
    source: str,
    layer: str | None,
    max_bytes: int,
    timeout_s: float,
) -> Converted:
    """Convert a binary geodata file in a capped child process.

    Raises:
        IntakeError: The child refused the file, crashed, ran out of memory or time.
    """
    memory_mb = max(_MEMORY_FLOOR_MB, path.stat().st_size * _MEMORY_PER_INPUT_BYTE >> 20)
    with tempfile.TemporaryDirectory(prefix="geomint-intake-") as scratch:
        request = {
            "path": str(path.resolve()),
            "format": fmt,
            "layer": layer,
            "scratch": scratch,
            "max_bytes": max_bytes,
            "memory_mb": memory_mb,
            "cpu_s": timeout_s,
        }
        done = _SERVER.run(request, timeout_s)
    if done is _BUSY:
        raise IntakeError(
            [
                f"the reader was busy with other files for all of timeout_s={timeout_s:g} s; "
                "try again, or pass a larger timeout_s"
            ],
            source=source,
        )
    if done is None:
        raise IntakeError(
            [
                f"reading the file took longer than {timeout_s:g} s and was stopped; "
                "pass a larger timeout_s for a large file"
            ],
            source=source,
        )
    return _answer(done, source=source, memory_mb=memory_mb)


class _ForkServer:
    """One warm reader process that forks a confined child per file.

    Starting Python and importing GDAL and Arrow costs ~0.8 s; forking the warm server
    costs milliseconds. The server never opens a user's file; each child confines
    itself before it does. Requests are served one at a time; a server that dies or
    stops answering is replaced on the next request.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._process: subprocess.Popen[bytes] | None = None
        atexit.register(self.close)

    def run(self, request: dict[str, Any], timeout_s: float) -> _Done | None:
        """Convert one request; None when the child ran out of time, _BUSY when the
        server stayed busy with other files for the whole of ``timeout_s``."""
        scratch = Path(request["scratch"])
        started = time.monotonic()
        if not self._lock.acquire(timeout=timeout_s):
            return _BUSY
        try:
            # The wait for the server counts against the file's time budget.
            remaining = max(0.01, timeout_s - (time.monotonic() - started))
            process = self._send({**request, "cpu_s": remaining})
            if process is None:
                return _Done(1, b"", b"OSError: the reader process cannot be started")
            assert process.stdout is not None
            ready, _, _ = select.select([process.stdout], [], [], remaining + _SERVER_GRACE_S)
            line = process.stdout.readline() if ready else b""
            if not line:
                self._stop()  # hung or dead: the next request starts a new server
                return None if not ready else _Done(-9)
            status = json.loads(line)["status"]
        finally:
            self._lock.release()
        if status == "timeout":
            return None
        answer, errors = scratch / "answer", scratch / "errors"
        return _Done(
            int(status),
            answer.read_bytes() if answer.exists() else b"",
            errors.read_bytes() if errors.exists() else b"",
        )

    def _started(self) -> subprocess.Popen[bytes]:
        if self._process is None or self._process.poll() is not None:
            self._process = subprocess.Popen(
                [sys.executable, "-I", "-m", "geomint.intake._convert", "--serve"],
                env=_CHILD_ENV,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.DEVNULL,
            )
        return self._process

    def _send(self, request: dict[str, Any]) -> subprocess.Popen[bytes] | None:
        # A server that died since the last request shows up as a broken pipe: once.
        for _ in range(2):
            process = self._started()
            assert process.stdin is not None
            try:
                process.stdin.write(json.dumps(request).encode() + b"\n")
                process.stdin.flush()
            except OSError:
                self._stop()
                continue
            return process
        return None

    def _stop(self) -> None:
        if self._process is not None:
            self._process.kill()
            self._process.wait()
            for stream in (self._process.stdin, self._process.stdout):
                if stream is not None:
                    stream.close()
            self._process = None

    def close(self) -> None:
        """Stop the server (at exit)."""
        with self._lock:
            self._stop()


@dataclass(frozen=True)
class _Done:
    """How a child ended: its exit status (negative: the signal) and its two outputs."""

    returncode: int
    stdout: bytes = b""
    stderr: bytes = b""


_SERVER = _ForkServer()
_BUSY = _Done(-1000)


def _answer(done: _Done, *, source: str, memory_mb: int) -> Converted:
    head, _, body = done.stdout.partition(b"\n")
    rows, _, body = body.partition(b"\n")
    floats, _, geometries = body.partition(b"\n")
    if done.returncode != 0 or not head:
        raise IntakeError([_crash_text(done, memory_mb)], source=source)
    meta = json.loads(head)
    if "error" in meta:
        if meta["error"] == "memory":
            raise IntakeError(
                [f"reading the file needed more than {memory_mb:,} MB and was stopped"],
                source=source,
            )
        raise IntakeError([meta["error"]], source=source)
    return Converted(
        columns=list(meta["columns"]),
        float_columns=list(meta["float_columns"]),
        rows=rows,
        floats=floats,
        geometries=geometries.removesuffix(b"\n"),
        crs=meta["crs"],
        layers=tuple(meta["layers"]),
        notes=tuple(meta["notes"]),
        network=str(meta.get("network", "")),
    )


def _crash_text(done: _Done, memory_mb: int) -> str:
    code = done.returncode
    if code < 0:
        name = signal.Signals(-code).name if -code in signal.valid_signals() else str(-code)
        if -code in {signal.SIGXCPU, signal.SIGKILL}:
            return "reading the file used up its CPU time and was stopped; the file may be corrupt"
        return (
            f"the reader stopped on {name} while parsing the file; the file is corrupt or "
            "crafted to crash readers: re-export it from the program that made it"
        )
    last = done.stderr.decode("utf-8", "replace").strip().splitlines()[-1:] or ["no message"]
    if "MemoryError" in last[0]:
        return f"reading the file needed more than {memory_mb:,} MB and was stopped"
    return f"the reader failed ({last[0][:200]}); the file may be corrupt"
