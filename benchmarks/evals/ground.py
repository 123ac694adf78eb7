"""The ground truths, computed in closed form from the bundled files, without the tools.

Every function reads the files under ``geomint/providers/bundled`` directly: counts with
the standard library, areas and distances from a point with pyproj's geodesic, distances
between layers in ETRS-TM35FIN (EPSG:3067, metres, true to well under 1 % here) with
shapely, walks on the road graph with :mod:`benchmarks.evals.walking` (its own Dijkstra).
Nothing here calls a geomint tool, the router, the sandbox or ``geomint.geo``.
"""

from __future__ import annotations

import csv
import json
from collections import Counter
from collections.abc import Mapping
from functools import cache
from typing import Any, Final

import pyproj
import shapely
from benchmarks.evals import walking
from shapely.geometry import shape

from geomint.providers import OfflineProvider, Providers, bundled

__all__ = [
    "CATHEDRAL",
    "STATION",
    "ZONES",
    "cafes_within_walk",
    "capabilities",
    "categories",
    "count_cafes",
    "indicator",
    "largest_park_ha",
    "nearest",
    "pharmacies_from_walk_m",
    "places_within_m",
    "populations",
    "reach_edge_clearance_m",
    "schools_beyond_m",
    "stops",
    "stops_near_cafes",
    "walk_m",
    "wholly_within_m",
    "wpp_population",
    "zone_cafes",
    "zone_edge_clearance_m",
    "zones_text",
]

#: The cathedral's name in the bundled places (OpenStreetMap's Finnish name).
CATHEDRAL: Final = "Helsingin tuomiokirkko"
#: The central station's name in the bundled places: the station building's point, which
#: "Helsinki Central Station" finds (the railway's own node is called "Helsinki").
STATION: Final = "Helsingin päärautatieasema"

_GEOD: Final = pyproj.Geod(ellps="WGS84")


def _zone(name: str, west: float, south: float, east: float, north: float) -> dict[str, Any]:
    ring = [[west, south], [east, south], [east, north], [west, north], [west, south]]
    return {
        "type": "Feature",
        "properties": {"name": name},
        "geometry": {"type": "Polygon", "coordinates": [ring]},
    }


#: Three zones across central Helsinki, south to north, as a person might paste them.
#: No café lies near a zone's edge (:func:`zone_edge_clearance_m`), so which zone holds
#: each is not a matter of precision; five cafés lie in none.
ZONES: Final[dict[str, Any]] = {
    "type": "FeatureCollection",
    "features": [
        _zone("South", 24.936, 60.1645, 24.954, 60.169),
        _zone("Centre", 24.936, 60.169, 24.954, 60.1735),
        _zone("North", 24.936, 60.1735, 24.954, 60.1785),
    ],
}


def _places() -> list[dict[str, Any]]:
    features: list[dict[str, Any]] = bundled.demo_places()["features"]
    return features


def _of_category(category: str) -> list[dict[str, Any]]:
    return [f for f in _places() if f["properties"].get("category") == category]


def count_cafes() -> int:
    """The cafés of central Helsinki."""
    return len(_of_category("cafe"))


def categories() -> dict[str, int]:
    """How many places central Helsinki has of each category."""
    return dict(Counter(f["properties"]["category"] for f in _places()))


def largest_park_ha() -> float:
    """The area of the largest park, garden or square, in hectares (geodesic)."""
    areas = [
        abs(_GEOD.geometry_area_perimeter(shape(f["geometry"]))[0])
        for f in bundled.demo_boundaries()["features"]
    ]
    return max(areas) / 10_000


def stops(kind: str | None = None) -> list[tuple[float, float]]:
    """The stops file's points (``kind``: only ``bus_stop`` or ``tram_stop`` rows)."""
    with bundled.demo_stops_path().open(encoding="utf-8") as rows:
        return [
            (float(r["lon"]), float(r["lat"]))
            for r in csv.DictReader(rows)
            if kind is None or r["kind"] == kind
        ]


@cache
def _transformer() -> pyproj.Transformer:
    return pyproj.Transformer.from_crs(4326, 3067, always_xy=True)


def _metres(geometry: Any) -> Any:
    return shapely.transform(geometry, _transformer().transform, interleaved=False)


