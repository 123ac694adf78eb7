"""Place search with Overpass: categories to OSM tags, the Overpass QL query, its answer.

A search is one Overpass QL query: one statement per (selector, area) pair in a union, and
``out center tags`` so that ways and relations come back as their centre point. Selectors
are a category's tags (a small table of the categories people ask for, or an explicit
``key=value``) and, for free text, a case-insensitive ``name`` regular expression whose
text is escaped twice: once for the regular expression, once for the QL string it sits in.
Areas are ``around:`` a point or ``poly:`` filters, whose coordinates Overpass reads as
``lat lon`` pairs; a polygon with many vertices is simplified to a slightly larger one
for the query, and the answer is then cut to the exact area here.
"""

from __future__ import annotations

import difflib
import math
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final

import numpy as np
import shapely
from shapely.geometry.base import BaseGeometry

from geomint.providers._text import match_score, normalise, singular
from geomint.providers.base import LonLat
from geomint.providers.osm._service import NAME

__all__ = [
    "CATEGORY_TAGS",
    "MAX_POLYGON_PARTS",
    "MAX_POLYGON_VERTICES",
    "QUERY_TIMEOUT_S",
    "Search",
    "SearchRefused",
    "escape_regex",
    "places",
    "plan",
    "poly_filter",
    "ql_string",
]

#: The ``[timeout:]`` of every query: Overpass stops a query that runs longer.
QUERY_TIMEOUT_S: Final = 25
#: Most vertices one ``poly:`` filter carries; a larger polygon is simplified first.
MAX_POLYGON_VERTICES: Final = 200
#: Most polygons one query filters by; past it, their convex hull is used.
MAX_POLYGON_PARTS: Final = 8
#: The largest ``around:`` radius sent: a wider one is a country-scale query.
MAX_RADIUS_M: Final = 50_000.0
_DEFAULT_RADIUS_M: Final = 1_000.0
_EARTH_M: Final = 6_371_008.8

#: The categories people ask for, and the OSM tags that mean them.
CATEGORY_TAGS: Final[Mapping[str, tuple[tuple[str, str], ...]]] = {
    "cafe": (("amenity", "cafe"),),
    "restaurant": (("amenity", "restaurant"),),
    "fast_food": (("amenity", "fast_food"),),
    "bar": (("amenity", "bar"),),
    "pub": (("amenity", "pub"),),
    "pharmacy": (("amenity", "pharmacy"), ("healthcare", "pharmacy")),
    "hospital": (("amenity", "hospital"),),
    "school": (("amenity", "school"),),
    "kindergarten": (("amenity", "kindergarten"),),
    "library": (("amenity", "library"),),
    "bank": (("amenity", "bank"),),
    "atm": (("amenity", "atm"),),
    "toilets": (("amenity", "toilets"),),
    "cinema": (("amenity", "cinema"),),
    "theatre": (("amenity", "theatre"),),
    "place_of_worship": (("amenity", "place_of_worship"),),
    "post_office": (("amenity", "post_office"),),
    "parking": (("amenity", "parking"),),
    "fuel": (("amenity", "fuel"),),
    "bicycle_parking": (("amenity", "bicycle_parking"),),
    "supermarket": (("shop", "supermarket"),),
    "bakery": (("shop", "bakery"),),
    "museum": (("tourism", "museum"),),
    "gallery": (("tourism", "gallery"),),
    "hotel": (("tourism", "hotel"),),
    "attraction": (("tourism", "attraction"),),
    "park": (("leisure", "park"),),
    "playground": (("leisure", "playground"),),
    "bus_stop": (("highway", "bus_stop"),),
}
#: Other words for the categories above.
_SYNONYMS: Final = {
    "coffee": "cafe",
    "coffee shop": "cafe",
    "eatery": "restaurant",
    "food": "restaurant",
    "fast food": "fast_food",
    "chemist": "pharmacy",
    "grocery": "supermarket",
    "grocery store": "supermarket",
    "toilet": "toilets",
    "wc": "toilets",
    "church": "place_of_worship",
    "theater": "theatre",
    "bike parking": "bicycle_parking",
    "bicycle parking": "bicycle_parking",
    "post office": "post_office",
    "petrol station": "fuel",
    "gas station": "fuel",
    "art gallery": "gallery",
    "bus stop": "bus_stop",
}
#: Keys whose value says what a place is, in the order a place's category is read.
_KIND_KEYS: Final = (
    "amenity",
    "shop",
    "tourism",
    "leisure",
    "healthcare",
    "office",
    "craft",
    "historic",
    "highway",
    "railway",
    "public_transport",
)
#: Keys a word that is not in the table is looked up under (``bench`` -> amenity=bench).
_FALLBACK_KEYS: Final = ("amenity", "shop", "tourism", "leisure")
#: Tags kept on a place besides its name, category and address.
_KEPT_TAGS: Final = (
    "opening_hours",
    "website",
    "phone",
    "cuisine",
    "wheelchair",
    "brand",
    "operator",
    "wikidata",
)
_TOKEN: Final = re.compile(r"[a-z0-9_:]+")
_REGEX_SPECIAL: Final = re.compile(r"([\\.^$|?*+()\[\]{}])")


