"""The raster reader's handler in a confinement template: read one window of a remote COG.

A Cloud-Optimised GeoTIFF is hostile bytes: GDAL's TIFF reader parses its directories
and decodes its tiles, and a crafted file can declare a grid of a trillion cells, tiles
of gigabytes, or deflate streams that fail half way. So it is read here, in a confined
child (:mod:`geomint.confine`), never in the application; and the child has no network,
so it reads the file through the host: every byte range GDAL asks for is a question on
the child's socket, which the host answers with an HTTP Range request of its own
(:mod:`~geomint.sources.connectors._confined_cog`), capped in bytes and requests.

The template calls :func:`prepare` once (imports rasterio, leaves GDAL with the GTiff
driver alone, and reads a tiny file end to end so every child inherits warm code); each
child calls :func:`serve`, which reads the request from one frame, asks for ranges while
GDAL reads, and ends with one answer made by :func:`answer`:

* a window: :data:`WINDOW` then a fixed header (:data:`HEADER`: cell type, band, rows,
  columns, the affine transform, nodata, the overview level and factor, where the window
  lies in the full grid), the CRS as text, and the cells as little-endian binary, row
  by row; never JSON numbers;
* a refusal: :data:`PROBLEM` then JSON ``{"kind": ..., "problem": ...}``, ``kind`` one of
  ``refused`` (the file's declared shape is not one geomint reads), ``outside`` (the
  area asked is not in the file), ``too_large`` (the area is too many cells even at the
  coarsest overview), ``malformed`` (GDAL could not read it) or ``memory``.

:func:`answer` is a plain function of the request and a way to get byte ranges, so
tests run it in process against a local file or a loopback server; the host trusts
none of what it returns.
"""

from __future__ import annotations

import gc
import io
import json
import socket
import struct
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Final

from geomint.confine import _wire

__all__ = [
    "DTYPES",
    "HEADER",
    "MAX_BANDS",
    "MAX_BLOCK_BYTES",
    "MAX_BLOCK_SIDE",
    "MAX_CELLS",
    "MAX_DECLARED_BYTES",
    "MAX_RANGES",
    "MAX_SIDE",
    "PROBLEM",
    "WINDOW",
    "Ask",
    "answer",
    "environment",
    "pack_request",
    "prepare",
    "problem",
    "read_question",
    "serve",
]

#: The most cells one read returns; past it, the finest overview that fits is read.
MAX_CELLS: Final = 16_000_000
#: The widest or tallest grid a file may declare.
MAX_SIDE: Final = 4_194_304
#: The most bands a file may declare.
MAX_BANDS: Final = 64
#: The most bytes a file may declare its full grid to hold, uncompressed (1 TiB).
MAX_DECLARED_BYTES: Final = 1 << 40
#: The widest or tallest tile (or strip) a file may declare.
MAX_BLOCK_SIDE: Final = 8_192
#: The most bytes one tile may decode to.
MAX_BLOCK_BYTES: Final = 64 << 20
#: The most byte ranges one question asks for.
MAX_RANGES: Final = 256
#: Cell types a window may have, by the code its header gives.
DTYPES: Final = ("uint8", "int8", "uint16", "int16", "uint32", "int32", "float32", "float64",
                 "int64", "uint64")  # fmt: skip

#: What a window answer starts with, and a refusal.
WINDOW: Final = b"GMW1"
PROBLEM: Final = b"GMP1"
#: After :data:`WINDOW`: dtype code, band, rows, columns, the CRS text's length, whether
#: there is a nodata value, six transform terms, nodata, the overview level (-1 for the
#: full grid) and its factor, the window's column and row offset, width and height in
#: the full grid's cells, and the full grid's width and height.
HEADER: Final = struct.Struct("<BIIIHB6dd q q 4q 2q")

_RANGE: Final = struct.Struct("<QQ")
_LENGTH: Final = struct.Struct("<I")
_MAX_REQUEST: Final = 1 << 20  # the request's JSON and the file's first block

