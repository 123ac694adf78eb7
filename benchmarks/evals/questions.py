"""The eval's questions over the bundled data, each with a ground truth and a script.

Every truth is computed in closed form by :mod:`benchmarks.evals.ground`, which reads the
bundled files directly and uses none of geomint's tools. Each question also carries a
script: what a well-behaved model would call, step by step, then the answer it would
write citing the figures minted on the way (``{v1}``), so the harness can be run and
tested with a scripted model in CI (which proves the harness, not a model).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from benchmarks.evals import ground
from benchmarks.evals.truth import Figure, Truth

from geomint.testing import Step

__all__ = ["QUESTIONS", "Question"]


@dataclass(frozen=True)
class Question:
    """One eval question.

    Attributes:
        id: A short name.
        text: What the person asks.
        truth: What a right answer holds, computed without the tools.
        tolerance: How far an answer's figure may be from the truth's, as a fraction (0:
            exact; counts are exact, areas and distances within 2 %).
        picks: What a scripted classifier picks (tools and scopes).
        steps: What a scripted model calls, then answers (citing ``{v1}``...).
    """

    id: str
    text: str
    truth: Callable[[], Truth]
    tolerance: float
    picks: dict[str, Any]
    steps: list[Step]


def _analyse(code: str, name: str, **ids: list[str]) -> tuple[str, dict[str, Any]]:
    return ("analyse_data", {**ids, "name": name, "code": code})


def _picks(*tools: str, **kinds: list[str]) -> dict[str, Any]:
    """A classifier's pick: the tools, and the entry kinds each data tool reads."""
    return {
        "tools": list(tools),
        "scopes": {tool: {"kinds": list(k)} for tool, k in kinds.items()},
    }


_LOAD_STOPS = ("add_byod_layer", {"path": "helsinki_stops.csv", "label": "stops"})

# -- the code the scripts run (ordinary bodies, through the same gates as any model's) --

_COUNT_CAFES = (
    'cafes = [f for f in places["features"] if f["properties"].get("category") == "cafe"]\n'
    'mint.value(len(cafes), "cafés in central Helsinki", unit="cafés")\n'
    "return len(cafes)"
)
_CAFES_AND_CHART = """\
from collections import Counter
counts = Counter(f["properties"]["category"] for f in places_by_entry["places-1"]["features"])
top = counts.most_common(10)
mint.value(len(places_by_entry["places-2"]["features"]), "cafés in central Helsinki", unit="cafés")
return {"type": "bar", "options": {"indexAxis": "y"}, "data": {
    "labels": [name for name, _ in top],
    "datasets": [{"label": "places", "data": [n for _, n in top]}]}}"""
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
_CAFES_PER_ZONE = """\
cafes = [f for f in places["features"] if f["properties"].get("category") == "cafe"]
counts = {}
for zone in byod["features"]:
    name = zone["properties"]["name"]
    inside = sum(1 for cafe in cafes if geo.point_in_polygon(cafe, zone))
    counts[name] = mint.value(inside, "cafés in the " + name + " zone", unit="cafés")
return counts"""
_POPULATIONS = """\
cities = {f["properties"]["name"]: f["properties"] for f in places["features"]
          if f["properties"].get("category") == "city"}
helsinki = cities["Helsinki"]["population"]
espoo = cities["Espoo"]["population"]
mint.value(helsinki, "population of Helsinki", unit="people")
mint.value(espoo, "population of Espoo", unit="people")
mint.value(round(helsinki / espoo, 2), "Helsinki's population over Espoo's", unit="×")
return {"Helsinki": helsinki, "Espoo": espoo}"""
_SCHOOLS_FAR = """\
frame = places.to_geodataframe()
schools = frame[frame["category"] == "school"].to_crs(3067)
stops = byod.to_geodataframe()
bus = stops[stops["kind"] == "bus_stop"].to_crs(3067)
nearest = schools.geometry.apply(lambda g: bus.distance(g).min())
far = schools[nearest > 800]
mint.value(len(far), "schools more than 800 m from a bus stop", unit="schools")
mint.value(len(schools), "schools checked", unit="schools")
mint.value(round(float(nearest.max())), "farthest any school is from a bus stop", unit="m")
return {"beyond_800_m": list(far["name"]),
        "nearest_bus_stop_m": {n: round(float(d)) for n, d in zip(schools["name"], nearest)}}"""
