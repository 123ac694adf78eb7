"""Buffers in metres, overlays over features and collections, repair and conversion."""

from __future__ import annotations

import numpy as np
import pyproj
import pytest
import shapely

from geomint import geo

SQUARE = {"type": "Polygon", "coordinates": [[[0, 0], [2, 0], [2, 2], [0, 2], [0, 0]]]}
RIGHT = {"type": "Polygon", "coordinates": [[[1, 0], [3, 0], [3, 2], [1, 2], [1, 0]]]}


def test_buffer_m_of_a_line_is_wide_in_metres_near_the_pole() -> None:
    line = {"type": "LineString", "coordinates": [[10, 78], [11, 78]]}
    band = geo.buffer_m(line, 100)
    middle = geo.along(line, geo.length_m(line) / 2)
    north = geo.destination(middle, 100, 0)
    assert geo.distance_m(north, band.exterior) < 0.5


def test_negative_buffer_shrinks_a_polygon() -> None:
    assert geo.area_m2(geo.buffer_m(SQUARE, -1000)) < geo.area_m2(SQUARE)


def test_overlays_accept_features_and_collections() -> None:
    collection = geo.feature_collection([SQUARE, RIGHT])
    assert geo.union(collection).area == pytest.approx(6)
    assert geo.union(geo.to_feature(SQUARE), RIGHT).area == pytest.approx(6)
    assert geo.intersection(geo.to_feature(SQUARE), RIGHT).area == pytest.approx(2)
    assert geo.difference(collection, RIGHT).area == pytest.approx(2)
    assert geo.difference(SQUARE, collection).is_empty
    assert geo.union().is_empty


def test_make_valid_repairs_a_bow_tie_and_keeps_valid_input() -> None:
    bow_tie = {"type": "Polygon", "coordinates": [[[0, 0], [2, 2], [2, 0], [0, 2], [0, 0]]]}
    fixed = geo.make_valid(bow_tie)
    assert fixed.is_valid
    assert fixed.area == pytest.approx(2)
    box = shapely.box(0, 0, 1, 1)
    assert geo.make_valid(box) is box


def test_feature_round_trip_keeps_properties() -> None:
    feature = geo.to_feature(shapely.Point(4.9, 52.4), {"name": "Dam"})
    assert feature == {
        "type": "Feature",
        "properties": {"name": "Dam"},
        "geometry": {"type": "Point", "coordinates": [4.9, 52.4]},
    }
    assert geo.to_feature(feature)["properties"] == {"name": "Dam"}
    assert geo.to_shapely(feature).equals(shapely.Point(4.9, 52.4))
    null = {"type": "Feature", "properties": {}, "geometry": None}
    assert geo.to_shapely(null).is_empty


@pytest.mark.parametrize(
    ("lon", "lat"), [(13.4, 52.5), (-78.5, -0.2), (179.999, 10.0), (25.0, 89.0)]
)
def test_point_buffers_put_every_vertex_at_the_distance(lon: float, lat: float) -> None:
    # Points take the direct geodesic circle (89 N is past its range: the projection path).
    disc = geo.buffer_m(shapely.Point(lon, lat), 750)
    ring = shapely.get_coordinates(disc.exterior)
    _, _, dist = pyproj.Geod(ellps="WGS84").inv(
        np.full(len(ring), lon), np.full(len(ring), lat), ring[:, 0], ring[:, 1]
    )
    assert np.allclose(dist, 750, rtol=1e-3)
    assert disc.is_valid
    assert shapely.is_ccw(disc.exterior)
