"""What a model reads of a layer: a handle and a digest, never the bytes.

A digest holds counts, geometry types, the bbox, property names with their types, and a
few sample rows with long text cut, so it stays small however large the layer is. The
full FeatureCollection goes to the UI and to the sandbox by reference.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Mapping
from typing import Any, Final

from geomint.geo.raster import Raster
from geomint.intake.report import json_type

__all__ = [
    "BBox",
    "cut_to_budget",
    "digest_bbox",
    "digest_count",
    "entry_digest",
    "json_size",
    "raster_digest",
]

#: ``(west, south, east, north)`` in degrees.
BBox = tuple[float, float, float, float]

_SAMPLE_ROWS: Final = 3
_MAX_PROPERTIES: Final = 40
_TEXT_CHARS: Final = 80


def raster_digest(raster: Raster) -> dict[str, Any]:
    """Describe a raster for a model: its grid, its values' range and sum, and its bbox in
    longitude and latitude (what the map fits to)."""
    described = raster.describe()
    digest: dict[str, Any] = {"raster": described, "bbox": _lonlat_bbox(raster)}
    return digest


def _lonlat_bbox(raster: Raster) -> list[float] | None:
    import pyproj  # noqa: PLC0415

    west, south, east, north = raster.bounds
    try:
        transformer = pyproj.Transformer.from_crs(raster.crs, 4326, always_xy=True)
        lon0, lat0, lon1, lat1 = transformer.transform_bounds(west, south, east, north)
    except pyproj.exceptions.ProjError:
        return None
    values = [lon0, lat0, lon1, lat1]
    if not all(math.isfinite(v) for v in values):
        return None
    return [round(v, 6) for v in values]


def entry_digest(data: Mapping[str, Any], *, sample_rows: int = _SAMPLE_ROWS) -> dict[str, Any]:
    """Describe a FeatureCollection for a model in a few hundred characters.

    Example:
        >>> fc = {"type": "FeatureCollection", "features": [{"type": "Feature",
        ...       "geometry": {"type": "Point", "coordinates": [24.94, 60.17]},
        ...       "properties": {"name": "Kiasma", "category": "museum"}}]}
        >>> d = entry_digest(fc)
        >>> d["feature_count"], d["bbox"], d["properties"]
        (1, [24.94, 60.17, 24.94, 60.17], {'name': 'string', 'category': 'string'})
    """
    features = data.get("features") or []
    types: dict[str, int] = {}
    west = south = math.inf
    east = north = -math.inf
    properties: dict[str, str] = {}
    for feature in features:
        geometry = feature.get("geometry") if isinstance(feature, Mapping) else None
        name = geometry.get("type", "null") if isinstance(geometry, Mapping) else "null"
        types[name] = types.get(name, 0) + 1
        if isinstance(geometry, Mapping):
            for x, y in _positions(geometry):
                west, east = min(west, x), max(east, x)
                south, north = min(south, y), max(north, y)
        props = feature.get("properties") if isinstance(feature, Mapping) else None
        if isinstance(props, Mapping):
            for raw_key, value in props.items():
                key = _name(raw_key)
                if len(properties) >= _MAX_PROPERTIES and key not in properties:
                    continue
                kind = json_type(value)
                seen = properties.get(key)
                if seen is None or seen == "null":
                    properties[key] = kind
                elif kind not in ("null", seen):
                    properties[key] = "mixed"
    digest: dict[str, Any] = {
        "feature_count": len(features),
        "geometry_types": types,
        "bbox": None
        if west is math.inf
        else [_round(west), _round(south), _round(east), _round(north)],
        "properties": properties,
        "sample": [_sample(f) for f in features[:sample_rows]],
    }
    extra = sorted(_name(k) for k in data if k not in ("type", "features"))
    if extra:
        digest["members"] = extra[:20]
    return digest


def digest_bbox(digest: Mapping[str, Any]) -> BBox | None:
    """The digest's ``bbox`` when it is four numbers in lon/lat range, else None.

    Example:
        >>> digest_bbox({"bbox": [24.9, 60.1, 25.0, 60.2]})
        (24.9, 60.1, 25.0, 60.2)
        >>> digest_bbox({"bbox": [1, 2, 3]}) is None, digest_bbox({}) is None
        (True, True)
    """
    value = digest.get("bbox")
    if not (isinstance(value, list | tuple) and len(value) == 4):
        return None
    if not all(isinstance(v, int | float) and not isinstance(v, bool) for v in value):
        return None
    west, south, east, north = (float(v) for v in value)
    if not (-180 <= west <= 180 and -180 <= east <= 180 and -90 <= south <= north <= 90):
        return None
    return (west, south, east, north)


def digest_count(digest: Mapping[str, Any]) -> int | None:
    """The digest's ``feature_count`` when it is a count, else None.

    Example:
        >>> digest_count({"feature_count": 3}), digest_count({"feature_count": "3"})
        (3, None)
    """
    value = digest.get("feature_count")
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _positions(geometry: Mapping[str, Any]) -> Iterable[tuple[float, float]]:
    if geometry.get("type") == "GeometryCollection":
        for part in geometry.get("geometries") or []:
            if isinstance(part, Mapping):
                yield from _positions(part)
        return
    stack = [geometry.get("coordinates")]
    while stack:
        item = stack.pop()
        if not isinstance(item, list | tuple) or not item:
            continue
        if isinstance(item[0], int | float) and len(item) >= 2:
            try:
                x, y = float(item[0]), float(item[1])
            except (OverflowError, TypeError, ValueError):
                continue  # not a position a map can show; intake refuses such data
            if math.isfinite(x) and math.isfinite(y):
                yield x, y
        else:
            stack.extend(item)


def _name(key: object) -> str:
    text = str(key)
    return text if len(text) <= _TEXT_CHARS else text[: _TEXT_CHARS - 1] + "…"


def _round(value: float) -> float:
    return round(value, 6)


def _sample(feature: Any) -> dict[str, Any]:
    props = feature.get("properties") if isinstance(feature, Mapping) else None
    if not isinstance(props, Mapping):
        return {}
    return {_name(k): _short(v) for k, v in list(props.items())[:12]}


def _short(value: Any) -> Any:
    if isinstance(value, str):
        return value if len(value) <= _TEXT_CHARS else value[: _TEXT_CHARS - 1] + "…"
    if isinstance(value, list | dict):
        text = json.dumps(value, ensure_ascii=False, default=str)
        return value if len(text) <= _TEXT_CHARS else text[: _TEXT_CHARS - 1] + "…"
    return value


def cut_to_budget(value: Any, budget: int) -> Any:
    """Shrink a JSON value until it fits: drop sample rows, then shorten lists, then text.

    The result says what was cut (``"truncated": true`` and a note) rather than hiding it.
    """
    if json_size(value) <= budget:
        return value
    if isinstance(value, dict):
        trimmed = dict(value)
        for key in ("sample", "rows", "members"):
            if key in trimmed and json_size(trimmed) > budget:
                trimmed.pop(key)
                trimmed["truncated"] = True
        if json_size(trimmed) <= budget:
            return trimmed
        # Keep keys in order while they fit, each cut to a share of the budget; never
        # measure more keys than can be kept (a result may have a million).
        share = max(budget // max(min(len(trimmed), 20), 1), 40)
        out: dict[str, Any] = {}
        used = 40  # braces, and the truncation marks added below
        for key, item in trimmed.items():
            part = cut_to_budget(item, share)
            size = (
                json_size(part) + json_size(str(key)) + 4
            )  # ": " and ", " as json.dumps spaces them
            if used + size > budget:
                out["truncated"] = True
                out["keys_total"] = len(trimmed)
                break
            out[str(key)] = part
            used += size
        return out
    if isinstance(value, list):
        kept: list[Any] = []
        used = 60
        for item in value:
            part = cut_to_budget(item, max(budget // 4, 40))
            size = json_size(part) + 2
            if used + size > budget:
                break
            kept.append(part)
            used += size
        return {"items": kept, "total": len(value), "truncated": True}
    if isinstance(value, str):
        return _head(value, budget)
    return value


def _head(text: str, budget: int) -> str:
    """The start of ``text``, marked cut, whose JSON form fits ``budget`` (escapes count)."""
    head = text[: max(budget - 3, 1)]
    while len(head) > 1 and (size := json_size(head + "…")) > budget:
        # Escaped quotes and backslashes make the JSON longer than the text: cut in proportion.
        head = head[: max(min(len(head) - 1, len(head) * budget // size), 1)]
    return head + "…"


def json_size(value: Any) -> int:
    """The length of ``value`` as compact JSON, as the model is sent it."""
    return len(json.dumps(value, ensure_ascii=False, separators=(",", ":"), default=str))
