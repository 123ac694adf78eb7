"""The TomTom provider, against TomTom answers recorded by hand and served on 127.0.0.1.

Each capability's happy path is read into the shared shapes, and the request it sent is
checked (latitude before longitude in TomTom's paths and bodies, the travel mode, what to
avoid, the key). Each failure (a slow answer, 429 then 200, a refused key, 5xx, a body
that is not JSON, one too large) becomes a ``ProviderMiss`` whose reason never holds the
key. No test reaches the internet: the suite's guard fails a socket beyond 127.0.0.1, and
every request must match a recorded route.
"""

from __future__ import annotations

import json
import socket
import time
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path
from typing import Any
from urllib.parse import quote, quote_plus

import pytest
import shapely
from shapely.geometry import shape
from tests.providers.contract import (
    AvoidCase,
    ProviderContract,
    Scenario,
    check_boundary,
    check_found,
    check_incident,
    check_place,
    check_range,
    check_route,
)

from geomint import geo
from geomint.errors import UsageError
from geomint.http import RequestPolicy
from geomint.providers.base import ProviderMiss, Providers
from geomint.providers.tomtom import TomTomProvider
from geomint.testing import RecordedReply, RecordedServer

pytestmark = pytest.mark.anyio

RECORDED = Path(__file__).parent / "recorded" / "tomtom"
KEY = "tt-K3y/+42=secret"
STATION = (24.9414, 60.1712)
LICENCE = "TomTom API terms"

SCENARIO = Scenario(
    provider="tomtom",
    claims=frozenset({"geocoder", "places", "boundaries", "router", "ranges", "traffic"}),
    place="Kiasma",
    place_at=(24.9367, 60.1718),
    place_within_m=200.0,
    city="Helsinki",
    area="Helsinki",
    area_kind="city",
    category="museum",
    category_near=STATION,
    category_radius_m=500.0,
    near_sorts_by_distance=False,
    route=((24.9414, 60.1710), (24.9525, 60.1694)),
    route_mode="car",
    avoid=AvoidCase(waypoints=((24.9414, 60.1710), (24.9525, 60.1694)), avoid=("motorways",)),
    range_origin=STATION,
    range_mode="car",
    range_times_s=(300.0, 600.0),
    range_distance_m=2_000.0,
    traffic_bbox=(24.90, 60.15, 24.98, 60.19),
    licences=frozenset({LICENCE}),
    secrets=(KEY,),
)


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture(scope="module")
def server() -> Iterator[RecordedServer]:
    with RecordedServer(RECORDED, manifest="routes.json") as running:
        yield running


@pytest.fixture(autouse=True)
def expected_only(server: RecordedServer) -> Iterator[None]:
    """Every request one the recordings expected (the suite's guard keeps them on 127.0.0.1)."""
    server.reset()
    yield
    assert not server.unmatched, [f"{s.method} {s.path}" for s in server.unmatched]


@pytest.fixture
def sleeps() -> list[float]:
    return []


def _provider(server: RecordedServer, sleeps: list[float], **policy: Any) -> TomTomProvider:
    policy.setdefault("timeout_s", 3.0)
    return TomTomProvider(
        KEY, base_url=server.base_url, policy=RequestPolicy(sleep=sleeps.append, **policy)
    )


@pytest.fixture
def provider(server: RecordedServer, sleeps: list[float]) -> TomTomProvider:
    return _provider(server, sleeps)


def _secret_free(text: str) -> None:
    for form in (KEY, quote(KEY, safe=""), quote_plus(KEY), quote(KEY)):
        assert form not in text, f"the key is in {text!r}"


def _miss_is_told(miss: ProviderMiss, code: str) -> None:
    assert miss.code == code, f"{miss.code}: {miss.reason}"
    assert miss.provider == "tomtom"
    _secret_free(miss.reason)
    _secret_free(str(miss))
    _secret_free(miss.endpoint)


# -- the provider itself ----------------------------------------------------------------------


def test_the_key_comes_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TOMTOM_API_KEY", KEY)
    provider = TomTomProvider(base_url="http://127.0.0.1:9")
    assert KEY in provider.policy.secrets
    assert "http://127.0.0.1:9" in provider.policy.trusted_base_urls
    assert KEY not in repr(provider) and KEY not in repr(provider.policy)
    capabilities = Providers.single(provider)
    assert all(
        getattr(capabilities, name) is provider
        for name in ("geocoder", "places", "boundaries", "router", "ranges", "traffic")
    )