Ask = Callable[[Sequence[tuple[int, int]]], list[bytes]]
"""Get byte ranges ``(offset, length)`` of the remote file, in order."""


def pack_request(request: Mapping[str, Any], head: bytes) -> bytes:
    """The frame the host sends: the request as JSON, then the file's first block."""
    text = json.dumps(dict(request)).encode()
    return _LENGTH.pack(len(text)) + text + head


def prepare(settings: dict[str, Any]) -> None:
    """Import rasterio, keep GDAL's GTiff driver alone, and read a tiny COG end to end."""
    from geomint.sources.connectors import _cog_read  # noqa: PLC0415 - rasterio, once here

    _cog_read.restrict_gdal()
    data = _cog_read.sample()
    request = {"size": len(data), "bbox": list(_cog_read.SAMPLE_BBOX), "band": 1}

    def ask(ranges: Sequence[tuple[int, int]]) -> list[bytes]:
        return [data[offset : offset + length] for offset, length in ranges]

    answer(request, data[:4096], ask)


def serve(sock: socket.socket, _state: None, report: dict[str, Any]) -> None:
    """Read the request, read the window through the host, answer with one frame."""
    # A child lives for one read: the cyclic collector would only rescan its objects.
    gc.disable()
    _wire.receive_descriptors(sock, limit=1)
    payload = _wire.read_frame(sock, limit=_MAX_REQUEST)
    (length,) = _LENGTH.unpack_from(payload)
    request = json.loads(payload[_LENGTH.size : _LENGTH.size + length])
    head = payload[_LENGTH.size + length :]

    def ask(ranges: Sequence[tuple[int, int]]) -> list[bytes]:
        question = b"".join(_RANGE.pack(offset, length) for offset, length in ranges)
        total = sum(length for _, length in ranges)
        reply = _wire.ask(sock, question, limit=total)
        if len(reply) != total:
            raise OSError("the host answered a byte range short")
        view = io.BytesIO(reply)
        return [view.read(length) for _, length in ranges]

    _wire.write_answer(sock, answer(request, head, ask))
    sock.shutdown(socket.SHUT_WR)


def read_question(question: bytes) -> list[tuple[int, int]]:
    """The ranges a question asks for (the host's side of :func:`serve`'s ``ask``).

    Raises:
        ValueError: It is not a whole number of ranges, or asks for more than
            :data:`MAX_RANGES` at once.
    """
    if not question or len(question) % _RANGE.size or len(question) > _RANGE.size * MAX_RANGES:
        raise ValueError("a question is 1 to 256 (offset, length) pairs")
    return [(int(o), int(n)) for o, n in _RANGE.iter_unpack(question)]


def answer(request: Mapping[str, Any], head: bytes, ask: Ask) -> bytes:
    """Read the window ``request`` asks for and say what it holds, as one answer frame."""
    from geomint.sources.connectors import _cog_read  # noqa: PLC0415

    try:
        return _cog_read.read_window(request, head, ask)
    except _cog_read.RefusedError as refused:
        return problem(refused.kind, str(refused))
    except MemoryError:
        return problem("memory", "reading the window ran out of the reader's memory")


def problem(kind: str, text: str) -> bytes:
    """A refusal as the host reads it."""
    return PROBLEM + json.dumps({"kind": kind, "problem": text[:600]}).encode()


def environment() -> dict[str, str | int]:
    """GDAL's settings for a read: no directory listings, no side files, one thread."""
    return {
        "GDAL_DISABLE_READDIR_ON_OPEN": "EMPTY_DIR",
        "GDAL_PAM_ENABLED": "NO",
        "GDAL_NUM_THREADS": "1",
        "GDAL_CACHEMAX": 64,
        "CPL_VSIL_CURL_ALLOWED_EXTENSIONS": ".none",
    }
