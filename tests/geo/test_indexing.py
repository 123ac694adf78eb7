"""STRtree joins and h3 helpers."""

from __future__ import annotations

import h3
import numpy as np
import pytest
import shapely

from geomint import geo


def test_points_within_joins_arrays_and_collections() -> None:
    points = np.array([[0.5, 0.5], [1.5, 0.5], [5, 5], [1.0, 0.5]])
    polygons = geo.feature_collection([shapely.box(0, 0, 1, 1), shapely.box(1, 0, 2, 1)])
    matches = geo.points_within(points, polygons)
    assert list(zip(matches.points.tolist(), matches.polygons.tolist(), strict=True)) == [
        (0, 0), (1, 1), (3, 0), (3, 1),
    ]  # fmt: skip
    as_features = geo.feature_collection([shapely.Point(p) for p in points])
    again = geo.points_within(as_features, polygons)
    assert again.points.tolist() == matches.points.tolist()


def test_points_within_scales_without_pairwise_loops() -> None:
    rng = np.random.default_rng(1)
    points = rng.uniform([0, 0], [10, 10], size=(20_000, 2))
    cells = [shapely.box(x, y, x + 1, y + 1) for x in range(10) for y in range(10)]
    matches = geo.points_within(points, cells)
    assert len(matches.points) == 20_000
    expected = (points[:, 0] // 1 * 10 + points[:, 1] // 1).astype(int)
    assert np.array_equal(matches.polygons, expected)


def test_nearest_reports_metres() -> None:
    targets = [
        shapely.Point(10, 60),
        {"type": "LineString", "coordinates": [[10.5, 60], [10.5, 61]]},
    ]
    result = geo.nearest([[10, 60.01], [10.502, 60.5], [10.3, 60.2]], targets)
    assert result.points.tolist() == [0, 1, 2]
    assert result.targets.tolist() == [0, 1, 1]
    exact = geo.distance_m(shapely.Point(10, 60), shapely.Point(10, 60.01))
    assert result.distance_m[0] == pytest.approx(exact, rel=1e-9)
    assert result.distance_m[1] == pytest.approx(0.002 * 111_320 * 0.4924, rel=0.01)


def test_nearest_with_no_points_is_empty() -> None:
    result = geo.nearest(np.zeros((0, 2)), [shapely.Point(0, 0)])
    assert len(result.points) == len(result.targets) == len(result.distance_m) == 0


def test_h3_helpers_use_geojson_order() -> None:
    cells = geo.cells_for_points([[4.8945, 52.3676]], 9)
    assert cells == [h3.latlng_to_cell(52.3676, 4.8945, 9)]
    ring = geo.cell_boundary(cells[0])["coordinates"][0]
    assert ring[0] == ring[-1]
    assert geo.point_in_polygon(shapely.Point(4.8945, 52.3676), geo.cell_boundary(cells[0]))
    area = shapely.box(4.85, 52.35, 4.95, 52.40)
    inside = geo.cells_for_polygon(geo.to_feature(area), 8)
    assert h3.latlng_to_cell(52.375, 4.9, 8) in inside
    assert all(area.contains(shapely.Point(h3.cell_to_latlng(c)[::-1])) for c in inside)


def test_points_within_by_coordinates_agrees_with_an_strtree_join() -> None:
    # The coordinate path (no shapely object per point) must give exactly the pairs of the
    # plain STRtree `covers` join, boundary points, overlaps and holes included.
    rng = np.random.default_rng(3)
    xy = rng.uniform(0, 10, (5_000, 2)).round(1)  # many points exactly on box edges
    polygons = [shapely.box(x, y, x + w, y + h) for x, y, w, h in rng.uniform(0, 4, (40, 4))]
    polygons.append(shapely.box(1, 1, 9, 9).difference(shapely.box(3, 3, 7, 7)))  # a hole
    matches = geo.points_within(xy, polygons)
    tree = shapely.STRtree(shapely.points(xy))
    polygon_ids, point_ids = tree.query(polygons, predicate="covers")
    expected = sorted(zip(point_ids.tolist(), polygon_ids.tolist(), strict=True))
    got = list(zip(matches.points.tolist(), matches.polygons.tolist(), strict=True))
    assert got == expected
    assert len(got) > 1_000