def stops_near_cafes(metres: float = 200.0) -> int:
    """The stops within ``metres`` of a café."""
    cafes = shapely.STRtree([_metres(shape(f["geometry"])) for f in _of_category("cafe")])
    points = [_metres(shapely.Point(p)) for p in stops()]
    return sum(1 for p in points if len(cafes.query(p, "dwithin", metres)))


def zone_cafes() -> dict[str, int]:
    """The cafés inside each of :data:`ZONES`, by zone name."""
    cafes = [shape(f["geometry"]) for f in _of_category("cafe")]
    return {
        zone["properties"]["name"]: sum(1 for c in cafes if shape(zone["geometry"]).contains(c))
        for zone in ZONES["features"]
    }


def populations(*names: str) -> dict[str, int]:
    """The GeoNames population of each named city, read from ``cities.csv`` itself."""
    path = bundled.DATA_DIR / "cities.csv"
    with path.open(encoding="utf-8", newline="") as handle:
        rows = {r["name"]: int(r["population"]) for r in csv.DictReader(handle)}
    return {name: rows[name] for name in names}


def _sources_table(name: str) -> list[dict[str, str]]:
    path = bundled.DATA_DIR.parent.parent / "sources" / "bundled" / name
    with path.open(encoding="utf-8", newline="") as handle:
        return list(csv.DictReader(handle))


def wpp_population(year: int, *iso3: str) -> dict[str, int]:
    """UN WPP 2024 population of each country in ``year``, read from the bundled CSV."""
    rows = {
        r["iso3"]: int(r["population"])
        for r in _sources_table("population.csv")
        if int(r["year"]) == year
    }
    return {code: rows[code] for code in iso3}


def indicator(column: str, iso3: str, year: int) -> float:
    """A Gapminder indicator (``gdp_per_capita``, ``life_expectancy``) of one country and
    year, read from the bundled CSV."""
    for row in _sources_table("indicators.csv"):
        if row["iso3"] == iso3 and int(row["year"]) == year:
            return float(row[column])
    raise KeyError(f"{iso3} {year}")


def schools_beyond_m(metres: float) -> list[str]:
    """The schools farther than ``metres`` from every bus stop (the stops file's
    ``bus_stop`` rows; counting its tram stops too changes nothing)."""
    bus = shapely.STRtree([_metres(shapely.Point(p)) for p in stops("bus_stop")])
    return [
        f["properties"]["name"]
        for f in _of_category("school")
        if not len(bus.query(_metres(shape(f["geometry"])), "dwithin", metres))
    ]


def _point_of(name: str) -> tuple[float, float]:
    (found,) = [f for f in _places() if f["properties"].get("name") == name]
    lon, lat = found["geometry"]["coordinates"][:2]
    return float(lon), float(lat)


def _geodesic_m(origin: tuple[float, float], lon: float, lat: float) -> float:
    return float(_GEOD.inv(origin[0], origin[1], lon, lat)[2])


def places_within_m(name: str, metres: float) -> int:
    """The places whose geodesic distance from the place called ``name`` is at most
    ``metres`` (the place itself among them)."""
    origin = _point_of(name)
    return sum(
        1 for f in _places() if _geodesic_m(origin, *f["geometry"]["coordinates"][:2]) <= metres
    )


def wholly_within_m(name: str, metres: float) -> list[str]:
    """The parks, gardens and squares every vertex of which lies within ``metres`` of the
    place called ``name`` (a disc this small is convex, so their edges do too)."""
    origin = _point_of(name)
    inside = []
    for feature in bundled.demo_boundaries()["features"]:
        if feature["properties"]["kind"] not in ("park", "garden", "square"):
            continue  # a landmark building's outline
        rings = feature["geometry"]["coordinates"]
        if all(_geodesic_m(origin, x, y) <= metres for ring in rings for x, y in ring):
            inside.append(feature["properties"]["name"])
    return inside


def nearest(name: str, category: str, n: int) -> list[tuple[str, float]]:
    """The ``n`` places of ``category`` nearest the place called ``name``, nearest first,
    each with its geodesic distance in metres."""
    origin = _point_of(name)
    measured = sorted(
        (_geodesic_m(origin, *f["geometry"]["coordinates"][:2]), f["properties"]["name"])
        for f in _of_category(category)
    )
    return [(place, metres) for metres, place in measured[:n]]


