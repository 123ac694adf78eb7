"""Big layers by reference: columns cross the boundary, not one object per feature.

An :class:`Entry` holds a layer as an Arrow table, converted once when it is made. The
host writes each ``(id, version)`` once as an Arrow IPC file in a private directory on
``/dev/shm`` and hands the child a read-only descriptor; the child maps it (no copy) and
sees a FeatureCollection whose ``features`` are built only when the code reads them, or a
GeoDataFrame straight from the columns with ``.to_geodataframe()``.

Building a million feature dicts costs about a second however it is done (it is four
million Python objects); building them from columns with the garbage collector paused is
the fastest honest way, which is why this module exists instead of ``json.loads``.
"""

from __future__ import annotations

import contextlib
import functools
import gc
import json
import math
import mmap
import os
import tempfile
import threading
from collections import OrderedDict
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any, Final

from geomint.geo.raster import Raster

__all__ = [
    "ENTRY_MARKER",
    "RASTER_MEDIA_TYPE",
    "Entry",
    "EntryFiles",
    "LazyFeatureCollection",
    "Raster",
    "bytes_raster",
    "is_raster_table",
    "open_entry",
    "raster_bytes",
    "raster_to_table",
    "replace_entries",
    "resolve_entries",
    "table_collection",
    "table_raster",
]

_META_KEY: Final = b"geomint"

#: Set in the short-lived sandbox child only: move built features out of the collector's
#: sight. A long-lived process must not, since frozen objects are never collected.
freeze_built = False
_SCALARS: Final = (str, int, float, bool, type(None))


@dataclass(frozen=True, slots=True)
class Entry:
    """A layer passed by reference, so the sandbox can keep what it already has.

    Example:
        >>> fc = {"type": "FeatureCollection", "features": [{"type": "Feature",
        ...       "geometry": {"type": "Point", "coordinates": [13.4, 52.5]},
        ...       "properties": {"name": "Mitte"}}]}
        >>> Entry("places-1", 1, fc).feature_count
        1

    Args:
        id: The entry id (``places-1``).
        version: The entry's version; a new version is a new layer to the sandbox.
        data: A GeoJSON FeatureCollection (dict), a GeoDataFrame or a
            :class:`~geomint.geo.raster.Raster`.
    """

    id: str
    version: int
    data: Any = field(repr=False)
    table: Any = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "table", _to_table(self.data))
        object.__setattr__(self, "data", None)  # the columns are the copy we keep

    @property
    def key(self) -> tuple[str, int]:
        """``(id, version)``: what the sandbox caches by."""
        return (self.id, self.version)

    @property
    def feature_count(self) -> int:
        """Number of features in the layer (0 for a raster)."""
        return 0 if is_raster_table(self.table) else int(self.table.num_rows)

    def preview(self, rows: int = 3) -> dict[str, Any] | Raster:
        """The first few features as GeoJSON (for error hints that name properties); a
        raster as itself (its cells are not copied)."""
        if is_raster_table(self.table):
            return table_raster(self.table)
        return dict(LazyFeatureCollection(self.table.slice(0, rows)).items())


def _to_table(data: Any) -> Any:
    import pyarrow as pa  # noqa: PLC0415 - only hosts that pass entries pay for pyarrow

    if type(data).__name__ == "GeoDataFrame":
        return _frame_to_table(data)
    if isinstance(data, Raster):
        return raster_to_table(data)
    if not (isinstance(data, Mapping) and data.get("type") == "FeatureCollection"):
        raise TypeError(
            "Entry data must be a GeoJSON FeatureCollection or a GeoDataFrame, "
            f"got {type(data).__name__}"
        )
    features = data.get("features") or []
    meta = {k: v for k, v in data.items() if k not in {"type", "features"}}
    was_enabled = gc.isenabled()
    gc.disable()  # building columns from a million dicts: nothing to collect meanwhile
    try:
        geometries = [f.get("geometry") for f in features]
        points = bool(geometries) and all(
            g is not None and g.get("type") == "Point" and len(g["coordinates"]) == 2
            for g in geometries
        )
        columns: dict[str, Any] = {}
        if points:
            columns["__x"] = pa.array([g["coordinates"][0] for g in geometries], pa.float64())
            columns["__y"] = pa.array([g["coordinates"][1] for g in geometries], pa.float64())
        else:
            columns["__geojson"] = pa.array(
                [json.dumps(g) if g else None for g in geometries], pa.large_string()
            )
        if any("id" in f for f in features):
            columns["__id"] = pa.array([json.dumps(f.get("id")) for f in features])
        properties = [f.get("properties") or {} for f in features]
        names: dict[str, None] = {}
        for p in properties:
            names.update(dict.fromkeys(p))
        encoded = []
        for name in names:
            values = [p.get(name) for p in properties]
            column = _scalar_array(pa, values)
            if column is None:
                column = pa.array([json.dumps(v) for v in values], pa.large_string())
                encoded.append(name)
            columns[name] = column
    finally:
        if was_enabled:
            gc.enable()
    schema_meta = {"kind": "xy" if points else "geojson", "json": encoded, "meta": meta,
                   "properties": list(names)}  # fmt: skip
    table = pa.table(columns)
    return table.replace_schema_metadata({_META_KEY: json.dumps(schema_meta)})


