"""Rasters as arrays with their grid: zonal statistics, resampling, cell areas. No I/O.

A :class:`Raster` is a numpy array (``(rows, cols)``, or ``(bands, rows, cols)``) with the
affine transform that places it, its CRS and its nodata value. The operations here are
the ones a raster question is made of and that are easy to get subtly wrong by hand:

- :func:`zonal_stats`: per polygon, statistics weighted by the exact fraction of each
  cell the polygon covers (``exactextract``), so a small park over a coarse grid is not
  all-or-nothing on cell centres;
- :func:`resample`: one raster onto another's grid (``rasterio.warp``), nodata cells
  left out of the resampling rather than averaged in as numbers;
- :func:`cell_area`: each cell's ground area in m² on the WGS84 ellipsoid, whatever the
  raster's CRS (a degree cell near Helsinki is half the ground of one at the equator).

Reading and writing files is not here: rasters arrive as arrays (intake reads GeoTIFF in
a confined child; the sandbox maps them without a copy).
"""

from __future__ import annotations

import functools
import math
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Final

import numpy as np
import pyproj

from geomint.geo.errors import GeoInputError

__all__ = [
    "MAX_CELLS",
    "RESAMPLING",
    "STATS",
    "WEB_MERCATOR_MAX_LAT",
    "Raster",
    "cell_area",
    "image_corners",
    "resample",
    "zonal_stats",
]

#: The most cells (rows x cols x bands) a raster may hold here: 400 million, 1.6 GB of
#: float32. Intake and the sandbox hold rasters to tighter limits of their own.
MAX_CELLS: Final = 400_000_000
#: Statistics :func:`zonal_stats` computes, each weighted by cell coverage.
STATS: Final = ("sum", "mean", "count", "min", "max", "median", "stdev", "majority")
#: How :func:`resample` combines cells, by name (GDAL's resampling algorithms).
RESAMPLING: Final = ("nearest", "bilinear", "cubic", "average", "sum", "min", "max", "mode")
_DTYPES: Final = frozenset(
    {"uint8", "int8", "uint16", "int16", "uint32", "int32", "int64", "uint64", "float32",
     "float64"}
)  # fmt: skip
#: Web Mercator (the web map's projection) ends at this latitude, north and south.
WEB_MERCATOR_MAX_LAT: Final = 85.0511287798
# Rows of corners projected at once by cell_area: bounds its working memory.
_AREA_BLOCK_CELLS: Final = 4_000_000
# A CRS's text: longer is not a CRS; these name files PROJ would open (see _crs_text).
_MAX_CRS_CHARS: Final = 20_000
_CRS_INIT: Final = re.compile(r"\binit\s*=", re.IGNORECASE)
_CRS_FILES: Final = re.compile(
    r"PARAMETERFILE|gridshift|nadgrids|geoidgrids|\bgrids\s*=|\binit\s*=", re.IGNORECASE
)
_NAMES_A_FILE: Final = (
    "a raster's CRS may not name a file (an init file, a grid or a transformation's "
    "parameter file): give 'EPSG:<code>' or WKT of the CRS alone"
)


