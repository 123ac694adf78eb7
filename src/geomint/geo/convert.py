"""Convert between GeoJSON (Features, geometries, FeatureCollections) and shapely geometries.

Every geo helper accepts any of a GeoJSON Feature, a GeoJSON geometry dict, or a shapely
geometry, and funnels it through :func:`to_shapely`, so a wrong input fails here with a
message that says what was passed and what to pass instead.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any, TypeAlias

import numpy as np
import shapely
from shapely.geometry import shape
from shapely.geometry.base import BaseGeometry

from geomint.geo.errors import GeoInputError

__all__ = ["GeoLike", "feature_collection", "to_feature", "to_shapely"]

GeoLike: TypeAlias = BaseGeometry | Mapping[str, Any]
"""What the helpers accept: a shapely geometry, a GeoJSON Feature, geometry or collection."""

_GEOMETRY_TYPES = frozenset({
    "Point", "MultiPoint", "LineString", "MultiLineString", "Polygon", "MultiPolygon",
    "GeometryCollection",
})  # fmt: skip


def _describe(value: object) -> str:
    if isinstance(value, list | tuple):
        if value and all(isinstance(v, int | float) for v in value):
            return "a bare coordinate pair"
        return "a list of coordinates" if value else "an empty list"
    if isinstance(value, np.ndarray):
        return f"a numpy array of shape {value.shape}"
    return f"a {type(value).__name__}"


def _check_rings(geometry: Mapping[str, Any]) -> None:
    kind = geometry.get("type")
    if kind not in ("Polygon", "MultiPolygon"):
        return
    polygons = [geometry["coordinates"]] if kind == "Polygon" else geometry["coordinates"]
    for polygon in polygons:
        for i, ring in enumerate(polygon):
            closed = len(ring) >= 4 and list(ring[0]) == list(ring[-1])
            if len(ring) < 4 and not closed:
                raise GeoInputError(
                    f"ring {i} of the {kind} has {len(ring)} positions; a linear ring needs "
                    "at least 4, the first repeated as the last"
                )


def _from_mapping(value: Mapping[str, Any]) -> BaseGeometry:
    kind = value.get("type")
    if kind == "Feature":
        geometry = value.get("geometry")
        if geometry is None:
            return shapely.GeometryCollection()
        return _from_mapping(geometry)
    if kind == "FeatureCollection":
        features = value.get("features")
        if not isinstance(features, list):
            raise GeoInputError("got a FeatureCollection without a 'features' list")
        return shapely.GeometryCollection([_from_mapping(f) for f in features])
    if kind not in _GEOMETRY_TYPES:
        keys = ", ".join(sorted(map(str, value))[:6])
        raise GeoInputError(
            f"got a dict with type={kind!r} (keys: {keys}); pass a GeoJSON Feature, geometry "
            "or FeatureCollection"
        )
    _check_rings(value)
    try:
        return shape(value)
    except (ValueError, TypeError, KeyError, IndexError, shapely.errors.GEOSException) as exc:
        raise GeoInputError(f"got a {kind} whose coordinates cannot be read: {exc}") from exc


def to_shapely(value: GeoLike) -> BaseGeometry:
    """Convert a GeoJSON Feature, geometry or FeatureCollection to a shapely geometry.

    A FeatureCollection becomes a GeometryCollection of its features' geometries, and a
    Feature with a null geometry becomes an empty GeometryCollection.

    Args:
        value: A shapely geometry, a GeoJSON geometry dict, a Feature or a FeatureCollection.

    Returns:
        The shapely geometry (the same object when a shapely geometry was passed).

    Raises:
        GeoInputError: When ``value`` is a list of coordinates, an unknown dict, or a
            geometry whose coordinates cannot be read.

    Examples:
        >>> to_shapely({"type": "Point", "coordinates": [4.9, 52.37]}).wkt
        'POINT (4.9 52.37)'
    """
    if isinstance(value, BaseGeometry):
        return value
    if isinstance(value, Mapping):
        return _from_mapping(value)
    raise GeoInputError(
        f"got {_describe(value)}; pass the Feature or its geometry (a GeoJSON dict or a "
        "shapely geometry)"
    )


def to_feature(value: GeoLike, properties: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """Wrap a geometry as a GeoJSON Feature dict.

    Args:
        value: A shapely geometry, a GeoJSON geometry dict or a Feature.
        properties: The Feature's properties; when omitted a Feature keeps its own.

    Returns:
        A GeoJSON Feature dict with plain lists for coordinates; a Feature keeps its ``id``.

    Raises:
        GeoInputError: When ``value`` is not a geometry (see :func:`to_shapely`).

    Examples:
        >>> to_feature(shapely.Point(1, 2), {"name": "a"})["geometry"]
        {'type': 'Point', 'coordinates': [1.0, 2.0]}
    """
    if properties is None and isinstance(value, Mapping) and value.get("type") == "Feature":
        properties = value.get("properties") or {}
    geometry = to_shapely(value)
    feature: dict[str, Any] = {"type": "Feature"}
    if isinstance(value, Mapping) and value.get("id") is not None:
        feature["id"] = value["id"]
    feature["properties"] = dict(properties or {})
    feature["geometry"] = _plain(shapely.geometry.mapping(geometry))
    return feature


def feature_collection(values: Iterable[GeoLike]) -> dict[str, Any]:
    """Build a GeoJSON FeatureCollection from geometries or Features.

    Args:
        values: Shapely geometries, GeoJSON geometry dicts or Features.

    Returns:
        A FeatureCollection dict; Features keep their properties.

    Raises:
        GeoInputError: When an item is not a geometry, or ``values`` is a single mapping.

    Examples:
        >>> len(feature_collection([shapely.Point(0, 0), shapely.Point(1, 1)])["features"])
        2
    """
    if isinstance(values, Mapping | BaseGeometry):
        raise GeoInputError(f"got a single {_kind(values)}; pass a list of Features or geometries")
    return {"type": "FeatureCollection", "features": [to_feature(v) for v in values]}


def _kind(value: GeoLike) -> str:
    if isinstance(value, BaseGeometry):
        return str(value.geom_type)
    return str(value.get("type", "dict"))


def _plain(value: Any) -> Any:
    # shapely's mapping() gives tuples; GeoJSON consumers (and json equality) expect lists.
    if isinstance(value, Mapping):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, Sequence) and not isinstance(value, str):
        return [_plain(v) for v in value]
    return value
