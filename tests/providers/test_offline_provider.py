"""The offline provider: the contract on central Helsinki, and what only it promises
(names as people type them, categories in their words, the coverage it says it has)."""

from __future__ import annotations

import itertools
import time
from datetime import UTC, datetime
from typing import Any

import pytest
import shapely
from shapely.geometry import shape
from tests.providers.contract import (
    AvoidCase,
    ProviderContract,
    Scenario,
    check_found,
    check_place,
    check_route,
    haversine_m,
)

from geomint.provenance import Provenance
from geomint.providers import bundled
from geomint.providers.base import Found, ProviderMiss, Providers, TravelMode
from geomint.providers.offline import OfflineProvider

pytestmark = pytest.mark.anyio

RAUTATIENTORI = (24.943045, 60.171366)
SENAATINTORI = (24.9522, 60.1692)
PARIS = (2.3488, 48.8534)
#: A walk across Kaisaniemi park: the shortest way is on its unpaved paths.
PARK_WALK = ((24.9455, 60.1745), (24.9495, 60.1755))

SCENARIO = Scenario(
    provider="offline",
    claims=frozenset({"geocoder", "places", "boundaries", "router", "ranges"}),
    place="Rautatientori",
    place_at=RAUTATIENTORI,
    place_within_m=100,  # the square itself, whose middle is 58 m from its bus station
    city="Helsinki",
    area="Esplanadinpuisto",
    area_kind="park",
    category="cafe",
    category_near=RAUTATIENTORI,
    category_radius_m=300,
    route=(RAUTATIENTORI, SENAATINTORI),
    route_mode="car",
    avoid=AvoidCase(waypoints=PARK_WALK, mode="walk", avoid=("unpaved",), detours=True),
    range_origin=RAUTATIENTORI,
    range_mode="walk",
    range_times_s=(180, 420),
    range_distance_m=400,
    outside=PARIS,
    licences=frozenset({"ODbL-1.0", "CC-BY-4.0", "public domain"}),
)

_PROVIDER = OfflineProvider()


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture
def provider() -> OfflineProvider:
    # One provider for the module: its data loads on first use.
    return _PROVIDER


class TestOfflineContract(ProviderContract):
    scenario = SCENARIO


def _source(name: str) -> Provenance:
    return Provenance(**bundled.source(name))


def _names(found: Found) -> list[str]:
    return [f["properties"]["name"] for f in found.data["features"]]


async def _miss(call: Any) -> ProviderMiss:
    with pytest.raises(ProviderMiss) as caught:
        await call
    return caught.value


# -- the protocols ---------------------------------------------------------------------------


def test_providers_single_offers_everything_but_traffic(provider: OfflineProvider) -> None:
    providers = Providers.single(provider)
    assert providers.geocoder is providers.places is providers.router is provider
    assert providers.boundaries is providers.ranges is provider
    assert providers.traffic is None


# -- geocoding -------------------------------------------------------------------------------


@pytest.mark.parametrize("query", ["Helsinki", "helsinki", "Helsingfors", "HELSINGFORS"])
async def test_helsinki_by_its_names(provider: OfflineProvider, query: str) -> None:
    found = await provider.locate(query, limit=3)
    best = found.data["features"][0]
    assert best["properties"]["id"] == "geonames:658225"
    assert best["properties"]["name"] == "Helsinki"
    assert best["properties"]["category"] == "city"
    assert best["properties"]["score"] == 1.0
    assert haversine_m(best["geometry"]["coordinates"], (24.9384, 60.1699)) < 2_000


@pytest.mark.parametrize("query", ["Sao Paulo", "São Paulo", "sao paulo", "SÃO PAULO"])
async def test_accents_and_case_do_not_matter(provider: OfflineProvider, query: str) -> None:
    found = await provider.locate(query, limit=1)
    props = found.data["features"][0]["properties"]
    assert (props["name"], props["country_code"]) == ("São Paulo", "BR")