@dataclass(frozen=True, eq=False)
class Raster:
    """A grid of values placed on the earth.

    Example:
        >>> import numpy as np
        >>> r = Raster(np.ones((2, 3)), (0.5, 0, 24.0, 0, -0.5, 61.0), "EPSG:4326")
        >>> r.shape, r.bounds
        ((2, 3), (24.0, 60.0, 25.5, 61.0))

    Args:
        array: ``(rows, cols)`` or ``(bands, rows, cols)``, a numeric dtype.
        transform: The affine transform ``(a, b, c, d, e, f)``: a cell's corner at
            ``(col, row)`` is ``x = a*col + b*row + c``, ``y = d*col + e*row + f``.
        crs: The CRS as ``"EPSG:4326"`` or WKT.
        nodata: The value that marks a cell with no data, if any.
        label: What the values are, for people ("people per cell").
    """

    array: Any = field(repr=False)
    transform: tuple[float, float, float, float, float, float]
    crs: str
    nodata: float | None = None
    label: str = ""

    def __post_init__(self) -> None:
        array = np.asarray(self.array)
        if array.ndim not in (2, 3) or 0 in array.shape:
            raise GeoInputError(
                f"a raster's array has 2 dimensions (rows, cols) or 3 (bands, rows, cols) "
                f"and no empty one; got shape {array.shape}"
            )
        if array.dtype.name not in _DTYPES:
            raise GeoInputError(
                f"a raster holds numbers (int or float); got dtype {array.dtype.name}"
            )
        if array.size > MAX_CELLS:
            raise GeoInputError(f"a raster holds at most {MAX_CELLS:,} cells; got {array.size:,}")
        transform = tuple(float(v) for v in self.transform)
        if len(transform) != 6 or not all(math.isfinite(v) for v in transform):
            raise GeoInputError("a raster's transform is six finite numbers (a, b, c, d, e, f)")
        a, b, _, d, e, _ = transform
        if a * e - b * d == 0:
            raise GeoInputError("a raster's transform has zero cell size")
        if self.nodata is not None and not isinstance(self.nodata, int | float):
            raise GeoInputError(f"nodata is a number or None; got {self.nodata!r}")
        object.__setattr__(self, "array", array)
        object.__setattr__(self, "transform", transform)
        object.__setattr__(self, "crs", _crs_text(self.crs))

    # -- shape -------------------------------------------------------------------------

    @property
    def shape(self) -> tuple[int, int]:
        """``(rows, cols)``."""
        return (int(self.array.shape[-2]), int(self.array.shape[-1]))

    @property
    def bands(self) -> int:
        """How many bands the raster has."""
        return 1 if self.array.ndim == 2 else int(self.array.shape[0])

    @property
    def north_up(self) -> bool:
        """True when rows run north to south along the y axis, without rotation."""
        a, b, _, d, e, _ = self.transform
        return b == 0 and d == 0 and a > 0 and e < 0

    @property
    def res(self) -> tuple[float, float]:
        """Cell size ``(x, y)`` in the CRS's units (degrees or metres), both positive."""
        a, b, _, d, e, _ = self.transform
        return (math.hypot(a, d), math.hypot(b, e))

    @property
    def bounds(self) -> tuple[float, float, float, float]:
        """``(west, south, east, north)`` in the raster's CRS."""
        rows, cols = self.shape
        a, b, c, d, e, f = self.transform
        xs = [c, a * cols + c, b * rows + c, a * cols + b * rows + c]
        ys = [f, d * cols + f, e * rows + f, d * cols + e * rows + f]
        return (min(xs), min(ys), max(xs), max(ys))

    def band(self, index: int = 1) -> np.ndarray:
        """One band's array (1-based, as GIS tools count bands)."""
        if self.array.ndim == 2:
            if index != 1:
                raise GeoInputError(f"this raster has one band; asked for band {index}")
            return np.asarray(self.array)
        if not 1 <= index <= self.bands:
            raise GeoInputError(f"this raster has bands 1 to {self.bands}; asked for {index}")
        return np.asarray(self.array[index - 1])

    def values(self, band: int = 1) -> np.ndarray:
        """One band as float64 with nodata (and NaN) cells as NaN, ready for arithmetic."""
        data = self.band(band).astype("float64")
        if self.nodata is not None:
            data[data == self.nodata] = np.nan
        return data

    def with_array(self, array: Any, *, nodata: float | None = None, label: str = "") -> Raster:
        """The same grid holding other values (a mask, a product of two rasters, ...).

        ``nodata`` defaults to NaN for a float array and to this raster's nodata otherwise.
        """
        array = np.asarray(array)
        if array.shape[-2:] != self.shape:
            raise GeoInputError(
                f"the array's shape {array.shape} does not match the grid's {self.shape}"
            )
        if nodata is None:
            nodata = math.nan if array.dtype.kind == "f" else self.nodata
        return replace(self, array=array, nodata=nodata, label=label or self.label)

    def describe(self) -> dict[str, Any]:
        """What a person or model needs to know of the raster without its values."""
        data = self.values()
        finite = data[np.isfinite(data)]
        summary: dict[str, Any] = {
            "shape": list(self.shape),
            "bands": self.bands,
            "dtype": self.array.dtype.name,
            "crs": _crs_name(self.crs),
            "res": [round(v, 10) for v in self.res],
            "bounds": [round(v, 10) for v in self.bounds],
            "nodata": _json_number(self.nodata),
            "cells_with_data": int(finite.size),
        }
        if finite.size:
            summary.update(
                min=float(finite.min()), max=float(finite.max()), sum=float(finite.sum())
            )
        if self.label:
            summary["label"] = self.label
        return summary

    def __repr__(self) -> str:
        rows, cols = self.shape
        extra = f", {self.bands} bands" if self.bands > 1 else ""
        return (
            f"Raster({rows}x{cols}{extra}, {self.array.dtype.name}, {_crs_name(self.crs)}, "
            f"res={self.res[0]:.6g}, nodata={self.nodata})"
        )


