"""The OpenStreetMap stack: Nominatim, Overpass, OSRM and Valhalla, keyless, self-hostable.

=====================  =====================================================  ==============
capability             endpoint                                               source id
=====================  =====================================================  ==============
``locate``             Nominatim ``GET /search`` (``format=jsonv2``)          osm-nominatim
``boundary``           Nominatim ``GET /search`` with ``polygon_geojson=1``   osm-nominatim
``discover``           Overpass ``POST`` of an Overpass QL query              osm-overpass
``route``              OSRM ``GET /route/v1/{profile}/{lon,lat;...}``, or     osm-osrm,
                       Valhalla ``POST /route`` (see below)                   osm-valhalla
``reachable``          Valhalla ``POST /isochrone``                           osm-valhalla
=====================  =====================================================  ==============

Not offered: traffic incidents (OpenStreetMap has none; :class:`OsmProvider` is no
``TrafficSource``), and departure-time-dependent travel times (neither engine is given
traffic here: a route's duration is the same at any hour).

Routes go to OSRM when it can serve them, else to Valhalla, and the answer's notes say
which and why: a mode the OSRM server was not built for (``osrm_modes``: an OSRM server
serves the one profile it was built with, whatever profile the URL names, so a walking
route asked of a car server would come back a car route; the public demo server is car
only), trucks (OSRM has no truck profile), avoiding unpaved roads (no OSRM class for it),
and an ``avoid`` the OSRM server refuses to ``exclude`` (the demo server refuses every
``exclude``; one built with the stock car profile takes one class at a time). Valhalla
avoids with ``use_highways``, ``use_tolls``, ``use_ferry`` set to 0 and ``exclude_unpaved``:
it keeps off those ways where it can, but may still use one.

Usage policies: every request names geomint in its ``User-Agent``; Nominatim gets at most
one request per second from this process (its policy's limit), and the ``email`` given;
answers are cached by the request policy's cache (an in-memory one by default, since
Nominatim asks callers to cache); every Overpass query carries its own ``[timeout:25]`` and
a limit on the elements it returns.

Provenance: every answer is credited to "OpenStreetMap contributors" under ODbL-1.0. Places
and boundaries are ``observed`` (what mappers recorded). Routes and reachable areas are
``modelled``: their lines follow mapped roads, but which roads, and every duration and
arrival time, come from the engine's speed model (default speeds per road class, turn
costs), not from any observed journey.
"""

from __future__ import annotations

import asyncio
import dataclasses
import functools
from collections.abc import Collection, Mapping, Sequence
from datetime import UTC, datetime
from typing import Any, Final

import shapely.errors
import shapely.geometry

from geomint.errors import UsageError
from geomint.http import FetchError, MemoryCache, RequestPolicy
from geomint.providers.base import Avoid, Found, LonLat, MissCode, ProviderMiss, TravelMode
from geomint.providers.osm import _nominatim, _overpass, _routes
from geomint.providers.osm._service import NAME, Service

__all__ = ["OsmProvider"]

_DURATION_NOTE: Final = (
    "durations are the routing engine's estimates from road types and speed limits; "
    "no traffic, and the same at any departure time"
)


