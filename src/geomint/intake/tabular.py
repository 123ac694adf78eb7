"""CSV with longitude/latitude or WKT columns, to a GeoJSON FeatureCollection dict.

CSV is parsed here, in the application process, by Arrow's CSV reader: it allocates in
proportion to the input, which the byte cap already bounds, and it has no format-driven
code paths the way GDAL's binary drivers do.

Every column is read as text. A property column becomes numbers only when each of its
values is written the way a number is (``12``, ``-0.5``, ``1e-05``): ``007`` and ``01234``
stay text, as do values with a ``+``, spaces or thousands separators, or more digits than
a double holds.
"""

from __future__ import annotations

import csv
import io
import json
import re
from decimal import Decimal
from typing import Any

from geomint.intake._decoded import counted, table_bytes, too_large
from geomint.intake._parse import MAX_DEPTH
from geomint.intake._table_json import feature_collection, records, table_json
from geomint.intake.errors import IntakeError

__all__ = ["read_csv"]

_LON = ("lon", "lng", "long", "longitude", "x")
_LAT = ("lat", "latitude", "y")
_WKT = ("wkt", "geometry", "geom", "the_geom", "wkt_geom", "shape")
_DELIMITERS = (",", ";", "\t", "|")
_SHOWN_ROWS = 5
_LINE_END = re.compile(r"\r\n|\r|\n")
# What a point costs at the least as GeoJSON.
_POINT_BYTES = len('{"type":"Point","coordinates":[0.0,0.0]}')

# A number written the one way that reads back as itself: no sign but "-", no leading
# zeros ("0" and "0.5" aside), no spaces, no thousands separators, no "-0". Plain enough
# for RE2, which pandas hands the match to when Arrow holds the text.
_NUMBER = r"(?:0|-?(?:[1-9][0-9]*(?:\.[0-9]+)?|0\.[0-9]+))(?:[eE][-+]?[0-9]+)?"
# Sixteen digits or more: a double may not hold them all.
_LONG = r"(?:[0-9]\.?){16}"


def _text(raw: bytes, source: str) -> str:
    raw = raw.removeprefix(b"\xef\xbb\xbf")
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = raw.count(b"\n", 0, exc.start) + 1
        raise IntakeError(
            [
                f"the CSV is not UTF-8 text: byte 0x{raw[exc.start]:02x} at byte offset "
                f"{exc.start} (line {line}); re-save it as UTF-8"
            ],
            source=source,
        ) from None


def _header(text: str, source: str) -> tuple[str, list[str]]:
    first = _LINE_END.split(text, maxsplit=1)[0]
    if not first.strip():
        raise IntakeError(["the CSV is empty: it has no header line"], source=source)
    delimiter = max(_DELIMITERS, key=first.count)
    try:
        names = next(csv.reader([first], delimiter=delimiter))
    except csv.Error as exc:
        raise IntakeError(
            [f"the CSV header line cannot be read ({exc}); fix the first line"], source=source
        ) from None
    seen: set[str] = set()
    for name in names:
        if name in seen and name.strip():
            raise IntakeError(
                [f"the CSV header names column {name!r} twice; rename one of them"],
                source=source,
            )
        seen.add(name)
    return delimiter, names


