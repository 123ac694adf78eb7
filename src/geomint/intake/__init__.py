"""Bring your own data: load a user's geodata into one clean, reported layer.

:func:`load` accepts a source whole or refuses it whole with an :class:`IntakeError`
that says what is wrong, where, and what to do. What it repaired on the way is in the
:class:`IntakeReport` on the returned :class:`Layer`.
"""

from __future__ import annotations

import asyncio
import functools
import json
import math
import stat
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar
from urllib.parse import urlsplit

from geomint.geo.errors import GeoInputError
from geomint.geo.raster import Raster
from geomint.intake._confined import (
    MAX_CHILDREN,
    confinement_level,
    judge_confined,
    read_raster_confined,
)
from geomint.intake._convert import columns_rows_shapes
from geomint.intake._decoded import EXPANSION
from geomint.intake._parse import TOO_DEEP
from geomint.intake._pipeline import BATCH, FRAME, frame_parts
from geomint.intake.errors import IntakeError
from geomint.intake.formats import sniff
from geomint.intake.report import IntakeReport, Repair, profile

__all__ = [
    "IntakeError",
    "IntakeReport",
    "Layer",
    "RasterLayer",
    "Repair",
    "aload",
    "aload_raster",
    "confinement_level",
    "is_tiff",
    "load",
    "load_raster",
    "offload",
]

_HEAD = 4096
T = TypeVar("T")


@dataclass(frozen=True, kw_only=True)
class Layer:
    """A loaded layer.

    Attributes:
        data: A GeoJSON FeatureCollection dict in EPSG:4326 with RFC 7946 winding.
        report: What was found and changed while loading.
    """

    data: dict[str, Any]
    report: IntakeReport

    def profile(self) -> dict[str, Any]:
        """Return the model-facing profile (see :func:`geomint.intake.report.profile`)."""
        return profile(self.data, self.report)


def _read_path(path: Path, max_bytes: int) -> tuple[bytes, int]:
    """Return the first bytes of a file and its size, refusing what is too large.

    Only regular files: a pipe or a device reports size 0 and would be read unbounded.
    """
    try:
        info = path.stat()
        if not stat.S_ISREG(info.st_mode):
            raise IntakeError(
                ["not a regular file (a folder, pipe or device); pass a file"], source=str(path)
            )
        if info.st_size > max_bytes:
            raise IntakeError(
                [
                    f"file is {info.st_size:,} bytes, over the {max_bytes:,}-byte limit; "
                    "pass max_bytes="
                ],
                source=str(path),
            )
        with path.open("rb") as handle:
            return handle.read(_HEAD), info.st_size
    except OSError as exc:
        raise IntakeError([f"cannot read the file: {exc.strerror}"], source=str(path)) from None


def _in_memory(source: Any) -> Any:
    """A dict as it is; any other object by its ``__geo_interface__``."""
    if isinstance(source, dict):
        return source
    interface = getattr(source, "__geo_interface__", None)
    if interface is None:
        raise IntakeError(
            [
                f"cannot load a {type(source).__name__}; pass bytes, a path, a dict, "
                "an object with __geo_interface__ or a GeoDataFrame"
            ],
            source=type(source).__name__,
        )
    return interface


