"""Place search, geocoding, boundaries, routing, reachable ranges and traffic: protocols and
implementations.

:mod:`geomint.providers.base` holds the protocols and the result every call returns
(:class:`Found`) or the miss it raises (:class:`ProviderMiss`). Three implementations, a
package each: :class:`OfflineProvider` (``offline``: bundled data, no network, the
default), :class:`TomTomProvider` (``tomtom``: ``TOMTOM_API_KEY``) and :class:`OsmProvider`
(``osm``: Nominatim, Overpass, OSRM, Valhalla; public or self-hosted).
:func:`default_providers` picks one from the environment.
"""

from __future__ import annotations

import os
from collections.abc import Mapping

from geomint.errors import UsageError
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
from geomint.providers.osm import OsmProvider
from geomint.providers.tomtom import TomTomProvider

__all__ = [
    "Avoid",
    "BoundarySource",
    "Found",
    "Geocoder",
    "LonLat",
    "OfflineProvider",
    "OsmProvider",
    "PlaceSearch",
    "ProviderMiss",
    "Providers",
    "RangeFinder",
    "Router",
    "TomTomProvider",
    "TrafficSource",
    "TravelMode",
    "default_providers",
]


_CHOICES = ("offline", "tomtom", "osm")


def default_providers(environ: Mapping[str, str] | None = None) -> Providers:
    """The providers an agent uses when none are given, chosen from the environment.

    ``GEOMINT_PROVIDER`` names one (``offline``, ``tomtom``, ``osm``); without it, TomTom
    when ``TOMTOM_API_KEY`` is set, else the offline provider, which needs no key and no
    network. For ``osm``, ``GEOMINT_NOMINATIM_URL``, ``GEOMINT_OVERPASS_URL``,
    ``GEOMINT_OSRM_URL`` and ``GEOMINT_VALHALLA_URL`` point at self-hosted servers, and
    ``GEOMINT_OSM_EMAIL`` is sent to Nominatim as its usage policy asks.

    Raises:
        UsageError: An unknown choice, or ``tomtom`` without a key.
    """
    env = os.environ if environ is None else environ
    choice = env.get("GEOMINT_PROVIDER", "").strip().lower()
    if not choice:
        choice = "tomtom" if env.get("TOMTOM_API_KEY", "").strip() else "offline"
    if choice == "offline":
        return Providers.single(OfflineProvider())
    if choice == "tomtom":
        return Providers.single(TomTomProvider(env.get("TOMTOM_API_KEY", "")))
    if choice == "osm":
        defaults = OsmProvider()

        def url(variable: str, default: str) -> str:
            return env.get(variable, "").strip() or default

        return Providers.single(
            OsmProvider(
                nominatim_url=url("GEOMINT_NOMINATIM_URL", defaults.nominatim.base_url),
                overpass_url=url("GEOMINT_OVERPASS_URL", defaults.overpass.base_url),
                osrm_url=url("GEOMINT_OSRM_URL", defaults.osrm.base_url),
                valhalla_url=url("GEOMINT_VALHALLA_URL", defaults.valhalla.base_url),
                email=env.get("GEOMINT_OSM_EMAIL", "").strip() or None,
            )
        )
    raise UsageError(
        f"GEOMINT_PROVIDER={choice!r} is not a provider; choose one of {', '.join(_CHOICES)}"
    )
