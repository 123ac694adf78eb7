"""The bundled offline data: countries, cities and the Helsinki road graph load, hold what
a geocoder and a router need, and say where they came from."""

from __future__ import annotations

import csv
import dataclasses
import json
import math
from collections import deque
from typing import Any

import pytest
import shapely
from shapely.geometry import shape

from geomint.provenance import Provenance
from geomint.providers.bundled import (
    BICYCLE,
    CAR,
    DATA_DIR,
    FOOT,
    City,
    RoadGraph,
    cities,
    countries,
    files,
    road_graph,
    source,
)

NAMES = ("countries", "cities", "helsinki_roads")
HELSINKI = shapely.Point(24.9384, 60.1699)
# Each file's share of the bundle: a rebuild that bloats one should be noticed.
FILE_BUDGETS = {"countries": 1_500_000, "cities": 1_000_000, "helsinki_roads": 800_000}
BUNDLE_BUDGET = 15_000_000


@pytest.fixture(scope="module")
def features() -> list[dict[str, Any]]:
    found: list[dict[str, Any]] = countries()["features"]
    return found


@pytest.fixture(scope="module")
def by_name(features: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    return {f["properties"]["name"]: f for f in features}


@pytest.fixture(scope="module")
def graph() -> RoadGraph:
    return road_graph()


def _city(name: str, country_code: str) -> City:
    return max(
        (c for c in cities() if c.name == name and c.country_code == country_code),
        key=lambda c: c.population,
    )


def _haversine_m(lon1: float, lat1: float, lon2: float, lat2: float) -> float:
    phi1, phi2 = math.radians(lat1), math.radians(lat2)
    dphi, dlon = phi2 - phi1, math.radians(lon2 - lon1)
    a = math.sin(dphi / 2) ** 2 + math.cos(phi1) * math.cos(phi2) * math.sin(dlon / 2) ** 2
    return 2 * 6_371_008.8 * math.asin(math.sqrt(a))


def _neighbours(graph: RoadGraph, mode: int) -> dict[int, list[int]]:
    out: dict[int, list[int]] = {}
    for start, end, bits in zip(graph.source, graph.target, graph.modes, strict=True):
        if bits & mode:
            out.setdefault(start, []).append(end)
    return out


def _reachable(neighbours: dict[int, list[int]], start: int) -> set[int]:
    seen, queue = {start}, deque([start])
    while queue:
        for other in neighbours.get(queue.popleft(), ()):
            if other not in seen:
                seen.add(other)
                queue.append(other)
    return seen


# -- every file --------------------------------------------------------------------------


@pytest.mark.parametrize("name", NAMES)
def test_every_file_is_listed_with_provenance_a_record_accepts(name: str) -> None:
    provenance = Provenance(**source(name))

    assert files()[name].exists()
    assert provenance.retrieved_at.utcoffset() is not None
    assert provenance.evidence == "observed"


@pytest.mark.parametrize(
    ("name", "publisher", "licence", "credit"),
    [
        ("countries", "Natural Earth", "public domain", "Made with Natural Earth"),
        ("cities", "GeoNames", "CC-BY-4.0", "GeoNames (www.geonames.org), CC BY 4.0"),
        (
            "helsinki_roads",
            "OpenStreetMap contributors",
            "ODbL-1.0",
            "© OpenStreetMap contributors",
        ),
    ],
)
def test_each_file_names_its_publisher_licence_and_credit(
    name: str, publisher: str, licence: str, credit: str
) -> None:
    record = source(name)
    licence_text = (DATA_DIR / "LICENCE.md").read_text(encoding="utf-8")

    assert (record["publisher"], record["licence"]) == (publisher, licence)
    assert files()[name].name in licence_text
    assert credit in licence_text


def test_sources_json_counts_what_each_file_holds(graph: RoadGraph) -> None:
    recorded = json.loads((DATA_DIR / "SOURCES.json").read_text(encoding="utf-8"))["files"]
    segments = json.loads(files()["helsinki_roads"].read_text(encoding="utf-8"))["segments"]

    assert recorded["countries"]["feature_count"] == len(countries()["features"])
    assert recorded["cities"]["feature_count"] == len(cities())
    assert recorded["helsinki_roads"]["feature_count"] == len(segments)
    assert len(graph.source) > len(segments)  # most segments are two edges


def test_the_files_fit_their_budgets() -> None:
    for name, budget in FILE_BUDGETS.items():
        assert files()[name].stat().st_size < budget, name
    total = sum(p.stat().st_size for p in DATA_DIR.iterdir() if p.is_file())
    assert total < BUNDLE_BUDGET


# -- countries ---------------------------------------------------------------------------


def test_countries_are_valid_named_polygons(features: list[dict[str, Any]]) -> None:
    assert len(features) > 170
    for feature in features:
        geometry = shape(feature["geometry"])
        name = feature["properties"]["name"]
        assert name
        assert geometry.geom_type in {"Polygon", "MultiPolygon"}, name
        assert geometry.is_valid, name
        assert not geometry.is_empty, name


def test_countries_wind_exterior_rings_counter_clockwise(features: list[dict[str, Any]]) -> None:
    for feature in features:
        geometry = shape(feature["geometry"])
        assert shapely.orient_polygons(geometry).equals_exact(geometry, 0), feature["properties"]


def test_finland_holds_helsinki_and_is_found_by_its_codes(
    features: list[dict[str, Any]],
) -> None:
    holding = [f["properties"]["name"] for f in features if shape(f["geometry"]).covers(HELSINKI)]
    finland = next(f for f in features if f["properties"]["iso_a3"] == "FIN")

    assert holding == ["Finland"]
    assert finland["properties"]["iso_a2"] == "FI"
    assert finland["properties"]["iso_n3"] == "246"


@pytest.mark.parametrize("name", ["Russia", "Fiji"])
def test_a_country_across_the_antimeridian_is_split_there(
    name: str, by_name: dict[str, dict[str, Any]]
) -> None:
    feature = by_name[name]
    geometry = shape(feature["geometry"])
    parts = list(geometry.geoms)
    west, _, east, _ = feature["bbox"]

    assert geometry.is_valid
    # Parts on both sides of 180 degrees, none of them wrapping the globe the other way.
    assert any(p.bounds[0] == -180 for p in parts)
    assert any(p.bounds[2] == 180 for p in parts)
    assert all(p.bounds[2] - p.bounds[0] < 180 for p in parts)
    assert west > east  # its box crosses the antimeridian rather than spanning the world


def test_antarctica_reaches_the_pole_without_wrapping(by_name: dict[str, dict[str, Any]]) -> None:
    geometry = shape(by_name["Antarctica"]["geometry"])
    assert geometry.is_valid
    assert geometry.bounds[1] < -89.9
    assert 5_000 < geometry.area < 7_000  # square degrees: not the rest of the world


def test_bboxes_and_labels_belong_to_their_countries(features: list[dict[str, Any]]) -> None:
    for feature in features:
        properties = feature["properties"]
        geometry = shape(feature["geometry"])
        west, south, east, north = feature["bbox"]
        assert (south, north) == pytest.approx(geometry.bounds[1::2], abs=1e-3), properties
        if west <= east:
            assert (west, east) == pytest.approx(geometry.bounds[0::2], abs=1e-3), properties
        assert geometry.distance(shapely.Point(properties["label"])) < 0.01, properties["name"]


def test_iso_names_find_what_natural_earth_abbreviates(
    by_name: dict[str, dict[str, Any]],
) -> None:
    congo = by_name["Dem. Rep. Congo"]["properties"]
    assert "The Democratic Republic of the Congo" in congo["aliases"]
    assert "Republic of Korea" in by_name["South Korea"]["properties"]["aliases"]
    assert by_name["Kosovo"]["properties"]["iso_a2"] == "XK"
    # Ashmore and Cartier Is. shares Australia's code but not its name.
    assert by_name["Ashmore and Cartier Is."]["properties"]["aliases"] == []


# -- cities ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "country_code", "lon", "lat", "least", "most"),
    [
        ("Helsinki", "FI", 24.94, 60.17, 500_000, 1_000_000),
        ("Tokyo", "JP", 139.69, 35.69, 5_000_000, 40_000_000),
        ("São Paulo", "BR", -46.63, -23.55, 10_000_000, 25_000_000),
    ],
)
def test_big_cities_are_where_they_are_with_their_people(
    name: str, country_code: str, lon: float, lat: float, least: int, most: int
) -> None:
    city = _city(name, country_code)
    assert least <= city.population <= most
    assert city.lon == pytest.approx(lon, abs=0.1)
    assert city.lat == pytest.approx(lat, abs=0.1)


