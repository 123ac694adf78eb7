"""Cluster incidents (mixed Points and LineStrings) by distance in metres, DBSCAN style.

Distances are between whole geometries (a point near any part of a jam counts), taken in
an azimuthal equidistant projection centred on the incidents, so ``eps_m`` means metres
over a city or a region. Cluster ids stay the same across calls when a cluster persists,
so a map can animate changes rather than recolour everything.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Hashable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import shapely

from geomint.geo._geodesy import LocalProjection
from geomint.geo.errors import GeoInputError, warn_if_degrees
from geomint.geo.indexing import as_geometries

__all__ = ["Cluster", "Clustering", "cluster"]

Feature = Mapping[str, Any]


@dataclass(frozen=True, kw_only=True)
class Cluster:
    """One cluster of incidents.

    Attributes:
        id: A stable id: the id of the matching cluster in ``previous`` when one overlaps.
        members: Indices of the member incidents in the list passed to :func:`cluster`.
        keys: The members' identities (the Feature ``id``, else ``properties["id"]``, else
            the index), used to match clusters across calls.
        centroid: ``(lng, lat)`` of the mean of the members' representative points.
        bbox: ``[minx, miny, maxx, maxy]`` of the members.
    """

    id: int
    members: tuple[int, ...]
    keys: tuple[Hashable, ...]
    centroid: tuple[float, float]
    bbox: tuple[float, float, float, float]


@dataclass(frozen=True, kw_only=True)
class Clustering:
    """The result of :func:`cluster`.

    Attributes:
        clusters: The clusters, largest first.
        noise: Indices of incidents in no cluster (too isolated, or beyond ``max_clusters``).
        skipped: Indices that ``pre_filter`` left out.
    """

    clusters: tuple[Cluster, ...]
    noise: tuple[int, ...]
    skipped: tuple[int, ...]


def _key(feature: Any, index: int) -> Hashable:
    if isinstance(feature, Mapping):
        if feature.get("id") is not None:
            return feature["id"]  # type: ignore[no-any-return]
        props = feature.get("properties") or {}
        if isinstance(props, Mapping) and props.get("id") is not None:
            return props["id"]  # type: ignore[no-any-return]
    return index


def _dbscan(neighbours: list[np.ndarray], core: np.ndarray) -> np.ndarray:
    # Hand-written DBSCAN: scikit-learn is not a dependency, and with neighbours already
    # found by one STRtree query the expansion is a plain breadth-first search.
    labels = np.full(len(neighbours), -1)
    next_label = 0
    for seed in np.flatnonzero(core):
        if labels[seed] != -1:
            continue
        labels[seed] = next_label
        queue = deque([seed])
        while queue:
            here = queue.popleft()
            for other in neighbours[here]:
                if labels[other] == -1:
                    labels[other] = next_label
                    if core[other]:
                        queue.append(other)
        next_label += 1
    return labels


def _stable_ids(groups: list[tuple[Hashable, ...]], previous: Clustering | None) -> list[int]:
    if previous is None or not previous.clusters:
        return list(range(len(groups)))
    candidates = []
    for new_index, keys in enumerate(groups):
        mine = set(keys)
        for old in previous.clusters:
            shared = len(mine & set(old.keys))
            if shared:
                jaccard = shared / len(mine | set(old.keys))
                candidates.append((-jaccard, -shared, new_index, old.id))
    ids: list[int | None] = [None] * len(groups)
    taken: set[int] = set()
    for _, _, new_index, old_id in sorted(candidates):
        if ids[new_index] is None and old_id not in taken:
            ids[new_index] = old_id
            taken.add(old_id)
    fresh = max(c.id for c in previous.clusters) + 1
    result = []
    for assigned in ids:
        if assigned is None:
            result.append(fresh)
            fresh += 1
        else:
            result.append(assigned)
    return result


def cluster(
    incidents: Sequence[Any] | Mapping[str, Any],
    *,
    eps_m: float = 250.0,
    min_members: int = 2,
    max_clusters: int | None = None,
    pre_filter: Callable[[Any], bool] | None = None,
    previous: Clustering | None = None,
) -> Clustering:
    """Group incidents that lie within ``eps_m`` metres of each other (DBSCAN).

    An incident with at least ``min_members`` incidents (itself included) within
    ``eps_m`` is a core; clusters grow from cores through their neighbours.

    Args:
        incidents: Features (Points, LineStrings, any geometry), geometries, or a
            FeatureCollection, in lon/lat.
        eps_m: The neighbourhood radius in metres, between geometries' nearest points.
        min_members: Incidents within ``eps_m`` (itself included) that make a core.
        max_clusters: Keep only this many clusters, the largest; the rest become noise.
        pre_filter: Cluster only the incidents for which this returns true (e.g.
            ``lambda f: f["properties"]["magnitude"] >= 3``); indices stay those of
            ``incidents``.
        previous: An earlier result; a cluster sharing members with one of its clusters
            keeps that cluster's id (the best overlap wins, each id used once).

    Returns:
        A :class:`Clustering` of clusters (largest first), noise and skipped indices.

    Raises:
        GeoInputError: When the incidents are not geometries, or ``eps_m``,
            ``min_members`` or ``max_clusters`` are out of range.

    Warns:
        UserWarning: When ``eps_m`` is so small that it looks like degrees.

    Examples:
        >>> pts = [shapely.Point(4.9, 52.37), shapely.Point(4.9005, 52.37), shapely.Point(5.5, 52)]
        >>> result = cluster(pts, eps_m=100)
        >>> [c.members for c in result.clusters], result.noise
        ([(0, 1)], (2,))
    """
    if not eps_m > 0:
        raise GeoInputError(f"got eps_m={eps_m!r}; pass a radius in metres > 0")
    warn_if_degrees("cluster", "eps_m", eps_m)
    if min_members < 1:
        raise GeoInputError(f"got min_members={min_members!r}; pass 1 or more")
    if max_clusters is not None and max_clusters < 0:
        raise GeoInputError(f"got max_clusters={max_clusters!r}; pass 0 or more, or None")
    if isinstance(incidents, Mapping):
        if incidents.get("type") != "FeatureCollection":
            raise GeoInputError(
                f"got a single {incidents.get('type')!r}; pass a list of incident Features "
                "or a FeatureCollection"
            )
        incidents = list(incidents["features"])
    items = list(incidents)
    chosen = [i for i, f in enumerate(items) if pre_filter is None or pre_filter(f)]
    skipped = tuple(i for i in range(len(items)) if pre_filter is not None and i not in set(chosen))
    if not chosen:
        return Clustering(clusters=(), noise=(), skipped=skipped)
    shapes = as_geometries([items[i] for i in chosen], "incidents")
    projection = LocalProjection.around(shapely.GeometryCollection(list(shapes)))
    metric = np.array([projection.to_metres(s) for s in shapes], dtype=object)
    pairs = shapely.STRtree(metric).query(metric, predicate="dwithin", distance=eps_m)
    order = np.argsort(pairs[0], kind="stable")
    sources, targets = pairs[0][order], pairs[1][order]
    splits = np.searchsorted(sources, np.arange(1, len(chosen)))
    neighbours = np.split(targets, splits)
    core = np.array([len(n) >= min_members for n in neighbours])
    labels = _dbscan(neighbours, core)

    groups = [np.flatnonzero(labels == label) for label in range(labels.max() + 1)]
    groups.sort(key=lambda g: (-len(g), int(g[0])))
    kept = groups if max_clusters is None else groups[:max_clusters]
    member_lists = [tuple(chosen[j] for j in g) for g in kept]
    keys = [tuple(_key(items[i], i) for i in members) for members in member_lists]
    ids = _stable_ids(keys, previous)
    clusters = []
    for cid, members, group, member_keys in zip(ids, member_lists, kept, keys, strict=True):
        points = shapely.point_on_surface(metric[group])
        mean = shapely.get_coordinates(points).mean(axis=0, keepdims=True)
        lng, lat = projection.coords_to_lonlat(mean)[0]
        minx, miny, maxx, maxy = shapely.total_bounds(shapes[group])
        clusters.append(
            Cluster(
                id=cid,
                members=members,
                keys=member_keys,
                centroid=(float(lng), float(lat)),
                bbox=(float(minx), float(miny), float(maxx), float(maxy)),
            )
        )
    clustered = {i for members in member_lists for i in members}
    noise = tuple(i for i in chosen if i not in clustered)
    return Clustering(clusters=tuple(clusters), noise=noise, skipped=skipped)
