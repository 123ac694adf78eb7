"""Reading TomTom's answers into geomint's shapes, and shaping areas for its geometry search.

Everything here is pure: a TomTom search result becomes a place Feature, a route a
LineString with its summary and sections, an Incident Details entry an incident Feature,
an Additional Data answer a (Multi)Polygon. TomTom writes ``lat``/``lon`` (or
``latitude``/``longitude``) objects; what leaves this module is ``[lon, lat]``, rounded to
7 decimals (about a centimetre), in plain JSON types.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping, Sequence
from typing import Any, Final

import shapely
from shapely.geometry import shape

from geomint.providers.base import ProviderMiss

__all__ = [
    "MAX_POLYGONS",
    "MAX_VERTICES",
    "area_of",
    "dicts",
    "incident",
    "kind_of",
    "lonlat_of",
    "number",
    "place",
    "places",
    "plain",
    "polygon_of",
    "rings_for_search",
    "route_feature",
]

_NAME: Final = "tomtom"
#: Our own bound on what goes into a geometry search, to keep the POST body small.
MAX_VERTICES: Final = 50
MAX_POLYGONS: Final = 10

#: A Geography result's ``entityType``, as the kind of place geomint names it.
_ENTITY_KINDS: Final[Mapping[str, str]] = {
    "Country": "country",
    "CountrySubdivision": "region",
    "CountrySecondarySubdivision": "region",
    "CountryTertiarySubdivision": "district",
    "Municipality": "city",
    "MunicipalitySubdivision": "district",
    "Neighbourhood": "neighbourhood",
    "PostalCodeArea": "postcode",
}
#: Which address field names a Geography result of each ``entityType``.
_ENTITY_NAMES: Final[Mapping[str, str]] = {
    "Country": "country",
    "CountrySubdivision": "countrySubdivision",
    "CountrySecondarySubdivision": "countrySecondarySubdivision",
    "CountryTertiarySubdivision": "countryTertiarySubdivision",
    "Municipality": "municipality",
    "MunicipalitySubdivision": "municipalitySubdivision",
    "Neighbourhood": "neighbourhood",
    "PostalCodeArea": "postalCode",
}
_RESULT_KINDS: Final[Mapping[str, str]] = {
    "Street": "street",
    "Point Address": "address",
    "Address Range": "address",
    "Cross Street": "intersection",
}
#: Traffic Incident Details ``iconCategory`` codes.
_INCIDENT_CATEGORIES: Final[Mapping[int, str]] = {
    0: "unknown",
    1: "accident",
    2: "fog",
    3: "dangerous_conditions",
    4: "rain",
    5: "ice",
    6: "jam",
    7: "lane_closed",
    8: "road_closed",
    9: "road_works",
    10: "wind",
    11: "flooding",
    14: "broken_down_vehicle",
}


def number(value: Any) -> float | None:
    """A finite JSON number as a float, else None (booleans are not numbers here)."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return float(value) if math.isfinite(value) else None


def lonlat_of(position: Any, lat_key: str, lon_key: str) -> list[float] | None:
    """TomTom's ``{lat, lon}`` (or ``{latitude, longitude}``) as ``[lon, lat]``."""
    if not isinstance(position, Mapping):
        return None
    lat, lon = number(position.get(lat_key)), number(position.get(lon_key))
    if lat is None or lon is None or not (-90 <= lat <= 90 and -180 <= lon <= 180):
        return None
    return [round(lon, 7), round(lat, 7)]


def dicts(value: Any) -> list[Mapping[str, Any]]:
    """The objects in a JSON list (nothing if it is not a list)."""
    return [item for item in value if isinstance(item, Mapping)] if isinstance(value, list) else []


def plain(geometry: Any) -> dict[str, Any]:
    """A shapely geometry as GeoJSON of plain lists and floats (not shapely's tuples)."""
    result: dict[str, Any] = json.loads(shapely.to_geojson(geometry))
    return result


def kind_of(result: Mapping[str, Any]) -> str:
    """The kind of place a search result is: ``city``, ``country``, ``street``, ``poi``..."""
    kind = str(result.get("type") or "")
    if kind == "Geography":
        return _ENTITY_KINDS.get(str(result.get("entityType") or ""), "place")
    if kind == "POI":
        return "poi"
    return _RESULT_KINDS.get(kind, "place")


def _name_of(result: Mapping[str, Any], address: Mapping[str, Any]) -> Any:
    """What a place that is not a point of interest is called: the city, the street..."""
    if result.get("type") == "Geography":
        return address.get(_ENTITY_NAMES.get(str(result.get("entityType") or ""), ""))
    street, number_ = address.get("streetName"), address.get("streetNumber")
    if result.get("type") in ("Point Address", "Address Range") and street and number_:
        return f"{street} {number_}"
    return street


