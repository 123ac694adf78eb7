"""The offline provider: answers from data that ships with geomint, with no network.

* geocoding: countries (Natural Earth), cities of 100,000 people or more (GeoNames), and
  the named places of the demo city (central Helsinki, OpenStreetMap);
* boundaries: country polygons and the demo city's parks, gardens and squares;
* place search: the demo city's points of interest, by text or category, near a point
  or within areas;
* routes and reachable areas: on the demo city's road graph (see :mod:`._router`).

Every answer carries the provenance of the bundled file it came from (publisher, licence,
the data's date). Outside what the data covers, a call is a miss that says so, never a
guess.
"""

from __future__ import annotations

import difflib
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
from geomint.providers._text import did_you_mean, match_score, normalise, singular
from geomint.providers.base import Avoid, Found, LonLat, ProviderMiss, TravelMode
from geomint.providers.offline import _router

__all__ = ["OfflineProvider"]

_NAME: Final = "offline"
_EARTH_M: Final = 6_371_008.8
_DEFAULT_RADIUS_M: Final = 1_000.0
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
            f"bundled data only: places, parks, squares and streets of central Helsinki "
            f"(bbox {west:.3f}, {south:.3f}, {east:.3f}, {north:.3f}), routes and reachable "
            "areas inside it; countries worldwide; cities of 100,000 people or more"
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
    def _place_names(self) -> list[str]:
        return [normalise((f["properties"] or {}).get("name") or "") for f in self._places]

    @cached_property
    def _city_area(self) -> shapely.Polygon:
        return shapely.box(*bundled.bounds())

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
        """Find countries, cities and the demo city's named places by name."""
        wanted = normalise(query)
        if not wanted:
            raise ProviderMiss("the query is empty", code="not_found", provider=_NAME)
        scored: list[tuple[float, str, dict[str, Any]]] = []
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
                scored.append(
                    (
                        score + 0.2,
                        "countries",
                        _point(
                            x,
                            y,
                            {
                                "id": f"country:{props.get('iso_a3') or props.get('name')}",
                                "name": props.get("name"),
                                "category": "country",
                                "categories": ["country"],
                                "country_code": props.get("iso_a2"),
                                "provider": _NAME,
                            },
                        ),
                    )
                )
        for city, names in self._city_names:
            if country and city.country_code.upper() != country.upper():
                continue
            score = max(match_score(wanted, n) for n in names)
            if score > 0:
                bonus = min(math.log10(max(city.population, 1)) / 40, 0.2)
                scored.append(
                    (
                        score + bonus,
                        "cities",
                        _point(
                            city.lon,
                            city.lat,
                            {
                                "id": f"geonames:{city.geonameid}",
                                "name": city.name,
                                "category": "city",
                                "categories": ["city"],
                                "country_code": city.country_code,
                                "population": city.population,
                                "provider": _NAME,
                            },
                        ),
                    )
                )
        if not country or country.upper() == "FI":
            for feature, name in zip(self._places, self._place_names, strict=True):
                score = match_score(wanted, name) if name else 0.0
                if score > 0:
                    lon, lat = feature["geometry"]["coordinates"][:2]
                    scored.append(
                        (
                            score,
                            "helsinki_places",
                            _point(lon, lat, {**feature["properties"], "provider": _NAME}),
                        )
                    )
        if near is not None and scored:
            lon = np.array([s[2]["geometry"]["coordinates"][0] for s in scored])
            lat = np.array([s[2]["geometry"]["coordinates"][1] for s in scored])
            metres = _haversine_m(lon, lat, near)
            # Nearby wins ties: up to 0.15 for a match within a few kilometres.
            scored = [
                (s + 0.15 / (1 + m / 5_000), d, f)
                for (s, d, f), m in zip(scored, metres.tolist(), strict=True)
            ]
        if not scored:
            known = [c.name for c in self._cities] + [
                f["properties"].get("name", "") for f in self._countries
            ]
            hint = did_you_mean(query, known)
            if country:
                # The suggestions ignore the filter: say it was the filter that excluded them.
                hint = f" in country {country.upper()}{hint}"
            raise ProviderMiss(
                f"no country, city (100,000 people or more) or named place in central "
                f"Helsinki matches {query!r}{hint}",
                code="not_found",
                provider=_NAME,
                endpoint="offline:gazetteer",
            )
        scored.sort(key=lambda s: -s[0])
        chosen = scored[:limit]
        # The bonuses (a country, a large city, nearness) rank, so they may push a score
        # past 1: scale to the best rather than cut at 1, or "Paris" and Warsaw (alias
        # "Paris of the North") would both score 1.
        scale = max(1.0, chosen[0][0])
        features = []
        for score, _, feature in chosen:
            feature["properties"]["score"] = round(score / scale, 3)
            features.append(feature)
        datasets = list(dict.fromkeys(d for _, d, _ in chosen))
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
                str(self._place_names[i]): str((self._places[i]["properties"] or {}).get("name"))
                for i in np.flatnonzero(searched)
            }
            close = difflib.get_close_matches(normalise(query), list(names), n=3, cutoff=0.6)
            parts.append(
                f"the nearest names are {', '.join(names[c] for c in close)}"
                if close
                else "no name is close to it"
            )
        return "; ".join(parts)

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
            raise ProviderMiss(
                "the offline provider only has places for central Helsinki "
                f"(bbox {', '.join(f'{v:.3f}' for v in bundled.bounds())}); configure TomTom "
                "or the OpenStreetMap stack to search elsewhere",
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
                by_name = match_score(wanted_text, self._place_names[index])
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
        features = []
        for position in order[:limit]:
            feature = self._places[position]
            props = {
                **(feature["properties"] or {}),
                "provider": _NAME,
                "score": round(float(scores[position]), 3),
            }
            if position in distance_of:
                props["distance_m"] = round(distance_of[position], 1)
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
        """Country polygons and the demo city's parks, gardens and squares, by name."""
        wanted = normalise(query)
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
        for feature in self._parks:
            props = feature["properties"]
            score = match_score(wanted, normalise(props.get("name", "")))
            if score >= 0.55:
                scored.append(
                    (
                        score,
                        "helsinki_boundaries",
                        {
                            "type": "Feature",
                            "geometry": feature["geometry"],
                            "properties": {
                                "id": props.get("id"),
                                "name": props.get("name"),
                                "kind": props.get("kind"),
                            },
                        },
                    )
                )
        if not scored:
            names = [f["properties"].get("name", "") for f in self._countries + self._parks]
            hint = did_you_mean(query, names)
            raise ProviderMiss(
                f"no boundary for {query!r} offline: the bundled boundaries are countries and "
                f"central Helsinki's parks, gardens and squares{hint}",
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
