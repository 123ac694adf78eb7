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
    ) -> Found: ...


@runtime_checkable
class PlaceSearch(Protocol):
    """Places by free text or category, near a point or within areas (``discover_places``).

    ``within`` holds GeoJSON (Multi)Polygon geometries; a search along a route passes the
    route's corridor as one of them.
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
    ) -> Found: ...


@runtime_checkable
class BoundarySource(Protocol):
    """Polygons of named places (``get_boundaries``)."""

    name: str

    async def boundary(self, query: str, *, limit: int = 1) -> Found: ...


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
    ) -> Found: ...


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
    ) -> Found: ...


@runtime_checkable
class TrafficSource(Protocol):
    """Traffic incidents in a bounding box (``get_traffic_incidents``)."""

    name: str

    async def incidents(self, bbox: tuple[float, float, float, float]) -> Found: ...


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
