"""The eval's questions over the bundled Helsinki data, each with a ground truth.

Every truth is computed in closed form by code that does not use geomint's tools: the
bundled files read directly, counted with the standard library, measured with pyproj's
geodesic and projected with shapely. Each question also carries a script: what a
well-behaved model would call, so the harness can be run and tested with a scripted
model in CI (which proves the harness, not a model).
"""

from __future__ import annotations

import csv
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache
from typing import Any

import pyproj
import shapely
from shapely.geometry import shape

from geomint.providers import bundled
from geomint.testing import Step

__all__ = ["QUESTIONS", "Question"]


@dataclass(frozen=True)
class Question:
    """One eval question.

    Attributes:
        id: A short name.
        text: What the person asks.
        truth: The right figure, computed without the tools.
        tolerance: How far an answer's figure may be from it, as a fraction (0: exact).
        unit: The truth's unit, as a figure would carry it.
        picks: What a scripted classifier picks (tools and scopes).
        steps: What a scripted model calls, then answers (citing ``{v1}``).
    """

    id: str
    text: str
    truth: Callable[[], float]
    tolerance: float
    unit: str
    picks: dict[str, Any]
    steps: list[Step]


def _places() -> list[dict[str, Any]]:
    features: list[dict[str, Any]] = bundled.demo_places()["features"]
    return features


def _cafes() -> float:
    return float(sum(1 for f in _places() if f["properties"].get("category") == "cafe"))


def _largest_park_ha() -> float:
    geod = pyproj.Geod(ellps="WGS84")
    areas = [
        abs(geod.geometry_area_perimeter(shape(f["geometry"]))[0])
        for f in bundled.demo_boundaries()["features"]
    ]
    return max(areas) / 10_000


def _stops() -> list[tuple[float, float]]:
    with bundled.demo_stops_path().open(encoding="utf-8") as rows:
        return [(float(r["lon"]), float(r["lat"])) for r in csv.DictReader(rows)]


@cache
def _transformer() -> pyproj.Transformer:
    # ETRS-TM35FIN, the Finnish national grid: metres, true to well under 1 % here.
    return pyproj.Transformer.from_crs(4326, 3067, always_xy=True)


def _metres(geometry: Any) -> Any:
    return shapely.transform(geometry, _transformer().transform, interleaved=False)


def _stops_near_cafes() -> float:
    cafes = [
        _metres(shape(f["geometry"]))
        for f in _places()
        if f["properties"].get("category") == "cafe"
    ]
    tree = shapely.STRtree(cafes)
    stops = [_metres(shapely.Point(p)) for p in _stops()]
    return float(sum(1 for s in stops if len(tree.query(s, "dwithin", 200.0))))


_COUNT_CAFES = (
    'cafes = [f for f in places["features"] if f["properties"].get("category") == "cafe"]\n'
    'mint.value(len(cafes), "cafés in central Helsinki", unit="cafés")\n'
    "return len(cafes)"
)
_LARGEST_PARK = (
    "best = max(geometries['features'], key=geo.area_m2)\n"
    "mint.value(round(geo.area_m2(best) / 10_000, 2), "
    "'area of ' + best['properties']['name'], unit='ha')\n"
    "return best['properties']['name']"
)
_STOPS_NEAR = (
    "frame = places.to_geodataframe()\n"
    'cafes = frame[frame["category"] == "cafe"].to_crs(3067)\n'
    "stops = byod.to_geodataframe().to_crs(3067)\n"
    "near = stops.geometry.apply(lambda g: cafes.distance(g).min() <= 200)\n"
    'mint.value(int(near.sum()), "stops within 200 m of a café", unit="stops")\n'
    "return int(near.sum())"
)


def _analyse(kinds: list[str], code: str, **ids: list[str]) -> tuple[str, dict[str, Any]]:
    return ("analyse_data", {**ids, "name": "eval", "code": code})


QUESTIONS: tuple[Question, ...] = (
    Question(
        id="cafes",
        text="How many cafés are there in central Helsinki?",
        truth=_cafes,
        tolerance=0.0,
        unit="cafés",
        picks={"tools": ["analyse_data"], "scopes": {"analyse_data": {"kinds": ["places"]}}},
        steps=[
            [_analyse(["places"], _COUNT_CAFES, places_entry_ids=["places-1"])],
            "There are {v1} in central Helsinki.",
        ],
    ),
    Question(
        id="largest-park",
        text="Which is the largest park or square, and how large is it in hectares?",
        truth=_largest_park_ha,
        tolerance=0.02,
        unit="ha",
        picks={
            "tools": ["analyse_data"],
            "scopes": {"analyse_data": {"kinds": ["geometries"]}},
        },
        steps=[
            [_analyse(["geometries"], _LARGEST_PARK, geometries_entry_ids=["geometries-1"])],
            "The largest is {v1}.",
        ],
    ),
    Question(
        id="stops",
        text="How many bus and tram stops are there in the stops file?",
        truth=lambda: float(len(_stops())),
        tolerance=0.0,
        unit="stops",
        picks={
            "tools": ["add_byod_layer", "analyse_data"],
            "scopes": {"analyse_data": {"kinds": ["byod"]}},
        },
        steps=[
            [("add_byod_layer", {"path": "helsinki_stops.csv", "label": "stops"})],
            [
                _analyse(
                    ["byod"],
                    'mint.value(len(byod["features"]), "stops", unit="stops")\n'
                    'return len(byod["features"])',
                    byod_entry_ids=["byod-1"],
                )
            ],
            "The file holds {v1}.",
        ],
    ),
    Question(
        id="stops-near-cafes",
        text="How many of the bus and tram stops are within 200 m of a café?",
        truth=_stops_near_cafes,
        tolerance=0.0,
        unit="stops",
        picks={
            "tools": ["add_byod_layer", "analyse_data"],
            "scopes": {"analyse_data": {"kinds": ["places", "byod"]}},
        },
        steps=[
            [("add_byod_layer", {"path": "helsinki_stops.csv", "label": "stops"})],
            [
                _analyse(
                    ["places", "byod"],
                    _STOPS_NEAR,
                    places_entry_ids=["places-1"],
                    byod_entry_ids=["byod-1"],
                )
            ],
            "{v1} are within 200 m of a café.",
        ],
    ),
)
