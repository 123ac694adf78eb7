"""Small, realistic inputs for the corpus: central Amsterdam, as the data tools return it.

Coordinates are GeoJSON order (lng, lat). Every record name the data tools inject is
present; the ones a question did not ask for are ``None``, as in production.
"""

from __future__ import annotations

import copy
from typing import Any

Feature = dict[str, Any]


def _point(lng: float, lat: float, **properties: Any) -> Feature:
    return {
        "type": "Feature",
        "properties": properties,
        "geometry": {"type": "Point", "coordinates": [lng, lat]},
    }


def _line(coordinates: list[list[float]], **properties: Any) -> Feature:
    return {
        "type": "Feature",
        "properties": properties,
        "geometry": {"type": "LineString", "coordinates": coordinates},
    }


def _box(west: float, south: float, east: float, north: float) -> dict[str, Any]:
    ring = [[west, south], [east, south], [east, north], [west, north], [west, south]]
    return {"type": "Polygon", "coordinates": [ring]}


def _collection(features: list[Feature]) -> dict[str, Any]:
    return {"type": "FeatureCollection", "features": features}


CAFES = [
    _point(4.8945, 52.3676, name="Café de Jaren", category="cafe", rating=4.5,
           address="Nieuwe Doelenstraat 20, 1012 CP Amsterdam"),
    _point(4.8820, 52.3755, name="Koffie Academie", category="cafe", rating=4.7,
           address="Haarlemmerdijk 10, 1013 HT Amsterdam"),
    _point(4.9267, 52.3667, name="Brouwerij 't IJ", category="bar", rating=4.6,
           address="Funenkade 7, 1018 AL Amsterdam"),
    _point(4.8890, 52.3690, name="Café Hoppe", category="bar", rating=4.3,
           address="Spui 18, 1012 XA Amsterdam"),
    _point(4.8700, 52.3630, name="Lot Sixty One", category="cafe", rating=4.8,
           address="Kinkerstraat 112, 1053 ED Amsterdam"),
    _point(4.8980, 52.3740, name="De Koffieschenkerij", category="cafe", rating=None,
           address="Oudekerksplein 27, 1012GX Amsterdam"),
    _point(4.9080, 52.3700, name="Restaurant Greetje", category="restaurant", rating=4.6,
           address="Peperstraat 23, 1011 TJ Amsterdam"),
    _point(4.8840, 52.3790, name="Vinkeles", category="restaurant", rating=4.9),
]  # fmt: skip

SCHOOLS = [
    _point(4.8830, 52.3620, name="Barlaeus Gymnasium", category="school"),
    _point(4.8720, 52.3890, name="Het 4e Gymnasium", category="school"),
    _point(4.8700, 52.3480, name="Montessori Lyceum", category="school"),
]

ROUTE_A = [[4.8945, 52.3676], [4.9000, 52.3700], [4.9100, 52.3720], [4.9267, 52.3667]]
ROUTE_B = [[4.8945, 52.3676], [4.8990, 52.3650], [4.9150, 52.3640], [4.9267, 52.3667]]
ROUTES = [
    _line(ROUTE_A, routeIndex=0, lengthInMeters=2640, travelTimeInSeconds=540,
          trafficDelayInSeconds=60, departureTime="2024-05-14T08:00:00+02:00"),
    _line(ROUTE_B, routeIndex=1, lengthInMeters=2900, travelTimeInSeconds=600,
          trafficDelayInSeconds=0, departureTime="2024-05-14T08:00:00+02:00"),
]  # fmt: skip

RANGE = {
    "type": "Feature",
    "properties": {"timeBudgetInSec": 600, "origin": [4.8945, 52.3676]},
    "geometry": _box(4.87, 52.36, 4.91, 52.38),
}

INCIDENTS = [
    _point(4.9000, 52.3700, id="i1", iconCategory="Jam", magnitudeOfDelay=2, delay=180,
           startTime="2024-05-14T07:40:00Z", **{"from": "Dam", "to": "Nieuwmarkt"}),
    _line([[4.9050, 52.3710], [4.9120, 52.3720]], id="i2", iconCategory="RoadWorks",
          magnitudeOfDelay=1, delay=60, startTime="2024-05-13T22:00:00Z"),
    _point(4.8600, 52.3500, id="i3", iconCategory="Accident", magnitudeOfDelay=3, delay=420,
           startTime="2024-05-14T07:55:00Z"),
    _line([[4.9200, 52.3660], [4.9260, 52.3668]], id="i4", iconCategory="Jam",
          magnitudeOfDelay=2, delay=240, startTime="2024-05-14T08:05:00Z"),
]  # fmt: skip


def _district(key: str, name: str, population: int, box: tuple[float, ...]) -> Feature:
    return {
        "type": "Feature",
        "properties": {
            "name": name,
            "population": population,
            "_source": {"kind": "district", "id": key},
        },
        "geometry": _box(*box),
    }


DISTRICTS = {
    "district:centrum": [_district("centrum", "Centrum", 87_000, (4.88, 52.365, 4.91, 52.38))],
    "district:west": [_district("west", "West", 145_000, (4.86, 52.36, 4.88, 52.39))],
}

BOWTIE = [[4.90, 52.37], [4.91, 52.38], [4.91, 52.37], [4.90, 52.38], [4.90, 52.37]]
BYOD = [
    {"type": "Feature", "id": "a", "properties": {"label": "plot"},
     "geometry": _box(4.88, 52.36, 4.89, 52.37)},
    {"type": "Feature", "id": "b", "properties": {"label": "bowtie"},
     "geometry": {"type": "Polygon", "coordinates": [BOWTIE]}},
    {"type": "Feature", "id": "c", "properties": {"label": "no geometry key"}},
]  # fmt: skip


def make_inputs() -> dict[str, Any]:
    """A fresh copy of every injected record, as a data-tool call would pass them."""
    return copy.deepcopy(
        {
            "places_by_entry": {
                "places-1": _collection(CAFES),
                "places-2": _collection(SCHOOLS),
            },
            "routes_by_entry": {"routes-1": _collection(ROUTES)},
            "ranges_by_entry": {"ranges-1": _collection([RANGE])},
            "incidents_by_entry": {"incidents-1": INCIDENTS},
            "geometries_by_entry": DISTRICTS,
            "traffic_area_analytics_by_entry": None,
            "byod_by_entry": {"byod-0": _collection(BYOD)},
        }
    )
