"""One window of a Cloud-Optimised GeoTIFF, read with rasterio from byte ranges asked for.

Runs in the raster reader's confined child (:mod:`._cog_child`), and in process in
tests; never in the application on a remote file. GDAL opens the file through a
rasterio opener (``rasterio.open(name, opener=...)``) whose reads are served from the
first block the host sent and, past it, from ranges asked of the host; GDAL's own
multi-range reads (the tiles of a window) become one question. Only the GTiff driver is
used, no side file is looked for, and the file's declared shape is checked before any
tile is decoded.
"""

from __future__ import annotations

import bisect
import ctypes
import math
import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, Final

import numpy as np
import rasterio
from affine import Affine
from rasterio.abc import MultiByteRangeResourceContainer
from rasterio.errors import RasterioError
from rasterio.io import MemoryFile
from rasterio.warp import transform_bounds
from rasterio.windows import Window

from geomint.sources.connectors._cog_child import (
    DTYPES,
    HEADER,
    MAX_BANDS,
    MAX_BLOCK_BYTES,
    MAX_BLOCK_SIDE,
    MAX_CELLS,
    MAX_DECLARED_BYTES,
    MAX_RANGES,
    MAX_SIDE,
    WINDOW,
    Ask,
    environment,
)

__all__ = ["SAMPLE_BBOX", "RefusedError", "read_window", "restrict_gdal", "sample"]

#: The name GDAL opens; the opener serves no other (no .aux.xml, .ovr or .msk).
_NAME: Final = "/geomint-remote/asset.tif"
# A read past the cached blocks asks for at least this much: GDAL reads a TIFF's
# directories a few bytes at a time, and each question is a round trip to the host.
_READ_AHEAD: Final = 64 << 10
# Each tile's offset and byte count take at least 2 bytes each in the file (SHORT).
_MIN_BYTES_PER_TILE: Final = 4
_KEPT_DRIVERS: Final = frozenset({"GTiff"})


class RefusedError(Exception):
    """The read was refused; ``kind`` says why (see :mod:`._cog_child`)."""

    def __init__(self, kind: str, text: str) -> None:
        super().__init__(text)
        self.kind = kind


def restrict_gdal() -> int:
    """Deregister every GDAL driver but GTiff in rasterio's GDAL; return how many are left.

    rasterio opens a file with the drivers it is told (``driver="GTiff"``), but a driver
    still registered is code a crafted file might reach; and the network ones (HTTP,
    WMS, the STAC drivers...) have no place in a child that has no network.
    """
    with rasterio.Env():  # registers the drivers, as the first read would
        pass
    found = sorted((Path(rasterio.__file__).resolve().parent.parent / "rasterio.libs").glob(
        "libgdal*"))  # fmt: skip
    if not found:
        return -1  # a rasterio built on a system GDAL: every open still names GTiff
    gdal = ctypes.CDLL(str(found[0]))
    gdal.GDALGetDriverCount.restype = ctypes.c_int
    gdal.GDALGetDriver.restype = ctypes.c_void_p
    gdal.GDALGetDriver.argtypes = [ctypes.c_int]
    gdal.GDALGetDriverShortName.restype = ctypes.c_char_p
    gdal.GDALGetDriverShortName.argtypes = [ctypes.c_void_p]
    gdal.GDALDeregisterDriver.argtypes = [ctypes.c_void_p]
    for index in reversed(range(gdal.GDALGetDriverCount())):
        driver = gdal.GDALGetDriver(index)
        if gdal.GDALGetDriverShortName(driver).decode() not in _KEPT_DRIVERS:
            gdal.GDALDeregisterDriver(driver)
    return int(gdal.GDALGetDriverCount())


#: Where :func:`sample` lies, in degrees (west, south, east, north): in Espoo.
SAMPLE_BBOX: Final = (24.93, 60.175, 24.95, 60.185)


def sample() -> bytes:
    """A tiny tiled GeoTIFF with an overview, to warm the reader before any fork."""
    cells = np.arange(256 * 256, dtype="float32").reshape(256, 256)
    with MemoryFile() as memory:
        with memory.open(
            driver="GTiff", width=256, height=256, count=1, dtype="float32", crs="EPSG:3067",
            transform=Affine(10, 0, 385_000, 0, -10, 6_675_000), tiled=True, blockxsize=128,
            blockysize=128, compress="deflate", nodata=-9999.0,
        ) as dataset:  # fmt: skip
            dataset.write(cells, 1)
            dataset.build_overviews([2])
        return bytes(memory.read())