_BUFFER = """\
cathedral = places["features"][0]
ring = geo.buffer_m(cathedral, 1000)
name = "1 km round " + cathedral["properties"]["name"]
feature = {"type": "Feature", "properties": {"name": name},
           "geometry": shapely.geometry.mapping(ring)}
return {"geometries": [feature], "fit_on_map": True}"""
# Within 1 km is measured, not read off the buffer drawn: the buffer is a 64-sided
# polygon whose edges pass up to 1.2 m inside the circle, and one place lies 999.3 m away.
_INSIDE_BUFFER = """\
from collections import Counter
cathedral = places_by_entry["places-2"]["features"][0]
around = [f for f in places_by_entry["places-1"]["features"]
          if geo.distance_m(cathedral, f) <= 1000]
ring = shapely.geometry.shape(geometries_by_entry["geometries-2"]["features"][0]["geometry"])
areas = [f["properties"]["name"] for f in geometries_by_entry["geometries-1"]["features"]
         if f["properties"]["kind"] in ("park", "garden", "square")
         and ring.contains(shapely.geometry.shape(f["geometry"]))]
kinds = Counter(f["properties"]["category"] for f in around)
mint.value(len(around), "places within 1 km of the cathedral", unit="places")
mint.value(len(areas), "parks, gardens and squares wholly within 1 km", unit="areas")
mint.value(kinds["restaurant"], "restaurants within 1 km", unit="restaurants")
mint.value(kinds["cafe"], "cafés within 1 km", unit="cafés")
return {"parks_and_squares": areas, "largest_categories": dict(kinds.most_common(5))}"""

_COUNT_REACHED = (
    'mint.value(len(places["features"]), "cafés within a 10-minute walk of the station", '
    'unit="cafés")\n'
    'return sorted(f["properties"]["name"] for f in places["features"])'
)
_NEAREST_CAFES = """\
station = places_by_entry["places-2"]["features"][0]
distances = {}
for cafe in places_by_entry["places-3"]["features"]:
    name = cafe["properties"]["name"]
    metres = round(geo.distance_m(station, cafe))
    distances[name] = mint.value(metres, "straight-line distance from the station to " + name,
                                 unit="m")
return distances"""
_ROUTE_AND_PHARMACIES = """\
route = routes["features"][0]
line = route["geometry"]
near = {f["properties"]["name"]: round(geo.point_to_line_distance_m(f, line))
        for f in places["features"]}
mint.value(round(route["properties"]["summary"]["length_m"]), "length of the walking route",
           unit="m")
mint.value(round(route["properties"]["summary"]["duration_s"] / 60), "walking time", unit="min")
mint.value(len(near), "pharmacies within 200 m of the route", unit="pharmacies")
return {"streets": route["properties"].get("streets"), "pharmacies_m_from_route": near}"""


def _cafes_and_chart() -> Truth:
    return Truth(
        figures=(Figure(value=ground.count_cafes(), about=("café",)),),
        chart=ground.categories(),
    )


def _capabilities() -> Truth:
    must, lacks = ground.capabilities()
    return Truth(mentions=must, never=lacks)


def _per_zone() -> Truth:
    return Truth(
        figures=tuple(Figure(value=n, about=(zone,)) for zone, n in ground.zone_cafes().items())
    )


def _helsinki_espoo() -> Truth:
    return Truth(
        figures=tuple(
            Figure(value=n, about=(city,))
            for city, n in ground.populations("Helsinki", "Espoo").items()
        )
    )


