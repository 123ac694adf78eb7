"""Reading a GeoTIFF into an array, in the confined child: what it declares is checked
before a cell is decoded.

A small file can declare an enormous raster (a 100,000 x 100,000 grid of deflated zeros
is a few kilobytes), so the width, height, band count and cell type are read from the
header first and held to :data:`MAX_CELLS` and :data:`MAX_DECODED`; only then are the
cells read. GDAL opens the bytes from memory with the GTiff driver alone (no network
driver is registered in the child, and no other driver is tried), and what it refuses
(a truncated strip, a tile whose compression is corrupt) comes back as a refusal that
says so. The child's memory and CPU limits bound anything these checks miss.

The answer is binary, not JSON: a header (the grid) and the cells as they are in memory.
"""

from __future__ import annotations

import json
import math
import re
import struct
from typing import Any, Final

__all__ = ["MAX_BANDS", "MAX_CELLS", "MAX_DECODED", "decode_answer", "read_geotiff"]

#: The most cells (rows x cols x bands) a GeoTIFF may declare: 100 million.
MAX_CELLS: Final = 100_000_000
#: The most bytes its cells may take decoded: 400 MB (100 M float32 cells).
MAX_DECODED: Final = 400 << 20
#: The most bands read.
MAX_BANDS: Final = 16
_DTYPES: Final = frozenset(
    {"uint8", "int8", "uint16", "int16", "uint32", "int32", "int64", "uint64", "float32",
     "float64"}
)  # fmt: skip
_MAGIC: Final = b"GMR1"
_MEMORY_NAME: Final = re.compile(r"(?:/vsimem/)?[0-9a-f-]{36}(?:/[0-9a-f-]{36})?\.tif:?\s*")


class RasterRefusedError(Exception):
    """The file is no GeoTIFF geomint reads; the message says why."""


def read_geotiff(raw: bytes, name: str) -> bytes:
    """Read a GeoTIFF's cells and grid; return the binary answer (see :func:`decode_answer`).

    Raises:
        RasterRefusedError: It declares more than the limits, lacks a CRS or transform,
            holds a cell type geomint does not read, or GDAL cannot read it.
    """
    from rasterio.errors import RasterioError  # noqa: PLC0415
    from rasterio.io import MemoryFile  # noqa: PLC0415

    try:
        with MemoryFile(raw) as memory, memory.open(driver="GTiff") as dataset:
            width, height, count = dataset.width, dataset.height, dataset.count
            dtypes = set(dataset.dtypes)
            _check_declared(width, height, count, dtypes, name)
            if dataset.crs is None:
                raise RasterRefusedError(
                    f"{name} has no coordinate reference system; save it as a GeoTIFF with "
                    "its CRS (e.g. gdal_translate -a_srs EPSG:4326)"
                )
            transform = dataset.transform
            if transform.is_identity:
                raise RasterRefusedError(
                    f"{name} has no georeferencing (its transform is the identity); save it "
                    "with its geotransform"
                )
            bands = min(count, MAX_BANDS)
            array = dataset.read(list(range(1, bands + 1)) if bands > 1 else 1)
            crs = dataset.crs.to_string() if dataset.crs.to_epsg() else dataset.crs.to_wkt()
            nodata = dataset.nodata
            description = {
                "shape": list(array.shape),
                "dtype": array.dtype.name,
                "transform": [
                    transform.a,
                    transform.b,
                    transform.c,
                    transform.d,
                    transform.e,
                    transform.f,
                ],
                "crs": crs,
                "nodata": None if nodata is None else ("nan" if math.isnan(nodata) else nodata),
                "bands_in_file": count,
                "compression": str(dataset.compression.value) if dataset.compression else None,
                "tiled": bool(
                    dataset.block_shapes
                    and dataset.block_shapes[0][0] > 1
                    and dataset.block_shapes[0][0] != height
                ),
                "overviews": len(dataset.overviews(1)),
            }
    except RasterioError as exc:
        # GDAL names the in-memory file by a random id; the person knows it by its name.
        said = _MEMORY_NAME.sub("", str(exc))[:300]
        raise RasterRefusedError(f"{name} could not be read as a GeoTIFF: {said}") from None
    header = json.dumps(description).encode()
    cells: bytes = array.tobytes(order="C")
    return _MAGIC + struct.pack("<I", len(header)) + header + cells


def _check_declared(width: int, height: int, count: int, dtypes: set[str], name: str) -> None:
    unknown = dtypes - _DTYPES
    if unknown:
        raise RasterRefusedError(
            f"{name} holds cells of type {', '.join(sorted(unknown))}; geomint reads integer "
            "and floating-point rasters (complex values are not)"
        )
    cells = width * height * min(count, MAX_BANDS)
    itemsize = max(_itemsize(d) for d in dtypes)
    if cells > MAX_CELLS or cells * itemsize > MAX_DECODED:
        raise RasterRefusedError(
            f"{name} declares {width:,} x {height:,} cells in {count} band(s), "
            f"{cells * itemsize / 2**20:,.0f} MB decoded: more than the {MAX_CELLS:,} cells "
            f"({MAX_DECODED >> 20} MB) geomint reads at once; clip or downsample it first "
            "(e.g. gdalwarp -te ... or -tr ...)"
        )


def _itemsize(dtype: str) -> int:
    return {"uint8": 1, "int8": 1, "uint16": 2, "int16": 2}.get(dtype, 8 if "64" in dtype else 4)


def decode_answer(reply: bytes) -> tuple[dict[str, Any], memoryview]:
    """Split the child's answer into its header and its cells (not yet trusted).

    Raises:
        ValueError: It is not an answer of :func:`read_geotiff`'s shape.
    """
    if len(reply) < 8 or reply[:4] != _MAGIC:
        raise ValueError("the reader's answer is not a raster")
    (size,) = struct.unpack("<I", reply[4:8])
    if size > 1 << 20 or 8 + size > len(reply):
        raise ValueError("the reader's raster header is malformed")
    try:
        header = json.loads(reply[8 : 8 + size])
    except RecursionError:  # the child's answer is hostile bytes too
        raise ValueError("the reader's raster header nests too deep") from None
    if not isinstance(header, dict):
        raise ValueError("the reader's raster header is malformed")
    return header, memoryview(reply)[8 + size :]