def raster_to_table(raster: Raster) -> Any:
    """A raster as one Arrow column of its cells (row-major), its grid in the metadata.

    The column is the array's own memory where it is contiguous: nothing is copied until
    the file is written, and the child maps the file back into an array without a copy.
    """
    import numpy as np  # noqa: PLC0415
    import pyarrow as pa  # noqa: PLC0415

    cells = np.ascontiguousarray(raster.array).reshape(-1)
    info = {
        "kind": "raster",
        "shape": list(raster.array.shape),
        "dtype": raster.array.dtype.name,
        "transform": list(raster.transform),
        "crs": raster.crs,
        "nodata": _nodata_text(raster.nodata),
        "label": raster.label,
    }
    table = pa.table({"__raster": pa.array(cells)})
    return table.replace_schema_metadata({_META_KEY: json.dumps(info)})


def _nodata_text(nodata: float | None) -> float | str | None:
    # JSON has no NaN: the metadata says it as text, as GDAL does.
    return nodata if nodata is None or not math.isnan(nodata) else "nan"


def table_raster(table: Any) -> Raster:
    """The raster an Arrow table holds (see :func:`raster_to_table`), without a copy."""
    info = json.loads(table.schema.metadata[_META_KEY])
    column = table.column("__raster")
    cells = column.chunk(0).to_numpy(zero_copy_only=True) if column.num_chunks == 1 else (
        column.to_numpy()
    )  # fmt: skip
    nodata = info["nodata"]
    return Raster(
        cells.reshape(info["shape"]),
        tuple(info["transform"]),
        info["crs"],
        float("nan") if nodata == "nan" else nodata,
        label=info.get("label", ""),
    )


#: The media type a raster entry's stored bytes have: an Arrow IPC file of
#: :func:`raster_to_table`, compressed with zstd.
RASTER_MEDIA_TYPE: Final = "application/vnd.geomint.raster+arrow"


def raster_bytes(raster: Raster) -> bytes:
    """A raster as stored: an Arrow IPC file, its cells compressed (zstd)."""
    import pyarrow as pa  # noqa: PLC0415

    table = raster_to_table(raster)
    sink = pa.BufferOutputStream()
    options = pa.ipc.IpcWriteOptions(compression="zstd")
    with pa.ipc.new_file(sink, table.schema, options=options) as writer:
        writer.write_table(table)
    return bytes(sink.getvalue().to_pybytes())


def bytes_raster(data: bytes) -> Raster:
    """The raster :func:`raster_bytes` stored.

    Raises:
        ValueError: The bytes are not a stored raster.
    """
    import pyarrow as pa  # noqa: PLC0415

    try:
        table = pa.ipc.open_file(pa.py_buffer(data)).read_all()
        if not is_raster_table(table):
            raise ValueError("the stored bytes are not a raster")
        return table_raster(table)
    except (pa.ArrowException, KeyError, TypeError, json.JSONDecodeError) as exc:
        raise ValueError(f"the stored raster could not be read: {exc}") from None


def is_raster_table(table: Any) -> bool:
    """Whether an entry table holds a raster."""
    return bool(json.loads(table.schema.metadata[_META_KEY]).get("kind") == "raster")


def _scalar_array(pa: Any, values: list[Any]) -> Any:
    if not all(isinstance(v, _SCALARS) for v in values):
        return None
    try:
        array = pa.array(values)
    except (pa.ArrowInvalid, pa.ArrowTypeError, OverflowError):
        return None
    return array