@pytest.mark.parametrize(
    ("code", "name"), [("FI", "Finland"), ("fin", "Finland"), ("BR", "Brazil")]
)
async def test_a_country_by_its_iso_code(provider: OfflineProvider, code: str, name: str) -> None:
    found = await provider.locate(code, limit=3)
    best = found.data["features"][0]
    assert best["properties"]["name"] == name
    assert best["properties"]["category"] == "country"
    outline = await provider.boundary(name)
    assert shape(outline.data["features"][0]["geometry"]).contains(shape(best["geometry"]))


async def test_a_country_point_lies_in_its_mainland(provider: OfflineProvider) -> None:
    # A representative point of Norway's MultiPolygon lands on Svalbard (79.8°N).
    found = await provider.locate("Norway", limit=1)
    lon, lat = found.data["features"][0]["geometry"]["coordinates"]
    assert 4 < lon < 31 and 58 < lat < 71


async def test_a_country_by_its_iso_name(provider: OfflineProvider) -> None:
    found = await provider.locate("Democratic Republic of the Congo", limit=1)
    assert _names(found) == ["Dem. Rep. Congo"]


async def test_scores_tell_an_exact_name_from_a_partial_one(provider: OfflineProvider) -> None:
    # Warsaw's alias "Paris of the North" starts with "Paris": it ranks, but below Paris.
    found = await provider.locate("Paris", limit=3)
    scores = [f["properties"]["score"] for f in found.data["features"]]
    assert _names(found)[0] == "Paris"
    assert scores[0] == 1.0 and all(s < 1.0 for s in scores[1:])


async def test_country_filter(provider: OfflineProvider) -> None:
    anywhere = await provider.locate("London", limit=3)
    assert [f["properties"]["country_code"] for f in anywhere.data["features"][:2]] == ["GB", "CA"]
    canada = await provider.locate("London", country="ca", limit=3)
    assert {f["properties"]["country_code"] for f in canada.data["features"]} == {"CA"}
    assert canada.request["country"] == "ca"


async def test_country_filter_that_excludes_everything_says_so(provider: OfflineProvider) -> None:
    miss = await _miss(provider.locate("Helsinki", country="SE"))
    assert miss.code == "not_found"
    assert "in country SE" in miss.reason


async def test_a_country_filter_skips_territories_without_iso_codes(
    provider: OfflineProvider,
) -> None:
    # Somaliland and N. Cyprus have no iso_a2: the filter compares them as no code.
    found = await provider.locate("Cyprus", country="CY", limit=5)
    assert _names(found)[0] == "Cyprus"


async def test_near_reranks_same_names(provider: OfflineProvider) -> None:
    ontario = await provider.locate("London", near=(-81.25, 42.98), limit=3)
    best = ontario.data["features"][0]["properties"]
    assert (best["name"], best["country_code"]) == ("London", "CA")
    assert all(type(f["properties"]["score"]) is float for f in ontario.data["features"])


async def test_a_miss_suggests_close_names(provider: OfflineProvider) -> None:
    miss = await _miss(provider.locate("Xyzzyplugh"))
    assert miss.code == "not_found"
    assert "'Xyzzyplugh'" in miss.reason and "central Helsinki" in miss.reason
    empty = await _miss(provider.locate("  "))
    assert empty.code == "not_found"


async def test_a_typo_still_finds_the_city(provider: OfflineProvider) -> None:
    found = await provider.locate("Helsinkki", limit=1)
    assert _names(found) == ["Helsinki"]


# -- place search ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("typed", "category"),
    [
        ("cafés", "cafe"),
        ("Cafe", "cafe"),
        ("coffee", "cafe"),
        ("coffee shops", "cafe"),
        ("pharmacies", "pharmacy"),
        ("chemist", "pharmacy"),
        ("pubs", "pub"),
        ("churches", "place_of_worship"),
        ("bike parking", "bicycle_parking"),
    ],
)
async def test_categories_as_people_type_them(
    provider: OfflineProvider, typed: str, category: str
) -> None:
    as_typed = await provider.discover(category=typed, limit=500)
    canonical = await provider.discover(category=category, limit=500)
    assert as_typed.count == canonical.count > 0
    for feature in as_typed.data["features"]:
        assert category in feature["properties"]["categories"]


