"""The provider contract: what every provider must return, whoever it asks.

:mod:`geomint.providers.base` promises shapes (a place is a Point with ``id``, ``name``,
``category``...; a route a LineString with ``summary`` and ``sections``; a miss a
:class:`~geomint.providers.base.ProviderMiss` with a code). This module checks them, so
the tools and the model's code can read any provider's answer the same way.

How to run it on a provider
---------------------------

Subclass :class:`ProviderContract` in a ``test_*.py`` file, set ``scenario`` to a
:class:`Scenario` your provider can answer, and give a ``provider`` fixture (any scope)::

    from tests.providers.contract import AvoidCase, ProviderContract, Scenario

    class TestTomTomContract(ProviderContract):
        scenario = Scenario(
            provider="tomtom",
            claims=frozenset({"geocoder", "places", "router", "ranges", "traffic"}),
            place="Rautatientori, Helsinki",
            place_at=(24.9430, 60.1714),
            city="Helsinki",
            category="cafe",
            category_near=(24.9430, 60.1714),
            route=((24.9430, 60.1714), (24.9522, 60.1692)),
            range_origin=(24.9430, 60.1714),
            traffic_bbox=(24.90, 60.15, 24.98, 60.19),
            secrets=("the-test-key",),
        )

        @pytest.fixture
        def provider(self, recorded: str) -> TomTomProvider:
            return TomTomProvider(api_key="the-test-key", base_url=recorded)

``claims`` names the :class:`~geomint.providers.base.Providers` fields the provider serves
(``geocoder``, ``places``, ``boundaries``, ``router``, ``ranges``, ``traffic``). A claimed
capability must be implemented and pass its tests; an unclaimed one must either not be
implemented (``Providers.single`` leaves it None) or raise ``ProviderMiss(code=
"unsupported")``. Tests of unclaimed capabilities skip.

The calls the contract makes, to record responses for (``s`` is the scenario)::

    locate(s.place, limit=5)                 locate(s.city, limit=1)
    locate(s.unknown, limit=5)               -> ProviderMiss("not_found")
    discover(category=s.category, near=s.category_near, radius_m=s.category_radius_m, limit=5)
    discover(query=s.category, near=s.category_near, radius_m=s.category_radius_m, limit=2)
    discover(category=s.category, near=s.outside, limit=5)    -> a miss (if s.outside)
    boundary(s.area)                         boundary(s.unknown) -> ProviderMiss("not_found")
    route(list(s.route), mode=s.route_mode)
    route([s.route[0], s.outside], mode=s.route_mode)          -> a miss (if s.outside)
    route(list(s.avoid.waypoints), mode=s.avoid.mode, avoid=s.avoid.avoid)   (if s.avoid)
    route(list(s.avoid.waypoints), mode=s.avoid.mode)          (if s.avoid.detours)
    reachable(s.range_origin, time_s=t, mode=s.range_mode) for t in s.range_times_s
    reachable(s.range_origin, distance_m=s.range_distance_m, mode=s.range_mode)
    incidents(s.traffic_bbox)
    and, for each unclaimed capability the provider implements, one call from UNCLAIMED_CALLS.

The shape checks (:func:`check_found`, :func:`check_place`, :func:`check_boundary`,
:func:`check_route`, :func:`check_range`, :func:`check_incident`) are plain functions, for a
provider's own tests to apply to answers the contract does not ask for.
"""

from __future__ import annotations

import itertools
import json
import math
import re
from collections.abc import Awaitable, Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, ClassVar, Final, Literal

import pytest
import shapely
from shapely.geometry import shape

from geomint.provenance import Provenance
from geomint.providers.base import (
    Avoid,
    BoundarySource,
    Found,
    Geocoder,
    LonLat,
    PlaceSearch,
    ProviderMiss,
    RangeFinder,
    Router,
    TrafficSource,
    TravelMode,
)

__all__ = [
    "CAPABILITIES",
    "UNCLAIMED_CALLS",
    "AvoidCase",
    "ProviderContract",
    "Scenario",
    "check_boundary",
    "check_found",
    "check_incident",
    "check_place",
    "check_range",
    "check_route",
    "haversine_m",
]