def _crs_text(crs: object) -> str:
    """The CRS as geomint keeps it: ``EPSG:<code>`` when PROJ finds an exact one, else the
    WKT2 of the CRS alone.

    A raster's CRS comes from model code, a user's file or a remote one, and PROJ opens
    the files a CRS names (``+init=`` as it parses; ``+nadgrids=``, ``+geoidgrids=`` or a
    transformation's parameter file when it transforms) in whichever process uses it: the
    application, drawing the map picture. A FIFO there blocks it holding the GIL. So a
    CRS naming an init file is refused before it is parsed, a bound CRS is kept without
    its transformation (a raster's cells are in its source CRS), and what is kept is
    written back by PROJ, naming no file (checked).
    """
    if isinstance(crs, bool):
        raise GeoInputError(f"a raster's CRS is 'EPSG:<code>' or WKT; got {crs!r}")
    if isinstance(crs, int):
        crs = f"EPSG:{crs}"
    if isinstance(crs, pyproj.CRS):
        return _canonical(crs)
    if not isinstance(crs, str) or not crs.strip():
        raise GeoInputError(f"a raster's CRS is 'EPSG:<code>' or WKT; got {crs!r}")
    return _canonical_text(crs.strip())


@functools.lru_cache(maxsize=256)
def _canonical_text(text: str) -> str:
    """:func:`_crs_text` of a text, kept: rasters are built often, over a few CRSs."""
    if len(text) > _MAX_CRS_CHARS:
        raise GeoInputError(f"a raster's CRS is at most {_MAX_CRS_CHARS:,} characters")
    if _CRS_INIT.search(text):
        raise GeoInputError(_NAMES_A_FILE)
    try:
        parsed = pyproj.CRS.from_user_input(text)
    except pyproj.exceptions.CRSError as exc:
        raise GeoInputError(f"a raster's CRS was not understood: {str(exc)[:200]}") from None
    return _canonical(parsed)


def _canonical(parsed: pyproj.CRS) -> str:
    if parsed.is_bound and parsed.source_crs is not None:
        parsed = parsed.source_crs
    code = parsed.to_epsg(min_confidence=100)
    if code is not None:
        return f"EPSG:{code}"
    wkt = parsed.to_wkt()
    if not wkt or _CRS_FILES.search(wkt):
        raise GeoInputError(_NAMES_A_FILE)
    return str(wkt)


def _crs_name(crs: str) -> str:
    if crs.upper().startswith("EPSG:"):
        return crs.upper()
    parsed = pyproj.CRS.from_user_input(crs)
    code = parsed.to_epsg()
    return f"EPSG:{code}" if code else parsed.name


def _json_number(value: float | None) -> float | str | None:
    if value is None:
        return None
    return value if math.isfinite(value) else str(value)


# -- zonal statistics --------------------------------------------------------------------