class _Blocks:
    """The parts of the file read so far that are worth keeping: its header blocks."""

    def __init__(self, size: int, head: bytes, ask: Ask) -> None:
        self.size = size
        self._ask = ask
        self._starts: list[int] = [0]
        self._blocks: list[bytes] = [head]

    def read(self, offset: int, length: int) -> bytes:
        """Bytes at ``offset``: from a kept block, or asked for with read-ahead and kept."""
        length = max(0, min(length, self.size - offset))
        if length == 0:
            return b""
        kept = self._kept(offset, length)
        if kept is not None:
            return kept
        wanted = min(max(length, _READ_AHEAD), self.size - offset)
        (block,) = self._checked([(offset, wanted)])
        if wanted <= _READ_AHEAD:  # a directory's worth, not a tile: keep it
            at = bisect.bisect(self._starts, offset)
            self._starts.insert(at, offset)
            self._blocks.insert(at, block)
        return block[:length]

    def ranges(self, offsets: Sequence[int], sizes: Sequence[int]) -> list[bytes]:
        """Several ranges (a window's tiles) in one question, kept blocks aside."""
        found: list[bytes | None] = []
        missing: list[tuple[int, int]] = []
        for offset, size in zip(offsets, sizes, strict=True):
            if offset < 0 or size < 0 or offset + size > self.size:
                raise OSError(f"a range past the end of the file ({offset}+{size})")
            kept = self._kept(offset, size)
            found.append(kept)
            if kept is None:
                missing.append((offset, size))
        fetched: list[bytes] = []
        for start in range(0, len(missing), MAX_RANGES):
            fetched.extend(self._checked(missing[start : start + MAX_RANGES]))
        answers = iter(fetched)
        return [block if block is not None else next(answers) for block in found]

    def _checked(self, ranges: Sequence[tuple[int, int]]) -> list[bytes]:
        """Ask for ranges; GDAL is never handed a part shorter or longer than it asked."""
        parts = self._ask(ranges)
        if len(parts) != len(ranges) or any(
            len(part) != size for part, (_, size) in zip(parts, ranges, strict=False)
        ):
            raise OSError("a byte range came back of another size than asked")
        return parts

    def _kept(self, offset: int, length: int) -> bytes | None:
        at = bisect.bisect(self._starts, offset) - 1
        if at < 0:
            return None
        start, block = self._starts[at], self._blocks[at]
        if offset + length <= start + len(block):
            return block[offset - start : offset - start + length]
        return None


class _Remote:
    """The file as GDAL reads it: a position over :class:`_Blocks`."""

    def __init__(self, blocks: _Blocks) -> None:
        self._blocks = blocks
        self._at = 0

    def __enter__(self) -> _Remote:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def seek(self, offset: int, whence: int = os.SEEK_SET) -> int:
        base = {os.SEEK_SET: 0, os.SEEK_CUR: self._at, os.SEEK_END: self._blocks.size}[whence]
        self._at = max(0, base + offset)
        return self._at

    def tell(self) -> int:
        return self._at

    def read(self, size: int = -1) -> bytes:
        if size < 0:
            size = self._blocks.size - self._at
        data = self._blocks.read(self._at, size)
        self._at += len(data)
        return data

    def get_byte_ranges(self, offsets: Sequence[int], sizes: Sequence[int]) -> list[bytes]:
        return self._blocks.ranges(offsets, sizes)

    def close(self) -> None:
        pass


class _Opener(MultiByteRangeResourceContainer):  # type: ignore[misc]
    """Serves :data:`_NAME` and nothing else: no side file is ever found."""

    def __init__(self, blocks: _Blocks) -> None:
        self._blocks = blocks

    def open(self, path: str, mode: str = "rb", **kwds: Any) -> _Remote:
        if path != _NAME or "w" in mode or "+" in mode:
            raise FileNotFoundError(path)
        return _Remote(self._blocks)

    def isfile(self, path: str) -> bool:
        return path == _NAME

    def isdir(self, path: str) -> bool:
        return False

    def ls(self, path: str) -> list[str]:
        return []

    def mtime(self, path: str) -> int:
        return 0

    def size(self, path: str) -> int:
        if path != _NAME:
            raise FileNotFoundError(path)
        return self._blocks.size

    def rm(self, path: str) -> None:
        raise PermissionError(path)


