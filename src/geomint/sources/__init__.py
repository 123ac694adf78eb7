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
"""

from __future__ import annotations

from geomint.sources.connectors.base import Connector, SourceFetchError
from geomint.sources.model import Column, Coverage, FilterKey, Profile, Source
from geomint.sources.ranking import DenseArm, Hit, Ranker
from geomint.sources.reads import Cell, CellMiss, LandedTable
from geomint.sources.registry import SourceRegistry, bundled_sources
from geomint.sources.service import Found, Resolved, Sources
from geomint.sources.spine import Place, Spine, UnknownPlaceError, spine

__all__ = [
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
    "Place",
    "Profile",
    "Ranker",
    "Resolved",
    "Source",
    "SourceFetchError",
    "SourceRegistry",
    "Sources",
    "Spine",
    "UnknownPlaceError",
    "bundled_sources",
    "spine",
]