def test_cities_carry_ascii_and_other_names_a_person_types() -> None:
    assert _city("São Paulo", "BR").ascii_name == "Sao Paulo"
    assert "Helsingfors" in _city("Helsinki", "FI").alternate_names
    assert "Bombay" in _city("Mumbai", "IN").alternate_names
    assert "München" in _city("Munich", "DE").alternate_names
    for city in cities():
        assert city.ascii_name.isascii(), city
        assert city.name not in city.alternate_names, city


def test_cities_are_large_unique_and_in_known_countries(features: list[dict[str, Any]]) -> None:
    found = cities()
    codes = {f["properties"]["iso_a2"] for f in features}

    assert len(found) > 4_000
    assert all(c.population >= 100_000 for c in found)
    assert len({c.geonameid for c in found}) == len(found)
    assert all(-90 <= c.lat <= 90 and -180 <= c.lon <= 180 for c in found)
    known = sum(c.country_code in codes for c in found)
    assert known / len(found) > 0.99


def test_cities_csv_has_the_documented_columns() -> None:
    with files()["cities"].open(encoding="utf-8", newline="") as handle:
        header = next(csv.reader(handle))
    assert header == [field.name for field in dataclasses.fields(City)]


def test_cached_records_cannot_be_changed(graph: RoadGraph) -> None:
    assert cities() is cities()
    assert road_graph() is graph
    with pytest.raises(dataclasses.FrozenInstanceError):
        cities()[0].name = "Elsewhere"  # type: ignore[misc]
    with pytest.raises(TypeError):
        graph.ways[0].tags["access"] = "no"  # type: ignore[index]