def places(answer: Any, limit: int) -> tuple[list[dict[str, Any]], int | None] | None:
    """A search answer's results as place features (at most ``limit``), and how many
    TomTom matched in all; None if the answer has no results list.

    Scores are TomTom's relevance divided by the best one's, so the first is 1 and they
    fall as TomTom ranks them (TomTom's own score has no upper bound).
    """
    if not isinstance(answer, Mapping) or not isinstance(answer.get("results"), list):
        return None
    results = dicts(answer["results"])[: max(limit, 0)]
    top = max((number(r.get("score")) or 0.0 for r in results), default=0.0)
    features = [f for f in (place(r, top) for r in results) if f is not None]
    summary = answer.get("summary")
    total = number(summary.get("totalResults")) if isinstance(summary, Mapping) else None
    return features, None if total is None else int(total)


def place(result: Mapping[str, Any], top_score: float) -> dict[str, Any] | None:
    """One search result as a place feature, or None if it has no usable position."""
    position = lonlat_of(result.get("position"), "lat", "lon")
    if position is None or result.get("id") in (None, ""):
        return None
    poi = result.get("poi") if isinstance(result.get("poi"), Mapping) else {}
    address = result.get("address") if isinstance(result.get("address"), Mapping) else {}
    assert isinstance(poi, Mapping) and isinstance(address, Mapping)
    freeform = address.get("freeformAddress")
    if result.get("type") == "POI":
        categories = [str(c) for c in poi.get("categories") or [] if c]
        codes = [
            str(c["code"]).lower()
            for c in dicts(poi.get("classifications"))
            if isinstance(c.get("code"), str)
        ]
        category = codes[0] if codes else (categories[0] if categories else "poi")
        name = poi.get("name") or freeform
    else:
        category = kind_of(result)
        categories = [category]
        name = _name_of(result, address) or freeform
    raw = number(result.get("score"))
    score = raw / top_score if raw is not None and top_score > 0 else None
    properties: dict[str, Any] = {
        "id": f"tomtom:{result['id']}",
        "name": str(name) if name else None,
        "category": category,
        "categories": categories,
        "address": freeform,
        "score": round(min(max(score, 0.0), 1.0), 3) if score is not None else None,
        "country_code": address.get("countryCode"),
        "provider": _NAME,
    }
    distance = number(result.get("dist"))
    if distance is not None:
        properties["distance_m"] = round(distance, 1)
    for field, value in (("phone", poi.get("phone")), ("website", poi.get("url"))):
        if isinstance(value, str) and value:
            properties[field] = value
    return {
        "type": "Feature",
        "geometry": {"type": "Point", "coordinates": position},
        "properties": properties,
    }


def polygon_of(data: Any) -> dict[str, Any] | None:
    """The (Multi)Polygon in an Additional Data ``geometryData``, whatever it wraps it in.

    Several parts become one MultiPolygon of their valid parts, not their union: parts
    that overlap are unioned where every answer is judged, in intake's confined child
    (valid parts that cross each other many times cost a union minutes and gigabytes).
    """
    if not isinstance(data, Mapping):
        return None
    if data.get("type") == "FeatureCollection":
        parts = [polygon_of(f) for f in dicts(data.get("features"))]
        found = [p for p in parts if p is not None]
        if len(found) <= 1:
            return found[0] if found else None
        return {
            "type": "MultiPolygon",
            "coordinates": [
                polygon
                for p in found
                for polygon in (
                    p["coordinates"] if p["type"] == "MultiPolygon" else [p["coordinates"]]
                )
            ],
        }
    if data.get("type") == "Feature":
        return polygon_of(data.get("geometry"))
    if data.get("type") in ("Polygon", "MultiPolygon"):
        try:
            outline = shape(data)
        except (ValueError, TypeError, AttributeError, IndexError):
            return None
        return plain(outline) if outline.is_valid and not outline.is_empty else None
    return None


def route_feature(
    route: Mapping[str, Any], rank: int, mode: str, avoid: Sequence[str]
) -> dict[str, Any] | None:
    """One TomTom route as a LineString with its summary, legs and sections."""
    coordinates: list[list[float]] = []
    sections: list[dict[str, Any]] = []
    for index, leg in enumerate(dicts(route.get("legs"))):
        points = [p for p in map(_leg_point, dicts(leg.get("points"))) if p is not None]
        if not points:
            continue
        start = len(coordinates)
        coordinates.extend(points)
        section: dict[str, Any] = {
            "start_index": start,
            "end_index": len(coordinates) - 1,
            "kind": "leg",
            "leg": index,
        }
        leg_summary = leg.get("summary")
        if isinstance(leg_summary, Mapping):
            section["length_m"] = number(leg_summary.get("lengthInMeters"))
            section["duration_s"] = number(leg_summary.get("travelTimeInSeconds"))
        sections.append(section)
    if len(coordinates) < 2:
        return None
    last = len(coordinates) - 1
    for raw in dicts(route.get("sections")):
        first, final = number(raw.get("startPointIndex")), number(raw.get("endPointIndex"))
        if first is None or final is None or not 0 <= first <= final <= last:
            continue
        kind = re.sub(r"[^a-z]+", "_", str(raw.get("sectionType") or "other").lower())
        section = {"start_index": int(first), "end_index": int(final), "kind": kind}
        if kind == "traffic":
            category = raw.get("simpleCategory")
            section["category"] = str(category).lower() if category else None
            section["magnitude"] = number(raw.get("magnitudeOfDelay"))
            section["delay_s"] = number(raw.get("delayInSeconds"))
            section["speed_kmh"] = number(raw.get("effectiveSpeedInKmh"))
        elif kind == "travel_mode" and raw.get("travelMode"):
            section["travel_mode"] = raw.get("travelMode")
        sections.append(section)
    given = route.get("summary") if isinstance(route.get("summary"), Mapping) else {}
    assert isinstance(given, Mapping)
    summary: dict[str, Any] = {
        "length_m": number(given.get("lengthInMeters")),
        "duration_s": number(given.get("travelTimeInSeconds")),
        "departure": given.get("departureTime"),
        "arrival": given.get("arrivalTime"),
        "traffic_delay_s": number(given.get("trafficDelayInSeconds")),
    }
    free_flow = number(given.get("noTrafficTravelTimeInSeconds"))
    if free_flow is not None:
        summary["no_traffic_duration_s"] = free_flow
    return {
        "type": "Feature",
        "geometry": {"type": "LineString", "coordinates": coordinates},
        "properties": {
            "summary": summary,
            "sections": sections,
            "mode": mode,
            "avoid": list(avoid),
            "alternative": rank,
            "provider": _NAME,
        },
    }