def test_no_key_is_a_usage_error_that_names_the_variable(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("TOMTOM_API_KEY", raising=False)
    with pytest.raises(UsageError, match="TOMTOM_API_KEY"):
        TomTomProvider()


# -- geocoding ---------------------------------------------------------------------------------


async def test_locate_reads_a_fuzzy_search(
    provider: TomTomProvider, server: RecordedServer
) -> None:
    found = await provider.locate("Kiasma", near=STATION, country="fi", limit=5)
    features = check_found(found, SCENARIO)
    for feature in features:
        check_place(feature, SCENARIO)
    kiasma, street = features
    assert kiasma["geometry"]["coordinates"] == [24.936727, 60.171841]
    assert kiasma["properties"] == {
        "id": "tomtom:VUTHtb3HBWzgB7IVLqJsCA",
        "name": "Kiasma",
        "category": "museum",
        "categories": ["museum"],
        "address": "Mannerheiminaukio 2, 00100 Helsinki",
        "score": 1.0,
        "country_code": "FI",
        "phone": "+358 294 500 501",
        "website": "kiasma.fi",
        "provider": "tomtom",
    }
    assert kiasma["properties"]["score"] == 1.0 > street["properties"]["score"] > 0
    assert street["properties"]["category"] == "street"
    assert street["properties"]["name"] == "Kiasmantie"
    (sent,) = server.sent(r"/search/2/search/Kiasma\.json")
    assert sent.param("key") == KEY
    assert (sent.param("lat"), sent.param("lon")) == ("60.1712", "24.9414")
    assert sent.param("countrySet") == "FI" and sent.param("limit") == "5"
    source = found.sources[0]
    assert (source.source_id, source.publisher, source.licence, source.evidence) == (
        "tomtom-search",
        "TomTom",
        LICENCE,
        "observed",
    )
    assert source.url == "https://developer.tomtom.com/terms-and-conditions"
    assert datetime.now(UTC) - source.retrieved_at < timedelta(minutes=1)
    assert found.endpoint == f"{server.base_url}/search/2/search/Kiasma.json"
    assert found.request["query"] == "Kiasma" and "key" not in found.request


async def test_locate_keeps_to_the_limit_and_says_more_matched(
    provider: TomTomProvider,
) -> None:
    found = await provider.locate("Helsinki", limit=1)
    (city,) = check_found(found, SCENARIO)
    assert city["properties"]["name"] == "Helsinki"
    assert city["properties"]["category"] == "city"
    assert found.notes == ("TomTom matched 87; the 1 best are kept",)


async def test_locate_nothing_found_is_not_found(provider: TomTomProvider) -> None:
    with pytest.raises(ProviderMiss) as caught:
        await provider.locate("xyzzy")
    _miss_is_told(caught.value, "not_found")
    assert "'xyzzy'" in caught.value.reason


# -- place search ------------------------------------------------------------------------------


async def test_discover_a_category_near_a_point(
    provider: TomTomProvider, server: RecordedServer
) -> None:
    found = await provider.discover(category="museum", near=STATION, radius_m=500, limit=5)
    features = check_found(found, SCENARIO)
    assert [f["properties"]["name"] for f in features] == ["Kiasma", "Ateneum"]
    assert features[1]["properties"]["distance_m"] == 190.6
    (sent,) = server.sent(r"/search/2/categorySearch/museum\.json")
    assert sent.query["radius"] == ["500"] and sent.query["lat"] == ["60.1712"]


async def test_discover_by_text_is_a_poi_search(
    provider: TomTomProvider, server: RecordedServer
) -> None:
    found = await provider.discover(query="coffee", near=STATION, radius_m=1_000, limit=2)
    features = check_found(found, SCENARIO)
    assert [f["properties"]["category"] for f in features] == ["cafe_pub", "cafe_pub"]
    assert features[0]["properties"]["categories"] == ["café/pub", "café"]
    assert found.notes == ("TomTom matched 41; the 2 best are kept",)
    (sent,) = server.sent(r"/search/2/poiSearch/coffee\.json")
    assert sent.param("limit") == "2" and sent.param("radius") == "1000"


async def test_discover_anything_near_a_point_is_a_nearby_search(
    provider: TomTomProvider, server: RecordedServer
) -> None:
    found = await provider.discover(near=STATION)
    assert found.count == 2
    (sent,) = server.sent(r"/search/2/nearbySearch/\.json")
    assert sent.param("radius") == "1000"


async def test_discover_along_a_route_posts_its_corridor_lat_first(
    provider: TomTomProvider, server: RecordedServer
) -> None:
    """A corridor of many vertices is sent as a covering polygon of at most 50, and the
    results outside the corridor itself are dropped."""
    line = shapely.LineString([(24.9414, 60.1712), (24.9422, 60.1679), (24.9470, 60.1676)])
    corridor = geo.buffer_m(line, 150)
    assert len(corridor.exterior.coords) > 50
    found = await provider.discover(query="coffee", within=[shapely.geometry.mapping(corridor)])
    names = [f["properties"]["name"] for f in check_found(found, SCENARIO)]
    assert names == ["Robert's Coffee Asema", "Café Aalto"]  # not Café Ekberg, 500 m off
    (sent,) = server.sent(r"/search/2/geometrySearch/coffee\.json", "POST")
    assert sent.headers["content-type"] == "application/json"
    (polygon,) = sent.json()["geometryList"]
    assert polygon["type"] == "POLYGON" and len(polygon["vertices"]) <= 50
    lat, lon = map(float, polygon["vertices"][0].split(","))
    assert 60.1 < lat < 60.2 and 24.9 < lon < 25.0
    ring = [tuple(map(float, v.split(",")))[::-1] for v in polygon["vertices"]]
    assert shapely.Polygon(ring).covers(corridor)
    assert found.request["polygons_sent"] == 1


async def test_discover_within_an_area_and_a_circle_keeps_to_both(
    provider: TomTomProvider,
) -> None:
    area = shapely.box(24.93, 60.16, 24.95, 60.175)
    found = await provider.discover(
        query="coffee", within=[shapely.geometry.mapping(area)], near=STATION, radius_m=300
    )
    assert [f["properties"]["name"] for f in found.data["features"]] == ["Robert's Coffee Asema"]


async def test_discover_needs_something_to_look_for(
    provider: TomTomProvider, server: RecordedServer
) -> None:
    with pytest.raises(ProviderMiss) as caught:
        await provider.discover()
    _miss_is_told(caught.value, "refused")
    square = shapely.geometry.mapping(shapely.box(24.93, 60.16, 24.95, 60.175))
    with pytest.raises(ProviderMiss) as caught:
        await provider.discover(within=[square])
    _miss_is_told(caught.value, "refused")
    assert not server.requests


# -- boundaries --------------------------------------------------------------------------------


async def test_boundary_searches_then_fetches_the_outline(
    provider: TomTomProvider, server: RecordedServer
) -> None:
    found = await provider.boundary("Helsinki")
    (feature,) = check_found(found, SCENARIO)
    outline = check_boundary(feature)
    assert outline.covers(shapely.Point(24.9384, 60.1699))
    assert feature["properties"]["kind"] == "city"
    assert feature["properties"]["id"] == "tomtom:mPb5YCg4n0HrlWbcXjDKBQ"
    assert [s.source_id for s in found.sources] == ["tomtom-additional-data", "tomtom-search"]
    (outline_request,) = server.sent(r"/search/2/additionalData\.json")
    assert outline_request.param("geometries") == "00004631-3400-3c00-0000-0000673c4d2e"
    assert outline_request.param("geometriesZoom") == "14"
    assert [s.path for s in server.requests] == [
        "/search/2/search/Helsinki.json",
        "/search/2/additionalData.json",
    ]


async def test_boundary_of_a_place_without_an_outline_is_not_found(
    provider: TomTomProvider, server: RecordedServer
) -> None:
    with pytest.raises(ProviderMiss) as caught:
        await provider.boundary("Kiasma")
    _miss_is_told(caught.value, "not_found")
    assert "Kiasma" in caught.value.reason
    assert not server.sent(r"/search/2/additionalData\.json")


# -- routes ------------------------------------------------------------------------------------


async def test_route_sends_lat_lon_avoids_and_reads_legs_and_sections(
    provider: TomTomProvider, server: RecordedServer
) -> None:
    waypoints = [(24.9414, 60.1710), (24.9316, 60.1686), (24.9525, 60.1694)]
    depart = datetime(2026, 3, 2, 8, 30, tzinfo=timezone(timedelta(hours=2)))
    found = await provider.route(
        waypoints, mode="car", avoid=["tolls", "motorways"], depart_at=depart, alternatives=1
    )
    best, alternative = check_found(found, SCENARIO)
    for feature in (best, alternative):
        check_route(feature, waypoints, mode="car", avoid=["tolls", "motorways"])
    (sent,) = server.sent(r"/routing/1/calculateRoute/.+/json")
    assert sent.path == (
        "/routing/1/calculateRoute/60.171000,24.941400:60.168600,24.931600:60.169400,24.952500/json"
    )
    assert sent.query["avoid"] == ["tollRoads", "motorways"]
    assert sent.query["sectionType"] == ["traffic", "travelMode"]
    assert sent.param("travelMode") == "car" and sent.param("maxAlternatives") == "1"
    assert sent.param("departAt") == "2026-03-02T08:30:00+02:00"
    assert sent.param("traffic") == "true" and sent.param("key") == KEY
    props = best["properties"]
    assert props["summary"] == {
        "length_m": 2480.0,
        "duration_s": 492.0,
        "departure": "2026-03-02T08:30:00+02:00",
        "arrival": "2026-03-02T08:38:12+02:00",
        "traffic_delay_s": 61.0,
        "no_traffic_duration_s": 401.0,
    }
    assert best["geometry"]["coordinates"][0] == [24.94143, 60.17104]
    legs = [s for s in props["sections"] if s["kind"] == "leg"]
    assert [(s["start_index"], s["end_index"]) for s in legs] == [(0, 5), (6, 12)]
    (jam,) = [s for s in props["sections"] if s["kind"] == "traffic"]
    assert jam == {
        "start_index": 8,
        "end_index": 10,
        "kind": "traffic",
        "category": "jam",
        "magnitude": 1.0,
        "delay_s": 61.0,
        "speed_kmh": 14.0,
    }
    assert props["alternative"] == 0 and alternative["properties"]["alternative"] == 1
    assert found.sources[0].evidence == "modelled"
    assert found.sources[0].source_id == "tomtom-routing"


@pytest.mark.parametrize(
    ("mode", "travel_mode"), [("walk", "pedestrian"), ("bike", "bicycle"), ("truck", "truck")]
)
async def test_route_modes_are_tomtom_travel_modes(
    provider: TomTomProvider, server: RecordedServer, mode: Any, travel_mode: str
) -> None:
    found = await provider.route(list(SCENARIO.route), mode=mode)
    assert found.data["features"][0]["properties"]["mode"] == mode
    (sent,) = server.sent(r"/routing/1/calculateRoute/.+/json")
    assert sent.param("travelMode") == travel_mode
    assert "avoid" not in sent.query and "departAt" not in sent.query


async def test_route_departure_without_a_zone_is_utc(
    provider: TomTomProvider, server: RecordedServer
) -> None:
    await provider.route(list(SCENARIO.route), depart_at=datetime(2026, 3, 2, 6, 30))
    (sent,) = server.sent(r"/routing/1/calculateRoute/.+/json")
    assert sent.param("departAt") == "2026-03-02T06:30:00+00:00"


@pytest.mark.parametrize(
    "waypoints",
    [[(24.94, 60.17)], [(24.94, 60.17), (60.17, 124.94)], [(24.94, 60.17), (float("nan"), 1)]],
)
async def test_route_refuses_what_is_not_a_route_without_asking(
    provider: TomTomProvider, server: RecordedServer, waypoints: list[tuple[float, float]]
) -> None:
    with pytest.raises(ProviderMiss) as caught:
        await provider.route(waypoints)
    _miss_is_told(caught.value, "refused")
    assert not server.requests


async def test_no_route_found_is_not_found(
    provider: TomTomProvider, server: RecordedServer
) -> None:
    server.add("GET", r"/routing/1/calculateRoute/.+/json", status=400, file="route_no_route.json")
    with pytest.raises(ProviderMiss) as caught:
        await provider.route(list(SCENARIO.route))
    _miss_is_told(caught.value, "not_found")
    assert caught.value.reason.startswith("TomTom could not make the car route")
    assert "NO_ROUTE_FOUND" in caught.value.reason


# -- reachable areas ---------------------------------------------------------------------------


async def test_reachable_by_time_sends_lat_lon_and_closes_the_ring(
    provider: TomTomProvider, server: RecordedServer
) -> None:
    found = await provider.reachable(STATION, time_s=600)
    (feature,) = check_found(found, SCENARIO)
    check_range(feature, STATION, {"time_s": 600}, "car")
    ring = feature["geometry"]["coordinates"][0]
    assert ring[0] == ring[-1] == [24.9391, 60.209]
    assert feature["properties"]["matched_origin"] == [24.94152, 60.17108]
    (sent,) = server.sent(r"/routing/1/calculateReachableRange/.+/json")
    assert sent.path == "/routing/1/calculateReachableRange/60.171200,24.941400/json"
    assert sent.param("timeBudgetInSec") == "600" and sent.param("travelMode") == "car"
    assert "distanceBudgetInMeters" not in sent.query
    assert found.sources[0].evidence == "modelled"
    assert found.notes == (
        "the area is TomTom's reachable range for a car within 10 min: one outline round "
        "what its routing reaches, timed with historic and live traffic at the departure time",
        "it may over-count: all land inside the outline counts as reached, between the roads "
        "reached too",
    )


async def test_reachable_by_distance(provider: TomTomProvider, server: RecordedServer) -> None:
    found = await provider.reachable(STATION, distance_m=2_000, mode="truck")
    assert found.data["features"][0]["properties"]["budget"] == {"distance_m": 2_000}
    assert found.notes[0].startswith(
        "the area is TomTom's reachable range for a truck within 2000 m:"
    )
    (sent,) = server.sent(r"/routing/1/calculateReachableRange/.+/json")
    assert sent.param("distanceBudgetInMeters") == "2000" and sent.param("travelMode") == "truck"


@pytest.mark.parametrize(
    ("options", "code"),
    [
        ({"time_s": 600, "mode": "walk"}, "unsupported"),
        ({"time_s": 600, "mode": "bike"}, "unsupported"),
        ({}, "refused"),
        ({"time_s": 600, "distance_m": 100}, "refused"),
        ({"time_s": -5}, "refused"),
    ],
)
async def test_reachable_refuses_without_asking(
    provider: TomTomProvider, server: RecordedServer, options: dict[str, Any], code: str
) -> None:
    with pytest.raises(ProviderMiss) as caught:
        await provider.reachable(STATION, **options)
    _miss_is_told(caught.value, code)
    assert not server.requests


# -- traffic -----------------------------------------------------------------------------------


async def test_incidents_read_category_magnitude_and_times(
    server: RecordedServer, sleeps: list[float]
) -> None:
    provider = TomTomProvider(
        KEY, base_url=server.base_url, policy=RequestPolicy(sleep=sleeps.append), language="fi-FI"
    )
    found = await provider.incidents((24.90, 60.15, 24.98, 60.19))
    jam, works = check_found(found, SCENARIO)
    for feature in (jam, works):
        check_incident(feature)
    assert jam["geometry"]["type"] == "LineString"
    assert jam["geometry"]["coordinates"][0] == [24.93161, 60.16869]
    assert {k: jam["properties"][k] for k in ("category", "magnitude", "delay_s", "from")} == {
        "category": "jam",
        "magnitude": 2,
        "delay_s": 184.0,
        "from": "Kampinkuja (Kamppi)",
    }
    assert (jam["properties"]["start"], jam["properties"]["end"]) == (
        "2026-03-02T06:12:30Z",
        "2026-03-02T07:05:00Z",
    )
    assert works["properties"]["category"] == "road_works"
    assert works["properties"]["description"] == "Roadworks; Lane closed"
    assert works["properties"]["road_numbers"] == ["E12"]
    (sent,) = server.sent("/traffic/services/5/incidentDetails")
    assert sent.param("bbox") == "24.900000,60.150000,24.980000,60.190000"
    assert sent.param("language") == "fi-FI"
    assert sent.param("timeValidityFilter") == "present"
    assert "magnitudeOfDelay" in (sent.param("fields") or "")
    assert found.sources[0].evidence == "observed"


async def test_incidents_over_10000_km2_are_refused_without_asking(
    provider: TomTomProvider, server: RecordedServer
) -> None:
    with pytest.raises(ProviderMiss) as caught:
        await provider.incidents((23.0, 59.5, 27.0, 61.5))
    _miss_is_told(caught.value, "refused")
    assert "10,000 km²" in caught.value.reason
    with pytest.raises(ProviderMiss):
        await provider.incidents((24.98, 60.15, 24.90, 60.19))  # west > east
    assert not server.requests


async def test_no_incidents_is_not_found(provider: TomTomProvider, server: RecordedServer) -> None:
    server.add("GET", "/traffic/services/5/incidentDetails", file="incident_details_empty.json")
    with pytest.raises(ProviderMiss) as caught:
        await provider.incidents((24.90, 60.15, 24.98, 60.19))
    _miss_is_told(caught.value, "not_found")


# -- failures ----------------------------------------------------------------------------------

KIASMA = r"/search/2/search/Kiasma\.json"


async def test_a_slow_answer_is_unavailable_by_the_deadline(
    server: RecordedServer, sleeps: list[float]
) -> None:
    provider = _provider(server, sleeps, timeout_s=0.5)
    server.add("GET", KIASMA, file="search_kiasma.json", delay_s=5)
    started = time.monotonic()
    with pytest.raises(ProviderMiss) as caught:
        await provider.locate("Kiasma")
    assert time.monotonic() - started < 2
    _miss_is_told(caught.value, "unavailable")
    assert "within timeout_s=0.5 s" in caught.value.reason


async def test_429_then_200_is_retried_after_the_wait_asked(
    provider: TomTomProvider, server: RecordedServer, sleeps: list[float]
) -> None:
    server.add(
        "GET",
        KIASMA,
        replies=[
            RecordedReply(status=429, file="error_429.json", headers={"Retry-After": "2"}),
            RecordedReply(file="search_kiasma.json"),
        ],
    )
    found = await provider.locate("Kiasma")
    assert found.count == 2
    assert sleeps == [2.0]
    assert len(server.sent(KIASMA)) == 2


async def test_429_that_lasts_is_rate_limited(
    provider: TomTomProvider, server: RecordedServer, sleeps: list[float]
) -> None:
    server.add("GET", KIASMA, status=429, file="error_429.json", headers={"Retry-After": "1"})
    with pytest.raises(ProviderMiss) as caught:
        await provider.locate("Kiasma")
    _miss_is_told(caught.value, "rate_limited")
    assert sleeps == [1.0, 1.0] and len(server.sent(KIASMA)) == 3


@pytest.mark.parametrize(
    ("body", "content_type"),
    [
        ((RECORDED / "error_403.json").read_text(), "application/json"),
        ((RECORDED / "error_403_inactive.html").read_text(), "text/html"),
        (json.dumps({"detailedError": {"message": f"invalid key {KEY}"}}), "application/json"),
        (f"<h1>Developer Inactive</h1><p>key={quote(KEY, safe='')}</p>", "text/html"),
    ],
    ids=["json", "html", "json-quoting-the-key", "html-quoting-the-key"],
)
async def test_403_is_refused_and_never_shows_the_key(
    provider: TomTomProvider, server: RecordedServer, body: str, content_type: str
) -> None:
    server.add("GET", KIASMA, status=403, body=body, content_type=content_type)
    with pytest.raises(ProviderMiss) as caught:
        await provider.locate("Kiasma")
    _miss_is_told(caught.value, "refused")
    assert "TOMTOM_API_KEY" in caught.value.reason
    assert server.sent(KIASMA)[0].param("key") == KEY  # it was sent, and not shown


async def test_403_over_the_rate_limit_is_rate_limited(
    provider: TomTomProvider, server: RecordedServer
) -> None:
    server.add("GET", KIASMA, status=403, file="error_403_over_qps.html", content_type="text/html")
    with pytest.raises(ProviderMiss) as caught:
        await provider.locate("Kiasma")
    _miss_is_told(caught.value, "rate_limited")


async def test_500_is_unavailable_with_tomtoms_message(
    provider: TomTomProvider, server: RecordedServer, sleeps: list[float]
) -> None:
    server.add("GET", KIASMA, status=500, file="error_500.json")
    with pytest.raises(ProviderMiss) as caught:
        await provider.locate("Kiasma")
    _miss_is_told(caught.value, "unavailable")
    assert "HTTP 500" in caught.value.reason and "Internal Server Error" in caught.value.reason


async def test_503_is_retried_then_unavailable(
    provider: TomTomProvider, server: RecordedServer, sleeps: list[float]
) -> None:
    server.add("GET", KIASMA, status=503, body="down", content_type="text/plain")
    with pytest.raises(ProviderMiss) as caught:
        await provider.locate("Kiasma")
    _miss_is_told(caught.value, "unavailable")
    assert len(sleeps) == 2 and len(server.sent(KIASMA)) == 3


@pytest.mark.parametrize(
    "body",
    [(RECORDED / "malformed.json").read_text(), '{"summary": {}, "results": "none"}', "[]"],
    ids=["truncated", "no-results-list", "a-list"],
)
async def test_a_malformed_answer_is_unavailable(
    provider: TomTomProvider, server: RecordedServer, body: str
) -> None:
    server.add("GET", KIASMA, body=body)
    with pytest.raises(ProviderMiss) as caught:
        await provider.locate("Kiasma")
    _miss_is_told(caught.value, "unavailable")
    assert "malformed" in caught.value.reason


@pytest.mark.parametrize(
    ("path", "call"),
    [
        (r"/routing/1/calculateRoute/.+/json", lambda p: p.route(list(SCENARIO.route))),
        (r"/routing/1/calculateReachableRange/.+/json", lambda p: p.reachable(STATION, time_s=60)),
        ("/traffic/services/5/incidentDetails", lambda p: p.incidents(SCENARIO.traffic_bbox)),
        (r"/search/2/additionalData\.json", lambda p: p.boundary("Helsinki")),
    ],
    ids=["route", "range", "incidents", "outline"],
)
async def test_every_capability_reads_a_wrong_shape_as_malformed(
    provider: TomTomProvider, server: RecordedServer, path: str, call: Any
) -> None:
    server.add("GET", path, body='{"formatVersion": "0.0.12"}')
    with pytest.raises(ProviderMiss) as caught:
        await call(provider)
    _miss_is_told(caught.value, "unavailable")
    assert "malformed" in caught.value.reason


async def test_an_oversize_answer_is_refused(server: RecordedServer, sleeps: list[float]) -> None:
    provider = _provider(server, sleeps, max_bytes=20_000)
    big = {"summary": {}, "results": [{"type": "POI", "id": str(n)} for n in range(2_000)]}
    server.add("GET", KIASMA, body=json.dumps(big))
    with pytest.raises(ProviderMiss) as caught:
        await provider.locate("Kiasma")
    _miss_is_told(caught.value, "refused")
    assert "max_bytes=20,000" in caught.value.reason


async def test_a_service_that_is_not_there_is_unavailable(sleeps: list[float]) -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    provider = TomTomProvider(
        KEY,
        base_url=f"http://127.0.0.1:{port}",
        policy=RequestPolicy(timeout_s=2, max_attempts=2, sleep=sleeps.append),
    )
    with pytest.raises(ProviderMiss) as caught:
        await provider.incidents((24.90, 60.15, 24.98, 60.19))
    _miss_is_told(caught.value, "unavailable")


# -- the contract every provider passes --------------------------------------------------------


class TestTomTomContract(ProviderContract):
    scenario = SCENARIO

    @pytest.fixture
    def provider(self, server: RecordedServer, sleeps: list[float]) -> TomTomProvider:
        return _provider(server, sleeps)

    async def test_the_contract_asked_the_recorded_server(
        self, provider: TomTomProvider, server: RecordedServer
    ) -> None:
        await provider.locate(SCENARIO.place)
        assert [s.path for s in server.requests] == ["/search/2/search/Kiasma.json"]


def test_every_recorded_answer_is_json_with_positions_around_helsinki() -> None:
    """The recordings stay what they claim: TomTom JSON, positions in Helsinki."""
    answers = [
        p for p in RECORDED.glob("*.json") if p.name not in ("malformed.json", "routes.json")
    ]
    assert len(answers) >= 15
    for path in answers:
        for lat, lon in _positions(json.loads(path.read_text())):
            assert 59.9 < lat < 60.4 and 24.7 < lon < 25.3, (path.name, lat, lon)


def _positions(value: Any) -> Iterator[tuple[float, float]]:
    """Every position in a TomTom answer, as (lat, lon): its objects and its GeoJSON."""
    if isinstance(value, dict):
        for lat, lon in (("lat", "lon"), ("latitude", "longitude")):
            if lat in value and lon in value:
                yield value[lat], value[lon]
        if "coordinates" in value:
            coordinates = shapely.get_coordinates(shape(value))
            yield from ((float(y), float(x)) for x, y in coordinates)
        for name, item in value.items():
            if name != "coordinates":
                yield from _positions(item)
    elif isinstance(value, list):
        for item in value:
            yield from _positions(item)
