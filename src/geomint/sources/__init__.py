"""Open data with honest numbers: the source registry, the place spine, the connectors.

* :class:`Source` (:mod:`.model`): one registry row: what a dataset is, where and when it
  reaches, how to read it and what a fetch returns. Adding a source is adding a row.
* :class:`SourceRegistry` (:mod:`.registry`): the rows, kept in the chat store's database.
* :class:`Ranker` (:mod:`.ranking`): BM25 beside an optional :class:`DenseArm`, fused by
  reciprocal rank, over what the registry's SQL filter kept.
* :func:`spine` (:mod:`.spine`): countries, divisions, cities and the demo's named places,
  each with an id, names and parents; ``resolve_place`` answers from it.
* Connectors (:mod:`.connectors`): the bundled tables, the World Bank, SDMX and CKAN.
* :mod:`.reads`: path A, one cell read by code or a miss; path B, a table landed whole.
* :class:`Sources` (:mod:`.service`): all of it, as the tools use it.
* Discovery (:mod:`.discovery`, :mod:`.shortlist`): on a registry miss, catalogues
  searched live through a :class:`CatalogueSearcher`, and a second model's shortlist.
"""

from __future__ import annotations

from geomint.sources.connectors.base import Connector, SourceFetchError
from geomint.sources.discovery import (
    Candidate,
    CatalogueQuery,
    CatalogueResults,
    CatalogueSearcher,
    Searched,
    search_catalogues,
)
from geomint.sources.model import Column, Coverage, FilterKey, Profile, Source
from geomint.sources.ranking import DenseArm, Hit, Ranker
from geomint.sources.reads import Cell, CellMiss, LandedTable
from geomint.sources.registry import SourceRegistry, bundled_sources
from geomint.sources.service import CataloguePlan, Found, Resolved, Sources
from geomint.sources.shortlist import Pick, Shortlist, shortlist_results
from geomint.sources.spine import Place, Spine, UnknownPlaceError, spine

__all__ = [
    "Candidate",
    "CataloguePlan",
    "CatalogueQuery",
    "CatalogueResults",
    "CatalogueSearcher",
    "Cell",
    "CellMiss",
    "Column",
    "Connector",
    "Coverage",
    "DenseArm",
    "FilterKey",
    "Found",
    "Hit",
    "LandedTable",
    "Pick",
    "Place",
    "Profile",
    "Ranker",
    "Resolved",
    "Searched",
    "Shortlist",
    "Source",
    "SourceFetchError",
    "SourceRegistry",
    "Sources",
    "Spine",
    "UnknownPlaceError",
    "bundled_sources",
    "search_catalogues",
    "shortlist_results",
    "spine",
]
