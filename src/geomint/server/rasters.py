"""A raster entry as the web app hands it out: a picture for the map, and a GeoTIFF file.

The map draws a raster as a MapLibre ``image`` source: one PNG placed by its four corners.
MapLibre stretches an image linearly in Web Mercator between those corners, so the picture
is made on a Web Mercator grid (:func:`render`): the raster is resampled onto it
(:func:`geomint.geo.raster.resample`, nearest cell, so counts and categories keep their
values), its first band coloured with :data:`PALETTE` between the 2nd and 98th percentiles
of the values drawn (a few extreme cells do not wash the rest out), and cells with no data
left transparent. The corners come from the entry's lon/lat bbox
(:func:`geomint.geo.raster.image_corners`), the same corners the page is given, so the
picture lands where the part says it does.

Pictures are kept by :class:`RasterImages` (an entry version never changes), and PNGs are
written here with ``zlib`` (:func:`png_rgba`): Pillow is not a dependency.
"""

from __future__ import annotations

import math
import struct
import threading
import zlib
from collections import OrderedDict
from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass
from typing import Any, Final

import numpy as np

from geomint.geo.raster import Raster, image_corners, resample

__all__ = [
    "MAX_SIDE",
    "MIN_SIDE",
    "PALETTE",
    "PALETTE_STOPS",
    "RasterImage",
    "RasterImages",
    "geotiff",
    "png_rgba",
    "render",
]

#: The longest side of a picture, in pixels.
MAX_SIDE: Final = 2048
#: The shortest long side: a coarse grid is drawn finer than its cells, so that their edges
#: land where they are once the grid is reprojected.
MIN_SIDE: Final = 512
#: The colours the ramp runs through, low to high (viridis, sampled at ten even steps):
#: perceptually even, readable in greyscale and by most colour-blind people.
PALETTE_STOPS: Final = (
    "#440154", "#482878", "#3e4a89", "#31688e", "#26828e",
    "#1f9e89", "#35b779", "#6dcd59", "#b4de2c", "#fde725",
)  # fmt: skip
#: Which percentiles of the values drawn the ramp's ends are.
STRETCH: Final = (2.0, 98.0)
_PNG_SIGNATURE: Final = b"\x89PNG\r\n\x1a\n"


def _ramp(stops: Sequence[str], steps: int = 256) -> np.ndarray:
    rgb = np.array([[int(s[i : i + 2], 16) for i in (1, 3, 5)] for s in stops], dtype="float64")
    at = np.linspace(0, len(stops) - 1, steps)
    columns = [np.interp(at, np.arange(len(stops)), rgb[:, c]) for c in range(3)]
    ramp: np.ndarray = np.rint(np.stack(columns, axis=1)).astype("uint8")
    return ramp


#: The ramp as 256 RGB rows (uint8), interpolated between :data:`PALETTE_STOPS`.
PALETTE: Final = _ramp(PALETTE_STOPS)


@dataclass(frozen=True, kw_only=True)
class RasterImage:
    """A raster drawn for the map.

    Attributes:
        png: The picture: RGBA, north up, on a Web Mercator grid.
        width: Its width in pixels.
        height: Its height in pixels.
        coordinates: Where its corners go, ``(lon, lat)``: top left, top right, bottom
            right, bottom left.
        low: The value drawn in the ramp's first colour (and everything below it); None
            when no cell has data.
        high: The value drawn in its last colour (and everything above it).
        band: Which band is drawn (1-based).
        bands: How many bands the raster has.
    """

    png: bytes
    width: int
    height: int
    coordinates: tuple[tuple[float, float], ...]
    low: float | None
    high: float | None
    band: int = 1
    bands: int = 1

    def legend(self) -> dict[str, Any]:
        """What the page's legend and map need of the picture, as JSON."""
        return {
            "coordinates": [list(c) for c in self.coordinates],
            "width": self.width,
            "height": self.height,
            "range": None if self.low is None else [self.low, self.high],
            "stretch": list(STRETCH),
            "palette": list(PALETTE_STOPS),
            "band": self.band,
            "bands": self.bands,
        }