Capability = Literal["geocoder", "places", "boundaries", "router", "ranges", "traffic"]
BBox = tuple[float, float, float, float]

#: Each capability (a field of ``Providers``) and the protocol that serves it.
CAPABILITIES: Final[Mapping[Capability, type]] = {
    "geocoder": Geocoder,
    "places": PlaceSearch,
    "boundaries": BoundarySource,
    "router": Router,
    "ranges": RangeFinder,
    "traffic": TrafficSource,
}

#: What the contract asks of a capability a provider implements but does not claim: it
#: must answer ``ProviderMiss(code="unsupported")``.
UNCLAIMED_CALLS: Final[Mapping[Capability, Callable[[Any], Awaitable[Found]]]] = {
    "geocoder": lambda p: p.locate("Helsinki"),
    "places": lambda p: p.discover(category="cafe", near=(24.943, 60.171)),
    "boundaries": lambda p: p.boundary("Finland"),
    "router": lambda p: p.route([(24.943, 60.171), (24.952, 60.169)]),
    "ranges": lambda p: p.reachable((24.943, 60.171), time_s=300),
    "traffic": lambda p: p.incidents((24.90, 60.15, 24.98, 60.19)),
}

_EARTH_M: Final = 6_371_008.8
#: Request keys that hold credentials: their values must never be recorded.
_SECRET_KEY: Final = re.compile(
    r"(api[_-]?key|^key$|apikey|token|secret|password|passwd|subscription|^auth|signature)",
    re.IGNORECASE,
)
_SECRET_PARAM: Final = re.compile(r"[?&](api[_-]?key|key|token|access_token)=", re.IGNORECASE)
_MISS_CODES: Final = frozenset(
    {"not_found", "rate_limited", "unavailable", "unsupported", "refused"}
)


@dataclass(frozen=True, kw_only=True)
class AvoidCase:
    """A route that ``avoid`` should change.

    Attributes:
        waypoints: Two or more ``(lon, lat)`` points.
        mode: The travel mode.
        avoid: What to avoid.
        detours: True when the plain route uses what is avoided: the avoiding route must
            then differ from it and take no less time. False when the data has none of it
            (the avoiding route must still be a valid route).
    """

    waypoints: tuple[LonLat, ...]
    mode: TravelMode = "car"
    avoid: tuple[Avoid, ...] = ("motorways",)
    detours: bool = False