def escape_regex(text: str) -> str:
    r"""Escape ``text`` so that a POSIX extended regular expression matches it literally.

    Example:
        >>> escape_regex("Café (old) 1+1")
        'Café \\(old\\) 1\\+1'
    """
    return _REGEX_SPECIAL.sub(r"\\\1", text)


def ql_string(text: str) -> str:
    r"""Quote ``text`` as an Overpass QL string: backslashes and quotes escaped.

    Overpass reads ``\x`` in a string as ``x`` (and ``\n``, ``\t``, ``\uXXXX`` as the
    characters they name), so a backslash meant for the regular expression is doubled.
    Control characters are dropped: Overpass refuses them.

    Example:
        >>> print(ql_string(escape_regex('Bar "5."')))
        "Bar \"5\\.\""
    """
    clean = "".join(c for c in text if c >= " " and c != "\x7f")
    return '"' + clean.replace("\\", "\\\\").replace('"', '\\"') + '"'


@dataclass(frozen=True, kw_only=True)
class Search:
    """A place search made ready: the query, the area to cut the answer to, what was meant.

    Attributes:
        ql: The Overpass QL query.
        category: The category searched for (a key of :data:`CATEGORY_TAGS`, a tag value
            for ``key=value`` or a word looked up under common keys), or None.
        area: The exact area places must be in (the ``within`` polygons), or None.
        fetch: Most elements asked for.
        notes: What a person should know about how the search was made.
    """

    ql: str
    category: str | None
    area: BaseGeometry | None
    fetch: int
    notes: tuple[str, ...]


class SearchRefused(ValueError):  # noqa: N818 - a refusal the provider turns into a miss
    """The search cannot be sent as asked; the message says why and what to pass."""


def _selectors(query: str | None, category: str | None) -> tuple[list[str], str | None, list[str]]:
    """The tag selectors a place must match (any one of), the category meant, notes."""
    notes: list[str] = []
    name = ""
    if query is not None and query.strip():
        name = f'["name"~{ql_string(escape_regex(query.strip()))},i]'
    if category is None:
        if not name:
            raise SearchRefused("give a query (a name) or a category to search for")
        known = _category_of(query or "")
        if known is not None:
            # "cafe" as a query: places called so, and places that are one.
            notes.append(f"{query!r} read as a name or the category {known!r}")
            return [name, *_tag_selectors(CATEGORY_TAGS[known])], known, notes
        return [name], None, notes
    wanted = _category_of(category)
    if wanted is not None:
        tags = CATEGORY_TAGS[wanted]
    elif "=" in category:
        key, _, value = category.strip().partition("=")
        if not (_TOKEN.fullmatch(key) and _TOKEN.fullmatch(value)):
            raise SearchRefused(
                f"category {category!r} is not an OSM tag: write key=value in lower case, "
                "such as 'amenity=bench'"
            )
        tags, wanted = ((key, value),), value
    else:
        word = normalise(category).replace(" ", "_")
        near = difflib.get_close_matches(word, list(CATEGORY_TAGS), n=3, cutoff=0.8)
        if near or not _TOKEN.fullmatch(word):
            # A near miss is suggested, never searched for in its place.
            hint = f" (did you mean {' or '.join(near)}?)" if near else ""
            raise SearchRefused(
                f"category {category!r} is not one geomint maps to OpenStreetMap tags{hint}; "
                f"known: {', '.join(sorted(CATEGORY_TAGS))}; or give a tag as key=value"
            )
        tags = tuple((key, word) for key in _FALLBACK_KEYS)
        wanted = word
        notes.append(
            f"category {category!r} is not in geomint's table; searched as "
            + " or ".join(f"{k}={word}" for k in _FALLBACK_KEYS)
        )
    return [sel + name for sel in _tag_selectors(tags)], wanted, notes