def render(raster: Raster, bbox: Sequence[float], *, max_side: int = MAX_SIDE) -> RasterImage:
    """Draw a raster's first band for a web map, over ``bbox`` (lon/lat).

    Example:
        >>> r = Raster(np.array([[1.0, 2.0], [np.nan, 4.0]]), (0.01, 0, 24.9, 0, -0.01, 60.2),
        ...            "EPSG:4326")
        >>> image = render(r, (24.9, 60.18, 24.92, 60.2))
        >>> image.png[:8] == _PNG_SIGNATURE, image.coordinates[0]
        (True, (24.9, 60.2))

    Args:
        raster: The raster.
        bbox: ``(west, south, east, north)`` in degrees: the raster's extent (the entry's
            digest holds it).
        max_side: The longest side of the picture in pixels.

    Raises:
        GeoInputError: The bbox is empty.
    """
    import pyproj  # noqa: PLC0415 - loaded with rasters only

    corners = image_corners(bbox)
    (west, north), (east, south) = corners[0], corners[2]
    to_mercator = pyproj.Transformer.from_crs(4326, 3857, always_xy=True)
    x0, y0 = to_mercator.transform(west, south)
    x1, y1 = to_mercator.transform(east, north)
    width, height = _grid_size(raster, (x1 - x0) / (y1 - y0), max_side)
    grid = Raster(
        np.broadcast_to(np.zeros(1, dtype="uint8"), (height, width)),
        ((x1 - x0) / width, 0.0, x0, 0.0, -(y1 - y0) / height, y1),
        "EPSG:3857",
    )
    drawn = resample(_first_band(raster, grid.shape), grid, "nearest").array
    low, high = _stretch(drawn)
    return RasterImage(
        png=png_rgba(_colour(drawn, low, high)),
        width=width,
        height=height,
        coordinates=corners,
        low=low,
        high=high,
        bands=raster.bands,
    )


def _grid_size(raster: Raster, aspect: float, max_side: int) -> tuple[int, int]:
    """``(width, height)`` of the picture: about the raster's own resolution, its long
    side from :data:`MIN_SIDE` to ``max_side``, in the bbox's Web Mercator aspect."""
    from rasterio.errors import RasterioError  # noqa: PLC0415
    from rasterio.warp import calculate_default_transform  # noqa: PLC0415

    rows, cols = raster.shape
    try:
        _, native_w, native_h = calculate_default_transform(
            raster.crs, "EPSG:3857", cols, rows, *raster.bounds
        )
        longest = max(int(native_w or 0), int(native_h or 0))
    except (RasterioError, ValueError):
        longest = max(rows, cols)
    longest = min(max_side, max(min(MIN_SIDE, max_side), longest))
    if aspect >= 1:
        return longest, max(1, round(longest / aspect))
    return max(1, round(longest * aspect)), longest


def _first_band(raster: Raster, target: tuple[int, int]) -> Raster:
    """Band 1 as float32 with nodata as NaN, every n-th cell of it when the raster has
    many more cells than the picture has pixels (nearest sampling keeps one of them
    anyway, and a 10,000 x 10,000 grid need not be copied whole)."""
    rows, cols = raster.shape
    step = max(1, math.floor(min(rows / target[0], cols / target[1]) / 2))
    values = np.array(raster.band(1)[::step, ::step], dtype="float32")
    if raster.nodata is not None and not math.isnan(raster.nodata):
        values[values == np.float32(raster.nodata)] = np.nan
    a, b, c, d, e, f = raster.transform
    transform = (a * step, b * step, c, d * step, e * step, f)
    return Raster(values, transform, raster.crs, math.nan, label=raster.label)


def _stretch(values: np.ndarray) -> tuple[float | None, float | None]:
    finite = values[np.isfinite(values)]
    if not finite.size:
        return None, None
    low, high = np.percentile(finite, STRETCH)
    return _tidy(float(low)), _tidy(float(high))


def _tidy(value: float) -> float:
    """A float32 cell value as the number it was written as (``0.1``, not ``0.10000000149``)."""
    return float(f"{value:.7g}")


def _colour(values: np.ndarray, low: float | None, high: float | None) -> np.ndarray:
    finite = np.isfinite(values)
    rgba = np.zeros((*values.shape, 4), dtype="uint8")
    if low is None or high is None:
        return rgba
    if high > low:
        scaled = (np.where(finite, values, low) - low) * (255 / (high - low))
        index = np.clip(scaled, 0, 255).astype("uint8")
    else:  # one value everywhere: the middle of the ramp
        index = np.full(values.shape, 128, dtype="uint8")
    rgba[..., :3] = PALETTE[index]
    rgba[..., 3] = np.where(finite, 255, 0)
    return rgba