@dataclass(frozen=True, kw_only=True)
class Scenario:
    """What a provider can answer: the inputs of the contract's calls.

    Fields for a capability the provider does not claim may be left at their defaults.

    Attributes:
        provider: The provider's ``name`` (also ``Found.provider`` and each place's
            ``provider``).
        claims: The capabilities it serves (fields of ``Providers``).
        place: A name ``locate`` finds.
        place_at: Where the best match for ``place`` lies, if known.
        place_within_m: How far from ``place_at`` the best match may be.
        city: A city ``locate`` finds (asked with ``limit=1``).
        area: A name ``boundary`` finds: a country, city, district or park.
        area_kind: The ``kind`` its boundary should have, if known.
        category: A category with results near ``category_near``.
        category_near: ``(lon, lat)`` to search around.
        category_radius_m: The search radius.
        near_sorts_by_distance: Whether a search near a point returns the nearest first.
        route: Two routable ``(lon, lat)`` points.
        route_mode: The mode to route them by.
        snap_m: How far a route's first and last positions may lie from the waypoints.
        avoid: A route that avoiding something should change, if the data has one.
        range_origin: An origin for reachable areas.
        range_mode: The mode for reachable areas.
        range_times_s: A smaller and a larger time budget.
        range_distance_m: A distance budget.
        traffic_bbox: ``(west, south, east, north)`` with incidents in it.
        unknown: A name no provider finds.
        outside: A point outside the provider's coverage (None: it covers the world).
        licences: The licences its sources may have (empty: any).
        secrets: Credentials the provider was given: they must appear in no answer.
    """

    provider: str
    claims: frozenset[Capability]
    place: str = ""
    place_at: LonLat | None = None
    place_within_m: float = 2_000.0
    city: str = ""
    area: str = ""
    area_kind: str | None = None
    category: str = ""
    category_near: LonLat = (0.0, 0.0)
    category_radius_m: float = 500.0
    near_sorts_by_distance: bool = True
    route: tuple[LonLat, LonLat] = ((0.0, 0.0), (0.0, 0.0))
    route_mode: TravelMode = "car"
    snap_m: float = 300.0
    avoid: AvoidCase | None = None
    range_origin: LonLat = (0.0, 0.0)
    range_mode: TravelMode = "walk"
    range_times_s: tuple[float, float] = (180.0, 420.0)
    range_distance_m: float = 400.0
    traffic_bbox: BBox | None = None
    unknown: str = "Qwxzv Plorptang"
    outside: LonLat | None = None
    licences: frozenset[str] = field(default_factory=frozenset)
    secrets: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        unknown = set(self.claims) - set(CAPABILITIES)
        if unknown:
            raise ValueError(f"unknown capabilities {sorted(unknown)}; use {list(CAPABILITIES)}")
        needs: dict[Capability, tuple[str, ...]] = {
            "geocoder": ("place", "city"),
            "places": ("category",),
            "boundaries": ("area",),
        }
        for capability, names in needs.items():
            for name in names:
                if capability in self.claims and not getattr(self, name):
                    raise ValueError(f"a scenario claiming {capability!r} needs {name!r}")
        if "traffic" in self.claims and self.traffic_bbox is None:
            raise ValueError("a scenario claiming 'traffic' needs 'traffic_bbox'")
        small, large = self.range_times_s
        if not 0 < small < large:
            raise ValueError("range_times_s is (smaller, larger), both positive")


# -- shape checks --------------------------------------------------------------------------


def haversine_m(a: Sequence[float], b: Sequence[float]) -> float:
    """Great-circle distance in metres between two ``(lon, lat)`` points."""
    lon1, lat1, lon2, lat2 = map(math.radians, (a[0], a[1], b[0], b[1]))
    h = (
        math.sin((lat2 - lat1) / 2) ** 2
        + math.cos(lat1) * math.cos(lat2) * math.sin((lon2 - lon1) / 2) ** 2
    )
    return 2 * _EARTH_M * math.asin(math.sqrt(min(h, 1.0)))


def _positions(geometry: Mapping[str, Any]) -> Iterator[Sequence[float]]:
    kind = geometry["type"]
    coordinates = geometry["coordinates"]
    depth = {
        "Point": 0,
        "LineString": 1,
        "MultiPoint": 1,
        "Polygon": 2,
        "MultiLineString": 2,
        "MultiPolygon": 3,
    }[kind]

    def walk(value: Any, level: int) -> Iterator[Sequence[float]]:
        if level == 0:
            yield value
        else:
            assert isinstance(value, list), f"{kind} coordinates nest lists: {value!r}"
            for item in value:
                yield from walk(item, level - 1)

    yield from walk(coordinates, depth)


def _check_geometry(geometry: Mapping[str, Any]) -> None:
    assert isinstance(geometry, Mapping), f"a geometry is an object, got {geometry!r}"
    if geometry.get("type") == "GeometryCollection":
        for part in geometry["geometries"]:
            _check_geometry(part)
        return
    for position in _positions(geometry):
        assert 2 <= len(position) <= 3, f"a position is [lon, lat(, z)], got {position!r}"
        assert all(isinstance(v, (int, float)) and math.isfinite(v) for v in position), position
        lon, lat = position[0], position[1]
        assert -180 <= lon <= 180 and -90 <= lat <= 90, f"not lon/lat in WGS84: {position!r}"
    if geometry["type"] == "LineString":
        assert len(geometry["coordinates"]) >= 2, "a LineString has two positions or more"
    if geometry["type"] in ("Polygon", "MultiPolygon"):
        polygons = (
            [geometry["coordinates"]] if geometry["type"] == "Polygon" else geometry["coordinates"]
        )
        for rings in polygons:
            for ring in rings:
                assert len(ring) >= 4 and list(ring[0]) == list(ring[-1]), "a ring is closed"