def load(
    source: bytes | str | Path | dict[str, Any] | Any,
    *,
    label: str | None = None,
    max_bytes: int = 25_000_000,
    timeout_s: float = 15.0,
    layer: str | None = None,
    allowed_networks: Sequence[str] = (),
    veto: Callable[[str], str | None] | None = None,
) -> Layer:
    """Load a user's geodata from a path, a URL, bytes or an in-memory object.

    Formats: GeoJSON and newline-delimited GeoJSON, GeoParquet, GeoPackage, zipped
    Shapefile, FlatGeobuf, KML/KMZ, CSV with lon/lat or WKT columns, a dict, an object
    with ``__geo_interface__`` or a GeoDataFrame. The format is read from the content
    and checked against the name. Any CRS is reprojected to WGS84 and recorded.

    Args:
        source: Raw bytes; a path; an ``http(s)://`` URL; a dict; an object with
            ``__geo_interface__``; or a GeoDataFrame.
        label: How to name the source in the report and in error messages.
        max_bytes: Refuse sources larger than this, measured after decompression, and
            sources whose GeoJSON would be more than 20 times this (a GeoParquet or
            CSV compresses inside itself; see ``docs/intake.md``).
        timeout_s: Budget for a download, and again for judging the source (parsing,
            validating and repairing it in the confined child).
        layer: Which layer of a multi-layer GeoPackage or zipped Shapefile to load.
        allowed_networks: CIDR ranges a URL may reach although they are private or
            loopback (an intranet data server); public addresses are always allowed.
        veto: Called with every URL before it is fetched, redirects included; a
            returned string refuses the URL with that reason.

    Returns:
        The layer, with its report.

    Raises:
        IntakeError: The source was refused; nothing of it was loaded.
    """
    if isinstance(source, str) and "://" in source:
        return _load_url(source, label, max_bytes, timeout_s, layer, allowed_networks, veto)
    if isinstance(source, str | Path):
        path = Path(source)
        name = label or str(path)
        head, _ = _read_path(path, max_bytes)
        fmt = _sniff(head, name, path.name, "")
        return _load_data(path, fmt, name, max_bytes, timeout_s, layer)
    if isinstance(source, bytes | bytearray | memoryview):
        raw = bytes(source)
        name = label or f"{len(raw):,} bytes"
        if len(raw) > max_bytes:
            raise IntakeError(
                [f"input is {len(raw):,} bytes, over the {max_bytes:,}-byte limit"], source=name
            )
        fmt = _sniff(raw[:_HEAD], name, label or "", "")
        return _load_data(raw, fmt, name, max_bytes, timeout_s, layer)
    name = label or f"in-memory {type(source).__name__}"
    crs = _crs_name(source)
    if _is_frame(source):
        return _load_frame(source, name, crs, max_bytes, timeout_s)
    value = _in_memory(source)
    try:
        text = _json_text(value)
    except RecursionError:
        _refuse_too_deep(value, name, crs)
        raise  # not reached: the walk refuses what nests past the recursion limit
    except (TypeError, ValueError) as exc:
        raise IntakeError([f"cannot read the object as GeoJSON: {exc}"], source=name) from None
    kind = "geojson" if isinstance(source, dict) else "object"
    return _judge_text(text, "geojson", kind, name, crs, max_bytes, timeout_s)


#: The first bytes of a TIFF (little- and big-endian, classic and BigTIFF).
TIFF_MAGIC = (b"II*\x00", b"MM\x00*", b"II+\x00", b"MM\x00+")


def is_tiff(head: bytes) -> bool:
    """Whether a source's first bytes are a TIFF's (a GeoTIFF for :func:`load_raster`)."""
    return head.startswith(TIFF_MAGIC)


@dataclass(frozen=True, kw_only=True)
class RasterLayer:
    """A loaded raster.

    Attributes:
        raster: Its cells and grid.
        source: Its name in messages.
        notes: What was narrowed on the way (bands past the limit), in words.
        file: What the file said of itself: compression, tiling, overviews, bands.
    """

    raster: Raster
    source: str
    notes: tuple[str, ...] = ()
    file: dict[str, Any] = field(default_factory=dict)


def load_raster(
    source: bytes | str | Path,
    *,
    label: str | None = None,
    max_bytes: int = 100_000_000,
    timeout_s: float = 30.0,
) -> RasterLayer:
    """Load a GeoTIFF (or Cloud-Optimised GeoTIFF) from a path or bytes.

    The file is read in the confined child, as every user file is: its declared size is
    checked before a cell is decoded (``geomint.intake._raster`` has the limits), and the
    cells that come back are checked against the grid the child declared.

    Raises:
        IntakeError: The source was refused; nothing of it was loaded.
    """
    if isinstance(source, str | Path):
        path = Path(source)
        name = label or str(path)
        head, _ = _read_path(path, max_bytes)
        data: bytes | Path = path
    else:
        data = bytes(source)
        name = label or f"{len(data):,} bytes"
        if len(data) > max_bytes:
            raise IntakeError(
                [f"input is {len(data):,} bytes, over the {max_bytes:,}-byte limit"], source=name
            )
        head = data[:_HEAD]
    if not is_tiff(head):
        raise IntakeError(
            [f"this is not a GeoTIFF (first bytes {head[:8]!r}); geomint reads rasters as "
             "GeoTIFF or Cloud-Optimised GeoTIFF"], source=name,
        )  # fmt: skip
    header, cells = read_raster_confined(data, name=name, max_bytes=max_bytes, timeout_s=timeout_s)
    try:
        raster = _checked_raster(header, cells)
    except (KeyError, TypeError, ValueError, GeoInputError):
        raise IntakeError(["the reader's answer was malformed; the file is refused"],
                          source=name) from None  # fmt: skip
    notes = []
    bands = header.get("bands_in_file")
    if isinstance(bands, int) and bands > raster.bands:
        notes.append(f"the file has {bands} bands; the first {raster.bands} were read")
    described = {k: header.get(k) for k in ("compression", "tiled", "overviews", "bands_in_file")}
    return RasterLayer(raster=raster, source=name, notes=tuple(notes), file=described)


