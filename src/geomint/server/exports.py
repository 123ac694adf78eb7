"""What the web app hands a person to take away: a layer as GeoJSON, CSV or GeoParquet, a
chart's data as CSV, and the names the files are saved under.

Everything here works on what the store holds (an entry version's GeoJSON, an analysis's
chart config); :mod:`.routes.exports` reads it and serves the result. Two rules hold for
every CSV written here:

- A text cell that a spreadsheet would read as a formula (one beginning with ``=``, ``+``,
  ``-``, ``@``, a tab or a carriage return) is written with a ``'`` in front (OWASP's
  advice against CSV injection): a property value from an uploaded file must not run in
  the person's spreadsheet. Numbers are written as numbers (``-3.5`` stays a number).
- A nested property value (an object or a list) is written as JSON text, as is any value
  of a column whose values are of mixed kinds in GeoParquet.

Layers keep their features' properties and geometry (a feature's top-level ``id`` is not
a column). In CSV the geometry is WKT, with ``lon`` and ``lat`` filled in for points.
"""

from __future__ import annotations

import csv
import io
import json
import re
import tempfile
import unicodedata
from collections.abc import Iterable, Iterator, Mapping
from typing import Any, Final
from urllib.parse import quote

__all__ = [
    "CHUNK_BYTES",
    "chart_csv",
    "content_disposition",
    "features_csv",
    "features_parquet",
    "safe_filename",
]

#: How much of a file one chunk of a streamed answer carries.
CHUNK_BYTES: Final = 1 << 20
#: Rows of CSV written before a chunk is handed on.
_ROWS_PER_CHUNK: Final = 2_000
#: The longest file name offered (before its extension), in characters.
_MAX_NAME: Final = 80
_INT64: Final = 1 << 63
_FORMULA_START: Final = ("=", "+", "-", "@", "\t", "\r")
# Control and format characters (newlines, NUL, bidi overrides, zero-width joiners) and the
# characters no file system or shell takes kindly to in a name.
_UNSAFE_IN_NAME: Final = re.compile(r'[\x00-\x1f\x7f-\x9f/\\:*?"<>|\u2028\u2029]')
_NOT_ASCII_SAFE: Final = re.compile(r"[^A-Za-z0-9._ ()+,-]")


def safe_filename(label: str, extension: str, *, default: str = "export") -> str:
    """A file name for ``label``: no path separators, control, format or reserved
    characters, not hidden, not too long, and never empty.

    Args:
        label: What the thing is called (an entry's label, a chart's name): any text.
        extension: The extension without its dot (``"csv"``).
        default: The name when nothing of ``label`` is left.

    Examples:
        >>> safe_filename('Cafés "near" ../../etc/passwd\\n', "csv")
        'Cafés _near_ .._.._etc_passwd.csv'
        >>> safe_filename("...", "geojson")
        'export.geojson'
    """
    text = unicodedata.normalize("NFC", label)
    text = "".join("_" if unicodedata.category(c) == "Cf" else c for c in text)
    text = _UNSAFE_IN_NAME.sub("_", text)
    text = " ".join(text.split())[:_MAX_NAME].strip(" ._")
    return f"{text or default}.{extension}"


def content_disposition(label: str, extension: str, *, default: str = "export") -> str:
    """A ``Content-Disposition: attachment`` value naming the file after ``label``: an
    ASCII ``filename`` for old clients and the full name as RFC 5987 ``filename*``.

    Examples:
        >>> print(content_disposition("Töölö", "csv"))
        attachment; filename="Toolo.csv"; filename*=UTF-8''T%C3%B6%C3%B6l%C3%B6.csv
    """
    name = safe_filename(label, extension, default=default)
    plain = unicodedata.normalize("NFKD", name.replace("\u2013", "-").replace("\u2014", "-"))
    plain = _NOT_ASCII_SAFE.sub("_", plain.encode("ascii", "ignore").decode())
    stem = plain.removesuffix(f".{extension}").strip(" ._")
    plain = f"{stem or default}.{extension}"
    return f"attachment; filename=\"{plain}\"; filename*=UTF-8''{quote(name, safe='')}"