def png_rgba(rgba: np.ndarray, *, level: int = 6) -> bytes:
    """An RGBA array (``height x width x 4``, uint8) as PNG bytes.

    Example:
        >>> data = png_rgba(np.zeros((2, 3, 4), dtype="uint8"))
        >>> data[:8] == _PNG_SIGNATURE, struct.unpack(">II", data[16:24])
        (True, (3, 2))
    """
    height, width, depth = rgba.shape
    if depth != 4 or rgba.dtype != np.uint8:
        raise ValueError(f"png_rgba takes height x width x 4 uint8, got {rgba.shape} {rgba.dtype}")
    rows = np.zeros((height, width * 4 + 1), dtype="uint8")  # a 0 before each row: no filter
    rows[:, 1:] = rgba.reshape(height, width * 4)
    header = struct.pack(">IIBBBBB", width, height, 8, 6, 0, 0, 0)  # 8-bit RGBA
    return b"".join(
        [
            _PNG_SIGNATURE,
            _chunk(b"IHDR", header),
            _chunk(b"IDAT", zlib.compress(rows.tobytes(), level)),
            _chunk(b"IEND", b""),
        ]
    )


def _chunk(kind: bytes, data: bytes) -> bytes:
    crc = zlib.crc32(kind + data) & 0xFFFFFFFF
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", crc)


def geotiff(raster: Raster, *, label: str = "") -> bytes:
    """A raster as a Cloud Optimized GeoTIFF (deflate), every band, its CRS and nodata,
    ``label`` kept as the file's ``label`` tag."""
    import rasterio.shutil  # noqa: PLC0415 - loaded with rasters only
    from affine import Affine  # noqa: PLC0415
    from rasterio.io import MemoryFile  # noqa: PLC0415

    array = np.asarray(raster.array)
    cells = array if array.ndim == 3 else array[np.newaxis]
    rows, cols = raster.shape
    profile: dict[str, Any] = {
        "driver": "GTiff", "width": cols, "height": rows, "count": raster.bands,
        "dtype": array.dtype.name, "crs": raster.crs, "transform": Affine(*raster.transform),
        "nodata": raster.nodata,
    }  # fmt: skip
    with MemoryFile() as plain:
        with plain.open(**profile) as dataset:
            dataset.write(cells)
            tags = {k: v for k, v in (("label", label), ("values", raster.label)) if v}
            if tags:
                dataset.update_tags(**tags)
        with plain.open() as source, MemoryFile() as cog:
            rasterio.shutil.copy(source, cog.name, driver="COG", compress="deflate")
            return bytes(cog.read())


class RasterImages:
    """Pictures already drawn, by key, up to ``capacity`` bytes of PNG (least recently used
    go first). Two requests for one picture draw it once: the second waits for the first.
    """

    def __init__(self, capacity: int = 64 << 20) -> None:
        self._capacity = capacity
        self._kept: OrderedDict[Hashable, RasterImage] = OrderedDict()
        self._drawing: dict[Hashable, threading.Lock] = {}
        self._lock = threading.Lock()

    def get(self, key: Hashable, draw: Callable[[], RasterImage]) -> RasterImage:
        """The picture kept under ``key``, drawn with ``draw`` when there is none."""
        with self._lock:
            kept = self._hit(key)
            if kept is not None:
                return kept
            drawing = self._drawing.setdefault(key, threading.Lock())
        with drawing:
            with self._lock:
                kept = self._hit(key)
            if kept is not None:
                return kept
            try:
                image = draw()
            finally:
                with self._lock:
                    self._drawing.pop(key, None)
            with self._lock:
                self._kept[key] = image
                self._evict()
        return image

    def _hit(self, key: Hashable) -> RasterImage | None:
        kept = self._kept.get(key)
        if kept is not None:
            self._kept.move_to_end(key)
        return kept

    def _evict(self) -> None:
        total = sum(len(image.png) for image in self._kept.values())
        while len(self._kept) > 1 and total > self._capacity:
            _, dropped = self._kept.popitem(last=False)
            total -= len(dropped.png)