_NORDIC = ["country:DNK", "country:FIN", "country:ISL", "country:NOR", "country:SWE"]
_NORDIC_FIGURES = """\
for f in sorted(tables["features"], key=lambda f: f["properties"]["unit_name"]):
    row = f["properties"]
    mint.value(row["value"], "population of " + row["unit_name"], unit="people",
               period=row["period"])
return len(tables["features"])"""


def _nordic() -> Truth:
    names = {"DNK": "Denmark", "FIN": "Finland", "ISL": "Iceland", "NOR": "Norway", "SWE": "Sweden"}
    found = ground.wpp_population(2020, *names)
    return Truth(figures=tuple(Figure(value=n, about=(names[c],)) for c, n in found.items()))


def _finland_life() -> Truth:
    value = ground.indicator("life_expectancy", "FIN", 2007)
    return Truth(figures=(Figure(value=value, about=("Finland",)),))


def _schools() -> Truth:
    far = ground.schools_beyond_m(800)
    return Truth(figures=(Figure(value=len(far), about=("school",)),), names=tuple(far))


def _inside_1_km() -> Truth:
    areas = ground.wholly_within_m(ground.CATHEDRAL, 1000)
    return Truth(
        figures=(
            Figure(value=ground.places_within_m(ground.CATHEDRAL, 1000), about=("place",)),
            Figure(value=len(areas), about=("park", "square")),
        ),
        names=tuple(areas),
    )


def _walk_10_min() -> Truth:
    along, inside = ground.cafes_within_walk(ground.STATION, 600)
    return Truth(figures=(Figure(value=along, upto=inside),))


def _nearest_cafes() -> Truth:
    nearest = ground.nearest(ground.STATION, "cafe", 5)
    return Truth(
        # Read in whole metres: the nearest is 1.09 m away, and 2 % of that is 2 cm.
        figures=tuple(Figure(value=m, about=(name,), slack=0.5) for name, m in nearest),
        names=tuple(name for name, _ in nearest),
    )


def _route_pharmacies() -> Truth:
    near = [
        name
        for name, metres in ground.pharmacies_from_walk_m(ground.STATION, ground.CATHEDRAL).items()
        if metres <= 200
    ]
    return Truth(
        figures=(
            Figure(value=ground.walk_m(ground.STATION, ground.CATHEDRAL), about=("length",)),
            Figure(value=len(near), about=("pharmac",)),
        ),
        names=tuple(near),
    )


_CAPABILITIES_ANSWER = (
    "I answer map questions with tools. I can locate addresses and named places; search "
    "places such as cafés by category or name; get the boundaries of countries and of "
    "parks and squares; plan routes and find the area reachable within a time or a "
    "distance; load your own files as map layers; and analyse, count and chart the data "
    "with code, showing every figure with its source. Places, routes and reachable areas "
    "are for central Helsinki; countries are worldwide, and large cities can be located. "
    "I cannot show traffic: no traffic provider is configured."
)

