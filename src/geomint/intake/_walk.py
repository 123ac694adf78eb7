"""The validating walk: one pass over features and geometries that never raises.

The :class:`Walker` checks every position, coordinate array, geometry, Feature and
property value it is handed, collects each problem with its path, and builds clean
copies (positions as ``[lon, lat]`` floats, empty geometries as :data:`EMPTY`) for the
repairs to work on. Plain in-range 2D positions take a fast path.
"""

from __future__ import annotations

import difflib
import math
from collections.abc import Callable
from typing import Any

from geomint.intake._messages import (
    at,
    describe,
    join,
    nonfinite,
    nonfinite_problem,
    pos,
    range_problem,
    short,
)
from geomint.intake._parse import MAX_DEPTH, TOO_DEEP, member_path
from geomint.intake._type_names import GEOMETRY_TYPES, SHAPES, type_problem
from geomint.intake.report import _Builder

__all__ = ["EMPTY", "Transform", "Walker"]

_GEOMETRY_SET = frozenset(GEOMETRY_TYPES)
_FEATURE_COMMON = frozenset({"type", "properties", "geometry"})
_FEATURE_KNOWN = frozenset({"type", "id", "properties", "geometry", "bbox", "crs"})
_FEATURE_IGNORED = frozenset({"features", "coordinates"})
_GEOMETRY_KNOWN = frozenset({"type", "coordinates", "geometries", "bbox", "crs"})
_GEOMETRY_IGNORED = frozenset({"properties", "geometry", "features"})
# Reprojects one position from the CRS a legacy 'crs' member names to (lon, lat).
Transform = Callable[[float, float], tuple[float, float]]
# Marks an empty geometry (stored as null), and a member that is absent.
EMPTY: dict[str, Any] = {"type": "empty"}


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