def _leg_point(point: Mapping[str, Any]) -> list[float] | None:
    return lonlat_of(point, "latitude", "longitude")


def incident(raw: Mapping[str, Any]) -> dict[str, Any] | None:
    """One Incident Details entry (already GeoJSON, lon/lat) with geomint's property names."""
    geometry = raw.get("geometry")
    if not isinstance(geometry, Mapping) or geometry.get("type") not in ("Point", "LineString"):
        return None
    try:
        checked = shape(geometry)
    except (ValueError, TypeError, AttributeError, IndexError):
        return None
    if checked.is_empty:
        return None
    props = raw.get("properties") if isinstance(raw.get("properties"), Mapping) else {}
    assert isinstance(props, Mapping)
    icon = number(props.get("iconCategory"))
    magnitude = number(props.get("magnitudeOfDelay"))
    events = dicts(props.get("events"))
    description = "; ".join(str(e["description"]) for e in events if e.get("description"))
    length = number(props.get("length"))
    return {
        "type": "Feature",
        "geometry": plain(checked),
        "properties": {
            "id": f"tomtom:{props['id']}" if props.get("id") else None,
            "category": "unknown" if icon is None else _INCIDENT_CATEGORIES.get(int(icon), "other"),
            "magnitude": 0 if magnitude is None else int(magnitude),
            "delay_s": number(props.get("delay")),
            "from": props.get("from"),
            "to": props.get("to"),
            "start": props.get("startTime"),
            "end": props.get("endTime"),
            "description": description or None,
            "length_m": round(length, 1) if length is not None else None,
            "road_numbers": [str(r) for r in props.get("roadNumbers") or []],
            "provider": _NAME,
        },
    }


# --- areas for a geometry search -------------------------------------------------------------


def area_of(within: Sequence[Mapping[str, Any]]) -> Any:
    """The union of the areas given, as one shapely geometry in lon/lat."""
    shapes = []
    for index, given in enumerate(within):
        try:
            area = shape(given)
        except (ValueError, TypeError, AttributeError, IndexError, KeyError):
            area = None
        if area is None or area.geom_type not in ("Polygon", "MultiPolygon") or area.is_empty:
            raise ProviderMiss(
                f"within[{index}] is not a GeoJSON Polygon or MultiPolygon",
                code="refused",
                provider=_NAME,
            )
        shapes.append(shapely.make_valid(area))
    return shapely.union_all(shapes)


def rings_for_search(area: Any) -> list[list[tuple[float, float]]]:
    """Outer rings that cover ``area``, each of at most :data:`MAX_VERTICES` vertices.

    A ring with too many vertices is simplified and then grown by the simplification's
    tolerance, so the ring sent still covers every part of the area; what falls outside
    the area as given is dropped afterwards, from the results.
    """
    parts = [g for g in getattr(area, "geoms", [area]) if g.geom_type == "Polygon"]
    if len(parts) > MAX_POLYGONS:
        raise ProviderMiss(
            f"the areas are {len(parts)} separate polygons, and geomint sends TomTom at most "
            f"{MAX_POLYGONS} at once; search fewer areas at a time",
            code="refused",
            provider=_NAME,
        )
    rings = []
    for part in parts:
        outline = shapely.Polygon(part.exterior)
        tolerance = max(outline.length, 1e-9) / 10_000
        while len(outline.exterior.coords) - 1 > MAX_VERTICES:
            simpler = shapely.simplify(shapely.Polygon(part.exterior), tolerance)
            grown = simpler.buffer(tolerance, join_style="mitre", mitre_limit=2.0)
            if grown.geom_type == "Polygon" and not grown.is_empty:
                outline = shapely.Polygon(grown.exterior)
            tolerance *= 2
        rings.append([(float(x), float(y)) for x, y in outline.exterior.coords[:-1]])
    return rings