def cafes_within_walk(name: str, seconds: float) -> tuple[int, int]:
    """The cafés a walk of ``seconds`` from the place called ``name`` reaches, by two
    readings of "reaches" (see :mod:`benchmarks.evals.walking`).

    Returns:
        Those within 25 m of a street walked within the time (by network distance: the
        café's frontage reached), and those in the reachable area, which also holds the
        blocks under 4 ha those streets enclose (a café deep inside such a block is
        reached from any of its sides). The second count holds the first.
    """
    reached = walking.reach(walking.nearest_node(*_point_of(name)), seconds)
    points = [_metres(shape(f["geometry"])) for f in _of_category("cafe")]
    along = sum(1 for p in points if reached.corridor.contains(p))
    inside = sum(1 for p in points if reached.area.contains(p))
    return along, inside


def reach_edge_clearance_m(name: str, seconds: float) -> float:
    """How near a café comes to the edge of the area a walk of ``seconds`` from the place
    called ``name`` reaches: far enough that the upper count is no close call."""
    reached = walking.reach(walking.nearest_node(*_point_of(name)), seconds)
    edge = reached.area.boundary
    return min(float(edge.distance(_metres(shape(f["geometry"])))) for f in _of_category("cafe"))


def _walk(start: str, end: str) -> tuple[float, list[tuple[float, float]]]:
    return walking.shortest_path(
        walking.nearest_node(*_point_of(start)), walking.nearest_node(*_point_of(end))
    )


def walk_m(start: str, end: str) -> float:
    """The length of the shortest walk on the road graph between two named places."""
    return _walk(start, end)[0]


def pharmacies_from_walk_m(start: str, end: str) -> dict[str, float]:
    """Every pharmacy's geodesic distance in metres from the shortest walk between two
    named places: to the point of the walk's line nearest it (found in EPSG:3067)."""
    line = _metres(shapely.LineString(_walk(start, end)[1]))
    back = pyproj.Transformer.from_crs(3067, 4326, always_xy=True)
    distances = {}
    for feature in _of_category("pharmacy"):
        lon, lat = feature["geometry"]["coordinates"][:2]
        nearest_point = line.interpolate(line.project(_metres(shapely.Point(lon, lat))))
        on_line = back.transform(nearest_point.x, nearest_point.y)
        distances[feature["properties"]["name"]] = _geodesic_m((lon, lat), *on_line)
    return distances


#: What the offline configuration can do, each with words an answer names it by: the
#: capabilities of geomint's provider protocols, then what every agent has.
_PROVIDED: Final[Mapping[str, tuple[str, tuple[str, ...]]]] = {
    "geocoder": ("finding addresses and named places", ("locate", "address", "geocod")),
    "places": ("searching places", ("place",)),
    "boundaries": ("boundaries", ("boundar", "outline")),
    "router": ("routes", ("route", "direction")),
    "ranges": ("reachable areas", ("reach", "isochrone")),
    "traffic": ("traffic", ("traffic", "congestion")),
}
_ALWAYS: Final[Mapping[str, tuple[str, ...]]] = {
    "your own data": ("your own", "own data", "own file", "upload"),
    "analysis and charts": ("analys", "chart"),
}


def capabilities() -> tuple[dict[str, tuple[str, ...]], dict[str, tuple[str, ...]]]:
    """What an answer to "what can you do?" must name, and what it must not claim.

    Read from the offline provider (the capabilities of the provider protocols it
    implements, and where its data is), not from the tools: each capability it serves,
    where its places and routes are, and what every agent has (your own data, analysis);
    the capabilities it does not serve are what the answer must not claim.
    """
    offline = OfflineProvider()
    served = Providers.single(offline)
    must = {name: words for key, (name, words) in _PROVIDED.items() if served.serves(key)}
    lacks = {name: words for key, (name, words) in _PROVIDED.items() if not served.serves(key)}
    must.update(_ALWAYS)
    if "central Helsinki" in offline.coverage:
        must["where: central Helsinki"] = ("helsinki",)
    return must, lacks


def zone_edge_clearance_m() -> float:
    """How near a café comes to a zone's edge, in metres: far enough that which zone
    holds each café is not a question of precision."""
    cafes = [_metres(shape(f["geometry"])) for f in _of_category("cafe")]
    return min(
        float(_metres(shape(zone["geometry"])).boundary.distance(c))
        for zone in ZONES["features"]
        for c in cafes
    )


def zones_text() -> str:
    """The zones as a person pastes them into the question."""
    return json.dumps(ZONES, separators=(",", ":"))