# -- the road graph ----------------------------------------------------------------------


def test_edges_join_nodes_that_exist_inside_the_extract(graph: RoadGraph) -> None:
    west, south, east, north = graph.bbox
    count = len(graph.lon)
    assert len(graph.lat) == count
    assert all(0 <= node < count for node in (*graph.source, *graph.target))
    assert all(0 <= way < len(graph.ways) for way in graph.way)
    assert all(west <= x <= east for x in graph.lon)
    assert all(south <= y <= north for y in graph.lat)
    assert all(1 <= bits <= FOOT | BICYCLE | CAR for bits in graph.modes)


def test_edge_lengths_match_their_nodes(graph: RoadGraph) -> None:
    for start, end, length in zip(graph.source, graph.target, graph.length_m, strict=True):
        assert length > 0
        straight = _haversine_m(graph.lon[start], graph.lat[start], graph.lon[end], graph.lat[end])
        assert length == pytest.approx(straight, rel=0.01, abs=0.001), (start, end)


@pytest.mark.parametrize("mode", [FOOT, BICYCLE, CAR])
def test_most_of_each_network_is_one_piece(graph: RoadGraph, mode: int) -> None:
    neighbours = _neighbours(graph, mode)
    undirected: dict[int, list[int]] = {}
    for start, ends in neighbours.items():
        for end in ends:
            undirected.setdefault(start, []).append(end)
            undirected.setdefault(end, []).append(start)
    largest = 0
    left = set(undirected)
    while left:
        piece = _reachable(undirected, left.pop())
        left -= piece
        largest = max(largest, len(piece))
    assert largest / len(undirected) > 0.8


@pytest.mark.parametrize("mode", [FOOT, BICYCLE, CAR])
def test_opposite_corners_of_the_extract_reach_each_other(graph: RoadGraph, mode: int) -> None:
    neighbours = _neighbours(graph, mode)
    nodes = set(neighbours)
    west, south, east, north = graph.bbox

    def nearest(lon: float, lat: float) -> int:
        return min(nodes, key=lambda i: _haversine_m(graph.lon[i], graph.lat[i], lon, lat))

    south_west = nearest(west + 0.003, south + 0.002)
    north_east = nearest(east - 0.003, north - 0.002)
    apart = _haversine_m(
        graph.lon[south_west], graph.lat[south_west], graph.lon[north_east], graph.lat[north_east]
    )

    assert apart > 1_000
    assert north_east in _reachable(neighbours, south_west)
    assert south_west in _reachable(neighbours, north_east)


def test_one_way_streets_are_one_way_for_cars_only(graph: RoadGraph) -> None:
    driven: set[tuple[int, int]] = set()
    walked: set[tuple[int, int]] = set()
    one_way = set()
    for j, (start, end) in enumerate(zip(graph.source, graph.target, strict=True)):
        way = graph.ways[graph.way[j]]
        if way.tags.get("oneway") != "yes":
            continue
        one_way.add(graph.way[j])
        if graph.modes[j] & CAR:
            driven.add((start, end))
        if graph.modes[j] & FOOT:
            walked.add((start, end))
    assert len(one_way) > 50
    assert driven
    assert not any((end, start) in driven for start, end in driven)
    assert sum((end, start) in walked for start, end in walked) > len(walked) // 2


def test_modes_follow_the_way_classes(graph: RoadGraph) -> None:
    modes_by_class: dict[str, int] = {}
    for way, bits in zip(graph.way, graph.modes, strict=True):
        highway = graph.ways[way].highway
        modes_by_class[highway] = modes_by_class.get(highway, 0) | bits
    assert modes_by_class["steps"] == FOOT
    assert modes_by_class["footway"] & CAR == 0
    assert modes_by_class["cycleway"] & BICYCLE
    assert modes_by_class["primary"] & CAR
    assert modes_by_class["residential"] == FOOT | BICYCLE | CAR


def test_ways_keep_names_speeds_and_access_tags(graph: RoadGraph) -> None:
    names = {w.name for w in graph.ways}
    assert {"Mannerheimintie", "Pohjoisesplanadi", "Aleksanterinkatu"} <= names
    assert any(w.maxspeed_kmh == 30 for w in graph.ways)
    assert any("access" in w.tags for w in graph.ways)