class Walker:
    """One validating pass: collects problems, builds clean copies, never raises."""

    def __init__(self, builder: _Builder) -> None:
        self.b = builder
        self.transform: Transform | None = None
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
                f"{path}: a position must be an array of numbers (found {describe(value)}); "
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
                    f"(found {describe(element)}); write it as a JSON number, without quotes"
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
                self.fail(f"{path}[{i}]: {nonfinite_problem(element)}")
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
                    f"{path}: position {pos(numbers)} cannot be reprojected from "
                    f"{self.crs_name} to longitude/latitude (it lies outside that CRS's "
                    "area); check the CRS named in the 'crs' member"
                )
                return None
        if not (-90 <= lat <= 90 and -360 <= lon <= 360):
            self.fail(f"{path}: {range_problem(lon, lat)}")
            return None
        if not -180 <= lon <= 180:
            self.wide.add(self.index)
        return [lon, lat]

    def array(self, value: Any, path: str, what: str, item: str, hint: str) -> Any:
        if not isinstance(value, list | tuple):
            self.fail(
                f"{path}: {what} must be an array of {item} (found {describe(value)}); {hint}"
            )
            return None
        if value and not isinstance(value[0], list | tuple):
            self.fail(
                f"{path}: {what} must be an array of {item} (found {describe(value[0])}): "
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
        hint = f"a {what} is {SHAPES['LineString']}; for a single location use a Point"
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
                f"{path}: LinearRing not closed (first != last: {pos(out[0])} vs "
                f"{pos(out[-1])}); repeat the first position {pos(out[0])} at the end"
            )
            return None
        return out

    def rings(self, value: Any, path: str, what: str) -> list[list[list[float]]] | None:
        hint = f"a Polygon is {SHAPES['Polygon']}"
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
        hint = f"a {kind} is {SHAPES[kind]}"
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
        """Return a clean geometry, ``EMPTY`` for an empty one, or None on a problem."""
        if not isinstance(value, dict):
            self.fail(
                f"{at(path)}: a geometry must be an object or null (found {describe(value)}); "
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
                self.fail(f"{short(path)}: {TOO_DEEP}")
                return None
            return self.collection(value, path, depth)
        coords = value.get("coordinates", EMPTY)
        if kind == "Point" and self.transform is None:
            out: Any = _fast_position(coords)
            if out is not None:
                return {"type": kind, "coordinates": out}
        if coords is EMPTY:
            self.fail(
                f"{at(path)}: 'coordinates' member required for a {kind}; "
                f'add it, e.g. "coordinates": {SHAPES[kind]}'
            )
            return None
        if isinstance(coords, list | tuple) and not coords:
            return EMPTY
        cpath = join(path, "coordinates")
        if kind == "Point":
            if isinstance(coords, list | tuple) and isinstance(coords[0], list | tuple):
                self.fail(
                    f"{cpath}: Point coordinates must be a single position (found an array "
                    "of arrays); a Point is [lon, lat]; for several points use a MultiPoint"
                )
                return None
            out = self.position(coords, cpath)
        elif kind == "MultiPoint":
            hint = f"a MultiPoint is {SHAPES['MultiPoint']}; for one position use a Point"
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
        return {"type": kind, "coordinates": out} if out else EMPTY

    def geometry_type(self, value: dict[str, Any], path: str) -> str:
        if "coordinates" not in value and ({"rings", "paths"} & value.keys() or "x" in value):
            return (
                f"{at(path)}: this is an Esri JSON geometry, not GeoJSON; convert the file "
                "(e.g. ogr2ogr -f GeoJSON out.geojson in.json)"
            )
        kind = value.get("type")
        problem = type_problem(kind, at(path), GEOMETRY_TYPES, "Point")
        return problem or f"{at(path)}: 'type' member must be a geometry type name"

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
                f"{at(path)}: GeometryCollection.geometries must be an array "
                f'(found {describe(members)}); write "geometries": [{{"type": ...}}, ...]'
            )
            return None
        out: list[dict[str, Any]] = []
        failed = False
        for i, member in enumerate(members):
            mpath = f"{join(path, 'geometries')}[{i}]"
            if not isinstance(member, dict):
                self.fail(
                    f"{mpath}: GeometryCollection.geometries must contain geometry objects "
                    f"(found {describe(member)}); remove it or write a geometry object"
                )
                failed = True
                continue
            geom = self.geometry(member, mpath, depth + 2, top=False)
            if geom is None:
                failed = True
            elif geom is EMPTY:
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
        return {"type": "GeometryCollection", "geometries": out} if out else EMPTY

    def bbox(self, value: dict[str, Any], path: str) -> list[float] | None:
        """Check a ``bbox`` member; return it as [west, south, east, north] if usable."""
        if "bbox" not in value:
            return None
        box = value["bbox"]
        where = join(path, "bbox")
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
                f"{short(path)}: non-finite number ({nonfinite(item)}) cannot be stored in "
                "JSON; replace it with a finite number or null"
            )
            return item
        if isinstance(item, str):
            if not item.isascii():
                self.text(item, path)
            return item
        if isinstance(item, dict | list | tuple):
            if depth > MAX_DEPTH:
                self.fail(f"{short(path)}: {TOO_DEEP}; flatten the value or store it as text")
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
                f"{short(at(where))}: the {what} has an unpaired surrogate "
                f"(\\u{ord(text[exc.start]):04x} at character {exc.start}), which is not a "
                "Unicode character and cannot be stored as UTF-8; remove it or replace it "
                "with the intended character"
            )

    # features -------------------------------------------------------------------

    def feature(self, value: Any, path: str, depth: int) -> dict[str, Any] | None:
        if not isinstance(value, dict):
            self.fail(
                f"{at(path)} is {describe(value)}, every feature must be an object; remove "
                'it or write it as {"type": "Feature", "properties": {}, "geometry": ...}'
            )
            return None
        kind = value.get("type")
        if kind != "Feature":
            self.fail(self.feature_type(kind, path))
            if kind in _GEOMETRY_SET:
                return None
        props = value.get("properties", EMPTY)
        out: dict[str, Any] = {"type": "Feature", "properties": {}}
        if isinstance(props, dict) and props is not EMPTY:
            out["properties"] = self.members(props, join(path, "properties"), depth + 2)
        elif props is EMPTY:
            self.b.warn("features without a 'properties' member were given empty properties")
        elif props is not None:
            self.fail(
                f"{at(path)}: 'properties' must be an object or null (found {describe(props)}); "
                'put the values in an object such as {"name": ...}, or write null'
            )
        if not _FEATURE_COMMON.issuperset(value):
            self.feature_members(value, path, depth, out)
        geom = value.get("geometry", EMPTY)
        if geom is EMPTY:
            self.fail(f"{at(path)}: 'geometry' member required (use null for no geometry)")
            return None
        if geom is not None:
            geom = self.geometry(geom, join(path, "geometry"), depth + 1, top=True)
            if geom is None:
                return None
            if geom is EMPTY:
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
                    f"{at(path)}: Feature 'id' must be a string or number (found "
                    f"{describe(fid)}); use a string or number, or move it into 'properties'"
                )
            elif isinstance(fid, float) and not math.isfinite(fid):
                self.fail(
                    f"{at(path)}: Feature 'id' must be a finite number (found "
                    f"{nonfinite(fid)}); use a string or a finite number"
                )
            else:
                if isinstance(fid, str) and not fid.isascii():
                    self.text(fid, join(path, "id"))
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
                f"{at(path)}: feature type {kind!r} is not 'Feature': a FeatureCollection "
                'holds Features, so wrap it as {"type": "Feature", "properties": {}, '
                f'"geometry": <the {kind}>}}'
            )
        problem = type_problem(kind, at(path), ("Feature",), "Feature")
        if isinstance(kind, str) and problem and "unknown type" in problem:
            close = difflib.get_close_matches(kind, ("Feature",), n=1, cutoff=0.6)
            guess = " (did you mean 'Feature'?)" if close else ""
            problem = f"{at(path)}: feature type {kind!r} is not 'Feature'{guess}"
        return problem or f"{at(path)}: 'type' member required"
