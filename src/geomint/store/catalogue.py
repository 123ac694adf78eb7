"""The source registry's rows, kept in the chat store's database beside the chats.

The store knows nothing of what a source is: it keeps each row's JSON body as text,
plus the columns a ``find_sources`` call filters by before ranking (modality, the
years covered, whether it covers the world, the countries it names). Reading a row back
as a :class:`geomint.sources.Source` is the registry's job (:mod:`geomint.sources.registry`).

Every store offers the same five methods (:class:`Catalogue`); SQLite and PostgreSQL
answer :meth:`Catalogue.matching_sources` with one SQL predicate, so a registry of many
thousands of rows is cut down in the database, not in Python.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

__all__ = ["Catalogue", "CatalogueRow", "Revision", "filter_sql", "row_matches"]

#: What changes whenever a row is written or deleted: (highest write number, row count).
Revision = tuple[int, int]


@dataclass(frozen=True, kw_only=True)
class CatalogueRow:
    """One source as the store keeps it.

    Attributes:
        id: The source's id, unique in the registry.
        body: The whole row as JSON text, read back unchanged.
        modality: ``table``, ``vector`` or ``raster``.
        start: The first year it covers, or None when unstated.
        end: The last year it covers, or None when open-ended or unstated.
        world: It covers every country, so a country filter keeps it.
        countries: The ISO alpha-3 codes it covers (ignored when ``world``).
    """

    id: str
    body: str
    modality: str
    start: int | None
    end: int | None
    world: bool
    countries: tuple[str, ...]


def row_matches(
    row: CatalogueRow,
    *,
    country: str | None,
    start: int | None,
    end: int | None,
    modality: str | None,
) -> bool:
    """The filter :meth:`Catalogue.matching_sources` applies, for stores without SQL.

    A row with no stated years overlaps every period: it is not excluded for what its
    publisher did not say.
    """
    if modality is not None and row.modality != modality:
        return False
    if country is not None and not row.world and country not in row.countries:
        return False
    if start is not None and row.end is not None and row.end < start:
        return False
    return not (end is not None and row.start is not None and row.start > end)


def filter_sql(
    country: str | None,
    start: int | None,
    end: int | None,
    modality: str | None,
    *,
    mark: str,
) -> tuple[str, list[object]]:
    """The SQL ``WHERE`` of :meth:`Catalogue.matching_sources` over ``sources s``, and its
    arguments: :func:`row_matches` as one predicate. ``mark`` is the driver's placeholder
    (``?`` for SQLite, ``%s`` for psycopg); the values are always bound, never inlined."""
    clauses: list[str] = []
    args: list[object] = []
    if modality is not None:
        clauses.append(f"s.modality = {mark}")
        args.append(modality)
    if start is not None:
        clauses.append(f"(s.end_year IS NULL OR s.end_year >= {mark})")
        args.append(start)
    if end is not None:
        clauses.append(f"(s.start_year IS NULL OR s.start_year <= {mark})")
        args.append(end)
    if country is not None:
        inside = f"SELECT 1 FROM source_countries c WHERE c.country = {mark}"  # noqa: S608
        clauses.append(f"(s.world OR EXISTS ({inside} AND c.source_id = s.source_id))")
        args.append(country)
    return (" WHERE " + " AND ".join(clauses)) if clauses else "", args


@runtime_checkable
class Catalogue(Protocol):
    """Where a store keeps the source registry."""

    def put_sources(self, rows: Sequence[CatalogueRow]) -> None:
        """Insert or replace rows by id, all in one transaction."""
        ...

    def delete_sources(self, ids: Sequence[str]) -> None:
        """Remove rows by id; ids that are not there are ignored."""
        ...

    def source_bodies(self, ids: Sequence[str] | None = None) -> dict[str, str]:
        """The JSON bodies of ``ids`` (every row when None), by id; unknown ids are absent."""
        ...

    def matching_sources(
        self,
        *,
        country: str | None = None,
        start: int | None = None,
        end: int | None = None,
        modality: str | None = None,
    ) -> list[str]:
        """The ids of rows that cover ``country`` (ISO alpha-3), overlap the years
        ``start``..``end`` and have ``modality``; a None argument does not filter."""
        ...

    def sources_revision(self) -> Revision:
        """A value that changes whenever a row is written or deleted (for caches)."""
        ...
