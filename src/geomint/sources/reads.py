"""The two ways a source is read: one cell (path A) or a table landed whole (path B).

Both start the same way: the filters the model gave are checked against what the source
declares (unknown keys, values outside the options it published, a place given as a
name rather than a spine id are refused before any request), the units are resolved on
the spine, and the connector fetches. Then:

* **A cell** (:func:`read_cell`): the rows are narrowed to the one unit and the one
  period asked for. Exactly one row with a value is a :class:`Cell`, with the provenance
  code read off the source and the row's period. Anything else is a :class:`CellMiss`
  that says what the narrowing reached (none, or how many rows and how they differ), so
  the next call can narrow further. Never the first row, never a guess.
* **A table** (:func:`read_table`): every row becomes a feature joined to the spine by
  ``unit_id`` (geometry from the spine), for the sandbox to compose.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final

from pydantic import JsonValue

from geomint.http import RequestPolicy
from geomint.provenance import PERIOD_NOT_STATED, Provenance
from geomint.sources.connectors.base import (
    Connector,
    Download,
    Grid,
    Listing,
    PeriodFilter,
    Request,
    Row,
    SourceFetchError,
    Table,
)
from geomint.sources.model import Source
from geomint.sources.spine import Place, Spine

__all__ = [
    "Cell",
    "CellMiss",
    "LandedTable",
    "Narrowing",
    "check_filters",
    "provenance_of",
    "read_cell",
    "read_table",
]

_PERIOD: Final = re.compile(r"^\s*(\d{4})\s*(?:(?:/|-|\.\.|:)\s*(\d{4}))?\s*$")
#: Most features a landed table carries the full boundary of each unit for; past it,
#: rows are placed at their unit's label point (a country has a boundary of tens of kB).
MAX_BOUNDARY_ROWS: Final = 300
#: Most rows a landed table holds: past it, the fetch is refused and asked to narrow.
MAX_TABLE_ROWS: Final = 50_000
#: Most rows a miss lists when it explains what the narrowing reached.
_SHOWN_ROWS: Final = 8


@dataclass(frozen=True, kw_only=True)
class Narrowing:
    """The filters of a fetch, checked and resolved.

    Attributes:
        units: The spine units asked for (empty for all the source has).
        period: The years asked for, or None.
        options: The other filters, by key.
        asked: The filters as the model gave them, for the record.
    """

    units: tuple[Place, ...]
    period: PeriodFilter | None
    options: Mapping[str, str | tuple[str, ...]]
    asked: Mapping[str, JsonValue]


@dataclass(frozen=True, kw_only=True)
class Cell:
    """One number for one unit and one period, read by code.

    Attributes:
        source: The source it was read from.
        place: The unit.
        period: The period the row refers to (or ``"not stated"``).
        value: The number.
        unit: Its unit of measure.
        provenance: Where it came from, with the period.
        row: The row it was read off.
        notes: What the connector narrowed or could not cover.
    """

    source: Source
    place: Place
    period: str
    value: float | int
    unit: str | None
    provenance: Provenance
    row: Row
    notes: tuple[str, ...] = ()


@dataclass(frozen=True, kw_only=True)
class CellMiss:
    """A cell read that did not narrow to exactly one row with a value.

    Attributes:
        reason: What the narrowing reached, in words the model acts on.
        reached: How many rows it reached.
        rows: A few of them (unit, period, the columns they differ by).
        periods: The periods the source has for the unit, when it has any.
    """

    reason: str
    reached: int
    rows: tuple[dict[str, JsonValue], ...] = ()
    periods: tuple[str, ...] = ()


@dataclass(frozen=True, kw_only=True)
class LandedTable:
    """A table read whole, as features joined to the spine.

    Attributes:
        data: A GeoJSON FeatureCollection, one feature per row; properties ``unit_id``
            (None when the spine has no such unit), ``unit_name``, ``unit_code``,
            ``period``, ``value`` and the row's other columns.
        provenance: Where it came from; ``period`` spans the rows' periods.
        rows: How many rows.
        units: How many distinct units.
        periods: The distinct periods, sorted.
        unmatched: Unit codes the spine has no unit for.
        notes: What was narrowed, placed or left out, in words.
    """

    data: dict[str, Any]
    provenance: Provenance
    rows: int
    units: int
    periods: tuple[str, ...]
    unmatched: tuple[str, ...] = ()
    notes: tuple[str, ...] = field(default_factory=tuple)


def _period_filter(value: JsonValue) -> PeriodFilter:
    if isinstance(value, int) and not isinstance(value, bool):
        return PeriodFilter(start=value, end=value)
    if isinstance(value, str):
        text = value.strip().lower()
        if text in ("latest", "newest", "most recent"):
            return PeriodFilter(latest=True)
        found = _PERIOD.match(text)
        if found:
            start = int(found.group(1))
            end = int(found.group(2) or start)
            if start <= end:
                return PeriodFilter(start=start, end=end)
    raise SourceFetchError(
        "refused_filter",
        f"period {value!r} is not a period: give a year (2020), a range (2000/2010) or 'latest'",
        key="period",
    )


def check_filters(source: Source, filters: Mapping[str, JsonValue], spine: Spine) -> Narrowing:
    """Check ``filters`` against what ``source`` declares and resolve its places.

    Raises:
        SourceFetchError: ``refused_filter`` for a key the source does not take, a value
            outside the options it published, or a required key left out.
        UnknownPlaceError: A unit that is not a spine id (the message points to
            resolve_place and names what it would give).
    """
    declared = {f.key: f for f in source.filters}
    unknown = [k for k in filters if k not in declared]
    if unknown:
        keys = ", ".join(f"{k} ({declared[k].takes})" for k in declared) or "none"
        raise SourceFetchError(
            "refused_filter",
            f"{source.id} takes no filter {', '.join(map(repr, unknown))}; it takes {keys}",
            key=unknown[0],
        )
    missing = [f.key for f in source.filters if f.required and f.key not in filters]
    if missing:
        raise SourceFetchError(
            "refused_filter",
            f"{source.id} needs the filter {', '.join(missing)} "
            f"({'; '.join(declared[k].takes for k in missing)})",
            key=missing[0],
        )
    units: tuple[Place, ...] = ()
    period: PeriodFilter | None = None
    options: dict[str, str | tuple[str, ...]] = {}
    for key, value in filters.items():
        if key == "unit":
            given = value if isinstance(value, list) else [value]
            units = tuple(spine.require(str(v)) for v in given)
            _covered(source, units)
        elif key == "period":
            period = _period_filter(value)
        else:
            values = tuple(str(v) for v in value) if isinstance(value, list) else (str(value),)
            allowed = declared[key].options
            wrong = [v for v in values if allowed and v not in allowed]
            if wrong:
                raise SourceFetchError(
                    "refused_filter",
                    f"{key}={wrong[0]!r} is not one of the options {source.id} published for "
                    f"{key}: {', '.join(allowed[:30])}",
                    key=key,
                    options=allowed,
                )
            options[key] = values if isinstance(value, list) else values[0]
    return Narrowing(units=units, period=period, options=options, asked=dict(filters))


def _covered(source: Source, units: Sequence[Place]) -> None:
    """Refuse units the source cannot have rows for: another level, another country."""
    coverage = source.coverage
    for place in units:
        if coverage.levels and place.level not in coverage.levels:
            raise SourceFetchError(
                "not_covered",
                f"{source.id} has figures for {', '.join(_plural(lv) for lv in coverage.levels)}"
                f" only, and {place.id} ({place.name}) is a {_LEVEL_NAMES[place.level]}; no "
                "figure of one level is a figure of another",
                key="unit",
            )
        if not coverage.world and coverage.countries and place.country not in coverage.countries:
            raise SourceFetchError(
                "not_covered",
                f"{source.id} covers {', '.join(coverage.countries[:12])}"
                + ("..." if len(coverage.countries) > 12 else "")
                + f", not {place.id} ({place.name})",
                key="unit",
            )


_LEVEL_NAMES: Final = {
    "country": "country",
    "admin1": "first-level division",
    "city": "city",
    "area": "named area",
}


def _plural(level: str) -> str:
    return {"country": "countries", "city": "cities"}.get(level, f"{_LEVEL_NAMES[level]}s")


def provenance_of(source: Source, table: Table | Download, period: str | None) -> Provenance:
    """The provenance code writes for what was read: the source's row, the answer's
    retrieval time, and the period the read refers to."""
    return Provenance(
        source_id=source.id,
        title=source.title if source.edition is None else f"{source.title} ({source.edition})",
        publisher=source.publisher,
        licence=source.licence,
        url=source.url,
        retrieved_at=table.retrieved_at,
        evidence=source.evidence,
        period=period,
    )


def _request(source: Source, narrowing: Narrowing, spine: Spine, policy: RequestPolicy) -> Request:
    return Request(
        source=source,
        units=tuple(spine.unit(p.id) for p in narrowing.units),
        period=narrowing.period,
        options=narrowing.options,
        policy=policy,
    )


def _table(connector: Connector, request: Request) -> Table:
    answer = connector.fetch(request)
    if not isinstance(answer, Table):
        raise SourceFetchError(
            "refused_filter",
            f"{request.source.id} answered with a file, not a table; fetch it without cell",
        )
    return answer


def _unit_id(spine: Spine, table: Table, row: Row) -> str | None:
    if table.code_system == "spine":
        return row.unit_code if spine.get(row.unit_code) is not None else None
    if table.code_system == "none":
        return None
    return spine.by_code(table.code_system, row.unit_code)


def _year(period: str) -> int | None:
    found = re.match(r"^\s*(\d{4})", period)
    return int(found.group(1)) if found else None


def _in_period(row: Row, period: PeriodFilter | None) -> bool:
    if period is None or (period.start is None and period.end is None):
        return True
    year = _year(row.period)
    return year is not None and period.holds(year)


def _latest(rows: Sequence[tuple[str | None, Row]]) -> list[tuple[str | None, Row]]:
    newest: dict[str | None, int] = {}
    for unit_id, row in rows:
        year = _year(row.period)
        if row.value is not None and year is not None:
            newest[unit_id] = max(newest.get(unit_id, year), year)
    return [(u, r) for u, r in rows if r.value is not None and _year(r.period) == newest.get(u)]


def _shown(unit_id: str | None, row: Row) -> dict[str, JsonValue]:
    return {
        "unit_id": unit_id,
        "unit_code": row.unit_code,
        "period": row.period,
        "value": row.value,
        **dict(row.extra),
    }


def _differ(rows: Sequence[Row]) -> list[str]:
    """The columns the rows differ by, so a miss can say which filter narrows them."""
    columns = ["unit_code", "period", *sorted({k for r in rows for k in r.extra})]
    differ = []
    for column in columns:
        seen = {
            str(getattr(r, column) if column in ("unit_code", "period") else r.extra.get(column))
            for r in rows
        }
        if len(seen) > 1:
            differ.append(column)
    return differ


def read_cell(
    source: Source, connector: Connector, spine: Spine, narrowing: Narrowing, policy: RequestPolicy
) -> Cell | CellMiss:
    """Read one number: exactly one unit, narrowed to exactly one row with a value.

    Raises:
        SourceFetchError: The fetch failed, or the narrowing cannot name one cell
            (no unit, several units).
    """
    if len(narrowing.units) != 1:
        raise SourceFetchError(
            "refused_filter",
            "a cell read names exactly one unit (filters={'unit': 'country:FIN', ...}); "
            f"got {len(narrowing.units)}. Fetch without cell to land a table of several",
            key="unit",
        )
    place = narrowing.units[0]
    table = _table(connector, _request(source, narrowing, spine, policy))
    mine: list[tuple[str | None, Row]] = [
        (unit_id, row) for row in table.rows if (unit_id := _unit_id(spine, table, row)) == place.id
    ]
    periods = tuple(sorted({r.period for _, r in mine}))
    narrowed = [(u, r) for u, r in mine if _in_period(r, narrowing.period)]
    if narrowing.period is not None and narrowing.period.latest:
        narrowed = _latest(narrowed)
    with_value = [(u, r) for u, r in narrowed if r.value is not None]
    if len(with_value) == 1 and len(narrowed) == 1:
        unit_id, row = with_value[0]
        assert row.value is not None
        return Cell(
            source=source,
            place=place,
            period=row.period,
            value=row.value,
            # The registry's unit, written by whoever added the row; the answer's only
            # when the row states none.
            unit=source.profile.unit or table.unit,
            provenance=provenance_of(source, table, row.period),
            row=row,
            notes=table.notes,
        )
    return _miss(source, place, narrowing, narrowed, periods)


def _miss(
    source: Source,
    place: Place,
    narrowing: Narrowing,
    narrowed: Sequence[tuple[str | None, Row]],
    periods: tuple[str, ...],
) -> CellMiss:
    asked = "" if narrowing.period is None else f" for period {narrowing.asked.get('period')!r}"
    span = _span(periods)
    if not periods:
        reason = f"{source.id} has no row for {place.id} ({place.name})"
    elif not narrowed:
        reason = f"{source.id} has no row for {place.id} ({place.name}){asked}; it has {span}"
    elif all(r.value is None for _, r in narrowed):
        reason = (
            f"{source.id} has the row for {place.id} ({place.name}){asked} but no value in it; "
            f"it has {span}"
        )
    else:
        rows = [r for _, r in narrowed]
        differ = _differ(rows)
        narrow = [c for c in differ if c != "unit_code"]
        how = (
            f"they differ by {', '.join(narrow)}: narrow by "
            + (" and ".join(f"filters[{c!r}]" for c in narrow))
            if narrow
            else "they do not differ in any column the source gives"
        )
        reason = (
            f"the narrowing reaches {len(rows)} rows for {place.id} ({place.name}){asked}, not "
            f"one; {how}. A cell read never picks one"
        )
    return CellMiss(
        reason=reason,
        reached=len(narrowed),
        rows=tuple(_shown(u, r) for u, r in list(narrowed)[:_SHOWN_ROWS]),
        periods=periods[-40:],
    )


def _span(periods: Sequence[str]) -> str:
    if not periods:
        return "no periods"
    if len(periods) <= 6:
        return f"periods {', '.join(periods)}"
    return f"{len(periods)} periods from {periods[0]} to {periods[-1]}"


def read_table(
    source: Source, connector: Connector, spine: Spine, narrowing: Narrowing, policy: RequestPolicy
) -> LandedTable | Download | Listing | Grid:
    """Read a table whole, joined to the spine by unit id; or a file-shaped resource, a
    catalogue's listing of datasets, or a raster.

    Raises:
        SourceFetchError: The fetch failed.
    """
    answer = connector.fetch(_request(source, narrowing, spine, policy))
    if isinstance(answer, Download | Listing | Grid):
        return answer
    if not isinstance(answer, Table):
        raise SourceFetchError(
            "malformed", f"the {connector.name} connector answered with {type(answer).__name__}"
        )
    table = answer
    joined = [(_unit_id(spine, table, row), row) for row in table.rows]
    joined = [(u, r) for u, r in joined if _in_period(r, narrowing.period)]
    if narrowing.period is not None and narrowing.period.latest:
        joined = _latest(joined)
    wanted = {p.id for p in narrowing.units}
    if wanted:
        joined = [(u, r) for u, r in joined if u in wanted]
    if len(joined) > MAX_TABLE_ROWS:
        raise SourceFetchError(
            "refused_filter",
            f"{source.id} answered {len(joined):,} rows for these filters, more than the "
            f"{MAX_TABLE_ROWS:,} a table lands; narrow by unit or period",
        )
    unit_ids = {u for u, _ in joined}
    boundaries = len(joined) <= MAX_BOUNDARY_ROWS and len(unit_ids) == len(joined)
    notes = list(table.notes)
    if joined and not boundaries:
        notes.append(
            "each row is placed at its unit's label point, since units repeat over periods "
            f"or there are more than {MAX_BOUNDARY_ROWS} rows; fetch one period to get the "
            "units' boundaries, or join on unit_id"
        )
    features = []
    for unit_id, row in joined:
        geometry = None
        if unit_id is not None:
            place = spine.get(unit_id)
            if boundaries:
                geometry = spine.geometry(unit_id)
            elif place is not None and place.point is not None:
                geometry = {"type": "Point", "coordinates": list(place.point)}
        name = row.unit_name
        if unit_id is not None and (place := spine.get(unit_id)) is not None:
            name = place.name
        features.append(
            {
                "type": "Feature",
                "geometry": geometry,
                "properties": {
                    "unit_id": unit_id,
                    "unit_name": name,
                    "unit_code": row.unit_code,
                    "period": row.period,
                    "value": row.value,
                    **dict(row.extra),
                },
            }
        )
    unmatched = tuple(sorted({r.unit_code for u, r in joined if u is None}))
    if unmatched and table.code_system != "none":
        notes.append(
            f"{len(unmatched)} unit codes are not on the place spine (kept with unit_id "
            f"None, no geometry): {', '.join(unmatched[:10])}"
        )
    periods = tuple(sorted({r.period for _, r in joined}))
    years = [y for p in periods if (y := _year(p)) is not None]
    if years:
        span = str(min(years)) if min(years) == max(years) else f"{min(years)}/{max(years)}"
    else:
        span = PERIOD_NOT_STATED
    return LandedTable(
        data={"type": "FeatureCollection", "features": features},
        provenance=provenance_of(source, table, span),
        rows=len(features),
        units=len(unit_ids - {None}),
        periods=periods,
        unmatched=unmatched,
        notes=tuple(notes),
    )
