"""What a provider is: one protocol per capability, the result every call returns, and the
miss it raises when it has nothing to give.

A provider call returns :class:`Found`: a GeoJSON FeatureCollection (places, a boundary,
routes, reachable areas, incidents) with the :class:`~geomint.provenance.Provenance` of
where it came from and the request as sent (secrets removed). When a provider has nothing
(no match, rate limited, down, not a capability it has), it raises :class:`ProviderMiss`
with the reason; the tools record a miss and hand the model a result, never an exception.

Shapes every implementation returns, so tools and code read them the same way:

* a place: a Point Feature with ``id``, ``name``, ``category``, ``categories`` (list),
  ``address`` when known, ``score`` (relevance, 0..1, when ranked) and ``provider``;
* a boundary: a (Multi)Polygon Feature with ``id``, ``name``, ``kind`` (``country``,
  ``city``, ``district``, ``park``, ...);
* a route: a LineString Feature with ``summary`` (``length_m``, ``duration_s``,
  ``departure``, ``arrival``, ``traffic_delay_s`` when known) and ``sections`` (``start_index``,
  ``end_index``, ``kind``) over the line's positions, plus ``mode`` and ``avoid``;
* a reachable area: a Polygon Feature with ``origin`` and ``budget`` (``time_s`` or
  ``distance_m``) and ``mode``;
* an incident: a Point or LineString Feature with ``category``, ``magnitude`` (0-4),
  ``delay_s``, ``from``, ``to``, ``start``, ``end``.

Besides the misses each protocol method lists, a call to an online service (TomTom, the
OpenStreetMap stack) can miss as the service did: ``rate_limited`` (it limited the calls
past the retries), ``unavailable`` (a 5xx, a timeout, an answer that does not read) or
``refused`` (it rejected the request or the key, or geomint refused to send it).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any, Literal, Protocol, runtime_checkable

from geomint.errors import GeomintError
from geomint.provenance import Provenance

__all__ = [
    "Avoid",
    "BoundarySource",
    "Found",
    "Geocoder",
    "LonLat",
    "MissCode",
    "PlaceSearch",
    "ProviderMiss",
    "Providers",
    "RangeFinder",
    "Router",
    "TrafficSource",
    "TravelMode",
    "route_summary",
]

LonLat = tuple[float, float]
TravelMode = Literal["car", "walk", "bike", "truck"]
Avoid = Literal["motorways", "tolls", "ferries", "unpaved"]
MissCode = Literal["not_found", "rate_limited", "unavailable", "unsupported", "refused"]


def route_summary(length_m: float, duration_s: float, departure: datetime) -> dict[str, Any]:
    """A route Feature's ``summary``, the same for every provider that computes it."""
    return {
        "length_m": round(length_m, 1),
        "duration_s": round(duration_s),
        "departure": departure.isoformat(),
        "arrival": (departure + timedelta(seconds=duration_s)).isoformat(),
    }


@dataclass(frozen=True, kw_only=True)
class Found:
    """What a provider call returned.

    Attributes:
        data: A GeoJSON FeatureCollection in WGS84.
        sources: Where it came from: publisher, licence or terms, retrieved_at, evidence
            (one per dataset the features were drawn from).
        provider: The provider's name (``"offline"``, ``"tomtom"``, ``"osm"``).
        endpoint: What was asked (``"offline:cities"``, an API URL without its key).
        request: The request's parameters as sent, secrets removed.
        notes: What a person should know (results cut to a limit, a fallback used).
    """

    data: dict[str, Any]
    sources: tuple[Provenance, ...]
    provider: str
    endpoint: str
    request: Mapping[str, Any] = field(default_factory=dict)
    notes: tuple[str, ...] = ()

    @property
    def count(self) -> int:
        """Number of features."""
        return len(self.data.get("features") or [])


class ProviderMiss(GeomintError):  # noqa: N818 - a miss is a result the model reads, not a fault
    """A provider had nothing to give: the reason is a result for the model, not a fault.

    Args:
        reason: What happened, in a sentence a model can act on.
        code: ``not_found``, ``rate_limited``, ``unavailable``, ``unsupported`` or ``refused``.
        provider: Which provider.
        endpoint: What was asked.
    """

    def __init__(self, reason: str, *, code: MissCode, provider: str, endpoint: str = "") -> None:
        super().__init__(reason)
        self.reason = reason
        self.code: MissCode = code
        self.provider = provider
        self.endpoint = endpoint