def zonal_stats(
    raster: Raster,
    zones: Any,
    stats: Sequence[str] = ("sum", "mean", "count", "min", "max"),
    *,
    band: int = 1,
    weights: Raster | None = None,
) -> list[dict[str, Any]]:
    """Statistics of ``raster`` inside each zone, weighted by each cell's exact coverage.

    Example:
        >>> import numpy as np
        >>> r = Raster(np.array([[1.0, 2.0], [3.0, 4.0]]), (1, 0, 0, 0, -1, 2), "EPSG:4326")
        >>> left = {"type": "Polygon", "coordinates": [[[0, 0], [1, 0], [1, 2], [0, 2], [0, 0]]]}
        >>> zonal_stats(r, [left], ["sum", "count"])
        [{'sum': 4.0, 'count': 2.0}]

    Args:
        raster: The values.
        zones: Polygons: a GeoDataFrame (its CRS is used), or GeoJSON (a
            FeatureCollection, Features, geometries; lon/lat), or shapely geometries
            (lon/lat). They are reprojected to the raster's CRS.
        stats: Any of :data:`STATS`. ``sum`` and ``count`` count a half-covered cell as
            half; ``count`` is the covered cells with data; cells with nodata or NaN are
            left out of all of them.
        band: Which band (1-based).
        weights: A raster on the same grid to weight ``mean`` and ``sum`` by.

    Returns:
        One dict per zone, in order: each statistic (None where the zone covers no cell
        with data) and ``properties`` (the zone's own properties, when it had any).
    """
    from exactextract import exact_extract  # noqa: PLC0415 - loaded with rasters only

    wanted = _stats(stats)
    frame = _zones_frame(zones, raster.crs)
    if frame.empty:
        return []
    if not raster.north_up:
        raise GeoInputError(
            "zonal_stats needs a north-up raster (no rotation); resample it first with "
            "resample(raster, like=...) onto a north-up grid"
        )
    source = _numpy_source(raster, band, "values")
    weight_source = None
    if weights is not None:
        if weights.shape != raster.shape or weights.transform != raster.transform:
            raise GeoInputError(
                "weights must be on the raster's grid; put them there with resample(weights, "
                "like=raster)"
            )
        weight_source = _numpy_source(weights, 1, "weights")
        wanted = [f"weighted_{s}" if s in ("sum", "mean") else s for s in wanted]
    ops = list(dict.fromkeys(wanted))
    result = exact_extract(
        source,
        frame[["geometry"]],
        ops,
        weights=weight_source,
        output="pandas",
        include_cols=[],
    )
    rows: list[dict[str, Any]] = []
    properties = _zone_properties(frame)
    for index, (_, record) in enumerate(result.iterrows()):
        row: dict[str, Any] = {}
        for op in ops:
            name = op.removeprefix("weighted_")
            row[name] = _finite(record[op], empty=op in ("count", "sum", "weighted_sum"))
        if row.get("count") == 0:
            row = {k: (0.0 if k in ("count", "sum") else None) for k in row}
        if properties[index]:
            row["properties"] = properties[index]
        rows.append(row)
    return rows


def _stats(stats: Iterable[str] | str) -> list[str]:
    if isinstance(stats, str):
        stats = [stats]
    wanted = [str(s).lower() for s in stats]
    unknown = [s for s in wanted if s not in STATS]
    if unknown or not wanted:
        raise GeoInputError(
            f"zonal_stats computes {', '.join(STATS)}; got {', '.join(unknown) or 'none'}"
        )
    return wanted


def _zones_frame(zones: Any, crs: str) -> Any:
    import geopandas as gpd  # noqa: PLC0415
    import shapely  # noqa: PLC0415

    if isinstance(zones, gpd.GeoDataFrame):
        frame = zones if zones.crs is not None else zones.set_crs(4326)
    else:
        if hasattr(zones, "to_geodataframe"):  # an entry the sandbox mapped
            frame = zones.to_geodataframe()
        else:
            features = _as_features(zones)
            frame = gpd.GeoDataFrame.from_features(features, crs=4326)
        if frame.crs is None:
            frame = frame.set_crs(4326)
    frame = frame[frame.geometry.notna() & ~frame.geometry.is_empty]
    kinds = set(frame.geometry.geom_type)
    if kinds - {"Polygon", "MultiPolygon"}:
        raise GeoInputError(
            "zonal_stats takes polygons; got " + ", ".join(sorted(kinds - {"Polygon",
            "MultiPolygon"})) + " (buffer points or lines first, e.g. geo.buffer_m)"
        )  # fmt: skip
    frame = frame.set_geometry(shapely.make_valid(frame.geometry.values))
    return frame.to_crs(crs).reset_index(drop=True)


