"""Spatial joins with shapely's STRtree, and h3 (v4) cell helpers.

Joins are vectorised: one bulk STRtree query instead of a loop over every pair, so
thousands of points against thousands of polygons take milliseconds.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, NamedTuple

import h3
import numpy as np
import shapely
from numpy.typing import NDArray
from shapely.geometry.base import BaseGeometry

from geomint.geo._geodesy import GEOD, LocalProjection, check_latitudes
from geomint.geo.convert import to_shapely
from geomint.geo.errors import GeoInputError

__all__ = [
    "Matches",
    "Nearest",
    "cell_boundary",
    "cells_for_points",
    "cells_for_polygon",
    "nearest",
    "points_within",
]

Geometries = NDArray[np.object_]


class Matches(NamedTuple):
    """Pairs from a join: ``points[i]`` matched ``polygons[i]`` (indices into the inputs)."""

    points: NDArray[np.intp]
    polygons: NDArray[np.intp]


class Nearest(NamedTuple):
    """For each point, the nearest target's index and the geodesic distance in metres."""

    points: NDArray[np.intp]
    targets: NDArray[np.intp]
    distance_m: NDArray[np.float64]


def as_geometries(values: Any, what: str) -> Geometries:
    """Turn coords, geometries, Features or a FeatureCollection into an array of shapely."""
    if isinstance(values, np.ndarray) and values.dtype != object:
        if values.ndim != 2 or values.shape[1] != 2:
            raise GeoInputError(
                f"got {what} as a numpy array of shape {values.shape}; pass shape (N, 2) "
                "with columns longitude, latitude"
            )
        check_latitudes(values.astype(float), what)
        result: Geometries = shapely.points(values.astype(float))
        return result
    if isinstance(values, Mapping):
        if values.get("type") != "FeatureCollection":
            raise GeoInputError(
                f"got a single {values.get('type')!r} as {what}; pass a FeatureCollection, "
                "a list of Features or geometries, or an (N, 2) array of lng/lat"
            )
        values = values["features"]
    if isinstance(values, BaseGeometry | str) or not isinstance(values, Iterable):
        raise GeoInputError(
            f"got a {type(values).__name__} as {what}; pass a FeatureCollection, a list of "
            "Features or geometries, or an (N, 2) array of lng/lat"
        )
    items = list(values)
    pairs = _coordinate_pairs(items)
    if pairs is not None:
        return as_geometries(pairs, what)
    shapes = np.empty(len(items), dtype=object)
    shapes[:] = [to_shapely(v) for v in items]
    coords = shapely.get_coordinates(shapes)
    if coords.size:
        check_latitudes(coords, what)
    return shapes


def points_within(points: Any, polygons: Any) -> Matches:
    """Join points to the polygons that cover them (planar, boundary counts as inside).

    Args:
        points: An (N, 2) array of lng/lat, a list of Points, Features or a FeatureCollection.
        polygons: A list of polygons, Features or a FeatureCollection.

    Returns:
        :class:`Matches`, sorted by point index; a point in two polygons appears twice,
        a point in none not at all.

    Raises:
        GeoInputError: When an input is not a collection of geometries or has latitudes
            out of range.

    Examples:
        >>> m = points_within(np.array([[0.5, 0.5], [5, 5]]), [shapely.box(0, 0, 1, 1)])
        >>> m.points.tolist(), m.polygons.tolist()
        ([0], [0])
    """
    xy = _point_coordinates(points)
    shapes = as_geometries(polygons, "polygons")
    if xy is None:  # not all single points: the general join
        tree = shapely.STRtree(as_geometries(points, "points"))
        pairs = tree.query(shapes, predicate="covers")
        order = np.lexsort((pairs[0], pairs[1]))
        return Matches(points=pairs[1][order], polygons=pairs[0][order])
    return _points_within_xy(xy, shapes)


def _coordinate_pairs(items: list[Any]) -> NDArray[np.float64] | None:
    """``items`` as an (N, 2) array when every one is a ``[lng, lat]`` pair, else None."""
    if items and all(
        isinstance(v, list | tuple) and len(v) == 2 and all(isinstance(c, int | float) for c in v)
        for v in items
    ):
        return np.asarray(items, dtype=np.float64)
    return None