def _table(text: str, delimiter: str, names: list[str], source: str) -> Any:
    """Read every field as text (empty ones as null) into a pandas DataFrame.

    Arrow's CSV reader does it in C++ and, unlike pandas, refuses a row whose field count
    differs from the header's rather than padding it with empty values.
    """
    import pyarrow as pa  # noqa: PLC0415
    import pyarrow.csv as pa_csv  # noqa: PLC0415

    # Unnamed columns get names no header can hold, so that they stay apart.
    labels = [n if n.strip() else f"\x00{i}" for i, n in enumerate(names)]
    ragged: list[str] = []

    def stop_at_ragged(row: Any) -> str:
        if not row.text.strip():
            return "skip"  # a line of spaces is a blank line, as pandas reads it
        ragged.append(row.text)
        return "error"

    # Arrow cannot skip a header line that has no line break after it.
    data = text.encode("utf-8") + (b"" if text.endswith(("\n", "\r")) else b"\n")
    try:
        table = pa_csv.read_csv(
            io.BytesIO(data),
            read_options=pa_csv.ReadOptions(
                column_names=labels, skip_rows=1, block_size=max(1 << 20, len(data) + 1)
            ),
            parse_options=pa_csv.ParseOptions(
                delimiter=delimiter, newlines_in_values=True, invalid_row_handler=stop_at_ragged
            ),
            convert_options=pa_csv.ConvertOptions(
                column_types=dict.fromkeys(labels, pa.string()),
                null_values=[""],
                strings_can_be_null=True,
            ),
        )
    except pa.ArrowInvalid as exc:
        if ragged:
            raise IntakeError([_ragged(text, delimiter, names, ragged[0])], source=source) from None
        message = str(exc).strip().splitlines()[-1][:200]
        raise IntakeError(
            [f"the CSV cannot be read ({message}); fix that line"], source=source
        ) from None
    return table.to_pandas()


def _ragged(text: str, delimiter: str, names: list[str], row_text: str) -> str:
    """Say which line has a field count other than the header's (only on refusal)."""
    limit = csv.field_size_limit()
    csv.field_size_limit(max(limit, len(text)))  # a WKT polygon may be one long field
    try:
        rows = csv.reader(io.StringIO(text, newline=""), delimiter=delimiter)
        for row in rows:
            if row and any(f.strip() for f in row) and len(row) != len(names):
                where, count = f"line {rows.line_num}", len(row)
                break
        else:
            where, count = f"the row {row_text[:80]!r}", row_text.count(delimiter) + 1
    except csv.Error:
        where, count = f"the row {row_text[:80]!r}", row_text.count(delimiter) + 1
    finally:
        csv.field_size_limit(limit)
    fields = f"{count} field{'s' if count != 1 else ''}"
    return (
        f"the CSV rows do not line up with its header: {where} has {fields}, the header "
        f"{len(names)}; fix that line"
    )


def _unnamed(frame: Any, names: list[str], source: str) -> Any:
    """Drop the columns the header leaves unnamed (Excel's trailing ``,,``) if empty."""
    unnamed = [c for c, n in zip(frame.columns, names, strict=True) if not n.strip()]
    for position, column in enumerate(frame.columns):
        if column in unnamed and frame[column].notna().any():
            first = int(frame[column].notna().to_numpy().nonzero()[0][0])
            raise IntakeError(
                [
                    f"column {position + 1} has no name in the CSV header but holds values "
                    f"({_rows([first])}); name it in the header"
                ],
                source=source,
            )
    return frame.drop(columns=unnamed)


def _typed(column: Any) -> Any:
    """Return a text column as numbers if every value is written as one, else as it is."""
    import numpy as np  # noqa: PLC0415

    present = column.dropna()
    if present.empty or not present.str.fullmatch(_NUMBER).all():
        return column
    if not present.str.contains("[.eE]").any():
        try:
            numbers = present.astype("int64")
        except (OverflowError, ValueError):
            return column  # an integer beyond 64 bits
        return (
            numbers.astype("Int64").reindex(column.index) if len(present) < len(column) else numbers
        )
    numbers = present.astype("float64")
    if not np.isfinite(numbers.to_numpy()).all():
        return column  # "1e999"
    long = present[present.str.contains(_LONG)].tolist()
    if any(Decimal(v) != Decimal(repr(float(v))) for v in long):
        return column  # more digits than a double holds
    return numbers.reindex(column.index)


def _pick(names: list[str], wanted: tuple[str, ...]) -> str | None:
    by_lower = {n.strip().lower(): n for n in names}
    return next((by_lower[w] for w in wanted if w in by_lower), None)


