"""Nominatim's ``/search`` answers (``format=jsonv2``) as place and boundary Features.

A result names its OSM object (``osm_type``, ``osm_id``), what it is (``category`` -- the
``class`` of the other formats -- ``type`` and ``addresstype``), where (``lat``/``lon`` as
text, ``boundingbox`` as south, north, west, east), how important it is (``importance``,
0..1) and, with ``polygon_geojson=1``, its outline (``geojson``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Final

from geomint.providers.base import LonLat
from geomint.providers.osm._service import NAME

__all__ = ["MAX_LIMIT", "boundary_features", "place_features", "viewbox"]

#: The most results Nominatim gives for one search.
MAX_LIMIT: Final = 40
#: Half the side of the box Nominatim is asked to prefer around ``near``, in degrees.
_NEAR_BOX_DEG: Final = 0.25
#: Nominatim's administrative address types, and the boundary kinds geomint names them by.
_ADMIN_KINDS: Final = {
    "country": "country",
    "state": "region",
    "region": "region",
    "province": "region",
    "state_district": "region",
    "county": "county",
    "municipality": "city",
    "city": "city",
    "town": "town",
    "village": "village",
    "hamlet": "village",
    "city_district": "district",
    "district": "district",
    "borough": "district",
    "suburb": "district",
    "quarter": "district",
    "neighbourhood": "neighbourhood",
}


def viewbox(near: LonLat) -> str:
    """The ``viewbox`` (two corners, ``lon,lat,lon,lat``) of a box around ``near``.

    Example:
        >>> viewbox((24.94, 60.17))
        '24.690000,60.420000,25.190000,59.920000'
    """
    lon, lat = near
    d = _NEAR_BOX_DEG
    return f"{lon - d:.6f},{lat + d:.6f},{lon + d:.6f},{lat - d:.6f}"


def _bbox(item: Mapping[str, Any]) -> list[float] | None:
    try:
        south, north, west, east = (float(v) for v in item["boundingbox"])
    except (KeyError, TypeError, ValueError):
        return None
    return [west, south, east, north]


def _what(item: Mapping[str, Any]) -> tuple[str, str, str]:
    return (
        str(item.get("category") or item.get("class") or ""),
        str(item.get("type") or ""),
        str(item.get("addresstype") or ""),
    )


def _category(item: Mapping[str, Any]) -> tuple[str, list[str]]:
    """A result's category ('city' for a city's boundary) and everything it is."""
    osm_class, osm_type, address_type = _what(item)
    main = osm_type
    if (osm_class in ("boundary", "place") and address_type) or osm_type in ("yes", ""):
        main = address_type or osm_type or osm_class
    categories = list(dict.fromkeys(c for c in (main, osm_type, osm_class) if c))
    return main or "place", categories


def _kind(item: Mapping[str, Any]) -> str:
    osm_class, osm_type, address_type = _what(item)
    if osm_class in ("boundary", "place"):
        kind = _ADMIN_KINDS.get(address_type) or _ADMIN_KINDS.get(osm_type) or address_type
    else:
        kind = osm_type or address_type
    return kind or osm_class or "area"


def _id(item: Mapping[str, Any]) -> str:
    return f"osm:{item.get('osm_type')}/{item.get('osm_id')}"


def _name(item: Mapping[str, Any]) -> str | None:
    display = str(item.get("display_name") or "")
    return str(item.get("name") or "") or display.split(",", maxsplit=1)[0] or None


def place_features(items: Sequence[Mapping[str, Any]], limit: int) -> list[dict[str, Any]]:
    """Place Features, in Nominatim's order, at most ``limit``.

    ``score`` is Nominatim's ``importance`` (0..1), held at or under the score of the
    result before it, so that it falls with Nominatim's rank; ``importance`` keeps the
    number Nominatim gave.
    """
    features: list[dict[str, Any]] = []
    ceiling = 1.0
    for item in items:
        try:
            lon, lat = float(item["lon"]), float(item["lat"])
        except (KeyError, TypeError, ValueError):
            continue
        try:
            importance = max(0.0, min(float(item.get("importance") or 0.0), 1.0))
        except (TypeError, ValueError):
            importance = 0.0
        ceiling = min(ceiling, importance)
        main, categories = _category(item)
        given = item.get("address")
        address: Mapping[str, Any] = given if isinstance(given, Mapping) else {}
        props: dict[str, Any] = {
            "id": _id(item),
            "name": _name(item),
            "category": main,
            "categories": categories,
            "address": str(item.get("display_name") or "") or None,
            "score": round(ceiling, 3),
            "importance": round(importance, 6),
            "provider": NAME,
        }
        if address.get("country_code"):
            props["country_code"] = str(address["country_code"]).upper()
        if address:
            props["address_parts"] = {str(k): str(v) for k, v in address.items()}
        box = _bbox(item)
        if box:
            props["bbox"] = box
        features.append(
            {
                "type": "Feature",
                "geometry": {"type": "Point", "coordinates": [round(lon, 7), round(lat, 7)]},
                "properties": props,
            }
        )
        if len(features) >= limit:
            break
    return features


def boundary_features(
    items: Sequence[Mapping[str, Any]],
) -> tuple[list[dict[str, Any]], list[str]]:
    """Boundary Features of the results that have a (Multi)Polygon, and the ids of those
    that are only a point or a line."""
    features: list[dict[str, Any]] = []
    others: list[str] = []
    for item in items:
        geometry = item.get("geojson")
        kind = geometry.get("type") if isinstance(geometry, Mapping) else None
        if kind not in ("Polygon", "MultiPolygon"):
            others.append(_id(item))
            continue
        assert isinstance(geometry, Mapping)
        props: dict[str, Any] = {
            "id": _id(item),
            "name": _name(item),
            "kind": _kind(item),
            "display_name": item.get("display_name"),
            "provider": NAME,
        }
        box = _bbox(item)
        if box:
            props["bbox"] = box
        features.append({"type": "Feature", "geometry": dict(geometry), "properties": props})
    return features, others