@runtime_checkable
class Geocoder(Protocol):
    """Names to places (``locate_place``)."""

    name: str

    async def locate(
        self,
        query: str,
        *,
        near: LonLat | None = None,
        country: str | None = None,
        limit: int = 5,
    ) -> Found:
        """Find places by name: addresses, streets, cities, countries, points of interest.

        Args:
            query: The name, as a person writes it (``"Kiasma"``, ``"Sao Paulo"``).
            near: A (lon, lat) to prefer places near; it ranks, it does not filter.
            country: An ISO 3166-1 alpha-2 code (``"FI"``): only places in that country.
            limit: The most places to return (Nominatim gives at most 40, TomTom 100).

        Returns:
            Place Point Features, the best match first, each with its ``score``.

        Raises:
            ProviderMiss: ``not_found`` when no place matches, or the query is empty;
                ``refused`` instead for an empty query on the OSM stack, and for a
                ``near`` that is not a position on TomTom; or an online service's miss
                (see the module docstring).
        """


@runtime_checkable
class PlaceSearch(Protocol):
    """Places by free text or category, near a point or within areas (``discover_places``).

    ``within`` holds GeoJSON (Multi)Polygon geometries; a search along a route passes the
    route's corridor as one of them.

    A search whose data stops at a box may say so with a ``covered_bbox`` attribute,
    ``(west, south, east, north)`` (the offline provider's central Helsinki): a city with no
    outline whose point lies in or near it is then searched over the whole box, the widest
    honest reading of the name.
    """

    name: str

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
        """Find places by name or category, near a point or within areas.

        Args:
            query: A name, or words for a kind of place: ``"cafe"`` finds the places
                called so and the places that are one.
            category: A category (``"cafe"``, ``"pharmacy"``); the OSM stack also takes an
                OSM tag as ``key=value``.
            near: A (lon, lat) to search around; each place then carries ``distance_m``.
            radius_m: How far from ``near`` to search, in metres. If None, 1 km; but
                TomTom's searches by text or category are then not cut off, only
                biased towards ``near``.
            within: GeoJSON (Multi)Polygon geometries: the places in any of them. With
                ``near`` as well, the places both in the areas and within the radius.
            limit: The most places to return (TomTom gives at most 100).

        Returns:
            Place Point Features, the nearest first when ``near`` is given (TomTom: as it
            ranks them), else the best match first; the notes say when more matched than
            were kept.

        Raises:
            ProviderMiss: ``not_found`` when no place matches (the offline provider
                returns an empty collection instead); ``unsupported`` when the area lies
                outside the offline provider's data; ``refused`` for a search the
                provider will not send: nothing to search for (TomTom, OSM), no area (the
                OSM stack needs ``near`` or ``within``), or on the OSM stack a category
                it has no tags for or a radius past 50 km; or an online service's miss
                (see the module docstring).
        """


@runtime_checkable
class BoundarySource(Protocol):
    """Polygons of named places (``get_boundaries``)."""

    name: str

    async def boundary(self, query: str, *, limit: int = 1) -> Found:
        """Find the outlines of named places: countries, cities, districts, parks.

        Args:
            query: The name of the place (``"Finland"``, ``"Esplanadinpuisto"``).
            limit: The most outlines to return (TomTom gives at most 20).

        Returns:
            Boundary (Multi)Polygon Features with ``id``, ``name`` and ``kind``, the best
            match first.

        Raises:
            ProviderMiss: ``not_found`` when no place of that name has an outline, or the
                query is empty; or an online service's miss (see the module docstring).
        """


@runtime_checkable
class Router(Protocol):
    """Routes through two or more points (``set_route``)."""

    name: str

    async def route(
        self,
        waypoints: Sequence[LonLat],
        *,
        mode: TravelMode = "car",
        avoid: Sequence[Avoid] = (),
        depart_at: datetime | None = None,
        alternatives: int = 0,
    ) -> Found:
        """Route through ``waypoints`` in order, the fastest way.

        Args:
            waypoints: The origin, any stops, and the destination, as (lon, lat): at
                least two (TomTom takes at most 150).
            mode: How to travel: ``car``, ``walk``, ``bike`` or ``truck``.
            avoid: Kinds of way to keep off: ``motorways``, ``tolls``, ``ferries``,
                ``unpaved``. Where a provider can only prefer to (Valhalla, on the OSM
                stack), the notes say so.
            depart_at: When to leave, now if None. Only TomTom's travel times depend on
                it (traffic); elsewhere it only dates the summary's departure and arrival.
            alternatives: How many routes to return besides the best, at most (TomTom
                gives up to 5; the offline provider always returns one route).

        Returns:
            Route LineString Features, the best first, each with its ``summary`` and
            ``sections``; the notes say how travel times were estimated.

        Raises:
            ProviderMiss: ``refused`` for fewer than two waypoints, or on TomTom more
                than 150, a waypoint that is not a position, or a mode or an avoid it
                does not know; ``unsupported`` when a waypoint is more than 300 m from
                the offline provider's road graph; ``not_found`` when no route joins the
                waypoints; or an online service's miss (see the module docstring).
        """