def _tag_selectors(tags: Iterable[tuple[str, str]]) -> list[str]:
    return [f"[{ql_string(key)}={ql_string(value)}]" for key, value in tags]


def _category_of(text: str) -> str | None:
    words = normalise(text)
    one = " ".join(singular(w) for w in words.split())
    for candidate in (words, one):
        if candidate in _SYNONYMS:
            return _SYNONYMS[candidate]
        key = candidate.replace(" ", "_")
        if key in CATEGORY_TAGS:
            return key
    return None


def poly_filter(polygon: shapely.Polygon) -> str:
    """The ``poly:`` filter of a polygon's outer ring: ``lat lon`` pairs, not closed.

    Example:
        >>> poly_filter(shapely.box(24.93, 60.16, 24.95, 60.17))
        '(poly:"60.16 24.95 60.17 24.95 60.17 24.93 60.16 24.93")'
    """
    ring = list(polygon.exterior.coords)[:-1]
    pairs = " ".join(f"{_num(lat)} {_num(lon)}" for lon, lat in ring)
    return f'(poly:"{pairs}")'


def _num(value: float) -> str:
    return f"{value:.6f}".rstrip("0").rstrip(".")


def _query_polygons(area: BaseGeometry) -> tuple[list[shapely.Polygon], list[str]]:
    """Polygons to filter by: each part, simplified to a superset under the vertex cap."""
    notes: list[str] = []
    parts = [p for p in shapely.get_parts(area) if isinstance(p, shapely.Polygon)]
    if len(parts) > MAX_POLYGON_PARTS:
        notes.append(
            f"the area has {len(parts)} parts; Overpass was asked for their convex hull "
            "and the answer cut to the parts"
        )
        parts = [shapely.convex_hull(area)]
    shapes = []
    for part in parts:
        shape = shapely.Polygon(part.exterior)  # holes are cut out afterwards
        tolerance = 1e-5
        for _ in range(40):
            if len(shape.exterior.coords) - 1 <= MAX_POLYGON_VERTICES:
                break
            # Simplifying moves the ring by up to the tolerance; growing it by twice that
            # first keeps it outside the original: no place inside is lost, and the ones
            # outside are dropped afterwards.
            grown = shapely.Polygon(part.exterior).buffer(2 * tolerance, quad_segs=2)
            simpler = grown.simplify(tolerance, preserve_topology=True)
            if isinstance(simpler, shapely.Polygon):
                shape = simpler
            tolerance *= 2
        else:
            shape = shapely.convex_hull(part)
        if len(shape.exterior.coords) < len(part.exterior.coords):
            notes.append(
                f"a polygon of {len(part.exterior.coords) - 1} vertices was sent as "
                f"{len(shape.exterior.coords) - 1} and the answer cut to the original"
            )
        shapes.append(shape)
    return shapes, notes


def plan(
    *,
    query: str | None,
    category: str | None,
    near: LonLat | None,
    radius_m: float | None,
    within: Sequence[BaseGeometry],
    limit: int,
) -> Search:
    """Write the Overpass QL for a search.

    Raises:
        SearchRefused: Nothing to search for, no area to search in, or a radius too large.
    """
    selectors, wanted, notes = _selectors(query, category)
    if near is None and not within:
        raise SearchRefused(
            "an OpenStreetMap place search needs an area: pass near (with radius_m) or within"
        )
    around = ""
    if near is not None:
        radius = _DEFAULT_RADIUS_M if radius_m is None else float(radius_m)
        if not 0 < radius <= MAX_RADIUS_M:
            raise SearchRefused(
                f"radius_m={radius_m:g} is outside 0 < radius_m <= {MAX_RADIUS_M:g}; "
                "search a smaller area, or pass within polygons"
            )
        around = f"(around:{_num(radius)},{_num(near[1])},{_num(near[0])})"
    area: BaseGeometry | None = None
    filters = [around]
    if within:
        area = shapely.union_all([shapely.make_valid(shape) for shape in within])
        polygons, polygon_notes = _query_polygons(area)
        if not polygons:
            raise SearchRefused("within holds no polygon with an area")
        notes += polygon_notes
        filters = [around + poly_filter(p) for p in polygons]
    # More than asked, so that the nearest or best can be chosen from a wider set.
    fetch = min(max(limit * 3, limit + 20), 1000)
    statements = "".join(f"  nwr{sel}{flt};\n" for sel in selectors for flt in filters)
    ql = f"[out:json][timeout:{QUERY_TIMEOUT_S}];\n(\n{statements});\nout center tags {fetch};"
    return Search(ql=ql, category=wanted, area=area, fetch=fetch, notes=tuple(notes))


