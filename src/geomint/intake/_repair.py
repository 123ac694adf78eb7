"""Repairs of validated geometries: wrap, split at the antimeridian, rewind, make valid.

They run only once the walk has refused nothing. Points in range need nothing; polygons
that need no antimeridian work are rewound and checked in one vectorised pass; the rest
take the careful path one geometry at a time. A geometry with no faithful repair is
refused with a message saying where and why.
"""

from __future__ import annotations

import itertools
import warnings
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np
import shapely
from shapely.geometry import mapping, shape

from geomint.intake._messages import join
from geomint.intake.report import _Builder

__all__ = ["repair_all"]

_LINES = ("LineString", "MultiLineString")
_POLYGONS = ("Polygon", "MultiPolygon")
_REWOUND = "rings rewound to RFC 7946 winding (exterior CCW)"
_SPLIT = (
    "geometries crossing the antimeridian split at +/-180 (an edge spanning more "
    "than 180 degrees of longitude is read as crossing it)"
)
_WRAPPED = "longitudes beyond +/-180 (up to +/-360) wrapped into [-180, 180]"


class _UnrepairableError(ValueError):
    """A geometry that passed validation but has no faithful repair."""


def _polygons(geom: dict[str, Any]) -> list[list[list[list[float]]]]:
    coords = geom["coordinates"]
    return [coords] if geom["type"] == "Polygon" else coords


def _sequences(geom: dict[str, Any]) -> Iterator[list[list[float]]]:
    """Yield every array of positions of a non-collection geometry."""
    kind, coords = geom["type"], geom["coordinates"]
    if kind == "Point":
        yield [coords]
    elif kind in ("MultiPoint", "LineString"):
        yield coords
    elif kind in ("MultiLineString", "Polygon"):
        yield from coords
    else:
        for polygon in coords:
            yield from polygon


def _wrap_longitudes(geom: dict[str, Any]) -> int:
    count = 0
    for sequence in _sequences(geom):
        for position in sequence:
            if not -180 <= position[0] <= 180:
                position[0] = (position[0] + 180) % 360 - 180
                count += 1
    return count


def _crosses(geom: dict[str, Any]) -> bool:
    return any(
        abs(b[0] - a[0]) > 180
        for sequence in _sequences(geom)
        for a, b in itertools.pairwise(sequence)
    )


def _degenerate(geom: dict[str, Any]) -> bool:
    """True when a line, or a part of one, has fewer than two distinct positions."""
    return any(seq.count(seq[0]) == len(seq) for seq in _sequences(geom))


def _lists(value: Any) -> Any:
    if isinstance(value, tuple | list):
        return [_lists(v) for v in value]
    if isinstance(value, dict):
        return {k: _lists(v) for k, v in value.items()}
    return value


def _rewind(polygon: list[list[list[float]]], index: int, builder: _Builder) -> None:
    for i, ring in enumerate(polygon):
        # GEOS's robust orientation test, not a float shoelace: slivers get it right.
        ccw = bool(shapely.is_ccw(shapely.linearrings(ring)))
        if ccw == (i > 0):
            ring.reverse()
            builder.repaired("rewound", index, _REWOUND)


def _hole_outside(geom: dict[str, Any], where: str, reason: str) -> str:
    advice = (
        "lies outside its polygon's exterior ring; if it is a separate area, make it a "
        "polygon of its own (a MultiPolygon part); if it is a mistake, remove it"
    )
    multi = geom["type"] == "MultiPolygon"
    for p, polygon in enumerate(_polygons(geom)):
        shell = shapely.polygons(polygon[0])
        for k, hole in enumerate(polygon[1:], start=1):
            if not shell.covers(shapely.linearrings(hole)):
                at = f"{where}[{p}][{k}]" if multi else f"{where}[{k}]"
                return f"{at}: this hole (interior ring) {advice}"
    return f"{where}: a hole {advice} (GEOS: {reason})"