def _check_plain(value: Any, path: str) -> None:
    # JSON's own types, exactly: a numpy float passes json.dumps but is not one.
    kind = type(value)
    if kind is dict:
        for key, item in value.items():
            assert type(key) is str, f"{path}: a key is {type(key).__name__}"
            _check_plain(item, f"{path}.{key}")
    elif kind is list:
        for index, item in enumerate(value):
            _check_plain(item, f"{path}[{index}]")
    else:
        assert kind in (str, int, float, bool, type(None)), f"{path} is a {kind.__name__}"


def _check_request(found: Found, secrets: Sequence[str]) -> None:
    def walk(value: Any, path: str) -> None:
        if isinstance(value, Mapping):
            for key, item in value.items():
                if _SECRET_KEY.search(str(key)) and item not in (None, "", [], {}):
                    raise AssertionError(f"the request records a credential at {path}{key}")
                walk(item, f"{path}{key}.")
        elif isinstance(value, (list, tuple)):
            for index, item in enumerate(value):
                walk(item, f"{path}{index}.")

    walk(found.request, "")
    json.dumps(dict(found.request), default=str)
    assert not _SECRET_PARAM.search(found.endpoint), f"a key in the endpoint: {found.endpoint}"
    recorded = json.dumps(
        [dict(found.request), found.endpoint, list(found.notes), found.data], default=str
    )
    for secret in secrets:
        assert secret not in recorded, "a credential given to the provider is in its answer"


def check_found(found: Found, scenario: Scenario) -> list[dict[str, Any]]:
    """Check what every call returns, and give back its features.

    A FeatureCollection of Features with valid WGS84 geometries (no ``crs``: RFC 7946),
    Provenance sources with a licence and a dated ``retrieved_at``, the provider's name,
    an endpoint and a JSON request with no credentials in either.
    """
    assert isinstance(found, Found), f"a provider returns Found, got {type(found).__name__}"
    data = found.data
    assert data.get("type") == "FeatureCollection", data.get("type")
    assert "crs" not in data, "GeoJSON is WGS84 lon/lat (RFC 7946): no crs member"
    features = data.get("features")
    assert isinstance(features, list)
    for feature in features:
        assert feature.get("type") == "Feature"
        assert isinstance(feature.get("properties"), dict)
        _check_geometry(feature["geometry"])
    json.dumps(data, allow_nan=False)
    _check_plain(data, "data")
    assert found.provider == scenario.provider
    assert isinstance(found.endpoint, str) and found.endpoint
    assert found.sources, "every answer says where it came from"
    for source in found.sources:
        assert isinstance(source, Provenance)
        assert source.licence.strip()
        assert isinstance(source.retrieved_at, datetime)
        assert source.retrieved_at.tzinfo is not None
        if scenario.licences:
            assert source.licence in scenario.licences, source.licence
    assert all(isinstance(note, str) and note for note in found.notes)
    _check_request(found, scenario.secrets)
    return features


def check_place(feature: Mapping[str, Any], scenario: Scenario) -> None:
    """A place: a Point with ``id``, ``name``, ``category``, ``categories``, ``provider``
    and, when ranked, a ``score`` in 0..1."""
    assert feature["geometry"]["type"] == "Point"
    props = feature["properties"]
    assert isinstance(props.get("id"), str) and props["id"], props
    assert "name" in props and (props["name"] is None or isinstance(props["name"], str))
    assert isinstance(props.get("category"), str) and props["category"], props
    categories = props.get("categories")
    assert isinstance(categories, list) and all(isinstance(c, str) for c in categories)
    assert props.get("provider") == scenario.provider
    if "score" in props:
        assert isinstance(props["score"], (int, float)) and 0 <= props["score"] <= 1, props
    if props.get("address") is not None:
        assert isinstance(props["address"], str)