def _checked_raster(header: dict[str, Any], cells: memoryview) -> Raster:
    import numpy as np  # noqa: PLC0415

    shape = header["shape"]
    if not (isinstance(shape, list) and len(shape) in (2, 3)
            and all(isinstance(n, int) and 0 < n <= 1_000_000 for n in shape)):  # fmt: skip
        raise ValueError("shape")
    dtype = np.dtype(str(header["dtype"]))
    if dtype.kind not in "iuf" or len(cells) != math.prod(shape) * dtype.itemsize:
        raise ValueError("cells")
    transform = header["transform"]
    if not (isinstance(transform, list) and all(isinstance(v, int | float) for v in transform)):
        raise ValueError("transform")
    nodata = header["nodata"]
    if nodata == "nan":
        nodata = math.nan
    elif nodata is not None and not isinstance(nodata, int | float):
        raise ValueError("nodata")
    crs = header["crs"]
    if not isinstance(crs, str) or len(crs) > 20_000:
        raise ValueError("crs")
    array = np.frombuffer(cells, dtype=dtype).reshape(shape)
    return Raster(array, tuple(transform), crs, nodata)


async def aload_raster(source: bytes | str | Path, **options: Any) -> RasterLayer:
    """:func:`load_raster` off the event loop."""
    return await offload(functools.partial(load_raster, source, **options))


def _is_frame(source: Any) -> bool:
    return all(hasattr(source, a) for a in ("to_crs", "crs", "geometry", "columns"))


def _load_frame(source: Any, name: str, crs: str | None, max_bytes: int, timeout_s: float) -> Layer:
    """A GeoDataFrame: pandas and shapely write its columns as JSON texts, in C, and the
    child zips them into features (far faster than building a dict per feature here)."""
    if source.crs is not None and source.crs.to_epsg() != 4326:
        source = source.to_crs(4326)
    try:
        (columns, rows, float_columns, floats), shapes = columns_rows_shapes(source)
    except ValueError as exc:
        raise IntakeError([f"cannot read the GeoDataFrame: {exc}"], source=name) from None
    text = frame_parts(columns, rows, float_columns, floats, shapes)
    return _judge_text(text, FRAME, "object", name, crs, max_bytes, timeout_s)


def _judge_text(
    text: bytes,
    fmt: str,
    kind: str,
    name: str,
    crs: str | None,
    max_bytes: int,
    timeout_s: float,
) -> Layer:
    """Judge an in-memory object written as text: the caller's own, so not held to
    ``max_bytes``, but to what its GeoJSON may decode to."""
    if len(text) > max_bytes * EXPANSION:
        raise IntakeError(
            [f"the object is {len(text):,} bytes as JSON, over {max_bytes * EXPANSION:,}"],
            source=name,
        )
    values, report = judge_confined(
        text,
        fmt,
        name=name,
        max_bytes=max(max_bytes, len(text)),
        timeout_s=timeout_s,
        format_name=kind,
        source_crs=crs,
    )
    return Layer(data=values, report=report)


def _json_text(value: Any) -> bytes:
    """An in-memory object as JSON text, a few thousand features per call.

    :mod:`json` keeps NaN and Infinity as literals (the child's validator refuses them
    where they matter; orjson would write null). Encoding the features in batches lets an
    event loop sharing this process run between them.
    """
    features = value.get("features") if isinstance(value, dict) else None
    if not isinstance(features, list) or len(features) <= BATCH:
        return json.dumps(value, default=_not_json).encode("utf-8", "surrogatepass")
    head = json.dumps({k: v for k, v in value.items() if k != "features"}, default=_not_json)
    parts = [
        json.dumps(features[i : i + BATCH], default=_not_json)[1:-1]
        for i in range(0, len(features), BATCH)
    ]
    body = ",".join(part for part in parts if part)
    text = head[:-1] + (", " if len(head) > 2 else "") + '"features": [' + body + "]}"
    return text.encode("utf-8", "surrogatepass")