def read_window(request: Mapping[str, Any], head: bytes, ask: Ask) -> bytes:
    """Read the window ``request`` asks for and encode it (see :mod:`._cog_child`).

    ``request`` holds ``size`` (the file's length), ``bbox`` (west, south, east, north
    in degrees), ``band`` (from 1) and optionally ``max_cells``.

    Raises:
        RefusedError: The file's declared shape, the area or the file itself.
    """
    size = int(request["size"])
    west, south, east, north = (float(v) for v in request["bbox"])
    band = int(request.get("band") or 1)
    max_cells = min(int(request.get("max_cells") or MAX_CELLS), MAX_CELLS)
    opener = _Opener(_Blocks(size, head, ask))
    try:
        with rasterio.Env(**environment()):
            with _open(opener, None) as dataset:
                overviews = _declared(dataset, size, band)
                bounds = _bounds(dataset, (west, south, east, north))
                base = _window(dataset, bounds)
                full = (dataset.width, dataset.height)
                if base.width * base.height <= max_cells:
                    return _encode(dataset, base, band, None, 1, base, full)
            level, factor = _overview(overviews, base, max_cells)
            with _open(opener, level) as dataset:
                _declared(dataset, size, band)
                window = _window(dataset, bounds)
                return _encode(dataset, window, band, level, factor, base, full)
    except RasterioError as exc:
        raise RefusedError("malformed", f"GDAL could not read it: {_said(exc)}") from None


def _open(opener: _Opener, level: int | None) -> Any:
    options: dict[str, Any] = {"driver": "GTiff", "opener": opener, "sharing": False}
    if level is not None:
        options["overview_level"] = level
    return rasterio.open(_NAME, **options)


def _said(exc: BaseException) -> str:
    text = " ".join(str(exc).replace(_NAME, "the file").split())
    return text[:300] or type(exc).__name__


def _declared(dataset: Any, size: int, band: int) -> list[int]:
    """Check the file's declared shape before a tile is decoded; return its overviews."""
    if dataset.driver != "GTiff":
        raise RefusedError("refused", f"it is read as {dataset.driver}, not a GeoTIFF")
    width, height, count = dataset.width, dataset.height, dataset.count
    dtype = dataset.dtypes[0]
    if dtype not in DTYPES:
        raise RefusedError("refused", f"its cells are {dtype}, not a number type geomint reads")
    if width > MAX_SIDE or height > MAX_SIDE or count > MAX_BANDS:
        raise RefusedError(
            "refused",
            f"it declares {width:,} x {height:,} cells in {count} bands, past the "
            f"{MAX_SIDE:,} cells a side and {MAX_BANDS} bands geomint reads",
        )
    itemsize = np.dtype(dtype).itemsize
    declared = width * height * count * itemsize
    if declared > MAX_DECLARED_BYTES:
        raise RefusedError(
            "refused",
            f"it declares {declared:,} bytes of cells, past the {MAX_DECLARED_BYTES:,} "
            "geomint reads from one file",
        )
    block_rows, block_cols = dataset.block_shapes[0]
    planes = (
        count if dataset.interleaving is not None and dataset.interleaving.name == "PIXEL" else 1
    )
    block_bytes = block_rows * block_cols * itemsize * planes
    if max(block_rows, block_cols) > MAX_BLOCK_SIDE or block_bytes > MAX_BLOCK_BYTES:
        raise RefusedError(
            "refused",
            f"its tiles are {block_cols:,} x {block_rows:,} cells ({block_bytes:,} bytes "
            f"each decoded), past the {MAX_BLOCK_SIDE:,} a side and {MAX_BLOCK_BYTES:,} "
            "bytes geomint decodes; a cloud-optimised GeoTIFF has tiles of 256 to 1,024",
        )
    tiles = math.ceil(width / block_cols) * math.ceil(height / block_rows)
    tiles *= 1 if planes > 1 else count
    if tiles * _MIN_BYTES_PER_TILE > size:
        raise RefusedError(
            "refused",
            f"it declares {tiles:,} tiles, whose offsets alone need at least "
            f"{tiles * _MIN_BYTES_PER_TILE:,} bytes, in a file of {size:,} bytes: its "
            "declared size is not its size",
        )
    if not 1 <= band <= count:
        raise RefusedError("refused", f"it has bands 1 to {count}; band {band} was asked")
    a, b, _, d, e, _ = tuple(dataset.transform)[:6]
    if b != 0 or d != 0 or a <= 0 or e == 0:
        raise RefusedError("refused", "its grid is rotated; geomint reads north-up grids")
    if dataset.crs is None:
        raise RefusedError("refused", "it has no CRS, so its cells cannot be placed")
    return list(dataset.overviews(band))