def _point_coordinates(points: Any) -> NDArray[np.float64] | None:
    """The (N, 2) lon/lat of ``points`` when every one is a single point, else None."""
    if isinstance(points, list | tuple):
        pairs = _coordinate_pairs(list(points))
        if pairs is not None:  # no shapely point made only to read its coordinates back
            points = pairs
    if isinstance(points, np.ndarray) and points.dtype != object:
        if points.ndim != 2 or points.shape[1] != 2:
            as_geometries(points, "points")  # raises, naming the shape
        coords = np.asarray(points, dtype=np.float64)
    else:
        shapes = as_geometries(points, "points")
        kinds = shapely.get_type_id(shapes)
        if shapes.size and not (kinds == 0).all():
            return None
        coords = shapely.get_coordinates(shapes)
        if len(coords) != len(shapes):  # an empty point
            return None
    check_latitudes(coords, "points")
    return coords


def _points_within_xy(xy: NDArray[np.float64], shapes: Geometries) -> Matches:
    """Join by coordinates: no shapely object per point, which is most of the cost.

    Points are sorted by longitude once; each polygon takes the slice inside its bounding
    box's longitudes, keeps those inside its latitudes, and tests the rest with
    ``shapely.intersects_xy`` on the prepared polygon (boundary counts as inside, like
    ``covers``). A million points in a thousand polygons: ~0.3 s, against ~1.9 s for
    building a million points and querying an STRtree.
    """
    order = np.argsort(xy[:, 0], kind="stable")
    xs, ys = xy[order, 0], xy[order, 1]
    shapely.prepare(shapes)
    found_points: list[NDArray[np.intp]] = []
    found_polygons: list[NDArray[np.intp]] = []
    for index, (shape, (minx, miny, maxx, maxy)) in enumerate(
        zip(shapes, shapely.bounds(shapes), strict=True)
    ):
        if shape is None or shapely.is_empty(shape):
            continue
        lo = int(np.searchsorted(xs, minx, side="left"))
        strip = slice(lo, int(np.searchsorted(xs, maxx, side="right")))
        candidates = np.flatnonzero((ys[strip] >= miny) & (ys[strip] <= maxy)) + lo
        if candidates.size == 0:
            continue
        inside = candidates[shapely.intersects_xy(shape, xs[candidates], ys[candidates])]
        found_points.append(order[inside])
        found_polygons.append(np.full(inside.size, index, dtype=np.intp))
    if not found_points:
        empty = np.zeros(0, dtype=np.intp)
        return Matches(points=empty, polygons=empty.copy())
    point_ids = np.concatenate(found_points)
    polygon_ids = np.concatenate(found_polygons)
    ranked = np.lexsort((polygon_ids, point_ids))
    return Matches(points=point_ids[ranked], polygons=polygon_ids[ranked])


def nearest(points: Any, targets: Any) -> Nearest:
    """Find, for each point, the nearest target geometry and how far it is in metres.

    The search runs in one azimuthal equidistant projection centred on the data, which
    keeps nearness true in metres over a city or a region (across a continent the choice
    and the distance to a line or polygon can be off by a few percent). The distance to a
    Point target is the exact geodesic; to other targets it is measured geodesically
    between the closest points found in the projection.

    Args:
        points: An (N, 2) array of lng/lat, a list of Points, Features or a FeatureCollection.
        targets: Geometries, Features or a FeatureCollection to search.

    Returns:
        :class:`Nearest` with one row per point (ties resolved to the lowest index).

    Raises:
        GeoInputError: When an input is not a collection of geometries, or ``targets`` is
            empty.

    Examples:
        >>> n = nearest(np.array([[0.0, 0.0]]), [shapely.Point(0, 1), shapely.Point(0, 0.5)])
        >>> n.targets.tolist(), round(float(n.distance_m[0]))
        ([1], 55287)
    """
    pts = as_geometries(points, "points")
    goals = as_geometries(targets, "targets")
    if not len(goals):
        raise GeoInputError("nearest() got no targets; pass at least one target geometry")
    if not len(pts):
        empty = np.zeros(0, dtype=np.intp)
        return Nearest(points=empty, targets=empty, distance_m=np.zeros(0))
    everything = shapely.GeometryCollection([*pts, *goals])
    projection = LocalProjection.around(everything)
    metric_pts = np.array([projection.to_metres(p) for p in pts], dtype=object)
    metric_goals = np.array([projection.to_metres(g) for g in goals], dtype=object)
    tree = shapely.STRtree(metric_goals)
    pairs = tree.query_nearest(metric_pts, all_matches=False)
    lines = shapely.shortest_line(metric_pts[pairs[0]], metric_goals[pairs[1]])
    ends = projection.coords_to_lonlat(shapely.get_coordinates(lines)).reshape(-1, 4)
    # Measure from the caller's own coordinates, and to a Point target's own too, so that
    # point-to-point distances are exact whatever the projection did.
    ends[:, :2] = shapely.get_coordinates(pts[pairs[0]])
    is_point = shapely.get_type_id(goals[pairs[1]]) == 0
    ends[is_point, 2:] = shapely.get_coordinates(goals[pairs[1]][is_point])
    _, _, dist = GEOD.inv(ends[:, 0], ends[:, 1], ends[:, 2], ends[:, 3])
    order = np.argsort(pairs[0], kind="stable")
    return Nearest(
        points=pairs[0][order],
        targets=pairs[1][order],
        distance_m=np.asarray(dist, dtype=np.float64)[order],
    )