def _cell(value: Any) -> Any:
    """A property value as a CSV cell: numbers as they are, booleans and nested values as
    JSON text, text neutralised against formulas."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return value
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
    return f"'{text}" if text.startswith(_FORMULA_START) else text


def _unique(name: str, taken: Iterable[str]) -> str:
    used = set(taken)
    while name in used:
        name = f"_{name}"
    return name


def _csv_chunks(header: list[str], rows: Iterable[list[Any]]) -> Iterator[bytes]:
    """CSV as UTF-8 chunks (with a byte-order mark, so spreadsheets read it as UTF-8)."""
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\r\n")
    writer.writerow([_cell(h) for h in header])
    first = True
    for i, row in enumerate(rows, 1):
        writer.writerow([_cell(v) for v in row])
        if i % _ROWS_PER_CHUNK == 0:
            yield (("\ufeff" if first else "") + buffer.getvalue()).encode()
            first = False
            buffer.seek(0)
            buffer.truncate()
    yield (("\ufeff" if first else "") + buffer.getvalue()).encode()


def _property_names(features: list[Mapping[str, Any]]) -> list[str]:
    names: dict[str, None] = {}
    for feature in features:
        names.update(dict.fromkeys(feature.get("properties") or {}))
    return list(names)


def features_csv(collection: Mapping[str, Any]) -> Iterator[bytes]:
    """A FeatureCollection as CSV chunks: one column per property (in the order they first
    appear), then the geometry as WKT, then ``lon`` and ``lat`` (points only).

    A property that shares a geometry column's name keeps it; the three geometry columns
    then get a ``_`` in front (``_wkt``, ``_lon``, ``_lat``).
    """
    from shapely.geometry import shape  # noqa: PLC0415 - shapely loads in ~0.1 s

    features = list(collection.get("features") or [])
    names = _property_names(features)
    wkt, lon, lat = "wkt", "lon", "lat"
    while {wkt, lon, lat} & set(names):
        wkt, lon, lat = f"_{wkt}", f"_{lon}", f"_{lat}"

    def rows() -> Iterator[list[Any]]:
        for feature in features:
            properties = feature.get("properties") or {}
            geometry = feature.get("geometry")
            row: list[Any] = [properties.get(n) for n in names]
            if not geometry:
                yield [*row, None, None, None]
                continue
            point = geometry.get("type") == "Point" and geometry.get("coordinates")
            x, y = (point[0], point[1]) if point else (None, None)
            yield [*row, shape(geometry).wkt, x, y]

    return _csv_chunks([*names, wkt, lon, lat], rows())


def _column(values: list[Any]) -> Any:
    """One property's values as a column GeoParquet can hold: kept when they are of one
    kind (numbers, text or booleans), else each written as JSON text."""
    present = [v for v in values if v is not None]
    if all(isinstance(v, bool) for v in present) or all(isinstance(v, str) for v in present):
        return values
    if all(type(v) is int and -_INT64 <= v < _INT64 for v in present):
        import pandas  # noqa: PLC0415

        # Whole numbers with gaps stay whole (pandas would make them floats).
        return pandas.array(values, dtype="Int64") if None in values else values
    if all(isinstance(v, float) or (type(v) is int and -_INT64 <= v < _INT64) for v in present):
        return values
    return [
        None if v is None else v if isinstance(v, str) else json.dumps(v, ensure_ascii=False)
        for v in values
    ]


def features_parquet(collection: Mapping[str, Any]) -> Any:
    """A FeatureCollection as GeoParquet (CRS EPSG:4326) in a temporary file, rewound.

    The geometry column is ``geometry`` (``_geometry`` when a property has that name).

    The file (a ``SpooledTemporaryFile``: memory up to 16 MB, then disk) is the caller's
    to read and close.
    """
    import geopandas  # noqa: PLC0415 - geopandas and pyarrow load in about a second
    from shapely.geometry import shape  # noqa: PLC0415

    features = list(collection.get("features") or [])
    names = _property_names(features)
    geometry_name = _unique("geometry", names)
    columns = {
        name: _column([(f.get("properties") or {}).get(name) for f in features]) for name in names
    }
    geometries = [shape(f["geometry"]) if f.get("geometry") else None for f in features]
    columns[geometry_name] = geopandas.GeoSeries(geometries, crs="EPSG:4326")
    frame = geopandas.GeoDataFrame(columns, geometry=geometry_name, crs="EPSG:4326")
    out = tempfile.SpooledTemporaryFile(max_size=16 << 20)  # noqa: SIM115 - the caller closes it
    frame.to_parquet(out, index=False)
    out.seek(0)
    return out


def chart_csv(config: Mapping[str, Any]) -> Iterator[bytes]:
    """A Chart.js config's data as CSV chunks.

    Category charts (``labels`` and datasets of numbers) give one row per label and one
    column per dataset; charts of points (scatter, bubble: datasets of ``{x, y, r}``) give
    one row per point, with its dataset's name.
    """
    data = config.get("data") or {}
    datasets = [d for d in data.get("datasets") or [] if isinstance(d, Mapping)]
    names = [str(d.get("label") or f"dataset {i}") for i, d in enumerate(datasets, 1)]
    series: list[list[Any]] = [
        d["data"] if isinstance(d.get("data"), list) else [] for d in datasets
    ]
    if any(isinstance(v, Mapping) for values in series for v in values):
        keys: dict[str, None] = {}
        for values in series:
            for v in values:
                keys.update(dict.fromkeys(v if isinstance(v, Mapping) else ("y",)))
        points = [
            [name, *((v if isinstance(v, Mapping) else {"y": v}).get(k) for k in keys)]
            for name, values in zip(names, series, strict=True)
            for v in values
        ]
        return _csv_chunks(["dataset", *keys], points)
    labels: list[Any] = data["labels"] if isinstance(data.get("labels"), list) else []
    length = max([len(labels), *(len(v) for v in series)], default=0)

    def at(values: list[Any], i: int) -> Any:
        return values[i] if i < len(values) else None

    rows = [[at(labels, i), *(at(v, i) for v in series)] for i in range(length)]
    return _csv_chunks(["label", *names], rows)
