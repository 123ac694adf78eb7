"""The OpenStreetMap-stack provider: the contract, the requests it sends, what it reads back,
and every way a call can fail.

Nominatim, Overpass, OSRM and Valhalla are one recorded server on 127.0.0.1, each under its
own path (``/nominatim``, ``/overpass/api/interpreter``, ``/osrm``, ``/valhalla``), answering
from ``recorded/osm`` (hand-written after each API's documented output, central Helsinki).
Sleeps and the rate limiter's clock are injected, so no test waits for a backoff or for
Nominatim's one request per second; the suite's guard fails any test that connects beyond
127.0.0.1.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs

import pytest
import shapely
from shapely.geometry import shape
from tests.providers.contract import (
    AvoidCase,
    ProviderContract,
    Scenario,
    check_boundary,
    check_found,
    check_place,
    check_range,
    check_route,
    haversine_m,
)

from geomint.errors import UsageError
from geomint.http import USER_AGENT, MemoryCache, RateLimiter, RequestPolicy
from geomint.providers.base import ProviderMiss, Providers, TrafficSource
from geomint.providers.osm import OsmProvider, _overpass, _provider, _routes
from geomint.testing import RecordedReply, RecordedRequest, RecordedServer

pytestmark = pytest.mark.anyio

RECORDED = Path(__file__).parent / "recorded" / "osm"
RAUTATIENTORI = (24.941249, 60.171133)
SENAATINTORI = (24.952198, 60.169421)
KAIVOPUISTO = (24.956311, 60.156802)
EMAIL = "ops@example.org"

SCENARIO = Scenario(
    provider="osm",
    claims=frozenset({"geocoder", "places", "boundaries", "router", "ranges"}),
    place="Helsinki",
    place_at=(24.9427473, 60.1674881),
    place_within_m=100,
    city="Helsinki",
    area="Kaivopuisto",
    area_kind="park",
    category="cafe",
    category_near=SENAATINTORI,
    category_radius_m=1_500,
    route=(RAUTATIENTORI, KAIVOPUISTO),
    route_mode="car",
    snap_m=50,
    avoid=AvoidCase(waypoints=(RAUTATIENTORI, KAIVOPUISTO), avoid=("motorways",)),
    range_origin=SENAATINTORI,
    range_mode="walk",
    range_times_s=(180, 420),
    range_distance_m=400,
    licences=frozenset({"ODbL-1.0"}),
)


# -- fixtures ------------------------------------------------------------------------------


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture(scope="module")
def recorded() -> Iterator[RecordedServer]:
    with RecordedServer(RECORDED, "routes.json") as server:
        yield server


@pytest.fixture
def server(recorded: RecordedServer) -> Iterator[RecordedServer]:
    recorded.reset()
    yield recorded
    assert not recorded.unmatched, [f"{s.method} {s.path}" for s in recorded.unmatched]


class _Clock:
    """Monotonic seconds that move only when the client sleeps."""

    def __init__(self) -> None:
        self.now = 1_000.0
        self.sleeps: list[float] = []

    def __call__(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.sleeps.append(seconds)
        self.now += seconds


@pytest.fixture
def clock() -> _Clock:
    return _Clock()


@pytest.fixture
def make_provider(server: RecordedServer, clock: _Clock) -> Callable[..., OsmProvider]:
    def make(**options: Any) -> OsmProvider:
        policy_options: dict[str, Any] = {
            "limiter": RateLimiter(clock=clock),
            "sleep": clock.sleep,
            "cache": MemoryCache(),
        }
        policy_options.update(options.pop("policy_options", {}))
        base = server.base_url
        urls = {
            "nominatim_url": f"{base}/nominatim",
            "overpass_url": f"{base}/overpass/api/interpreter",
            "osrm_url": f"{base}/osrm",
            "valhalla_url": f"{base}/valhalla",
        }
        return OsmProvider(**{**urls, **options}, policy=RequestPolicy(**policy_options))

    return make


@pytest.fixture
def provider(make_provider: Callable[..., OsmProvider]) -> OsmProvider:
    return make_provider(email=EMAIL)


def _only(server: RecordedServer, path: str, method: str | None = None) -> RecordedRequest:
    sent = server.sent(path, method)
    assert len(sent) == 1, [s.url for s in sent]
    return sent[0]


def _ql(server: RecordedServer) -> str:
    seen = _only(server, "/overpass/api/interpreter", "POST")
    assert seen.headers["content-type"] == "application/x-www-form-urlencoded"
    return parse_qs(seen.body.decode())["data"][0]


async def _miss(call: Any) -> ProviderMiss:
    with pytest.raises(ProviderMiss) as caught:
        await call
    miss = caught.value
    assert miss.provider == "osm" and len(miss.reason) >= 10
    return miss


# -- the contract ---------------------------------------------------------------------------


class TestOsmContract(ProviderContract):
    scenario = SCENARIO

    @pytest.fixture
    def provider(
        self, server: RecordedServer, make_provider: Callable[..., OsmProvider]
    ) -> OsmProvider:
        server.add(
            "GET", "/nominatim/search", query={"q": SCENARIO.unknown}, file="nominatim_empty.json"
        )
        # Valhalla's budgets are in the JSON body, which routes do not match on: the walk
        # isochrones are served in the order the contract asks for them (3 min, 7 min).
        server.add(
            "POST",
            "/valhalla/isochrone",
            replies=[
                RecordedReply(file="valhalla_isochrone_walk_3min.json"),
                RecordedReply(file="valhalla_isochrone_walk_7min.json"),
            ],
        )
        return make_provider()


def test_the_stack_offers_no_traffic() -> None:
    provider = OsmProvider()
    chosen = Providers.single(provider)
    assert not isinstance(provider, TrafficSource) and chosen.traffic is None
    assert chosen.geocoder is chosen.places is chosen.router is chosen.ranges is provider
    assert "traffic" in (_provider.__doc__ or "")


def test_the_base_urls_are_trusted_so_they_may_be_self_hosted() -> None:
    provider = OsmProvider(
        nominatim_url="http://10.0.0.5:8080/",
        osrm_url="http://osrm.internal:5000",
        policy=RequestPolicy(trusted_base_urls=("http://other.internal",)),
    )
    trusted = provider.osrm.policy.trusted_base_urls
    assert "http://10.0.0.5:8080" in trusted and "http://osrm.internal:5000" in trusted
    assert "http://other.internal" in trusted  # the operator's own are kept
    assert provider.nominatim.url("/search") == "http://10.0.0.5:8080/search"
    assert provider.nominatim.policy.rate_per_s == 1.0
    assert provider.osrm.policy.rate_per_s is None
    assert provider.overpass.policy.timeout_s > _overpass.QUERY_TIMEOUT_S
    assert provider.nominatim.policy.cache is not None  # Nominatim asks callers to cache


# -- Nominatim ------------------------------------------------------------------------------


async def test_locate_sends_nominatim_its_parameters(
    server: RecordedServer, provider: OsmProvider
) -> None:
    found = await provider.locate("Helsinki", near=SENAATINTORI, country="FI", limit=2)
    seen = _only(server, "/nominatim/search", "GET")
    assert seen.query == {
        "q": ["Helsinki"],
        "addressdetails": ["1"],
        "limit": ["2"],
        "countrycodes": ["fi"],
        "viewbox": ["24.702198,60.419421,25.202198,59.919421"],
        "bounded": ["0"],
        "format": ["jsonv2"],
        "email": [EMAIL],
    }
    assert seen.headers["user-agent"] == USER_AGENT and "geomint" in USER_AGENT
    assert found.endpoint == f"{server.base_url}/nominatim/search"
    assert "email" not in found.request and found.request["q"] == "Helsinki"


async def test_locate_reads_places_in_nominatims_order(provider: OsmProvider) -> None:
    found = await provider.locate("Helsinki", limit=5)
    features = check_found(found, SCENARIO)
    city, station = (f["properties"] for f in features)
    assert features[0]["geometry"]["coordinates"] == [24.9427473, 60.1674881]
    assert city["id"] == "osm:relation/34914" and city["name"] == "Helsinki"
    assert (city["category"], city["categories"]) == (
        "city",
        ["city", "administrative", "boundary"],
    )
    assert city["country_code"] == "FI" and city["bbox"] == [
        24.7828328,
        59.9224887,
        25.2544912,
        60.2978323,
    ]
    assert city["address"].startswith("Helsinki, Helsingin seutukunta")
    assert station["id"] == "osm:node/1223493405" and station["category"] == "station"
    assert city["score"] == 0.787 and station["score"] == 0.431 <= city["score"]
    (source,) = found.sources
    assert (source.source_id, source.publisher, source.licence, source.evidence) == (
        "osm-nominatim",
        "OpenStreetMap contributors",
        "ODbL-1.0",
        "observed",
    )
    assert source.url == "https://www.openstreetmap.org/copyright"


async def test_nominatim_gets_at_most_one_request_a_second(
    server: RecordedServer, provider: OsmProvider, clock: _Clock
) -> None:
    await provider.locate("Helsinki")
    assert clock.sleeps == []
    await provider.locate("Helsingfors")
    assert clock.sleeps == [1.0]
    await provider.discover(category="cafe", near=SENAATINTORI)  # Overpass is not held back
    await provider.route([RAUTATIENTORI, KAIVOPUISTO])
    assert clock.sleeps == [1.0]
    await provider.boundary("Kaivopuisto")
    assert clock.sleeps == [1.0, 1.0]
    assert len(server.sent("/nominatim/search")) == 3


async def test_nominatim_answers_are_cached(
    server: RecordedServer, provider: OsmProvider, clock: _Clock
) -> None:
    first = await provider.locate("Helsinki")
    again = await provider.locate("Helsinki")
    assert again.data == first.data
    assert len(server.sent("/nominatim/search")) == 1 and clock.sleeps == []


async def test_an_unknown_name_is_not_found(server: RecordedServer, provider: OsmProvider) -> None:
    server.add("GET", "/nominatim/search", file="nominatim_empty.json")
    miss = await _miss(provider.locate("Qwxzv", country="FI"))
    assert miss.code == "not_found" and "'Qwxzv' in FI" in miss.reason
    assert miss.endpoint.endswith("/nominatim/search")
    assert (await _miss(provider.locate("  "))).code == "refused"


async def test_boundary_keeps_polygons_and_names_their_kind(
    server: RecordedServer, provider: OsmProvider
) -> None:
    found = await provider.boundary("Kaivopuisto", limit=5)
    seen = _only(server, "/nominatim/search")
    assert seen.param("polygon_geojson") == "1" and seen.param("format") == "jsonv2"
    assert seen.param("limit") == "15" and seen.param("email") == EMAIL
    features = check_found(found, SCENARIO)
    assert [f["properties"]["id"] for f in features] == ["osm:way/23443166", "osm:relation/2612587"]
    park, suburb = (check_boundary(f) for f in features)
    assert [f["properties"]["kind"] for f in features] == ["park", "district"]
    assert features[1]["geometry"]["type"] == "MultiPolygon" and suburb.covers(park.centroid)
    assert found.sources[0].source_id == "osm-nominatim"
    one = await provider.boundary("Kaivopuisto")
    assert one.count == 1 and one.notes == ("2 boundaries matched; the first 1 kept",)


async def test_a_place_known_only_as_a_point_has_no_boundary(
    server: RecordedServer, provider: OsmProvider
) -> None:
    server.add("GET", "/nominatim/search", file="nominatim_search_point_only.json")
    miss = await _miss(provider.boundary("Café Ekberg"))
    assert miss.code == "not_found"
    assert "only as a point or line (osm:node/287436951)" in miss.reason


# -- Overpass ---------------------------------------------------------------------------------


async def test_discover_by_category_around_a_point(
    server: RecordedServer, provider: OsmProvider
) -> None:
    found = await provider.discover(category="cafés", near=SENAATINTORI, radius_m=1500, limit=3)
    ql = _ql(server)
    assert ql.startswith("[out:json][timeout:25];\n")
    assert 'nwr["amenity"="cafe"](around:1500,60.169421,24.952198);' in ql
    assert ql.endswith("out center tags 23;")
    features = check_found(found, SCENARIO)
    for feature in features:
        check_place(feature, SCENARIO)
    props = [f["properties"] for f in features]
    assert [p["name"] for p in props] == ["Café Engel", "Fazer Café Kluuvikatu 3", "Kappeli kiosk"]
    ids = ["osm:node/4406822905", "osm:node/1396572301", "osm:way/27332110"]
    assert [p["id"] for p in props] == ids
    assert features[2]["geometry"]["coordinates"] == [24.9524101, 60.1677302]  # the way's centre
    assert props[0]["categories"] == ["cafe", "bakery"] and props[0]["category"] == "cafe"
    assert props[1]["address"] == "Kluuvikatu 3" and "opening_hours" in props[1]
    distances = [p["distance_m"] for p in props]
    assert distances == sorted(distances) and distances[0] < 50
    assert found.notes == ("4 matched; the 3 nearest kept",)
    assert found.request["data"] == ql
    assert found.sources[0].source_id == "osm-overpass" and found.sources[0].evidence == "observed"


def _unquote_ql(literal: str) -> str:
    """Read a QL string as Overpass does: ``\\x`` is ``x``."""
    assert literal[0] == literal[-1] == '"'
    return re.sub(r"\\(.)", r"\1", literal[1:-1])


@pytest.mark.parametrize("name", ['Café "Engel" (old).*', r"a\b [c] {2} ^$ | +?", "Kappeli"])
async def test_a_name_is_escaped_for_the_regex_and_the_ql_string(
    server: RecordedServer, provider: OsmProvider, name: str
) -> None:
    await provider.discover(query=name, near=SENAATINTORI)
    match = re.search(r'\["name"~("(?:[^"\\]|\\.)*"),i\]', _ql(server))
    assert match, _ql(server)
    pattern = _unquote_ql(match.group(1))
    assert re.fullmatch(pattern, name), pattern  # the regex matches the name, literally
    assert not re.fullmatch(pattern, name + "x") and not re.fullmatch(pattern, "x" + name)


async def test_a_category_as_a_query_searches_names_and_the_category(
    server: RecordedServer, provider: OsmProvider
) -> None:
    found = await provider.discover(query="cafe", near=SENAATINTORI, limit=50)
    ql = _ql(server)
    assert '["name"~"cafe",i]' in ql and '["amenity"="cafe"](around:' in ql
    assert found.count == 4 and "read as a name or the category 'cafe'" in found.notes[0]


@pytest.mark.parametrize(
    ("category", "selector"),
    [
        ("supermarket", '["shop"="supermarket"]'),
        ("Museums", '["tourism"="museum"]'),
        ("amenity=bench", '["amenity"="bench"]'),
        ("bench", '["leisure"="bench"]'),
    ],
)
async def test_categories_become_osm_tags(
    server: RecordedServer, provider: OsmProvider, category: str, selector: str
) -> None:
    await provider.discover(category=category, near=SENAATINTORI)
    assert f"nwr{selector}(around:" in _ql(server)


async def test_within_polygons_are_poly_filters_of_lat_lon_pairs(
    server: RecordedServer, provider: OsmProvider
) -> None:
    area = shapely.geometry.mapping(shapely.box(24.948, 60.166, 24.956, 60.171))
    found = await provider.discover(category="cafe", within=[area])
    ql = _ql(server)
    assert '(poly:"60.166 24.956 60.171 24.956 60.171 24.948 60.166 24.948")' in ql
    assert "around:" not in ql
    # Café Ekberg is in Overpass's answer but outside the area: cut here.
    names = {f["properties"]["name"] for f in found.data["features"]}
    assert names == {"Café Engel", "Kappeli kiosk", "Fazer Café Kluuvikatu 3"}
    assert all("distance_m" not in f["properties"] for f in found.data["features"])


def test_a_large_polygon_is_sent_simplified_and_never_smaller() -> None:
    ring = [
        (24.95 + 0.02 * math.cos(a) * (1 + 0.05 * math.sin(9 * a)), 60.17 + 0.01 * math.sin(a))
        for a in (2 * math.pi * i / 3000 for i in range(3000))
    ]
    original = shapely.Polygon(ring)
    search = _overpass.plan(
        query=None, category="cafe", near=None, radius_m=None, within=[original], limit=10
    )
    (pairs,) = re.findall(r'poly:"([^"]+)"', search.ql)
    numbers = [float(v) for v in pairs.split()]
    assert len(numbers) // 2 <= _overpass.MAX_POLYGON_VERTICES
    sent = shapely.Polygon(list(zip(numbers[1::2], numbers[0::2], strict=True)))
    assert sent.covers(original)
    assert sent.area < original.area * 1.01
    assert "a polygon of 3000 vertices was sent as" in search.notes[0]


def test_many_polygons_are_sent_as_their_hull() -> None:
    parts = [shapely.box(24.9 + i * 0.01, 60.1, 24.905 + i * 0.01, 60.105) for i in range(12)]
    search = _overpass.plan(
        query="x", category=None, near=None, radius_m=None, within=parts, limit=10
    )
    assert search.ql.count("poly:") == 1 and "convex hull" in search.notes[0]


def test_near_and_within_together_ask_for_places_in_both() -> None:
    search = _overpass.plan(
        query=None,
        category="museum",
        near=SENAATINTORI,
        radius_m=300,
        within=[shapely.box(24.94, 60.16, 24.96, 60.17)],
        limit=5,
    )
    assert '["tourism"="museum"](around:300,60.169421,24.952198)(poly:"60.16 24.96 ' in search.ql


@pytest.mark.parametrize(
    ("options", "words"),
    [
        ({"category": "cafe"}, "needs an area"),
        ({"near": SENAATINTORI}, "give a query"),
        ({"category": "pharmcy", "near": SENAATINTORI}, "did you mean pharmacy"),
        ({"category": "café; out;", "near": SENAATINTORI}, "not one geomint maps"),
        ({"category": "amenity=caf\u00e9", "near": SENAATINTORI}, "is not an OSM tag"),
        ({"category": "cafe", "near": SENAATINTORI, "radius_m": 80_000}, "radius_m=80000"),
        ({"category": "cafe", "within": [{"type": "Circle"}]}, "not a GeoJSON geometry"),
        (
            {"category": "cafe", "within": [{"type": "Point", "coordinates": [24.9, 60.1]}]},
            "no polygon with an area",
        ),
    ],
)
async def test_a_search_that_cannot_be_sent_is_refused(
    server: RecordedServer, provider: OsmProvider, options: dict[str, Any], words: str
) -> None:
    miss = await _miss(provider.discover(**options))
    assert miss.code == "refused" and words in miss.reason, miss.reason
    assert not server.requests


async def test_nothing_in_the_area_is_not_found(
    server: RecordedServer, provider: OsmProvider
) -> None:
    server.add("POST", "/overpass/api/interpreter", file="overpass_empty.json")
    miss = await _miss(provider.discover(query="Ekberg", category="cafe", near=SENAATINTORI))
    assert miss.code == "not_found" and "called 'Ekberg' and cafe" in miss.reason


# -- OSRM and Valhalla routes ------------------------------------------------------------------


async def test_a_route_asks_osrm_with_lon_lat_pairs(
    server: RecordedServer, provider: OsmProvider
) -> None:
    found = await provider.route([RAUTATIENTORI, SENAATINTORI, KAIVOPUISTO])
    seen = _only(server, "/osrm/.*")
    assert seen.path == (
        "/osrm/route/v1/car/24.941249,60.171133;24.952198,60.169421;24.956311,60.156802"
    )
    assert seen.query == {
        "overview": ["full"],
        "geometries": ["geojson"],
        "steps": ["false"],
        "alternatives": ["false"],
    }
    (feature,) = check_found(found, SCENARIO)
    summary = check_route(feature, [RAUTATIENTORI, KAIVOPUISTO], mode="car", snap_m=50)
    assert (summary["length_m"], summary["duration_s"]) == (2043.5, 290)
    sections = feature["properties"]["sections"]
    assert [(s["start_index"], s["end_index"]) for s in sections] == [(0, 5), (5, 11)]
    assert feature["geometry"]["coordinates"][5] == list(SENAATINTORI)
    assert [s["duration_s"] for s in sections] == [98, 192]
    arrival = shape(feature["geometry"]).length > 0 and summary["arrival"] > summary["departure"]
    assert arrival and feature["properties"]["engine"] == "osrm"
    (source,) = found.sources
    assert (source.source_id, source.evidence) == ("osm-osrm", "modelled")
    assert found.endpoint == f"{server.base_url}/osrm/route/v1/car"
    assert any("no traffic" in note for note in found.notes)


async def test_alternatives_are_asked_for_and_numbered(
    server: RecordedServer, provider: OsmProvider
) -> None:
    server.add("GET", "/osrm/route/v1/car/.+", file="osrm_route_alternatives.json")
    found = await provider.route([RAUTATIENTORI, SENAATINTORI], alternatives=2)
    assert _only(server, "/osrm/.*").param("alternatives") == "2"
    assert [f["properties"]["alternative"] for f in found.data["features"]] == [0, 1]
    assert found.data["features"][1]["properties"]["summary"]["length_m"] == 744.9
    assert "OSRM found 1 of 2 alternatives asked" in found.notes


async def test_avoid_is_osrm_exclude_where_the_server_takes_it(
    server: RecordedServer, provider: OsmProvider
) -> None:
    found = await provider.route([RAUTATIENTORI, KAIVOPUISTO], avoid=["motorways", "tolls"])
    assert _only(server, "/osrm/.*").param("exclude") == "motorway,toll"
    assert not server.sent("/valhalla/.*")
    assert found.data["features"][0]["properties"]["avoid"] == ["motorways", "tolls"]


async def test_an_exclude_the_osrm_server_refuses_goes_to_valhalla(
    server: RecordedServer, provider: OsmProvider
) -> None:
    server.add("GET", "/osrm/route/v1/car/.+", status=400, file="osrm_exclude_refused.json")
    waypoints = [RAUTATIENTORI, SENAATINTORI, KAIVOPUISTO]
    found = await provider.route(waypoints, avoid=["motorways", "ferries"])
    body = _only(server, "/valhalla/route", "POST").json()
    assert body["locations"] == [{"lat": lat, "lon": lon} for lon, lat in waypoints]
    assert body["costing"] == "auto" and body["directions_type"] == "none"
    assert body["costing_options"] == {"auto": {"use_highways": 0.0, "use_ferry": 0.0}}
    assert "refused exclude=motorway,ferry; routed with Valhalla" in found.notes[0]
    (feature,) = check_found(found, SCENARIO)
    check_route(feature, waypoints, mode="car", avoid=["motorways", "ferries"], snap_m=50)
    line = feature["geometry"]["coordinates"]
    assert line[0] == list(RAUTATIENTORI) and line[5] == list(SENAATINTORI)
    assert line[-1] == list(KAIVOPUISTO) and len(line) == 12
    props = feature["properties"]
    assert [(s["start_index"], s["end_index"]) for s in props["sections"]] == [(0, 5), (5, 11)]
    assert (props["summary"]["length_m"], props["summary"]["duration_s"]) == (2070.0, 306)
    assert props["engine"] == "valhalla"
    assert found.sources[0].source_id == "osm-valhalla" and found.sources[0].evidence == "modelled"


@pytest.mark.parametrize(
    ("mode", "avoid", "costing", "options"),
    [
        ("car", ["unpaved"], "auto", {"exclude_unpaved": True}),
        ("truck", [], "truck", None),
        ("bike", ["unpaved", "motorways"], "bicycle", {"avoid_bad_surfaces": 1.0}),
    ],
)
async def test_what_osrm_cannot_do_goes_straight_to_valhalla(
    server: RecordedServer,
    provider: OsmProvider,
    mode: Any,
    avoid: list[Any],
    costing: str,
    options: dict[str, Any] | None,
) -> None:
    found = await provider.route([RAUTATIENTORI, KAIVOPUISTO], mode=mode, avoid=avoid)
    body = _only(server, "/valhalla/route").json()
    assert body["costing"] == costing and body.get("costing_options", {}).get(costing) == options
    assert found.data["features"][0]["properties"]["mode"] == mode
    assert not server.sent("/osrm/.*")
    assert "routed with Valhalla" in found.notes[0]


async def test_a_mode_the_osrm_server_was_not_built_for_goes_to_valhalla(
    server: RecordedServer, provider: OsmProvider
) -> None:
    # OSRM answers with the one profile it was built with, whatever the URL names: a
    # walking route asked of a car server would be a car route.
    found = await provider.route([RAUTATIENTORI, KAIVOPUISTO], mode="walk")
    assert _only(server, "/valhalla/route").json()["costing"] == "pedestrian"
    assert not server.sent("/osrm/.*")
    assert found.notes[0] == (
        "the OSRM server routes car (osrm_modes); the walk route is routed with Valhalla"
    )


async def test_osrm_serves_the_modes_it_is_said_to(
    server: RecordedServer, make_provider: Callable[..., OsmProvider]
) -> None:
    provider = make_provider(osrm_modes=("car", "walk", "bike"))
    found = await provider.route([RAUTATIENTORI, KAIVOPUISTO], mode="bike")
    assert _only(server, "/osrm/.*").path.startswith("/osrm/route/v1/bike/24.941249,60.171133;")
    assert found.data["features"][0]["properties"]["engine"] == "osrm"
    with pytest.raises(UsageError, match="trucks are routed by Valhalla"):
        OsmProvider(osrm_modes=("car", "truck"))


async def test_no_route_is_not_found_without_a_fallback(
    server: RecordedServer, provider: OsmProvider
) -> None:
    server.add("GET", "/osrm/route/v1/car/.+", status=400, file="osrm_no_route.json")
    miss = await _miss(provider.route([RAUTATIENTORI, (24.98, 60.12)], avoid=["tolls"]))
    assert miss.code == "not_found"
    assert miss.reason.startswith("OSRM found no way there (Impossible route between points)")
    assert not server.sent("/valhalla/.*")
    assert (await _miss(provider.route([RAUTATIENTORI]))).code == "refused"


# -- Valhalla reachable areas ------------------------------------------------------------------


async def test_reachable_by_time_is_a_valhalla_isochrone(
    server: RecordedServer, provider: OsmProvider
) -> None:
    found = await provider.reachable(SENAATINTORI, time_s=600, mode="car")
    body = _only(server, "/valhalla/isochrone", "POST").json()
    assert body == {
        "locations": [{"lat": 60.169421, "lon": 24.952198}],
        "costing": "auto",
        "contours": [{"time": 10.0}],
        "polygons": True,
    }
    (feature,) = check_found(found, SCENARIO)
    check_range(feature, SENAATINTORI, {"time_s": 600}, "car")
    assert feature["properties"]["contour"] == 10.0
    (source,) = found.sources
    assert (source.source_id, source.evidence) == ("osm-valhalla", "modelled")
    assert found.notes == (
        "the area is Valhalla's isochrone for car within 10 min: an outline round the roads "
        "reached, timed by its speed model, with no traffic",
        "it may over-count: all land inside the outline counts as reached, between the roads "
        "reached too",
        "it may under-count: Valhalla keeps only the largest area reached (denoise 1), so a "
        "pocket reached apart from it is left out",
    )


async def test_reachable_by_distance_is_in_kilometres(
    server: RecordedServer, provider: OsmProvider
) -> None:
    found = await provider.reachable(SENAATINTORI, distance_m=1500, mode="walk")
    body = _only(server, "/valhalla/isochrone").json()
    assert body["contours"] == [{"distance": 1.5}] and body["costing"] == "pedestrian"
    props = found.data["features"][0]["properties"]
    assert props["budget"] == {"distance_m": 1500} and props["mode"] == "walk"
    assert found.notes[0].startswith("the area is Valhalla's isochrone for walk within 1500 m:")


async def test_a_budget_must_be_one_and_positive(
    server: RecordedServer, provider: OsmProvider
) -> None:
    for options in ({}, {"time_s": 60, "distance_m": 100}, {"time_s": 0}):
        assert (await _miss(provider.reachable(SENAATINTORI, **options))).code == "refused"
    assert not server.requests


# -- failures -------------------------------------------------------------------------------------


async def test_a_429_is_retried_after_the_wait_it_asks(
    server: RecordedServer, provider: OsmProvider, clock: _Clock
) -> None:
    server.add(
        "POST",
        "/overpass/api/interpreter",
        replies=[
            RecordedReply(
                status=429,
                file="overpass_429.html",
                content_type="text/html",
                headers={"Retry-After": "7"},
            ),
            RecordedReply(file="overpass_cafes.json"),
        ],
    )
    found = await provider.discover(category="cafe", near=SENAATINTORI)
    assert found.count == 4 and clock.sleeps == [7.0]


@pytest.mark.parametrize(
    ("service", "path", "method", "call"),
    [
        ("Nominatim", "/nominatim/search", "GET", lambda p: p.locate("Helsinki")),
        (
            "Overpass",
            "/overpass/api/interpreter",
            "POST",
            lambda p: p.discover(category="cafe", near=SENAATINTORI),
        ),
        ("OSRM", "/osrm/route/v1/car/.+", "GET", lambda p: p.route([RAUTATIENTORI, KAIVOPUISTO])),
        (
            "Valhalla",
            "/valhalla/isochrone",
            "POST",
            lambda p: p.reachable(SENAATINTORI, time_s=300),
        ),
    ],
)
@pytest.mark.parametrize(
    ("reply", "code", "words"),
    [
        (RecordedReply(status=429, body="Too Many Requests", headers={"Retry-After": "2"}),
         "rate_limited", "is limiting how often"),
        (RecordedReply(status=429, body="slow down", headers={"Retry-After": "3600"}),
         "rate_limited", "try again in 3600 s"),
        (RecordedReply(status=504, file="overpass_504.html", content_type="text/html"),
         "unavailable", "504"),
        (RecordedReply(status=503, body="maintenance", content_type="text/plain"),
         "unavailable", "503"),
        (RecordedReply(status=200, file="nominatim_blocked.html", content_type="text/html"),
         "unavailable", "not valid JSON"),
        (RecordedReply(status=200, file="osrm_truncated.json"), "unavailable", "not valid JSON"),
        (RecordedReply(status=403, file="nominatim_blocked.html", content_type="text/html"),
         "refused", "403"),
    ],
)  # fmt: skip
async def test_every_failure_is_a_miss_with_a_code(
    server: RecordedServer,
    provider: OsmProvider,
    service: str,
    path: str,
    method: str,
    call: Any,
    reply: RecordedReply,
    code: str,
    words: str,
) -> None:
    server.add(method, path, replies=[reply])
    miss = await _miss(call(provider))
    assert miss.code == code, miss.reason
    assert service in miss.reason
    assert words in miss.reason, miss.reason
    assert "<html" not in miss.reason or "not valid JSON" in miss.reason  # no page pasted
    assert miss.endpoint.startswith(server.base_url)
    retried = reply.status in (429, 502, 503, 504) and "3600" not in words
    assert len(server.sent(path)) == (3 if retried else 1)


@pytest.mark.parametrize(
    ("path", "method", "file", "call", "code", "words"),
    [
        ("/overpass/api/interpreter", "POST", "overpass_runtime_error.json",
         lambda p: p.discover(category="cafe", near=SENAATINTORI), "unavailable",
         "Query timed out"),
        ("/valhalla/isochrone", "POST", "valhalla_isochrone_empty.json",
         lambda p: p.reachable(SENAATINTORI, time_s=300), "not_found", "no reachable area"),
        ("/nominatim/search", "GET", "overpass_cafes.json", lambda p: p.locate("Helsinki"),
         "unavailable", "not what its API documents"),
        ("/osrm/route/v1/car/.+", "GET", "valhalla_route.json",
         lambda p: p.route([RAUTATIENTORI, KAIVOPUISTO]), "unavailable", "code None"),
        ("/valhalla/route", "POST", "osrm_route_two_legs.json",
         lambda p: p.route([RAUTATIENTORI, KAIVOPUISTO], mode="truck"), "unavailable",
         "a trip that does not read"),
    ],
)  # fmt: skip
async def test_answers_that_say_nothing_useful_are_misses(
    server: RecordedServer,
    provider: OsmProvider,
    path: str,
    method: str,
    file: str,
    call: Any,
    code: str,
    words: str,
) -> None:
    server.add(method, path, file=file)
    miss = await _miss(call(provider))
    assert (miss.code, words in miss.reason) == (code, True), miss.reason


@pytest.mark.parametrize("file", ["valhalla_no_path.json", "valhalla_no_edges.json"])
async def test_valhalla_finding_no_way_is_not_found(
    server: RecordedServer, provider: OsmProvider, file: str
) -> None:
    server.add("POST", "/valhalla/isochrone", status=400, file=file)
    miss = await _miss(provider.reachable((24.9, 60.0), time_s=300))
    assert miss.code == "not_found" and miss.reason.startswith("Valhalla found no way there (No ")


async def test_a_service_that_is_down_or_slow_is_unavailable(
    server: RecordedServer, make_provider: Callable[..., OsmProvider], clock: _Clock
) -> None:
    import socket

    with socket.socket() as unused:
        unused.bind(("127.0.0.1", 0))
        closed = f"http://127.0.0.1:{unused.getsockname()[1]}"
    provider = make_provider(nominatim_url=closed)
    miss = await _miss(provider.locate("Helsinki"))
    # Three tries, each a second after the one before (Nominatim's rate holds for retries).
    assert miss.code == "unavailable" and sum(clock.sleeps) == pytest.approx(2.0)
    server.add("POST", "/valhalla/isochrone", delay_s=2.0, file="valhalla_isochrone.json")
    slow = make_provider(policy_options={"timeout_s": 0.3, "max_attempts": 1})
    miss = await _miss(slow.reachable(SENAATINTORI, time_s=300))
    assert miss.code == "unavailable"


def test_a_polyline_round_trips_valhallas_shape() -> None:
    shape6 = json.loads((RECORDED / "valhalla_route.json").read_text())["trip"]["legs"][0]["shape"]
    line = _routes.decode_polyline(shape6)
    assert line[0] == list(RAUTATIENTORI) and line[-1] == list(SENAATINTORI) and len(line) == 6
    assert haversine_m(line[0], line[-1]) < 700
    with pytest.raises(ValueError, match="ends in the middle"):
        _routes.decode_polyline(shape6[:-1] + "_")