async def test_free_text_matches_names_and_categories(provider: OfflineProvider) -> None:
    by_word = await provider.discover(query="coffee", limit=500)
    assert by_word.count >= (await provider.discover(category="cafe", limit=500)).count
    by_name = await provider.discover(query="Fazer", limit=20)
    assert all("fazer" in f["properties"]["name"].lower() for f in by_name.data["features"])
    scores = [f["properties"]["score"] for f in by_name.data["features"]]
    assert scores == sorted(scores, reverse=True)


async def test_search_within_a_park(provider: OfflineProvider) -> None:
    park = (await provider.boundary("Esplanadinpuisto")).data["features"][0]["geometry"]
    inside = await provider.discover(category="cafe", within=[park], limit=500)
    everywhere = await provider.discover(category="cafe", limit=500)
    assert 0 < inside.count < everywhere.count
    area = shape(park)
    for feature in inside.data["features"]:
        assert area.contains(shape(feature["geometry"]))
    outside = [f for f in everywhere.data["features"] if f not in inside.data["features"]]
    assert not any(area.contains(shape(f["geometry"])) for f in outside)


async def test_near_and_two_areas_is_the_circle_and_either_area(
    provider: OfflineProvider,
) -> None:
    # Two parks apart: a search near the station within both keeps the toilets in either
    # park (in both at once is nowhere).
    parks = [
        (await provider.boundary(name)).data["features"][0]["geometry"]
        for name in ("Esplanadinpuisto", "Kaisaniemen puisto")
    ]
    found = await provider.discover(
        category="toilets", near=RAUTATIENTORI, radius_m=1_500, within=parks, limit=500
    )
    points = [shape(f["geometry"]) for f in found.data["features"]]
    in_each = [sum(shape(park).contains(p) for p in points) for park in parks]
    assert in_each == [2, 1]
    # The circle still counts: 300 m from the station reaches neither park's toilets.
    close = await provider.discover(
        category="toilets", near=RAUTATIENTORI, radius_m=300, within=parks, limit=500
    )
    assert close.count < len(points)


async def test_radius_search_is_nearest_first_within_the_radius(
    provider: OfflineProvider,
) -> None:
    found = await provider.discover(category="restaurant", near=RAUTATIENTORI, radius_m=400)
    distances = [f["properties"]["distance_m"] for f in found.data["features"]]
    assert distances == sorted(distances) and 0 < len(distances) <= 50
    assert max(distances) <= 400
    for feature in found.data["features"]:
        measured = haversine_m(feature["geometry"]["coordinates"], RAUTATIENTORI)
        assert feature["properties"]["distance_m"] == pytest.approx(measured, abs=1.0)
    assert found.notes and "nearest" in found.notes[0]


async def test_results_are_the_callers_to_change(provider: OfflineProvider) -> None:
    first = await provider.discover(category="cafe", near=RAUTATIENTORI, limit=1)
    first.data["features"][0]["geometry"]["coordinates"][0] = 0.0
    first.data["features"][0]["properties"]["name"] = "changed"
    again = await provider.discover(category="cafe", near=RAUTATIENTORI, limit=1)
    assert again.data["features"][0]["geometry"]["coordinates"][0] != 0.0
    assert again.data["features"][0]["properties"]["name"] != "changed"


async def test_search_outside_helsinki_says_what_it_covers(provider: OfflineProvider) -> None:
    miss = await _miss(provider.discover(category="cafe", near=PARIS, radius_m=2_000))
    assert miss.code == "unsupported"
    assert "central Helsinki" in miss.reason
    assert "24.935" in miss.reason and "TomTom" in miss.reason
    beyond = await _miss(
        provider.discover(
            category="cafe", within=[shapely.geometry.mapping(shapely.box(0, 0, 1, 1))]
        )
    )
    assert beyond.code == "unsupported"


