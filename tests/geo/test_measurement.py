"""Measurement agrees with pyproj.Geod and keeps its geometric promises on random inputs."""

from __future__ import annotations

import math

import numpy as np
import pyproj
import pytest
import shapely
from hypothesis import given, settings
from hypothesis import strategies as st

from geomint import geo

GEOD = pyproj.Geod(ellps="WGS84")
lngs = st.floats(-179.9, 179.9)
lats = st.floats(-84, 84)
points = st.tuples(lngs, lats)
FAST = settings(max_examples=40, deadline=None)


def _point(xy: tuple[float, float]) -> dict[str, object]:
    return {"type": "Point", "coordinates": list(xy)}


@FAST
@given(points, points)
def test_distance_is_symmetric_and_matches_pyproj(
    a: tuple[float, float], b: tuple[float, float]
) -> None:
    there, back = geo.distance_m(_point(a), _point(b)), geo.distance_m(_point(b), _point(a))
    assert there == pytest.approx(back, rel=1e-9, abs=1e-6)
    assert there == pytest.approx(GEOD.inv(*a, *b)[2], rel=1e-12, abs=1e-6)


@FAST
@given(points, st.floats(1, 2_000_000), st.floats(-180, 180))
def test_destination_round_trips_through_distance_and_bearing(
    start: tuple[float, float], metres: float, heading: float
) -> None:
    end = geo.destination(_point(start), metres, heading)
    assert geo.distance_m(_point(start), end) == pytest.approx(metres, rel=1e-9, abs=1e-6)
    if metres > 10:
        turn = (geo.bearing(_point(start), end) - heading + 180) % 360 - 180
        assert abs(turn) < 1e-6


@FAST
@given(st.lists(points, min_size=2, max_size=6), st.floats(0, 1))
def test_along_then_snap_gives_back_the_distance(
    coords: list[tuple[float, float]], share: float
) -> None:
    line = {"type": "LineString", "coordinates": [list(c) for c in coords]}
    total = geo.length_m(line)
    travelled = share * total
    point = geo.along(line, travelled)
    hit = geo.nearest_point_on_line(line, point)
    assert hit.distance_m < 1.0
    if total < 3_000_000:  # a long zig-zag line may pass its own earlier stretches
        assert geo.along(line, hit.location_m).distance(point) < 1e-5


@FAST
@given(st.floats(-70, 70), st.floats(-170, 170), st.floats(0.01, 2), st.floats(0.2, 5))
def test_area_of_a_polygon_cut_in_two_adds_up(
    lat: float, lng: float, size: float, stretch: float
) -> None:
    # Edges are geodesics, so the cut must be one too: a diagonal of the quadrilateral.
    a, b = (lng, lat), (lng + size * stretch, lat)
    c, d = (lng + size * stretch, lat + size), (lng, lat + size)
    whole = shapely.Polygon([a, b, c, d])
    halves = shapely.Polygon([a, b, c]), shapely.Polygon([a, c, d])
    assert sum(geo.area_m2(h) for h in halves) == pytest.approx(geo.area_m2(whole), rel=1e-9)


@pytest.mark.parametrize("lat", [0, 20, 40, 60, 70, 80])
@pytest.mark.parametrize("radius", [50, 500, 5_000])
def test_buffer_m_is_a_true_circle_at_any_latitude(lat: float, radius: float) -> None:
    disc = geo.buffer_m({"type": "Point", "coordinates": [12.5, lat]}, radius)
    assert geo.area_m2(disc) == pytest.approx(math.pi * radius**2, rel=0.005)
    east = geo.destination(_point((12.5, lat)), radius, 90)
    assert geo.distance_m(east, disc.exterior) < radius * 0.002


def test_area_and_length_match_pyproj_on_random_polygons() -> None:
    rng = np.random.default_rng(7)
    for _ in range(20):
        centre = rng.uniform([-170, -70], [170, 70])
        polygon = shapely.Point(centre).buffer(rng.uniform(0.01, 3), quad_segs=4)
        if rng.random() < 0.5:
            polygon = polygon.reverse()  # orientation must not change the answer
        area, perimeter = GEOD.geometry_area_perimeter(polygon)
        assert geo.area_m2(polygon) == pytest.approx(abs(area), rel=1e-9)
        assert geo.length_m(polygon) == pytest.approx(perimeter, rel=1e-9)


def test_area_subtracts_holes_and_sums_collections() -> None:
    outer, hole = shapely.box(0, 0, 1, 1), shapely.box(0.25, 0.25, 0.75, 0.75)
    with_hole = shapely.Polygon(outer.exterior, [hole.exterior])
    assert geo.area_m2(with_hole) == pytest.approx(geo.area_m2(outer) - geo.area_m2(hole))
    collection = geo.feature_collection([outer, shapely.box(2, 0, 3, 1), shapely.Point(5, 5)])
    assert geo.area_m2(collection) == pytest.approx(
        geo.area_m2(outer) + geo.area_m2(shapely.box(2, 0, 3, 1))
    )


def test_midpoint_is_equidistant_and_on_the_geodesic() -> None:
    a, b = _point((-75, 45)), _point((20, 60))
    mid = geo.midpoint(a, b)
    half = geo.distance_m(a, b) / 2
    assert geo.distance_m(a, mid) == pytest.approx(half, rel=1e-9)
    assert geo.distance_m(b, mid) == pytest.approx(half, rel=1e-9)


def test_bearing_is_in_turf_range() -> None:
    assert geo.bearing(_point((10, 0)), _point((0, 0))) == pytest.approx(-90)
    assert geo.bearing(_point((0, 0)), _point((0, -1))) == pytest.approx(180)


def test_centroid_is_area_weighted_while_vertex_mean_is_not() -> None:
    # Many vertices bunched in one corner pull the vertex mean but not the centroid.
    ring = [(0, 0), (0.1, 0), (0.2, 0), (0.3, 0), (0.4, 0), (2, 0), (2, 2), (0, 2), (0, 0)]
    polygon = shapely.Polygon(ring)
    assert geo.centroid(polygon).distance(shapely.Point(1, 1)) < 0.01
    assert geo.vertex_mean(polygon).distance(shapely.Point(1, 1)) > 0.2


def test_distance_between_non_points_uses_the_closest_parts() -> None:
    line = {"type": "LineString", "coordinates": [[0, 0], [0, 1]]}
    point = _point((0.01, 0.5))
    assert geo.distance_m(line, point) == pytest.approx(
        geo.point_to_line_distance_m(point, line), rel=1e-4
    )
    assert geo.distance_m(shapely.box(0, 0, 1, 1), shapely.box(0.5, 0.5, 2, 2)) == 0


def test_nearest_point_on_line_follows_long_geodesics() -> None:
    # A 60-degree segment along a meridian-crossing great circle, far from straight in degrees.
    line = {"type": "LineString", "coordinates": [[-60, 50], [60, 50]]}
    top = GEOD.npts(-60, 50, 60, 50, 1)[0]
    hit = geo.nearest_point_on_line(line, _point(top))
    assert hit.distance_m < 1.0
    assert hit.location_m == pytest.approx(geo.length_m(line) / 2, rel=1e-4)
