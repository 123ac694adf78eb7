"""DBSCAN in metres over mixed incidents, with ids stable across calls."""

from __future__ import annotations

import math

import pytest

from geomint import geo
from geomint.sandbox import to_json_safe


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


def test_every_cluster_has_an_area_that_holds_its_members() -> None:
    result = geo.cluster(INCIDENTS, eps_m=200)
    east, jam = result.clusters
    assert east.hull.geom_type == jam.hull.geom_type == "Polygon"
    # Three points in a row have a line for a hull: the area is 100 m (eps_m / 2) round it.
    assert geo.area_m2(east.hull) == pytest.approx(2 * 112 * 100 + math.pi * 100**2, rel=0.02)
    for group in result.clusters:
        members = [geo.to_shapely(INCIDENTS[i]) for i in group.members]
        assert all(group.hull.buffer(1e-9).contains(m) for m in members)


def test_a_clustering_reads_back_from_its_json_form() -> None:
    result = geo.cluster(INCIDENTS, eps_m=200)
    as_json = to_json_safe(result)  # what the sandbox returns for one
    back = geo.Clustering.from_json(as_json)
    assert [(c.id, c.members, c.keys) for c in back.clusters] == [
        (c.id, c.members, c.keys) for c in result.clusters
    ]
    assert back.clusters[0].hull.equals_exact(result.clusters[0].hull, 1e-9)
    assert (back.noise, back.skipped) == (result.noise, result.skipped)


def test_previous_may_be_the_json_form_and_ids_can_be_matched_later() -> None:
    first = to_json_safe(geo.cluster(INCIDENTS, eps_m=200))
    newcomers = [_incident(f"n{i}", _at(11.0, 60.0 + i * 0.0005)) for i in range(4)]
    moved = [*newcomers, *INCIDENTS]
    later = geo.cluster(moved, eps_m=200, previous=first)
    assert [(c.id, c.keys) for c in later.clusters] == [
        (2, ("n0", "n1", "n2", "n3")),
        (0, ("e0", "e1", "e2")),
        (1, ("jam", "a")),
    ]
    # The same ids when a clustering made without previous is matched afterwards.
    unmatched = geo.cluster(moved, eps_m=200)
    assert [c.id for c in unmatched.clusters] == [0, 1, 2]
    assert unmatched.with_ids_from(first) == later
    assert later.with_ids_from(None).clusters[0].id == 0
