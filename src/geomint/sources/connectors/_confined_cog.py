"""The application's side of a remote raster read: fetch byte ranges, let a confined child
decode them, check the window it sends back.

A Cloud-Optimised GeoTIFF is read a window at a time: its first block (directories and
tile offsets) and then only the tiles under the area asked. Every byte comes through
:mod:`geomint.http` here, as an HTTP Range request under the caller's policy; none is
parsed here. A child forked from one template per application
(:mod:`~geomint.sources.connectors._cog_child`, confined by :mod:`geomint.confine`, with
no network) opens the file through a proxy whose reads are questions to this process,
each answered by :class:`RangeFetcher` within its caps: :data:`MAX_READ_BYTES` of the
file and :data:`MAX_RANGE_REQUESTS` requests a read, one deadline, and every answer the
size and place asked (a server that ignores ``Range`` and sends the whole file is cut
off at the size asked). The child's answer is binary: a fixed header, the CRS and the
cells, checked here against what was asked before a :class:`~geomint.geo.raster.Raster`
is built.

A file's first block is kept for a few minutes (:data:`HEAD_TTL_S`), so reading
several windows of one file costs one request for its tiles each; a later answer with
another ETag drops it. Where no confined child can start, nothing is read: the fetch
is ``unavailable``.
"""

from __future__ import annotations

import dataclasses
import json
import math
import re
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Final

import numpy as np
import pyproj

from geomint import audit, confine
from geomint.geo.errors import GeoInputError
from geomint.geo.raster import Raster
from geomint.http import Fetched, FetchError, RequestPolicy, request
from geomint.sources.connectors._cog_child import (
    DTYPES,
    HEADER,
    MAX_CELLS,
    PROBLEM,
    WINDOW,
    pack_request,
    read_question,
)
from geomint.sources.connectors._common import fetch_error
from geomint.sources.connectors.base import FetchErrorKind, SourceFetchError

__all__ = [
    "HEAD_BYTES",
    "HEAD_TTL_S",
    "MAX_CHILDREN",
    "MAX_RANGE_REQUESTS",
    "MAX_READ_BYTES",
    "RangeFetcher",
    "Reader",
    "Window",
    "decode",
    "read_in_child",
    "read_window",
]

#: Reads decoded at once; more wait their turn.
MAX_CHILDREN: Final = 2
#: The most bytes of a file one read fetches, its first block included.
MAX_READ_BYTES: Final = 64 << 20
#: The most HTTP requests one read sends.
MAX_RANGE_REQUESTS: Final = 64
#: The first block fetched: a COG's directories and tile offsets are at its start.
HEAD_BYTES: Final = 64 << 10
#: How long a file's first block is kept for the next read of it.
HEAD_TTL_S: Final = 300.0
_HEADS_KEPT: Final = 64
# Ranges closer than this are fetched in one request (GDAL already merges touching ones).
_GAP: Final = 16 << 10
_HANDLER: Final = "geomint.sources.connectors._cog_child"
# A window of MAX_CELLS float64 is 128 MB, read once by GDAL and once encoded; GDAL's
# block cache is held to 64 MB. A crafted tile cannot decode past MAX_BLOCK_BYTES.
_MEMORY_MB: Final = 1536
_SCRATCH_MB: Final = 8
_MIN_DECODE_S: Final = 2.0
_MAX_PROBLEM: Final = 4096
_MAX_CRS: Final = 8192
_CONTENT_RANGE: Final = re.compile(r"bytes (\d{1,18})-(\d{1,18})/(\d{1,18})")

Reader = Callable[[bytes, Callable[[bytes], bytes], float], bytes]
"""Decode a window within a wall clock: ``reader(payload, answer, timeout_s)`` returns the
child's raw answer, calling ``answer(question)`` for each question the child asks. The
default is :func:`read_in_child`; a test passes one that runs the child's ``answer`` in
process."""

_POOL = confine.Pool(
    handler=_HANDLER,
    children=MAX_CHILDREN,
    memory_mb=_MEMORY_MB,
    cpu_s=60,
    scratch_mb=_SCRATCH_MB,
    name="the raster reader",
)