def cells_for_points(points: Any, resolution: int) -> list[str]:
    """Return the h3 cell of each point (GeoJSON lng/lat in, h3 handles lat/lng order).

    Args:
        points: An (N, 2) array of lng/lat, a list of Points, Features or a FeatureCollection.
        resolution: The h3 resolution, 0 (coarsest) to 15.

    Returns:
        One h3 cell id (a hex string) per point, in input order.

    Raises:
        GeoInputError: When an input is not a Point, or ``resolution`` is out of range.

    Examples:
        >>> cells_for_points(np.array([[4.8945, 52.3676]]), 9)
        ['891969c9b2fffff']
    """
    _check_resolution(resolution)
    shapes = as_geometries(points, "points")
    kinds = set(shapely.get_type_id(shapes).tolist())
    if kinds - {0}:
        raise GeoInputError("cells_for_points() needs Points; got other geometry types")
    coords = shapely.get_coordinates(shapes)
    return [h3.latlng_to_cell(lat, lng, resolution) for lng, lat in coords]


def cells_for_polygon(polygon: Any, resolution: int) -> list[str]:
    """Return the h3 cells whose centres lie inside a (Multi)Polygon.

    Args:
        polygon: A Polygon or MultiPolygon, Feature, or FeatureCollection of polygons.
        resolution: The h3 resolution, 0 (coarsest) to 15.

    Returns:
        The cell ids, sorted.

    Raises:
        GeoInputError: When the input is not polygonal, or ``resolution`` is out of range.

    Examples:
        >>> len(cells_for_polygon(shapely.box(4.88, 52.36, 4.90, 52.38), 8)) > 0
        True
    """
    _check_resolution(resolution)
    shape = to_shapely(polygon)
    if shape.geom_type == "GeometryCollection":
        shape = shapely.union_all(shapely.get_parts(shape))
    if shape.geom_type not in ("Polygon", "MultiPolygon"):
        raise GeoInputError(
            f"cells_for_polygon() needs a Polygon or MultiPolygon; got a {shape.geom_type}"
        )
    check_latitudes(shapely.get_coordinates(shape), "polygon")
    return sorted(h3.geo_to_cells(shape, resolution))


def cell_boundary(cell: str) -> dict[str, Any]:
    """Return an h3 cell's outline as a GeoJSON Polygon in lng/lat order.

    Args:
        cell: An h3 cell id.

    Returns:
        A GeoJSON Polygon dict with a closed ring.

    Raises:
        GeoInputError: When ``cell`` is not a valid h3 cell id.

    Examples:
        >>> ring = cell_boundary("891969c9b2fffff")["coordinates"][0]
        >>> len(ring), ring[0] == ring[-1], 4 < ring[0][0] < 5
        (7, True, True)
    """
    if not isinstance(cell, str) or not h3.is_valid_cell(cell):
        raise GeoInputError(
            f"got {cell!r}, which is not an h3 cell id; pass e.g. '891969c9b2fffff'"
        )
    ring = [[lng, lat] for lat, lng in h3.cell_to_boundary(cell)]
    ring.append(ring[0])
    return {"type": "Polygon", "coordinates": [ring]}


def _check_resolution(resolution: int) -> None:
    if not isinstance(resolution, int) or not 0 <= resolution <= 15:
        raise GeoInputError(f"got resolution={resolution!r}; h3 resolutions are 0 to 15")
