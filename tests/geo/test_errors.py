"""Every message a wrong input produces, and the degrees-as-metres warning."""

from __future__ import annotations

import re

import numpy as np
import pytest
import shapely

from geomint import geo

POINT = {"type": "Point", "coordinates": [4.9, 52.37]}
_CLUSTER = {"id": 0, "members": [0], "keys": [0], "centroid": [4.9, 52.37], "bbox": [4.9] * 4}
LINE = {"type": "LineString", "coordinates": [[4.9, 52.37], [4.91, 52.38]]}


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (
            lambda: geo.area_m2([[4.9, 52.37], [4.91, 52.38]]),
            "got a list of coordinates; pass the Feature or its geometry",
        ),
        (
            lambda: geo.distance_m([4.9, 52.37], POINT),
            "got a bare coordinate pair; pass the Feature",
        ),
        (
            lambda: geo.length_m("LINESTRING (0 0, 1 1)"),
            "got a str; pass the Feature or its geometry",
        ),
        (
            lambda: geo.to_shapely({"type": "Circle", "radius": 3}),
            "got a dict with type='Circle' (keys: radius, type); pass a GeoJSON Feature",
        ),
        (
            lambda: geo.to_shapely({"type": "FeatureCollection"}),
            "got a FeatureCollection without a 'features' list",
        ),
        (
            lambda: geo.to_shapely({"type": "Polygon", "coordinates": [[[0, 0], [1, 1]]]}),
            "ring 0 of the Polygon has 2 positions; a linear ring needs at least 4",
        ),
        (
            lambda: geo.to_shapely({"type": "LineString", "coordinates": "oops"}),
            "got a LineString whose coordinates cannot be read",
        ),
        (
            lambda: geo.length_m(
                {"type": "LineString", "coordinates": [[0, 0], [500000, 6000000]]}
            ),
            "the geometry has latitude 6000000.0 at position [500000.0, 6000000.0], outside "
            "-90..90; pass longitude/latitude in degrees (WGS84), not projected metres",
        ),
        (lambda: geo.distance_m(shapely.Point(), POINT), "distance_m() got an empty geometry"),
        (lambda: geo.bearing(LINE, POINT), "the start point must be a Point; got a LineString"),
        (
            lambda: geo.along(POINT, 10),
            "along() needs a LineString or MultiLineString; got a Point",
        ),
        (lambda: geo.along(LINE, -1), "along() got distance_m=-1; pass metres >= 0"),
        (lambda: geo.centroid(shapely.Polygon()), "centroid() got an empty geometry"),
        (lambda: geo.vertex_mean(shapely.Polygon()), "vertex_mean() got an empty geometry"),
        (
            lambda: geo.point_in_polygon(LINE, shapely.box(0, 0, 1, 1)),
            "point_in_polygon() needs a Point first; got a LineString",
        ),
        (
            lambda: geo.point_in_polygon(POINT, LINE),
            "point_in_polygon() needs a Polygon or MultiPolygon second; got a LineString",
        ),
        (lambda: geo.buffer_m(shapely.Point(), 10), "buffer_m() got an empty geometry"),
        (lambda: geo.feature_collection(POINT), "got a single Point; pass a list of Features"),
        (
            lambda: geo.points_within(np.zeros((3, 3)), []),
            "got points as a numpy array of shape (3, 3); pass shape (N, 2)",
        ),
        (
            lambda: geo.points_within(POINT, []),
            "got a single 'Point' as points; pass a FeatureCollection",
        ),
        (
            lambda: geo.points_within(shapely.Point(0, 0), []),
            "got a Point as points; pass a FeatureCollection",
        ),
        (lambda: geo.nearest([[0, 0]], []), "nearest() got no targets"),
        (
            lambda: geo.cells_for_points([[0, 0]], 16),
            "got resolution=16; h3 resolutions are 0 to 15",
        ),
        (lambda: geo.cells_for_points([LINE], 5), "cells_for_points() needs Points"),
        (
            lambda: geo.cells_for_polygon(LINE, 5),
            "cells_for_polygon() needs a Polygon or MultiPolygon",
        ),
        (lambda: geo.cell_boundary("nope"), "got 'nope', which is not an h3 cell id"),
        (lambda: geo.route_progress_at_point(POINT, POINT), "a route must be a LineString"),
        (
            lambda: geo.coordinate_at_progress(LINE, 10_000),
            "got progress_m=10000; the route is 1304.6 m long, so pass 0 to 1304.6",
        ),
        (lambda: geo.section_bbox(LINE, [0, 1]), "got a list as section; pass a dict"),
        (
            lambda: geo.section_bbox(LINE, {"startPointIndex": 0}),
            "a section needs integer startPointIndex and endPointIndex; got 0 and None",
        ),
        (
            lambda: geo.section_bbox(LINE, {"startPointIndex": 1, "endPointIndex": 5}),
            "section indices 1..5 do not fit the route's coordinates 0..1",
        ),
        (lambda: geo.cluster([POINT], eps_m=0), "got eps_m=0; pass a radius in metres > 0"),
        (lambda: geo.cluster([POINT], min_members=0), "got min_members=0; pass 1 or more"),
        (lambda: geo.cluster([POINT], max_clusters=-1), "got max_clusters=-1; pass 0 or more"),
        (lambda: geo.cluster(POINT), "got a single 'Point'; pass a list of incident Features"),
        (
            lambda: geo.cluster([POINT], pre_filter="magnitude >= 3"),  # type: ignore[arg-type]
            "got pre_filter as a str; pass a function of one incident, e.g. "
            "lambda f: f['properties']['magnitude'] >= 3",
        ),
        (
            lambda: geo.cluster([POINT], previous={"features": []}),
            "got previous as a dict without 'clusters'; pass an earlier result of cluster() "
            "(or its JSON form), or None",
        ),
        (
            lambda: geo.Clustering.from_json([]),
            "got a list that is not a clustering; pass what cluster() returned, as JSON: "
            "{'clusters': [...], 'noise': [...], 'skipped': [...]}",
        ),
        (
            lambda: geo.Clustering.from_json({"clusters": [{"id": 0, "members": [0]}]}),
            "clusters[0] lacks keys, centroid, bbox, hull; pass what cluster() returned, unchanged",
        ),
        (
            lambda: geo.Clustering.from_json({"clusters": [], "noise": [0.5]}),
            "got noise=[0.5]; pass a list of feature indices",
        ),
        (
            lambda: geo.Clustering.from_json({"clusters": [{**_CLUSTER, "hull": POINT}]}),
            "clusters[0] has a Point for a hull; a hull is an area",
        ),
    ],
)
def test_error_messages(call: object, message: str) -> None:
    with pytest.raises(geo.GeoInputError) as raised:
        call()  # type: ignore[operator]
    assert message in str(raised.value)
    assert isinstance(raised.value, ValueError)