def _refuse_too_deep(value: Any, name: str, crs: str | None) -> None:
    """Refuse an object nested past the interpreter's recursion limit, saying where.

    Such an object cannot become JSON text for the child. The walk finds the place: it
    stops at 64 levels, and nothing is repaired (a repair here would be hostile geometry
    in the host), so its cost is bounded by the size of the object and it is done here.
    """
    from geomint.intake.geojson import normalise  # noqa: PLC0415
    from geomint.intake.report import _Builder  # noqa: PLC0415

    _, problems = normalise([value], _Builder(source=name, source_crs=crs), repair=False)
    raise IntakeError(problems or [TOO_DEEP], source=name)


def _not_json(value: Any) -> Any:
    if isinstance(value, tuple):
        return list(value)
    item = getattr(value, "item", None)  # numpy scalars
    if callable(item):
        return item()
    raise TypeError(f"{type(value).__name__} is not a JSON value")


# The threads only wait for a confined child (and decode its answer): a dedicated pool, so
# slow sources queue here instead of filling the event loop's default executor.
_POOL = ThreadPoolExecutor(max_workers=MAX_CHILDREN + 2, thread_name_prefix="geomint-intake")


async def aload(
    source: bytes | str | Path | dict[str, Any] | Any,
    *,
    label: str | None = None,
    max_bytes: int = 25_000_000,
    timeout_s: float = 15.0,
    layer: str | None = None,
    allowed_networks: Sequence[str] = (),
    veto: Callable[[str], str | None] | None = None,
) -> Layer:
    """Load a source without blocking the event loop (see :func:`load`).

    The work runs on intake's own bounded thread pool, whose threads wait for the
    confined child; a slow source costs its own request, never the loop's executor.
    """
    return await offload(
        functools.partial(
            load,
            source,
            label=label,
            max_bytes=max_bytes,
            timeout_s=timeout_s,
            layer=layer,
            allowed_networks=allowed_networks,
            veto=veto,
        )
    )


async def offload(function: Callable[..., T], *args: Any) -> T:
    """Run ``function(*args)``, which loads through intake, on intake's own thread pool."""
    return await asyncio.get_running_loop().run_in_executor(_POOL, function, *args)


def _crs_name(source: Any) -> str | None:
    crs = getattr(source, "crs", None)
    if crs is None or isinstance(source, dict):
        return "EPSG:4326"
    return str(crs.to_string())


def _sniff(head: bytes, source: str, name: str, media_type: str) -> str:
    try:
        return sniff(head, name=name, media_type=media_type)
    except IntakeError as exc:
        raise IntakeError(exc.problems, source=source) from None


def _load_url(
    url: str,
    label: str | None,
    max_bytes: int,
    timeout_s: float,
    layer: str | None,
    allowed_networks: Sequence[str],
    veto: Callable[[str], str | None] | None,
) -> Layer:
    # httpx is imported only when a URL arrives: a local file needs no HTTP client.
    from geomint.http import FetchError, FetchPolicy, fetch  # noqa: PLC0415

    name = label or url
    policy = FetchPolicy(
        max_bytes=max_bytes,
        timeout_s=timeout_s,
        allowed_networks=tuple(allowed_networks),
        veto=veto,
    )
    try:
        fetched = fetch(url, policy)
    except FetchError as exc:
        raise IntakeError([exc.reason or str(exc)], source=name) from None
    path_name = urlsplit(fetched.final_url).path.rsplit("/", 1)[-1]
    fmt = _sniff(fetched.body[:_HEAD], name, path_name, fetched.content_type)
    return _load_data(fetched.body, fmt, name, max_bytes, timeout_s, layer)


def _load_data(
    data: bytes | Path, fmt: str, name: str, max_bytes: int, timeout_s: float, layer: str | None
) -> Layer:
    # Every source ends here, and nothing of it is parsed in this process: the confined
    # child parses, validates, repairs and measures it (the GeoJSON of any format is
    # bounded by _decoded's limit there, and its answer again here).
    values, report = judge_confined(
        data, fmt, name=name, max_bytes=max_bytes, timeout_s=timeout_s, layer=layer
    )
    return Layer(data=values, report=report)
