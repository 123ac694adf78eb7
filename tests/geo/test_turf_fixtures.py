"""geo agrees with Turf.js on its own test fixtures (MIT, see fixtures/turf/LICENSE.md).

Turf measures on a sphere (R = 6,371,008.8 m) and geo on the WGS84 ellipsoid, so metric
results agree within 0.6 %; where a case carries a pyproj reference, geo matches it
closely. Planar cases (bbox, point in polygon) and turf's centroid (geo's vertex_mean)
match exactly.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from geomint import geo

FIXTURES = Path(__file__).parent / "fixtures" / "turf"
CASES = json.loads((FIXTURES / "INDEX.json").read_text())
SPHERE_VS_ELLIPSOID = 0.006
EARTH_RADIUS_M = 6_371_008.8
METRES_PER_UNIT = {
    "meters": 1.0,
    "kilometers": 1000.0,
    "miles": 1609.344,
    "feet": 1 / 3.28084,
    "nauticalmiles": 1852.0,
    "radians": EARTH_RADIUS_M,
    "degrees": EARTH_RADIUS_M * math.pi / 180,
}


def _metres(value: float, units: str) -> float:
    return value * METRES_PER_UNIT[units]


def _close(actual: float, expected: float, rel: float = SPHERE_VS_ELLIPSOID) -> None:
    assert actual == pytest.approx(expected, rel=rel, abs=1e-6)


def _apart_m(a: Any, b: Any) -> float:
    return geo.distance_m(geo.to_shapely(a), geo.to_shapely(b))


def check_area(case: dict[str, Any]) -> None:
    geojson, expected = case["input"]["geojson"], case["expected"]
    if case["id"] == "area__ring-with-3-positions":
        # turf answers 0 for a 3-position ring; geo refuses the broken ring instead.
        with pytest.raises(geo.GeoInputError, match="ring 0 of the Polygon has 3 positions"):
            geo.area_m2(geojson)
        return
    if case["id"] == "area__rotation-consistency":
        areas = [
            geo.area_m2({"type": "Polygon", "coordinates": [ring]})
            for ring in case["args"]["rotated_variants"]
        ]
        assert areas == pytest.approx([geo.area_m2(geojson)] * len(areas), rel=1e-9)
        return
    _close(geo.area_m2(geojson), expected)
    if "wgs84_reference" in case:
        _close(geo.area_m2(geojson), case["wgs84_reference"]["pyproj_geod_area_m2"], 1e-6)


def check_length(case: dict[str, Any]) -> None:
    metres = geo.length_m(case["input"]["geojson"])
    _close(metres, _metres(case["expected"], case["units"]))
    if "wgs84_reference" in case:
        feet = case["wgs84_reference"]["pyproj_geod_length_feet"]
        _close(metres, _metres(feet, "feet"), 1e-5)


def check_distance(case: dict[str, Any]) -> None:
    metres = geo.distance_m(case["input"]["from"], case["input"]["to"])
    if case["expected"] == 0:
        assert metres < 500  # turf rounds to whole kilometres
        return
    _close(metres, _metres(case["expected"], case["units"]))
    if "wgs84_reference" in case:
        _close(metres, case["wgs84_reference"]["pyproj_geod_km"] * 1000, 1e-9)


def check_along(case: dict[str, Any]) -> None:
    travelled = _metres(case["args"]["distance"], case["units"])
    point = geo.along(case["input"]["line"], travelled)
    assert _apart_m(point, case["expected"]) <= SPHERE_VS_ELLIPSOID * travelled + 1e-6


def check_bbox(case: dict[str, Any]) -> None:
    expected = [float(v) for v in case["expected"]]  # "Infinity" strings become inf
    assert geo.bbox(case["input"]["geojson"]) == expected


def check_bearing(case: dict[str, Any]) -> None:
    start, end = case["input"]["start"], case["input"]["end"]
    final = case["args"]["final"]
    degrees = geo.bearing(start, end, final=final)
    assert -180 <= degrees <= 180
    assert degrees == pytest.approx(case["expected"], abs=0.1)
    reference = case.get("wgs84_reference", {})
    key = "pyproj_geod_back_azimuth_plus_180" if final else "pyproj_geod_fwd_azimuth"
    if key in reference:
        assert degrees == pytest.approx(reference[key], abs=1e-4)


def check_centroid(case: dict[str, Any]) -> None:
    point = geo.vertex_mean(case["input"]["geojson"])
    assert list(point.coords[0]) == pytest.approx(case["expected"]["coordinates"], abs=1e-12)


def check_destination(case: dict[str, Any]) -> None:
    args = case["args"]
    travelled = _metres(args["distance"], args["units"])
    point = geo.destination(case["input"]["origin"], travelled, args["bearing"])
    expected = case["expected"]["coordinates"]
    assert _apart_m(point, {"type": "Point", "coordinates": expected[:2]}) <= (
        SPHERE_VS_ELLIPSOID * travelled
    )
    if len(expected) == 3:
        assert point.z == expected[2]
    reference = case["wgs84_reference"]["pyproj_geod_fwd"]
    assert [point.x, point.y] == pytest.approx(reference, abs=1e-6)


def check_midpoint(case: dict[str, Any]) -> None:
    a, b = case["input"]["point1"], case["input"]["point2"]
    mid = geo.midpoint(a, b)
    assert geo.distance_m(a, mid) == pytest.approx(geo.distance_m(b, mid), rel=1e-9)
    half = geo.distance_m(a, b) / 2
    assert _apart_m(mid, case["expected"]) <= SPHERE_VS_ELLIPSOID * half


def check_point_in_polygon(case: dict[str, Any]) -> None:
    inside = geo.point_in_polygon(
        case["input"]["point"],
        case["input"]["polygon"],
        ignore_boundary=case["args"]["ignoreBoundary"],
    )
    assert inside is case["expected"]


def _check_snap(case: dict[str, Any], expected: dict[str, Any], hit: Any, line: Any) -> None:
    units = case["units"]
    props = expected.get("properties", {})
    # Six decimals of the unit is turf's rounding; allow for it on top of the 0.6 %.
    # Sphere and ellipsoid put the foot of a perpendicular a few mm apart; turf rounds too.
    rounding = max(_metres(1e-6, units), 0.02)
    point_metres = _metres(props.get("pointDistance", 0), units)
    if "geometry" in expected:
        shift = _apart_m(hit.point, expected["geometry"])
        assert shift <= SPHERE_VS_ELLIPSOID * max(point_metres, hit.distance_m) + 0.5
    for key, actual in (
        ("totalDistance", hit.location_m),
        ("pointDistance", hit.distance_m),
        ("lineDistance", hit.location_m - _part_offset_m(line, hit.part)),
    ):
        if key in props:
            wanted = _metres(props[key], units)
            assert actual == pytest.approx(wanted, rel=SPHERE_VS_ELLIPSOID, abs=rounding)
    if "pointDistance_gt" in props:
        assert hit.distance_m > _metres(props["pointDistance_gt"], units)
    if "lineStringIndex" in props:
        assert hit.part == props["lineStringIndex"]
    if "segmentIndex" in props:
        assert hit.segment == props["segmentIndex"]


def _part_offset_m(line: Any, part: int) -> float:
    geometry = geo.to_shapely(line)
    parts = list(getattr(geometry, "geoms", [geometry]))
    return sum(geo.length_m(p) for p in parts[:part])


def check_nearest_point_on_line(case: dict[str, Any]) -> None:
    line, expected = case["input"]["line"], case["expected"]
    if "point" in case["input"]:
        _check_snap(case, expected, geo.nearest_point_on_line(line, case["input"]["point"]), line)
        return
    units = case["units"]
    for i, point in enumerate(case["input"]["points"]):
        hit = geo.nearest_point_on_line(line, point)
        assert hit.distance_m <= _metres(expected.get("max_shift_miles", 1e-6), "miles")
        if "coordinates" in expected:
            assert list(hit.point.coords[0]) == pytest.approx(expected["coordinates"][i], abs=1e-6)
        wanted = _metres(expected["totalDistance"][i], units)
        assert hit.location_m == pytest.approx(wanted, rel=SPHERE_VS_ELLIPSOID, abs=1.0)


def check_point_to_line_distance(case: dict[str, Any]) -> None:
    metres = geo.point_to_line_distance_m(case["input"]["point"], case["input"]["line"])
    if case["id"] == "pointToLineDistance__issue-2270-a":
        assert metres == pytest.approx(3.4, abs=0.05)
        return
    _close(metres, _metres(case["expected"], case["units"]))


CHECKS: dict[str, Callable[[dict[str, Any]], None]] = {
    "area": check_area,
    "length": check_length,
    "distance": check_distance,
    "along": check_along,
    "bbox": check_bbox,
    "bearing": check_bearing,
    "centroid": check_centroid,
    "destination": check_destination,
    "midpoint": check_midpoint,
    "booleanPointInPolygon": check_point_in_polygon,
    "nearestPointOnLine": check_nearest_point_on_line,
    "pointToLineDistance": check_point_to_line_distance,
}


def test_every_fixture_is_listed_and_checked() -> None:
    files = {p.name for p in FIXTURES.glob("*__*.json")}
    assert files == {entry["file"] for entry in CASES}
    assert len(files) == 190
    assert {entry["function"] for entry in CASES} == set(CHECKS)


@pytest.mark.parametrize("entry", CASES, ids=[entry["file"][:-5] for entry in CASES])
def test_turf_case(entry: dict[str, Any]) -> None:
    case = json.loads((FIXTURES / entry["file"]).read_text())
    CHECKS[case["function"]](case)