@dataclass(frozen=True, kw_only=True)
class Window:
    """What a read returned, checked.

    Attributes:
        raster: The cells with their grid.
        band: The band read (from 1).
        level: The overview read (0 for the first), or None for the full grid.
        factor: How many full-grid cells a side one cell spans (1 at the full grid).
        area: The area asked, in the full grid's cells: column and row offset, width,
            height (before any overview).
        grid: The full grid's width and height.
        requests: HTTP requests sent for it.
        fetched: Bytes of the file fetched for it.
        file_size: The file's size.
    """

    raster: Raster
    band: int
    level: int | None
    factor: int
    area: tuple[int, int, int, int]
    grid: tuple[int, int]
    requests: int
    fetched: int
    file_size: int


@dataclass
class _Head:
    size: int
    head: bytes
    etag: str | None
    kept_at: float


class _Heads:
    """Files' first blocks, kept a few minutes for the next read of the same file."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._kept: OrderedDict[str, _Head] = OrderedDict()

    def get(self, url: str) -> _Head | None:
        with self._lock:
            found = self._kept.get(url)
            if found is None or time.monotonic() - found.kept_at > HEAD_TTL_S:
                self._kept.pop(url, None)
                return None
            self._kept.move_to_end(url)
            return found

    def put(self, url: str, head: _Head) -> None:
        with self._lock:
            self._kept[url] = head
            self._kept.move_to_end(url)
            while len(self._kept) > _HEADS_KEPT:
                self._kept.popitem(last=False)

    def drop(self, url: str) -> None:
        with self._lock:
            self._kept.pop(url, None)


_HEADS = _Heads()


class RangeFetcher:
    """Fetch byte ranges of one remote file through :mod:`geomint.http`, within caps.

    Args:
        url: The file's address.
        policy: The caller's policy (its guard, transport, secrets and retries).
        deadline: A ``time.monotonic()`` instant by which every request is done.
        what: The file, as messages name it.
        max_bytes: The most bytes fetched in all (:data:`MAX_READ_BYTES` by default).
        max_requests: The most requests sent in all (:data:`MAX_RANGE_REQUESTS`).
    """

    def __init__(
        self,
        url: str,
        policy: RequestPolicy,
        *,
        deadline: float,
        what: str,
        max_bytes: int | None = None,
        max_requests: int | None = None,
    ) -> None:
        self.url = url
        self.what = what
        self.deadline = deadline
        self.max_bytes = MAX_READ_BYTES if max_bytes is None else max_bytes
        self.max_requests = MAX_RANGE_REQUESTS if max_requests is None else max_requests
        self.requests = 0
        self.fetched = 0
        self.size = 0
        self.etag: str | None = None
        # One read's ranges are one piece of work: the per-host rate limit is for API
        # calls, and a response cache would keep megabytes of tiles.
        self._policy = dataclasses.replace(policy, rate_per_s=None, cache=None)

    def head(self) -> bytes:
        """The file's first block (kept from a recent read, or fetched), setting ``size``."""
        kept = _HEADS.get(self.url)
        if kept is not None:
            self.size, self.etag = kept.size, kept.etag
            return kept.head
        fetched = self._get(0, HEAD_BYTES, first=True)
        self.etag = fetched.headers.get("etag")
        _HEADS.put(
            self.url,
            _Head(size=self.size, head=fetched.body, etag=self.etag, kept_at=time.monotonic()),
        )
        return fetched.body

    def answer(self, question: bytes) -> bytes:
        """Answer a child's question: the ranges it asks for, concatenated.

        Raises:
            SourceFetchError: The question is malformed or past the file, the caps are
                reached, or a request failed.
        """
        try:
            ranges = read_question(question)
        except ValueError:
            raise self._bad_child() from None
        for offset, length in ranges:
            if length <= 0 or offset < 0 or offset + length > self.size:
                raise self._bad_child()
        parts: dict[tuple[int, int], bytes] = {}
        for start, end in _merged(ranges):
            body = self._get(start, end - start).body
            for offset, length in ranges:
                if start <= offset and offset + length <= end:
                    parts[(offset, length)] = body[offset - start : offset - start + length]
        return b"".join(parts[(offset, length)] for offset, length in ranges)

    def _get(self, offset: int, length: int, *, first: bool = False) -> Fetched:
        if not first:
            length = min(length, self.size - offset)
        if self.requests >= self.max_requests:
            raise self._capped(f"more than {self.max_requests} requests")
        if self.fetched + length > self.max_bytes:
            raise self._capped(f"more than {self.max_bytes:,} bytes of it")
        left = self.deadline - time.monotonic()
        if left <= 0:
            raise SourceFetchError(
                "timeout",
                f"reading {self.what} took longer than the fetch's time; ask for a smaller "
                "area, or try again",
                url=self.url,
            )
        self.requests += 1
        self.fetched += length
        policy = dataclasses.replace(self._policy, max_bytes=length, timeout_s=left)
        try:
            fetched = request(
                "GET",
                self.url,
                headers={"Range": f"bytes={offset}-{offset + length - 1}"},
                policy=policy,
                cache="skip",
            )
        except FetchError as error:
            if error.code == "too_large":
                raise self._ignored_range(error.url) from None
            raise fetch_error(error, self.what) from None
        self._check(fetched, offset, length, first=first)
        return fetched

    def _check(self, fetched: Fetched, offset: int, length: int, *, first: bool) -> None:
        """Hold an answer to the range asked: the place, the size and the same file."""
        body = fetched.body
        if fetched.status == 200:
            # A server that ignores Range answers 200 with the whole file: acceptable only
            # for a file no longer than the first block asked.
            if not (first and offset == 0 and len(body) <= length):
                raise self._ignored_range(fetched.url)
            self.size = len(body)
            return
        found = _CONTENT_RANGE.fullmatch(fetched.headers.get("content-range", "").strip())
        if fetched.status != 206 or found is None:
            raise self._ignored_range(fetched.url)
        start, end, total = (int(v) for v in found.groups())
        if first:
            self.size = total
        expected_end = min(offset + length, self.size) - 1
        if start != offset or end != expected_end or total != self.size:
            raise SourceFetchError(
                "malformed",
                f"{self.what} answered bytes {start}-{end} of {total:,} when bytes "
                f"{offset}-{expected_end} of {self.size:,} were asked; the file is not read",
                url=fetched.url,
            )
        if len(body) != end - start + 1:
            raise SourceFetchError(
                "malformed",
                f"{self.what} sent {len(body):,} bytes for a range of {end - start + 1:,}",
                url=fetched.url,
            )
        etag = fetched.headers.get("etag")
        if not first and self.etag and etag and etag != self.etag:
            _HEADS.drop(self.url)
            raise SourceFetchError(
                "changed",
                f"{self.what} changed while it was read (its ETag is not the one it had); "
                "try again",
                url=fetched.url,
            )

    def _capped(self, what: str) -> SourceFetchError:
        return SourceFetchError(
            "unavailable",
            f"reading this window of {self.what} would fetch {what}, past what one read "
            f"takes ({self.max_bytes:,} bytes in {self.max_requests} requests); ask for a "
            "smaller area, or another asset (the file may not be cloud-optimised)",
            url=self.url,
        )

    def _ignored_range(self, url: str) -> SourceFetchError:
        return SourceFetchError(
            "unavailable",
            f"the server of {self.what} does not answer byte ranges (it sent more than the "
            "range asked), so a window cannot be read from it without downloading the "
            "whole file; geomint does not",
            url=url,
        )

    def _bad_child(self) -> SourceFetchError:
        audit.record("child_killed", by="sources", limit="protocol")
        return SourceFetchError(
            "malformed",
            f"the raster reader asked for a byte range {self.what} does not have; the file "
            "is refused",
            url=self.url,
        )