def test_swapped_lat_lng_is_named() -> None:
    with pytest.raises(geo.GeoInputError) as raised:
        geo.distance_m({"type": "Point", "coordinates": [52.37, 4.9]},
                       {"type": "Point", "coordinates": [4.9, 152.37]})  # fmt: skip
    assert str(raised.value) == (
        "the second geometry has latitude 152.37 at position [4.9, 152.37], outside -90..90; "
        "got lat/lng order? GeoJSON is [lng, lat], so pass [152.37, 4.9]"
    )
    with pytest.raises(geo.GeoInputError, match=re.escape("got lat/lng order?")):
        geo.cells_for_points(np.array([[4.9, 152.37]]), 9)


@pytest.mark.parametrize(
    "call",
    [
        lambda: geo.buffer_m(POINT, 0.005),
        lambda: geo.destination(POINT, 0.01, 90),
        lambda: geo.cluster([POINT, POINT], eps_m=0.002),
    ],
)
def test_degrees_passed_as_metres_warn(call: object) -> None:
    with pytest.warns(UserWarning, match=r"looks like degrees, not metres .* pass metres"):
        call()  # type: ignore[operator]


def test_degrees_warning_reads_well() -> None:
    with pytest.warns(UserWarning) as record:
        geo.buffer_m(POINT, 0.005)
    assert str(record[0].message) == (
        "buffer_m() got meters=0.005, which looks like degrees, not metres (0.005° is about "
        "557 m at the equator); pass metres, e.g. buffer_m(..., 557)"
    )
    assert record[0].filename == __file__


def test_metre_values_do_not_warn() -> None:
    geo.buffer_m(POINT, 5)
    geo.buffer_m(POINT, 0)
