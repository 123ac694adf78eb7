"""The offline provider: answers from data that ships with geomint, with no network.

* geocoding: countries (Natural Earth), cities of 100,000 people or more (GeoNames), and
  the named places, landmarks and districts of the demo city (central Helsinki,
  OpenStreetMap) under their Finnish, English and Swedish names; a match by spelling
  alone far from the chat's context is a miss with the local names nearest in spelling;
* boundaries: country polygons, the demo city's parks, gardens, squares and landmark
  buildings, and the covered area itself ("central Helsinki");
* place search: the demo city's points of interest, by text or category, near a point
  or within areas;
* routes and reachable areas: on the demo city's road graph (see :mod:`._router`).

Every answer carries the provenance of the bundled file it came from (publisher, licence,
the data's date). Outside what the data covers, a call is a miss that says so, never a
guess.
"""

from __future__ import annotations

import csv
import difflib
import json
import math
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from datetime import datetime
from functools import cached_property
from typing import Any, Final

import numpy as np
import shapely

from geomint.provenance import Provenance
from geomint.providers import bundled
from geomint.providers._text import (
    WORD_MATCH,
    bare_query,
    did_you_mean,
    match_score,
    normalise,
    singular,
)
from geomint.providers.base import Avoid, Found, LonLat, ProviderMiss, TravelMode
from geomint.providers.offline import _router
from geomint.providers.offline._coverage import covered_text, nearest_covered

__all__ = ["OfflineProvider"]

_NAME: Final = "offline"
_EARTH_M: Final = 6_371_008.8
_DEFAULT_RADIUS_M: Final = 1_000.0
#: A match by spelling alone (no whole word of the name) this far from the chat's context
#: is not an answer: "Kamppi" is not Cotonou, whatever the letters say.
_FAR_M: Final = 1_000_000.0
#: What people call the area the demo data covers; each finds that area itself.
_COVERED_NAMES: Final = (
    "central Helsinki",
    "Helsinki centre",
    "Helsinki center",
    "Helsinki city centre",
    "Helsinki city center",
    "centre of Helsinki",
    "center of Helsinki",
    "downtown Helsinki",
    "downtown",
    "city centre",
    "city center",
    "Helsingin keskusta",
    "Helsingfors centrum",
)
_COVERED_ID: Final = "offline:central-helsinki"
#: Kinds of place a bare name most often means: "Kluuvi" is the district before the car
#: park named after it. A small lift, enough to break a tie.
_LANDMARKS: Final = frozenset(
    {"district", "station", "square", "cathedral", "church", "park", "garden", "museum"}
)
#: Kinds of place usually named after a neighbour ("Senaatintori kaupunkipyöräasema",
#: "K-Market Esplanadi"): the neighbour first, where both match as well.
_NAMESAKES: Final = frozenset(
    {"bicycle_rental", "parking", "taxi", "convenience", "subway_station", "bus_station"}
)
#: Words people use for a category, and the category the bundled data names it by.
_CATEGORY_WORDS: Final = {
    "coffee": "cafe",
    "coffee shop": "cafe",
    "cafe": "cafe",
    "eatery": "restaurant",
    "restaurant": "restaurant",
    "food": "restaurant",
    "fast food": "fast_food",
    "bar": "bar",
    "pub": "pub",
    "museum": "museum",
    "gallery": "gallery",
    "hotel": "hotel",
    "pharmacy": "pharmacy",
    "chemist": "pharmacy",
    "supermarket": "supermarket",
    "grocery": "supermarket",
    "school": "school",
    "library": "library",
    "toilet": "toilets",
    "wc": "toilets",
    "atm": "atm",
    "bank": "bank",
    "bike parking": "bicycle_parking",
    "bicycle parking": "bicycle_parking",
    "cinema": "cinema",
    "theatre": "theatre",
    "theater": "theatre",
    "church": "place_of_worship",
}