def _frame_to_table(frame: Any) -> Any:
    import pyarrow as pa  # noqa: PLC0415
    import shapely  # noqa: PLC0415

    if frame.crs is not None and not frame.crs.equals("EPSG:4326"):
        frame = frame.to_crs(4326)
    geometry = frame.geometry
    props = frame.drop(columns=[frame.geometry.name])
    points = len(frame) > 0 and bool((geometry.geom_type == "Point").all())
    columns: dict[str, Any] = {}
    if points:
        columns["__x"] = pa.array(geometry.x.to_numpy(), pa.float64())
        columns["__y"] = pa.array(geometry.y.to_numpy(), pa.float64())
    else:
        texts = shapely.to_geojson(geometry.to_numpy())
        columns["__geojson"] = pa.array(list(texts), pa.large_string())
    table = pa.Table.from_pandas(props, preserve_index=False)
    for name, column in columns.items():
        table = table.append_column(name, column)
    schema_meta: dict[str, Any] = {"kind": "xy" if points else "geojson", "json": [], "meta": {},
                   "properties": [str(c) for c in props.columns]}  # fmt: skip
    return table.replace_schema_metadata({_META_KEY: json.dumps(schema_meta)})


class EntryFiles:
    """The host's files of entries: one per ``(id, version)``, written once, kept open.

    The files live in a private (0700) directory on ``/dev/shm`` when it exists, so a
    child maps them from memory; old versions are dropped past ``max_bytes``.
    """

    def __init__(self, *, max_bytes: int = 4 << 30) -> None:
        base = "/dev/shm" if os.path.isdir("/dev/shm") else None  # noqa: S108
        self.directory = tempfile.mkdtemp(prefix="geomint-entries-", dir=base)
        self.max_bytes = max_bytes
        self._files: OrderedDict[tuple[str, int], tuple[int, int, Any]] = OrderedDict()
        self._lock = threading.Lock()

    def descriptor(self, entry: Entry) -> int:
        """A read-only descriptor of the entry's file, writing it on first use."""
        import pyarrow as pa  # noqa: PLC0415

        with self._lock:
            known = self._files.get(entry.key)
            if known is not None:
                if known[2] is not entry.table and not known[2].equals(entry.table):
                    raise ValueError(
                        f"entry {entry.id} version {entry.version} was passed before with "
                        "different data; give changed data a new version"
                    )
                self._files.move_to_end(entry.key)
                return int(known[0])
            fd, path = tempfile.mkstemp(dir=self.directory, suffix=".arrow")
            try:
                with pa.OSFile(path, "wb") as sink, pa.ipc.new_file(sink, entry.table.schema) as w:
                    w.write_table(entry.table)
                size = os.path.getsize(path)
                readonly = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
            finally:
                os.close(fd)
                os.unlink(path)  # the descriptor keeps the data; no name left to find
            self._files[entry.key] = (readonly, size, entry.table)
            self._evict()
            return readonly

    def _evict(self) -> None:
        total = sum(size for _, size, _ in self._files.values())
        while total > self.max_bytes and len(self._files) > 1:
            _, (fd, size, _) = self._files.popitem(last=False)
            os.close(fd)
            total -= size

    def close(self) -> None:
        """Close every file and remove the directory."""
        with self._lock:
            for fd, _, _ in self._files.values():
                with contextlib.suppress(OSError):
                    os.close(fd)
            self._files.clear()
        with contextlib.suppress(OSError):
            os.rmdir(self.directory)


ENTRY_MARKER: Final = "$geomint_entry"


def replace_entries(inputs: Mapping[str, Any], handle: Callable[[Entry], Any]) -> dict[str, Any]:
    """Swap every :class:`Entry` in ``inputs`` (a value, or a value of a value) for
    ``handle(entry)``; other values are kept as they are."""
    out: dict[str, Any] = {}
    for name, value in inputs.items():
        if isinstance(value, Entry):
            out[name] = handle(value)
        elif isinstance(value, Mapping) and any(isinstance(v, Entry) for v in value.values()):
            out[name] = {k: handle(v) if isinstance(v, Entry) else v for k, v in value.items()}
        else:
            out[name] = value
    return out


def resolve_entries(inputs: dict[str, Any], load: Callable[[int], Any]) -> dict[str, Any]:
    """The child's side of :func:`replace_entries`: markers become lazy collections."""

    def swap(value: Any) -> Any:
        if isinstance(value, dict) and len(value) == 1 and ENTRY_MARKER in value:
            return load(int(value[ENTRY_MARKER]))
        return value

    for name, value in inputs.items():
        if isinstance(value, dict):
            if len(value) == 1 and ENTRY_MARKER in value:
                inputs[name] = swap(value)
            else:
                for key, item in value.items():
                    value[key] = swap(item)
    return inputs


