"""DBSCAN in metres over mixed incidents, with ids stable across calls."""

from __future__ import annotations

import pytest

from geomint import geo


def _incident(key: str, geometry: dict[str, object], magnitude: int = 1) -> dict[str, object]:
    return {
        "type": "Feature",
        "id": key,
        "properties": {"magnitude": magnitude},
        "geometry": geometry,
    }


def _at(lng: float, lat: float) -> dict[str, object]:
    return {"type": "Point", "coordinates": [lng, lat]}


# Two groups in Oslo (60 N, where a degree of longitude is ~55 km) and one loner.
JAM = _incident("jam", {"type": "LineString", "coordinates": [[10.70, 59.91], [10.72, 59.91]]})
NEAR_JAM = _incident("a", _at(10.715, 59.9112))  # ~130 m north of the jam's middle
EAST = [_incident(f"e{i}", _at(10.80 + i * 0.001, 59.95)) for i in range(3)]  # ~56 m apart
LONER = _incident("loner", _at(11.5, 60.5))
INCIDENTS = [JAM, NEAR_JAM, *EAST, LONER]


def test_points_join_a_line_they_are_near() -> None:
    result = geo.cluster(INCIDENTS, eps_m=200, min_members=2)
    assert [c.members for c in result.clusters] == [(2, 3, 4), (0, 1)]
    assert result.noise == (5,)
    assert result.clusters[1].keys == ("jam", "a")


def test_eps_is_metres_not_degrees() -> None:
    # 56 m apart: together at 60 m, apart at 50 m.
    assert len(geo.cluster(EAST, eps_m=60).clusters) == 1
    assert geo.cluster(EAST, eps_m=50).noise == (0, 1, 2)


def test_max_clusters_and_pre_filter() -> None:
    result = geo.cluster(INCIDENTS, eps_m=200, max_clusters=1)
    assert [c.members for c in result.clusters] == [(2, 3, 4)]
    assert set(result.noise) == {0, 1, 5}
    filtered = geo.cluster(
        geo.feature_collection(INCIDENTS),
        eps_m=200,
        pre_filter=lambda f: f["properties"]["magnitude"] >= 1 and f["id"] != "a",
    )
    assert filtered.skipped == (1,)
    assert [c.members for c in filtered.clusters] == [(2, 3, 4)]


def test_ids_stay_stable_when_clusters_persist() -> None:
    first = geo.cluster(INCIDENTS, eps_m=200)
    ids = {c.keys: c.id for c in first.clusters}
    # The east group loses a member and a new cluster appears; the order of inputs changes.
    newcomers = [_incident(f"n{i}", _at(11.0, 60.0 + i * 0.0005)) for i in range(4)]
    later = geo.cluster([*newcomers, NEAR_JAM, JAM, *EAST[:2]], eps_m=200, previous=first)
    by_keys = {frozenset(c.keys): c.id for c in later.clusters}
    assert by_keys[frozenset({"jam", "a"})] == ids[("jam", "a")]
    assert by_keys[frozenset({"e0", "e1"})] == ids[("e0", "e1", "e2")]
    assert by_keys[frozenset(f"n{i}" for i in range(4))] == max(ids.values()) + 1


def test_cluster_summary_fields() -> None:
    east = geo.cluster(EAST, eps_m=100).clusters[0]
    assert east.centroid == pytest.approx((10.801, 59.95))
    assert east.bbox == pytest.approx((10.80, 59.95, 10.802, 59.95))