async def test_a_search_outside_says_where_the_nearest_covered_area_is(
    provider: OfflineProvider,
) -> None:
    tampere = (23.7610, 61.4978)
    miss = await _miss(provider.discover(category="cafe", near=tampere, radius_m=2_000))
    assert miss.reason == (
        "the offline provider only has places for central Helsinki (bbox 24.935, 60.164, "
        "24.953, 60.179), and the area searched lies outside it: the nearest covered area is "
        "central Helsinki (bbox 24.935, 60.164, 24.953, 60.179), 160 km south-east; "
        "configure TomTom or the OpenStreetMap stack to search elsewhere"
    )
    away = await _miss(provider.route([RAUTATIENTORI, tampere], mode="walk"))
    assert "the nearest covered area is central Helsinki" in away.reason
    assert "160 km south-east" in away.reason


async def test_a_city_name_is_not_the_outline_of_a_landmark_named_after_it(
    provider: OfflineProvider,
) -> None:
    # "Helsinki Cathedral" is one of the cathedral's names; "Helsinki" is the city, and
    # offline it has no outline.
    miss = await _miss(provider.boundary("Helsinki"))
    assert miss.code == "not_found"
    cathedral = await provider.boundary("Helsinki Cathedral")
    [outline] = cathedral.data["features"]
    assert outline["properties"] == {
        "id": "osm:way/419479428",
        "name": "Helsingin tuomiokirkko",
        "kind": "cathedral",
        "matched_name": "Helsinki Cathedral",
    }
    covered = await provider.boundary("central Helsinki")
    assert covered.data["features"][0]["properties"]["kind"] == "covered area"


async def test_an_unknown_category_finds_nothing_rather_than_everything(
    provider: OfflineProvider,
) -> None:
    found = await provider.discover(category="unicorn stables")
    assert found.count == 0


# -- boundaries ------------------------------------------------------------------------------


async def test_boundaries_of_a_country_and_a_park(provider: OfflineProvider) -> None:
    finland = await provider.boundary("Finland")
    feature = finland.data["features"][0]
    assert feature["properties"] == {"id": "country:FIN", "name": "Finland", "kind": "country"}
    assert shape(feature["geometry"]).contains(shapely.Point(RAUTATIENTORI))
    assert finland.sources == (_source("countries"),)
    park = await provider.boundary("Kaisaniemen puisto")
    assert park.data["features"][0]["properties"]["kind"] == "park"
    assert park.sources == (_source("helsinki_boundaries"),)


async def test_a_boundary_miss_suggests_the_park(provider: OfflineProvider) -> None:
    miss = await _miss(provider.boundary("Kaisaniemenpuisto"))
    assert miss.code == "not_found"
    assert "Kaisaniemen puisto" in miss.reason


# -- routes ----------------------------------------------------------------------------------


async def test_walking_and_driving_speeds_are_plausible(provider: OfflineProvider) -> None:
    pace = {}
    for mode in ("walk", "bike", "car"):
        found = await provider.route([RAUTATIENTORI, SENAATINTORI], mode=mode)
        summary = found.data["features"][0]["properties"]["summary"]
        pace[mode] = summary["length_m"] / summary["duration_s"] * 3.6  # km/h
    # A kilometre on foot takes about 12 minutes.
    assert 4.5 <= pace["walk"] <= 5.5
    assert 12 <= pace["bike"] <= 18
    assert pace["walk"] < pace["bike"] and 10 <= pace["car"] <= 50


async def test_a_route_through_a_waypoint_has_a_section_per_leg(
    provider: OfflineProvider,
) -> None:
    via = (24.9400, 60.1750)
    found = await provider.route([RAUTATIENTORI, via, SENAATINTORI], mode="walk")
    feature = found.data["features"][0]
    check_route(feature, [RAUTATIENTORI, via, SENAATINTORI], mode="walk")
    line = feature["geometry"]["coordinates"]
    sections = feature["properties"]["sections"]
    assert [s["leg"] for s in sections] == [0, 1]
    assert sections[0]["start_index"] == 0 and sections[-1]["end_index"] == len(line) - 1
    assert sections[0]["end_index"] == sections[1]["start_index"]
    assert haversine_m(line[sections[0]["end_index"]], via) < 100
    direct = await provider.route([RAUTATIENTORI, SENAATINTORI], mode="walk")
    assert (
        feature["properties"]["summary"]["length_m"]
        > direct.data["features"][0]["properties"]["summary"]["length_m"]
    )