def _rows(where: list[int]) -> str:
    shown = ", ".join(str(i + 2) for i in where[:_SHOWN_ROWS])
    more = f" and {len(where) - _SHOWN_ROWS} more" if len(where) > _SHOWN_ROWS else ""
    return f"line{'s' if len(where) > 1 else ''} {shown}{more}"


def _numbers(column: Any, delimiter: str, notes: list[str]) -> Any:
    import pandas as pd  # noqa: PLC0415

    values = pd.to_numeric(column, errors="coerce")
    if delimiter != "," and (values.isna() & column.notna()).any():
        # A ';'-separated file with decimal commas ("4,89") is unambiguous: read it so.
        commas = pd.to_numeric(column.str.replace(",", ".", regex=False), errors="coerce")
        if commas.notna().sum() > values.notna().sum():
            note = "decimal commas in the coordinate columns were read as decimal points"
            if note not in notes:
                notes.append(note)
            return commas
    return values


def _wkt_depths(values: Any) -> Any:
    """Return how deep the parentheses of each WKT text nest, as a numpy array.

    Measured before GEOS parses any of them, since its WKT reader recurses once per
    level. Each value is counted from the level it starts at, so an unbalanced value does
    not deepen the ones after it; a ``)`` before its ``(`` lowers the count, and GEOS
    refuses the value there. Only the parentheses are summed: a byte scan, then a few
    numpy operations per parenthesis.
    """
    import numpy as np  # noqa: PLC0415
    import pyarrow as pa  # noqa: PLC0415

    texts = pa.array(values, type=pa.large_string())
    depths = np.zeros(len(texts), dtype=np.int64)
    _, offset_buffer, data_buffer = texts.buffers()
    if data_buffer is None:
        return depths  # every value is empty
    offsets = np.frombuffer(offset_buffer, dtype=np.int64)[texts.offset :][: len(texts) + 1]
    data = np.frombuffer(data_buffer, dtype=np.uint8)[offsets[0] : offsets[-1]]
    # "(" is byte 40 and ")" 41 (never part of a longer UTF-8 sequence): one comparison.
    where = np.flatnonzero(data - np.uint8(ord("(")) < 2)
    if where.size == 0:
        return depths
    level = np.cumsum(np.where(data[where] == ord("("), 1, -1))  # after each parenthesis
    before = np.concatenate(([0], level))
    # Value i's parentheses are level[bounds[i]:bounds[i + 1]] (text order is row order).
    bounds = np.searchsorted(where, offsets - offsets[0])
    first = bounds[:-1]
    has = bounds[1:] > first
    peaks = np.maximum.reduceat(level, first[has])
    depths[has] = np.maximum(peaks - before[first[has]], 0)
    return depths


def _check_degrees(xs: Any, ys: Any, lon: str, lat: str, source: str) -> None:
    x_abs, y_abs = xs.abs().max(), ys.abs().max()
    if x_abs > 360 or y_abs > 90:  # NaN (no values) compares False
        raise IntakeError(
            [
                f"{lon!r}/{lat!r} reach {max(x_abs, y_abs):,.6g}, which is not degrees; CSV "
                "coordinates must be WGS84 longitude/latitude: convert them, or send a "
                "GeoPackage or Shapefile that names its CRS"
            ],
            source=source,
        )