def _merged(ranges: Sequence[tuple[int, int]]) -> list[tuple[int, int]]:
    """``(start, end)`` spans covering the ranges, near ones joined."""
    spans: list[list[int]] = []
    for offset, length in sorted(ranges):
        if spans and offset <= spans[-1][1] + _GAP:
            spans[-1][1] = max(spans[-1][1], offset + length)
        else:
            spans.append([offset, offset + length])
    return [(start, end) for start, end in spans]


def read_in_child(payload: bytes, answer: Callable[[bytes], bytes], timeout_s: float) -> bytes:
    """Decode a window in a confined child within ``timeout_s``; return its raw answer.

    Raises:
        SourceFetchError: ``timeout`` when the read (or the wait for a turn) overran;
            ``unavailable`` when the child died (memory, CPU, a crash), asked more than
            a read may, or no confined child can start here (nothing is decoded outside
            one); whatever ``answer`` raised for a range.
    """
    started = time.monotonic()
    if not _POOL.turn(timeout_s):
        raise SourceFetchError(
            "timeout",
            f"the raster reader was busy with other reads for all of {timeout_s:.1f} s; try "
            "again, or ask for a smaller area",
        )
    try:
        left = timeout_s - (time.monotonic() - started)
        try:
            child = _POOL.child(left, {"cpu_s": int(timeout_s) + 1})
        except (confine.WorkerStartError, OSError) as exc:
            raise _unavailable(str(exc)) from None
        try:
            return child.converse(
                payload,
                timeout_s=max(0.05, timeout_s - (time.monotonic() - started)),
                max_reply=MAX_CELLS * 8 + HEADER.size + _MAX_CRS + 64,
                answer=answer,
                max_questions=MAX_RANGE_REQUESTS * 4,
            )
        except confine.CallTimeoutError:
            audit.record("child_killed", by="sources", limit="time")
            raise SourceFetchError(
                "timeout",
                f"reading the window took longer than {timeout_s:.1f} s and was stopped; "
                "ask for a smaller area",
            ) from None
        except confine.ConfinementRefusedError as exc:
            raise _unavailable(f"the reader could not confine itself: {exc}") from None
        except (confine.ChildDiedError, confine.ChildLostError):
            audit.record("child_killed", by="sources", limit="memory, CPU or a crash")
            raise SourceFetchError(
                "unavailable",
                f"the raster reader stopped while decoding the file (it crashed, or went "
                f"past its {_MEMORY_MB:,} MB of memory or its CPU time); the file is "
                "damaged or crafted to crash readers. Try another item or asset",
            ) from None
        except OverflowError:
            audit.record("child_killed", by="sources", limit="reply size or questions")
            raise SourceFetchError(
                "malformed",
                "the raster reader asked or answered more than a read may; the file is refused",
            ) from None
    finally:
        _POOL.done()


