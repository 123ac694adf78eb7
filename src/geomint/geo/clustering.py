"""Cluster incidents (mixed Points and LineStrings) by distance in metres, DBSCAN style.

Distances are between whole geometries (a point near any part of a jam counts), taken in
an azimuthal equidistant projection centred on the incidents, so ``eps_m`` means metres
over a city or a region. Cluster ids stay the same across calls when a cluster persists,
so a map can animate changes rather than recolour everything. A result that crossed a
boundary as JSON (the sandbox returns plain data) reads back with
:meth:`Clustering.from_json`, and serves as ``previous`` as it is.
"""

from __future__ import annotations

import json
from collections import deque
from collections.abc import Callable, Hashable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

import numpy as np
import shapely
from shapely.geometry.base import BaseGeometry

from geomint.geo._geodesy import LocalProjection
from geomint.geo.convert import to_shapely
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
        hull: The area the cluster covers, a Polygon in lon/lat: the area within
            ``eps_m / 2`` of the members' convex hull (so one member, two, or members in
            a row are an area too).
    """

    id: int
    members: tuple[int, ...]
    keys: tuple[Hashable, ...]
    centroid: tuple[float, float]
    bbox: tuple[float, float, float, float]
    hull: BaseGeometry


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

    def with_ids_from(self, previous: Clustering | Mapping[str, Any] | None) -> Clustering:
        """Return this clustering with the ids of ``previous`` kept where clusters persist.

        A cluster that shares members (by key) with a cluster of ``previous`` takes that
        cluster's id, the best overlap first (Jaccard, then shared members), each id used
        once; the others take fresh ids after the largest of ``previous``. Without
        ``previous`` the ids are 0, 1, ... in order, largest first.

        Args:
            previous: An earlier clustering, its JSON form (only each cluster's ``id`` and
                ``keys`` are read), or None.

        Raises:
            GeoInputError: When ``previous`` is neither a clustering nor its JSON form.

        Examples:
            >>> pts = [shapely.Point(4.9, 52.37), shapely.Point(4.9005, 52.37)]
            >>> first = cluster(pts, eps_m=100)
            >>> moved = replace(first, clusters=(replace(first.clusters[0], id=7),))
            >>> first.with_ids_from(moved).clusters[0].id
            7
        """
        ids = _stable_ids([c.keys for c in self.clusters], _previous_groups(previous))
        return replace(
            self,
            clusters=tuple(replace(c, id=i) for c, i in zip(self.clusters, ids, strict=True)),
        )

    @classmethod
    def from_json(cls, value: Any) -> Clustering:
        """Read a clustering back from its JSON form (what the sandbox returns for one).

        Args:
            value: ``{"clusters": [{"id", "members", "keys", "centroid", "bbox", "hull"},
                ...], "noise": [...], "skipped": [...]}``, ``hull`` as a GeoJSON geometry.

        Raises:
            GeoInputError: When ``value`` is not that shape; the message names the part.

        Examples:
            >>> pts = [shapely.Point(4.9, 52.37), shapely.Point(4.9005, 52.37)]
            >>> as_json = {"clusters": [{"id": 0, "members": [0, 1], "keys": [0, 1],
            ...     "centroid": [4.9, 52.37], "bbox": [4.9, 52.37, 4.9005, 52.37],
            ...     "hull": shapely.geometry.mapping(shapely.box(4.9, 52.36, 4.91, 52.38))}],
            ...     "noise": [], "skipped": [2]}
            >>> Clustering.from_json(as_json).clusters[0].members
            (0, 1)
        """
        if not isinstance(value, Mapping) or not isinstance(value.get("clusters"), list):
            raise GeoInputError(
                f"got a {type(value).__name__} that is not a clustering; pass what cluster() "
                "returned, as JSON: {'clusters': [...], 'noise': [...], 'skipped': [...]}"
            )
        clusters = tuple(_cluster_from_json(c, i) for i, c in enumerate(value["clusters"]))
        return cls(
            clusters=clusters,
            noise=_indices(value.get("noise", []), "noise"),
            skipped=_indices(value.get("skipped", []), "skipped"),
        )


def _indices(value: Any, what: str) -> tuple[int, ...]:
    if not isinstance(value, list | tuple) or not all(
        isinstance(i, int) and not isinstance(i, bool) for i in value
    ):
        raise GeoInputError(f"got {what}={value!r:.80}; pass a list of feature indices")
    return tuple(value)


def _json_key(key: Any) -> Hashable:
    # A key read back from JSON: scalars as they are, anything else as canonical JSON, so
    # an id that was a list or an object still matches the same id next time.
    if key is None or isinstance(key, str | int | float | bool):
        return key
    return json.dumps(key, sort_keys=True, default=str)


def _cluster_from_json(value: Any, index: int) -> Cluster:
    where = f"clusters[{index}]"
    if not isinstance(value, Mapping):
        raise GeoInputError(f"got {where} as a {type(value).__name__}; pass a cluster object")
    missing = [k for k in ("id", "members", "keys", "centroid", "bbox", "hull") if k not in value]
    if missing:
        raise GeoInputError(
            f"{where} lacks {', '.join(missing)}; pass what cluster() returned, unchanged"
        )
    try:
        hull = to_shapely(value["hull"])
        centroid = tuple(float(v) for v in value["centroid"])
        bbox = tuple(float(v) for v in value["bbox"])
        keys = tuple(_json_key(k) for k in value["keys"])
        cluster_id = int(value["id"])
    except (AttributeError, KeyError, TypeError, ValueError, shapely.errors.ShapelyError) as exc:
        raise GeoInputError(f"{where} does not read as a cluster ({exc})") from None
    if len(centroid) != 2 or len(bbox) != 4:
        raise GeoInputError(f"{where} needs a centroid [lng, lat] and a bbox of four numbers")
    if hull.geom_type not in ("Polygon", "MultiPolygon"):
        raise GeoInputError(f"{where} has a {hull.geom_type} for a hull; a hull is an area")
    return Cluster(
        id=cluster_id,
        members=_indices(value["members"], f"{where}.members"),
        keys=keys,
        centroid=(centroid[0], centroid[1]),
        bbox=(bbox[0], bbox[1], bbox[2], bbox[3]),
        hull=hull,
    )


def _previous_groups(
    previous: Clustering | Mapping[str, Any] | None,
) -> list[tuple[int, frozenset[Hashable]]]:
    """Each earlier cluster's id and keys, from a clustering or its JSON form."""
    if previous is None:
        return []
    if isinstance(previous, Clustering):
        return [(c.id, frozenset(c.keys)) for c in previous.clusters]
    clusters = previous.get("clusters") if isinstance(previous, Mapping) else None
    if not isinstance(clusters, list):
        raise GeoInputError(
            f"got previous as a {type(previous).__name__} without 'clusters'; pass an "
            "earlier result of cluster() (or its JSON form), or None"
        )
    try:
        return [(int(c["id"]), frozenset(_json_key(k) for k in c["keys"])) for c in clusters]
    except (KeyError, TypeError, ValueError) as exc:
        raise GeoInputError(
            f"previous has a cluster without an id and keys ({exc!r}); pass an earlier "
            "result of cluster() unchanged"
        ) from None


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