def open_entry(fd: int) -> LazyFeatureCollection | Raster:
    """Map an entry file (zero copy): a lazy FeatureCollection, or a read-only raster."""
    import pyarrow as pa  # noqa: PLC0415

    mapped = mmap.mmap(fd, 0, prot=mmap.PROT_READ)
    table = pa.ipc.open_file(pa.py_buffer(mapped)).read_all()
    return table_collection(table)


def table_collection(table: Any) -> LazyFeatureCollection | Raster:
    """Wrap an entry's table as the code sees it: a lazy FeatureCollection or a raster."""
    if is_raster_table(table):
        return table_raster(table)
    return LazyFeatureCollection(table)


class LazyFeatureCollection(dict[str, Any]):
    """A GeoJSON FeatureCollection whose ``features`` are built on first read.

    It is a real ``dict``: ``fc["features"]``, ``fc.get("features")``, iteration and
    ``len`` all work; mutating it is local to this call. ``to_geodataframe()`` builds a
    GeoDataFrame (EPSG:4326) straight from the columns, without any per-feature objects,
    and returns the same frame if called again in the same call.
    """

    __slots__ = ("_built", "_columns", "_frame", "_info", "_table", "used_features",
                 "used_frame")  # fmt: skip

    def __init__(self, table: Any) -> None:
        info = json.loads(table.schema.metadata[_META_KEY])
        super().__init__(type="FeatureCollection", **info["meta"])
        self._table = table
        self._info = info
        self._frame: Any = None
        self._columns: list[list[Any]] | None = None
        self._built: list[dict[str, Any]] = []
        self.used_features = False
        self.used_frame = False

    def build(self, *, stop: Callable[[], bool] | None = None, chunk: int = 50_000) -> bool:
        """Build the features, chunk by chunk; return False if ``stop()`` said to pause.

        The spare child builds ahead what the last call read, and pauses as soon as a
        request is waiting; whatever is left is finished when the code reads it.
        """
        if super().__contains__("features"):
            return True
        was_enabled = gc.isenabled()
        gc.disable()  # millions of new objects: a collection pass would find no garbage
        try:
            if self._columns is None:
                self._columns = _feature_columns(self._table, self._info)
            names: list[str] = self._info["properties"]
            builder = _builder(self._info["kind"], len(names))
            total = self._table.num_rows
            while len(self._built) < total:
                if stop is not None and stop():
                    return False
                lo = len(self._built)
                hi = min(total, lo + chunk)
                self._built.extend(builder(*(c[lo:hi] for c in self._columns), *names))
            if "__id" in self._table.column_names:
                for feature, raw in zip(self._built, _pylist(self._table.column("__id")),
                                        strict=True):  # fmt: skip
                    feature["id"] = json.loads(raw)
            super().__setitem__("features", self._built)
            self._columns = None
            if freeze_built:
                # Otherwise the next collections walk every new object, generation by
                # generation: half a second per million features for nothing.
                gc.freeze()
            return True
        finally:
            if was_enabled:
                gc.enable()

    def __getitem__(self, key: str) -> Any:
        if key == "features":
            self.used_features = True
            self.build()
        return super().__getitem__(key)

    def _materialise(self) -> None:
        self.used_features = True
        self.build()

    def get(self, key: str, default: Any = None) -> Any:
        """Like ``dict.get``, building the features when they are asked for."""
        if key == "features":
            self._materialise()
        return super().get(key, default)

    def __contains__(self, key: object) -> bool:
        return key == "features" or super().__contains__(key)

    def __iter__(self) -> Iterator[str]:
        self._materialise()
        return super().__iter__()

    def __len__(self) -> int:
        self._materialise()
        return super().__len__()

    def keys(self) -> Any:
        """Like ``dict.keys``, features included."""
        self._materialise()
        return super().keys()

    def items(self) -> Any:
        """Like ``dict.items``, features included."""
        self._materialise()
        return super().items()

    def values(self) -> Any:
        """Like ``dict.values``, features included."""
        self._materialise()
        return super().values()

    def __repr__(self) -> str:
        return f"<FeatureCollection of {self._table.num_rows} features>"

    def to_geodataframe(self) -> Any:
        """The layer as a GeoDataFrame in EPSG:4326, built from columns (fast)."""
        self.used_frame = True
        if self._frame is None:
            self._frame = _frame(self._table, self._info)
        return self._frame

    def prepare_frame(self) -> None:
        """Build the GeoDataFrame ahead of the call (the spare child's work)."""
        if self._frame is None:
            self._frame = _frame(self._table, self._info)


