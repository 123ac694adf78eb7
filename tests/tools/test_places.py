"""The tools that fetch (places, boundaries, routes, reachable areas, traffic) through a
ToolContext, answered by the offline provider or a traffic test double."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest
import shapely
from pydantic import ValidationError
from shapely.geometry import shape
from tests.providers.contract import haversine_m

from geomint.provenance import Provenance
from geomint.providers import bundled
from geomint.providers.base import Found, Providers
from geomint.providers.offline import OfflineProvider
from geomint.state import FetchMade, FetchMissed, ViewChanged
from geomint.tools import ToolContext, ToolError, ToolResult
from geomint.tools._where import union_bbox_km2
from geomint.tools.places import MAX_TRAFFIC_KM2, Point, RangeInput
from geomint.ui import MissPart

from .conftest import MakeCtx, UiLog
from .helpers import call

pytestmark = pytest.mark.anyio

OFFLINE = OfflineProvider()
RAUTATIENTORI = (24.944097, 60.171325)  # the square, found by that name
SENAATINTORI = (24.9522, 60.1692)
#: A small box around the Esplanade, away from the station.
ESPLANADE_VIEW = (24.944, 60.1665, 24.953, 60.1690)
TRAFFIC = Provenance(
    source_id="fake-traffic",
    title="Scripted traffic incidents",
    publisher="geomint tests",
    licence="CC0-1.0",
    retrieved_at=datetime(2026, 1, 1, tzinfo=UTC),
    evidence="observed",
)


class FakeTraffic:
    """A traffic source that records the boxes it is asked for and reports one jam."""

    name = "fake-traffic"

    def __init__(self) -> None:
        self.asked: list[tuple[float, float, float, float]] = []

    async def incidents(self, bbox: tuple[float, float, float, float]) -> Found:
        self.asked.append(bbox)
        west, south, east, north = bbox
        jam = {
            "type": "Feature",
            "geometry": {"type": "Point", "coordinates": [(west + east) / 2, (south + north) / 2]},
            "properties": {"category": "jam", "magnitude": 2, "delay_s": 120},
        }
        return Found(
            data={"type": "FeatureCollection", "features": [jam]},
            sources=(TRAFFIC,),
            provider=self.name,
            endpoint="fake:incidents",
            request={"bbox": list(bbox)},
        )


class EmptyGeocoder:
    """A geocoder that answers "nothing" (an empty collection) rather than a miss."""

    name = "empty"

    async def locate(self, query: str, **_: Any) -> Found:
        return Found(
            data={"type": "FeatureCollection", "features": []},
            sources=(TRAFFIC,),
            provider=self.name,
            endpoint="empty:locate",
            request={"query": query},
        )


@pytest.fixture
def ctx(make_ctx: MakeCtx) -> ToolContext:
    return make_ctx(providers=Providers.single(OFFLINE))


@pytest.fixture
def traffic() -> FakeTraffic:
    return FakeTraffic()


@pytest.fixture
def tctx(make_ctx: MakeCtx, traffic: FakeTraffic) -> ToolContext:
    return make_ctx(
        providers=Providers(geocoder=OFFLINE, boundaries=OFFLINE, router=OFFLINE, traffic=traffic)
    )


def bodies(ctx: ToolContext, kind: type) -> list[Any]:
    return [e.body for e in ctx.chats.trace(ctx.chat_id) if isinstance(e.body, kind)]


def features(ctx: ToolContext, entry_id: str) -> list[dict[str, Any]]:
    found: list[dict[str, Any]] = ctx.entry_data(entry_id)["features"]
    return found


def _source(name: str) -> Provenance:
    return Provenance(**bundled.source(name))


async def run(ctx: ToolContext, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    result = await call(ctx, name, arguments)
    assert isinstance(result, ToolResult)
    assert not result.failed, result.model
    model: dict[str, Any] = result.model
    return model


# -- locate_place ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("query", "label"),
    [
        ("Helsinki Cathedral", "Helsingin tuomiokirkko (Helsinki Cathedral)"),
        (
            "Helsinki Central Station",
            "Helsingin päärautatieasema (Helsinki Central Railway Station)",
        ),
        ("Senate Square", "Senaatintori (Helsinki Senate Square)"),
        ("Senatstorget", "Senaatintori (Senatstorget)"),
        ("Kaisaniemi park", "Kaisaniemen puisto (Kaisaniemi Park)"),
        ("Esplanade park", "Esplanadinpuisto (Esplanadparken)"),
        ("Kluuvi", "Kluuvi"),
        ("central Helsinki", "central Helsinki (the area the bundled data covers)"),
    ],
)
async def test_landmarks_and_districts_are_found_by_their_english_finnish_and_swedish_names(
    ctx: ToolContext, query: str, label: str
) -> None:
    out = await run(ctx, "locate_place", {"query": query, "limit": 1})

    west, south, east, north = bundled.bounds()
    [place] = features(ctx, out["entry_id"])
    lon, lat = place["geometry"]["coordinates"]
    assert west <= lon <= east and south <= lat <= north
    assert ctx.refresh().entries[out["entry_id"]].latest.label == label


async def test_a_name_only_spelled_like_a_city_far_away_is_a_miss_with_local_candidates(
    ctx: ToolContext,
) -> None:
    out = await run(ctx, "locate_place", {"query": "Kallio"})

    assert out["code"] == "not_found"
    assert out["miss"] == (
        "no country, city (100,000 people or more) or named place in central Helsinki "
        "matches 'Kallio'; names in central Helsinki close to it: Vallila, Kappeli, Alko; "
        "only spelled like Cali (CO, 10,306 km away), Callao (PE, 11,835 km away), too far "
        "from central Helsinki to be what was meant; ask by that exact name if it was; the "
        "bundled data covers central Helsinki (bbox 24.935, 60.164, 24.953, 60.179) in "
        "detail, countries worldwide and cities of 100,000 people or more"
    )


async def test_locate_writes_places_and_a_fetch_event(ctx: ToolContext, ui: UiLog) -> None:
    out = await run(ctx, "locate_place", {"query": "Helsingfors", "limit": 1})
    assert out["entry_id"] == "places-1"
    assert out["provider"] == "offline"
    assert out["licences"] == ["CC-BY-4.0"]
    assert out["digest"]["feature_count"] == 1
    [helsinki] = features(ctx, "places-1")
    assert helsinki["properties"]["name"] == "Helsinki"
    entry = ctx.refresh().entries["places-1"]
    # The label is what was found, not what was asked.
    assert (entry.kind, entry.latest.label) == ("places", "Helsinki")
    [made] = bodies(ctx, FetchMade)
    assert (made.tool, made.provider, made.entry_id) == ("locate_place", "offline", "places-1")
    assert made.sources == (_source("cities"),) == entry.latest.sources
    assert made.request["query"] == "Helsingfors"
    assert [p.type for p in ui] == ["entry"]
    assert ctx.refresh().fetches == 1


async def test_a_category_that_is_not_there_is_a_miss_naming_the_categories(
    ctx: ToolContext,
) -> None:
    # "bus_stop" is no category of the bundled places; "bus_station" is, and the stops are
    # in a bundled file: the model, told only "nothing matched", once concluded the data
    # had no bus stops.
    out = await run(ctx, "discover_places", {"category": "bus_stop"})
    assert out["code"] == "not_found"
    assert out["miss"].startswith(
        "no place matched category 'bus_stop' in the area searched; bus and tram stops are "
        "not among these places: the bundled file helsinki_stops.csv holds them (bus_stop "
        "(85), tram_stop (40)); load it as a layer to use them; its categories are "
        "restaurant (214), clothes (98), cafe (85), "
    )
    assert ", bus_station, " in out["miss"] and ", garden, " in out["miss"]
    [missed] = bodies(ctx, FetchMissed)
    assert missed.reason == out["miss"]


async def test_a_search_with_neither_query_nor_category_is_everything_in_the_area(
    ctx: ToolContext,
) -> None:
    # It used to be refused with a hint to match a schema the call already matched.
    out = await run(ctx, "discover_places", {"limit": 20})
    assert out["digest"]["feature_count"] == 20
    assert out["notes"][:2] == [
        "1346 matched; the 20 best kept",
        "every place in the area; by category: restaurant (214), clothes (98), cafe (85), "
        "artwork (64), fast_food (54), pub (51), bicycle_parking (50), hairdresser (40), "
        "parking (39), shop (37), hotel (26), jewelry (23), post_box (22), bar (22), "
        "beauty (22), atm (18), toilets (18), bank (17), optician (17), bicycle_rental (15)",
    ]


async def test_a_name_that_is_not_there_is_a_miss_naming_the_nearest(ctx: ToolContext) -> None:
    out = await run(ctx, "discover_places", {"query": "Kaisaniemi harbour"})
    assert out["miss"] == (
        "no place matched 'Kaisaniemi harbour' in the area searched; the nearest names are "
        "Kaisaniemen puisto (Kaisaniemi Park), Kaisaniemi, Kaisaniemen puisto (Kajsaniemiparken)"
    )


async def test_a_miss_is_a_result_and_an_event(ctx: ToolContext, ui: UiLog) -> None:
    result = await call(ctx, "locate_place", {"query": "Xyzzyplugh"})
    assert isinstance(result, ToolResult)
    assert set(result.model) == {"miss", "code", "provider"}
    assert result.model["code"] == "not_found"
    assert "'Xyzzyplugh'" in result.model["miss"]
    assert not result.failed  # nothing matched: an answer, not a failure
    [missed] = bodies(ctx, FetchMissed)
    assert (missed.tool, missed.code) == ("locate_place", "not_found")
    assert missed.reason == result.model["miss"]
    assert missed.request["query"] == "Xyzzyplugh"
    assert not ctx.refresh().entries
    reason = result.model["miss"]
    (shown,) = ui
    assert isinstance(shown, MissPart)
    assert (shown.tool, shown.provider, shown.code) == ("locate_place", "offline", "not_found")
    assert shown.reason == reason


async def test_an_unsupported_miss_counts_as_failed(ctx: ToolContext) -> None:
    result = await call(
        ctx,
        "discover_places",
        {"category": "cafe", "near": {"lon": 2.35, "lat": 48.85}},
    )
    assert result.failed
    assert result.model["code"] == "unsupported"
    assert "central Helsinki" in result.model["miss"]
    assert bodies(ctx, FetchMissed)[0].code == "unsupported"


async def test_without_providers_the_tools_say_so(make_ctx: MakeCtx) -> None:
    ctx = make_ctx()
    with pytest.raises(ToolError) as caught:
        await call(ctx, "locate_place", {"query": "Helsinki"})
    assert caught.value.message == "no provider here offers geocoding"
    assert caught.value.hint and "TOMTOM_API_KEY" in caught.value.hint


# -- discover_places: near -------------------------------------------------------------------


async def test_discover_near_a_named_point(ctx: ToolContext) -> None:
    out = await run(
        ctx,
        "discover_places",
        {"category": "cafés", "near": {"query": "Rautatientori"}, "radius_m": 200},
    )
    found = features(ctx, out["entry_id"])
    assert found and all(f["properties"]["category"] == "cafe" for f in found)
    distances = [f["properties"]["distance_m"] for f in found]
    assert distances == sorted(distances) and max(distances) <= 200
    [made] = bodies(ctx, FetchMade)
    assert made.tool == "discover_places"
    assert made.sources == (_source("helsinki_places"),)
    lon, lat = made.request["near"]
    assert (lon, lat) == pytest.approx(RAUTATIENTORI, abs=1e-6)


async def test_discover_near_an_earlier_place_or_coordinates(ctx: ToolContext) -> None:
    located = await run(ctx, "locate_place", {"query": "Rautatientori", "limit": 1})
    [station] = features(ctx, located["entry_id"])
    place_id = station["properties"]["id"]
    by_id = await run(
        ctx, "discover_places", {"category": "cafe", "near": {"place_id": place_id}, "limit": 5}
    )
    lon, lat = station["geometry"]["coordinates"]
    by_xy = await run(
        ctx, "discover_places", {"category": "cafe", "near": {"lon": lon, "lat": lat}, "limit": 5}
    )
    assert features(ctx, by_id["entry_id"]) == features(ctx, by_xy["entry_id"])
    with pytest.raises(ToolError) as caught:
        await call(ctx, "discover_places", {"category": "cafe", "near": {"place_id": "osm:x/1"}})
    assert caught.value.message == "no place with id 'osm:x/1' in this chat"
    assert caught.value.hint


async def test_a_near_point_that_is_not_found_is_refused(ctx: ToolContext) -> None:
    with pytest.raises(ToolError, match="'Xyzzyplugh' was not found"):
        await call(ctx, "discover_places", {"category": "cafe", "near": {"query": "Xyzzyplugh"}})


# -- discover_places: where ------------------------------------------------------------------


async def test_where_a_named_area_is_its_boundary(ctx: ToolContext) -> None:
    out = await run(
        ctx,
        "discover_places",
        {"category": "toilets", "where": {"queries": [{"query": "Esplanadinpuisto"}]}},
    )
    park = shape((await OFFLINE.boundary("Esplanadinpuisto")).data["features"][0]["geometry"])
    found = features(ctx, out["entry_id"])
    assert len(found) == 2
    assert all(park.contains(shape(f["geometry"])) for f in found)
    assert ctx.refresh().entries[out["entry_id"]].latest.label == "toilets in 'Esplanadinpuisto'"
    # The event records the request as the provider got it: one area.
    assert bodies(ctx, FetchMade)[0].request["within"] == ["'Esplanadinpuisto'"]  # by name


async def test_where_a_named_place_is_a_circle(ctx: ToolContext) -> None:
    out = await run(
        ctx,
        "discover_places",
        {
            "category": "cafe",
            "where": {
                "queries": [{"query": "Rautatientori", "query_as": "place", "radius_m": 150}]
            },
        },
    )
    found = features(ctx, out["entry_id"])
    assert found
    assert all(haversine_m(f["geometry"]["coordinates"], RAUTATIENTORI) <= 151 for f in found)


async def test_an_empty_answer_for_a_named_area_is_refused(make_ctx: MakeCtx) -> None:
    ctx = make_ctx(providers=Providers(geocoder=EmptyGeocoder(), places=OFFLINE))
    where = {"queries": [{"query": "Kamppi", "query_as": "place"}]}
    with pytest.raises(ToolError) as caught:
        await call(ctx, "discover_places", {"category": "cafe", "where": where})
    assert caught.value.message == "'Kamppi' was not found"
    with pytest.raises(ToolError, match="'Kamppi' was not found"):
        await call(ctx, "discover_places", {"category": "cafe", "near": {"query": "Kamppi"}})
    empty = await call(ctx, "locate_place", {"query": "Kamppi"})
    assert empty.model == {"miss": "nothing matched", "code": "not_found", "provider": "empty"}
    [missed] = bodies(ctx, FetchMissed)
    assert (missed.code, missed.reason) == ("not_found", "nothing matched")


async def test_where_a_geometries_entry(ctx: ToolContext) -> None:
    outline = await run(ctx, "get_boundaries", {"queries": ["Kaisaniemen puisto"]})
    out = await run(
        ctx,
        "discover_places",
        {"category": "artwork", "where": {"geometries": [outline["entry_id"]]}},
    )
    park = shape(features(ctx, outline["entry_id"])[0]["geometry"])
    found = features(ctx, out["entry_id"])
    assert len(found) == 5 and all(park.contains(shape(f["geometry"])) for f in found)
    with pytest.raises(ToolError) as caught:
        await call(
            ctx, "discover_places", {"category": "cafe", "where": {"geometries": ["geometries-7"]}}
        )
    assert caught.value.message == "no geometries entry 'geometries-7'"
    assert caught.value.hint == "the geometries entries are geometries-1"


async def test_where_a_reachable_area(ctx: ToolContext) -> None:
    reach = await run(
        ctx,
        "find_reachable_areas",
        {"origin": {"query": "Rautatientori"}, "time_s": 300, "mode": "walk"},
    )
    out = await run(
        ctx, "discover_places", {"category": "cafe", "where": {"range": reach["entry_id"]}}
    )
    area = shape(features(ctx, reach["entry_id"])[0]["geometry"])
    found = features(ctx, out["entry_id"])
    assert found and all(area.contains(shape(f["geometry"])) for f in found)


async def test_where_a_corridor_along_the_route(ctx: ToolContext) -> None:
    await run(
        ctx,
        "set_route",
        {
            "origin": {"query": "Rautatientori"},
            "destination": {"query": "Senaatintori"},
            "mode": "walk",
        },
    )
    out = await run(
        ctx, "discover_places", {"category": "restaurant", "where": {"route": {"width_m": 100}}}
    )
    line = shape(features(ctx, "routes-1")[0]["geometry"])
    found = features(ctx, out["entry_id"])
    assert found
    # 50 m either side, in degrees at 60°N: at most ~0.0009 of longitude.
    assert all(line.distance(shape(f["geometry"])) < 0.001 for f in found)
    label = ctx.refresh().entries[out["entry_id"]].latest.label
    assert label == "restaurant in 100 m around the route"


async def test_where_a_route_before_any_route_is_refused(ctx: ToolContext) -> None:
    with pytest.raises(ToolError) as caught:
        await call(ctx, "discover_places", {"category": "cafe", "where": {"route": {}}})
    assert caught.value.hint == "call set_route first"


async def test_where_the_viewport(ctx: ToolContext) -> None:
    ctx.append([ViewChanged(bbox=ESPLANADE_VIEW)])
    out = await run(ctx, "discover_places", {"category": "cafe", "where": {"viewport": True}})
    view = shapely.box(*ESPLANADE_VIEW)
    found = features(ctx, out["entry_id"])
    assert found and all(view.contains(shape(f["geometry"])) for f in found)
    assert "notes" not in out or not any("map's view" in n for n in out["notes"])
    assert ctx.refresh().entries[out["entry_id"]].latest.label == "cafe in the map's view"


async def test_a_named_area_wins_over_the_viewport(ctx: ToolContext) -> None:
    ctx.append([ViewChanged(bbox=ESPLANADE_VIEW)])
    out = await run(
        ctx,
        "discover_places",
        {
            "category": "artwork",
            "where": {"viewport": True, "queries": [{"query": "Kaisaniemen puisto"}]},
        },
    )
    assert "searched the named areas, not the map's view" in out["notes"]
    found = features(ctx, out["entry_id"])
    view = shapely.box(*ESPLANADE_VIEW)
    assert len(found) == 5 and not any(view.contains(shape(f["geometry"])) for f in found)


async def test_where_without_an_area_is_refused(ctx: ToolContext) -> None:
    with pytest.raises(ToolError) as caught:
        await call(ctx, "discover_places", {"category": "cafe", "where": {}})
    assert caught.value.message == "where names no area"
    with pytest.raises(ToolError, match="the map's view is not known"):
        await call(ctx, "discover_places", {"category": "cafe", "where": {"viewport": True}})


# -- get_boundaries --------------------------------------------------------------------------


async def test_two_boundaries_are_one_geometries_entry(ctx: ToolContext) -> None:
    out = await run(ctx, "get_boundaries", {"queries": ["Finland", "Esplanadinpuisto"]})
    assert out["entry_id"] == "geometries-1"
    assert out["licences"] == ["ODbL-1.0", "public domain"]
    found = features(ctx, "geometries-1")
    assert [(f["properties"]["name"], f["properties"]["kind"]) for f in found] == [
        ("Finland", "country"),
        ("Esplanadinpuisto", "park"),
    ]
    [made] = bodies(ctx, FetchMade)
    assert made.sources == (_source("countries"), _source("helsinki_boundaries"))
    assert made.request == {
        "queries": ["Finland", "Esplanadinpuisto"],
        "endpoint": "offline:boundaries",
    }


async def test_one_unknown_boundary_keeps_the_others_and_says_so(ctx: ToolContext) -> None:
    result = await call(ctx, "get_boundaries", {"queries": ["Finland", "Atlantis"]})
    assert result.model["entry_id"] == "geometries-1"
    assert result.model["digest"]["feature_count"] == 1
    assert any("'Atlantis'" in note for note in result.model["notes"])


async def test_no_known_boundary_is_a_miss(ctx: ToolContext) -> None:
    result = await call(ctx, "get_boundaries", {"queries": ["Atlantis", "Lemuria"]})
    assert result.model["code"] == "not_found" and "'Atlantis'" in result.model["miss"]
    assert not ctx.refresh().entries


async def test_a_city_with_no_boundary_is_searched_over_all_the_data_has_of_it(
    ctx: ToolContext,
) -> None:
    # "Schools in Helsinki" was a 500 m circle round the city's point: one school of three.
    where = {"queries": [{"query": "Helsinki"}]}
    result = await call(ctx, "discover_places", {"category": "school", "where": where})

    everywhere = await call(ctx, "discover_places", {"category": "school"})
    assert result.model["digest"]["feature_count"] == everywhere.model["digest"]["feature_count"]
    assert result.model["digest"]["feature_count"] >= 3
    assert (
        "'Helsinki' has no boundary here, and the place search covers only the box "
        "[24.935, 60.164, 24.953, 60.179] of it, so that whole box was searched: what was "
        "found is what the data has in 'Helsinki', not all of it"
    ) in result.model["notes"]
    label = ctx.refresh().entries[result.model["entry_id"]].latest.label
    assert label == (
        "school in 'Helsinki' where the place data covers it (bbox [24.935, 60.164, 24.953, "
        "60.179])"
    )


async def test_a_name_with_no_boundary_is_searched_as_a_circle_and_said_so(
    ctx: ToolContext,
) -> None:
    # Kluuvi is a district: the extract clips its outline, so only its point is bundled.
    where = {"mode": "within", "queries": [{"query": "Kluuvi", "radius_m": 300}]}
    result = await call(ctx, "discover_places", {"category": "cafe", "where": where})
    assert (
        "300 m around 'Kluuvi' (no boundary found)"
        in ctx.refresh().entries[result.model["entry_id"]].latest.label
    )
    # The label is for people; the model is told in what it reads (it once reported one
    # school of three, not knowing only a circle round the city's point was searched).
    assert (
        "'Kluuvi' has no boundary here, so only 300 m around its point was searched, not the "
        "whole of it; to search more widely pass a larger radius_m or a bounding_box, or "
        "leave out where to search everything the provider covers"
    ) in result.model["notes"]


# -- set_route -------------------------------------------------------------------------------


async def test_a_route_by_names_with_summaries(ctx: ToolContext) -> None:
    out = await run(
        ctx,
        "set_route",
        {"origin": {"query": "Rautatientori"}, "destination": {"query": "Senaatintori"}},
    )
    assert out["entry_id"] == "routes-1"
    [summary] = out["summaries"]
    assert summary["length_m"] > 500 and summary["duration_s"] > 0
    [route] = features(ctx, "routes-1")
    assert route["properties"]["mode"] == "car"
    assert ctx.refresh().entries["routes-1"].latest.label == "car route"
    [made] = bodies(ctx, FetchMade)
    assert made.sources == (_source("helsinki_roads"),)
    assert len(made.request["waypoints"]) == 2


async def test_a_route_avoiding_through_waypoints(ctx: ToolContext) -> None:
    out = await run(
        ctx,
        "set_route",
        {
            "origin": {"lon": RAUTATIENTORI[0], "lat": RAUTATIENTORI[1]},
            "waypoints": [{"query": "Esplanadinpuisto"}],
            "destination": {"lon": SENAATINTORI[0], "lat": SENAATINTORI[1]},
            "mode": "walk",
            "avoid": ["unpaved"],
        },
    )
    [route] = features(ctx, out["entry_id"])
    assert route["properties"]["avoid"] == ["unpaved"]
    assert [s["leg"] for s in route["properties"]["sections"]] == [0, 1]
    assert ctx.refresh().entries[out["entry_id"]].latest.label == "walk route avoiding unpaved"
    assert out["summaries"][0]["duration_s"] > 0


async def test_a_point_the_model_typed_is_a_source_of_what_rests_on_it(ctx: ToolContext) -> None:
    out = await run(
        ctx,
        "set_route",
        {
            "origin": {"lon": 24.94141, "lat": 60.17188},
            "destination": {"query": "Senaatintori"},
            "mode": "walk",
        },
    )
    typed = "origin typed by the model: 24.9414, 60.1719"
    assert out["notes"][-1].startswith(f"{typed}: every figure computed from this entry")
    sources = ctx.refresh().entries["routes-1"].latest.sources
    assert [(s.title, s.publisher, s.evidence) for s in sources[1:]] == [
        (typed, "the model", "model-typed")
    ]
    # A figure computed from the route carries it to its card.
    length = "routes['features'][0]['properties']['summary']['length_m']"
    code = f"mint.value({length}, 'length', unit='m')\nreturn 1"
    await call(ctx, "analyse_data", {"routes_entry_ids": ["routes-1"], "name": "len", "code": code})
    (value,) = ctx.refresh().values
    assert typed in [s.title for s in value.sources]


async def test_a_route_off_the_map_is_an_unsupported_miss(ctx: ToolContext) -> None:
    result = await call(
        ctx,
        "set_route",
        {"origin": {"query": "Rautatientori"}, "destination": {"query": "Paris"}},
    )
    assert result.failed and result.model["code"] == "unsupported"
    assert "summaries" not in result.model


# -- find_reachable_areas ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("budget", "label"),
    [
        ({"time_s": 300}, "reachable by walk in 5 min"),
        ({"distance_m": 400}, "reachable by walk in 400 m"),
    ],
)
async def test_reachable_by_time_or_distance(
    ctx: ToolContext, budget: dict[str, float], label: str
) -> None:
    out = await run(
        ctx,
        "find_reachable_areas",
        {"origin": {"query": "Rautatientori"}, "mode": "walk", **budget},
    )
    assert out["entry_id"] == "ranges-1"
    [area] = features(ctx, "ranges-1")
    assert area["geometry"]["type"] == "Polygon"
    assert area["properties"]["budget"] == budget
    assert shape(area["geometry"]).contains(shapely.Point(RAUTATIENTORI))
    assert ctx.refresh().entries["ranges-1"].latest.label == label


async def test_a_walking_area_says_how_it_was_built_and_where_it_may_be_wrong(
    ctx: ToolContext,
) -> None:
    # The area fills every enclosed block under 4 ha: its notes used to say only that it
    # was cut at the graph's edge (an under-count), never that it may count too much.
    out = await run(
        ctx,
        "find_reachable_areas",
        {"origin": {"query": "Rautatientori"}, "mode": "walk", "time_s": 300},
    )
    assert out["notes"] == [
        "built on the bundled OpenStreetMap street and path graph of central Helsinki: the "
        "ways walking may use, followed from the graph's node nearest the origin (38 m away) "
        "for up to 5 min at a steady 5 km/h, with no traffic",
        "the area is every street reached, 25 m either side (the street the budget runs out "
        "on, up to where it does), with every gap under 4 ha that those streets enclose "
        "filled in",
        "it may over-count: a filled-in gap (a block, with its buildings and courtyards) "
        "counts as reached though no path into it was followed",
        "it may under-count: a gap of 4 ha or more (a large park, a rail yard, water) is left "
        "out beyond 25 m of its streets, and paths missing from the graph were not followed",
    ]


async def test_a_route_says_how_it_was_found_and_timed(ctx: ToolContext) -> None:
    out = await run(
        ctx,
        "set_route",
        {
            "origin": {"query": "Rautatientori"},
            "destination": {"query": "Senaatintori"},
            "mode": "walk",
        },
    )
    assert out["notes"] == [
        "the fastest way for walking on the bundled OpenStreetMap street and path graph of "
        "central Helsinki, timed at a steady 5 km/h: travel times are estimates, with no "
        "traffic",
        "the route runs between the graph's nodes nearest the waypoints (38 m, 22 m away, in "
        "order): the way to and from them is not in its length or time",
    ]


@pytest.mark.parametrize("budget", [{}, {"time_s": 300, "distance_m": 400}])
def test_reachable_wants_one_budget(budget: dict[str, float]) -> None:
    with pytest.raises(ValidationError, match="give a time_s or a distance_m budget"):
        RangeInput.model_validate({"origin": {"lon": 24.94, "lat": 60.17}, **budget})


# -- traffic ---------------------------------------------------------------------------------


async def test_no_traffic_offline(ctx: ToolContext) -> None:
    ctx.append([ViewChanged(bbox=ESPLANADE_VIEW)])
    with pytest.raises(ToolError) as caught:
        await call(ctx, "get_traffic_incidents", {})
    assert caught.value.message == "no provider here offers traffic incidents"


async def test_traffic_defaults_to_the_viewport(tctx: ToolContext, traffic: FakeTraffic) -> None:
    tctx.append([ViewChanged(bbox=ESPLANADE_VIEW)])
    out = await run(tctx, "get_traffic_incidents", {})
    assert traffic.asked == [pytest.approx(ESPLANADE_VIEW)]
    assert out["entry_id"] == "incidents-1"
    assert out["area_km2"] == pytest.approx(union_bbox_km2(ESPLANADE_VIEW), abs=0.1)
    assert out["licences"] == ["CC0-1.0"]
    assert (
        tctx.refresh().entries["incidents-1"].latest.label == "traffic incidents in the map's view"
    )
    assert bodies(tctx, FetchMade)[0].provider == "fake-traffic"


async def test_traffic_over_a_country_is_refused_with_its_size(
    tctx: ToolContext, traffic: FakeTraffic
) -> None:
    with pytest.raises(ToolError) as caught:
        await call(tctx, "get_traffic_incidents", {"where": {"queries": [{"query": "Finland"}]}})
    message = caught.value.message
    assert message.startswith("the area ('Finland') spans ")
    assert "km², over the 10,000 km²" in message
    size = float(message.split("spans ")[1].split(" km²")[0].replace(",", ""))
    assert size > 10 * MAX_TRAFFIC_KM2
    assert caught.value.hint and "narrow it" in caught.value.hint
    assert traffic.asked == []
    assert not bodies(tctx, FetchMade) and not bodies(tctx, FetchMissed)


async def test_traffic_for_a_named_area_over_the_viewport(
    tctx: ToolContext, traffic: FakeTraffic
) -> None:
    tctx.append([ViewChanged(center=(10.75, 59.91), zoom=12)])  # Oslo on the map
    out = await run(
        tctx,
        "get_traffic_incidents",
        {"where": {"viewport": True, "queries": [{"query": "Esplanadinpuisto"}]}},
    )
    assert out["notes"] == ["answered for the named areas, not the map's view"]
    [bbox] = traffic.asked
    assert shapely.box(*bbox).within(shapely.box(*bundled.bounds()))


async def test_traffic_area_analytics_is_unsupported(ctx: ToolContext, tctx: ToolContext) -> None:
    where = {"queries": [{"query": "Esplanadinpuisto"}]}
    for context in (ctx, tctx):  # offline, and a traffic source without analytics
        with pytest.raises(ToolError) as caught:
            await call(context, "get_traffic_area_analytics", {"where": where})
        assert caught.value.message == "no provider here offers traffic area analytics"


# -- the Point model -------------------------------------------------------------------------


@pytest.mark.parametrize(
    "given",
    [
        {"lon": 24.94, "lat": 60.17},
        {"lon": 0, "lat": 0},
        {"place_id": "osm:node/1"},
        {"query": "Rautatientori"},
    ],
)
def test_a_point_is_exactly_one_thing(given: dict[str, Any]) -> None:
    Point.model_validate(given)


@pytest.mark.parametrize(
    "given",
    [
        {},
        {"lon": 24.94},
        {"lon": 24.94, "query": "Rautatientori"},
        {"lat": 60.17, "place_id": "osm:node/1"},
        {"lon": 24.94, "lat": 60.17, "query": "Rautatientori"},
        {"place_id": "osm:node/1", "query": "Rautatientori"},
        {"lon": 200, "lat": 60.17},
        {"query": "Rautatientori", "name": "x"},
    ],
)
def test_a_point_refuses_none_or_several(given: dict[str, Any]) -> None:
    with pytest.raises(ValidationError):
        Point.model_validate(given)


# -- the user's own layers -------------------------------------------------------------------


async def test_discover_also_searches_the_users_own_layers(ctx: ToolContext) -> None:
    stops = await call(
        ctx,
        "add_byod_layer",
        {
            "label": "stops",
            "data": {
                "type": "FeatureCollection",
                "features": [
                    {
                        "type": "Feature",
                        "geometry": {"type": "Point", "coordinates": [24.9414, 60.1712]},
                        "properties": {"name": "Rautatientori", "kind": "bus_stop"},
                    },
                    {
                        "type": "Feature",
                        "geometry": {"type": "Point", "coordinates": [25.5, 61.0]},
                        "properties": {"name": "Far away", "kind": "bus_stop"},
                    },
                ],
            },
        },
    )
    assert stops["entry_id"] == "byod-1"
    near = {"query": "Rautatientori"}
    result = await call(
        ctx, "discover_places", {"category": "bus stops", "near": near, "radius_m": 500}
    )
    features = ctx.entry_data(result.model["entry_id"])["features"]
    assert [f["properties"]["name"] for f in features] == ["Rautatientori"]  # not far away
    assert features[0]["properties"]["provider"] == "byod-1"
    assert "1 from your own layers" in result.model["notes"]
    # The entry carries the user's layer's provenance beside the provider's.
    sources = ctx.workspace.entries[result.model["entry_id"]].latest.sources
    assert any(s.evidence == "user-supplied" for s in sources)


async def test_own_layers_answer_where_the_provider_cannot(ctx: ToolContext) -> None:
    data = {
        "type": "FeatureCollection",
        "features": [
            {
                "type": "Feature",
                "geometry": {"type": "Point", "coordinates": [25.5, 61.0]},
                "properties": {"name": "Kahvila Kaukana", "category": "cafe"},
            }
        ],
    }
    await call(ctx, "add_byod_layer", {"label": "my cafés", "data": data})
    result = await call(
        ctx, "discover_places", {"category": "cafe", "near": {"lon": 25.5, "lat": 61.0}}
    )
    assert result.model["digest"]["feature_count"] == 1
    assert any("central Helsinki" in note for note in result.model["notes"])
    off = await call(
        ctx,
        "discover_places",
        {"category": "cafe", "near": {"lon": 25.5, "lat": 61.0}, "include_my_layers": False},
    )
    assert off.model["code"] == "unsupported"


# -- outlines: said where a place has one, and listed -------------------------------------


async def test_a_place_that_has_an_outline_says_so_and_how_to_get_it(ctx: ToolContext) -> None:
    # A park came back as a bare point, and an analysis of what lies in it under-counted.
    out = await run(ctx, "discover_places", {"query": "Esplanadinpuisto", "limit": 1})

    [park] = features(ctx, out["entry_id"])
    assert park["properties"]["has_outline"] is True
    assert out["notes"][-1] == (
        "1 of these are points of an area with an outline ('Esplanadinpuisto'): a point "
        "stands for the whole area only roughly; get_boundaries(queries=[...]) with their "
        "names gives their polygons"
    )
    cafes = await run(ctx, "discover_places", {"category": "cafe", "limit": 5})
    assert not any("outline" in note for note in cafes.get("notes", []))


async def test_get_boundaries_lists_the_outlines_it_has(ctx: ToolContext) -> None:
    out = await run(ctx, "get_boundaries", {"list_names": True})

    assert out["note"] == (
        "besides these, every country's outline; ask get_boundaries with queries=[names]"
    )
    assert "Kaisaniemen puisto" in out["names"]["park"]
    assert "Senaatintori" in out["names"]["square"]
    assert out["names"]["cathedral"] == ["Helsingin tuomiokirkko"]
    assert not ctx.refresh().entries  # a listing is no entry


async def test_a_provider_with_no_list_of_outlines_says_to_ask_by_name(
    make_ctx: MakeCtx,
) -> None:
    class Worldwide:
        name = "worldwide"

        async def boundary(self, query: str, *, limit: int = 1) -> Found:
            raise AssertionError("not asked")

    ctx = make_ctx(providers=Providers(boundaries=Worldwide()))
    out = await run(ctx, "get_boundaries", {"list_names": True})
    assert out == {
        "names": None,
        "note": "worldwide finds outlines by name wherever it has them and keeps no list: "
        "ask by name",
    }


async def test_get_boundaries_needs_a_name_or_the_listing(ctx: ToolContext) -> None:
    with pytest.raises(ValidationError, match="give queries"):
        await call(ctx, "get_boundaries", {})


@pytest.mark.parametrize("query", ["the central station", "central station", "the station"])
async def test_the_station_is_found_as_people_ask_for_it(ctx: ToolContext, query: str) -> None:
    # The tool's own example prompt is "Where is the central station?".
    out = await run(ctx, "locate_place", {"query": query, "limit": 1})
    # The station building, or the railway station's own point (named "Helsinki" in OSM).
    [station] = features(ctx, out["entry_id"])
    assert station["properties"]["category"] == "station", station["properties"]
    assert haversine_m(station["geometry"]["coordinates"], (24.9414, 60.1710)) < 150


async def test_an_area_read_as_another_outline_says_what_stood_in(ctx: ToolContext) -> None:
    # "Kamppi" (a district outside the data) was searched inside Kamppi Chapel's outline,
    # and the model read "no cafe" as Kamppi's.
    where = {"queries": [{"query": "Kamppi"}]}
    result = await call(ctx, "discover_places", {"category": "cafe", "where": where})
    said = result.model.get("notes") or [result.model.get("miss", "")]
    assert (
        "'Kamppi' has no outline of its own here; the outline searched is Kampin kappeli "
        "(Kamppi Chapel), a church, the nearest by name; to search elsewhere pass a "
        "bounding_box, or query_as='place' with a radius_m"
    ) in said


async def test_a_city_near_but_outside_the_covered_box_is_no_reading_of_it(
    ctx: ToolContext,
) -> None:
    # Espoo's point is 16 km from the box: no part of central Helsinki is Espoo's.
    where = {"queries": [{"query": "Espoo"}]}
    result = await call(ctx, "discover_places", {"category": "cafe", "where": where})
    assert result.model["code"] == "unsupported"
    assert "the nearest covered area is central Helsinki" in result.model["miss"]