def _as_features(zones: Any) -> list[dict[str, Any]]:
    import shapely.geometry  # noqa: PLC0415

    if isinstance(zones, Mapping):
        kind = zones.get("type")
        if kind == "FeatureCollection":
            return list(zones.get("features") or [])
        if kind == "Feature":
            return [dict(zones)]
        return [{"type": "Feature", "properties": {}, "geometry": dict(zones)}]
    if hasattr(zones, "__geo_interface__"):
        return [{"type": "Feature", "properties": {}, "geometry": zones.__geo_interface__}]
    features: list[dict[str, Any]] = []
    for item in zones:
        if isinstance(item, Mapping) and item.get("type") == "Feature":
            features.append(dict(item))
        elif isinstance(item, Mapping):
            features.append({"type": "Feature", "properties": {}, "geometry": dict(item)})
        else:
            geometry = shapely.geometry.mapping(item)
            features.append({"type": "Feature", "properties": {}, "geometry": geometry})
    return features


def _zone_properties(frame: Any) -> list[dict[str, Any]]:
    columns = [c for c in frame.columns if c != frame.geometry.name]
    if not columns:
        return [{} for _ in range(len(frame))]
    records: list[dict[str, Any]] = frame[columns].to_dict("records")
    return [
        {k: v for k, v in r.items() if isinstance(v, str | int | float | bool)} for r in records
    ]


def _numpy_source(raster: Raster, band: int, name: str) -> Any:
    from exactextract.raster import NumPyRasterSource  # noqa: PLC0415

    west, south, east, north = raster.bounds
    data = raster.band(band)
    nodata = raster.nodata
    if data.dtype.kind == "f" and nodata is not None and math.isnan(nodata):
        nodata = None  # exactextract leaves NaN out by itself
    return NumPyRasterSource(
        data, west, south, east, north, nodata=nodata, name=name,
        srs_wkt=pyproj.CRS.from_user_input(raster.crs).to_wkt(),
    )  # fmt: skip


def _finite(value: Any, *, empty: bool) -> float | None:
    number = float(value)
    if math.isfinite(number):
        return number
    return 0.0 if empty else None


# -- resampling --------------------------------------------------------------------------


def resample(raster: Raster, like: Raster, method: str = "nearest") -> Raster:
    """``raster`` on ``like``'s grid (its CRS, transform and shape).

    Cells with nodata are left out: an ``average`` of three cells with data and one
    without is the mean of the three, and a target cell with no source data is nodata.

    Args:
        raster: The values to move.
        like: The grid to put them on.
        method: One of :data:`RESAMPLING`. ``nearest`` for categories, ``average`` for
            densities and rates going coarser, ``sum`` for counts (people, buildings)
            going coarser, ``bilinear`` for smooth fields going finer.
    """
    from rasterio.enums import Resampling  # noqa: PLC0415 - loaded with rasters only
    from rasterio.warp import reproject  # noqa: PLC0415

    if method not in RESAMPLING:
        raise GeoInputError(f"resample's method is one of {', '.join(RESAMPLING)}; got {method!r}")
    source = np.asarray(raster.array)
    nodata = raster.nodata
    float_out = source.dtype.kind == "f" or method in ("average", "bilinear", "cubic", "sum")
    dtype = np.dtype("float64" if source.dtype == np.float64 else "float32") if float_out else (
        source.dtype
    )  # fmt: skip
    if float_out:
        dst_nodata: float | None = math.nan
    else:
        dst_nodata = nodata
    shape = (*source.shape[:-2], *like.shape)
    out = np.full(shape, np.nan if float_out else (nodata or 0), dtype=dtype)
    src_nodata = nodata
    if src_nodata is None and source.dtype.kind == "f":
        src_nodata = math.nan
    algorithm = Resampling[method]  # an enum member by name, checked against RESAMPLING
    reproject(
        source,
        out,
        src_transform=_affine(raster.transform),
        src_crs=raster.crs,
        src_nodata=src_nodata,
        dst_transform=_affine(like.transform),
        dst_crs=like.crs,
        dst_nodata=dst_nodata,
        resampling=algorithm,
        init_dest_nodata=True,
    )
    return Raster(out, like.transform, like.crs, dst_nodata, label=raster.label)


def _affine(transform: Sequence[float]) -> Any:
    from affine import Affine  # noqa: PLC0415 - rasterio's own dependency

    return Affine(*transform)


# -- cell areas --------------------------------------------------------------------------