def _bounds(dataset: Any, bbox: tuple[float, float, float, float]) -> tuple[float, ...]:
    """The area asked, in the file's CRS."""
    try:
        return tuple(transform_bounds("EPSG:4326", dataset.crs, *bbox, densify_pts=21))
    except (RasterioError, ValueError) as exc:
        raise RefusedError(
            "refused", f"the area could not be put in its CRS: {_said(exc)}"
        ) from None


def _window(dataset: Any, bounds: Sequence[float]) -> Window:
    """The cells covering ``bounds``, whole cells outward, inside the grid."""
    west, south, east, north = bounds
    a, _, c, _, e, f = tuple(dataset.transform)[:6]  # north-up: checked by _declared
    cols = sorted(((west - c) / a, (east - c) / a))
    rows = sorted(((north - f) / e, (south - f) / e))
    col0 = max(0, math.floor(cols[0] + 1e-9))
    row0 = max(0, math.floor(rows[0] + 1e-9))
    col1 = min(dataset.width, math.ceil(cols[1] - 1e-9))
    row1 = min(dataset.height, math.ceil(rows[1] - 1e-9))
    if col1 <= col0 or row1 <= row0:
        raise RefusedError("outside", "the area asked is outside the file's grid")
    return Window(col0, row0, col1 - col0, row1 - row0)


def _overview(overviews: Sequence[int], window: Window, max_cells: int) -> tuple[int, int]:
    """The finest overview at which the window fits in ``max_cells``: (level, factor)."""
    for level, factor in enumerate(overviews):
        if math.ceil(window.width / factor) * math.ceil(window.height / factor) <= max_cells:
            return level, factor
    coarsest = overviews[-1] if overviews else 1
    cells = math.ceil(window.width / coarsest) * math.ceil(window.height / coarsest)
    raise RefusedError(
        "too_large",
        f"the area is {int(window.width):,} x {int(window.height):,} cells, and {cells:,} at "
        f"the file's coarsest overview (1/{coarsest}), past the {max_cells:,} one read "
        "returns; ask for a smaller area",
    )


def _encode(
    dataset: Any,
    window: Window,
    band: int,
    level: int | None,
    factor: int,
    base: Window,
    full: tuple[int, int],
) -> bytes:
    """Read the window and encode it: header, CRS text, the cells as binary."""
    cells = dataset.read(band, window=window)
    dtype = np.dtype(cells.dtype.name).newbyteorder("<")
    crs: bytes = dataset.crs.to_string().encode()
    nodata = dataset.nodatavals[band - 1]
    a, b, c, d, e, f = tuple(dataset.transform)[:6]
    col, row = int(window.col_off), int(window.row_off)
    transform = (a, b, c + a * col + b * row, d, e, f + d * col + e * row)
    header = HEADER.pack(
        DTYPES.index(cells.dtype.name),
        band,
        cells.shape[0],
        cells.shape[1],
        len(crs),
        nodata is not None,
        *transform,
        float(nodata) if nodata is not None else 0.0,
        -1 if level is None else level,
        factor,
        int(base.col_off),
        int(base.row_off),
        int(base.width),
        int(base.height),
        *full,
    )
    data: bytes = np.ascontiguousarray(cells, dtype=dtype).tobytes()
    return WINDOW + header + crs + data