@runtime_checkable
class RangeFinder(Protocol):
    """Areas reachable within a time or distance budget (``find_reachable_areas``)."""

    name: str

    async def reachable(
        self,
        origin: LonLat,
        *,
        time_s: float | None = None,
        distance_m: float | None = None,
        mode: TravelMode = "car",
        depart_at: datetime | None = None,
    ) -> Found:
        """Find the area reachable from ``origin`` within a travel time or a distance.

        Args:
            origin: Where to start, as (lon, lat).
            time_s: The travel time budget, in seconds.
            distance_m: The distance budget, in metres. Give exactly one of the two.
            mode: How to travel (TomTom reaches by ``car`` or ``truck`` only).
            depart_at: When to leave, now if None. Only TomTom's areas depend on it
                (traffic); the OSM stack notes that it went unused.

        Returns:
            One Polygon Feature that holds ``origin``, with the ``origin``, ``budget``
            and ``mode`` asked for.

        Raises:
            ProviderMiss: ``refused`` for neither budget or both, a budget that is not
                positive (TomTom, OSM) or an origin that is not a position (TomTom);
                ``unsupported`` for walking or cycling on TomTom, or an origin more than
                300 m from the offline provider's road graph; ``not_found`` when nothing
                is reachable from there; or an online service's miss (see the module
                docstring).
        """


@runtime_checkable
class TrafficSource(Protocol):
    """Traffic incidents in a bounding box (``get_traffic_incidents``)."""

    name: str

    async def incidents(self, bbox: tuple[float, float, float, float]) -> Found:
        """Find the current traffic incidents in a bounding box: jams, roadworks, closures.

        Args:
            bbox: (west, south, east, north) in degrees, at most 10,000 km² (TomTom).

        Returns:
            Incident Point or LineString Features with ``category``, ``magnitude`` and,
            when known, ``delay_s``, ``from``, ``to``, ``start`` and ``end``.

        Raises:
            ProviderMiss: ``refused`` for a box that is not (west, south, east, north)
                or is larger than the provider answers for; ``not_found`` when there
                are no incidents in it; or an online service's miss (see the module
                docstring).
        """


@dataclass(frozen=True, kw_only=True)
class Providers:
    """Which implementation serves each capability (None: the capability is not offered).

    Example:
        >>> from geomint.providers.offline import OfflineProvider
        >>> offline = OfflineProvider()
        >>> Providers.single(offline).router is offline
        True
    """

    geocoder: Geocoder | None = None
    places: PlaceSearch | None = None
    boundaries: BoundarySource | None = None
    router: Router | None = None
    ranges: RangeFinder | None = None
    traffic: TrafficSource | None = None

    def serves(self, capability: str) -> bool:
        """Whether some provider answers ``capability``: a field's name, or
        ``traffic_analytics`` (a traffic source that has ``area_analytics``).

        Example:
            >>> from geomint.providers.offline import OfflineProvider
            >>> offline = Providers.single(OfflineProvider())
            >>> offline.serves("router"), offline.serves("traffic")
            (True, False)
        """
        if capability == "traffic_analytics":
            return callable(getattr(self.traffic, "area_analytics", None))
        return getattr(self, capability, None) is not None

    @classmethod
    def single(cls, provider: object) -> Providers:
        """Every capability ``provider`` implements, from that one provider."""
        return cls(
            geocoder=provider if isinstance(provider, Geocoder) else None,
            places=provider if isinstance(provider, PlaceSearch) else None,
            boundaries=provider if isinstance(provider, BoundarySource) else None,
            router=provider if isinstance(provider, Router) else None,
            ranges=provider if isinstance(provider, RangeFinder) else None,
            traffic=provider if isinstance(provider, TrafficSource) else None,
        )
