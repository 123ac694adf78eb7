"""Measure geometries in metres on the WGS84 ellipsoid, and the planar predicates turf offers.

Inputs are longitude/latitude in degrees (GeoJSON order). Lengths, areas and distances are
geodesic (pyproj.Geod on WGS84), so they differ from turf.js, which measures on a sphere,
by up to about 0.5 %. ``bbox`` and ``point_in_polygon`` are planar, exactly like turf.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import shapely
from shapely.geometry.base import BaseGeometry

from geomint.geo._geodesy import (
    GEOD,
    Coords,
    LocalProjection,
    densify,
    lonlat,
    point_xy,
    segment_lengths,
)
from geomint.geo.convert import GeoLike, to_shapely
from geomint.geo.errors import GeoInputError, warn_if_degrees

__all__ = [
    "NearestPointOnLine",
    "along",
    "area_m2",
    "bbox",
    "bearing",
    "centroid",
    "destination",
    "distance_m",
    "length_m",
    "midpoint",
    "nearest_point_on_line",
    "point_in_polygon",
    "point_to_line_distance_m",
    "vertex_mean",
]

# Long segments are followed along their geodesic at this spacing before snapping, so a
# point is snapped to the curve the ellipsoid draws, not to a straight line in degrees.
_DENSIFY_M = 1_000.0
# Closer than this to a vertex (in metres) counts as on it.
_ON_VERTEX_M = 1e-6


@dataclass(frozen=True, kw_only=True)
class NearestPointOnLine:
    """Where a point snaps onto a line.

    Attributes:
        point: The snapped point on the line (lon/lat).
        distance_m: Geodesic distance from the input point to ``point``.
        location_m: Distance along the line from its start to ``point``; for a
            MultiLineString, the parts' lengths are added in order (gaps not counted).
        part: Index of the LineString part of a MultiLineString (0 for a LineString).
        segment: Index of the segment within that part (segment i runs from vertex i to
            vertex i + 1); a point snapped onto vertex k reports k, so the last vertex
            reports the vertex count minus one, as turf does.
    """

    point: shapely.Point
    distance_m: float
    location_m: float
    part: int
    segment: int


def _parts(geometry: BaseGeometry) -> list[BaseGeometry]:
    return [p for p in shapely.get_parts(geometry) if not p.is_empty]


def _flat_parts(geometry: BaseGeometry) -> list[BaseGeometry]:
    out: list[BaseGeometry] = []
    for part in _parts(geometry):
        if part.geom_type.startswith("Multi") or part.geom_type == "GeometryCollection":
            out.extend(_flat_parts(part))
        else:
            out.append(part)
    return out


def area_m2(geometry: GeoLike) -> float:
    """Return the geodesic area in square metres; points and lines count zero.

    Args:
        geometry: A Polygon or MultiPolygon (or a Feature, FeatureCollection or
            GeometryCollection of them), in lon/lat.

    Returns:
        The area on the WGS84 ellipsoid, independent of ring orientation.

    Raises:
        GeoInputError: When the input is not a geometry, or its latitudes are out of range.

    Examples:
        >>> round(area_m2({"type": "Polygon", "coordinates": [[[0, 0], [1, 0], [1, 1], [0, 1],
        ...     [0, 0]]]}) / 1e6)
        12309
    """
    total = 0.0
    for part in _flat_parts(lonlat(geometry)):
        if part.geom_type == "Polygon":
            oriented = shapely.orient_polygons(part)
            total += abs(float(GEOD.geometry_area_perimeter(oriented)[0]))
    return total


def length_m(geometry: GeoLike) -> float:
    """Return the geodesic length in metres; polygons count every ring's perimeter.

    Args:
        geometry: A (Multi)LineString or (Multi)Polygon, a Feature or a collection, in lon/lat.

    Returns:
        The summed length on the WGS84 ellipsoid; points count zero.

    Raises:
        GeoInputError: When the input is not a geometry, or its latitudes are out of range.

    Examples:
        >>> round(length_m({"type": "LineString", "coordinates": [[0, 0], [0, 1]]}))
        110574
    """
    total = 0.0
    for part in _flat_parts(lonlat(geometry)):
        if part.geom_type == "LineString":
            total += float(segment_lengths(shapely.get_coordinates(part)).sum())
        elif part.geom_type == "Polygon":
            for ring in shapely.get_rings(part):
                total += float(segment_lengths(shapely.get_coordinates(ring)).sum())
    return total


def distance_m(a: GeoLike, b: GeoLike) -> float:
    """Return the geodesic distance in metres between two geometries.

    Between two points this is the exact WGS84 geodesic. For other geometries the closest
    pair of points is found in a local metric projection, then measured geodesically.

    Args:
        a: A geometry, usually a Point, in lon/lat.
        b: Another geometry in lon/lat.

    Returns:
        The distance in metres (0 when the geometries touch).

    Raises:
        GeoInputError: When an input is not a geometry, is empty, or has latitudes out of
            range.

    Examples:
        >>> round(distance_m({"type": "Point", "coordinates": [0, 0]},
        ...                  {"type": "Point", "coordinates": [1, 0]}))
        111319
    """
    ga, gb = lonlat(a, "first geometry"), lonlat(b, "second geometry")
    if ga.is_empty or gb.is_empty:
        raise GeoInputError("distance_m() got an empty geometry; pass two non-empty geometries")
    if ga.geom_type == "Point" and gb.geom_type == "Point":
        return float(GEOD.inv(ga.x, ga.y, gb.x, gb.y)[2])
    projection = LocalProjection.around(shapely.union(shapely.envelope(ga), shapely.envelope(gb)))
    line = shapely.shortest_line(projection.to_metres(ga), projection.to_metres(gb))
    (x1, y1), (x2, y2) = shapely.get_coordinates(projection.to_lonlat(line))
    return float(GEOD.inv(x1, y1, x2, y2)[2])


def bearing(a: GeoLike, b: GeoLike, *, final: bool = False) -> float:
    """Return the geodesic bearing from ``a`` to ``b`` in degrees, -180..180 like turf.

    Args:
        a: The start Point.
        b: The end Point.
        final: Return the bearing on arrival at ``b`` instead of the initial bearing.

    Returns:
        Degrees clockwise from north: 0 north, 90 east, -90 west.

    Raises:
        GeoInputError: When an input is not a Point or has latitudes out of range.

    Examples:
        >>> east = {"type": "Point", "coordinates": [1, 0]}
        >>> bearing({"type": "Point", "coordinates": [0, 0]}, east)
        90.0
    """
    x1, y1 = point_xy(a, "start point")
    x2, y2 = point_xy(b, "end point")
    if final:
        back = float(GEOD.inv(x2, y2, x1, y1)[0])
        return _normalise(back + 180)
    return _normalise(float(GEOD.inv(x1, y1, x2, y2)[0]))


def _normalise(degrees: float) -> float:
    wrapped = (degrees + 180) % 360 - 180
    return 180.0 if wrapped == -180 and degrees > 0 else float(wrapped)


def destination(point: GeoLike, distance_m: float, bearing: float) -> shapely.Point:
    """Return the point reached by travelling a geodesic from ``point``.

    Args:
        point: The start Point (a z value is kept).
        distance_m: How far to travel, in metres.
        bearing: The initial bearing in degrees clockwise from north.

    Returns:
        The destination Point in lon/lat.

    Raises:
        GeoInputError: When ``point`` is not a Point or has latitudes out of range.

    Warns:
        UserWarning: When ``distance_m`` is so small that it looks like degrees.

    Examples:
        >>> east = destination({"type": "Point", "coordinates": [0, 0]}, 111_319.49, 90)
        >>> shapely.to_wkt(east, rounding_precision=3)
        'POINT (1 0)'
    """
    warn_if_degrees("destination", "distance_m", distance_m)
    x, y = point_xy(point, "start point")
    lon, lat, _ = GEOD.fwd(x, y, bearing, distance_m)
    lon = x + (lon - x + 180) % 360 - 180
    start = to_shapely(point)
    if start.has_z:
        return shapely.Point(lon, lat, start.z)
    return shapely.Point(lon, lat)


def midpoint(a: GeoLike, b: GeoLike) -> shapely.Point:
    """Return the point halfway along the geodesic between two points.

    Args:
        a: The first Point.
        b: The second Point.

    Returns:
        The geodesic midpoint, equally far from both.

    Raises:
        GeoInputError: When an input is not a Point or has latitudes out of range.

    Examples:
        >>> shapely.to_wkt(midpoint({"type": "Point", "coordinates": [0, 0]},
        ...          {"type": "Point", "coordinates": [10, 0]}), rounding_precision=6)
        'POINT (5 0)'
    """
    x1, y1 = point_xy(a, "first point")
    x2, y2 = point_xy(b, "second point")
    azimuth, _, dist = GEOD.inv(x1, y1, x2, y2)
    lon, lat, _ = GEOD.fwd(x1, y1, azimuth, dist / 2)
    return shapely.Point(lon, lat)


def _line_coords(line: GeoLike, function: str) -> list[Coords]:
    geometry = lonlat(line, "line")
    if geometry.geom_type not in ("LineString", "MultiLineString") or geometry.is_empty:
        raise GeoInputError(
            f"{function}() needs a LineString or MultiLineString; got a {geometry.geom_type}"
        )
    return [shapely.get_coordinates(p) for p in _parts(geometry)]


def along(line: GeoLike, distance_m: float) -> shapely.Point:
    """Return the point ``distance_m`` metres along a line, following its geodesics.

    Args:
        line: A LineString (a MultiLineString's parts are walked in order).
        distance_m: Metres from the start; past the end gives the last vertex.

    Returns:
        The Point at that distance.

    Raises:
        GeoInputError: When ``line`` is not a line, or ``distance_m`` is negative.

    Examples:
        >>> along({"type": "LineString", "coordinates": [[0, 0], [0, 1]]}, 0).wkt
        'POINT (0 0)'
    """
    if distance_m < 0:
        raise GeoInputError(f"along() got distance_m={distance_m!r}; pass metres >= 0")
    parts = _line_coords(line, "along")
    remaining = float(distance_m)
    for coords in parts:
        lengths = segment_lengths(coords)
        cumulative = np.concatenate([[0.0], np.cumsum(lengths)])
        if remaining <= cumulative[-1]:
            i = int(np.searchsorted(cumulative, remaining, side="right")) - 1
            i = min(max(i, 0), len(lengths) - 1)
            if len(lengths) == 0:
                return shapely.Point(coords[0])
            return _step(coords[i], coords[i + 1], remaining - cumulative[i])
        remaining -= cumulative[-1]
    return shapely.Point(parts[-1][-1])


def _step(start: Coords, end: Coords, metres: float) -> shapely.Point:
    if metres <= 0:
        return shapely.Point(start)
    azimuth = GEOD.inv(start[0], start[1], end[0], end[1])[0]
    lon, lat, _ = GEOD.fwd(start[0], start[1], azimuth, metres)
    return shapely.Point(start[0] + (lon - start[0] + 180) % 360 - 180, lat)


def bbox(geometry: GeoLike) -> list[float]:
    """Return the planar bounding box ``[minx, miny, maxx, maxy]``, exactly like turf.

    A stale ``bbox`` member on the input is ignored; the box is computed from coordinates.

    Args:
        geometry: Any geometry, Feature or FeatureCollection.

    Returns:
        The box; for an empty geometry turf's ``[inf, inf, -inf, -inf]``.

    Raises:
        GeoInputError: When the input is not a geometry.

    Examples:
        >>> bbox({"type": "LineString", "coordinates": [[102, -10], [130, 4]]})
        [102.0, -10.0, 130.0, 4.0]
    """
    coords = shapely.get_coordinates(to_shapely(geometry))
    if not coords.size:
        return [math.inf, math.inf, -math.inf, -math.inf]
    low, high = coords.min(axis=0), coords.max(axis=0)
    return [float(low[0]), float(low[1]), float(high[0]), float(high[1])]


def centroid(geometry: GeoLike) -> shapely.Point:
    """Return the area-weighted centroid (length-weighted for lines), computed in metres.

    This is shapely's centroid taken in a local equidistant projection, so it is not
    skewed by degrees shrinking towards the poles. For turf's ``centroid`` (the mean of
    the vertices) use :func:`vertex_mean`.

    Args:
        geometry: Any non-empty geometry in lon/lat.

    Returns:
        The centroid Point in lon/lat.

    Raises:
        GeoInputError: When the input is empty, not a geometry, or has latitudes out of
            range.

    Examples:
        >>> square = {"type": "Polygon", "coordinates": [[[0, 0], [2, 0], [2, 2], [0, 2], [0, 0]]]}
        >>> shapely.to_wkt(centroid(square), rounding_precision=2)
        'POINT (1 1)'
    """
    shape = lonlat(geometry)
    if shape.is_empty:
        raise GeoInputError("centroid() got an empty geometry")
    projection = LocalProjection.around(shape)
    point: shapely.Point = projection.to_lonlat(projection.to_metres(shape).centroid)
    return point


def vertex_mean(geometry: GeoLike) -> shapely.Point:
    """Return the mean of all vertices, turf's ``centroid``; closing vertices count once.

    Args:
        geometry: Any non-empty geometry, Feature or FeatureCollection.

    Returns:
        The Point at the mean longitude and latitude of the vertices.

    Raises:
        GeoInputError: When the input is empty or not a geometry.

    Examples:
        >>> vertex_mean({"type": "LineString", "coordinates": [[0, 0], [2, 0], [4, 3]]}).wkt
        'POINT (2 1)'
    """
    chunks: list[Coords] = []
    for part in _flat_parts(to_shapely(geometry)):
        if part.geom_type == "Polygon":
            chunks.extend(shapely.get_coordinates(r)[:-1] for r in shapely.get_rings(part))
        else:
            chunks.append(shapely.get_coordinates(part))
    if not chunks or not sum(len(c) for c in chunks):
        raise GeoInputError("vertex_mean() got an empty geometry")
    mean = np.concatenate(chunks).mean(axis=0)
    return shapely.Point(mean)


def point_in_polygon(point: GeoLike, polygon: GeoLike, *, ignore_boundary: bool = False) -> bool:
    """Tell whether a point lies in a polygon, planar in degrees, like turf.

    Args:
        point: A Point.
        polygon: A Polygon or MultiPolygon (holes are outside).
        ignore_boundary: When true, a point exactly on an edge or vertex is outside;
            by default it is inside (turf's ``ignoreBoundary``).

    Returns:
        Whether the point is inside.

    Raises:
        GeoInputError: When ``point`` is not a Point or ``polygon`` not a polygon.

    Examples:
        >>> square = {"type": "Polygon", "coordinates": [[[0, 0], [1, 0], [1, 1], [0, 1], [0, 0]]]}
        >>> edge = {"type": "Point", "coordinates": [1, 0.5]}
        >>> point_in_polygon(edge, square)
        True
        >>> point_in_polygon(edge, square, ignore_boundary=True)
        False
    """
    pt = to_shapely(point)
    area = to_shapely(polygon)
    if pt.geom_type != "Point":
        raise GeoInputError(f"point_in_polygon() needs a Point first; got a {pt.geom_type}")
    if area.geom_type not in ("Polygon", "MultiPolygon"):
        raise GeoInputError(
            f"point_in_polygon() needs a Polygon or MultiPolygon second; got a {area.geom_type}"
        )
    # Each part is tested on its own, as turf does, so overlapping parts of an invalid
    # MultiPolygon still count a point inside one part and on the edge of another.
    parts = shapely.get_parts(area)
    test = shapely.contains_properly if ignore_boundary else shapely.covers
    return bool(test(parts, pt).any())


def nearest_point_on_line(line: GeoLike, point: GeoLike) -> NearestPointOnLine:
    """Snap a point onto a line, measuring in metres on the ellipsoid.

    The line is followed along its geodesics and the search runs in an azimuthal
    equidistant projection centred on the point, where distance from the point is exact.

    Args:
        line: A LineString or MultiLineString.
        point: The Point to snap.

    Returns:
        The snapped point, its distance from ``point`` and its location along the line.

    Raises:
        GeoInputError: When ``line`` is not a line or ``point`` not a Point.

    Examples:
        >>> hit = nearest_point_on_line({"type": "LineString", "coordinates": [[0, 0], [2, 0]]},
        ...                             {"type": "Point", "coordinates": [1, 1]})
        >>> round(hit.point.x, 6), round(hit.location_m), round(hit.distance_m)
        (1.0, 111319, 110574)
    """
    px, py = point_xy(point, "point")
    parts = _line_coords(line, "nearest_point_on_line")
    projection = LocalProjection(px, py)
    best: NearestPointOnLine | None = None
    offset = 0.0
    for part_index, coords in enumerate(parts):
        hit = _snap_part(coords, projection, px, py)
        candidate = NearestPointOnLine(
            point=hit[0], distance_m=hit[1], location_m=offset + hit[2],
            part=part_index, segment=hit[3],
        )  # fmt: skip
        if best is None or candidate.distance_m < best.distance_m:
            best = candidate
        offset += float(segment_lengths(coords).sum())
    assert best is not None  # _line_coords returns at least one part
    return best


def _snap_part(
    coords: Coords, projection: LocalProjection, px: float, py: float
) -> tuple[shapely.Point, float, float, int]:
    """Snap onto one LineString: (point, distance_m, location_m, segment index)."""
    if len(coords) == 1:
        x, y = coords[0]
        return shapely.Point(x, y), float(GEOD.inv(px, py, x, y)[2]), 0.0, 0
    dense, segment_of = _densify_indexed(coords)
    geo_lengths = segment_lengths(dense)
    xy = projection.coords_to_metres(dense)
    planar_lengths = np.hypot(*np.diff(xy, axis=0).T)
    planar_cumulative = np.concatenate([[0.0], np.cumsum(planar_lengths)])
    origin = shapely.Point(0, 0)
    metric_line = shapely.LineString(xy)
    along_planar = float(shapely.line_locate_point(metric_line, origin))
    i = int(np.searchsorted(planar_cumulative, along_planar, side="right")) - 1
    i = min(max(i, 0), len(planar_lengths) - 1)
    # Skip zero-length segments (repeated vertices) so the fraction is defined.
    while planar_lengths[i] == 0 and i > 0 and along_planar <= planar_cumulative[i]:
        i -= 1
    fraction = (
        0.0 if planar_lengths[i] == 0
        else min(max((along_planar - planar_cumulative[i]) / planar_lengths[i], 0.0), 1.0)
    )  # fmt: skip
    if planar_lengths[i] - (along_planar - planar_cumulative[i]) < _ON_VERTEX_M:
        fraction = 1.0
    # A snap onto a vertex belongs to the segment that starts there, as in turf.
    if fraction == 1.0 and i + 1 < len(planar_lengths):
        i, fraction = i + 1, 0.0
    location = float(geo_lengths[:i].sum() + fraction * geo_lengths[i])
    snapped_xy = shapely.get_coordinates(shapely.line_interpolate_point(metric_line, along_planar))
    lon, lat = projection.coords_to_lonlat(snapped_xy)[0]
    lon = dense[i, 0] + (lon - dense[i, 0] + 180) % 360 - 180
    distance = float(GEOD.inv(px, py, lon, lat)[2])
    segment = int(segment_of[i]) + (1 if fraction == 1.0 else 0)
    return shapely.Point(lon, lat), distance, location, segment


def _densify_indexed(coords: Coords) -> tuple[Coords, np.ndarray]:
    """Densify each segment and remember which original segment each piece belongs to."""
    pieces: list[Coords] = []
    owners: list[np.ndarray] = []
    for i in range(len(coords) - 1):
        segment = densify(coords[i : i + 2], _DENSIFY_M)[:-1]
        pieces.append(segment)
        owners.append(np.full(len(segment), i))
    pieces.append(coords[-1:])
    return np.concatenate(pieces), np.concatenate(owners)


def point_to_line_distance_m(point: GeoLike, line: GeoLike) -> float:
    """Return the geodesic distance in metres from a point to the nearest point of a line.

    Args:
        point: The Point.
        line: A LineString or MultiLineString.

    Returns:
        The distance in metres (0 on the line).

    Raises:
        GeoInputError: When ``point`` is not a Point or ``line`` not a line.

    Examples:
        >>> round(point_to_line_distance_m({"type": "Point", "coordinates": [1, 1]},
        ...     {"type": "LineString", "coordinates": [[0, 0], [2, 0]]}))
        110574
    """
    return nearest_point_on_line(line, point).distance_m
