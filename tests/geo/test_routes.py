"""Progress along routes and section boxes."""

from __future__ import annotations

import pytest

from geomint import geo

SECTION = {"startPointIndex": 1, "endPointIndex": 2, "sectionType": "TRAFFIC"}
COORDS = [[4.0, 52.0], [4.0, 52.1], [4.1, 52.1], [4.1, 52.2]]
ROUTE = {
    "type": "Feature",
    "properties": {"sections": [SECTION]},
    "geometry": {"type": "LineString", "coordinates": COORDS},
}


def _point(lng: float, lat: float) -> dict[str, object]:
    return {"type": "Point", "coordinates": [lng, lat]}


def test_progress_and_coordinate_are_inverse() -> None:
    total = geo.length_m(ROUTE)
    for share in (0, 0.25, 0.5, 0.9, 1):
        lng, lat = geo.coordinate_at_progress(ROUTE, share * total)
        assert geo.route_progress_at_point(ROUTE, _point(lng, lat)) == pytest.approx(
            share * total, abs=0.01
        )


def test_progress_between_is_signed() -> None:
    first, second = _point(4.001, 52.05), _point(4.1, 52.15)
    ahead = geo.progress_between(ROUTE, first, second)
    assert ahead > 0
    assert geo.progress_between(ROUTE, second, first) == pytest.approx(-ahead)


def test_section_bbox_uses_inclusive_indices() -> None:
    assert geo.section_bbox(ROUTE, SECTION) == [4.0, 52.1, 4.1, 52.1]
    whole = {"startPointIndex": 0, "endPointIndex": len(COORDS) - 1}
    assert geo.section_bbox(ROUTE, whole) == geo.bbox(ROUTE)