QUESTIONS: tuple[Question, ...] = (
    Question(
        id="cafes",
        text="How many cafés are there in central Helsinki?",
        truth=lambda: Truth(figures=(Figure(value=ground.count_cafes()),)),
        tolerance=0.0,
        picks=_picks("analyse_data", analyse_data=["places"]),
        steps=[
            [_analyse(_COUNT_CAFES, "cafes", places_entry_ids=["places-1"])],
            "There are {v1} in central Helsinki.",
        ],
    ),
    Question(
        id="largest-park",
        text="Which is the largest park or square, and how large is it in hectares?",
        truth=lambda: Truth(figures=(Figure(value=ground.largest_park_ha()),)),
        tolerance=0.02,
        picks=_picks("analyse_data", analyse_data=["geometries"]),
        steps=[
            [_analyse(_LARGEST_PARK, "largest-park", geometries_entry_ids=["geometries-1"])],
            "The largest is {v1}.",
        ],
    ),
    Question(
        id="stops",
        text="How many bus and tram stops are there in the stops file?",
        truth=lambda: Truth(figures=(Figure(value=len(ground.stops())),)),
        tolerance=0.0,
        picks=_picks("add_byod_layer", "analyse_data", analyse_data=["byod"]),
        steps=[
            [_LOAD_STOPS],
            [
                _analyse(
                    'mint.value(len(byod["features"]), "stops", unit="stops")\n'
                    'return len(byod["features"])',
                    "stops",
                    byod_entry_ids=["byod-1"],
                )
            ],
            "The file holds {v1}.",
        ],
    ),
    Question(
        id="stops-near-cafes",
        text="How many of the bus and tram stops are within 200 m of a café?",
        truth=lambda: Truth(figures=(Figure(value=ground.stops_near_cafes(200)),)),
        tolerance=0.0,
        picks=_picks("add_byod_layer", "analyse_data", analyse_data=["places", "byod"]),
        steps=[
            [_LOAD_STOPS],
            [
                _analyse(
                    _STOPS_NEAR,
                    "stops-near-cafes",
                    places_entry_ids=["places-1"],
                    byod_entry_ids=["byod-1"],
                )
            ],
            "{v1} are within 200 m of a café.",
        ],
    ),
    Question(
        id="what-can-you-do",
        text="What can you do?",
        truth=_capabilities,
        tolerance=0.0,
        picks=_picks("help"),
        steps=[[("help", {})], _CAPABILITIES_ANSWER],
    ),
    Question(
        id="cafes-chart",
        text=(
            "Find the cafés in central Helsinki: how many are there? Show them, with a bar "
            "chart of all the area's places by category."
        ),
        truth=_cafes_and_chart,
        tolerance=0.0,
        picks=_picks("discover_places", "analyse_data", analyse_data=["places"]),
        steps=[
            [("discover_places", {"category": "cafe", "limit": 200})],
            [
                (
                    "analyse_data",
                    {
                        "places_entry_ids": ["places-1", "places-2"],
                        "name": "category-bar",
                        "output_format": "chart",
                        "code": _CAFES_AND_CHART,
                    },
                )
            ],
            "There are {v1}, shown on the map; the chart has the largest categories.",
        ],
    ),
    Question(
        id="cafes-per-zone",
        text="How many cafés are there in each of these zones? " + ground.zones_text(),
        truth=_per_zone,
        tolerance=0.0,
        picks=_picks("add_byod_layer", "analyse_data", analyse_data=["places", "byod"]),
        steps=[
            [("add_byod_layer", {"data": ground.ZONES, "label": "zones"})],
            [
                _analyse(
                    _CAFES_PER_ZONE,
                    "cafes-per-zone",
                    places_entry_ids=["places-1"],
                    byod_entry_ids=["byod-1"],
                )
            ],
            "South: {v1}. Centre: {v2}. North: {v3}.",
        ],
    ),
    Question(
        id="helsinki-espoo",
        text="What is the population of Helsinki against that of Espoo?",
        truth=_helsinki_espoo,
        tolerance=0.0,
        picks=_picks("locate_place", "analyse_data", analyse_data=["places"]),
        steps=[
            [
                ("locate_place", {"query": "Helsinki", "limit": 1}),
                ("locate_place", {"query": "Espoo", "limit": 1}),
            ],
            [_analyse(_POPULATIONS, "populations", places_entry_ids=["places-2", "places-3"])],
            "Helsinki has {v1} and Espoo {v2} (GeoNames): {v3} as many.",
        ],
    ),
    Question(
        id="schools-far-from-bus-stops",
        text="Which schools are more than 800 m from any bus stop, and how many are there?",
        truth=_schools,
        tolerance=0.0,
        picks=_picks("add_byod_layer", "analyse_data", analyse_data=["places", "byod"]),
        steps=[
            [_LOAD_STOPS],
            [
                _analyse(
                    _SCHOOLS_FAR,
                    "schools-far-from-bus-stops",
                    places_entry_ids=["places-1"],
                    byod_entry_ids=["byod-1"],
                )
            ],
            "None: {v1}. Every one of the {v2} is within {v3} of a bus stop.",
        ],
    ),
    Question(
        id="cathedral-1-km",
        text=("Draw a 1 km buffer round Helsinki Cathedral and tell me what is inside it."),
        truth=_inside_1_km,
        tolerance=0.0,
        picks=_picks(
            "locate_place",
            "process_data",
            "analyse_data",
            process_data=["places"],
            analyse_data=["places", "geometries"],
        ),
        steps=[
            [("locate_place", {"query": "Helsinki Cathedral", "limit": 1})],
            [
                (
                    "process_data",
                    {
                        "places_entry_ids": ["places-2"],
                        "code": _BUFFER,
                        "label": "1 km round the cathedral",
                    },
                )
            ],
            [
                _analyse(
                    _INSIDE_BUFFER,
                    "inside-1-km",
                    places_entry_ids=["places-1", "places-2"],
                    geometries_entry_ids=["geometries-1", "geometries-2"],
                )
            ],
            "The buffer is on the map. Within 1 km of the cathedral lie {v1}, {v3} and "
            "{v4} among them, and {v2}: the squares Senaatintori, Rautatientori, "
            "Kasarmitori, Mannerheimin aukio, Lasipalatsinaukio, Ylioppilasaukio, "
            "Kaivopiha, Kompassitaso and Tekla Hultinin aukio; the parks "
            "Esplanadinpuisto, Vanha kirkkopuisto, Kaisaniemen puisto, Simonpuistikko, "
            "Paasivuoren puistikko, Varsapuistikko, Lönnrotinpuistikko and Kolmikulma; and "
            "Kaisaniemen kasvitieteellinen puutarha. Makasiinipuisto is partly inside.",
        ],
    ),
    Question(
        id="walk-10-min",
        text="How many cafés are within a 10-minute walk of Helsinki Central Station?",
        truth=_walk_10_min,
        tolerance=0.0,
        picks=_picks(
            "find_reachable_areas", "discover_places", "analyse_data", analyse_data=["places"]
        ),
        steps=[
            [
                (
                    "find_reachable_areas",
                    {
                        "origin": {"query": "Helsinki Central Station"},
                        "time_s": 600,
                        "mode": "walk",
                    },
                )
            ],
            [
                (
                    "discover_places",
                    {"category": "cafe", "where": {"range": "ranges-1"}, "limit": 200},
                )
            ],
            [_analyse(_COUNT_REACHED, "cafes-within-walk", places_entry_ids=["places-2"])],
            "{v1} are within a 10-minute walk of Helsinki Central Station: the area on the map "
            "is the streets a walker reaches in that time and the blocks between them. To the "
            "west the walk reaches the edge of the map data, so cafés beyond it are not counted.",
        ],
    ),
    Question(
        id="nearest-cafes",
        text=(
            "Which five cafés are closest to Helsinki Central Station, and how far is each, "
            "in metres?"
        ),
        truth=_nearest_cafes,
        tolerance=0.02,
        picks=_picks("locate_place", "discover_places", "analyse_data", analyse_data=["places"]),
        steps=[
            [("locate_place", {"query": "Helsinki Central Station", "limit": 1})],
            [
                (
                    "discover_places",
                    {"category": "cafe", "near": {"place_id": "osm:way/122595198"}, "limit": 5},
                )
            ],
            [_analyse(_NEAREST_CAFES, "nearest-cafes", places_entry_ids=["places-2", "places-3"])],
            "From Helsingin päärautatieasema, the station building, in a straight line: "
            "Amin's cafe, {v1}; Isabella Cafe, {v2}; Robert's Coffee, {v3}; Foto Cafe, {v4}; "
            "and Coffee house, {v5}.",
        ],
    ),
    Question(
        id="route-pharmacies",
        text=(
            "Plan a walking route from Helsinki Central Station to Helsinki Cathedral: how "
            "long is it, and which pharmacies are within 200 m of it?"
        ),
        truth=_route_pharmacies,
        tolerance=0.02,
        picks=_picks(
            "set_route",
            "discover_places",
            "analyse_data",
            analyse_data=["routes", "places"],
        ),
        steps=[
            [
                (
                    "set_route",
                    {
                        "origin": {"query": "Helsinki Central Station"},
                        "destination": {"query": "Helsinki Cathedral"},
                        "mode": "walk",
                    },
                )
            ],
            [
                (
                    "discover_places",
                    {
                        "category": "pharmacy",
                        "where": {"route": {"entry_id": "routes-1", "width_m": 400}},
                    },
                )
            ],
            [
                _analyse(
                    _ROUTE_AND_PHARMACIES,
                    "route-pharmacies",
                    routes_entry_ids=["routes-1"],
                    places_entry_ids=["places-2"],
                )
            ],
            "The walk is {v1}, about {v2}, by Rautatientori, Kaivokatu and Mikonkatu. {v3} lie "
            "within 200 m of it: Apteekki Eliel, Kluuvin Apteekki, Yliopiston Apteekki "
            "Kaivopiha and Yliopiston apteekki.",
        ],
    ),
    Question(
        id="nordic-population-2020",
        text="What was the population of each Nordic country in 2020, by the UN's estimates?",
        truth=_nordic,
        tolerance=0.0,
        picks=_picks("find_sources", "fetch", "analyse_data", analyse_data=["tables"]),
        steps=[
            [("find_sources", {"query": "population by country and year", "period": "2020"})],
            [
                (
                    "fetch",
                    {
                        "source_id": "un-wpp-2024-population",
                        "filters": {"unit": _NORDIC, "period": 2020},
                    },
                )
            ],
            [_analyse(_NORDIC_FIGURES, "nordic-2020", tables_entry_ids=["tables-1"])],
            "In 2020 (UN WPP 2024 estimates): Denmark {v1}, Finland {v2}, Iceland {v3}, "
            "Norway {v4}, Sweden {v5}.",
        ],
    ),
    Question(
        id="finland-life-expectancy-2007",
        text="What was life expectancy at birth in Finland in 2007?",
        truth=_finland_life,
        tolerance=0.0,
        picks=_picks("resolve_place", "find_sources", "fetch"),
        steps=[
            [
                ("resolve_place", {"name": "Finland", "level": "country"}),
                ("find_sources", {"query": "life expectancy at birth", "country": "FIN"}),
            ],
            [
                (
                    "fetch",
                    {
                        "source_id": "gapminder-life-expectancy",
                        "filters": {"unit": "country:FIN", "period": 2007},
                        "cell": True,
                    },
                )
            ],
            "Life expectancy at birth in Finland was {v1} in 2007 (Gapminder).",
        ],
    ),
    Question(
        id="helsinki-espoo-sourced",
        text="Population of Helsinki against Espoo, from a published source",
        truth=_helsinki_espoo,
        tolerance=0.0,
        picks=_picks("resolve_place", "fetch"),
        steps=[
            [
                ("resolve_place", {"name": "Helsinki", "level": "city"}),
                ("resolve_place", {"name": "Espoo", "level": "city"}),
            ],
            [
                (
                    "fetch",
                    {
                        "source_id": "geonames-cities-population",
                        "filters": {"unit": "city:658225"},
                        "cell": True,
                    },
                ),
                (
                    "fetch",
                    {
                        "source_id": "geonames-cities-population",
                        "filters": {"unit": "city:660158"},
                        "cell": True,
                    },
                ),
            ],
            "Helsinki has {v1} and Espoo {v2} (GeoNames, period not stated).",
        ],
    ),
)
