"""The TomTom provider: place search, geocoding, outlines, routes, reachable areas and
traffic incidents from TomTom's web APIs, with an API key.

What each capability asks of TomTom (Search API 2, Routing API 1, Traffic API 5):

* :meth:`~TomTomProvider.locate`: fuzzy search, ``/search/2/search/{query}.json``, which
  finds addresses, streets, cities and countries and named points of interest alike
  (``/search/2/geocode`` finds no points of interest, so "Kiasma" would miss there);
* :meth:`~TomTomProvider.discover`: ``/search/2/poiSearch/{query}.json`` for text,
  ``/search/2/categorySearch/{category}.json`` for a category, ``/search/2/nearbySearch``
  for "anything near here", all with ``lat``/``lon``/``radius``; and, for areas (a search
  along a route passes its corridor as one), ``POST /search/2/geometrySearch/{text}.json``
  with the polygons in ``geometryList``, each simplified to at most 50 vertices and grown
  so that it still covers the area, the results then kept only if they fall inside the
  areas as given. ``searchAlongRoute`` is not used: it takes the route's points and a
  detour budget, which the :class:`~geomint.providers.base.PlaceSearch` protocol does not
  carry;
* :meth:`~TomTomProvider.boundary`: fuzzy search for the name, then the Additional Data
  service, ``/search/2/additionalData.json?geometries=...``, for the outlines of the
  results that have one (cities, regions, countries, some parks);
* :meth:`~TomTomProvider.route`: ``/routing/1/calculateRoute/{lat,lon:lat,lon...}/json``
  with live traffic, alternatives and traffic sections;
* :meth:`~TomTomProvider.reachable`: ``/routing/1/calculateReachableRange/{lat,lon}/json``
  by time or distance, for cars and trucks (TomTom refuses walking and cycling there);
* :meth:`~TomTomProvider.incidents`: ``/traffic/services/5/incidentDetails`` for a bounding
  box of at most 10,000 km².

TomTom writes positions as latitude then longitude, in paths and in its geometry-search
bodies; geomint writes longitude then latitude everywhere. The conversion happens in this
module (requests) and in :mod:`geomint.providers.tomtom._shapes` (answers), nowhere else.

TomTom's Area Analytics (traffic statistics over an area) is a report service of its MOVE
portal with asynchronous jobs, not one of these keyed REST APIs, and the providers'
protocols have no capability for it: it is not offered.

Every answer carries provenance under TomTom's API terms. Places, outlines and incidents
are ``observed`` (surveyed map data, probe and sensor data); routes and reachable areas
are ``modelled``: their travel times are TomTom's predictions from historic and live
speeds, not measurements of a trip. Every failure is a
:class:`~geomint.providers.base.ProviderMiss` whose reason never holds the key.
"""

from __future__ import annotations

import dataclasses
import math
import os
import re
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from typing import Any, Final, Literal
from urllib.parse import quote, urlencode

import shapely

from geomint import geo
from geomint.errors import UsageError
from geomint.http import (
    CacheMode,
    FetchError,
    ParamValue,
    RequestPolicy,
    arequest_json,
    redact,
)
from geomint.provenance import Evidence, Provenance
from geomint.providers.base import Avoid, Found, LonLat, MissCode, ProviderMiss, TravelMode
from geomint.providers.tomtom import _shapes as tt

__all__ = ["TomTomProvider"]

_NAME: Final = "tomtom"
_ENV_KEY: Final = "TOMTOM_API_KEY"
_LICENCE: Final = "TomTom API terms"
_TERMS_URL: Final = "https://developer.tomtom.com/terms-and-conditions"
#: TomTom's free plan allows 5 requests per second to most of these APIs.
_DEFAULT_RATE: Final = 5.0
_MAX_RESULTS: Final = 100
_MAX_WAYPOINTS: Final = 150
_MAX_ALTERNATIVES: Final = 5
_MAX_GEOMETRY_IDS: Final = 20
_MAX_BBOX_KM2: Final = 10_000.0

