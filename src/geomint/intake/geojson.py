"""Validate and repair parsed GeoJSON into one clean FeatureCollection in EPSG:4326.

Validation walks the input once and collects every problem with its path, written
relative to what the user passed: ``coordinates[0][1]`` for a bare geometry,
``geometry.coordinates[0]`` for a bare Feature, ``features[3].geometry.coordinates``
in a collection, each prefixed with ``line N:`` in newline-delimited input. Repairs run
only when nothing was refused, so nothing is ever half-loaded.
"""

from __future__ import annotations

import difflib
import itertools
import math
import re
import warnings
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np
import shapely
from shapely.geometry import mapping, shape

from geomint.intake._parse import (
    MAX_DEPTH,
    TOO_DEEP,
    Lines,
    NonFinite,
    gc_paused,
    member_path,
)
from geomint.intake.report import _Builder, _extent

__all__ = ["GEOMETRY_TYPES", "normalise"]

GEOMETRY_TYPES = (
    "Point",
    "MultiPoint",
    "LineString",
    "MultiLineString",
    "Polygon",
    "MultiPolygon",
    "GeometryCollection",
)
_ALL_TYPES = (*GEOMETRY_TYPES, "Feature", "FeatureCollection")
_GEOMETRY_SET = frozenset(GEOMETRY_TYPES)
_SHAPES = {
    "Point": "[lon, lat]",
    "MultiPoint": "[[lon, lat], ...]",
    "LineString": "[[lon, lat], [lon, lat], ...]",
    "MultiLineString": "[[[lon, lat], [lon, lat], ...], ...]",
    "Polygon": "[[[lon, lat], ..., [first lon, first lat]], ...]",
    "MultiPolygon": "[[[[lon, lat], ..., [first lon, first lat]], ...], ...]",
}
_LINES = ("LineString", "MultiLineString")
_POLYGONS = ("Polygon", "MultiPolygon")
_FEATURE_COMMON = frozenset({"type", "properties", "geometry"})
_FEATURE_KNOWN = frozenset({"type", "id", "properties", "geometry", "bbox", "crs"})
_FEATURE_IGNORED = frozenset({"features", "coordinates"})
_GEOMETRY_KNOWN = frozenset({"type", "coordinates", "geometries", "bbox", "crs"})
_GEOMETRY_IGNORED = frozenset({"properties", "geometry", "features"})
_COLLECTION_KNOWN = frozenset({"type", "features", "bbox", "crs"})
_COLLECTION_IGNORED = frozenset({"properties", "coordinates", "geometry"})
_CRS84 = re.compile(r"(?:OGC:(?:1\.3)?:?CRS84|CRS:?84)$", re.IGNORECASE)
_EPSG4326 = re.compile(r"EPSG(?::[\d.]*)?:4326$|EPSG/\d+/4326$", re.IGNORECASE)
_REWOUND = "rings rewound to RFC 7946 winding (exterior CCW)"
_SPLIT = (
    "geometries crossing the antimeridian split at +/-180 (an edge spanning more "
    "than 180 degrees of longitude is read as crossing it)"
)
_WRAPPED = "longitudes beyond +/-180 (up to +/-360) wrapped into [-180, 180]"
_BBOX_TOLERANCE = 1e-6
_Transform = Callable[[float, float], tuple[float, float]]
_EMPTY: dict[str, Any] = {"type": "empty"}


class _UnrepairableError(ValueError):
    """A geometry that passed validation but has no faithful repair."""


