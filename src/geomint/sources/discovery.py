"""Discovery: searching catalogues live when the registry has nothing for a question.

The registry holds sources someone described; a catalogue (a CKAN portal, a STAC API)
holds thousands of datasets nobody described for geomint. When ``find_sources`` finds
nothing in the registry, it may search the catalogues the registry names, live, through
a :class:`CatalogueSearcher` (a connector that can also search: CKAN and STAC). What comes
back is many long records; a second model reads them and keeps a short list
(:mod:`geomint.sources.shortlist`), so the main model never reads two hundred
descriptions to pick three ids.

A searcher reads; it never fetches data, lands an entry or mints a figure. Each
:class:`Candidate` says how the ``fetch`` tool reads it next (``Candidate.fetch``), so a
shortlisted dataset is one call away from the model, which decides.

Example:
    A searcher is anything with ``name``, ``needs_network``, ``is_catalogue`` and
    ``search``:

    >>> class Shelf:
    ...     name, needs_network = "shelf", False
    ...     def is_catalogue(self, source: Source) -> bool:
    ...         return True
    ...     def search(self, query: CatalogueQuery) -> CatalogueResults:
    ...         found = Candidate(id="maps", title="Old maps", kind="dataset",
    ...                           catalogue=query.catalogue.id, fetch={})
    ...         return CatalogueResults(candidates=(found,), matched=1)
    >>> isinstance(Shelf(), CatalogueSearcher)
    True
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Final, Protocol, runtime_checkable

from pydantic import JsonValue

from geomint.http import RequestPolicy
from geomint.sources.connectors.base import SourceFetchError
from geomint.sources.model import Source

__all__ = [
    "MAX_CATALOGUES",
    "Candidate",
    "CatalogueQuery",
    "CatalogueResults",
    "CatalogueSearcher",
    "Searched",
    "search_catalogues",
]

#: Most catalogues one discovery searches (the first by id, after the country filter).
MAX_CATALOGUES: Final = 4


@dataclass(frozen=True, kw_only=True)
class Candidate:
    """One dataset a catalogue search returned, as the catalogue describes it.

    Attributes:
        id: The catalogue's id for it (a CKAN dataset's name, a STAC collection's id).
        title: Its title.
        kind: What it is: ``dataset``, or a STAC ``collection`` or ``item``.
        catalogue: The registry id of the catalogue it came from.
        fetch: The ``fetch`` tool's arguments that read it next (``{"source_id":
            "hri-catalogue", "filters": {"dataset": "..."}}``).
        description: What the catalogue says it is (clipped), when it says.
        publisher: Who publishes it, when the catalogue names someone.
        licence: Its licence as the catalogue gives it, or None when it states none.
        url: Where a person reads about it.
        formats: The formats of its files, when the catalogue lists them.
        modified: When its catalogue entry last changed (ISO 8601 text), when known.
    """

    id: str
    title: str
    kind: str
    catalogue: str
    fetch: Mapping[str, JsonValue]
    description: str | None = None
    publisher: str | None = None
    licence: str | None = None
    url: str | None = None
    formats: tuple[str, ...] = ()
    modified: str | None = None

    @property
    def ref(self) -> str:
        """Its id across every catalogue searched: ``<catalogue>/<id>``."""
        return f"{self.catalogue}/{self.id}"


@dataclass(frozen=True, kw_only=True)
class CatalogueQuery:
    """What a searcher is asked.

    Attributes:
        catalogue: The registry row of the catalogue (its connector's settings are in
            ``config``: a CKAN portal's ``base_url``).
        query: The words to search, as the model wrote them.
        place: The spine id the search is about (``country:FIN``), when one was given.
        bbox: That place's ``(west, south, east, north)``, for a searcher that filters
            by area (STAC does; CKAN searches words only).
        limit: Most results to return.
        policy: How to send HTTP requests (a test gives a transport).
    """

    catalogue: Source
    query: str
    place: str | None = None
    bbox: tuple[float, float, float, float] | None = None
    limit: int = 20
    policy: RequestPolicy = field(default_factory=RequestPolicy)


@dataclass(frozen=True, kw_only=True)
class CatalogueResults:
    """What one catalogue's search returned.

    Attributes:
        candidates: The results, in the catalogue's order (at most the query's limit).
        matched: How many results match in all, when the catalogue says.
        notes: What the searcher narrowed or could not honour, in words.
    """

    candidates: tuple[Candidate, ...]
    matched: int | None = None
    notes: tuple[str, ...] = ()


@runtime_checkable
class CatalogueSearcher(Protocol):
    """Searches one kind of catalogue (a CKAN portal, a STAC API) by words.

    A connector that implements it is a searcher as well: the registry rows it reads
    are the catalogues discovery searches.
    """

    @property
    def name(self) -> str:
        """The connector name catalogue rows give (``"ckan"``)."""
        ...

    @property
    def needs_network(self) -> bool:
        """Whether a search goes over the network (only where live sources are on)."""
        ...

    def is_catalogue(self, source: Source) -> bool:
        """Whether registry row ``source`` is a catalogue to search (a CKAN portal, a
        whole STAC API) rather than one dataset the connector reads (a STAC collection)."""
        ...

    def search(self, query: CatalogueQuery) -> CatalogueResults:
        """Search ``query.catalogue`` for ``query.query``; blocking.

        Raises:
            SourceFetchError: The search failed or was refused; the code says which.
        """
        ...


@dataclass(frozen=True, kw_only=True)
class Searched:
    """How one catalogue's search went.

    Attributes:
        catalogue: The catalogue's registry row.
        searcher: The searcher's name.
        results: What it returned, or None when it failed.
        error: Why it failed.
    """

    catalogue: Source
    searcher: str
    results: CatalogueResults | None = None
    error: SourceFetchError | None = None


async def search_catalogues(
    plan: Sequence[tuple[Source, CatalogueSearcher]],
    query: str,
    *,
    place: str | None = None,
    bbox: tuple[float, float, float, float] | None = None,
    limit: int = 20,
    policy: RequestPolicy | None = None,
) -> list[Searched]:
    """Search each catalogue of ``plan`` at once (each in a thread), in ``plan``'s order.

    A search that fails is a :class:`Searched` with its error, never an exception: one
    portal down costs its own results, not the others'.
    """
    used = policy or RequestPolicy()

    def one(catalogue: Source, searcher: CatalogueSearcher) -> Searched:
        asked = CatalogueQuery(
            catalogue=catalogue, query=query, place=place, bbox=bbox, limit=limit, policy=used
        )
        try:
            results = searcher.search(asked)
        except SourceFetchError as error:
            return Searched(catalogue=catalogue, searcher=searcher.name, error=error)
        kept = tuple(c for c in results.candidates if c.catalogue == catalogue.id)[:limit]
        if len(kept) != len(results.candidates):
            results = CatalogueResults(
                candidates=kept,
                matched=results.matched,
                notes=(
                    *results.notes,
                    f"{len(results.candidates) - len(kept)} results beyond the limit or "
                    "naming another catalogue were left out",
                ),
            )
        return Searched(catalogue=catalogue, searcher=searcher.name, results=results)

    return list(
        await asyncio.gather(*(asyncio.to_thread(one, source, found) for source, found in plan))
    )