def _make_valid(geom: dict[str, Any], index: int, builder: _Builder, where: str) -> dict[str, Any]:
    shp = shape(geom)
    if shp.is_valid:
        return geom
    reason = shapely.is_valid_reason(shp)
    polygonal = geom["type"] in _POLYGONS
    if polygonal and reason.startswith("Hole lies outside shell"):
        raise _UnrepairableError(_hole_outside(geom, where, reason))
    if geom["type"] == "MultiPolygon" and all(part.is_valid for part in shp.geoms):
        # Valid parts that overlap or share an edge: the union is what was meant, where
        # make_valid's linework would cut the overlap out.
        fixed = shapely.union_all(shp.geoms)
    else:
        fixed = shapely.make_valid(shp)
    if polygonal and shapely.area(fixed) == 0:
        raise _UnrepairableError(
            f"{where}: polygon has no area (collapses to lines; GEOS: {reason}); "
            "fix the ring or supply it as a LineString"
        )
    builder.repaired("made_valid", index, f"invalid geometry repaired with make_valid ({reason})")
    if fixed.geom_type != shp.geom_type and fixed.geom_type == "GeometryCollection":
        builder.warn(
            f"feature {index}: make_valid turned a {shp.geom_type} into a GeometryCollection"
        )
    out: dict[str, Any] = _lists(mapping(shapely.orient_polygons(fixed)))
    return out


def _split_lines(geom: dict[str, Any], index: int, builder: _Builder) -> dict[str, Any]:
    import antimeridian  # noqa: PLC0415 - only crossing geometries need it

    sequences = [geom["coordinates"]] if geom["type"] == "LineString" else geom["coordinates"]
    parts: list[list[list[float]]] = []
    for sequence in sequences:
        fixed = antimeridian.fix_line_string(shapely.LineString(sequence), great_circle=False)
        for piece in getattr(fixed, "geoms", [fixed]):
            coords = [[float(x), float(y)] for x, y in piece.coords]
            # A line that ends exactly on the far side of +/-180 leaves a zero-length stub.
            if any(p != coords[0] for p in coords):
                parts.append(coords)
    out = (
        {"type": "LineString", "coordinates": parts[0]}
        if len(parts) == 1
        else {"type": "MultiLineString", "coordinates": parts}
    )
    if out != geom:
        builder.repaired("antimeridian_split", index, _SPLIT)
    return out


def _split_polygons(
    geom: dict[str, Any], index: int, builder: _Builder, where: str
) -> dict[str, Any] | None:
    """Split a polygon crossing the antimeridian; None when antimeridian leaves it as is."""
    import antimeridian  # noqa: PLC0415 - only crossing geometries need it

    shp = shape(geom)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", antimeridian.FixWindingWarning)
        fixed = shape(antimeridian.fix_shape(shp, great_circle=False, fix_winding=True))
    if shapely.equals_exact(shapely.normalize(fixed), shapely.normalize(shp), tolerance=0):
        return None
    if any(issubclass(w.category, antimeridian.FixWindingWarning) for w in caught):
        builder.repaired("rewound", index, _REWOUND)
    builder.repaired("antimeridian_split", index, _SPLIT)
    return _make_valid(_lists(mapping(fixed)), index, builder, where)


def _repair(geom: dict[str, Any], index: int, builder: _Builder, where: str) -> dict[str, Any]:
    """Repair one geometry the careful way: wrap, split, rewind, make valid."""
    kind = geom["type"]
    if kind == "GeometryCollection":
        base = where.removesuffix("coordinates")
        members = [
            _repair(g, index, builder, f"{base}geometries[{i}].coordinates")
            for i, g in enumerate(geom["geometries"])
        ]
        return {"type": kind, "geometries": members}
    wrapped = _wrap_longitudes(geom)
    if wrapped:
        builder.repaired("longitude_wrapped", index, _WRAPPED, count=wrapped)
    if kind in ("Point", "MultiPoint"):
        return geom
    crossing = _crosses(geom)
    if kind in _LINES:
        if crossing:
            geom = _split_lines(geom, index, builder)
        return _make_valid(geom, index, builder, where) if _degenerate(geom) else geom
    if crossing:
        split = _split_polygons(geom, index, builder, where)
        if split is not None:
            return split
    for polygon in _polygons(geom):
        _rewind(polygon, index, builder)
    return _make_valid(geom, index, builder, where)


