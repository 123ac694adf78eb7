"""The names GeoJSON's ``type`` member may hold, and what to say when it holds another.

A wrong name gets the nearest right one (a case slip, a typo), a type that cannot stand
where it was found gets the ones that can, and a document in a format often mistaken for
GeoJSON (TopoJSON, Esri JSON) gets named with the way to convert it.
"""

from __future__ import annotations

import difflib
from typing import Any

from geomint.intake._messages import describe

__all__ = ["ALL_TYPES", "GEOMETRY_TYPES", "SHAPES", "alien_format", "type_problem"]

GEOMETRY_TYPES = (
    "Point",
    "MultiPoint",
    "LineString",
    "MultiLineString",
    "Polygon",
    "MultiPolygon",
    "GeometryCollection",
)
ALL_TYPES = (*GEOMETRY_TYPES, "Feature", "FeatureCollection")
SHAPES = {
    "Point": "[lon, lat]",
    "MultiPoint": "[[lon, lat], ...]",
    "LineString": "[[lon, lat], [lon, lat], ...]",
    "MultiLineString": "[[[lon, lat], [lon, lat], ...], ...]",
    "Polygon": "[[[lon, lat], ..., [first lon, first lat]], ...]",
    "MultiPolygon": "[[[[lon, lat], ..., [first lon, first lat]], ...], ...]",
}

_TOPOJSON = (
    "this is TopoJSON, not GeoJSON; convert it first "
    "(e.g. topojson-client's topo2geo, mapshaper, or geopandas.read_file)"
)
_ESRI = (
    "this is Esri JSON (an ArcGIS FeatureSet), not GeoJSON; convert it "
    "(e.g. ogr2ogr -f GeoJSON out.geojson in.json) or ask the ArcGIS service for f=geojson"
)


def type_problem(value: Any, where: str, allowed: tuple[str, ...], example: str) -> str | None:
    """Say what is wrong with a 'type' member found at ``where``, or return None."""
    if value is None:
        return f'{where}: \'type\' member required; add it, e.g. "type": "{example}"'
    if not isinstance(value, str):
        return (
            f"{where}: 'type' member must be a string (found {describe(value)}); "
            f'write the type name in quotes, e.g. "type": "{example}"'
        )
    if value in allowed:
        return None
    if value in ALL_TYPES:
        return f"{where}: a {value} cannot stand here; expected one of {', '.join(allowed)}"
    near = [t for t in ALL_TYPES if t.lower() == value.lower()]
    if near:
        return f"{where}: type names are case-sensitive: {value!r} is not {near[0]!r}; fix the case"
    if value == "Topology":
        return f"{where}: {_TOPOJSON}"
    close = difflib.get_close_matches(value, allowed, n=1, cutoff=0.75)
    guess = f" (did you mean {close[0]!r}?)" if close else ""
    return f"{where}: unknown type {value!r}{guess}; expected one of {', '.join(allowed)}"


def alien_format(value: dict[str, Any]) -> str | None:
    """Name a JSON format often mistaken for GeoJSON, or return None."""
    if value.get("type") == "Topology" or ("arcs" in value and "objects" in value):
        return _TOPOJSON
    if "features" in value and ({"geometryType", "spatialReference", "fields"} & value.keys()):
        return _ESRI
    features = value.get("features")
    if (
        "type" not in value
        and isinstance(features, list)
        and features
        and isinstance(features[0], dict)
        and "attributes" in features[0]
    ):
        return _ESRI
    if "type" not in value and ({"rings", "paths", "points"} & value.keys() or "x" in value):
        return (
            "this is an Esri JSON geometry, not GeoJSON; convert it "
            "(e.g. ogr2ogr -f GeoJSON out.geojson in.json)"
        )
    return None
