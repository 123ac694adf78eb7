"""Connectors: how a source is read, one module per kind of service.

The contract every connector keeps is in :mod:`~geomint.sources.connectors.base` (the
:class:`Request` it is given, the :class:`Table`, :class:`Download`, :class:`Listing`
or :class:`Grid` it returns, the :class:`SourceFetchError` it raises). The connectors
for web services:

* :class:`WorldBankConnector`: the World Bank Indicators API v2;
* :class:`SdmxConnector`: SDMX data services (Eurostat, the OECD, the ILO), parsed by
  ``sdmx1`` from bytes :mod:`geomint.http` fetched;
* :class:`CkanConnector`: CKAN open-data portals (search, list, download);
* :class:`HapiConnector`: HDX HAPI, the Humanitarian Data Exchange's API (population by
  division, sex and age; humanitarian needs; refugees; food security; who works where);
* :class:`StacConnector`: STAC APIs (search a collection's items, or read a window of
  one item's Cloud-Optimised GeoTIFF as a :class:`Grid`, decoded in a confined child).

Each sends its requests through :mod:`geomint.http` under the request's policy, so a
test answers them with a ``ScriptedTransport`` or a recorded-response server.
"""

from geomint.sources.connectors.base import (
    CODE_SYSTEMS,
    FETCH_ERROR_CODES,
    CodeSystem,
    Connector,
    Download,
    FetchErrorKind,
    Grid,
    ListedDataset,
    ListedResource,
    Listing,
    PeriodFilter,
    Request,
    Row,
    SourceFetchError,
    Table,
    Unit,
)
from geomint.sources.connectors.ckan import CkanConnector
from geomint.sources.connectors.hapi import HapiConnector
from geomint.sources.connectors.sdmx import SdmxConnector
from geomint.sources.connectors.stac import StacConnector
from geomint.sources.connectors.worldbank import WorldBankConnector

__all__ = [
    "CODE_SYSTEMS",
    "FETCH_ERROR_CODES",
    "CkanConnector",
    "CodeSystem",
    "Connector",
    "Download",
    "FetchErrorKind",
    "Grid",
    "HapiConnector",
    "ListedDataset",
    "ListedResource",
    "Listing",
    "PeriodFilter",
    "Request",
    "Row",
    "SdmxConnector",
    "SourceFetchError",
    "StacConnector",
    "Table",
    "Unit",
    "WorldBankConnector",
]