def check_ranked(features: Sequence[Mapping[str, Any]]) -> None:
    """Scores, where given, fall from the first result to the last."""
    scores = [f["properties"]["score"] for f in features if "score" in f["properties"]]
    assert scores == sorted(scores, reverse=True), scores


def check_boundary(feature: Mapping[str, Any]) -> shapely.Geometry:
    """A boundary: a valid (Multi)Polygon with ``id``, ``name`` and ``kind``."""
    assert feature["geometry"]["type"] in ("Polygon", "MultiPolygon")
    props = feature["properties"]
    assert isinstance(props.get("name"), str) and props["name"]
    assert isinstance(props.get("kind"), str) and props["kind"]
    assert "id" in props
    geometry = shape(feature["geometry"])
    assert geometry.is_valid, shapely.is_valid_reason(geometry)
    assert geometry.area > 0
    return geometry


def check_route(
    feature: Mapping[str, Any],
    waypoints: Sequence[LonLat],
    *,
    mode: str,
    avoid: Sequence[str] = (),
    snap_m: float = 300.0,
) -> dict[str, Any]:
    """A route: a LineString from near the first waypoint to near the last, a summary
    whose length is at least the straight line and whose duration is positive, sections
    over the line's positions, and the mode and avoid it was asked for."""
    assert feature["geometry"]["type"] == "LineString"
    line = feature["geometry"]["coordinates"]
    props = feature["properties"]
    first, last = waypoints[0], waypoints[-1]
    assert haversine_m(line[0], first) <= snap_m, (line[0], first)
    assert haversine_m(line[-1], last) <= snap_m, (line[-1], last)
    summary = props["summary"]
    assert summary["duration_s"] > 0
    # The line's own ends, not the waypoints: those may lie off the network.
    assert summary["length_m"] >= 0.99 * haversine_m(line[0], line[-1])
    assert summary["length_m"] >= haversine_m(first, last) - 2 * snap_m
    for name in ("departure", "arrival"):
        if summary.get(name) is not None:
            datetime.fromisoformat(summary[name])
    sections = props["sections"]
    assert isinstance(sections, list)
    for section in sections:
        assert 0 <= section["start_index"] <= section["end_index"] < len(line), section
        assert isinstance(section["kind"], str)
    assert props["mode"] == mode
    assert list(props["avoid"]) == list(avoid)
    summary_out: dict[str, Any] = summary
    return summary_out


def check_range(
    feature: Mapping[str, Any], origin: LonLat, budget: Mapping[str, float], mode: str
) -> shapely.Polygon:
    """A reachable area: a valid Polygon holding the origin, with the budget and mode it
    was asked for."""
    assert feature["geometry"]["type"] == "Polygon"
    area = shape(feature["geometry"])
    assert area.is_valid, shapely.is_valid_reason(area)
    assert area.covers(shapely.Point(origin)), "the area holds its origin"
    props = feature["properties"]
    assert props["budget"] == dict(budget)
    assert props["mode"] == mode
    assert haversine_m(props["origin"], origin) < 1.0
    return area


def check_incident(feature: Mapping[str, Any]) -> None:
    """An incident: a Point or LineString with ``category`` and ``magnitude`` 0-4."""
    assert feature["geometry"]["type"] in ("Point", "LineString", "MultiLineString")
    props = feature["properties"]
    assert isinstance(props.get("category"), str) and props["category"]
    assert isinstance(props.get("magnitude"), int) and 0 <= props["magnitude"] <= 4
    if props.get("delay_s") is not None:
        assert props["delay_s"] >= 0


def _check_miss(miss: ProviderMiss, scenario: Scenario, codes: set[str]) -> None:
    assert miss.code in codes, f"{miss.code}: {miss.reason}"
    assert miss.code in _MISS_CODES
    assert miss.provider == scenario.provider
    # A sentence a model can act on: not empty, not a traceback or a response body.
    assert isinstance(miss.reason, str) and len(miss.reason) >= 10, miss.reason
    assert "Traceback" not in miss.reason and len(miss.reason) <= 2_000
    assert str(miss) == miss.reason
    for secret in scenario.secrets:
        assert secret not in miss.reason and secret not in miss.endpoint