_TRAVEL_MODES: Final[Mapping[str, str]] = {
    "car": "car",
    "walk": "pedestrian",
    "bike": "bicycle",
    "truck": "truck",
}
_AVOIDS: Final[Mapping[str, str]] = {
    "motorways": "motorways",
    "tolls": "tollRoads",
    "ferries": "ferries",
    "unpaved": "unpavedRoads",
}
#: Outline precision (``geometriesZoom``) by kind: a country's outline at street detail
#: would be megabytes.
_OUTLINE_ZOOM: Final[Mapping[str, int]] = {"country": 8, "region": 10}
_DEFAULT_ZOOM: Final = 14
_INCIDENT_FIELDS: Final = (
    "{incidents{type,geometry{type,coordinates},properties{id,iconCategory,"
    "magnitudeOfDelay,events{description,code,iconCategory},startTime,endTime,from,to,"
    "length,delay,roadNumbers,timeValidity}}}"
)
#: Words in a 403 that mean "too often", not "bad key" (TomTom's gateway uses 403 for both).
_OVER_LIMIT: Final = re.compile(r"over (queries per second|rate) limit|rate limit", re.I)
_MESSAGE: Final = re.compile(r'"(?:message|errorText|description)"\s*:\s*"([^"]{1,200})')
_TAG: Final = re.compile(r"<[^>]{0,200}>")
_NO_ROUTE: Final = re.compile(r"NO_ROUTE_FOUND|MAP_MATCHING_FAILURE|CANNOT_RESTORE", re.I)


@dataclasses.dataclass(frozen=True)
class _Dataset:
    source_id: str
    title: str
    evidence: Evidence

    def provenance(self) -> Provenance:
        return Provenance(
            source_id=self.source_id,
            title=self.title,
            publisher="TomTom",
            licence=_LICENCE,
            url=_TERMS_URL,
            retrieved_at=datetime.now(UTC),
            evidence=self.evidence,
        )


_SEARCH: Final = _Dataset("tomtom-search", "TomTom Search API", "observed")
_OUTLINES: Final = _Dataset(
    "tomtom-additional-data", "TomTom Search API: Additional Data", "observed"
)
_ROUTING: Final = _Dataset("tomtom-routing", "TomTom Routing API", "modelled")
_TRAFFIC: Final = _Dataset("tomtom-traffic", "TomTom Traffic API: Incident Details", "observed")


def _collection(features: list[dict[str, Any]]) -> dict[str, Any]:
    return {"type": "FeatureCollection", "features": features}


def _latlon(point: LonLat, what: str) -> str:
    """A geomint (lon, lat) as TomTom's ``lat,lon``, refusing what is not a position."""
    lon, lat = float(point[0]), float(point[1])
    if not (math.isfinite(lon) and math.isfinite(lat) and -180 <= lon <= 180 and -90 <= lat <= 90):
        raise ProviderMiss(
            f"{what} {tuple(point)!r} is not a position: give (longitude, latitude) in "
            "degrees, longitude within ±180 and latitude within ±90",
            code="refused",
            provider=_NAME,
        )
    return f"{lat:.6f},{lon:.6f}"


def _clamp_limit(limit: int) -> int:
    return max(1, min(int(limit), _MAX_RESULTS))