def read_window(
    url: str,
    *,
    bbox: tuple[float, float, float, float],
    band: int,
    policy: RequestPolicy,
    what: str,
    reader: Reader = read_in_child,
    max_cells: int = MAX_CELLS,
) -> Window:
    """Read the cells of the file at ``url`` over ``bbox`` (degrees), one band.

    Raises:
        SourceFetchError: The file could not be fetched, is refused, does not cover the
            area (``not_covered``), or the area is too large even at its coarsest
            overview (``refused_filter`` on ``bbox``).
    """
    deadline = time.monotonic() + policy.timeout_s
    fetcher = RangeFetcher(url, policy, deadline=deadline, what=what)
    head = fetcher.head()
    asked = {"size": fetcher.size, "bbox": list(bbox), "band": band, "max_cells": max_cells}
    timeout_s = max(_MIN_DECODE_S, deadline - time.monotonic())
    try:
        reply = reader(pack_request(asked, head), fetcher.answer, timeout_s)
        window = decode(reply, bbox=bbox, band=band, max_cells=max_cells, what=what)
    except SourceFetchError as error:
        error.url = error.url or url
        raise
    return dataclasses.replace(
        window, requests=fetcher.requests, fetched=fetcher.fetched, file_size=fetcher.size
    )


_KINDS: Final[dict[str, FetchErrorKind]] = {
    "refused": "malformed",
    "malformed": "malformed",
    "outside": "not_covered",
    "too_large": "refused_filter",
    "memory": "unavailable",
}