# -- the contract ----------------------------------------------------------------------------


class ProviderContract:
    """The tests every provider passes; subclass with a ``scenario`` and a ``provider``
    fixture, in the class or the module (see the module's docstring)."""

    scenario: ClassVar[Scenario]
    pytestmark: ClassVar[list[pytest.MarkDecorator]] = [pytest.mark.anyio]

    @pytest.fixture
    def anyio_backend(self) -> str:
        return "asyncio"

    def _claimed(self, capability: Capability) -> Scenario:
        if capability not in self.scenario.claims:
            pytest.skip(f"{self.scenario.provider} does not claim {capability}")
        return self.scenario

    # -- capabilities --------------------------------------------------------------------

    def test_provider_has_a_name(self, provider: Any) -> None:
        assert provider.name == self.scenario.provider

    @pytest.mark.parametrize("capability", list(CAPABILITIES))
    async def test_claims_match_what_it_implements(
        self, provider: Any, capability: Capability
    ) -> None:
        implements = isinstance(provider, CAPABILITIES[capability])
        if capability in self.scenario.claims:
            assert implements, f"{provider.name} claims {capability} but lacks its method"
            return
        if implements:
            with pytest.raises(ProviderMiss) as caught:
                await UNCLAIMED_CALLS[capability](provider)
            _check_miss(caught.value, self.scenario, {"unsupported"})

    # -- geocoding -----------------------------------------------------------------------

    async def test_locate_finds_the_place_ranked(self, provider: Any) -> None:
        s = self._claimed("geocoder")
        found = await provider.locate(s.place, limit=5)
        features = check_found(found, s)
        assert 1 <= len(features) <= 5
        for feature in features:
            check_place(feature, s)
        check_ranked(features)
        if s.place_at is not None:
            best = features[0]["geometry"]["coordinates"]
            assert haversine_m(best, s.place_at) <= s.place_within_m, best

    async def test_locate_honours_the_limit(self, provider: Any) -> None:
        s = self._claimed("geocoder")
        found = await provider.locate(s.city, limit=1)
        assert len(check_found(found, s)) == 1

    async def test_locate_an_unknown_name_is_not_found(self, provider: Any) -> None:
        s = self._claimed("geocoder")
        with pytest.raises(ProviderMiss) as caught:
            await provider.locate(s.unknown, limit=5)
        _check_miss(caught.value, s, {"not_found"})

    # -- place search -----------------------------------------------------------------------

    async def test_discover_near_a_point_keeps_to_the_radius(self, provider: Any) -> None:
        s = self._claimed("places")
        found = await provider.discover(
            category=s.category, near=s.category_near, radius_m=s.category_radius_m, limit=5
        )
        features = check_found(found, s)
        assert 1 <= len(features) <= 5
        distances = []
        for feature in features:
            check_place(feature, s)
            distances.append(haversine_m(feature["geometry"]["coordinates"], s.category_near))
        assert max(distances) <= s.category_radius_m * 1.02 + 5, distances
        if s.near_sorts_by_distance:
            assert all(a <= b + 5 for a, b in itertools.pairwise(distances))

    async def test_discover_by_text_is_ranked_and_limited(self, provider: Any) -> None:
        s = self._claimed("places")
        found = await provider.discover(
            query=s.category, near=s.category_near, radius_m=s.category_radius_m, limit=2
        )
        features = check_found(found, s)
        assert 1 <= len(features) <= 2
        for feature in features:
            check_place(feature, s)
        if not s.near_sorts_by_distance:
            check_ranked(features)

    async def test_discover_outside_coverage_is_a_miss(self, provider: Any) -> None:
        s = self._claimed("places")
        if s.outside is None:
            pytest.skip(f"{s.provider} covers the world")
        with pytest.raises(ProviderMiss) as caught:
            await provider.discover(category=s.category, near=s.outside, limit=5)
        _check_miss(caught.value, s, {"unsupported", "not_found"})

    # -- boundaries ------------------------------------------------------------------------

    async def test_boundary_is_a_valid_named_polygon(self, provider: Any) -> None:
        s = self._claimed("boundaries")
        found = await provider.boundary(s.area)
        features = check_found(found, s)
        assert len(features) == 1, "boundary() gives one polygon unless asked for more"
        check_boundary(features[0])
        if s.area_kind is not None:
            assert features[0]["properties"]["kind"] == s.area_kind

    async def test_boundary_of_an_unknown_name_is_not_found(self, provider: Any) -> None:
        s = self._claimed("boundaries")
        with pytest.raises(ProviderMiss) as caught:
            await provider.boundary(s.unknown)
        _check_miss(caught.value, s, {"not_found"})

    # -- routes ----------------------------------------------------------------------------

    async def test_route_runs_between_the_waypoints(self, provider: Any) -> None:
        s = self._claimed("router")
        found = await provider.route(list(s.route), mode=s.route_mode)
        features = check_found(found, s)
        assert len(features) >= 1
        for feature in features:
            check_route(feature, s.route, mode=s.route_mode, snap_m=s.snap_m)

    async def test_route_avoiding_is_still_a_route(self, provider: Any) -> None:
        s = self._claimed("router")
        if s.avoid is None:
            pytest.skip(f"no avoid case for {s.provider}")
        case = s.avoid
        avoiding = await provider.route(list(case.waypoints), mode=case.mode, avoid=case.avoid)
        feature = check_found(avoiding, s)[0]
        summary = check_route(
            feature, case.waypoints, mode=case.mode, avoid=case.avoid, snap_m=s.snap_m
        )
        if case.detours:
            plain = await provider.route(list(case.waypoints), mode=case.mode)
            plain_feature = check_found(plain, s)[0]
            assert plain_feature["geometry"] != feature["geometry"], "avoid changed nothing"
            assert summary["duration_s"] >= plain_feature["properties"]["summary"]["duration_s"]

    async def test_route_outside_coverage_is_a_miss(self, provider: Any) -> None:
        s = self._claimed("router")
        if s.outside is None:
            pytest.skip(f"{s.provider} covers the world")
        with pytest.raises(ProviderMiss) as caught:
            await provider.route([s.route[0], s.outside], mode=s.route_mode)
        _check_miss(caught.value, s, {"unsupported", "not_found"})

    # -- reachable areas ---------------------------------------------------------------------

    async def test_reachable_grows_with_the_budget(self, provider: Any) -> None:
        s = self._claimed("ranges")
        areas = []
        for time_s in s.range_times_s:
            found = await provider.reachable(s.range_origin, time_s=time_s, mode=s.range_mode)
            features = check_found(found, s)
            assert len(features) == 1
            areas.append(check_range(features[0], s.range_origin, {"time_s": time_s}, s.range_mode))
        small, large = areas
        assert large.area > small.area
        # Nearly all of the smaller area lies in the larger (edges are simplified apart).
        assert large.intersection(small).area >= 0.95 * small.area

    async def test_reachable_by_distance(self, provider: Any) -> None:
        s = self._claimed("ranges")
        found = await provider.reachable(
            s.range_origin, distance_m=s.range_distance_m, mode=s.range_mode
        )
        features = check_found(found, s)
        area = check_range(
            features[0], s.range_origin, {"distance_m": s.range_distance_m}, s.range_mode
        )
        # Nothing in it lies further than the distance (and the width of a street).
        far = max(haversine_m(xy, s.range_origin) for xy in area.exterior.coords)
        assert far <= s.range_distance_m + 100, far

    # -- traffic ---------------------------------------------------------------------------

    async def test_incidents_have_a_category_and_magnitude(self, provider: Any) -> None:
        s = self._claimed("traffic")
        assert s.traffic_bbox is not None
        found = await provider.incidents(s.traffic_bbox)
        features = check_found(found, s)
        assert features, "the scenario's bbox has incidents"
        west, south, east, north = s.traffic_bbox
        box = shapely.box(west, south, east, north).buffer(0.05)
        for feature in features:
            check_incident(feature)
            assert box.intersects(shape(feature["geometry"]))
