"""The bundled Helsinki demo data: it parses, it is where it says, and it says where from."""

from __future__ import annotations

import csv
import fnmatch
import json
import tomllib
from pathlib import Path
from typing import Any

import pytest
import shapely
from shapely.geometry import shape

from geomint.intake import load
from geomint.provenance import Provenance
from geomint.providers.bundled import (
    DATA_DIR,
    bounds,
    demo_boundaries,
    demo_places,
    demo_stops_path,
    source,
)

ROOT = Path(__file__).resolve().parents[2]
NAMES = ("helsinki_places", "helsinki_boundaries", "helsinki_stops")


@pytest.fixture(scope="module")
def places() -> list[dict[str, Any]]:
    features: list[dict[str, Any]] = demo_places()["features"]
    return features


@pytest.fixture(scope="module")
def area() -> shapely.Polygon:
    return shapely.box(*bounds())


def test_bounds_is_a_small_box_in_central_helsinki() -> None:
    west, south, east, north = bounds()
    assert 24.9 < west < east < 25.0
    assert 60.1 < south < north < 60.2


def test_places_are_points_inside_the_bounds(
    places: list[dict[str, Any]], area: shapely.Polygon
) -> None:
    assert 300 <= len(places) <= 5000
    for feature in places:
        geometry = shape(feature["geometry"])
        assert geometry.geom_type == "Point", feature["properties"]["id"]
        assert area.covers(geometry), feature["properties"]["id"]


def test_places_have_ids_categories_and_mostly_names(places: list[dict[str, Any]]) -> None:
    ids = [f["properties"]["id"] for f in places]
    assert len(set(ids)) == len(ids)
    assert all(i.startswith(("osm:node/", "osm:way/", "osm:relation/")) for i in ids)
    for feature in places:
        properties = feature["properties"]
        assert properties["category"], properties["id"]
        assert properties["categories"][0] == properties["category"], properties["id"]
    named = sum(f["properties"]["name"] is not None for f in places)
    assert named / len(places) > 0.8


def test_places_span_the_categories_a_demo_asks_for(places: list[dict[str, Any]]) -> None:
    categories = {f["properties"]["category"] for f in places}
    assert len(categories) >= 5
    assert {"cafe", "restaurant", "bar", "museum", "supermarket", "pharmacy"} <= categories


def test_places_keep_addresses_and_opening_hours(places: list[dict[str, Any]]) -> None:
    assert sum("address" in f["properties"] for f in places) > 100
    assert sum("opening_hours" in f["properties"] for f in places) > 100


def test_boundaries_are_valid_named_polygons_inside_the_bounds(area: shapely.Polygon) -> None:
    features = demo_boundaries()["features"]
    assert 20 <= len(features) <= 60
    for feature in features:
        geometry = shape(feature["geometry"])
        name = feature["properties"]["name"]
        assert geometry.geom_type in {"Polygon", "MultiPolygon"}, name
        assert geometry.is_valid, name
        assert area.covers(geometry), name
        assert name
        assert feature["properties"]["kind"] in {
            "park", "garden", "square", "station", "cathedral", "church", "museum", "theatre"
        }  # fmt: skip


def test_landmarks_carry_their_english_and_swedish_names() -> None:
    by_name = {f["properties"]["name"]: f["properties"] for f in demo_places()["features"]}
    outlines = {f["properties"]["name"]: f["properties"] for f in demo_boundaries()["features"]}

    assert "Helsinki Cathedral" in by_name["Helsingin tuomiokirkko"]["other_names"]
    assert (
        "Helsinki Central Railway Station" in by_name["Helsingin päärautatieasema"]["other_names"]
    )
    assert by_name["Helsingin päärautatieasema"]["category"] == "station"
    assert "Senatstorget" in outlines["Senaatintori"]["other_names"]
    assert outlines["Helsingin tuomiokirkko"]["kind"] == "cathedral"
    assert by_name["Kluuvi"]["category"] == "district"


def test_boundaries_wind_exterior_rings_counter_clockwise() -> None:
    for feature in demo_boundaries()["features"]:
        geometry = shape(feature["geometry"])
        assert shapely.orient_polygons(geometry).equals_exact(geometry, 0), feature["properties"]


def test_stops_csv_loads_through_intake_as_points(area: shapely.Polygon) -> None:
    with demo_stops_path().open(encoding="utf-8", newline="") as handle:
        rows = list(csv.DictReader(handle))
    assert 50 <= len(rows) <= 500
    assert set(rows[0]) == {"name", "kind", "lon", "lat"}

    layer = load(demo_stops_path())

    features = layer.data["features"]
    assert len(features) == len(rows)
    assert {f["properties"]["kind"] for f in features} <= {"bus_stop", "tram_stop", "platform"}
    for feature in features:
        geometry = shape(feature["geometry"])
        assert geometry.geom_type == "Point"
        assert area.covers(geometry)


@pytest.mark.parametrize("name", NAMES)
def test_every_file_has_provenance_a_record_accepts(name: str) -> None:
    provenance = Provenance(**source(name))

    assert provenance.licence == "ODbL-1.0"
    assert provenance.publisher == "OpenStreetMap contributors"
    assert provenance.evidence == "observed"
    assert provenance.retrieved_at.utcoffset() is not None


@pytest.mark.parametrize("name", NAMES)
def test_sources_json_counts_what_each_file_holds(name: str) -> None:
    record = json.loads((DATA_DIR / "SOURCES.json").read_text(encoding="utf-8"))["files"][name]
    path = DATA_DIR / record["file"]
    if path.suffix == ".csv":
        count = len(path.read_text(encoding="utf-8").splitlines()) - 1
    else:
        count = len(json.loads(path.read_text(encoding="utf-8"))["features"])
    assert record["feature_count"] == count
    assert record["attribution"] == "© OpenStreetMap contributors"


def test_an_unknown_source_names_the_known_ones() -> None:
    with pytest.raises(KeyError) as caught:
        source("helsinki_place")
    message = str(caught.value)
    assert "did you mean 'helsinki_places'?" in message
    assert all(name in message for name in NAMES)


def test_the_files_fit_in_the_package() -> None:
    files = [p for p in DATA_DIR.iterdir() if p.is_file()]
    # 3.0 MB until the landmarks' other names and outlines came in (about 35 kB).
    assert sum(p.stat().st_size for p in files) < 3_100_000


def test_every_data_file_is_declared_package_data() -> None:
    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    patterns = config["tool"]["setuptools"]["package-data"]["geomint"]
    package = DATA_DIR.parent.parent
    for path in DATA_DIR.iterdir():
        if path.is_file() and path.suffix != ".py":
            relative = path.relative_to(package).as_posix()
            assert any(fnmatch.fnmatch(relative, p) for p in patterns), relative