def _describe(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "false" if not value else "true"
    if isinstance(value, int | float):
        return "a number"
    if isinstance(value, str):
        shown = value if len(value) <= 40 else value[:37] + "..."
        # Escape lone surrogates so the message itself stays printable as UTF-8.
        return f'the string "{shown.encode("utf-8", "backslashreplace").decode()}"'
    return "an array" if isinstance(value, list | tuple) else "an object"


def _at(path: str) -> str:
    return path or "root"


def _join(path: str, member: str) -> str:
    return f"{path}.{member}" if path else member


def _num(value: float) -> str:
    return str(int(value)) if value.is_integer() and abs(value) < 1e15 else repr(value)


def _pos(position: list[float]) -> str:
    return f"[{_num(position[0])}, {_num(position[1])}]"


def _short(path: str) -> str:
    """Cut a very deep path at a member boundary: the start says where the nesting is."""
    if len(path) <= 60:
        return path
    cut = max(path.rfind(".", 0, 60), path.rfind("[", 0, 60))
    return path[: cut if cut > 0 else 60] + "…"


def _nonfinite(value: float) -> str:
    if isinstance(value, NonFinite):
        return value.literal
    if math.isnan(value):
        return "NaN"
    return "Infinity" if value > 0 else "-Infinity"


def _nonfinite_problem(value: float) -> str:
    if isinstance(value, NonFinite):
        why = "is not valid JSON and not a valid coordinate"
    elif math.isnan(value):
        why = "is not a valid coordinate"
    else:
        why = (
            "is not a valid coordinate (a JSON number too large for a 64-bit float, "
            "such as 1e400, reads as Infinity)"
        )
    return (
        f"non-finite number ({_nonfinite(value)}) {why}; "
        "replace it with the real value or remove the feature"
    )


def _range_problem(lon: float, lat: float) -> str:
    if abs(lat) > 90:
        what = f"latitude {_num(lat)} is beyond +/-90"
    else:
        what = f"longitude {_num(lon)} is beyond +/-360"
    if 90 < abs(lat) <= 180 and abs(lon) <= 90:
        advice = (
            "it looks like [lat, lng] order: GeoJSON positions are [lng, lat], "
            f"so write [{_num(lat)}, {_num(lon)}]"
        )
    elif max(abs(lon), abs(lat)) > 1000:
        advice = (
            "these look like projected coordinates (e.g. metres): reproject the data to "
            "EPSG:4326 first (ogr2ogr -t_srs EPSG:4326 out.geojson in.geojson) or name its "
            "CRS in a 'crs' member"
        )
    else:
        advice = "correct or remove this position"
    return (
        f"coordinate out of range: {what} (position [{_num(lon)}, {_num(lat)}]); EPSG:4326 "
        "needs -180<=lon<=180 and -90<=lat<=90 (longitudes up to +/-360 are wrapped); " + advice
    )


def _type_problem(value: Any, where: str, allowed: tuple[str, ...], example: str) -> str | None:
    if value is None:
        return f'{where}: \'type\' member required; add it, e.g. "type": "{example}"'
    if not isinstance(value, str):
        return (
            f"{where}: 'type' member must be a string (found {_describe(value)}); "
            f'write the type name in quotes, e.g. "type": "{example}"'
        )
    if value in allowed:
        return None
    if value in _ALL_TYPES:
        return f"{where}: a {value} cannot stand here; expected one of {', '.join(allowed)}"
    near = [t for t in _ALL_TYPES if t.lower() == value.lower()]
    if near:
        return f"{where}: type names are case-sensitive: {value!r} is not {near[0]!r}; fix the case"
    if value == "Topology":
        return f"{where}: {_TOPOJSON}"
    close = difflib.get_close_matches(value, allowed, n=1, cutoff=0.75)
    guess = f" (did you mean {close[0]!r}?)" if close else ""
    return f"{where}: unknown type {value!r}{guess}; expected one of {', '.join(allowed)}"


_TOPOJSON = (
    "this is TopoJSON, not GeoJSON; convert it first "
    "(e.g. topojson-client's topo2geo, mapshaper, or geopandas.read_file)"
)
_ESRI = (
    "this is Esri JSON (an ArcGIS FeatureSet), not GeoJSON; convert it "
    "(e.g. ogr2ogr -f GeoJSON out.geojson in.json) or ask the ArcGIS service for f=geojson"
)


def _alien_format(value: dict[str, Any]) -> str | None:
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


def _fast_position(value: Any) -> list[float] | None:
    """Return a plain in-range 2D position as floats, or None to take the careful path."""
    if (type(value) is list or type(value) is tuple) and len(value) == 2:
        x, y = value
        if (
            (type(x) is float or type(x) is int)
            and (type(y) is float or type(y) is int)
            and -180 <= x <= 180
            and -90 <= y <= 90
        ):
            return [float(x), float(y)]
    return None


def _fast_positions(items: list[Any] | tuple[Any, ...]) -> list[list[float]] | None:
    """Return plain in-range 2D positions as floats, or None to take the careful path."""
    # The per-position hot loop of large files: one function call per array, not per
    # position.
    out: list[list[float]] = []
    append = out.append
    for value in items:
        if (type(value) is not list and type(value) is not tuple) or len(value) != 2:
            return None
        x, y = value
        if not (
            (type(x) is float or type(x) is int)
            and (type(y) is float or type(y) is int)
            and -180 <= x <= 180
            and -90 <= y <= 90
        ):
            return None
        append([float(x), float(y)])
    return out


class _Walker:
    """One validating pass: collects problems, builds clean copies, never raises."""

    def __init__(self, builder: _Builder) -> None:
        self.b = builder
        self.transform: _Transform | None = None
        self.crs_name = ""
        self.problems: list[str] = []
        self.prefix = ""
        self.index = -1
        # Features that need the antimeridian path: a longitude beyond +/-180 or a line or
        # ring spanning more than 180 degrees.
        self.wide: set[int] = set()
        # (first feature, end feature, where, [west, south, east, north]) to compare later.
        self.bboxes: list[tuple[int, int, str, list[float]]] = []
        self.dropped: set[str] = set()

    def fail(self, message: str) -> None:
        self.problems.append(self.prefix + message)

    # positions and arrays of them -------------------------------------------------

    def position(self, value: Any, path: str) -> list[float] | None:
        if self.transform is None:
            fast = _fast_position(value)
            if fast is not None:
                return fast
        if not isinstance(value, list | tuple):
            self.fail(
                f"{path}: a position must be an array of numbers (found {_describe(value)}); "
                "write it as [longitude, latitude]"
            )
            return None
        if len(value) < 2:
            self.fail(
                f"{path}: position must have at least 2 elements (found {len(value)}); "
                "write it as [longitude, latitude]"
            )
            return None
        numbers: list[float] = []
        for i, element in enumerate(value):
            if isinstance(element, list | tuple | dict):
                self.fail(
                    f"{path}[{i}]: found an array inside a position: nested too deeply; "
                    "a position is [longitude, latitude], so remove a level of brackets"
                )
                return None
            if isinstance(element, bool) or not isinstance(element, int | float):
                self.fail(
                    f"{path}[{i}]: each element of a position must be a number "
                    f"(found {_describe(element)}); write it as a JSON number, without quotes"
                )
                return None
            try:
                number = float(element)
            except OverflowError:
                self.fail(
                    f"{path}[{i}]: the integer {str(element)[:12]}... ({len(str(element))} "
                    "digits) is too large for a coordinate; replace it with the real value"
                )
                return None
            if not math.isfinite(number):
                self.fail(f"{path}[{i}]: {_nonfinite_problem(element)}")
                return None
            numbers.append(number)
        if len(value) > 3:
            self.b.warn(
                f"positions with {len(value)} elements found; extra ordinates dropped "
                "(RFC 7946 s3.1.1: SHOULD NOT extend positions beyond three elements)"
            )
        if len(value) > 2:
            self.b.repaired("dropped_dimensions", self.index, "Z/M ordinates dropped to 2D")
        lon, lat = numbers[0], numbers[1]
        if self.transform is not None:
            lon, lat = self.transform(lon, lat)
            if not (math.isfinite(lon) and math.isfinite(lat)):
                self.fail(
                    f"{path}: position {_pos(numbers)} cannot be reprojected from "
                    f"{self.crs_name} to longitude/latitude (it lies outside that CRS's "
                    "area); check the CRS named in the 'crs' member"
                )
                return None
        if not (-90 <= lat <= 90 and -360 <= lon <= 360):
            self.fail(f"{path}: {_range_problem(lon, lat)}")
            return None
        if not -180 <= lon <= 180:
            self.wide.add(self.index)
        return [lon, lat]

    def array(self, value: Any, path: str, what: str, item: str, hint: str) -> Any:
        if not isinstance(value, list | tuple):
            self.fail(
                f"{path}: {what} must be an array of {item} (found {_describe(value)}); {hint}"
            )
            return None
        if value and not isinstance(value[0], list | tuple):
            self.fail(
                f"{path}: {what} must be an array of {item} (found {_describe(value[0])}): "
                f"nested one level too shallowly; {hint}"
            )
            return None
        return value

    def positions(
        self, value: Any, path: str, what: str, hint: str, *, sequence: bool
    ) -> list[list[float]] | None:
        items = self.array(value, path, what, "positions", hint)
        if items is None:
            return None
        clean = None if self.transform is not None else _fast_positions(items)
        if clean is None:
            out = [self.position(item, f"{path}[{i}]") for i, item in enumerate(items)]
            if None in out:
                return None
            clean = [p for p in out if p is not None]
        if sequence and len(clean) > 1:
            lons = [p[0] for p in clean]
            if max(lons) - min(lons) > 180:
                self.wide.add(self.index)
        return clean

    def line(self, value: Any, path: str, what: str) -> list[list[float]] | None:
        hint = f"a {what} is {_SHAPES['LineString']}; for a single location use a Point"
        out = self.positions(value, path, what, hint, sequence=True)
        if out is not None and len(out) < 2:
            self.fail(
                f"{path}: {what} needs two or more positions (found {len(out)}); "
                "add another position, or use a Point for a single location"
            )
            return None
        return out

    def ring(self, value: Any, path: str) -> list[list[float]] | None:
        if isinstance(value, list | tuple) and len(value) >= 4:
            first, last = value[0], value[-1]
            if (
                isinstance(first, list | tuple)
                and isinstance(last, list | tuple)
                and len(first) != len(last)
            ):
                self.fail(
                    f"{path}: LinearRing not closed: last position has {len(last)} "
                    f"elements, first has {len(first)}; make them identical"
                )
                return None
        hint = "a LinearRing is [[lon, lat], ..., [first lon, first lat]]"
        out = self.positions(value, path, "LinearRing", hint, sequence=True)
        if out is None:
            return None
        if len(out) < 4:
            closed = "" if not out else ", first = last" if out[0] == out[-1] else ", first != last"
            self.fail(
                f"{path}: LinearRing needs four or more positions and must be closed "
                f"(found {len(out)} positions{closed}); a ring is at least a triangle with "
                "its first position repeated at the end: [a, b, c, a]"
            )
            return None
        if out[0] != out[-1]:
            self.fail(
                f"{path}: LinearRing not closed (first != last: {_pos(out[0])} vs "
                f"{_pos(out[-1])}); repeat the first position {_pos(out[0])} at the end"
            )
            return None
        return out

    def rings(self, value: Any, path: str, what: str) -> list[list[list[float]]] | None:
        hint = f"a Polygon is {_SHAPES['Polygon']}"
        items = self.array(value, path, what, "linear rings", hint)
        if items is None:
            return None
        if items and items[0] and not isinstance(items[0][0], list | tuple):
            self.fail(
                f"{path}: {what} must be an array of linear rings, found positions where rings "
                f"were expected: nested one level too shallowly; wrap the ring in brackets: {hint}"
            )
            return None
        out = [self.ring(r, f"{path}[{i}]") for i, r in enumerate(items)]
        return None if None in out else out  # type: ignore[return-value]

    def parts(self, value: Any, path: str, kind: str, each: Callable[[Any, str], Any]) -> Any:
        depth = 3 if kind == "MultiLineString" else 4
        hint = f"a {kind} is {_SHAPES[kind]}"
        items = self.array(value, path, f"{kind} coordinates", "parts", hint)
        if items is None:
            return None
        probe: Any = items
        for level in range(depth):
            if not isinstance(probe, list | tuple) or not probe:
                break
            if not isinstance(probe[0], list | tuple) and level < depth - 1:
                self.fail(
                    f"{path}: {kind} coordinates nested too shallowly "
                    f"(found numbers at depth {level + 1} of {depth}); {hint}"
                )
                return None
            probe = probe[0]
        kept = []
        for i, part in enumerate(items):
            if isinstance(part, list | tuple) and not part:
                self.b.repaired("empty_part_dropped", self.index, "empty parts dropped")
                continue
            kept.append(each(part, f"{path}[{i}]"))
        return None if None in kept else kept

    # geometries ----------------------------------------------------------------

    def geometry(self, value: Any, path: str, depth: int, *, top: bool) -> dict[str, Any] | None:
        """Return a clean geometry, ``_EMPTY`` for an empty one, or None on a problem."""
        if not isinstance(value, dict):
            self.fail(
                f"{_at(path)}: a geometry must be an object or null (found {_describe(value)}); "
                'write it as {"type": "Point", "coordinates": [lon, lat]} or null'
            )
            return None
        kind = value.get("type")
        if kind not in _GEOMETRY_SET:
            self.fail(self.geometry_type(value, path))
            return None
        if len(value) > 2:
            self.geometry_members(value, path)
            if "bbox" in value:
                box = self.bbox(value, path)
                if box is not None and top:
                    self.bboxes.append((self.index, self.index + 1, "", box))
        if kind == "GeometryCollection":
            if depth > MAX_DEPTH:
                self.fail(f"{_short(path)}: {TOO_DEEP}")
                return None
            return self.collection(value, path, depth)
        coords = value.get("coordinates", _EMPTY)
        if kind == "Point" and self.transform is None:
            out: Any = _fast_position(coords)
            if out is not None:
                return {"type": kind, "coordinates": out}
        if coords is _EMPTY:
            self.fail(
                f"{_at(path)}: 'coordinates' member required for a {kind}; "
                f'add it, e.g. "coordinates": {_SHAPES[kind]}'
            )
            return None
        if isinstance(coords, list | tuple) and not coords:
            return _EMPTY
        cpath = _join(path, "coordinates")
        if kind == "Point":
            if isinstance(coords, list | tuple) and isinstance(coords[0], list | tuple):
                self.fail(
                    f"{cpath}: Point coordinates must be a single position (found an array "
                    "of arrays); a Point is [lon, lat]; for several points use a MultiPoint"
                )
                return None
            out = self.position(coords, cpath)
        elif kind == "MultiPoint":
            hint = f"a MultiPoint is {_SHAPES['MultiPoint']}; for one position use a Point"
            out = self.positions(coords, cpath, "MultiPoint coordinates", hint, sequence=False)
        elif kind == "LineString":
            out = self.line(coords, cpath, "LineString")
        elif kind == "MultiLineString":
            out = self.parts(
                coords, cpath, kind, lambda v, p: self.line(v, p, "MultiLineString part")
            )
        elif kind == "Polygon":
            out = self.rings(coords, cpath, "Polygon coordinates")
        else:
            out = self.parts(coords, cpath, kind, lambda v, p: self.rings(v, p, f"{kind} part"))
        if out is None:
            return None
        return {"type": kind, "coordinates": out} if out else _EMPTY

    def geometry_type(self, value: dict[str, Any], path: str) -> str:
        if "coordinates" not in value and ({"rings", "paths"} & value.keys() or "x" in value):
            return (
                f"{_at(path)}: this is an Esri JSON geometry, not GeoJSON; convert the file "
                "(e.g. ogr2ogr -f GeoJSON out.geojson in.json)"
            )
        kind = value.get("type")
        problem = _type_problem(kind, _at(path), GEOMETRY_TYPES, "Point")
        return problem or f"{_at(path)}: 'type' member must be a geometry type name"

    def geometry_members(self, value: dict[str, Any], path: str) -> None:
        semantic = sorted(_GEOMETRY_IGNORED & value.keys())
        if semantic:
            self.b.warn(f"geometry must not carry {semantic} members (RFC 7946 s7.1); ignored")
        self.dropped.update(value.keys() - _GEOMETRY_KNOWN - _GEOMETRY_IGNORED)
        if path and "crs" in value:
            self.b.warn("'crs' members below the root are not supported; ignored")

    def collection(self, value: dict[str, Any], path: str, depth: int) -> dict[str, Any] | None:
        members = value.get("geometries")
        if not isinstance(members, list | tuple):
            self.fail(
                f"{_at(path)}: GeometryCollection.geometries must be an array "
                f'(found {_describe(members)}); write "geometries": [{{"type": ...}}, ...]'
            )
            return None
        out: list[dict[str, Any]] = []
        failed = False
        for i, member in enumerate(members):
            mpath = f"{_join(path, 'geometries')}[{i}]"
            if not isinstance(member, dict):
                self.fail(
                    f"{mpath}: GeometryCollection.geometries must contain geometry objects "
                    f"(found {_describe(member)}); remove it or write a geometry object"
                )
                failed = True
                continue
            geom = self.geometry(member, mpath, depth + 2, top=False)
            if geom is None:
                failed = True
            elif geom is _EMPTY:
                self.b.repaired("empty_part_dropped", self.index, "empty parts dropped")
            elif geom["type"] == "GeometryCollection":
                self.b.repaired(
                    "collection_flattened",
                    self.index,
                    "nested GeometryCollection flattened (RFC 7946 s3.1.8: SHOULD avoid)",
                )
                out.extend(geom["geometries"])
            else:
                out.append(geom)
        if failed:
            return None
        return {"type": "GeometryCollection", "geometries": out} if out else _EMPTY

    def bbox(self, value: dict[str, Any], path: str) -> list[float] | None:
        """Check a ``bbox`` member; return it as [west, south, east, north] if usable."""
        if "bbox" not in value:
            return None
        box = value["bbox"]
        where = _join(path, "bbox")
        if not isinstance(box, list | tuple):
            self.b.warn(f"{where} must be an array of numbers; ignored")
        elif any(isinstance(v, bool) or not isinstance(v, int | float) for v in box):
            self.b.warn(f"{where} elements must be numbers; ignored")
        elif len(box) not in (4, 6):
            self.b.warn(f"{where} must have 2*n elements (found {len(box)}); ignored")
        elif not all(math.isfinite(v) for v in box):
            self.b.warn(f"{where} elements must be finite numbers; ignored")
        else:
            half = len(box) // 2
            return [float(box[0]), float(box[1]), float(box[half]), float(box[half + 1])]
        return None

    # properties and other members kept as they are ------------------------------

    def members(
        self, source: dict[Any, Any], path: str, depth: int, skip: frozenset[str] = frozenset()
    ) -> dict[Any, Any]:
        """Copy the members of ``source`` whose values sit at ``depth``, checking each."""
        out: dict[Any, Any] = {}
        for key, item in source.items():
            if key in skip:
                continue
            if type(key) is str and not key.isascii():
                self.text(key, path, key=True)
            kind = type(item)
            if kind is int or kind is bool or item is None:
                out[key] = item
            elif kind is str:
                if not item.isascii():
                    self.text(item, member_path(path, key))
                out[key] = item
            else:
                out[key] = self.value(item, member_path(path, key), depth)
        return out

    def value(self, item: Any, path: str, depth: int) -> Any:
        if isinstance(item, float):
            if math.isfinite(item):
                return item
            if math.isnan(item):
                self.b.repaired("nan_to_null", self.index, "NaN property values replaced with null")
                return None
            self.fail(
                f"{_short(path)}: non-finite number ({_nonfinite(item)}) cannot be stored in "
                "JSON; replace it with a finite number or null"
            )
            return item
        if isinstance(item, str):
            if not item.isascii():
                self.text(item, path)
            return item
        if isinstance(item, dict | list | tuple):
            if depth > MAX_DEPTH:
                self.fail(f"{_short(path)}: {TOO_DEEP}; flatten the value or store it as text")
                return item
            if isinstance(item, dict):
                return self.members(item, path, depth + 1)
            return [self.value(v, f"{path}[{i}]", depth + 1) for i, v in enumerate(item)]
        return item

    def text(self, text: str, path: str, *, key: bool = False) -> None:
        try:
            text.encode("utf-8")
        except UnicodeEncodeError as exc:
            where = member_path(path, text) if key else path
            what = "member name" if key else "string"
            self.fail(
                f"{_short(_at(where))}: the {what} has an unpaired surrogate "
                f"(\\u{ord(text[exc.start]):04x} at character {exc.start}), which is not a "
                "Unicode character and cannot be stored as UTF-8; remove it or replace it "
                "with the intended character"
            )

    # features -------------------------------------------------------------------

    def feature(self, value: Any, path: str, depth: int) -> dict[str, Any] | None:
        if not isinstance(value, dict):
            self.fail(
                f"{_at(path)} is {_describe(value)}, every feature must be an object; remove "
                'it or write it as {"type": "Feature", "properties": {}, "geometry": ...}'
            )
            return None
        kind = value.get("type")
        if kind != "Feature":
            self.fail(self.feature_type(kind, path))
            if kind in _GEOMETRY_SET:
                return None
        props = value.get("properties", _EMPTY)
        out: dict[str, Any] = {"type": "Feature", "properties": {}}
        if isinstance(props, dict) and props is not _EMPTY:
            out["properties"] = self.members(props, _join(path, "properties"), depth + 2)
        elif props is _EMPTY:
            self.b.warn("features without a 'properties' member were given empty properties")
        elif props is not None:
            self.fail(
                f"{_at(path)}: 'properties' must be an object or null (found {_describe(props)}); "
                'put the values in an object such as {"name": ...}, or write null'
            )
        if not _FEATURE_COMMON.issuperset(value):
            self.feature_members(value, path, depth, out)
        geom = value.get("geometry", _EMPTY)
        if geom is _EMPTY:
            self.fail(f"{_at(path)}: 'geometry' member required (use null for no geometry)")
            return None
        if geom is not None:
            geom = self.geometry(geom, _join(path, "geometry"), depth + 1, top=True)
            if geom is None:
                return None
            if geom is _EMPTY:
                geom = None
                self.b.repaired("empty_geometry", self.index, "empty geometries stored as null")
        out["geometry"] = geom
        return out

    def feature_members(
        self, value: dict[str, Any], path: str, depth: int, out: dict[str, Any]
    ) -> None:
        """Check the members of a Feature beyond type, properties and geometry."""
        if "id" in value:
            fid = value["id"]
            if isinstance(fid, bool) or not isinstance(fid, str | int | float):
                self.fail(
                    f"{_at(path)}: Feature 'id' must be a string or number (found "
                    f"{_describe(fid)}); use a string or number, or move it into 'properties'"
                )
            elif isinstance(fid, float) and not math.isfinite(fid):
                self.fail(
                    f"{_at(path)}: Feature 'id' must be a finite number (found "
                    f"{_nonfinite(fid)}); use a string or a finite number"
                )
            else:
                if isinstance(fid, str) and not fid.isascii():
                    self.text(fid, _join(path, "id"))
                out["id"] = fid
        ignored = sorted(_FEATURE_IGNORED & value.keys())
        if ignored:
            self.b.warn(f"Feature must not carry {ignored} members (RFC 7946 s7.1); ignored")
        if path and "crs" in value:
            self.b.warn("'crs' members below the root are not supported; ignored")
        box = self.bbox(value, path)
        if box is not None:
            self.bboxes.append((self.index, self.index + 1, "", box))
        out.update(self.members(value, path, depth + 1, _FEATURE_KNOWN | _FEATURE_IGNORED))

    def feature_type(self, kind: Any, path: str) -> str:
        if kind in GEOMETRY_TYPES:
            return (
                f"{_at(path)}: feature type {kind!r} is not 'Feature': a FeatureCollection "
                'holds Features, so wrap it as {"type": "Feature", "properties": {}, '
                f'"geometry": <the {kind}>}}'
            )
        problem = _type_problem(kind, _at(path), ("Feature",), "Feature")
        if isinstance(kind, str) and problem and "unknown type" in problem:
            close = difflib.get_close_matches(kind, ("Feature",), n=1, cutoff=0.6)
            guess = " (did you mean 'Feature'?)" if close else ""
            problem = f"{_at(path)}: feature type {kind!r} is not 'Feature'{guess}"
        return problem or f"{_at(path)}: 'type' member required"


# the document root -----------------------------------------------------------------

_Item = tuple[str, Any, str, int]


def _root(
    value: Any, walker: _Walker, collection: dict[str, Any], *, single: bool
) -> tuple[list[_Item], list[float] | None]:
    """Return the features or bare geometry to walk, with their paths and depths."""
    if not isinstance(value, dict):
        advice = (
            'to load a list of Features, wrap it: {"type": "FeatureCollection", "features": [...]}'
            if isinstance(value, list)
            else "expected an object with a 'type' member, such as a FeatureCollection"
        )
        walker.fail(f"root must be a GeoJSON object (found {_describe(value)}); {advice}")
        return [], None
    alien = _alien_format(value)
    if alien:
        walker.fail(f"root: {alien}")
        return [], None
    kind = value.get("type")
    problem = _type_problem(kind, "root", _ALL_TYPES, "FeatureCollection")
    if problem:
        walker.fail(problem)
        return [], None
    if kind != "FeatureCollection":
        if single:
            walker.b.source += f" (a bare {kind}, wrapped into a FeatureCollection)"
        return [("feature" if kind == "Feature" else "geometry", value, "", 1)], None
    box = walker.bbox(value, "")
    ignored = sorted(_COLLECTION_IGNORED & value.keys())
    if ignored:
        walker.b.warn(f"FeatureCollection must not carry {ignored} members; ignored")
    if "features" not in value:
        walker.fail(
            "root: FeatureCollection requires a 'features' member (an array); "
            'add "features": [] for an empty collection'
        )
        return [], None
    features = value["features"]
    if not isinstance(features, list | tuple):
        walker.fail(
            f"root: 'features' must be an array (found {_describe(features)}); "
            'write "features": [{"type": "Feature", ...}, ...]'
        )
        return [], None
    collection.update(walker.members(value, "", 2, _COLLECTION_KNOWN | _COLLECTION_IGNORED))
    return [("feature", f, f"features[{i}]", 3) for i, f in enumerate(features)], box


def _crs_transform(value: Any, walker: _Walker) -> _Transform | None:
    if not isinstance(value, dict) or "crs" not in value:
        return None
    crs = value["crs"]
    if crs is None:
        walker.b.warn(
            "'crs': null (an unknown CRS in GeoJSON 2008) removed; "
            "positions were read as longitude/latitude"
        )
        return None
    props = crs.get("properties") if isinstance(crs, dict) else None
    name = props.get("name") if isinstance(props, dict) else None
    if not isinstance(name, str):
        walker.fail(
            "root: the legacy 'crs' member has no properties.name; remove it if the positions "
            'are longitude/latitude, or name the CRS, e.g. {"type": "name", "properties": '
            '{"name": "EPSG:3857"}}'
        )
        return None
    if _CRS84.search(name):
        walker.b.warn(f"legacy 'crs' member ({name}) is WGS 84 longitude/latitude; removed")
        return None
    if _EPSG4326.search(name):
        walker.b.warn(
            f"legacy 'crs' member ({name}) names EPSG:4326, whose official axis order is "
            "latitude, longitude; positions were read as longitude, latitude as GeoJSON "
            "requires (and GDAL writes): if features land in the wrong place, swap the two "
            "numbers of every position; the member was removed"
        )
        return None
    import pyproj  # noqa: PLC0415 - only reprojecting files pay for pyproj

    try:
        source = pyproj.CRS.from_user_input(name)
    except pyproj.exceptions.CRSError:
        walker.fail(
            f"root: the 'crs' member names {name!r}, which is not a recognised CRS; remove the "
            "member if the positions are longitude/latitude, or reproject the file to "
            "EPSG:4326 first (e.g. ogr2ogr -t_srs EPSG:4326 out.geojson in.geojson)"
        )
        return None
    transformer = pyproj.Transformer.from_crs(source, "EPSG:4326", always_xy=True)
    walker.crs_name = name
    walker.b.repaired("reprojected", -1, f"reprojected from {name} to EPSG:4326")

    def transform(x: float, y: float) -> tuple[float, float]:
        lon, lat = transformer.transform(x, y)
        return float(lon), float(lat)

    return transform


def normalise(values: list[Any], builder: _Builder) -> tuple[dict[str, Any], list[str]]:
    """Validate parsed values; return the clean FeatureCollection and the problems found.

    Args:
        values: Parsed JSON values: one document, or the :class:`Lines` of a
            newline-delimited file.
        builder: The report being built; repairs and warnings are recorded on it.

    Returns:
        The FeatureCollection and an empty list, or an empty dict and every problem.
    """
    with gc_paused():
        return _normalise(values, builder)


def _normalise(values: list[Any], builder: _Builder) -> tuple[dict[str, Any], list[str]]:
    walker = _Walker(builder)
    numbers = values.numbers if isinstance(values, Lines) else None
    kept: list[tuple[dict[str, Any], str, str]] = []
    collection: dict[str, Any] = {}
    reprojected = False
    for n, value in enumerate(values):
        walker.prefix = f"line {numbers[n]}: " if numbers else ""
        walker.transform = _crs_transform(value, walker)
        reprojected |= walker.transform is not None
        start = walker.index + 1
        items, box = _root(value, walker, collection, single=len(values) == 1)
        for role, item, path, depth in items:
            walker.index += 1
            feature: dict[str, Any] | None
            if role == "feature":
                feature = walker.feature(item, path, depth)
                gpath = _join(path, "geometry")
            else:
                geom = walker.geometry(item, path, depth, top=True)
                if geom is _EMPTY:
                    builder.repaired(
                        "empty_geometry", walker.index, "empty geometries stored as null"
                    )
                feature = None if geom is None else {"type": "Feature", "properties": {}}
                if feature is not None:
                    feature["geometry"] = None if geom is _EMPTY else geom
                gpath = path
            if feature is not None:
                kept.append((feature, walker.prefix, gpath))
        if box is not None:
            walker.bboxes.append((start, walker.index + 1, walker.prefix + "root ", box))
    if not walker.problems:
        walker.problems = _repair_all(kept, walker, builder)
    if walker.problems:
        return {}, walker.problems
    features = [feature for feature, _, _ in kept]
    if not reprojected:
        _compare_bboxes(walker.bboxes, features, builder)
    if walker.dropped:
        names = sorted(map(str, walker.dropped))
        shown = names[:10] + (["..."] if len(names) > 10 else [])
        builder.warn(
            f"members other than type/coordinates on geometry objects ({shown}) were dropped; "
            "put such values in the Feature's properties"
        )
    if not features:
        builder.warn("the input has no features; the layer is empty")
    return {"type": "FeatureCollection", **collection, "features": features}, []


def _compare_bboxes(
    boxes: list[tuple[int, int, str, list[float]]],
    features: list[dict[str, Any]],
    builder: _Builder,
) -> None:
    for start, end, where, box in boxes:
        actual = _extent(f["geometry"] for f in features[start:end])
        if actual is not None and all(
            abs(a - b) <= _BBOX_TOLERANCE for a, b in zip(box, actual, strict=True)
        ):
            continue
        builder.repaired(
            "bbox_ignored",
            start if end - start == 1 else -1,
            "'bbox' members that do not match the data ignored; the report's bbox is "
            "computed from the data",
        )
        if where:
            shown = "no geometry" if actual is None else f"[{', '.join(map(_num, actual))}]"
            builder.warn(
                f"{where}bbox [{', '.join(map(_num, box))}] does not match the data "
                f"({shown}); ignored"
            )


# repairs -------------------------------------------------------------------------


def _polygons(geom: dict[str, Any]) -> list[list[list[list[float]]]]:
    coords = geom["coordinates"]
    return [coords] if geom["type"] == "Polygon" else coords


def _sequences(geom: dict[str, Any]) -> Iterator[list[list[float]]]:
    """Yield every array of positions of a non-collection geometry."""
    kind, coords = geom["type"], geom["coordinates"]
    if kind == "Point":
        yield [coords]
    elif kind in ("MultiPoint", "LineString"):
        yield coords
    elif kind in ("MultiLineString", "Polygon"):
        yield from coords
    else:
        for polygon in coords:
            yield from polygon


def _wrap_longitudes(geom: dict[str, Any]) -> int:
    count = 0
    for sequence in _sequences(geom):
        for position in sequence:
            if not -180 <= position[0] <= 180:
                position[0] = (position[0] + 180) % 360 - 180
                count += 1
    return count


def _crosses(geom: dict[str, Any]) -> bool:
    return any(
        abs(b[0] - a[0]) > 180
        for sequence in _sequences(geom)
        for a, b in itertools.pairwise(sequence)
    )


def _degenerate(geom: dict[str, Any]) -> bool:
    """True when a line, or a part of one, has fewer than two distinct positions."""
    return any(seq.count(seq[0]) == len(seq) for seq in _sequences(geom))


def _lists(value: Any) -> Any:
    if isinstance(value, tuple | list):
        return [_lists(v) for v in value]
    if isinstance(value, dict):
        return {k: _lists(v) for k, v in value.items()}
    return value


def _rewind(polygon: list[list[list[float]]], index: int, builder: _Builder) -> None:
    for i, ring in enumerate(polygon):
        # GEOS's robust orientation test, not a float shoelace: slivers get it right.
        ccw = bool(shapely.is_ccw(shapely.linearrings(ring)))
        if ccw == (i > 0):
            ring.reverse()
            builder.repaired("rewound", index, _REWOUND)


def _hole_outside(geom: dict[str, Any], where: str, reason: str) -> str:
    advice = (
        "lies outside its polygon's exterior ring; if it is a separate area, make it a "
        "polygon of its own (a MultiPolygon part); if it is a mistake, remove it"
    )
    multi = geom["type"] == "MultiPolygon"
    for p, polygon in enumerate(_polygons(geom)):
        shell = shapely.polygons(polygon[0])
        for k, hole in enumerate(polygon[1:], start=1):
            if not shell.covers(shapely.linearrings(hole)):
                at = f"{where}[{p}][{k}]" if multi else f"{where}[{k}]"
                return f"{at}: this hole (interior ring) {advice}"
    return f"{where}: a hole {advice} (GEOS: {reason})"


def _make_valid(geom: dict[str, Any], index: int, builder: _Builder, where: str) -> dict[str, Any]:
    shp = shape(geom)
    if shp.is_valid:
        return geom
    reason = shapely.is_valid_reason(shp)
    polygonal = geom["type"] in _POLYGONS
    if polygonal and reason.startswith("Hole lies outside shell"):
        raise _UnrepairableError(_hole_outside(geom, where, reason))
    if geom["type"] == "MultiPolygon" and all(part.is_valid for part in shp.geoms):
        # Valid parts that overlap or share an edge: the union is what was meant, where
        # make_valid's linework would cut the overlap out.
        fixed = shapely.union_all(shp.geoms)
    else:
        fixed = shapely.make_valid(shp)
    if polygonal and shapely.area(fixed) == 0:
        raise _UnrepairableError(
            f"{where}: polygon has no area (collapses to lines; GEOS: {reason}); "
            "fix the ring or supply it as a LineString"
        )
    builder.repaired("made_valid", index, f"invalid geometry repaired with make_valid ({reason})")
    if fixed.geom_type != shp.geom_type and fixed.geom_type == "GeometryCollection":
        builder.warn(
            f"feature {index}: make_valid turned a {shp.geom_type} into a GeometryCollection"
        )
    out: dict[str, Any] = _lists(mapping(shapely.orient_polygons(fixed)))
    return out


def _split_lines(geom: dict[str, Any], index: int, builder: _Builder) -> dict[str, Any]:
    import antimeridian  # noqa: PLC0415 - only crossing geometries need it

    sequences = [geom["coordinates"]] if geom["type"] == "LineString" else geom["coordinates"]
    parts: list[list[list[float]]] = []
    for sequence in sequences:
        fixed = antimeridian.fix_line_string(shapely.LineString(sequence), great_circle=False)
        for piece in getattr(fixed, "geoms", [fixed]):
            coords = [[float(x), float(y)] for x, y in piece.coords]
            # A line that ends exactly on the far side of +/-180 leaves a zero-length stub.
            if any(p != coords[0] for p in coords):
                parts.append(coords)
    out = (
        {"type": "LineString", "coordinates": parts[0]}
        if len(parts) == 1
        else {"type": "MultiLineString", "coordinates": parts}
    )
    if out != geom:
        builder.repaired("antimeridian_split", index, _SPLIT)
    return out


def _split_polygons(
    geom: dict[str, Any], index: int, builder: _Builder, where: str
) -> dict[str, Any] | None:
    """Split a polygon crossing the antimeridian; None when antimeridian leaves it as is."""
    import antimeridian  # noqa: PLC0415 - only crossing geometries need it

    shp = shape(geom)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", antimeridian.FixWindingWarning)
        fixed = shape(antimeridian.fix_shape(shp, great_circle=False, fix_winding=True))
    if shapely.equals_exact(shapely.normalize(fixed), shapely.normalize(shp), tolerance=0):
        return None
    if any(issubclass(w.category, antimeridian.FixWindingWarning) for w in caught):
        builder.repaired("rewound", index, _REWOUND)
    builder.repaired("antimeridian_split", index, _SPLIT)
    return _make_valid(_lists(mapping(fixed)), index, builder, where)


def _repair(geom: dict[str, Any], index: int, builder: _Builder, where: str) -> dict[str, Any]:
    """Repair one geometry the careful way: wrap, split, rewind, make valid."""
    kind = geom["type"]
    if kind == "GeometryCollection":
        base = where.removesuffix("coordinates")
        members = [
            _repair(g, index, builder, f"{base}geometries[{i}].coordinates")
            for i, g in enumerate(geom["geometries"])
        ]
        return {"type": kind, "geometries": members}
    wrapped = _wrap_longitudes(geom)
    if wrapped:
        builder.repaired("longitude_wrapped", index, _WRAPPED, count=wrapped)
    if kind in ("Point", "MultiPoint"):
        return geom
    crossing = _crosses(geom)
    if kind in _LINES:
        if crossing:
            geom = _split_lines(geom, index, builder)
        return _make_valid(geom, index, builder, where) if _degenerate(geom) else geom
    if crossing:
        split = _split_polygons(geom, index, builder, where)
        if split is not None:
            return split
    for polygon in _polygons(geom):
        _rewind(polygon, index, builder)
    return _make_valid(geom, index, builder, where)


def _polygon_pass(jobs: list[tuple[int, dict[str, Any]]], builder: _Builder) -> list[int]:
    """Rewind all ``jobs`` polygons in one vectorised pass; return the invalid ones' positions."""
    if not jobs:
        return []
    rings: list[list[list[float]]] = []
    exterior: list[bool] = []
    ring_job: list[int] = []
    ring_polygon: list[int] = []
    polygon_job: list[int] = []
    for j, (_, geom) in enumerate(jobs):
        for polygon in _polygons(geom):
            for k, ring in enumerate(polygon):
                rings.append(ring)
                exterior.append(k == 0)
                ring_job.append(j)
                ring_polygon.append(len(polygon_job))
            polygon_job.append(j)
    lengths = np.fromiter(map(len, rings), dtype=np.intp, count=len(rings))
    coords = np.array(list(itertools.chain.from_iterable(rings)), dtype=np.float64)
    geoms = shapely.linearrings(coords, indices=np.repeat(np.arange(len(rings)), lengths))
    # GEOS's robust orientation test, not a float shoelace: slivers get it right.
    for r in np.flatnonzero(shapely.is_ccw(geoms) != np.array(exterior)).tolist():
        rings[r].reverse()
        builder.repaired("rewound", jobs[ring_job[r]][0], _REWOUND)
    polygons = shapely.polygons(geoms, indices=np.array(ring_polygon))
    shapes = shapely.multipolygons(polygons, indices=np.array(polygon_job))
    return [int(j) for j in np.flatnonzero(~shapely.is_valid(shapes))]


def _repair_all(
    kept: list[tuple[dict[str, Any], str, str]], walker: _Walker, builder: _Builder
) -> list[str]:
    problems: list[str] = []

    def attempt(
        index: int, fix: Callable[[dict[str, Any], int, _Builder, str], dict[str, Any]]
    ) -> None:
        feature, prefix, gpath = kept[index]
        where = prefix + _join(gpath, "coordinates")
        try:
            feature["geometry"] = fix(feature["geometry"], index, builder, where)
        except _UnrepairableError as exc:
            problems.append(str(exc))
        except (ValueError, shapely.errors.ShapelyError) as exc:
            problems.append(
                f"{where}: the geometry could not be repaired ({exc}); fix it in a GIS "
                "(e.g. QGIS's Fix geometries) and load it again"
            )

    jobs: list[tuple[int, dict[str, Any]]] = []
    wide = walker.wide
    for index, (feature, _, _) in enumerate(kept):
        geom = feature["geometry"]
        if geom is None:
            continue
        kind = geom["type"]
        if kind == "Point" and index not in wide:
            continue
        if kind == "GeometryCollection" or index in wide:
            attempt(index, _repair)
        elif kind in _POLYGONS:
            jobs.append((index, geom))
        elif kind in _LINES and _degenerate(geom):
            attempt(index, _make_valid)
    for j in _polygon_pass(jobs, builder):
        attempt(jobs[j][0], _make_valid)
    return problems
