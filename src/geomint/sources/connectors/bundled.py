"""The bundled connector: tables geomint ships, read offline.

A bundled source's ``config`` names a CSV file inside the geomint package and its
columns::

    {"file": "sources/bundled/population.csv", "code_system": "iso3",
     "unit_column": "iso3", "name_column": "name", "period_column": "year",
     "value_column": "population", "extra_columns": ["variant"]}

``period_column`` is left out for a table whose publisher states no period (GeoNames
city populations): every row's period is then ``"not stated"``. A filter the source
declares beyond ``unit`` and ``period`` (``variant``) keeps the rows whose column of that
name holds one of the values asked. ``latest_year`` is the newest year the publisher
counts rather than projects (UN WPP: 2020): "latest" never reaches past it. The retrieval time is
the one the file's folder records in its ``SOURCES.json`` (when the package that
carried the data was published), so a figure says how old its copy is.
"""

from __future__ import annotations

import csv
import io
import json
import math
from collections.abc import Mapping
from datetime import datetime
from functools import cache
from importlib import resources
from typing import Any, Final

from geomint.geo.raster import Raster
from geomint.provenance import PERIOD_NOT_STATED
from geomint.sources.connectors.base import (
    CODE_SYSTEMS,
    CodeSystem,
    Grid,
    PeriodFilter,
    Request,
    Row,
    SourceFetchError,
    Table,
    Unit,
)

__all__ = ["BundledConnector"]

_PACKAGE: Final = "geomint"


@cache
def _rows(path: str) -> tuple[dict[str, str], ...]:
    file = resources.files(_PACKAGE).joinpath(path)
    if not file.is_file():
        raise SourceFetchError("not_found", f"the bundled file {path} is not installed")
    text = file.read_text(encoding="utf-8")
    return tuple(csv.DictReader(io.StringIO(text, newline="")))


@cache
def _record(path: str) -> Mapping[str, Any]:
    folder, _, name = path.rpartition("/")
    listing = resources.files(_PACKAGE).joinpath(folder, "SOURCES.json")
    records = json.loads(listing.read_text(encoding="utf-8")) if listing.is_file() else {}
    for record in (records.get("files") or records).values():
        if isinstance(record, dict) and record.get("file") == name:
            return record
    raise SourceFetchError("not_found", f"{folder}/SOURCES.json has no record of {name}")


def _code(unit: Unit, system: str) -> str | None:
    code = {
        "iso3": unit.iso3,
        "iso2": unit.iso2,
        "m49": unit.m49,
        "geonameid": unit.geonameid,
        "spine": unit.id,
    }.get(system)
    return None if code is None else str(code)


def _number(text: str) -> float | int | None:
    text = text.strip()
    if not text:
        return None
    try:
        return int(text)
    except ValueError:
        return float(text)


class BundledConnector:
    """Reads the CSV tables geomint ships (see the module docstring for ``config``)."""

    @property
    def name(self) -> str:
        """``"bundled"``."""
        return "bundled"

    @property
    def needs_network(self) -> bool:
        """False: the tables ship inside geomint."""
        return False

    @property
    def vocabulary(self) -> Mapping[str, str]:
        """No keys beyond ``unit`` and ``period``."""
        return {}

    def fetch(self, request: Request) -> Table | Grid:
        """Read the rows of the units and years asked for; or compute a derived grid.

        Raises:
            SourceFetchError: The source's config does not name a bundled table, or its
                columns are not in the file (``changed``).
        """
        config = request.source.config
        if "grid" in config:
            return _place_grid(request)
        path = str(config.get("file", ""))
        system = str(config.get("code_system", ""))
        if not path or system not in CODE_SYSTEMS:
            raise SourceFetchError(
                "not_found",
                f"{request.source.id} does not name a bundled table (config needs 'file' and "
                f"'code_system', one of {', '.join(CODE_SYSTEMS)})",
            )
        rows = _rows(path)
        unit_column = str(config.get("unit_column", ""))
        value_column = str(config.get("value_column", "value"))
        name_column = config.get("name_column")
        period_column = config.get("period_column")
        extra = [str(c) for c in config.get("extra_columns") or []]  # type: ignore[union-attr]
        needed = [unit_column, value_column, *extra]
        needed += [str(c) for c in (name_column, period_column) if c]
        missing = [c for c in needed if rows and c not in rows[0]]
        if missing:
            raise SourceFetchError(
                "changed",
                f"the bundled table {path} has no column {', '.join(missing)}; it has "
                f"{', '.join(rows[0])}",
            )
        codes = {c for u in request.units if (c := _code(u, system)) is not None}
        period = request.period
        newest = config.get("latest_year")
        if period is not None and period.latest and isinstance(newest, int):
            period = PeriodFilter(start=period.start, end=min(period.end or newest, newest))
        narrow = {
            key: {value} if isinstance(value, str) else set(value)
            for key, value in request.options.items()
        }
        unknown = [k for k in narrow if rows and k not in rows[0]]
        if unknown:
            raise SourceFetchError(
                "changed",
                f"the bundled table {path} has no column {', '.join(unknown)} to filter by",
            )
        out = []
        for row in rows:
            code = row[unit_column]
            if codes and code not in codes:
                continue
            if any(row[key] not in values for key, values in narrow.items()):
                continue
            when = row[str(period_column)] if period_column else PERIOD_NOT_STATED
            dated = period_column and when[:4].isdigit()
            if period is not None and dated and not period.holds(int(when[:4])):
                continue
            out.append(
                Row(
                    unit_code=code,
                    unit_name=row[str(name_column)] if name_column else None,
                    period=when,
                    value=_number(row[value_column]),
                    extra={c: row[c] for c in extra},
                )
            )
        record = _record(path)
        typed: CodeSystem = system  # type: ignore[assignment]  # checked against CODE_SYSTEMS
        notes = []
        if request.units and not out:
            notes.append(f"the table has no rows for {', '.join(u.id for u in request.units)}")
        if period is not request.period:
            notes.append(
                f"latest means {newest}, the newest year {request.source.publisher} estimates; "
                "later years are projections (ask for them by year)"
            )
        return Table(
            rows=tuple(out),
            code_system=typed,
            retrieved_at=datetime.fromisoformat(str(record["retrieved_at"])),
            url=str(record.get("package") or record.get("url") or "") or None,
            unit=request.source.profile.unit,
            notes=tuple(notes),
        )


