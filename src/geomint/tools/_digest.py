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

__all__ = ["cut_to_budget", "entry_digest"]

_SAMPLE_ROWS: Final = 3
_MAX_PROPERTIES: Final = 40
_TEXT_CHARS: Final = 80


def entry_digest(data: Mapping[str, Any], *, sample_rows: int = _SAMPLE_ROWS) -> dict[str, Any]:
    """Describe a FeatureCollection for a model in a few hundred characters.

    Example:
        >>> fc = {"type": "FeatureCollection", "features": [{"type": "Feature",
        ...       "geometry": {"type": "Point", "coordinates": [24.94, 60.17]},
        ...       "properties": {"name": "Kiasma", "category": "museum"}}]}
        >>> d = entry_digest(fc)
        >>> d["feature_count"], d["bbox"], d["properties"]
        (1, [24.94, 60.17, 24.94, 60.17], {'name': 'text', 'category': 'text'})
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
            for key, value in props.items():
                if len(properties) >= _MAX_PROPERTIES and key not in properties:
                    continue
                kind = _type_name(value)
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
    extra = sorted(k for k in data if k not in ("type", "features"))
    if extra:
        digest["members"] = extra
    return digest


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
            yield float(item[0]), float(item[1])
        else:
            stack.extend(item)


def _round(value: float) -> float:
    return round(value, 6)


def _type_name(value: object) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, int | float):
        return "number"
    if isinstance(value, str):
        return "text"
    return "list" if isinstance(value, list) else "object"


def _sample(feature: Any) -> dict[str, Any]:
    props = feature.get("properties") if isinstance(feature, Mapping) else None
    if not isinstance(props, Mapping):
        return {}
    return {str(k)[:_TEXT_CHARS]: _short(v) for k, v in list(props.items())[:12]}


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
    if _size(value) <= budget:
        return value
    if isinstance(value, dict):
        trimmed = dict(value)
        for key in ("sample", "rows", "members"):
            if key in trimmed and _size(trimmed) > budget:
                trimmed.pop(key)
                trimmed["truncated"] = True
        if _size(trimmed) <= budget:
            return trimmed
        keys = list(trimmed)
        share = max(budget // max(len(keys), 1), 40)
        out = {k: cut_to_budget(trimmed[k], share) for k in keys}
        out["truncated"] = True
        if _size(out) <= budget:
            return out
        text = json.dumps(out, ensure_ascii=False, default=str)
        head = _head(text, budget - 30)
        return {"truncated": True, "start": head}
    if isinstance(value, list):
        kept: list[Any] = []
        for item in value:
            if _size([*kept, item]) > budget - 60:
                break
            kept.append(item)
        return {"items": kept, "total": len(value), "truncated": True}
    if isinstance(value, str):
        return _head(value, budget)
    return value


def _head(text: str, budget: int) -> str:
    """The start of ``text``, marked cut, whose JSON form fits ``budget`` (escapes count)."""
    head = text[: max(budget - 3, 1)]
    while len(head) > 1 and (size := _size(head + "…")) > budget:
        # Escaped quotes and backslashes make the JSON longer than the text: cut in proportion.
        head = head[: max(min(len(head) - 1, len(head) * budget // size), 1)]
    return head + "…"


def _size(value: Any) -> int:
    return len(json.dumps(value, ensure_ascii=False, separators=(",", ":"), default=str))
