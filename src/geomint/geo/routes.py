"""Progress along a route: a LineString from origin to destination, with optional sections.

Progress is metres along the route from its first coordinate, measured geodesically on
WGS84 (so it agrees with :func:`geomint.geo.length_m`). Sections are dicts that name
coordinate indices like TomTom route sections: ``{"startPointIndex": 3, "endPointIndex": 9,
"sectionType": "TRAFFIC", ...}``, both indices inclusive, into the route's coordinates.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
import shapely

from geomint.geo._geodesy import Coords, lonlat, segment_lengths
from geomint.geo.convert import GeoLike
from geomint.geo.errors import GeoInputError
from geomint.geo.measurement import along, nearest_point_on_line

__all__ = ["coordinate_at_progress", "progress_between", "route_progress_at_point", "section_bbox"]

# A progress this far past the end is rounding, not a mistake.
_END_SLACK_M = 0.01


def _route_coords(route: GeoLike) -> Coords:
    shape = lonlat(route, "route")
    if shape.geom_type != "LineString" or shape.is_empty:
        raise GeoInputError(
            f"a route must be a LineString (the route Feature or its geometry); got a "
            f"{shape.geom_type}"
        )
    coords: Coords = shapely.get_coordinates(shape)
    return coords


def route_progress_at_point(route: GeoLike, point: GeoLike) -> float:
    """Return how far along the route, in metres, the point's nearest spot on it lies.

    Args:
        route: The route LineString (Feature or geometry) in lon/lat.
        point: A Point, typically near the route (an incident, a vehicle).

    Returns:
        Metres from the route's start to the point snapped onto the route.

    Raises:
        GeoInputError: When ``route`` is not a LineString or ``point`` not a Point.

    Examples:
        >>> route = {"type": "LineString", "coordinates": [[0, 0], [0, 1]]}
        >>> round(route_progress_at_point(route, {"type": "Point", "coordinates": [0.01, 0.5]}))
        55287
    """
    _route_coords(route)
    return nearest_point_on_line(route, point).location_m


def coordinate_at_progress(route: GeoLike, progress_m: float) -> tuple[float, float]:
    """Return the ``(lng, lat)`` reached after ``progress_m`` metres along the route.

    Args:
        route: The route LineString in lon/lat.
        progress_m: Metres from the start, between 0 and the route's length.

    Returns:
        The coordinate as ``(lng, lat)``.

    Raises:
        GeoInputError: When ``route`` is not a LineString, or ``progress_m`` is negative or
            past the end of the route.

    Examples:
        >>> route = {"type": "LineString", "coordinates": [[0, 0], [0, 1]]}
        >>> coordinate_at_progress(route, 0)
        (0.0, 0.0)
    """
    total = float(segment_lengths(_route_coords(route)).sum())
    if progress_m < 0 or progress_m > total + _END_SLACK_M:
        raise GeoInputError(
            f"got progress_m={progress_m!r}; the route is {total:.1f} m long, so pass "
            f"0 to {total:.1f}"
        )
    point = along(route, min(progress_m, total))
    return float(point.x), float(point.y)


def progress_between(route: GeoLike, a: GeoLike, b: GeoLike) -> float:
    """Return the metres along the route from point ``a`` to point ``b``.

    Both points are snapped onto the route first; the result is negative when ``b`` lies
    before ``a`` (behind, in the direction of travel).

    Args:
        route: The route LineString in lon/lat.
        a: The first Point (e.g. the vehicle).
        b: The second Point (e.g. an incident ahead).

    Returns:
        ``progress(b) - progress(a)`` in metres.

    Raises:
        GeoInputError: When ``route`` is not a LineString or a point is not a Point.

    Examples:
        >>> route = {"type": "LineString", "coordinates": [[0, 0], [0, 1]]}
        >>> start = {"type": "Point", "coordinates": [0, 0]}
        >>> round(progress_between(route, {"type": "Point", "coordinates": [0, 1]}, start))
        -110574
    """
    return route_progress_at_point(route, b) - route_progress_at_point(route, a)


def section_bbox(route: GeoLike, section: Mapping[str, Any]) -> list[float]:
    """Return the planar ``[minx, miny, maxx, maxy]`` of a section of the route.

    Args:
        route: The route LineString in lon/lat.
        section: A dict with integer ``startPointIndex`` and ``endPointIndex``, inclusive
            indices into the route's coordinates, as in TomTom route sections.

    Returns:
        The bounding box of the section's coordinates.

    Raises:
        GeoInputError: When ``route`` is not a LineString, or the section lacks the
            indices, has them reversed or past the route's last coordinate.

    Examples:
        >>> route = {"type": "LineString", "coordinates": [[0, 0], [1, 2], [3, 1], [4, 4]]}
        >>> section_bbox(route, {"startPointIndex": 1, "endPointIndex": 2})
        [1.0, 1.0, 3.0, 2.0]
    """
    coords = _route_coords(route)
    if not isinstance(section, Mapping):
        raise GeoInputError(
            f"got a {type(section).__name__} as section; pass a dict with startPointIndex "
            "and endPointIndex"
        )
    start, end = section.get("startPointIndex"), section.get("endPointIndex")
    if not isinstance(start, int) or not isinstance(end, int):
        raise GeoInputError(
            f"a section needs integer startPointIndex and endPointIndex; got {start!r} and {end!r}"
        )
    last = len(coords) - 1
    if not 0 <= start <= end <= last:
        raise GeoInputError(
            f"section indices {start}..{end} do not fit the route's coordinates 0..{last}; "
            "startPointIndex must be <= endPointIndex"
        )
    part = coords[start : end + 1]
    low, high = np.min(part, axis=0), np.max(part, axis=0)
    return [float(low[0]), float(low[1]), float(high[0]), float(high[1])]