def decode(
    reply: bytes,
    *,
    bbox: tuple[float, float, float, float],
    band: int,
    max_cells: int,
    what: str,
) -> Window:
    """Check the child's answer against what was asked and build the window.

    Raises:
        SourceFetchError: The child refused the file (the code says why), or its answer
            is not the shape asked: another band, more cells, a grid that is not north-up,
            cells of another size, or a window away from the area asked.
    """
    if reply[:4] == PROBLEM:
        _refusal(reply, what)
    if reply[:4] != WINDOW or len(reply) < 4 + HEADER.size:
        raise _bad_answer(what)
    fields = HEADER.unpack_from(reply, 4)
    code, got_band, rows, cols, crs_len, has_nodata = fields[:6]
    transform = tuple(float(v) for v in fields[6:12])
    nodata, level, factor = fields[12], fields[13], fields[14]
    area = tuple(int(v) for v in fields[15:19])
    grid = (int(fields[19]), int(fields[20]))
    if (
        code >= len(DTYPES)
        or got_band != band
        or not (rows >= 1 and cols >= 1 and rows * cols <= max_cells)
        or crs_len > _MAX_CRS
        or not -1 <= level < 32
        or not 1 <= factor <= 1 << 20
    ):
        raise _bad_answer(what)
    dtype = np.dtype(DTYPES[code]).newbyteorder("<")
    start = 4 + HEADER.size
    if len(reply) != start + crs_len + rows * cols * dtype.itemsize:
        raise _bad_answer(what)
    a, b, _, d, e, _ = transform
    if not all(math.isfinite(v) for v in transform) or b != 0 or d != 0 or a <= 0 or e == 0:
        raise _bad_answer(what)
    try:
        crs = reply[start : start + crs_len].decode("ascii")
    except UnicodeDecodeError:
        raise _bad_answer(what) from None
    if not crs.isprintable():
        raise _bad_answer(what)
    cells = np.frombuffer(reply, dtype=dtype, count=rows * cols, offset=start + crs_len)
    try:
        raster = Raster(
            cells.reshape(rows, cols).astype(dtype.newbyteorder("="), copy=False),
            transform,  # type: ignore[arg-type]
            crs,
            nodata=float(nodata) if has_nodata else None,
        )
    except GeoInputError:
        raise _bad_answer(what) from None
    if not _overlaps(raster, bbox):
        raise _bad_answer(what)
    return Window(
        raster=raster,
        band=band,
        level=None if level < 0 else int(level),
        factor=int(factor),
        area=(area[0], area[1], area[2], area[3]),
        grid=grid,
        requests=0,
        fetched=0,
        file_size=0,
    )


def _overlaps(raster: Raster, bbox: tuple[float, float, float, float]) -> bool:
    """Whether the window's grid, in degrees, meets the area asked."""
    try:
        to_degrees = pyproj.Transformer.from_crs(raster.crs, "EPSG:4326", always_xy=True)
        west, south, east, north = to_degrees.transform_bounds(*raster.bounds, densify_pts=21)
    except (pyproj.exceptions.ProjError, ValueError):
        return False
    slack = 1e-6
    return not (
        west > bbox[2] + slack
        or east < bbox[0] - slack
        or south > bbox[3] + slack
        or north < bbox[1] - slack
    )


def _refusal(reply: bytes, what: str) -> None:
    if len(reply) > _MAX_PROBLEM:
        raise _bad_answer(what)
    try:
        said: Any = json.loads(reply[4:])
    except ValueError:
        raise _bad_answer(what) from None
    kind = said.get("kind") if isinstance(said, dict) else None
    text = said.get("problem") if isinstance(said, dict) else None
    if kind not in _KINDS or not isinstance(text, str) or not text:
        raise _bad_answer(what)
    shown = " ".join("".join(c if c.isprintable() else " " for c in text[:600]).split())
    code = _KINDS[kind]
    if kind == "outside":
        message = f"{what} does not cover the area asked ({shown}); pick another item"
    elif kind == "too_large":
        message = f"{what}: {shown}"
    elif kind == "memory":
        message = f"{what} needed more memory to read than the reader has; ask a smaller area"
    else:
        message = (
            f"{what} cannot be read: {shown}. The file is damaged or not a GeoTIFF "
            "geomint reads; try another item or asset"
        )
    raise SourceFetchError(code, message, key="bbox" if kind == "too_large" else None)


def _unavailable(reason: str) -> SourceFetchError:
    return SourceFetchError(
        "unavailable",
        f"the confined raster reader cannot start on this machine ({reason[:300]}); "
        "geomint decodes no remote raster outside it",
    )


def _bad_answer(what: str) -> SourceFetchError:
    return SourceFetchError(
        "malformed",
        f"the raster reader's answer for {what} was not the window asked; it is refused",
    )