def _polygon_pass(jobs: list[tuple[int, dict[str, Any]]], builder: _Builder) -> list[int]:
    """Rewind all ``jobs`` polygons in one vectorised pass; return the invalid ones' positions."""
    if not jobs:
        return []
    rings: list[list[list[float]]] = []
    exterior: list[bool] = []
    ring_job: list[int] = []
    ring_polygon: list[int] = []
    polygon_job: list[int] = []
    for j, (_, geom) in enumerate(jobs):
        for polygon in _polygons(geom):
            for k, ring in enumerate(polygon):
                rings.append(ring)
                exterior.append(k == 0)
                ring_job.append(j)
                ring_polygon.append(len(polygon_job))
            polygon_job.append(j)
    lengths = np.fromiter(map(len, rings), dtype=np.intp, count=len(rings))
    coords = np.array(list(itertools.chain.from_iterable(rings)), dtype=np.float64)
    geoms = shapely.linearrings(coords, indices=np.repeat(np.arange(len(rings)), lengths))
    # GEOS's robust orientation test, not a float shoelace: slivers get it right.
    for r in np.flatnonzero(shapely.is_ccw(geoms) != np.array(exterior)).tolist():
        rings[r].reverse()
        builder.repaired("rewound", jobs[ring_job[r]][0], _REWOUND)
    polygons = shapely.polygons(geoms, indices=np.array(ring_polygon))
    shapes = shapely.multipolygons(polygons, indices=np.array(polygon_job))
    return [int(j) for j in np.flatnonzero(~shapely.is_valid(shapes))]


def repair_all(
    kept: list[tuple[dict[str, Any], str, str]], wide: set[int], builder: _Builder
) -> list[str]:
    """Repair the kept features' geometries in place; return the problems that remain.

    Args:
        kept: Each walked feature with its line prefix and the path of its geometry.
        wide: Indices of features that need the antimeridian path (a longitude beyond
            +/-180, or a line or ring spanning more than 180 degrees).
        builder: The report being built; repairs and warnings are recorded on it.

    Returns:
        One message for each geometry that has no faithful repair; empty when all did.
    """
    problems: list[str] = []

    def attempt(
        index: int, fix: Callable[[dict[str, Any], int, _Builder, str], dict[str, Any]]
    ) -> None:
        feature, prefix, gpath = kept[index]
        where = prefix + join(gpath, "coordinates")
        try:
            feature["geometry"] = fix(feature["geometry"], index, builder, where)
        except _UnrepairableError as exc:
            problems.append(str(exc))
        except (ValueError, shapely.errors.ShapelyError) as exc:
            problems.append(
                f"{where}: the geometry could not be repaired ({exc}); fix it in a GIS "
                "(e.g. QGIS's Fix geometries) and load it again"
            )

    jobs: list[tuple[int, dict[str, Any]]] = []
    for index, (feature, _, _) in enumerate(kept):
        geom = feature["geometry"]
        if geom is None:
            continue
        kind = geom["type"]
        if kind == "Point" and index not in wide:
            continue
        if kind == "GeometryCollection" or index in wide:
            attempt(index, _repair)
        elif kind in _POLYGONS:
            jobs.append((index, geom))
        elif kind in _LINES and _degenerate(geom):
            attempt(index, _make_valid)
    for j in _polygon_pass(jobs, builder):
        attempt(jobs[j][0], _make_valid)
    return problems