def _haversine_m(lon: np.ndarray, lat: np.ndarray, at: LonLat) -> np.ndarray:
    lon0, lat0 = math.radians(at[0]), math.radians(at[1])
    dlon = np.radians(lon) - lon0
    dlat = np.radians(lat) - lat0
    a = np.sin(dlat / 2) ** 2 + math.cos(lat0) * np.cos(np.radians(lat)) * np.sin(dlon / 2) ** 2
    metres: np.ndarray = 2 * _EARTH_M * np.arcsin(np.sqrt(np.clip(a, 0, 1)))
    return metres


def _point(lon: float, lat: float, properties: dict[str, Any]) -> dict[str, Any]:
    return {
        "type": "Feature",
        "geometry": {"type": "Point", "coordinates": [round(lon, 7), round(lat, 7)]},
        "properties": properties,
    }


def _collection(features: list[dict[str, Any]]) -> dict[str, Any]:
    return {"type": "FeatureCollection", "features": features}


def _country_names(props: Mapping[str, Any]) -> list[str]:
    """A country's short name, ISO codes and ISO names ('Dem. Rep. Congo' is also
    'Democratic Republic of the Congo'), leaving out the codes a territory lacks."""
    names = [props.get("name"), props.get("iso_a2"), props.get("iso_a3")]
    names += list(props.get("aliases") or ())
    return [n for n in names if n]


def _names_of(props: Mapping[str, Any]) -> tuple[str, ...]:
    """A place's names: ``name`` first, then its other names (English, Swedish, ...)."""
    name = props.get("name")
    return tuple(n for n in (name, *(props.get("other_names") or ())) if n)


def _best(wanted: str, names: Sequence[str]) -> tuple[float, int]:
    """The best score of ``wanted`` against normalised ``names``, and which name gave it."""
    best, which = 0.0, 0
    for index, name in enumerate(names):
        score = match_score(wanted, name)
        if score > best:
            best, which = score, index
    return best, which


def _km(metres: float) -> str:
    return f"{metres / 1000:,.0f} km"


def category_of(text: str) -> str:
    """The bundled data's category for what a person typed ('cafés' -> 'cafe')."""
    words = normalise(text)
    one = " ".join(singular(w) for w in words.split())
    return _CATEGORY_WORDS.get(one, _CATEGORY_WORDS.get(words, one.replace(" ", "_")))