class OsmProvider:
    """Geocoding, boundaries, place search, routes and reachable areas from OpenStreetMap.

    Args:
        nominatim_url: Nominatim's base URL (``/search`` is appended).
        overpass_url: Overpass's interpreter URL, queries are posted to it as is.
        osrm_url: OSRM's base URL (``/route/v1/...`` is appended).
        valhalla_url: Valhalla's base URL (``/route``, ``/isochrone`` are appended).
        policy: How requests are sent, retried and cached; by default the client's
            defaults with an in-memory cache. The four URLs are added to its trusted base
            URLs (a self-hosted service may be on a private address); Nominatim's calls
            are held to one per second at most and always cached (in memory if the
            policy has no cache), and Overpass's deadline is raised to outlast the
            query's own timeout.
        email: An address Nominatim's operators may write to about heavy use (their
            policy asks for one from bulk users); sent with every Nominatim request.
        osrm_modes: The travel modes the OSRM server routes (``car``, ``walk``,
            ``bike``), asked for as the ``car``, ``foot`` and ``bike`` profiles; other
            modes go to Valhalla. Name more only if ``osrm_url`` serves each profile
            (such as a proxy in front of one OSRM server per profile).

    Example:
        >>> from geomint.providers.base import Providers
        >>> osm = OsmProvider(nominatim_url="http://10.0.0.5:8080")
        >>> chosen = Providers.single(osm)
        >>> chosen.router is osm, chosen.traffic
        (True, None)
    """

    name = NAME
    #: What it can answer, as the model reads it in the tools' descriptions.
    coverage = "worldwide, from OpenStreetMap (public or self-hosted services)"

    def __init__(
        self,
        *,
        nominatim_url: str = "https://nominatim.openstreetmap.org",
        overpass_url: str = "https://overpass-api.de/api/interpreter",
        osrm_url: str = "https://router.project-osrm.org",
        valhalla_url: str = "https://valhalla1.openstreetmap.de",
        policy: RequestPolicy | None = None,
        email: str | None = None,
        osrm_modes: Collection[TravelMode] = frozenset({"car"}),
    ) -> None:
        unknown = sorted(set(osrm_modes) - set(_routes.OSRM_PROFILES))
        if unknown:
            raise UsageError(
                f"osrm_modes {unknown} have no OSRM profile; use some of "
                f"{sorted(_routes.OSRM_PROFILES)} (trucks are routed by Valhalla)"
            )
        self.osrm_modes = frozenset(osrm_modes)
        urls = [u.rstrip("/") for u in (nominatim_url, overpass_url, osrm_url, valhalla_url)]
        base = policy if policy is not None else RequestPolicy(cache=MemoryCache())
        common = dataclasses.replace(
            base, trusted_base_urls=tuple(dict.fromkeys((*base.trusted_base_urls, *urls)))
        )
        rate = min(common.rate_per_s or 1.0, 1.0)
        overpass_timeout = max(common.timeout_s, _overpass.QUERY_TIMEOUT_S + 5.0)
        self.email = email
        self.nominatim = Service(
            label="Nominatim",
            source_id="osm-nominatim",
            title="OpenStreetMap, geocoded by Nominatim",
            base_url=urls[0],
            policy=dataclasses.replace(
                common, rate_per_s=rate, cache=common.cache or MemoryCache()
            ),
        )
        self.overpass = Service(
            label="Overpass",
            source_id="osm-overpass",
            title="OpenStreetMap, queried with the Overpass API",
            base_url=urls[1],
            policy=dataclasses.replace(common, timeout_s=overpass_timeout),
        )
        self.osrm = Service(
            label="OSRM",
            source_id="osm-osrm",
            title="OpenStreetMap road network, routed by OSRM",
            base_url=urls[2],
            policy=common,
        )
        self.valhalla = Service(
            label="Valhalla",
            source_id="osm-valhalla",
            title="OpenStreetMap road network, routed by Valhalla",
            base_url=urls[3],
            policy=common,
        )

    def __repr__(self) -> str:
        return (
            f"OsmProvider(nominatim_url={self.nominatim.base_url!r}, "
            f"overpass_url={self.overpass.base_url!r}, osrm_url={self.osrm.base_url!r}, "
            f"valhalla_url={self.valhalla.base_url!r})"
        )

    # -- Nominatim -----------------------------------------------------------------------------

    async def _search(self, params: dict[str, Any]) -> list[Mapping[str, Any]]:
        sent = {**params, "format": "jsonv2", "email": self.email}
        answer = await self.nominatim.json("GET", "/search", params=sent)
        if not isinstance(answer, list) or not all(isinstance(i, Mapping) for i in answer):
            raise self.nominatim.malformed("something other than a list of places", "/search")
        return answer

    async def locate(
        self,
        query: str,
        *,
        near: LonLat | None = None,
        country: str | None = None,
        limit: int = 5,
    ) -> Found:
        """Find places by name with Nominatim, preferring those near ``near``."""
        endpoint = self.nominatim.url("/search")
        if not query.strip():
            raise ProviderMiss(
                "the query is empty; give a place name",
                code="refused",
                provider=NAME,
                endpoint=endpoint,
            )
        limit = max(1, min(limit, _nominatim.MAX_LIMIT))
        params: dict[str, Any] = {"q": query, "addressdetails": 1, "limit": limit}
        if country:
            params["countrycodes"] = country.lower()
        if near is not None:
            params["viewbox"] = _nominatim.viewbox(near)
            params["bounded"] = 0  # prefer places in the box, do not exclude the rest
        features = _nominatim.place_features(await self._search(params), limit)
        if not features:
            where = f" in {country.upper()}" if country else ""
            raise ProviderMiss(
                f"Nominatim knows no place called {query!r}{where}; check the spelling, "
                "add the town or country, or drop the country filter",
                code="not_found",
                provider=NAME,
                endpoint=endpoint,
            )
        return Found(
            data=_collection(features),
            sources=(self.nominatim.provenance("observed"),),
            provider=NAME,
            endpoint=endpoint,
            request={"format": "jsonv2", **params},
        )

    async def boundary(self, query: str, *, limit: int = 1) -> Found:
        """Polygons of named places with Nominatim: its (Multi)Polygon results only."""
        endpoint = self.nominatim.url("/search")
        # More than asked: some results are points (a bus stop named like the park).
        params = {"q": query, "polygon_geojson": 1, "limit": min(max(limit * 3, 5), 40)}
        items = await self._search(params) if query.strip() else []
        features, others = _nominatim.boundary_features(items)
        if not features:
            found_as = (
                f"; Nominatim has it only as a point or line ({', '.join(others[:3])}), "
                "which has no boundary: try the name of the town, district or park it is in"
                if others
                else "; check the spelling or add the town or country"
            )
            raise ProviderMiss(
                f"no boundary polygon for {query!r}{found_as}",
                code="not_found",
                provider=NAME,
                endpoint=endpoint,
            )
        notes: tuple[str, ...] = ()
        if len(features) > limit:
            notes = (f"{len(features)} boundaries matched; the first {limit} kept",)
        return Found(
            data=_collection(features[:limit]),
            sources=(self.nominatim.provenance("observed"),),
            provider=NAME,
            endpoint=endpoint,
            request={"format": "jsonv2", **params},
            notes=notes,
        )

    # -- Overpass ------------------------------------------------------------------------------

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
        """Search OpenStreetMap's places with Overpass, near a point or within areas."""
        endpoint = self.overpass.url()
        try:
            areas = [shapely.geometry.shape(g) for g in within]
        except (KeyError, TypeError, ValueError, shapely.errors.ShapelyError) as exc:
            raise ProviderMiss(
                f"within holds something that is not a GeoJSON geometry ({exc}); pass "
                "Polygon or MultiPolygon geometries",
                code="refused",
                provider=NAME,
                endpoint=endpoint,
            ) from None
        try:
            search = _overpass.plan(
                query=query,
                category=category,
                near=near,
                radius_m=radius_m,
                within=areas,
                limit=limit,
            )
        except _overpass.SearchRefused as refused:
            raise ProviderMiss(
                str(refused), code="refused", provider=NAME, endpoint=endpoint
            ) from None
        answer = await self.overpass.json("POST", data={"data": search.ql})
        elements = answer.get("elements") if isinstance(answer, Mapping) else None
        if not isinstance(elements, list):
            raise self.overpass.malformed("no list of elements")
        remark = str(answer.get("remark") or "")
        if "runtime error" in remark:
            code: MissCode = "rate_limited" if "rate_limited" in remark else "unavailable"
            raise ProviderMiss(
                f"Overpass stopped the query ({remark.strip()}); search a smaller area or "
                "a narrower category, or try again later",
                code=code,
                provider=NAME,
                endpoint=endpoint,
            )
        features, notes = _overpass.places(elements, search, query=query, near=near, limit=limit)
        request = {
            "query": query,
            "category": category,
            "near": list(near) if near else None,
            "radius_m": radius_m,
            "within": len(within),
            "limit": limit,
            "data": search.ql,
        }
        if not features:
            what = " and ".join(
                filter(None, (f"called {query!r}" if query else "", category or ""))
            )
            raise ProviderMiss(
                f"OpenStreetMap has no place {what} in that area; widen the radius or the "
                "area, or try another name or category",
                code="not_found",
                provider=NAME,
                endpoint=endpoint,
            )
        return Found(
            data=_collection(features),
            sources=(self.overpass.provenance("observed"),),
            provider=NAME,
            endpoint=endpoint,
            request=request,
            notes=(*search.notes, *notes),
        )

    # -- OSRM and Valhalla ---------------------------------------------------------------------

    def _valhalla_because(self, mode: TravelMode, avoid: Sequence[Avoid]) -> str | None:
        """Why a route goes to Valhalla rather than OSRM, or None if OSRM can take it."""
        if mode not in _routes.OSRM_PROFILES:
            return f"OSRM has no {mode} profile; routed with Valhalla"
        if mode not in self.osrm_modes:
            return (
                f"the OSRM server routes {', '.join(sorted(self.osrm_modes)) or 'nothing'} "
                f"(osrm_modes); the {mode} route is routed with Valhalla"
            )
        unmet = [a for a in avoid if a not in _routes.OSRM_EXCLUDE]
        if unmet:
            return f"OSRM cannot avoid {', '.join(unmet)}; routed with Valhalla"
        return None

    async def route(
        self,
        waypoints: Sequence[LonLat],
        *,
        mode: TravelMode = "car",
        avoid: Sequence[Avoid] = (),
        depart_at: datetime | None = None,
        alternatives: int = 0,
    ) -> Found:
        """Route through ``waypoints`` in order, with OSRM where it can, else Valhalla."""
        if len(waypoints) < 2:
            raise ProviderMiss(
                "a route needs an origin and a destination", code="refused", provider=NAME
            )
        departure = depart_at or datetime.now(UTC)
        because = self._valhalla_because(mode, avoid)
        if because is None:
            try:
                return await self._osrm_route(
                    waypoints,
                    mode=mode,
                    avoid=avoid,
                    departure=departure,
                    alternatives=alternatives,
                )
            except ProviderMiss as miss:
                cause = miss.__cause__
                refused_exclude = (
                    avoid
                    and miss.code == "refused"
                    and isinstance(cause, FetchError)
                    and cause.status == 400
                )
                if not refused_exclude:
                    raise
                classes = ",".join(_routes.OSRM_EXCLUDE[a] for a in avoid)
                because = (
                    f"the OSRM server at {self.osrm.base_url} refused exclude={classes}; "
                    "routed with Valhalla"
                )
        return await self._valhalla_route(
            waypoints,
            mode=mode,
            avoid=avoid,
            departure=departure,
            alternatives=alternatives,
            because=because,
        )

    async def _osrm_route(
        self,
        waypoints: Sequence[LonLat],
        *,
        mode: TravelMode,
        avoid: Sequence[Avoid],
        departure: datetime,
        alternatives: int,
    ) -> Found:
        profile = _routes.OSRM_PROFILES[mode]
        path = _routes.osrm_path(profile, waypoints)
        params: dict[str, Any] = {
            "overview": "full",
            "geometries": "geojson",
            "steps": "false",
            "alternatives": str(alternatives) if alternatives > 0 else "false",
            "exclude": ",".join(_routes.OSRM_EXCLUDE[a] for a in avoid) or None,
        }
        endpoint = self.osrm.url(f"/route/v1/{profile}")
        answer = await self.osrm.json("GET", path, params=params)
        code = answer.get("code") if isinstance(answer, Mapping) else None
        if code in ("NoRoute", "NoSegment"):
            raise ProviderMiss(
                f"OSRM found no {mode} route: {answer.get('message') or code}",
                code="not_found",
                provider=NAME,
                endpoint=endpoint,
            )
        if code != "Ok":
            raise self.osrm.malformed(f"code {code!r}", path)
        try:
            # Off the event loop: an answer's size is bounded, but decoding it takes a while.
            features = await asyncio.to_thread(
                functools.partial(
                    _routes.osrm_routes,
                    answer,
                    mode=mode,
                    avoid=avoid,
                    departure=departure,
                    waypoints=len(waypoints),
                )
            )
        except (KeyError, TypeError, ValueError, IndexError) as exc:
            raise self.osrm.malformed(f"a route that does not read ({exc!r})", path) from exc
        notes = [_DURATION_NOTE]
        if alternatives and len(features) <= alternatives:
            notes.append(f"OSRM found {len(features) - 1} of {alternatives} alternatives asked")
        return Found(
            data=_collection(features[: alternatives + 1]),
            sources=(self.osrm.provenance("modelled"),),
            provider=NAME,
            endpoint=endpoint,
            request={
                "waypoints": [list(p) for p in waypoints],
                "mode": mode,
                "avoid": list(avoid),
                "profile": profile,
                **{k: v for k, v in params.items() if v is not None},
            },
            notes=tuple(notes),
        )

    async def _valhalla_route(
        self,
        waypoints: Sequence[LonLat],
        *,
        mode: TravelMode,
        avoid: Sequence[Avoid],
        departure: datetime,
        alternatives: int,
        because: str,
    ) -> Found:
        costing = _routes.VALHALLA_COSTING[mode]
        options, unmet = _routes.valhalla_costing_options(mode, avoid)
        body: dict[str, Any] = {
            "locations": [{"lat": lat, "lon": lon} for lon, lat in waypoints],
            "costing": costing,
            "directions_type": "none",
            "units": "kilometers",
        }
        if options:
            body["costing_options"] = {costing: options}
        if alternatives > 0:
            body["alternates"] = alternatives
        answer = await self.valhalla.json("POST", "/route", json=body)
        try:
            features = await asyncio.to_thread(
                functools.partial(
                    _routes.valhalla_routes, answer, mode=mode, avoid=avoid, departure=departure
                )
            )
        except (KeyError, TypeError, ValueError, IndexError) as exc:
            raise self.valhalla.malformed(f"a trip that does not read ({exc!r})", "/route") from exc
        notes = [because, _DURATION_NOTE]
        if options:
            notes.append("Valhalla avoids what was asked where it can; it may still use some")
        if unmet:
            notes.append(f"Valhalla's {costing} costing cannot avoid {', '.join(unmet)}")
        return Found(
            data=_collection(features[: alternatives + 1]),
            sources=(self.valhalla.provenance("modelled"),),
            provider=NAME,
            endpoint=self.valhalla.url("/route"),
            request={
                "waypoints": [list(p) for p in waypoints],
                "mode": mode,
                "avoid": list(avoid),
                **body,
            },
            notes=tuple(notes),
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
        """The area reachable from ``origin`` within a time or distance: Valhalla's isochrone."""
        endpoint = self.valhalla.url("/isochrone")
        if (time_s is None) == (distance_m is None):
            raise ProviderMiss(
                "give a time or a distance budget, not both or neither",
                code="refused",
                provider=NAME,
                endpoint=endpoint,
            )
        budget_value = time_s if time_s is not None else distance_m
        assert budget_value is not None
        if not budget_value > 0:
            raise ProviderMiss(
                f"the budget must be positive, not {budget_value:g}",
                code="refused",
                provider=NAME,
                endpoint=endpoint,
            )
        if time_s is not None:
            contour, budget = {"time": round(time_s / 60, 3)}, {"time_s": time_s}
        else:
            contour, budget = (
                {"distance": round(budget_value / 1000, 3)},
                {"distance_m": budget_value},
            )
        body = {
            "locations": [{"lat": origin[1], "lon": origin[0]}],
            "costing": _routes.VALHALLA_COSTING[mode],
            "contours": [contour],
            "polygons": True,
        }
        answer = await self.valhalla.json("POST", "/isochrone", json=body)
        try:
            feature = _routes.range_feature(answer, origin=origin, budget=budget, mode=mode)
        except (AttributeError, KeyError, TypeError, ValueError) as exc:
            raise self.valhalla.malformed(
                f"an area that does not read ({exc!r})", "/isochrone"
            ) from exc
        if feature is None:
            raise ProviderMiss(
                "Valhalla returned no reachable area from there; the origin may be far from "
                "any road this mode can use",
                code="not_found",
                provider=NAME,
                endpoint=endpoint,
            )
        within = f"{time_s / 60:g} min" if time_s is not None else f"{budget_value:g} m"
        notes = [
            f"the area is Valhalla's isochrone for {mode} within {within}: an outline round the "
            "roads reached, timed by its speed model, with no traffic",
            "it may over-count: all land inside the outline counts as reached, between the "
            "roads reached too",
            "it may under-count: Valhalla keeps only the largest area reached (denoise 1), "
            "so a pocket reached apart from it is left out",
        ]
        if depart_at is not None:
            notes.append("the departure time was not used: the area is the same at any hour")
        return Found(
            data=_collection([feature]),
            sources=(self.valhalla.provenance("modelled"),),
            provider=NAME,
            endpoint=endpoint,
            request={"origin": list(origin), "mode": mode, **budget, **body},
            notes=tuple(notes),
        )


def _collection(features: list[dict[str, Any]]) -> dict[str, Any]:
    return {"type": "FeatureCollection", "features": features}