def _address(tags: Mapping[str, str]) -> str | None:
    street = " ".join(filter(None, (tags.get("addr:street"), tags.get("addr:housenumber"))))
    town = " ".join(filter(None, (tags.get("addr:postcode"), tags.get("addr:city"))))
    text = ", ".join(filter(None, (street, town)))
    return text or None


def _distances_m(lon: np.ndarray, lat: np.ndarray, at: LonLat) -> np.ndarray:
    lon0, lat0 = math.radians(at[0]), math.radians(at[1])
    dlon, dlat = np.radians(lon) - lon0, np.radians(lat) - lat0
    a = np.sin(dlat / 2) ** 2 + math.cos(lat0) * np.cos(np.radians(lat)) * np.sin(dlon / 2) ** 2
    metres: np.ndarray = 2 * _EARTH_M * np.arcsin(np.sqrt(np.clip(a, 0, 1)))
    return metres


def places(
    elements: Sequence[Mapping[str, Any]],
    search: Search,
    *,
    query: str | None,
    near: LonLat | None,
    limit: int,
) -> tuple[list[dict[str, Any]], list[str]]:
    """Turn Overpass elements into place Features, best or nearest first, and notes."""
    found: list[tuple[float, float, float, dict[str, Any]]] = []
    seen: set[str] = set()
    wanted = normalise(query) if query else ""
    for element in elements:
        kind, osm_id = element.get("type"), element.get("id")
        where = element if "lat" in element else element.get("center") or {}
        tags = element.get("tags") or {}
        if kind not in ("node", "way", "relation") or not isinstance(osm_id, int):
            continue
        try:
            lon, lat = float(where["lon"]), float(where["lat"])
        except (KeyError, TypeError, ValueError):
            continue
        place_id = f"osm:{kind}/{osm_id}"
        if place_id in seen:
            continue
        seen.add(place_id)
        categories = list(dict.fromkeys(tags[key] for key in _KIND_KEYS if key in tags))
        name = tags.get("name")
        score = 1.0
        if wanted:
            by_name = match_score(wanted, normalise(name)) if name else 0.0
            is_category = search.category is not None and search.category in categories
            score = max(by_name, 0.9 if is_category else 0.0, 0.5)
        props: dict[str, Any] = {
            "id": place_id,
            "name": name,
            "category": search.category or (categories[0] if categories else "place"),
            "categories": categories,
            "score": round(score, 3),
            "provider": NAME,
        }
        address = _address(tags)
        if address:
            props["address"] = address
        props.update({key: tags[key] for key in _KEPT_TAGS if key in tags})
        found.append((lon, lat, score, props))
    notes: list[str] = []
    if search.area is not None:
        inside = shapely.intersects_xy(search.area, [f[0] for f in found], [f[1] for f in found])
        found = [f for f, keep in zip(found, inside, strict=True) if keep]
    if near is not None and found:
        metres = _distances_m(
            np.array([f[0] for f in found]), np.array([f[1] for f in found]), near
        )
        for (_, _, _, props), distance in zip(found, metres, strict=True):
            props["distance_m"] = round(float(distance), 1)
        found.sort(key=lambda f: f[3]["distance_m"] - f[2] * 1e-3)
    else:
        found.sort(key=lambda f: (-f[2], f[3]["name"] or "~"))
    if len(elements) >= search.fetch:
        notes.append(
            f"Overpass returned its cap of {search.fetch} elements; more may exist in the area"
        )
    if len(found) > limit:
        notes.append(f"{len(found)} matched; the {limit} {'nearest' if near else 'best'} kept")
    features = [
        {
            "type": "Feature",
            "geometry": {"type": "Point", "coordinates": [round(lon, 7), round(lat, 7)]},
            "properties": props,
        }
        for lon, lat, _, props in found[:limit]
    ]
    return features, notes
