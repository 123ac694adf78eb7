"""Routes with OSRM or Valhalla, and reachable areas with Valhalla: requests and answers.

OSRM takes ``lon,lat`` pairs in the URL path and answers GeoJSON lines; Valhalla takes
``{"lat", "lon"}`` locations in a JSON body and answers each leg's line as an encoded
polyline of precision 6, decoded here. Both answers become the same route Feature.
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any, Final

import numpy as np

from geomint.providers.base import Avoid, LonLat, TravelMode, route_summary
from geomint.providers.osm._service import NAME

__all__ = [
    "OSRM_EXCLUDE",
    "OSRM_PROFILES",
    "VALHALLA_COSTING",
    "decode_polyline",
    "osrm_path",
    "osrm_routes",
    "range_feature",
    "valhalla_costing_options",
    "valhalla_routes",
]

#: OSRM's profile names (the stock ``car.lua``, ``foot.lua``, ``bicycle.lua``); OSRM has
#: no truck profile.
#: The most positions a routing answer may hold, all routes and legs together: a
#: continent-crossing route at full detail has some 100,000. A larger answer is refused
#: before decoding it further, so its cost to the host is bounded (about a second).
MAX_POSITIONS: Final = 250_000

OSRM_PROFILES: Final[Mapping[TravelMode, str]] = {"car": "car", "walk": "foot", "bike": "bike"}
#: OSRM's ``exclude`` classes (defined by the stock car profile, one at a time).
OSRM_EXCLUDE: Final[Mapping[Avoid, str]] = {
    "motorways": "motorway",
    "tolls": "toll",
    "ferries": "ferry",
}
VALHALLA_COSTING: Final[Mapping[TravelMode, str]] = {
    "car": "auto",
    "walk": "pedestrian",
    "bike": "bicycle",
    "truck": "truck",
}


def osrm_path(profile: str, waypoints: Sequence[LonLat]) -> str:
    """The route service's path: ``/route/v1/{profile}/{lon,lat;lon,lat...}``.

    Example:
        >>> osrm_path("car", [(24.9384, 60.1699), (24.9525, 60.1587)])
        '/route/v1/car/24.938400,60.169900;24.952500,60.158700'
    """
    points = ";".join(f"{lon:.6f},{lat:.6f}" for lon, lat in waypoints)
    return f"/route/v1/{profile}/{points}"


def valhalla_costing_options(
    mode: TravelMode, avoid: Sequence[Avoid]
) -> tuple[dict[str, Any], list[str]]:
    """Valhalla's costing options for ``avoid``, and what could not be asked for.

    ``use_highways``, ``use_tolls`` and ``use_ferry`` of 0 make Valhalla avoid those ways
    as far as it can; they are preferences, not prohibitions.

    Example:
        >>> valhalla_costing_options("car", ["tolls", "unpaved"])
        ({'use_tolls': 0.0, 'exclude_unpaved': True}, [])
    """
    options: dict[str, Any] = {}
    unmet: list[str] = []
    motor = mode in ("car", "truck")
    for item in avoid:
        if item == "ferries":
            options["use_ferry"] = 0.0
        elif item == "motorways" and motor:
            options["use_highways"] = 0.0
        elif item == "tolls" and motor:
            options["use_tolls"] = 0.0
        elif item == "unpaved" and motor:
            options["exclude_unpaved"] = True
        elif item == "unpaved" and mode == "bike":
            options["avoid_bad_surfaces"] = 1.0
        elif item in ("motorways", "tolls"):
            continue  # walking and cycling never use motorways or toll roads
        else:
            unmet.append(item)
    return options, unmet


def decode_polyline(
    encoded: str, precision: int = 6, limit: int = MAX_POSITIONS
) -> list[list[float]]:
    """Decode an encoded polyline into ``[lon, lat]`` positions.

    Example:
        >>> decode_polyline("_p~iF~ps|U_ulLnnqC_mqNvxq`@", precision=5)
        [[-120.2, 38.5], [-120.95, 40.7], [-126.453, 43.252]]

    Raises:
        ValueError: It is malformed, or holds more than ``limit`` positions.
    """
    factor = 10.0**precision
    positions: list[list[float]] = []
    index = lat = lon = 0
    while index < len(encoded):
        if len(positions) >= limit:
            raise ValueError(f"a route shape of more than {limit:,} positions")
        deltas = []
        for _ in range(2):
            shift = result = 0
            while True:
                if index >= len(encoded):
                    raise ValueError("the polyline ends in the middle of a number")
                byte = ord(encoded[index]) - 63
                index += 1
                result |= (byte & 0x1F) << shift
                shift += 5
                if byte < 0x20:
                    break
            deltas.append(~(result >> 1) if result & 1 else result >> 1)
        lat += deltas[0]
        lon += deltas[1]
        positions.append([round(lon / factor, precision), round(lat / factor, precision)])
    return positions


def _leg_bounds(coords: list[list[float]], snapped: Sequence[Sequence[float]]) -> list[int]:
    """Where each leg ends on the line: each inner waypoint's nearest position at or after
    the previous leg's end (numpy: a waypoint costs one pass over the positions in C)."""
    line = np.asarray(coords, dtype=float)
    bounds = [0]
    for point in snapped[1:-1]:
        start = bounds[-1]
        rest = line[start:]
        distance = (rest[:, 0] - float(point[0])) ** 2 + (rest[:, 1] - float(point[1])) ** 2
        bounds.append(start + int(np.argmin(distance)))
    bounds.append(len(coords) - 1)
    return bounds