async def test_avoiding_motorways_where_the_extract_has_none(provider: OfflineProvider) -> None:
    # Central Helsinki's extract has no motorway or trunk road: avoiding them changes
    # nothing, and the route is still a route.
    classes = {way.highway for way in bundled.road_graph().ways}
    assert not classes & {"motorway", "motorway_link", "trunk", "trunk_link"}
    plain = await provider.route([RAUTATIENTORI, SENAATINTORI])
    avoiding = await provider.route([RAUTATIENTORI, SENAATINTORI], avoid=["motorways"])
    feature = check_found(avoiding, SCENARIO)[0]
    check_route(feature, [RAUTATIENTORI, SENAATINTORI], mode="car", avoid=["motorways"])
    assert feature["geometry"] == plain.data["features"][0]["geometry"]


def _surfaces(feature: dict[str, Any]) -> list[str | None]:
    """The surface of each edge the route's line runs along."""
    graph = bundled.road_graph()
    edges: dict[tuple[tuple[float, float], tuple[float, float]], list[int]] = {}
    for edge, (a, b) in enumerate(zip(graph.source, graph.target, strict=True)):
        edges.setdefault(((graph.lon[a], graph.lat[a]), (graph.lon[b], graph.lat[b])), []).append(
            edge
        )
    line = [tuple(p) for p in feature["geometry"]["coordinates"]]
    surfaces = []
    for a, b in itertools.pairwise(line):
        surfaces.extend(graph.ways[graph.way[e]].tags.get("surface") for e in edges[(a, b)])
    return surfaces


async def test_avoiding_unpaved_keeps_off_unpaved_paths(provider: OfflineProvider) -> None:
    plain = await provider.route(list(PARK_WALK), mode="walk")
    avoiding = await provider.route(list(PARK_WALK), mode="walk", avoid=["unpaved"])
    assert "unpaved" in _surfaces(plain.data["features"][0])
    assert "unpaved" not in _surfaces(avoiding.data["features"][0])


async def test_route_refusals(provider: OfflineProvider) -> None:
    one = await _miss(provider.route([RAUTATIENTORI]))
    assert one.code == "refused"
    away = await _miss(provider.route([RAUTATIENTORI, PARIS], mode="walk"))
    assert away.code == "unsupported"
    assert "the destination" in away.reason and "central Helsinki" in away.reason


# -- reachable areas -------------------------------------------------------------------------


async def test_ten_minutes_walk_holds_near_cafes_not_far_ones(provider: OfflineProvider) -> None:
    found = await provider.reachable(RAUTATIENTORI, time_s=600, mode="walk")
    area = shape(found.data["features"][0]["geometry"])
    assert found.notes == (
        "built on the bundled OpenStreetMap street and path graph of central Helsinki: the "
        "ways walking may use, followed from the graph's node nearest the origin (3 m away) "
        "for up to 10 min at a steady 5 km/h, with no traffic",
        "the area is every street reached, 25 m either side (the street the budget runs out "
        "on, up to where it does), with every gap under 4 ha that those streets enclose "
        "filled in",
        "it may over-count: a filled-in gap (a block, with its buildings and courtyards) "
        "counts as reached though no path into it was followed",
        "it may under-count: a gap of 4 ha or more (a large park, a rail yard, water) is left "
        "out beyond 25 m of its streets, and paths missing from the graph were not followed",
        "the area reaches the edge of the offline road graph: streets beyond it are not in "
        "the graph, so the area is cut there and under-counts on that side",
    )
    assert area.exterior.is_ccw, "RFC 7946: exterior rings counter-clockwise"
    cafes = (await provider.discover(category="cafe", limit=500)).data["features"]
    near = [f for f in cafes if haversine_m(f["geometry"]["coordinates"], RAUTATIENTORI) < 250]
    assert len(near) >= 5
    assert all(area.contains(shape(f["geometry"])) for f in near)
    # A café set back from the street, in a block the reached streets go round.
    aalto = await provider.discover(query="Café Aalto", limit=1)
    assert area.contains(shape(aalto.data["features"][0]["geometry"]))
    far = [f for f in cafes if f["properties"]["name"] in ("Kim Cafe", "Cafe Ekberg")]
    assert len(far) == 2
    for cafe in far:
        walk = await provider.route([RAUTATIENTORI, cafe["geometry"]["coordinates"]], mode="walk")
        assert walk.data["features"][0]["properties"]["summary"]["duration_s"] > 720
        assert not area.contains(shape(cafe["geometry"]))


