"""The OpenStreetMap stack: Nominatim, Overpass, OSRM and Valhalla, keyless, self-hostable.

:class:`OsmProvider` geocodes and finds boundaries with Nominatim (``_nominatim``), searches
places with Overpass (``_overpass``), and routes with OSRM or Valhalla (``_routes``); each
service's URL, request policy and credit is a ``_service.Service``. It offers no traffic.
"""

from __future__ import annotations

from geomint.providers.osm._provider import OsmProvider

__all__ = ["OsmProvider"]