def cell_area(raster: Raster) -> np.ndarray:
    """Each cell's ground area in m² on the WGS84 ellipsoid, shaped like one band.

    Corners are taken to longitude and latitude and then to an equal-area cylindrical
    projection of the ellipsoid, where a cell's area is its plane area: exact for a
    longitude/latitude grid, and for a projected grid exact up to the curvature of a
    cell's edges (parts per million at any cell size a raster uses).

    A longitude/latitude grid's areas vary by row only; the array returned then is a
    read-only broadcast of one column and costs one column of memory.
    """
    rows, cols = raster.shape
    crs = pyproj.CRS.from_user_input(raster.crs)
    to_lonlat = pyproj.Transformer.from_crs(crs, 4326, always_xy=True)
    to_area = pyproj.Transformer.from_crs(4326, _EQUAL_AREA, always_xy=True)
    a, b, c, d, e, f = raster.transform
    if crs.is_geographic and raster.north_up:
        edges = f + e * np.arange(rows + 1, dtype="float64")
        lat = np.clip(edges, -90.0, 90.0)
        _, y = to_area.transform(np.zeros_like(lat), lat)
        x0, _ = to_area.transform(np.array([c]), np.array([0.0]))
        x1, _ = to_area.transform(np.array([c + a]), np.array([0.0]))
        column = np.abs(np.diff(y)) * abs(float(x1[0] - x0[0]))
        return np.broadcast_to(column[:, None], (rows, cols))
    out = np.empty((rows, cols), dtype="float64")
    block = max(1, _AREA_BLOCK_CELLS // (cols + 1))
    col_edges = np.arange(cols + 1, dtype="float64")
    for start in range(0, rows, block):
        stop = min(rows, start + block)
        row_edges = np.arange(start, stop + 1, dtype="float64")
        cc, rr = np.meshgrid(col_edges, row_edges)
        x = a * cc + b * rr + c
        y = d * cc + e * rr + f
        lon, lat = to_lonlat.transform(x, y)
        ex, ey = to_area.transform(lon, lat)
        # The shoelace formula over each cell's corners, taken from its first corner (the
        # coordinates are millions of metres; a cell's sides are metres).
        x0, y0 = ex[:-1, :-1], ey[:-1, :-1]
        x1, y1 = ex[:-1, 1:] - x0, ey[:-1, 1:] - y0
        x2, y2 = ex[1:, 1:] - x0, ey[1:, 1:] - y0
        x3, y3 = ex[1:, :-1] - x0, ey[1:, :-1] - y0
        out[start:stop] = np.abs((x1 * y2 - x2 * y1) + (x2 * y3 - x3 * y2)) / 2
    return out


# Lambert's cylindrical equal-area projection of the WGS84 ellipsoid (standard parallel
# at the equator): areas on it are areas on the ellipsoid.
_EQUAL_AREA: Final = "+proj=cea +lon_0=0 +lat_ts=0 +ellps=WGS84 +units=m +no_defs"


# -- on a web map ------------------------------------------------------------------------


def image_corners(
    bbox: Sequence[float],
) -> tuple[tuple[float, float], tuple[float, float], tuple[float, float], tuple[float, float]]:
    """The corners ``(lon, lat)`` of a picture of ``bbox`` on a web map, top left first and
    clockwise (MapLibre's order for an image source), latitudes held to where Web Mercator
    ends.

    Example:
        >>> image_corners([24.9, 60.1, 25.0, 60.2])
        ((24.9, 60.2), (25.0, 60.2), (25.0, 60.1), (24.9, 60.1))
        >>> image_corners([-180, -90, 180, 90])[0]
        (-180.0, 85.0511287798)

    Args:
        bbox: ``(west, south, east, north)`` in degrees.
    """
    west, south, east, north = (float(v) for v in bbox)
    south = max(-WEB_MERCATOR_MAX_LAT, min(WEB_MERCATOR_MAX_LAT, south))
    north = max(-WEB_MERCATOR_MAX_LAT, min(WEB_MERCATOR_MAX_LAT, north))
    if not (west < east and south < north):
        raise GeoInputError(f"a picture's bbox is west < east and south < north; got {list(bbox)}")
    return ((west, north), (east, north), (east, south), (west, south))
