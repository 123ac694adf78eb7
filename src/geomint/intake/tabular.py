"""CSV with longitude/latitude or WKT columns, to a GeoJSON FeatureCollection dict.

CSV is parsed here, in the application process, by pandas' C tokenizer: it allocates in
proportion to the input, which the byte cap already bounds, and it has no format-driven
code paths the way GDAL's binary drivers do.
"""

from __future__ import annotations

import csv
import io
import json
import warnings
from typing import Any

from geomint.intake._table_json import records, table_json
from geomint.intake.errors import IntakeError

__all__ = ["read_csv"]

_LON = ("lon", "lng", "long", "longitude", "x")
_LAT = ("lat", "latitude", "y")
_WKT = ("wkt", "geometry", "geom", "the_geom", "wkt_geom", "shape")
_DELIMITERS = (",", ";", "\t", "|")
_SHOWN_ROWS = 5


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
    first = text.split("\n", 1)[0].rstrip("\r")
    if not first.strip():
        raise IntakeError(["the CSV is empty: it has no header line"], source=source)
    delimiter = max(_DELIMITERS, key=first.count)
    names = next(csv.reader([first], delimiter=delimiter))
    seen: set[str] = set()
    for name in names:
        if name in seen:
            raise IntakeError(
                [f"the CSV header names column {name!r} twice; rename one of them"],
                source=source,
            )
        seen.add(name)
    return delimiter, names


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


def read_csv(raw: bytes, source: str, notes: list[str]) -> dict[str, Any]:
    """Turn CSV bytes into a FeatureCollection dict (coordinates not yet validated).

    Args:
        raw: The CSV bytes, UTF-8 with or without a BOM.
        source: How to name the source in messages.
        notes: Receives a note of which columns became the geometry.

    Raises:
        IntakeError: Not UTF-8, no header, duplicate or missing coordinate columns,
            ragged rows, or coordinates that are not numbers or WKT.
    """
    import pandas as pd  # noqa: PLC0415 - pandas is loaded only when a CSV arrives
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
    try:
        with warnings.catch_warnings():
            # Rows longer than the header would silently become an index: refuse them.
            warnings.simplefilter("error", pd.errors.ParserWarning)
            frame = pd.read_csv(
                io.StringIO(text),
                sep=delimiter,
                dtype={c: str for c in geometry_columns},
                keep_default_na=False,
                na_values=[""],
                index_col=False,
            )
    except (pd.errors.ParserError, pd.errors.ParserWarning, ValueError) as exc:
        message = str(exc).strip().splitlines()[-1][:200]
        raise IntakeError(
            [f"the CSV rows do not line up with its header ({message}); fix that line"],
            source=source,
        ) from None
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
        geometries: list[Any] = [
            None if empty else {"type": "Point", "coordinates": [x, y]}
            for x, y, empty in zip(xs.tolist(), ys.tolist(), blank.tolist(), strict=True)
        ]
    else:
        notes.append(f"geometries from WKT column {wkt!r} (WGS84 degrees)")
        values = frame[wkt].fillna("").to_numpy(dtype=object)
        shapes = shapely.from_wkt(values, on_invalid="ignore")
        bad = [i for i, (v, s) in enumerate(zip(values, shapes, strict=True)) if v and s is None]
        if bad:
            raise IntakeError(
                [f"{wkt!r} is not valid WKT on {_rows(bad)}; e.g. POINT (4.89 52.37)"],
                source=source,
            )
        geometries = [
            json.loads(g) if g is not None and v else None
            for g, v in zip(shapely.to_geojson(shapes).tolist(), values, strict=True)
        ]
    properties = frame.drop(columns=geometry_columns)
    columns, rows, float_columns, floats = table_json(properties)
    rows_of = records(columns, json.loads(rows), float_columns, json.loads(floats))
    features = [
        {"type": "Feature", "properties": props, "geometry": geom}
        for props, geom in zip(rows_of, geometries, strict=True)
    ]
    return {"type": "FeatureCollection", "features": features}
