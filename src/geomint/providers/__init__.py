"""Place search, geocoding, boundaries, routing, reachable ranges and traffic: protocols and
implementations.

:mod:`geomint.providers.base` holds the protocols and the result every call returns
(:class:`Found`) or the miss it raises (:class:`ProviderMiss`); :class:`OfflineProvider`
answers from bundled data with no network (the default); the TomTom and OpenStreetMap-stack
providers come next.
"""

from __future__ import annotations

from geomint.providers.base import (
    Avoid,
    BoundarySource,
    Found,
    Geocoder,
    LonLat,
    PlaceSearch,
    ProviderMiss,
    Providers,
    RangeFinder,
    Router,
    TrafficSource,
    TravelMode,
)
from geomint.providers.offline import OfflineProvider

__all__ = [
    "Avoid",
    "BoundarySource",
    "Found",
    "Geocoder",
    "LonLat",
    "OfflineProvider",
    "PlaceSearch",
    "ProviderMiss",
    "Providers",
    "RangeFinder",
    "Router",
    "TrafficSource",
    "TravelMode",
    "default_providers",
]


def default_providers() -> Providers:
    """The providers an agent uses when none are given: the offline provider, which needs
    no key and no network (place, route and traffic services come with their providers)."""
    return Providers.single(OfflineProvider())