def _frame(table: Any, info: dict[str, Any]) -> Any:
    was_enabled = gc.isenabled()
    gc.disable()  # a million new geometry objects: collections would find no garbage
    try:
        frame = _frame_from_columns(table, info)
        if freeze_built:
            gc.freeze()
        return frame
    finally:
        if was_enabled:
            gc.enable()


def _frame_from_columns(table: Any, info: dict[str, Any]) -> Any:
    import geopandas as gpd  # noqa: PLC0415
    import pandas as pd  # noqa: PLC0415
    import shapely  # noqa: PLC0415

    names = info["properties"]
    frame = table.select(names).to_pandas(use_threads=False) if names else pd.DataFrame()
    if info["kind"] == "xy":
        geometry = shapely.points(table.column("__x").to_numpy(), table.column("__y").to_numpy())
    else:
        geometry = shapely.from_geojson(table.column("__geojson").to_numpy(zero_copy_only=False))
    for name in info["json"]:
        frame[name] = [json.loads(v) for v in frame[name]]
    return gpd.GeoDataFrame(frame, geometry=geometry, crs="EPSG:4326")


def _feature_columns(table: Any, info: dict[str, Any]) -> list[list[Any]]:
    """Geometry then property columns as Python lists, ready for the builder."""
    if info["kind"] == "xy":
        geometry = [_pylist(table.column("__x")), _pylist(table.column("__y"))]
    else:
        geometry = [[json.loads(g) if g else None for g in _pylist(table.column("__geojson"))]]
    columns = []
    for name in info["properties"]:
        values = _pylist(table.column(name))
        columns.append([json.loads(v) for v in values] if name in info["json"] else values)
    return [*geometry, *columns]


@functools.cache
def _builder(kind: str, count: int) -> Callable[..., list[dict[str, Any]]]:
    """A comprehension with a dict literal per feature, for ``count`` properties.

    A literal is about a third faster than ``dict(zip(names, row))`` per feature. Only the
    number of properties shapes the generated text; the names and values are arguments,
    so nothing from the data ever becomes code.
    """
    values = [f"v{i}" for i in range(count)]
    keys = [f"k{i}" for i in range(count)]
    properties = "{" + ", ".join(f"{k}: {v}" for k, v in zip(keys, values, strict=True)) + "}"
    if kind == "xy":
        geometry, loop, sources = ("{'type': 'Point', 'coordinates': [x, y]}", "x, y",
                                   ["xs", "ys"])  # fmt: skip
    else:
        geometry, loop, sources = "g", "g", ["gs"]
    targets = ", ".join([*loop.split(", "), *values])
    iterables = ", ".join([*sources, *[f"c{i}" for i in range(count)]])
    params = ", ".join([*sources, *[f"c{i}" for i in range(count)], *keys])
    text = (
        f"lambda {params}: [{{'type': 'Feature', 'geometry': {geometry}, "
        f"'properties': {properties}}} for {targets} in zip({iterables})]"
    )
    function: Callable[..., list[dict[str, Any]]] = eval(text, {"__builtins__": {"zip": zip}})  # noqa: S307
    return function


def _pylist(column: Any) -> list[Any]:
    """A column as Python values; a column of few distinct values shares one object each.

    Sharing matters for a million features: a category column otherwise becomes a
    million separate strings, and on a VM every new page of memory is slow to touch the
    first time (see docs/performance.md). The values are immutable, so sharing is safe.
    """
    import numpy as np  # noqa: PLC0415
    import pyarrow as pa  # noqa: PLC0415

    kind = column.type
    plain = pa.types.is_floating(kind) or pa.types.is_integer(kind) or pa.types.is_string(kind)
    if plain and column.null_count == 0 and len(column) >= _SHARE_FROM:
        sample = column.slice(0, _SHARE_SAMPLE).combine_chunks().dictionary_encode()
        if len(sample.dictionary) * 4 <= min(len(column), _SHARE_SAMPLE):
            encoded = column.combine_chunks().dictionary_encode()
            uniques = np.array([*encoded.dictionary.to_pylist(), None], dtype=object)[:-1]
            return list(uniques[encoded.indices.to_numpy()].tolist())
    if (pa.types.is_floating(kind) or pa.types.is_integer(kind)) and column.null_count == 0:
        return list(column.to_numpy().tolist())  # much faster than to_pylist for numbers
    return list(column.to_pylist())


_SHARE_FROM: Final = 10_000
_SHARE_SAMPLE: Final = 10_000
