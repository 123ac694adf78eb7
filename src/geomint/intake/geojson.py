"""Validate and repair parsed GeoJSON into one clean FeatureCollection in EPSG:4326."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import shapely
from shapely.geometry import mapping, shape

from geomint.intake.report import _Builder

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
_WGS84 = ("EPSG:4326", "CRS84", "OGC:1.3:CRS84", "EPSG::4326", "OGC::CRS84")
_Transform = Callable[[float, float], tuple[float, float]]


def _describe(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "false" if not value else "true"
    if isinstance(value, int | float):
        return "a number"
    if isinstance(value, str):
        shown = value if len(value) <= 40 else value[:37] + "..."
        return f'the string "{shown}"'
    return "an array" if isinstance(value, list) else "an object"


def _type_problem(value: Any, where: str, allowed: tuple[str, ...]) -> str | None:
    if value is None:
        return f"{where}: 'type' member required"
    if not isinstance(value, str):
        return f"{where}: 'type' member must be a string (found {_describe(value)})"
    if value in allowed:
        return None
    near = [t for t in _ALL_TYPES if t.lower() == value.lower()]
    if near:
        return f"{where}: type names are case-sensitive: {value!r} is not {near[0]!r}; fix the case"
    if value == "Topology":
        return (
            f"{where}: this is TopoJSON, not GeoJSON; convert it first "
            "(e.g. topojson-client's topo2geo or geopandas.read_file)"
        )
    return f"{where}: unknown type {value!r}; expected one of {', '.join(allowed)}"


class _Walker:
    def __init__(self, builder: _Builder, transform: _Transform | None) -> None:
        self.b = builder
        self.transform = transform
        self.problems: list[str] = []
        self.index = -1

    def fail(self, message: str) -> None:
        self.problems.append(message)

    # positions and arrays of them -------------------------------------------------

    def position(self, value: Any, path: str) -> list[float] | None:
        if not isinstance(value, list):
            self.fail(
                f"{path}: each position must be an array of numbers (found {_describe(value)})"
            )
            return None
        if len(value) < 2:
            self.fail(f"{path}: position must have at least 2 elements (found {len(value)})")
            return None
        for i, element in enumerate(value):
            if isinstance(element, list):
                self.fail(f"{path}[{i}]: found an array inside a position: nested too deeply")
                return None
            if isinstance(element, bool) or not isinstance(element, int | float):
                self.fail(
                    f"{path}[{i}]: each element of a position must be a number "
                    f"(found {_describe(element)}); write it as a JSON number"
                )
                return None
            if not math.isfinite(element):
                self.fail(f"{path}[{i}]: non-finite number ({element}) is not a valid coordinate")
                return None
        if len(value) > 3:
            self.b.warn(
                f"positions with {len(value)} elements found; extra ordinates dropped "
                "(RFC 7946 s3.1.1: SHOULD NOT extend positions beyond three elements)"
            )
        if len(value) > 2:
            self.b.repaired("dropped_dimensions", self.index, "Z/M ordinates dropped to 2D")
        lon, lat = float(value[0]), float(value[1])
        if self.transform is not None:
            lon, lat = self.transform(lon, lat)
        if not (-90 <= lat <= 90) or not (-360 <= lon <= 360):
            advice = (
                f"it looks like [lat, lng] order: GeoJSON positions are [lng, lat], so "
                f"write [{lat}, {lon}]"
                if abs(lon) <= 90 and abs(lat) <= 180
                else "if the data is projected, add its CRS"
            )
            self.fail(
                f"{path}: coordinate out of range (lon {lon}, lat {lat}); EPSG:4326 needs "
                f"-180<=lon<=180 and -90<=lat<=90; {advice}"
            )
            return None
        return [lon, lat]

    def array(self, value: Any, path: str, what: str, item: str) -> list[Any] | None:
        if not isinstance(value, list):
            self.fail(f"{path}: {what} must be an array of {item} (found {_describe(value)})")
            return None
        if value and not isinstance(value[0], list):
            self.fail(
                f"{path}: {what} must be an array of {item} (found {_describe(value[0])}): "
                "nested one level too shallowly"
            )
            return None
        return value

    def positions(self, value: Any, path: str, what: str) -> list[list[float]] | None:
        items = self.array(value, path, what, "positions")
        if items is None:
            return None
        out = [self.position(p, f"{path}[{i}]") for i, p in enumerate(items)]
        return None if any(p is None for p in out) else out  # type: ignore[return-value]

    def line(self, value: Any, path: str, what: str) -> list[list[float]] | None:
        out = self.positions(value, path, what)
        if out is not None and len(out) < 2:
            self.fail(f"{path}: {what} needs two or more positions (found {len(out)})")
            return None
        return out

    def ring(self, value: Any, path: str) -> list[list[float]] | None:
        if isinstance(value, list) and value and isinstance(value[0], list):
            first, last = value[0], value[-1]
            if len(first) != len(last) and len(value) >= 4:
                self.fail(
                    f"{path}: LinearRing not closed: last position has {len(last)} "
                    f"elements, first has {len(first)}; make them identical"
                )
                return None
        out = self.positions(value, path, "LinearRing")
        if out is None:
            return None
        if len(out) < 4 or out[0] != out[-1]:
            self.fail(
                f"{path}: LinearRing needs four or more positions and must be closed "
                f"(found {len(out)} positions, first {'=' if out and out[0] == out[-1] else '!='} "
                "last); LinearRing not closed or too short: repeat the first position at the end"
            )
            return None
        return out

    def rings(self, value: Any, path: str, what: str) -> list[list[list[float]]] | None:
        items = self.array(value, path, what, "linear rings")
        if items is None:
            return None
        if items and isinstance(items[0], list) and items[0] and not isinstance(items[0][0], list):
            self.fail(
                f"{path}: {what} must be an array of linear rings, found positions where rings "
                "were expected: nested one level too shallowly"
            )
            return None
        out = [self.ring(r, f"{path}[{i}]") for i, r in enumerate(items)]
        return None if any(r is None for r in out) else out  # type: ignore[return-value]

    # geometries ----------------------------------------------------------------

    def geometry(self, value: Any, path: str) -> dict[str, Any] | None:
        if not isinstance(value, dict):
            self.fail(f"{path}: a geometry must be an object or null (found {_describe(value)})")
            return None
        if "rings" in value or "paths" in value or ("x" in value and "y" in value):
            self.fail(f"{path}: this is Esri JSON, not GeoJSON; convert it (e.g. with ogr2ogr)")
            return None
        kind = value.get("type")
        problem = _type_problem(kind, path, GEOMETRY_TYPES)
        if problem or not isinstance(kind, str):
            self.fail(problem or f"{path}: 'type' member required")
            return None
        extra = sorted({"properties", "geometry", "features"} & value.keys())
        if extra:
            self.b.warn(f"geometry must not carry {extra} members (RFC 7946 s7.1); ignored")
        self.check_bbox(value, path)
        if kind == "GeometryCollection":
            return self.collection(value, path)
        if "coordinates" not in value:
            self.fail(f"{path}: 'coordinates' member required for a {kind}")
            return None
        coords = value["coordinates"]
        cpath = f"{path}.coordinates"
        if coords == []:
            self.b.warn(f"{path}: empty {kind} stored as a null geometry")
            return {"empty": True}
        out: Any
        if kind == "Point":
            if isinstance(coords, list) and coords and isinstance(coords[0], list):
                self.fail(
                    f"{cpath}: Point coordinates must be a single position "
                    "(found an array of arrays)"
                )
                return None
            out = self.position(coords, cpath)
        elif kind == "MultiPoint":
            out = self.positions(coords, cpath, "MultiPoint coordinates")
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
        return None if out is None else {"type": kind, "coordinates": out}

    def parts(self, value: Any, path: str, kind: str, each: Callable[[Any, str], Any]) -> Any:
        depth = 3 if kind == "MultiLineString" else 4
        items = self.array(value, path, f"{kind} coordinates", "parts")
        if items is None:
            return None
        probe: Any = items
        for level in range(depth):
            if not isinstance(probe, list) or not probe:
                break
            if not isinstance(probe[0], list) and level < depth - 1:
                self.fail(
                    f"{path}: {kind} coordinates nested too shallowly "
                    f"(found numbers at depth {level + 1} of {depth})"
                )
                return None
            probe = probe[0]
        kept = []
        for i, part in enumerate(items):
            if part == []:
                self.b.warn(f"{path}[{i}]: empty {kind} part dropped")
                continue
            kept.append(each(part, f"{path}[{i}]"))
        return None if any(p is None for p in kept) else kept

    def collection(self, value: dict[str, Any], path: str) -> dict[str, Any] | None:
        members = value.get("geometries")
        if not isinstance(members, list):
            self.fail(
                f"{path}: GeometryCollection.geometries must be an array "
                f"(found {_describe(members)})"
            )
            return None
        out: list[dict[str, Any]] = []
        for i, member in enumerate(members):
            mpath = f"{path}.geometries[{i}]"
            if not isinstance(member, dict):
                self.fail(
                    f"{mpath}: GeometryCollection.geometries must contain geometry objects "
                    f"(found {_describe(member)})"
                )
                continue
            geom = self.geometry(member, mpath)
            if geom is None or geom.get("empty"):
                continue
            if geom["type"] == "GeometryCollection":
                self.b.warn("nested GeometryCollection flattened (RFC 7946 s3.1.8: SHOULD avoid)")
                out.extend(geom["geometries"])
            else:
                out.append(geom)
        return {"type": "GeometryCollection", "geometries": out}

    def check_bbox(self, value: dict[str, Any], path: str) -> None:
        if "bbox" not in value:
            return
        bbox = value["bbox"]
        if not isinstance(bbox, list):
            self.b.warn(f"{path}.bbox must be an array of numbers; ignored")
        elif any(isinstance(v, bool) or not isinstance(v, int | float) for v in bbox):
            self.b.warn(f"{path}.bbox elements must be numbers; ignored")
        elif len(bbox) not in (4, 6):
            self.b.warn(f"{path}.bbox must have 2*n elements (found {len(bbox)}); ignored")

    # features -------------------------------------------------------------------

    def feature(self, value: Any, path: str) -> dict[str, Any] | None:
        if not isinstance(value, dict):
            self.fail(f"{path} is {_describe(value)}, every feature must be an object")
            return None
        problem = _type_problem(value.get("type"), path, ("Feature",))
        if problem:
            if isinstance(value.get("type"), str) and "unknown type" in problem:
                problem = f"{path}: feature type {value['type']!r} is not 'Feature'"
            self.fail(problem)
        props = value.get("properties", None)
        if "properties" not in value:
            self.b.warn("features without a 'properties' member were given empty properties")
        if props is not None and not isinstance(props, dict):
            self.fail(f"{path}: 'properties' must be an object or null (found {_describe(props)})")
        out: dict[str, Any] = {"type": "Feature", "properties": props or {}}
        if "id" in value:
            fid = value["id"]
            if isinstance(fid, bool) or not isinstance(fid, str | int | float):
                self.fail(
                    f"{path}: Feature 'id' must be a string or number (found {_describe(fid)})"
                )
            else:
                out["id"] = fid
        extra = sorted({"features", "coordinates"} & value.keys())
        if extra:
            self.b.warn(f"Feature must not carry {extra} members (RFC 7946 s7.1); ignored")
        self.check_bbox(value, path)
        if "geometry" not in value:
            self.fail(f"{path}: 'geometry' member required (use null for no geometry)")
            return None
        geom = value["geometry"]
        out["geometry"] = None if geom is None else self.geometry(geom, f"{path}.geometry")
        return out


def _wrap(value: Any, walker: _Walker) -> list[tuple[Any, str]]:
    """Return the features to walk with their paths, failing on a bad root."""
    if not isinstance(value, dict):
        walker.fail(f"root must be a GeoJSON object (found {_describe(value)})")
        return []
    if "features" in value and ("geometryType" in value or "spatialReference" in value):
        walker.fail("this is Esri JSON, not GeoJSON; convert it (e.g. ogr2ogr -f GeoJSON)")
        return []
    kind = value.get("type")
    problem = _type_problem(kind, "root", _ALL_TYPES)
    if problem:
        walker.fail(problem)
        return []
    walker.check_bbox(value, "root")
    if kind == "FeatureCollection":
        extra = sorted({"properties", "coordinates", "geometry"} & value.keys())
        if extra:
            walker.b.warn(f"FeatureCollection must not carry {extra} members; ignored")
        if "features" not in value:
            walker.fail("FeatureCollection requires a 'features' member (an array)")
            return []
        features = value["features"]
        if not isinstance(features, list):
            walker.fail(f"'features' must be an array (found {_describe(features)})")
            return []
        return [(f, f"features[{i}]") for i, f in enumerate(features)]
    walker.b.source += f" (a bare {kind}, wrapped into a FeatureCollection)"
    if kind == "Feature":
        return [(value, "features[0]")]
    return [({"type": "Feature", "properties": {}, "geometry": value}, "features[0]")]


def _crs_transform(value: Any, walker: _Walker) -> _Transform | None:
    if not isinstance(value, dict) or "crs" not in value:
        return None
    crs = value["crs"]
    name = crs.get("properties", {}).get("name") if isinstance(crs, dict) else None
    if not isinstance(name, str):
        walker.fail("the legacy 'crs' member has no properties.name; remove it or name the CRS")
        return None
    if any(name.upper().endswith(w) for w in _WGS84):
        walker.b.warn(f"legacy 'crs' member ({name}) is WGS 84 longitude/latitude; removed")
        return None
    import pyproj  # noqa: PLC0415 - only reprojecting files pay for pyproj

    try:
        source = pyproj.CRS.from_user_input(name)
    except pyproj.exceptions.CRSError:
        walker.fail(f"the 'crs' member names {name!r}, which is not a recognised CRS")
        return None
    transformer = pyproj.Transformer.from_crs(source, "EPSG:4326", always_xy=True)
    walker.b.repaired("reprojected", -1, f"reprojected from {name} to EPSG:4326")

    def transform(x: float, y: float) -> tuple[float, float]:
        lon, lat = transformer.transform(x, y)
        return float(lon), float(lat)

    return transform


def normalise(values: list[Any], builder: _Builder) -> tuple[dict[str, Any], list[str]]:
    """Validate parsed values; return the clean FeatureCollection and the problems found."""
    walker = _Walker(builder, None)
    features: list[dict[str, Any]] = []
    counter = 0
    for value in values:
        walker.transform = _crs_transform(value, walker)
        for item, path in _wrap(_lists(value), walker):
            # Line-delimited input: number features across lines, not within each.
            where = f"features[{counter}]" if len(values) > 1 else path
            walker.index = counter
            counter += 1
            feature = walker.feature(item, where)
            if feature is not None:
                features.append(feature)
    if walker.problems:
        return {}, walker.problems
    for index, feature in enumerate(features):
        geom = feature["geometry"]
        if geom is None or geom.get("empty"):
            feature["geometry"] = None
            continue
        try:
            feature["geometry"] = _repair(geom, index, builder)
        except ValueError as exc:
            walker.fail(f"features[{index}].geometry: {exc}")
    return {"type": "FeatureCollection", "features": features}, walker.problems


def _rewind(polygon: list[list[list[float]]], index: int, builder: _Builder) -> None:
    for i, ring in enumerate(polygon):
        # GEOS's robust orientation test, not a float shoelace: slivers get it right.
        ccw = bool(shapely.is_ccw(shapely.linearrings(ring)))
        if ccw == (i > 0):
            ring.reverse()
            builder.repaired("rewound", index, "rings rewound to RFC 7946 winding (exterior CCW)")


def _crosses(coords: Any) -> bool:
    flat = shapely.get_coordinates(shape({"type": "MultiLineString", "coordinates": coords}))
    return bool(len(flat)) and (
        bool((abs(flat[:, 0]) > 180).any()) or bool((abs(flat[1:, 0] - flat[:-1, 0]) > 180).any())
    )


def _repair(geom: dict[str, Any], index: int, builder: _Builder) -> dict[str, Any]:
    kind = geom["type"]
    if kind == "GeometryCollection":
        members = [_repair(g, index, builder) for g in geom["geometries"]]
        return {"type": kind, "geometries": members}
    coords = geom["coordinates"]
    polygons = [coords] if kind == "Polygon" else coords if kind == "MultiPolygon" else []
    crossing = bool(polygons) and any(_crosses(p) for p in polygons)
    if not crossing:
        # Planar winding means nothing for a ring that wraps the globe; antimeridian
        # judges those itself below.
        for polygon in polygons:
            _rewind(polygon, index, builder)
    shp = shape(geom)
    if crossing:
        import antimeridian  # noqa: PLC0415 - only crossing polygons need it

        fixed = shape(antimeridian.fix_shape(shp, great_circle=False, fix_winding=True))
        if not shapely.equals(shapely.normalize(fixed), shapely.normalize(shp)):
            builder.repaired(
                "antimeridian_split", index, "polygon crosses the antimeridian; split at +/-180"
            )
            shp = fixed
    if not shp.is_valid:
        reason = shapely.is_valid_reason(shp)
        fixed = shapely.make_valid(shp)
        if polygons and shapely.area(fixed) == 0:
            raise ValueError(
                f"polygon has no area (collapses to lines; GEOS: {reason}); "
                "fix the ring or supply it as a LineString"
            )
        builder.repaired(
            "made_valid", index, f"invalid geometry repaired with make_valid ({reason})"
        )
        if fixed.geom_type != shp.geom_type and fixed.geom_type == "GeometryCollection":
            builder.warn(
                f"feature {index}: make_valid turned a {shp.geom_type} into a GeometryCollection"
            )
        shp = shapely.orient_polygons(fixed) if hasattr(shapely, "orient_polygons") else fixed
    out: dict[str, Any] = _lists(mapping(shp))
    return out


def _lists(value: Any) -> Any:
    if isinstance(value, tuple | list):
        return [_lists(v) for v in value]
    if isinstance(value, dict):
        return {k: _lists(v) for k, v in value.items()}
    return value