async def test_a_driving_area_by_distance_says_its_budget_and_ignores_the_hour(
    provider: OfflineProvider,
) -> None:
    found = await provider.reachable(
        SENAATINTORI, distance_m=300, mode="car", depart_at=datetime(2026, 5, 4, 8, tzinfo=UTC)
    )
    assert found.notes[0] == (
        "built on the bundled OpenStreetMap street and path graph of central Helsinki: the "
        "ways cars may use, followed from the graph's node nearest the origin (63 m away) for "
        "up to 300 m along them"
    )
    assert found.notes[-1] == (
        "the departure time was not used: the offline graph has no traffic, so the area is "
        "the same at any hour"
    )


@pytest.mark.parametrize(
    ("mode", "pace"),
    [
        ("bike", "at a steady 15 km/h"),
        (
            "truck",
            "at each way's speed limit (or its class's usual urban speed) times 0.7 for "
            "city-centre driving, at most 35 km/h",
        ),
    ],
)
async def test_a_timed_area_says_the_pace_it_assumed(
    provider: OfflineProvider, mode: TravelMode, pace: str
) -> None:
    found = await provider.reachable(SENAATINTORI, time_s=60, mode=mode)
    assert found.notes[0].endswith(f"for up to 1 min {pace}, with no traffic")


async def test_one_alternative_asked_for_is_named_in_the_singular(
    provider: OfflineProvider,
) -> None:
    found = await provider.route([RAUTATIENTORI, SENAATINTORI], mode="walk", alternatives=1)
    assert found.notes[2] == (
        "the offline router finds one route: the alternative asked for was not looked for"
    )


async def test_a_route_says_what_the_offline_router_did_not_do(
    provider: OfflineProvider,
) -> None:
    found = await provider.route(
        [RAUTATIENTORI, SENAATINTORI],
        mode="car",
        alternatives=2,
        depart_at=datetime(2026, 5, 4, 8, tzinfo=UTC),
    )
    assert found.count == 1
    assert found.notes == (
        "the fastest way for cars on the bundled OpenStreetMap street and path graph of "
        "central Helsinki, timed at each way's speed limit (or its class's usual urban speed) "
        "times 0.7 for city-centre driving: travel times are estimates, with no traffic",
        "the route runs between the graph's nodes nearest the waypoints (21 m, 63 m away, in "
        "order): the way to and from them is not in its length or time",
        "the offline router finds one route: the 2 alternatives asked for were not looked for",
        "the departure time only dates the summary: with no traffic, travel times are the "
        "same at any hour",
    )


async def test_reachable_budget_refusals(provider: OfflineProvider) -> None:
    both = await _miss(provider.reachable(RAUTATIENTORI, time_s=60, distance_m=100))
    neither = await _miss(provider.reachable(RAUTATIENTORI))
    assert both.code == neither.code == "refused"
    away = await _miss(provider.reachable(PARIS, time_s=600))
    assert away.code == "unsupported"


# -- provenance ------------------------------------------------------------------------------


async def test_every_answer_cites_the_bundled_file_it_came_from(
    provider: OfflineProvider,
) -> None:
    cases: list[tuple[Found, tuple[str, ...]]] = [
        (await provider.locate("Helsinki", limit=1), ("cities",)),
        (await provider.locate("Finland", limit=1), ("countries",)),
        (await provider.locate("Rautatientori", limit=1), ("helsinki_places",)),
        (await provider.discover(category="cafe", limit=3), ("helsinki_places",)),
        (await provider.boundary("Esplanadinpuisto"), ("helsinki_boundaries",)),
        (await provider.route([RAUTATIENTORI, SENAATINTORI]), ("helsinki_roads",)),
        (await provider.reachable(RAUTATIENTORI, time_s=120), ("helsinki_roads",)),
    ]
    for found, names in cases:
        check_found(found, SCENARIO)
        assert found.sources == tuple(_source(name) for name in names), found.endpoint
    licences = {
        name: _source(name).licence
        for name in ("cities", "countries", "helsinki_places", "helsinki_roads")
    }
    assert licences == {
        "cities": "CC-BY-4.0",
        "countries": "public domain",
        "helsinki_places": "ODbL-1.0",
        "helsinki_roads": "ODbL-1.0",
    }