class TomTomProvider:
    """Geocoding, place search, outlines, routes, reachable areas and traffic incidents
    from TomTom.

    Args:
        api_key: A TomTom API key; by default ``$TOMTOM_API_KEY``.
        base_url: Where TomTom's APIs are (a test points it at a local server).
        policy: How requests are sent: timeouts, size cap, retries, rate, cache. By
            default 5 requests per second and no cache. The key is added to its secrets
            and ``base_url`` to its trusted base URLs.
        language: An IETF language tag (``"fi-FI"``, ``"en-GB"``) for names, addresses
            and incident descriptions, or None for TomTom's default.

    Raises:
        UsageError: No key was given and ``TOMTOM_API_KEY`` is not set.

    Example:
        >>> provider = TomTomProvider("k3y", base_url="http://127.0.0.1:9")
        >>> provider.name, "k3y" in repr(provider)
        ('tomtom', False)
    """

    name = _NAME
    #: What it can answer, as the model reads it in the tools' descriptions.
    coverage = "worldwide, from TomTom's services"

    def __init__(
        self,
        api_key: str | None = None,
        *,
        base_url: str = "https://api.tomtom.com",
        policy: RequestPolicy | None = None,
        language: str | None = None,
    ) -> None:
        key = (api_key if api_key is not None else os.environ.get(_ENV_KEY, "")).strip()
        if not key:
            raise UsageError(
                f"TomTomProvider needs an API key: pass api_key=... or set {_ENV_KEY} "
                "(keys come from https://developer.tomtom.com)"
            )
        self._key = key
        self.base_url = base_url.rstrip("/")
        self.language = language
        given = policy if policy is not None else RequestPolicy(rate_per_s=_DEFAULT_RATE)
        self.policy = dataclasses.replace(
            given,
            secrets=tuple(dict.fromkeys((*given.secrets, key))),
            trusted_base_urls=tuple(dict.fromkeys((*given.trusted_base_urls, self.base_url))),
        )

    def __repr__(self) -> str:
        return f"TomTomProvider(base_url={self.base_url!r}, language={self.language!r})"

    # -- the one way out -------------------------------------------------------------------

    async def _call(
        self,
        path: str,
        params: Mapping[str, ParamValue],
        *,
        what: str,
        method: Literal["GET", "POST"] = "GET",
        body: Any = None,
        repeated: Sequence[tuple[str, str]] = (),
        cache: CacheMode = "use",
    ) -> Any:
        """Send one request with the key, and turn any failure into a miss."""
        endpoint = self.base_url + path
        url = endpoint + (f"?{urlencode(list(repeated))}" if repeated else "")
        try:
            return await arequest_json(
                method,
                url,
                params={**params, "key": self._key},
                json=body,
                policy=self.policy,
                cache=cache,
            )
        except FetchError as error:
            raise self._miss(error, what, endpoint) from None

    def _miss(self, error: FetchError, what: str, endpoint: str) -> ProviderMiss:
        """Say what went wrong with a TomTom call, as a miss the model can act on."""
        detail = " ".join(_TAG.sub(" ", error.detail or "").split())
        said = _MESSAGE.search(detail)
        told = f": {said.group(1)}" if said else (f": {detail}" if detail else "")
        code: MissCode
        status = error.status
        if error.code == "rate_limited" or status == 429:
            code = "rate_limited"
            wait = f"; try again in {math.ceil(error.retry_after)} s" if error.retry_after else ""
            reason = f"TomTom limits how often {what} may be asked and refused this one{wait}"
        elif error.code == "status" and status in (401, 403):
            if _OVER_LIMIT.search(detail):
                code = "rate_limited"
                reason = f"TomTom refused {what}: the key is over its rate limit{told}"
            else:
                code = "refused"
                reason = (
                    f"TomTom refused the API key for {what} (HTTP {status}{told}); check "
                    f"{_ENV_KEY} and that the key has this API enabled"
                )
        elif error.code == "status" and status is not None and status >= 500:
            code = "unavailable"
            reason = f"TomTom could not answer {what} (HTTP {status}{told}); try again later"
        elif error.code == "status" and _NO_ROUTE.search(detail):
            code = "not_found"
            reason = f"TomTom could not make {what}{told}"
        elif error.code == "status":
            code = "refused"
            reason = f"TomTom rejected {what} (HTTP {status}{told})"
        elif error.code == "malformed":
            code = "unavailable"
            reason = f"TomTom's answer to {what} was malformed: it is not JSON; try again later"
        elif error.code == "too_large":
            code = "refused"
            reason = (
                f"TomTom's answer to {what} is larger than max_bytes="
                f"{self.policy.max_bytes:,}; ask for a smaller area or fewer results"
            )
        elif error.code == "timeout":
            code = "unavailable"
            reason = (
                f"TomTom did not answer {what} within timeout_s={self.policy.timeout_s:g} s; "
                "try again later"
            )
        elif error.code in ("scheme", "address", "vetoed"):
            code = "refused"
            reason = f"{what} was not sent: {error.reason or error}"
        else:
            code = "unavailable"
            reason = f"TomTom did not answer {what}: {error.reason or error}"
        return ProviderMiss(
            redact(reason, self.policy.secrets), code=code, provider=_NAME, endpoint=endpoint
        )

    def _malformed(self, what: str, endpoint: str, missing: str) -> ProviderMiss:
        return ProviderMiss(
            f"TomTom's answer to {what} was malformed: it has no {missing}; try again later",
            code="unavailable",
            provider=_NAME,
            endpoint=self.base_url + endpoint,
        )

    def _found(
        self,
        features: list[dict[str, Any]],
        dataset: _Dataset,
        path: str,
        request: Mapping[str, Any],
        notes: Sequence[str] = (),
        also: Sequence[_Dataset] = (),
    ) -> Found:
        return Found(
            data=_collection(features),
            sources=tuple(d.provenance() for d in (dataset, *also)),
            provider=_NAME,
            endpoint=self.base_url + path,
            request={name: value for name, value in request.items() if value is not None},
            notes=tuple(notes),
        )

    # -- geocoding -------------------------------------------------------------------------

    async def locate(
        self,
        query: str,
        *,
        near: LonLat | None = None,
        country: str | None = None,
        limit: int = 5,
    ) -> Found:
        """Find addresses, places and points of interest by name (fuzzy search)."""
        text = query.strip()
        if not text:
            raise ProviderMiss("the query is empty", code="not_found", provider=_NAME)
        path = f"/search/2/search/{quote(text, safe='')}.json"
        params = self._search_params(limit, near)
        params["countrySet"] = country.upper() if country else None
        answer = await self._call(path, params, what=f"the search for {text!r}")
        features, notes = self._places(answer, path, f"the search for {text!r}", limit)
        if not features:
            where = f" in {country.upper()}" if country else ""
            raise ProviderMiss(
                f"TomTom found nothing named {text!r}{where}; check the spelling or add "
                "the city or country",
                code="not_found",
                provider=_NAME,
                endpoint=self.base_url + path,
            )
        return self._found(features, _SEARCH, path, {"query": text, **params}, notes)

    def _search_params(self, limit: int, near: LonLat | None) -> dict[str, ParamValue]:
        params: dict[str, ParamValue] = {"limit": _clamp_limit(limit), "language": self.language}
        if near is not None:
            _latlon(near, "near")
            params["lat"], params["lon"] = float(near[1]), float(near[0])
        return params

    def _places(
        self, answer: Any, path: str, what: str, limit: int
    ) -> tuple[list[dict[str, Any]], tuple[str, ...]]:
        """Search results as place features, with a note when TomTom matched more."""
        read = tt.places(answer, limit)
        if read is None:
            raise self._malformed(what, path, "results list")
        features, total = read
        notes: tuple[str, ...] = ()
        if total is not None and total > len(features) and features:
            notes = (f"TomTom matched {total}; the {len(features)} best are kept",)
        return features, notes

    # -- place search ----------------------------------------------------------------------

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
        """Search points of interest by text or category, near a point or within areas."""
        text = (query or "").strip() or None
        kind = (category or "").strip() or None
        request: dict[str, Any] = {
            "query": text,
            "category": kind,
            "near": list(near) if near else None,
            "radius_m": radius_m,
            "within": len(within) or None,
            "limit": limit,
        }
        if within:
            return await self._discover_within(text, kind, near, radius_m, within, limit, request)
        params = self._search_params(limit, near)
        if near is not None and radius_m is not None:
            params["radius"] = max(1, round(radius_m))
        if text is not None:
            words = f"{text} {kind}" if kind and kind.lower() not in text.lower() else text
            path = f"/search/2/poiSearch/{quote(words, safe='')}.json"
            label = repr(words)
        elif kind is not None:
            path = f"/search/2/categorySearch/{quote(kind, safe='')}.json"
            label = f"{kind!r} places"
        elif near is not None:
            path = "/search/2/nearbySearch/.json"
            params.setdefault("radius", 1_000)
            label = "places"
        else:
            raise ProviderMiss(
                "say what to look for: a query, a category, or a point to search near",
                code="refused",
                provider=_NAME,
            )
        what = f"the search for {label}"
        answer = await self._call(path, params, what=what)
        features, notes = self._places(answer, path, what, limit)
        if not features:
            raise ProviderMiss(
                f"TomTom found no {label}" + (" near there" if near else ""),
                code="not_found",
                provider=_NAME,
                endpoint=self.base_url + path,
            )
        return self._found(features, _SEARCH, path, {**request, **params}, notes)

    async def _discover_within(
        self,
        text: str | None,
        kind: str | None,
        near: LonLat | None,
        radius_m: float | None,
        within: Sequence[Mapping[str, Any]],
        limit: int,
        request: dict[str, Any],
    ) -> Found:
        words = " ".join(w for w in (text, kind) if w)
        if not words:
            raise ProviderMiss(
                "TomTom's geometry search needs a query or a category to look for within "
                "the areas (it has no 'everything here' search)",
                code="refused",
                provider=_NAME,
            )
        area = tt.area_of(within)
        if near is not None and radius_m is not None:
            area = area.intersection(geo.buffer_m(shapely.Point(near), radius_m))
            if area.is_empty:
                raise ProviderMiss(
                    "the circle around `near` does not overlap the areas given",
                    code="not_found",
                    provider=_NAME,
                )
        geometry_list = [
            {"type": "POLYGON", "vertices": [f"{lat:.6f},{lon:.6f}" for lon, lat in ring]}
            for ring in tt.rings_for_search(area)
        ]
        path = f"/search/2/geometrySearch/{quote(words, safe='')}.json"
        what = f"the search for {words!r} within the areas"
        params: dict[str, ParamValue] = {"limit": _MAX_RESULTS, "language": self.language}
        answer = await self._call(
            path, params, what=what, method="POST", body={"geometryList": geometry_list}
        )
        features, _ = self._places(answer, path, what, _MAX_RESULTS)
        if features:
            lon = [f["geometry"]["coordinates"][0] for f in features]
            lat = [f["geometry"]["coordinates"][1] for f in features]
            inside = shapely.intersects_xy(area, lon, lat)
            features = [f for f, keep in zip(features, inside, strict=True) if keep]
        if not features:
            raise ProviderMiss(
                f"TomTom found no {words!r} within the areas",
                code="not_found",
                provider=_NAME,
                endpoint=self.base_url + path,
            )
        notes: list[str] = []
        if len(features) > limit:
            notes.append(f"{len(features)} matched inside the areas; the {limit} best are kept")
            features = features[: max(1, limit)]
        sent = {**request, "polygons_sent": len(geometry_list)}
        return self._found(features, _SEARCH, path, sent, notes)

    # -- boundaries ------------------------------------------------------------------------

    async def boundary(self, query: str, *, limit: int = 1) -> Found:
        """Outlines of named cities, regions, countries and some parks."""
        text = query.strip()
        if not text:
            raise ProviderMiss("the query is empty", code="not_found", provider=_NAME)
        search = f"/search/2/search/{quote(text, safe='')}.json"
        what = f"the search for {text!r}"
        params = self._search_params(10, None)
        answer = await self._call(search, params, what=what)
        if not isinstance(answer, Mapping) or not isinstance(answer.get("results"), list):
            raise self._malformed(what, search, "results list")
        wanted: list[tuple[str, Mapping[str, Any], dict[str, Any]]] = []
        seen: list[str] = []
        for result in tt.dicts(answer["results"]):
            place = tt.place(result, 1.0)
            if place is None:
                continue
            seen.append(str(place["properties"]["name"]))
            sources = result.get("dataSources")
            geometry = sources.get("geometry") if isinstance(sources, Mapping) else None
            gid = geometry.get("id") if isinstance(geometry, Mapping) else None
            if isinstance(gid, str) and gid and len(wanted) < min(limit, _MAX_GEOMETRY_IDS):
                wanted.append((gid, result, place))
        if not wanted:
            found = f"; it found {', '.join(seen[:3])}, without one" if seen else ""
            raise ProviderMiss(
                f"TomTom has no outline for {text!r}{found}",
                code="not_found",
                provider=_NAME,
                endpoint=self.base_url + search,
            )
        kinds = [tt.kind_of(result) for _, result, _ in wanted]
        zoom = min(_OUTLINE_ZOOM.get(k, _DEFAULT_ZOOM) for k in kinds)
        path = "/search/2/additionalData.json"
        outline_params: dict[str, ParamValue] = {
            "geometries": ",".join(gid for gid, _, _ in wanted),
            "geometriesZoom": zoom,
        }
        data = await self._call(path, outline_params, what=f"the outline of {text!r}")
        if not isinstance(data, Mapping) or not isinstance(data.get("additionalData"), list):
            raise self._malformed(f"the outline of {text!r}", path, "additionalData list")
        shapes = {
            str(entry.get("providerID")): tt.polygon_of(entry.get("geometryData"))
            for entry in tt.dicts(data["additionalData"])
        }
        features = []
        for (gid, _, place), kind in zip(wanted, kinds, strict=True):
            outline = shapes.get(gid)
            if outline is None:
                continue
            props = place["properties"]
            features.append(
                {
                    "type": "Feature",
                    "geometry": outline,
                    "properties": {
                        "id": props["id"],
                        "name": props["name"],
                        "kind": kind,
                        "country_code": props.get("country_code"),
                        "provider": _NAME,
                    },
                }
            )
        if not features:
            raise ProviderMiss(
                f"TomTom returned no outline for {text!r}",
                code="not_found",
                provider=_NAME,
                endpoint=self.base_url + path,
            )
        request = {"query": text, "limit": limit, **outline_params}
        return self._found(features, _OUTLINES, path, request, also=(_SEARCH,))

    # -- routes and ranges -----------------------------------------------------------------

    async def route(
        self,
        waypoints: Sequence[LonLat],
        *,
        mode: TravelMode = "car",
        avoid: Sequence[Avoid] = (),
        depart_at: datetime | None = None,
        alternatives: int = 0,
    ) -> Found:
        """The fastest route through ``waypoints`` in order, with live traffic."""
        if not 2 <= len(waypoints) <= _MAX_WAYPOINTS:
            raise ProviderMiss(
                f"a route needs 2 to {_MAX_WAYPOINTS} waypoints; got {len(waypoints)}",
                code="refused",
                provider=_NAME,
            )
        locations = ":".join(
            _latlon(p, "origin" if i == 0 else "a waypoint") for i, p in enumerate(waypoints)
        )
        path = f"/routing/1/calculateRoute/{locations}/json"
        params: dict[str, ParamValue] = {
            "travelMode": _travel_mode(mode),
            "traffic": True,
            "routeType": "fastest",
            "routeRepresentation": "polyline",
            "computeTravelTimeFor": "all",
            "maxAlternatives": max(0, min(int(alternatives), _MAX_ALTERNATIVES)),
            "departAt": _when(depart_at),
        }
        repeated = [("avoid", _avoid(a)) for a in dict.fromkeys(avoid)]
        repeated += [("sectionType", "traffic"), ("sectionType", "travelMode")]
        what = f"the {mode} route"
        # Routes depend on live traffic: never answered from a cache.
        answer = await self._call(path, params, what=what, repeated=repeated, cache="skip")
        if not isinstance(answer, Mapping) or not isinstance(answer.get("routes"), list):
            raise self._malformed(what, path, "routes list")
        features = [
            f
            for rank, r in enumerate(tt.dicts(answer["routes"]))
            if (f := tt.route_feature(r, rank, mode, avoid)) is not None
        ]
        if not features:
            raise ProviderMiss(
                f"TomTom found no {mode} route through those waypoints",
                code="not_found",
                provider=_NAME,
                endpoint=self.base_url + path,
            )
        request = {
            "waypoints": [list(p) for p in waypoints],
            "mode": mode,
            "avoid": list(avoid),
            **params,
        }
        notes = ("travel times are TomTom's predictions from historic and live traffic",)
        return self._found(features, _ROUTING, path, request, notes)

    async def reachable(
        self,
        origin: LonLat,
        *,
        time_s: float | None = None,
        distance_m: float | None = None,
        mode: TravelMode = "car",
        depart_at: datetime | None = None,
    ) -> Found:
        """The area reachable from ``origin`` by car or truck within a time or distance."""
        if (time_s is None) == (distance_m is None):
            raise ProviderMiss("give a time or a distance budget", code="refused", provider=_NAME)
        budget = float(time_s if time_s is not None else distance_m)  # type: ignore[arg-type]
        if not (math.isfinite(budget) and budget > 0):
            raise ProviderMiss("the budget must be positive", code="refused", provider=_NAME)
        if mode in ("walk", "bike"):
            raise ProviderMiss(
                f"TomTom's reachable range serves cars and trucks only (it refuses "
                f"{_TRAVEL_MODES[mode]}); use the offline provider or Valhalla for {mode}",
                code="unsupported",
                provider=_NAME,
            )
        path = f"/routing/1/calculateReachableRange/{_latlon(origin, 'the origin')}/json"
        params: dict[str, ParamValue] = {
            "travelMode": _travel_mode(mode),
            "traffic": True,
            "departAt": _when(depart_at),
        }
        if time_s is not None:
            params["timeBudgetInSec"] = round(budget)
        else:
            params["distanceBudgetInMeters"] = round(budget)
        what = f"the area reachable by {mode}"
        answer = await self._call(path, params, what=what, cache="skip")
        reach = answer.get("reachableRange") if isinstance(answer, Mapping) else None
        if not isinstance(reach, Mapping):
            raise self._malformed(what, path, "reachableRange")
        boundary = reach.get("boundary")
        ring = [
            p for p in (tt.lonlat_of(b, "latitude", "longitude") for b in tt.dicts(boundary)) if p
        ]
        if len(ring) < 3:
            raise ProviderMiss(
                "TomTom found nothing reachable from there (the origin may be off the roads)",
                code="not_found",
                provider=_NAME,
                endpoint=self.base_url + path,
            )
        if ring[0] != ring[-1]:
            ring.append(list(ring[0]))
        budget_props = {"time_s": time_s} if time_s is not None else {"distance_m": distance_m}
        properties: dict[str, Any] = {
            "origin": [float(origin[0]), float(origin[1])],
            "budget": budget_props,
            "mode": mode,
            "provider": _NAME,
        }
        center = tt.lonlat_of(reach.get("center"), "latitude", "longitude")
        if center is not None:
            properties["matched_origin"] = center
        feature = {
            "type": "Feature",
            "geometry": {"type": "Polygon", "coordinates": [ring]},
            "properties": properties,
        }
        request = {"origin": list(origin), "mode": mode, **budget_props, **params}
        within = f"{time_s / 60:g} min" if time_s is not None else f"{distance_m:g} m"
        notes = (
            f"the area is TomTom's reachable range for a {mode} within {within}: one outline "
            "round what its routing reaches, timed with historic and live traffic at the "
            "departure time",
            "it may over-count: all land inside the outline counts as reached, between the "
            "roads reached too",
        )
        return self._found([feature], _ROUTING, path, request, notes)

    # -- traffic ---------------------------------------------------------------------------

    async def incidents(self, bbox: tuple[float, float, float, float]) -> Found:
        """Current traffic incidents in a box of at most 10,000 km²."""
        west, south, east, north = (float(v) for v in bbox)
        valid = all(math.isfinite(v) for v in (west, south, east, north))
        if not (valid and -180 <= west < east <= 180 and -90 <= south < north <= 90):
            raise ProviderMiss(
                f"bbox {tuple(bbox)!r} is not (west, south, east, north) in degrees with "
                "west < east and south < north",
                code="refused",
                provider=_NAME,
            )
        km2 = geo.area_m2(shapely.box(west, south, east, north)) / 1e6
        if km2 > _MAX_BBOX_KM2:
            raise ProviderMiss(
                f"the box covers {km2:,.0f} km², and TomTom answers for at most "
                f"{_MAX_BBOX_KM2:,.0f} km² at once; ask about a smaller area (a city, a "
                "corridor along a route)",
                code="refused",
                provider=_NAME,
            )
        path = "/traffic/services/5/incidentDetails"
        params: dict[str, ParamValue] = {
            "bbox": f"{west:.6f},{south:.6f},{east:.6f},{north:.6f}",
            "fields": _INCIDENT_FIELDS,
            "language": self.language or "en-GB",
            "timeValidityFilter": "present",
        }
        what = "the traffic incidents"
        # Traffic is live: never answered from a cache.
        answer = await self._call(path, params, what=what, cache="skip")
        if not isinstance(answer, Mapping) or not isinstance(answer.get("incidents"), list):
            raise self._malformed(what, path, "incidents list")
        features = [f for f in map(tt.incident, tt.dicts(answer["incidents"])) if f is not None]
        if not features:
            raise ProviderMiss(
                "TomTom reports no current traffic incidents in that area",
                code="not_found",
                provider=_NAME,
                endpoint=self.base_url + path,
            )
        request = {"bbox": [west, south, east, north], "language": params["language"]}
        return self._found(features, _TRAFFIC, path, request)


def _travel_mode(mode: str) -> str:
    if mode not in _TRAVEL_MODES:
        raise ProviderMiss(
            f"mode {mode!r} is not a travel mode; use one of {', '.join(_TRAVEL_MODES)}",
            code="refused",
            provider=_NAME,
        )
    return _TRAVEL_MODES[mode]


def _avoid(what: str) -> str:
    if what not in _AVOIDS:
        raise ProviderMiss(
            f"avoid={what!r} is not something a route can avoid; use {', '.join(_AVOIDS)}",
            code="refused",
            provider=_NAME,
        )
    return _AVOIDS[what]


def _when(depart_at: datetime | None) -> str | None:
    """``departAt`` as TomTom reads it; a time without a zone is taken as UTC."""
    if depart_at is None:
        return None
    aware = depart_at if depart_at.tzinfo is not None else depart_at.replace(tzinfo=UTC)
    return aware.isoformat(timespec="seconds")
