"""Validate and repair parsed GeoJSON into one clean FeatureCollection in EPSG:4326.

Validation walks the input once and collects every problem with its path, written
relative to what the user passed: ``coordinates[0][1]`` for a bare geometry,
``geometry.coordinates[0]`` for a bare Feature, ``features[3].geometry.coordinates``
in a collection, each prefixed with ``line N:`` in newline-delimited input. Repairs run
only when nothing was refused, so nothing is ever half-loaded.

This module reads each document's root and puts the steps together: the walk is in
:mod:`~geomint.intake._walk`, the legacy ``crs`` member in :mod:`~geomint.intake._crs`,
the repairs in :mod:`~geomint.intake._repair`.
"""

from __future__ import annotations

from typing import Any

from geomint.intake._crs import crs_transform
from geomint.intake._messages import describe, join, num
from geomint.intake._parse import Lines, gc_paused
from geomint.intake._repair import repair_all
from geomint.intake._type_names import ALL_TYPES, GEOMETRY_TYPES, alien_format, type_problem
from geomint.intake._walk import EMPTY, Walker
from geomint.intake.report import _Builder, _extent

__all__ = ["GEOMETRY_TYPES", "normalise"]

_COLLECTION_KNOWN = frozenset({"type", "features", "bbox", "crs"})
_COLLECTION_IGNORED = frozenset({"properties", "coordinates", "geometry"})
_BBOX_TOLERANCE = 1e-6
_Item = tuple[str, Any, str, int]


def normalise(
    values: list[Any], builder: _Builder, *, repair: bool = True
) -> tuple[dict[str, Any], list[str]]:
    """Validate parsed values; return the clean FeatureCollection and the problems found.

    Args:
        values: Parsed JSON values: one document, or the :class:`Lines` of a
            newline-delimited file.
        builder: The report being built; repairs and warnings are recorded on it.
        repair: Repair what the walk kept (``make_valid`` and the rest); False only
            walks, for finding problems where repairing would cost too much.

    Returns:
        The FeatureCollection and an empty list, or an empty dict and every problem.
    """
    with gc_paused():
        return _normalise(values, builder, repair=repair)


def _normalise(
    values: list[Any], builder: _Builder, *, repair: bool
) -> tuple[dict[str, Any], list[str]]:
    walker = Walker(builder)
    numbers = values.numbers if isinstance(values, Lines) else None
    kept: list[tuple[dict[str, Any], str, str]] = []
    collection: dict[str, Any] = {}
    reprojected = False
    for n, value in enumerate(values):
        walker.prefix = f"line {numbers[n]}: " if numbers else ""
        walker.transform = crs_transform(value, walker)
        reprojected |= walker.transform is not None
        start = walker.index + 1
        items, box = _root(value, walker, collection, single=len(values) == 1)
        for role, item, path, depth in items:
            walker.index += 1
            feature: dict[str, Any] | None
            if role == "feature":
                feature = walker.feature(item, path, depth)
                gpath = join(path, "geometry")
            else:
                geom = walker.geometry(item, path, depth, top=True)
                if geom is EMPTY:
                    builder.repaired(
                        "empty_geometry", walker.index, "empty geometries stored as null"
                    )
                feature = None if geom is None else {"type": "Feature", "properties": {}}
                if feature is not None:
                    feature["geometry"] = None if geom is EMPTY else geom
                gpath = path
            if feature is not None:
                kept.append((feature, walker.prefix, gpath))
        if box is not None:
            walker.bboxes.append((start, walker.index + 1, walker.prefix + "root ", box))
    if not walker.problems and repair:
        walker.problems = repair_all(kept, walker.wide, builder)
    if walker.problems:
        return {}, walker.problems
    features = [feature for feature, _, _ in kept]
    if not reprojected:
        _compare_bboxes(walker.bboxes, features, builder)
    if walker.dropped:
        names = sorted(map(str, walker.dropped))
        shown = names[:10] + (["..."] if len(names) > 10 else [])
        builder.warn(
            f"members other than type/coordinates on geometry objects ({shown}) were dropped; "
            "put such values in the Feature's properties"
        )
    if not features:
        builder.warn("the input has no features; the layer is empty")
    return {"type": "FeatureCollection", **collection, "features": features}, []


def _root(
    value: Any, walker: Walker, collection: dict[str, Any], *, single: bool
) -> tuple[list[_Item], list[float] | None]:
    """Return the features or bare geometry to walk, with their paths and depths."""
    if not isinstance(value, dict):
        advice = (
            'to load a list of Features, wrap it: {"type": "FeatureCollection", "features": [...]}'
            if isinstance(value, list)
            else "expected an object with a 'type' member, such as a FeatureCollection"
        )
        walker.fail(f"root must be a GeoJSON object (found {describe(value)}); {advice}")
        return [], None
    alien = alien_format(value)
    if alien:
        walker.fail(f"root: {alien}")
        return [], None
    kind = value.get("type")
    problem = type_problem(kind, "root", ALL_TYPES, "FeatureCollection")
    if problem:
        walker.fail(problem)
        return [], None
    if kind != "FeatureCollection":
        if single:
            walker.b.source += f" (a bare {kind}, wrapped into a FeatureCollection)"
        return [("feature" if kind == "Feature" else "geometry", value, "", 1)], None
    box = walker.bbox(value, "")
    ignored = sorted(_COLLECTION_IGNORED & value.keys())
    if ignored:
        walker.b.warn(f"FeatureCollection must not carry {ignored} members; ignored")
    if "features" not in value:
        walker.fail(
            "root: FeatureCollection requires a 'features' member (an array); "
            'add "features": [] for an empty collection'
        )
        return [], None
    features = value["features"]
    if not isinstance(features, list | tuple):
        walker.fail(
            f"root: 'features' must be an array (found {describe(features)}); "
            'write "features": [{"type": "Feature", ...}, ...]'
        )
        return [], None
    collection.update(walker.members(value, "", 2, _COLLECTION_KNOWN | _COLLECTION_IGNORED))
    return [("feature", f, f"features[{i}]", 3) for i, f in enumerate(features)], box


def _compare_bboxes(
    boxes: list[tuple[int, int, str, list[float]]],
    features: list[dict[str, Any]],
    builder: _Builder,
) -> None:
    for start, end, where, box in boxes:
        actual = _extent(f["geometry"] for f in features[start:end])
        if actual is not None and all(
            abs(a - b) <= _BBOX_TOLERANCE for a, b in zip(box, actual, strict=True)
        ):
            continue
        builder.repaired(
            "bbox_ignored",
            start if end - start == 1 else -1,
            "'bbox' members that do not match the data ignored; the report's bbox is "
            "computed from the data",
        )
        if where:
            shown = "no geometry" if actual is None else f"[{', '.join(map(num, actual))}]"
            builder.warn(
                f"{where}bbox [{', '.join(map(num, box))}] does not match the data "
                f"({shown}); ignored"
            )