def _stable_ids(
    groups: list[tuple[Hashable, ...]], previous: list[tuple[int, frozenset[Hashable]]]
) -> list[int]:
    if not previous:
        return list(range(len(groups)))
    candidates = []
    for new_index, keys in enumerate(groups):
        mine = set(keys)
        for old_id, old_keys in previous:
            shared = len(mine & old_keys)
            if shared:
                jaccard = shared / len(mine | old_keys)
                candidates.append((-jaccard, -shared, new_index, old_id))
    ids: list[int | None] = [None] * len(groups)
    taken: set[int] = set()
    for _, _, new_index, old_id in sorted(candidates):
        if ids[new_index] is None and old_id not in taken:
            ids[new_index] = old_id
            taken.add(old_id)
    fresh = max(old_id for old_id, _ in previous) + 1
    result = []
    for assigned in ids:
        if assigned is None:
            result.append(fresh)
            fresh += 1
        else:
            result.append(assigned)
    return result


def _summaries(
    groups: list[np.ndarray],
    metric: np.ndarray,
    shapes: np.ndarray,
    projection: LocalProjection,
    eps_m: float,
) -> list[tuple[tuple[float, float], tuple[float, float, float, float], BaseGeometry]]:
    """Each group's centroid (lng, lat), bbox and hull, for every group in one pass each.

    ``metric`` holds the incidents in metres and ``shapes`` in lon/lat; a group is the
    indices of its members in both.
    """
    if not groups:
        return []
    members = np.concatenate(groups)
    sizes = np.array([len(g) for g in groups])
    starts = np.cumsum(sizes) - sizes
    points = shapely.get_coordinates(shapely.point_on_surface(metric[members]))
    centroids = projection.coords_to_lonlat(np.add.reduceat(points, starts) / sizes[:, None])
    bounds = shapely.bounds(shapes[members])
    lows = np.minimum.reduceat(bounds[:, :2], starts)
    highs = np.maximum.reduceat(bounds[:, 2:], starts)
    owner = np.repeat(np.arange(len(groups)), sizes)
    hulls = shapely.convex_hull(shapely.geometrycollections(metric[members], indices=owner))
    # Widened, so one member, two, or members in a row (whose hull is a point, a line or a
    # sliver) are an area too, and no member lies on the edge.
    hulls = shapely.transform(shapely.buffer(hulls, eps_m / 2), projection.coords_to_lonlat)
    return [
        ((float(c[0]), float(c[1])), (float(lo[0]), float(lo[1]), float(hi[0]), float(hi[1])), h)
        for c, lo, hi, h in zip(centroids, lows, highs, hulls, strict=True)
    ]