class OfflineProvider:
    """Geocoding, boundaries, place search, routes and reachable areas from bundled data.

    Example:
        >>> import asyncio
        >>> found = asyncio.run(OfflineProvider().locate("Helsinki"))
        >>> found.data["features"][0]["properties"]["name"], found.sources[0].licence
        ('Helsinki', 'CC-BY-4.0')
    """

    name = _NAME

    @property
    def coverage(self) -> str:
        """What it can answer, in a sentence the model reads in the tools' descriptions."""
        west, south, east, north = bundled.bounds()
        return (
            f"bundled data only: places, landmarks, parks and streets of central Helsinki "
            f"(bbox {west:.3f}, {south:.3f}, {east:.3f}, {north:.3f}), named in Finnish, "
            "English or Swedish; routes and reachable areas inside it; countries; cities "
            "of 100,000 people or more"
        )

    # -- data, loaded on first use ---------------------------------------------------------

    @cached_property
    def _places(self) -> list[dict[str, Any]]:
        return list(bundled.demo_places()["features"])

    @cached_property
    def _place_xy(self) -> tuple[np.ndarray, np.ndarray]:
        coords = np.array([f["geometry"]["coordinates"][:2] for f in self._places])
        return coords[:, 0], coords[:, 1]

    @cached_property
    def _parks(self) -> list[dict[str, Any]]:
        return list(bundled.demo_boundaries()["features"])

    @cached_property
    def _outline_ids(self) -> frozenset[str]:
        """The ids of the places whose outline is among the boundaries (a park, a square,
        a landmark building): the same OpenStreetMap way or relation."""
        return frozenset(f["properties"]["id"] for f in self._parks)

    def boundary_names(self) -> dict[str, list[str]]:
        """Every outline it has by name, by kind ("park": [...], ...), countries aside:
        what ``get_boundaries`` can be asked for in central Helsinki."""
        names: dict[str, list[str]] = {}
        for feature in self._parks:
            props = feature["properties"]
            listed = names.setdefault(props["kind"], [])
            if props["name"] not in listed:
                listed.append(props["name"])
        return {kind: sorted(listed) for kind, listed in sorted(names.items())}

    @cached_property
    def _countries(self) -> list[dict[str, Any]]:
        return list(bundled.countries()["features"])

    @cached_property
    def _cities(self) -> tuple[bundled.City, ...]:
        return bundled.cities()

    @cached_property
    def _city_names(self) -> list[tuple[bundled.City, tuple[str, ...]]]:
        return [
            (c, tuple(normalise(n) for n in (c.name, c.ascii_name, *c.alternate_names) if n))
            for c in self._cities
        ]

    @cached_property
    def _place_names(self) -> list[tuple[str, ...]]:
        """Each place's names, normalised, ``name`` first (empty for an unnamed place)."""
        return [tuple(normalise(n) for n in _names_of(f["properties"] or {})) for f in self._places]

    @cached_property
    def _addresses(self) -> list[str]:
        """Each place's address, normalised and without commas ("" where it has none)."""
        return [
            normalise(str((f["properties"] or {}).get("address") or "").replace(",", " "))
            for f in self._places
        ]

    @cached_property
    def _city_area(self) -> shapely.Polygon:
        return shapely.box(*bundled.bounds())

    @property
    def covered_bbox(self) -> tuple[float, float, float, float]:
        """``(west, south, east, north)`` of the demo city's data: outside it, no places,
        outlines, routes or reachable areas (see :class:`~geomint.providers.base.PlaceSearch`)."""
        return bundled.bounds()

    @cached_property
    def _home(self) -> LonLat:
        """The middle of the covered area: the chat's context when none is given."""
        west, south, east, north = bundled.bounds()
        return ((west + east) / 2, (south + north) / 2)

    @staticmethod
    def _names_covered_area(wanted: str) -> float:
        """How well ``wanted`` names the covered area itself: 0 unless it is nearly one of
        its names ("Helsinki" alone is the city, not its centre)."""
        score = max(match_score(wanted, normalise(n)) for n in _COVERED_NAMES)
        return score if score >= 0.85 else 0.0

    def _covered_feature(self, kind: str) -> dict[str, Any]:
        """The covered area as a place (``kind="point"``) or an outline (``"area"``)."""
        lon, lat = self._home
        props: dict[str, Any] = {
            "id": _COVERED_ID,
            "name": "central Helsinki (the area the bundled data covers)",
            "category": "area",
            "categories": ["area"],
            "provider": _NAME,
        }
        if kind == "point":
            return _point(lon, lat, props)
        outline = json.loads(shapely.to_geojson(shapely.orient_polygons(self._city_area)))
        return {
            "type": "Feature",
            "geometry": outline,
            "properties": {"id": _COVERED_ID, "name": props["name"], "kind": "covered area"},
        }

    def _source(self, name: str) -> Provenance:
        return Provenance(**bundled.source(name))

    # -- geocoding ----------------------------------------------------------------------------

    async def locate(
        self,
        query: str,
        *,
        near: LonLat | None = None,
        country: str | None = None,
        limit: int = 5,
    ) -> Found:
        """Find countries, cities and the demo city's named places by any of their names.

        A place found by another of its names (``"Helsinki Cathedral"`` for "Helsingin
        tuomiokirkko") carries ``matched_name``. A match by spelling alone that lies more
        than 1,000 km from ``near`` (or from central Helsinki) is not an answer: the miss
        lists it with the local names nearest in spelling.
        """
        wanted = bare_query(query)
        if not wanted:
            raise ProviderMiss("the query is empty", code="not_found", provider=_NAME)
        wanted, country, near = self._qualified(wanted, country, near)
        # (score, how well the name itself matched, dataset, feature)
        scored: list[tuple[float, float, str, dict[str, Any]]] = []
        for feature in self._countries:
            props = feature["properties"]
            # A few territories (Somaliland, N. Cyprus, ...) have no ISO code: None.
            if country and (props.get("iso_a2") or "").upper() != country.upper():
                continue
            score = max(match_score(wanted, normalise(n)) for n in _country_names(props))
            if score > 0:
                # The bundled label lies well inside the largest part: a representative
                # point of Norway's MultiPolygon lands on Svalbard.
                label = props.get("label")
                if label:
                    x, y = float(label[0]), float(label[1])
                else:
                    where = shapely.geometry.shape(feature["geometry"]).representative_point()
                    x, y = where.x, where.y
                found = {
                    "id": f"country:{props.get('iso_a3') or props.get('name')}",
                    "name": props.get("name"),
                    "category": "country",
                    "categories": ["country"],
                    "country_code": props.get("iso_a2"),
                    "provider": _NAME,
                }
                # A country ranks first only by its own words ("UK" is no prefix of an
                # alternate name of Jiayuguan).
                lift = 0.2 if score >= WORD_MATCH else 0.0
                scored.append((score + lift, score, "countries", _point(x, y, found)))
        for city, names in self._city_names:
            if country and city.country_code.upper() != country.upper():
                continue
            score = max(match_score(wanted, n) for n in names)
            if score > 0:
                # A large city ranks first only among matches by its own words: "Pori" is
                # not Mormugao for an alternate name starting "Porio".
                bonus = min(math.log10(max(city.population, 1)) / 40, 0.2)
                bonus = bonus if score >= WORD_MATCH else 0.0
                found = {
                    "id": f"geonames:{city.geonameid}",
                    "name": city.name,
                    "category": "city",
                    "categories": ["city"],
                    "country_code": city.country_code,
                    "population": city.population,
                    "provider": _NAME,
                }
                scored.append((score + bonus, score, "cities", _point(city.lon, city.lat, found)))
        if not country or country.upper() == "FI":
            scored.extend(self._local_matches(wanted))
        # The chat's context: the point given, else the demo city the data is richest in.
        context = near or self._home
        # Within a country asked for, any match of it is plausible.
        scored, far = (scored, []) if country else self._plausible(scored, context)
        if scored:
            lon = np.array([s[3]["geometry"]["coordinates"][0] for s in scored])
            lat = np.array([s[3]["geometry"]["coordinates"][1] for s in scored])
            metres = _haversine_m(lon, lat, context)
            # Nearby wins ties: up to 0.15 for a match within a few kilometres.
            scored = [
                (s + 0.15 / (1 + m / 5_000), raw, d, f)
                for (s, raw, d, f), m in zip(scored, metres.tolist(), strict=True)
            ]
        if not scored:
            raise self._no_match(query, country, far, near)
        scored.sort(key=lambda s: -s[0])
        chosen = scored[:limit]
        # The bonuses (a country, a large city, nearness) rank, so they may push a score
        # past 1: scale to the best rather than cut at 1, or "Paris" and Warsaw (alias
        # "Paris of the North") would both score 1.
        scale = max(1.0, chosen[0][0])
        features = []
        for score, _, _, feature in chosen:
            feature["properties"]["score"] = round(score / scale, 3)
            features.append(feature)
        datasets = list(dict.fromkeys(d for _, _, d, _ in chosen))
        return Found(
            data=_collection(features),
            sources=tuple(self._source(d) for d in datasets),
            provider=_NAME,
            endpoint="offline:gazetteer",
            request={
                "query": query,
                "near": list(near) if near else None,
                "country": country,
                "limit": limit,
            },
        )

    def _local_matches(self, wanted: str) -> list[tuple[float, float, str, dict[str, Any]]]:
        """The demo city's places (and the covered area itself) that ``wanted`` names."""
        matches: list[tuple[float, float, str, dict[str, Any]]] = []
        covered = self._names_covered_area(wanted)
        if covered:
            matches.append((covered, covered, "helsinki_places", self._covered_feature("point")))
        for index, (feature, names) in enumerate(zip(self._places, self._place_names, strict=True)):
            score, which = _best(wanted, names)
            lon, lat = feature["geometry"]["coordinates"][:2]
            if score > 0:
                props = {**feature["properties"], "provider": _NAME}
                if which:
                    props["matched_name"] = _names_of(feature["properties"])[which]
                kinds = set(props.get("categories") or ())
                lift = 0.05 if _LANDMARKS & kinds else -0.05 if _NAMESAKES & kinds else 0.0
                matches.append((score + lift, score, "helsinki_places", _point(lon, lat, props)))
            elif address := self._addresses[index]:
                # An address as typed ("Aleksanterinkatu 52"): a place at it, below any
                # match by name.
                by_address = match_score(wanted, address) * 0.9
                if by_address >= WORD_MATCH * 0.9:
                    props = {
                        **feature["properties"],
                        "provider": _NAME,
                        "matched_name": feature["properties"]["address"],
                    }
                    matches.append(
                        (by_address, by_address, "helsinki_places", _point(lon, lat, props))
                    )
        return matches

    def _qualified(
        self, wanted: str, country: str | None, near: LonLat | None
    ) -> tuple[str, str | None, LonLat | None]:
        """Read a trailing ", Finland" or ", Helsinki" as what it is: the country to search
        in, or the city to search near ("Kiasma, Helsinki" is Kiasma)."""
        head, comma, tail = wanted.rpartition(",")
        head, tail = head.strip(), tail.strip()
        if not comma or not head or not tail:
            return wanted, country, near
        if country is None:
            for feature in self._countries:
                props = feature["properties"]
                if props.get("iso_a2") and tail in {normalise(n) for n in _country_names(props)}:
                    return head, str(props["iso_a2"]), near
        if near is None:
            cities = [c for c, names in self._city_names if tail in names]
            if cities:
                city = max(cities, key=lambda c: c.population)
                return head, country, (city.lon, city.lat)
        return wanted, country, near

    def _plausible(
        self, scored: list[tuple[float, float, str, dict[str, Any]]], context: LonLat
    ) -> tuple[list[tuple[float, float, str, dict[str, Any]]], list[tuple[dict[str, Any], float]]]:
        """Split off the matches by spelling alone that lie far from ``context``: kept,
        and the far ones with their distance, nearest in spelling first."""
        if not scored:
            return scored, []
        lon = np.array([s[3]["geometry"]["coordinates"][0] for s in scored])
        lat = np.array([s[3]["geometry"]["coordinates"][1] for s in scored])
        metres = _haversine_m(lon, lat, context).tolist()
        kept, far = [], []
        for item, distance in zip(scored, metres, strict=True):
            if item[1] < WORD_MATCH and distance > _FAR_M:
                far.append((item, distance))
            else:
                kept.append(item)
        far.sort(key=lambda pair: -pair[0][0])
        return kept, [(item[3], distance) for item, distance in far]

    def _no_match(
        self,
        query: str,
        country: str | None,
        far: list[tuple[dict[str, Any], float]],
        near: LonLat | None,
    ) -> ProviderMiss:
        """The miss for a name nothing here answers: the local names nearest in spelling
        first, then what matched only by spelling far away, then what is covered."""
        parts = [
            f"no country, city (100,000 people or more) or named place in central Helsinki "
            f"matches {query!r}" + (f" in country {country.upper()}" if country else "")
        ]
        local = {normalise(n): n for f in self._places for n in _names_of(f["properties"] or {})}
        close = difflib.get_close_matches(normalise(query), list(local), n=3, cutoff=0.6)
        if close:
            parts.append(
                f"names in central Helsinki close to it: {', '.join(local[c] for c in close)}"
            )
        if far:
            where = "the point given" if near is not None else "central Helsinki"
            listed = ", ".join(
                f"{f['properties']['name']} ({f['properties'].get('country_code') or '?'}, "
                f"{_km(m)} away)"
                for f, m in far[:3]
            )
            parts.append(
                f"only spelled like {listed}, too far from {where} to be what was meant; "
                "ask by that exact name if it was"
            )
        elif not close:
            known = [c.name for c in self._cities] + [
                f["properties"].get("name", "") for f in self._countries
            ]
            hint = did_you_mean(query, known)
            if hint:
                parts.append(hint.removeprefix("; "))
        parts.append(
            f"the bundled data covers {covered_text()} in detail, countries worldwide "
            "and cities of 100,000 people or more"
        )
        return ProviderMiss(
            "; ".join(parts), code="not_found", provider=_NAME, endpoint="offline:gazetteer"
        )

    # -- place search ----------------------------------------------------------------------

    def _categories(self, indices: Iterable[int]) -> Counter[str]:
        """How many of the places at ``indices`` are of each category."""
        counts: Counter[str] = Counter()
        for index in indices:
            props = self._places[index]["properties"] or {}
            counts.update(props.get("categories") or [props.get("category") or "other"])
        return counts

    def _nothing_matched(
        self, query: str | None, category: str | None, searched: np.ndarray[Any, Any]
    ) -> str:
        """What the area searched does have, for a search that matched nothing: its
        categories (most common first, then the rest, the nearest to the one asked named)
        and, for a name, the names nearest to it."""
        counts = self._categories(np.flatnonzero(searched))
        if category and query:
            asked = f"{query!r} of category {category!r}"
        else:
            asked = f"category {category!r}" if category else f"{query!r}"
        if not counts:
            return f"no place matched {asked}: the area searched has no places"
        parts = [f"no place matched {asked} in the area searched"]
        stops = self._stops_note(category or query or "")
        if stops:  # first: the list of categories after it can be long
            parts.append(stops)
        wanted = normalise(category_of(category)) if category else None
        if wanted is not None and wanted not in {normalise(c) for c in counts}:
            # Every category the area has, so the model can pick the one it meant
            # ("square" is not one; "garden" and "bus_station" are).
            common = counts.most_common(15)
            rest = sorted(set(counts) - {name for name, _ in common})
            listed = ", ".join(f"{name} ({n})" for name, n in common)
            others = f"; and {', '.join(rest)}" if rest else ""
            near = did_you_mean(category or "", counts)
            parts.append(f"its categories are {listed}{others}{near}")
        elif category:
            parts.append(f"it has {counts[category_of(category)]} places of category {category!r}")
        if query:
            names = {
                normalise(other): other if other == names_of[0] else f"{names_of[0]} ({other})"
                for i in np.flatnonzero(searched)
                if (names_of := _names_of(self._places[i]["properties"] or {}))
                for other in names_of
            }
            close = difflib.get_close_matches(normalise(query), list(names), n=3, cutoff=0.6)
            parts.append(
                f"the nearest names are {', '.join(names[c] for c in close)}"
                if close
                else "no name is close to it"
            )
        return "; ".join(parts)

    @cached_property
    def _stop_kinds(self) -> Counter[str]:
        with bundled.demo_stops_path().open(encoding="utf-8", newline="") as handle:
            return Counter(row["kind"] for row in csv.DictReader(handle))

    def _stops_note(self, asked: str) -> str:
        """Where the stops are, for a search for them: not among the places, but in a
        bundled file the model can load as a layer."""
        words = set(normalise(asked).replace("_", " ").split())
        if not words & {"stop", "stops", "bus", "tram", "platform", "platforms", "transit"}:
            return ""
        counts = ", ".join(f"{kind} ({n})" for kind, n in self._stop_kinds.most_common())
        return (
            "bus and tram stops are not among these places: the bundled file "
            f"helsinki_stops.csv holds them ({counts}); load it as a layer to use them"
        )

    async def discover(
        self,
        *,
        query: str | None = None,
        category: str | None = None,
        near: LonLat | None = None,
        radius_m: float | None = None,
        within: Sequence[Mapping[str, Any]] = (),
        limit: int = 50,
    ) -> Found:
        """Search the demo city's points of interest."""
        request = {
            "query": query,
            "category": category,
            "near": list(near) if near else None,
            "radius_m": radius_m,
            "within": len(within),
            "limit": limit,
        }
        area = self._search_area(near, radius_m, within)
        if not area.intersects(self._city_area):
            middle = area.centroid
            raise ProviderMiss(
                "the offline provider only has places for central Helsinki "
                f"(bbox {', '.join(f'{v:.3f}' for v in bundled.bounds())}), and the area "
                f"searched lies outside it: {nearest_covered(middle.x, middle.y)}; configure "
                "TomTom or the OpenStreetMap stack to search elsewhere",
                code="unsupported",
                provider=_NAME,
                endpoint="offline:helsinki_places",
            )
        lon, lat = self._place_xy
        keep = (
            shapely.contains_xy(area, lon, lat)
            if not area.equals(self._city_area)
            else (np.ones(len(self._places), dtype=bool))
        )
        wanted_category = category_of(category) if category else None
        wanted_text = normalise(query) if query else None
        query_category = category_of(query) if query else None
        scores = np.zeros(len(self._places))
        for index in np.flatnonzero(keep):
            props = self._places[index]["properties"] or {}
            cats = [normalise(c) for c in props.get("categories") or [props.get("category", "")]]
            if wanted_category and normalise(wanted_category) not in cats:
                continue
            score = 1.0
            if wanted_text:
                by_name, _ = _best(wanted_text, self._place_names[index])
                by_category = 0.9 if query_category and normalise(query_category) in cats else 0.0
                score = max(by_name, by_category)
                if score == 0:
                    continue
            scores[index] = score
        hits = np.flatnonzero(scores > 0)
        if not len(hits) and (category or query):
            # Nothing matched: an empty answer, with what the area does have.
            return Found(
                data=_collection([]),
                sources=(self._source("helsinki_places"),),
                provider=_NAME,
                endpoint="offline:helsinki_places",
                request=request,
                notes=(self._nothing_matched(query, category, keep),),
            )
        order: list[int]
        if near is not None:
            distances = _haversine_m(lon[hits], lat[hits], near)
            order = [int(hits[i]) for i in np.argsort(distances - scores[hits] * 1e-3)]
            distance_of: dict[int, float] = dict(
                zip(hits.tolist(), distances.tolist(), strict=True)
            )
        else:
            order = [int(i) for i in hits[np.argsort(-scores[hits], kind="stable")]]
            distance_of = {}
        features: list[dict[str, Any]] = []
        for position in order[:limit]:
            feature = self._places[position]
            props = {
                **(feature["properties"] or {}),
                "provider": _NAME,
                "score": round(float(scores[position]), 3),
            }
            if position in distance_of:
                props["distance_m"] = round(distance_of[position], 1)
            if props.get("id") in self._outline_ids:
                props["has_outline"] = True
            # A fresh geometry: the caller may change what it gets, not the provider's copy.
            point = {"type": "Point", "coordinates": list(feature["geometry"]["coordinates"])}
            features.append({"type": "Feature", "geometry": point, "properties": props})
        notes: tuple[str, ...] = ()
        if len(order) > limit:
            notes = (f"{len(order)} matched; the {limit} {'nearest' if near else 'best'} kept",)
        if not (query or category):
            # Everything in the area: say what it holds, so a narrower search can follow.
            counts = self._categories(hits)
            listed = ", ".join(f"{name} ({n})" for name, n in counts.most_common(20))
            notes = (*notes, f"every place in the area; by category: {listed}")
        spelled = [f for f in features if f["properties"]["score"] < 0.55]
        if query and spelled:
            # A near spelling ("Sauma" for "sauna") may be a typo's answer, or nothing like it.
            names = ", ".join(repr(f["properties"].get("name")) for f in spelled[:3])
            notes = (
                *notes,
                f"{len(spelled)} matched {query!r} by spelling only ({names}): check they "
                "are what was asked",
            )
        return Found(
            data=_collection(features),
            sources=(self._source("helsinki_places"),),
            provider=_NAME,
            endpoint="offline:helsinki_places",
            request=request,
            notes=notes,
        )

    def _search_area(
        self, near: LonLat | None, radius_m: float | None, within: Sequence[Mapping[str, Any]]
    ) -> Any:
        # Several areas: the places in any of them. A point with a radius *and* areas: the
        # places in both (the circle and the areas' union, not each area in turn).
        area = shapely.union_all([shapely.geometry.shape(g) for g in within]) if within else None
        if near is not None:
            from geomint import geo  # noqa: PLC0415 - only a radius search needs it

            circle = geo.buffer_m(shapely.Point(near), radius_m or _DEFAULT_RADIUS_M)
            area = circle if area is None else area.intersection(circle)
        return self._city_area if area is None else area

    # -- boundaries ------------------------------------------------------------------------

    async def boundary(self, query: str, *, limit: int = 1) -> Found:
        """Country polygons, the demo city's parks, gardens, squares and landmark buildings
        (by any of their names), and the covered area itself, by name."""
        wanted = bare_query(query)
        scored: list[tuple[float, str, dict[str, Any]]] = []
        for feature in self._countries:
            props = feature["properties"]
            score = max(match_score(wanted, normalise(n)) for n in _country_names(props))
            if score >= 0.55:
                scored.append(
                    (
                        score,
                        "countries",
                        {
                            "type": "Feature",
                            "geometry": feature["geometry"],
                            "properties": {
                                "id": f"country:{props.get('iso_a3') or props.get('name')}",
                                "name": props.get("name"),
                                "kind": "country",
                            },
                        },
                    )
                )
        if self._names_covered_area(wanted):
            scored.append((1.0, "helsinki_places", self._covered_feature("area")))
        # "Helsinki" is the city, not the outline of "Helsinki Cathedral": a city's name
        # takes only an outline it names exactly.
        least = 1.0 if any(wanted in names for _, names in self._city_names) else 0.55
        for feature in self._parks:
            props = feature["properties"]
            names = _names_of(props)
            score, which = _best(wanted, [normalise(n) for n in names])
            if score >= least:
                outline = {
                    "id": props.get("id"),
                    "name": props.get("name"),
                    "kind": props.get("kind"),
                }
                if which:
                    outline["matched_name"] = names[which]
                scored.append(
                    (
                        score,
                        "helsinki_boundaries",
                        {"type": "Feature", "geometry": feature["geometry"], "properties": outline},
                    )
                )
        if not scored:
            known = [
                n
                for f in self._countries + self._parks
                for n in (
                    f["properties"].get("name", ""),
                    *(f["properties"].get("other_names") or ()),
                )
            ]
            hint = did_you_mean(query, known)
            raise ProviderMiss(
                f"no boundary for {query!r} offline: the bundled boundaries are countries, "
                "central Helsinki's parks, gardens and squares, the outlines of its landmark "
                "buildings (the cathedral, the railway station, museums, theatres, churches) "
                f"and the covered area itself ('central Helsinki'){hint}",
                code="not_found",
                provider=_NAME,
                endpoint="offline:boundaries",
            )
        scored.sort(key=lambda s: -s[0])
        chosen = scored[:limit]
        datasets = list(dict.fromkeys(d for _, d, _ in chosen))
        return Found(
            data=_collection([f for _, _, f in chosen]),
            sources=tuple(self._source(d) for d in datasets),
            provider=_NAME,
            endpoint="offline:boundaries",
            request={"query": query, "limit": limit},
        )

    # -- routes and ranges -------------------------------------------------------------------

    async def route(
        self,
        waypoints: Sequence[LonLat],
        *,
        mode: TravelMode = "car",
        avoid: Sequence[Avoid] = (),
        depart_at: datetime | None = None,
        alternatives: int = 0,
    ) -> Found:
        """A route on the demo city's road graph."""
        return _router.route(
            waypoints, mode=mode, avoid=avoid, depart_at=depart_at, alternatives=alternatives
        )

    async def reachable(
        self,
        origin: LonLat,
        *,
        time_s: float | None = None,
        distance_m: float | None = None,
        mode: TravelMode = "car",
        depart_at: datetime | None = None,
    ) -> Found:
        """The area reachable on the demo city's road graph within a budget."""
        return _router.reachable(
            origin, time_s=time_s, distance_m=distance_m, mode=mode, depart_at=depart_at
        )