def read_csv(
    raw: bytes, source: str, notes: list[str], *, max_bytes: int | None = None
) -> dict[str, Any]:
    """Turn CSV bytes into a FeatureCollection dict (coordinates not yet validated).

    Args:
        raw: The CSV bytes, UTF-8 with or without a BOM.
        source: How to name the source in messages.
        notes: Receives a note of which columns became the geometry.
        max_bytes: The caller's input limit; the GeoJSON may be 20 times that (see
            :mod:`~geomint.intake._decoded`). None leaves it unmeasured.

    Raises:
        IntakeError: Not UTF-8, no header, duplicate or missing coordinate columns,
            ragged rows, coordinates that are not numbers or WKT, or a table whose
            GeoJSON would pass the limit.
    """
    import shapely  # noqa: PLC0415

    text = _text(raw, source)
    delimiter, names = _header(text, source)
    lon, lat, wkt = _pick(names, _LON), _pick(names, _LAT), _pick(names, _WKT)
    if not (lon and lat) and not wkt:
        raise IntakeError(
            [
                f"no coordinate columns among {', '.join(repr(n) for n in names[:12])}; "
                "name them lon and lat (or longitude and latitude), or give WKT in a column "
                "named wkt or geometry"
            ],
            source=source,
        )
    geometry_columns = [lon, lat] if lon and lat else [wkt]
    frame = _table(text, delimiter, names, source)
    frame = _unnamed(frame, names, source)
    if lon and lat:
        notes.append(f"points from columns {lon!r} and {lat!r} (WGS84 degrees)")
        xs, ys = _numbers(frame[lon], delimiter, notes), _numbers(frame[lat], delimiter, notes)
        blank = frame[lon].isna() & frame[lat].isna()
        bad = ((xs.isna() | ys.isna()) & ~blank).to_numpy().nonzero()[0].tolist()
        if bad:
            raise IntakeError(
                [
                    f"{lon!r}/{lat!r} are not numbers on {_rows(bad)}; "
                    "use decimal degrees such as 4.8952, or leave both empty for no location"
                ],
                source=source,
            )
        _check_degrees(xs, ys, lon, lat, source)
        shapes: list[str | None] = []
        shape_bytes = _POINT_BYTES * int((~blank).sum())
    else:
        notes.append(f"geometries from WKT column {wkt!r} (WGS84 degrees)")
        values = frame[wkt].fillna("").to_numpy(dtype=object)
        # GEOS reads WKT by recursion: 30,000 nested "GEOMETRYCOLLECTION (" (630 KB) crash
        # it, and 5,000 (105 KB) cost 15 s of CPU time in to_geojson.
        depths = _wkt_depths(values)
        deep = (depths > MAX_DEPTH).nonzero()[0].tolist()
        if deep:
            up_to = "up to " if len(deep) > 1 else ""
            raise IntakeError(
                [
                    f"{wkt!r} holds WKT nested {up_to}{int(depths[deep].max()):,} parentheses "
                    f"deep on {_rows(deep)}, past the limit of {MAX_DEPTH}; no real geometry "
                    "nests that deep, so the CSV is refused as hostile or corrupt"
                ],
                source=source,
            )
        parsed = shapely.from_wkt(values, on_invalid="ignore")
        bad = [i for i, (v, s) in enumerate(zip(values, parsed, strict=True)) if v and s is None]
        if bad:
            raise IntakeError(
                [f"{wkt!r} is not valid WKT on {_rows(bad)}; e.g. POINT (4.89 52.37)"],
                source=source,
            )
        shapes = [
            g if g is not None and v else None
            for g, v in zip(shapely.to_geojson(parsed).tolist(), values, strict=True)
        ]
        shape_bytes = sum(len(g) for g in shapes if g is not None)
    properties = frame.drop(columns=geometry_columns)
    properties = properties.assign(**{c: _typed(properties[c]) for c in properties.columns})
    columns, rows, float_columns, floats = table_json(properties)
    if max_bytes is not None:
        # Measured before a feature is built: a CSV names its columns once, the GeoJSON
        # in every feature, so a wide table of short values grows many times over.
        found = table_bytes(len(rows) + len(floats) + shape_bytes, len(frame), columns)
        problem = too_large(f"the CSV ({counted(len(frame), 'row')})", found, max_bytes)
        if problem:
            raise IntakeError([problem], source=source)
    geometries: list[Any]
    if lon and lat:
        geometries = [
            None if empty else {"type": "Point", "coordinates": [x, y]}
            for x, y, empty in zip(xs.tolist(), ys.tolist(), blank.tolist(), strict=True)
        ]
    else:
        geometries = [None if g is None else json.loads(g) for g in shapes]
    rows_of = records(columns, json.loads(rows), float_columns, json.loads(floats))
    return feature_collection(rows_of, geometries)