# -- derived grids ---------------------------------------------------------------------

#: Cell sizes a derived grid may be computed at, in metres.
GRID_CELLS_M: Final = (50, 100, 250)


@cache
def _features(path: str) -> tuple[dict[str, Any], ...]:
    file = resources.files(_PACKAGE).joinpath(path)
    if not file.is_file():
        raise SourceFetchError("not_found", f"the bundled file {path} is not installed")
    return tuple(json.loads(file.read_text(encoding="utf-8"))["features"])


def _place_grid(request: Request) -> Grid:
    """Count the bundled points in each cell of a grid over their extract's bbox.

    ``config``: ``{"grid": "providers/bundled/helsinki_places.geojson", "crs":
    "EPSG:3067", "cell_m": 100}``; the bbox is the extract's, from the folder's
    ``SOURCES.json``; the ``cell_m`` filter picks another of :data:`GRID_CELLS_M`.
    Deterministic: the same package gives the same grid, cell for cell.
    """
    import numpy as np  # noqa: PLC0415
    import pyproj  # noqa: PLC0415

    config = request.source.config
    path = str(config["grid"])
    asked = request.options.get("cell_m", str(config.get("cell_m", 100)))
    text = asked if isinstance(asked, str) else asked[0]
    if not text.isdigit() or int(text) not in GRID_CELLS_M:
        raise SourceFetchError(
            "refused_filter",
            f"cell_m takes {', '.join(map(str, GRID_CELLS_M))} (metres); got {text!r}",
            key="cell_m",
            options=tuple(map(str, GRID_CELLS_M)),
        )
    cell = int(text)
    crs = str(config.get("crs", "EPSG:3067"))
    record = _record(path)
    folder = path.rpartition("/")[0]
    listing = json.loads(
        resources.files(_PACKAGE).joinpath(folder, "SOURCES.json").read_text(encoding="utf-8")
    )
    west, south, east, north = listing["extract"]["bbox"]
    to_grid = pyproj.Transformer.from_crs(4326, crs, always_xy=True)
    x0, y0, x1, y1 = to_grid.transform_bounds(west, south, east, north)
    left, top = math.floor(x0 / cell) * cell, math.ceil(y1 / cell) * cell
    cols = math.ceil((x1 - left) / cell)
    rows = math.ceil((top - y0) / cell)
    points = [f["geometry"]["coordinates"] for f in _features(path)
              if (f.get("geometry") or {}).get("type") == "Point"]  # fmt: skip
    xs, ys = to_grid.transform([p[0] for p in points], [p[1] for p in points])
    col = np.floor((np.asarray(xs) - left) / cell).astype(int)
    row = np.floor((top - np.asarray(ys)) / cell).astype(int)
    inside = (col >= 0) & (col < cols) & (row >= 0) & (row < rows)
    counts = np.zeros((rows, cols), dtype="int32")
    np.add.at(counts, (row[inside], col[inside]), 1)
    raster = Raster(counts, (cell, 0, left, 0, -cell, top), crs, None,
                    label="points of interest per cell")  # fmt: skip
    source = request.source
    return Grid(
        raster=raster,
        url=str(record.get("url") or source.url or ""),
        retrieved_at=datetime.fromisoformat(str(record["retrieved_at"])),
        licence=source.licence,
        title=f"{source.title} ({cell} m cells)",
        publisher=source.publisher,
        period=str(record["retrieved_at"])[:10],
        unit="points of interest",
        recipe=(
            f"Derived by geomint, not published by anyone: each cell counts the "
            f"{int(inside.sum()):,} bundled OpenStreetMap points of interest (amenity, shop, "
            f"tourism, leisure) that fall in it, on a {cell} m grid of {crs} aligned to "
            f"multiples of {cell} m over the extract's bounding box ({rows} x {cols} cells)."
        ),
        notes=(f"{int((~inside).sum())} points fell outside the grid",) if (~inside).any() else (),
    )