async def test_a_mixed_answer_cites_each_dataset_once(provider: OfflineProvider) -> None:
    found = await provider.locate("Finland", limit=3)
    check_found(found, SCENARIO)
    for feature in found.data["features"]:
        check_place(feature, SCENARIO)
    assert found.sources == (_source("countries"), _source("helsinki_places"))


# -- speed (generous: targets belong in benchmarks) ------------------------------------------


async def test_routes_and_ranges_are_quick_once_warm(provider: OfflineProvider) -> None:
    await provider.route([RAUTATIENTORI, SENAATINTORI], mode="walk")
    await provider.reachable(RAUTATIENTORI, time_s=60, mode="walk")
    started = time.perf_counter()
    await provider.route([RAUTATIENTORI, SENAATINTORI], mode="walk")
    assert time.perf_counter() - started < 0.5
    started = time.perf_counter()
    await provider.reachable(RAUTATIENTORI, time_s=600, mode="walk")
    assert time.perf_counter() - started < 2.0
    started = time.perf_counter()
    await provider.locate("Helsingfors")
    assert time.perf_counter() - started < 0.5


# -- names as people type them ----------------------------------------------------------------


@pytest.mark.parametrize(
    ("query", "name", "country"),
    [
        ("Paris.", "Paris", "FR"),  # what surrounds a name is no part of it
        ("'Kiasma'?", "Kiasma", None),
        ("København", "Copenhagen", "DK"),  # ø folded as the bundled names fold it
        ("Kiasma, Helsinki", "Kiasma", None),  # ", Helsinki": the city to search near
        ("Helsinki, Finland", "Helsinki", "FI"),  # ", Finland": the country to search in
        ("Turku, Finland", "Turku", "FI"),
        ("downtown", "central Helsinki (the area the bundled data covers)", None),
        ("city centre", "central Helsinki (the area the bundled data covers)", None),
    ],
)
async def test_a_name_is_read_as_people_type_it(
    provider: OfflineProvider, query: str, name: str, country: str | None
) -> None:
    found = await provider.locate(query, limit=1)
    [best] = found.data["features"]
    assert (best["properties"]["name"], best["properties"].get("country_code")) == (name, country)
    assert best["properties"]["score"] == 1.0


@pytest.mark.parametrize("query", ["UK", "a", "the", "of", "Pori", "*", "."])
async def test_a_code_a_common_word_or_a_prefix_of_a_far_alias_is_no_answer(
    provider: OfflineProvider, query: str
) -> None:
    # "UK" was Jiayuguan (an alternate name starting "Gă-ṳ̆k"), "Pori" Mormugao ("Porio"),
    # "the" The Bronx, "*" Albuquerque.
    miss = await _miss(provider.locate(query))
    assert miss.code == "not_found"


async def test_an_address_finds_a_place_at_it(provider: OfflineProvider) -> None:
    found = await provider.locate("Kaivokatu 1", limit=5)
    names = [f["properties"]["name"] for f in found.data["features"]]
    assert "Helsingin päärautatieasema" in names
    assert all("Kaivokatu 1," in f["properties"]["matched_name"] for f in found.data["features"])


async def test_a_place_named_after_its_neighbour_ranks_after_it(provider: OfflineProvider) -> None:
    found = await provider.locate("Senate Square", limit=2)
    first, second = (f["properties"] for f in found.data["features"])
    assert first["name"] == "Senaatintori" and "square" in first["categories"]
    assert second["category"] == "bicycle_rental"


async def test_a_place_found_by_spelling_only_is_said_so(provider: OfflineProvider) -> None:
    found = await provider.discover(query="sauna")
    assert found.notes == (
        "1 matched 'sauna' by spelling only ('Sauma'): check they are what was asked",
    )