def cluster(
    incidents: Sequence[Any] | Mapping[str, Any],
    *,
    eps_m: float = 250.0,
    min_members: int = 2,
    max_clusters: int | None = None,
    pre_filter: Callable[[Any], bool] | None = None,
    previous: Clustering | Mapping[str, Any] | None = None,
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
        pre_filter: A function of one incident (a Feature dict as given) that returns
            true for those to cluster (e.g. ``lambda f: f["properties"]["magnitude"] >=
            3``); the others are ``skipped``, and indices stay those of ``incidents``.
        previous: An earlier result, or its JSON form; a cluster sharing members with
            one of its clusters keeps that cluster's id (see
            :meth:`Clustering.with_ids_from`).

    Returns:
        A :class:`Clustering`: ``clusters`` (largest first, each with ``id``,
        ``members`` as indices into ``incidents``, ``keys``, ``centroid``, ``bbox`` and
        ``hull``), ``noise`` and ``skipped`` (indices).

    Raises:
        GeoInputError: When the incidents are not geometries, ``eps_m``,
            ``min_members`` or ``max_clusters`` are out of range, or ``previous`` is
            not a clustering.

    Warns:
        UserWarning: When ``eps_m`` is so small that it looks like degrees.

    Examples:
        >>> pts = [shapely.Point(4.9, 52.37), shapely.Point(4.9005, 52.37), shapely.Point(5.5, 52)]
        >>> result = cluster(pts, eps_m=100)
        >>> [c.members for c in result.clusters], result.noise
        ([(0, 1)], (2,))
        >>> result.clusters[0].hull.geom_type
        'Polygon'
    """
    if not eps_m > 0:
        raise GeoInputError(f"got eps_m={eps_m!r}; pass a radius in metres > 0")
    warn_if_degrees("cluster", "eps_m", eps_m)
    if min_members < 1:
        raise GeoInputError(f"got min_members={min_members!r}; pass 1 or more")
    if max_clusters is not None and max_clusters < 0:
        raise GeoInputError(f"got max_clusters={max_clusters!r}; pass 0 or more, or None")
    if pre_filter is not None and not callable(pre_filter):
        raise GeoInputError(
            f"got pre_filter as a {type(pre_filter).__name__}; pass a function of one "
            "incident, e.g. lambda f: f['properties']['magnitude'] >= 3"
        )
    earlier = _previous_groups(previous)
    if isinstance(incidents, Mapping):
        if incidents.get("type") != "FeatureCollection":
            raise GeoInputError(
                f"got a single {incidents.get('type')!r}; pass a list of incident Features "
                "or a FeatureCollection"
            )
        incidents = list(incidents["features"])
    items = list(incidents)
    chosen = [i for i, f in enumerate(items) if pre_filter is None or pre_filter(f)]
    kept_set = set(chosen)
    skipped = tuple(i for i in range(len(items)) if i not in kept_set)
    if not chosen:
        return Clustering(clusters=(), noise=(), skipped=skipped)
    shapes = as_geometries([items[i] for i in chosen], "incidents")
    projection = LocalProjection.around(shapely.GeometryCollection(list(shapes)))
    # One projection call for every coordinate, not one per incident.
    metric = shapely.transform(shapes, projection.coords_to_metres)
    pairs = shapely.STRtree(metric).query(metric, predicate="dwithin", distance=eps_m)
    order = np.argsort(pairs[0], kind="stable")
    sources, targets = pairs[0][order], pairs[1][order]
    splits = np.searchsorted(sources, np.arange(1, len(chosen)))
    neighbours = np.split(targets, splits)
    core = np.array([len(n) >= min_members for n in neighbours])
    labels = _dbscan(neighbours, core)

    # Members by label in one sort (not a pass over every incident per label).
    clustered_at = np.flatnonzero(labels >= 0)
    by_label = clustered_at[np.argsort(labels[clustered_at], kind="stable")]
    counts = np.bincount(labels[clustered_at], minlength=labels.max() + 1)
    groups = np.split(by_label, np.cumsum(counts)[:-1]) if len(counts) else []
    groups.sort(key=lambda g: (-len(g), int(g[0])))
    kept = groups if max_clusters is None else groups[:max_clusters]
    member_lists = [tuple(chosen[j] for j in g) for g in kept]
    keys = [tuple(_key(items[i], i) for i in members) for members in member_lists]
    ids = _stable_ids(keys, earlier)
    clusters = tuple(
        Cluster(id=cid, members=members, keys=member_keys, centroid=centroid, bbox=bbox, hull=hull)
        for cid, members, member_keys, (centroid, bbox, hull) in zip(
            ids,
            member_lists,
            keys,
            _summaries(kept, metric, shapes, projection, eps_m),
            strict=True,
        )
    )
    clustered = {i for members in member_lists for i in members}
    noise = tuple(i for i in chosen if i not in clustered)
    return Clustering(clusters=clusters, noise=noise, skipped=skipped)