def _feature(
    coords: list[list[float]],
    legs: list[tuple[int, int, float, float]],
    *,
    mode: TravelMode,
    avoid: Sequence[Avoid],
    departure: datetime,
    engine: str,
    alternative: int,
) -> dict[str, Any]:
    length = sum(leg[2] for leg in legs)
    duration = sum(leg[3] for leg in legs)
    return {
        "type": "Feature",
        "geometry": {"type": "LineString", "coordinates": coords},
        "properties": {
            "summary": route_summary(length, duration, departure),
            "sections": [
                {
                    "start_index": start,
                    "end_index": end,
                    "kind": "leg",
                    "leg": number,
                    "length_m": round(leg_length, 1),
                    "duration_s": round(leg_duration),
                }
                for number, (start, end, leg_length, leg_duration) in enumerate(legs)
            ],
            "mode": mode,
            "avoid": list(avoid),
            "engine": engine,
            "alternative": alternative,
            "provider": NAME,
        },
    }


def osrm_routes(
    answer: Mapping[str, Any],
    *,
    mode: TravelMode,
    avoid: Sequence[Avoid],
    departure: datetime,
    waypoints: int,
) -> list[dict[str, Any]]:
    """Route Features from an OSRM ``route`` answer (``geometries=geojson``).

    Legs are found on the line by the waypoints OSRM snapped to: each one's nearest
    position at or after the previous leg's end. The answer's size is checked before any
    work that grows with it: as many waypoints as were sent, at most
    :data:`MAX_POSITIONS` positions in all.

    Raises:
        ValueError: The answer is not shaped as OSRM documents, or is too large.
    """
    snapped = [w["location"] for w in answer["waypoints"]]
    if len(snapped) != waypoints:
        raise ValueError(f"{len(snapped)} waypoints in the answer for {waypoints} sent")
    routes = answer["routes"]
    total = sum(len(route["geometry"]["coordinates"]) for route in routes)
    if total > MAX_POSITIONS:
        raise ValueError(f"route shapes of {total:,} positions, over {MAX_POSITIONS:,}")
    features = []
    for number, route in enumerate(routes):
        coords = [[float(x), float(y)] for x, y, *_ in route["geometry"]["coordinates"]]
        if len(coords) < 2:
            coords = coords * 2
        bounds = _leg_bounds(coords, snapped)
        legs = [
            (start, end, float(leg["distance"]), float(leg["duration"]))
            for (start, end), leg in zip(itertools.pairwise(bounds), route["legs"], strict=True)
        ]
        features.append(
            _feature(
                coords,
                legs,
                mode=mode,
                avoid=avoid,
                departure=departure,
                engine="osrm",
                alternative=number,
            )
        )
    return features


def valhalla_routes(
    answer: Mapping[str, Any], *, mode: TravelMode, avoid: Sequence[Avoid], departure: datetime
) -> list[dict[str, Any]]:
    """Route Features from a Valhalla ``route`` answer (``units`` kilometres).

    Raises:
        ValueError: The answer is not shaped as Valhalla documents.
    """
    trips = [answer["trip"], *(alt["trip"] for alt in answer.get("alternates") or [])]
    features = []
    budget = MAX_POSITIONS  # for every trip's shapes together
    for number, trip in enumerate(trips):
        coords: list[list[float]] = []
        legs = []
        for leg in trip["legs"]:
            shape = decode_polyline(leg["shape"], limit=budget)
            budget -= len(shape)
            start = max(len(coords) - 1, 0)
            coords.extend(shape[1:] if coords else shape)
            summary = leg["summary"]
            legs.append(
                (start, len(coords) - 1, float(summary["length"]) * 1000, float(summary["time"]))
            )
        if len(coords) < 2:
            raise ValueError("a trip's shape has fewer than two positions")
        features.append(
            _feature(
                coords,
                legs,
                mode=mode,
                avoid=avoid,
                departure=departure,
                engine="valhalla",
                alternative=number,
            )
        )
    return features


def range_feature(
    answer: Mapping[str, Any],
    *,
    origin: LonLat,
    budget: Mapping[str, float],
    mode: TravelMode,
) -> dict[str, Any] | None:
    """The reachable area of a Valhalla ``isochrone`` answer (``polygons=true``), or None.

    Raises:
        ValueError: The answer is not a FeatureCollection.
    """
    if answer.get("type") != "FeatureCollection":
        raise ValueError("the answer is not a FeatureCollection")
    for feature in answer["features"]:
        geometry = feature.get("geometry") or {}
        if geometry.get("type") in ("Polygon", "MultiPolygon"):
            given = feature.get("properties") or {}
            return {
                "type": "Feature",
                "geometry": geometry,
                "properties": {
                    "origin": list(origin),
                    "budget": dict(budget),
                    "mode": mode,
                    "contour": given.get("contour"),
                    "metric": given.get("metric"),
                    "engine": "valhalla",
                    "provider": NAME,
                },
            }
    return None
