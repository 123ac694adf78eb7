"""``Sources``: the registry, the ranking, the spine and the connectors, as the tools use them.

One object per agent. It answers the three questions the open-data tools ask:

* :meth:`Sources.find`: which sources could answer this? Filter in the store (country,
  overlapping years, modality), then rank what survived (BM25, and a dense arm when one
  is plugged in); each hit comes with what the first fetch needs;
* :meth:`Sources.resolve`: which unit is this name? (the spine, no fetch);
* :meth:`Sources.read`: read one cell or land a table (the connectors, through
  :mod:`geomint.http`);
* :meth:`Sources.catalogues`: which catalogues could be searched live for a question
  the registry has nothing for (discovery, :mod:`geomint.sources.discovery`).

Live connectors (the World Bank, SDMX, CKAN, HDX HAPI, STAC) need the network; with
``live=False`` (the default: geomint's main job runs offline) their sources are not offered
as hits, and every result says which of them matched, so the model knows they exist.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Final

from pydantic import JsonValue

from geomint.errors import UsageError
from geomint.http import RequestPolicy
from geomint.sources.connectors.base import Connector, Download, Grid, Listing, SourceFetchError
from geomint.sources.connectors.bundled import BundledConnector
from geomint.sources.discovery import MAX_CATALOGUES, CatalogueSearcher
from geomint.sources.model import MODALITIES, Source, period_years
from geomint.sources.ranking import DenseArm, Hit, Ranker
from geomint.sources.reads import (
    Cell,
    CellMiss,
    LandedTable,
    check_filters,
    read_cell,
    read_table,
)
from geomint.sources.registry import SourceRegistry
from geomint.sources.spine import Place, Spine, UnknownPlaceError, spine

__all__ = ["CataloguePlan", "Found", "Resolved", "Sources", "default_connectors"]

#: Set to 1 to offer the live sources (World Bank, SDMX, CKAN, HDX HAPI) where the network
#: allows.
LIVE_ENV: Final = "GEOMINT_SOURCES_LIVE"
_MAX_TOP: Final = 20


def default_connectors() -> dict[str, Connector]:
    """Every connector geomint ships, by name."""
    from geomint.sources import connectors  # noqa: PLC0415 - the live ones import sdmx1

    found: dict[str, Connector] = {"bundled": BundledConnector()}
    for name in (
        "WorldBankConnector",
        "SdmxConnector",
        "CkanConnector",
        "HapiConnector",
        "StacConnector",
    ):
        made = getattr(connectors, name, None)
        if made is not None:
            instance = made()
            found[instance.name] = instance
    return found


@dataclass(frozen=True, kw_only=True)
class Found:
    """What ``find_sources`` returns.

    Attributes:
        hits: The ranked sources, best first.
        filtered: How many sources the filter kept, of how many in the registry.
        arms: The ranking arms that ran.
        notes: What was narrowed, read or left out, in words.
        offline: Sources that matched but need the network, which is off here.
    """

    hits: tuple[Hit, ...]
    filtered: tuple[int, int]
    arms: tuple[str, ...]
    notes: tuple[str, ...] = ()
    offline: tuple[Source, ...] = ()


@dataclass(frozen=True, kw_only=True)
class Resolved:
    """What ``resolve_place`` returns.

    Attributes:
        matches: The units with that name, countries first.
        inside: For the first match, the units one level down.
        near: Names close to the one asked, when nothing matched.
        notes: What the spine could not cover.
    """

    matches: tuple[Place, ...]
    inside: tuple[Place, ...] = ()
    near: tuple[str, ...] = ()
    notes: tuple[str, ...] = field(default_factory=tuple)


@dataclass(frozen=True, kw_only=True)
class CataloguePlan:
    """Which catalogues a live search would read here, or why none can be.

    Attributes:
        searchable: Each catalogue to search, with its searcher (at most
            :data:`~geomint.sources.discovery.MAX_CATALOGUES`).
        unavailable: Why no catalogue can be searched here, when none can.
        known: Every catalogue the registry names (to tell the model what exists).
        left_out: Catalogues that could be searched but were past the limit.
        place: The spine id of the country asked about, when one was given.
        bbox: That country's box, for searchers that filter by area.
    """

    searchable: tuple[tuple[Source, CatalogueSearcher], ...]
    unavailable: str | None = None
    known: tuple[Source, ...] = ()
    left_out: tuple[Source, ...] = ()
    place: str | None = None
    bbox: tuple[float, float, float, float] | None = None


class Sources:
    """The open-data side of an agent.

    Args:
        registry: Where the sources are kept.
        connectors: Connectors by name; every shipped one by default.
        dense: A dense ranking arm, or None for BM25 alone.
        policy: How connectors send HTTP requests (a test gives a transport).
        live: Offer sources whose connector needs the network; None reads
            ``GEOMINT_SOURCES_LIVE`` (off unless it is ``1``).
        place_spine: The spine; the bundled one by default.
    """

    def __init__(
        self,
        registry: SourceRegistry,
        *,
        connectors: Mapping[str, Connector] | None = None,
        dense: DenseArm | None = None,
        policy: RequestPolicy | None = None,
        live: bool | None = None,
        place_spine: Spine | None = None,
    ) -> None:
        self.registry = registry
        self.connectors = dict(default_connectors() if connectors is None else connectors)
        self.ranker = Ranker(dense)
        self.policy = policy or RequestPolicy(timeout_s=20.0, max_attempts=3, rate_per_s=4.0)
        self.live = os.environ.get(LIVE_ENV) == "1" if live is None else live
        self._spine = place_spine

    @property
    def spine(self) -> Spine:
        """The place spine (built on first use)."""
        if self._spine is None:
            self._spine = spine()
        return self._spine

    @property
    def searchers(self) -> dict[str, CatalogueSearcher]:
        """The connectors that can also search a catalogue (CKAN, STAC), by name."""
        return {
            name: found
            for name, found in self.connectors.items()
            if isinstance(found, CatalogueSearcher)
        }

    def is_catalogue(self, source: Source) -> bool:
        """Whether ``source`` is a catalogue discovery searches (a CKAN portal, a whole
        STAC API) rather than data: a hit on one alone is a miss."""
        searcher = self.searchers.get(source.connector)
        return searcher is not None and searcher.is_catalogue(source)

    def reachable(self, source: Source) -> bool:
        """Whether a fetch of ``source`` can run here: its connector exists, and it needs
        no network or the network is on."""
        connector = self.connectors.get(source.connector)
        return connector is not None and (self.live or not connector.needs_network)

    # -- find ----------------------------------------------------------------------------

    def country_code(self, country: str) -> tuple[str, str | None]:
        """An ISO alpha-3 code for ``country`` (an id, a code or a name), and a note when
        it was read from a name.

        Raises:
            UnknownPlaceError: No country of that id, code or name.
        """
        text = country.strip()
        if text.startswith("country:"):
            return str(self.spine.require(text).codes["iso3"]), None
        for system in ("iso3", "iso2"):
            if (found := self.spine.by_code(system, text)) is not None:
                return found.removeprefix("country:"), None
        named = self.spine.resolve(text, level="country", limit=1)
        if named:
            return named[0].id.removeprefix("country:"), f"country {text!r} read as {named[0].id}"
        raise UnknownPlaceError(
            f"{country!r} is not a country on the place spine; give an ISO code (FIN), an "
            "id (country:FIN) or its English name"
        )

    def find(
        self,
        query: str,
        *,
        country: str | None = None,
        period: str | None = None,
        modality: str | None = None,
        top: int = 5,
    ) -> Found:
        """Filter the registry, then rank the survivors for ``query``.

        Raises:
            UsageError: ``modality`` is not table, vector or raster, or ``period`` names
                no year.
            UnknownPlaceError: ``country`` is not a country.
        """
        if modality is not None and modality not in MODALITIES:
            raise UsageError(f"modality must be one of {', '.join(MODALITIES)}; got {modality!r}")
        notes: list[str] = []
        iso3 = None
        if country is not None:
            iso3, note = self.country_code(country)
            if note:
                notes.append(note)
        start = end = None
        if period is not None:
            years = period_years(period)
            if years is None:
                raise UsageError(f"period {period!r} names no year; give 2020 or 2000/2010")
            start, end = years
        allowed = self.registry.matching(country=iso3, start=start, end=end, modality=modality)
        revision = self.registry.revision()
        if self.ranker.revision != revision:
            self.ranker.index_for(revision, self.registry.all())
        ranked = self.ranker.rank(query, allowed, top=min(max(top, 1), _MAX_TOP) * 3)
        hits = [h for h in ranked if self.reachable(h.source)][: min(max(top, 1), _MAX_TOP)]
        offline = tuple(h.source for h in ranked if not self.reachable(h.source))[:5]
        if self.ranker.arms == ("bm25",):
            notes.append("ranked by BM25 alone (no dense arm is installed)")
        return Found(
            hits=tuple(hits),
            filtered=(len(allowed), revision[1]),
            arms=self.ranker.arms,
            notes=tuple(notes),
            offline=offline,
        )

    def catalogues(self, country: str | None = None) -> CataloguePlan:
        """The catalogues a live search for a question about ``country`` would read.

        A catalogue is a registry row whose connector is a
        :class:`~geomint.sources.discovery.CatalogueSearcher`; one covering ``country``
        (or the world) is searched, where its searcher's network need is allowed.

        Raises:
            UnknownPlaceError: ``country`` is not a country.
        """
        searchers = self.searchers
        known = tuple(s for s in self.registry.all() if self.is_catalogue(s))
        place = bbox = None
        covering = known
        if country is not None:
            iso3, _ = self.country_code(country)
            place = f"country:{iso3}"
            found = self.spine.get(place)
            bbox = found.bbox if found is not None else None
            ids = set(self.registry.matching(country=iso3))
            covering = tuple(s for s in known if s.id in ids)
        unavailable = None
        if not searchers:
            unavailable = (
                "no connector here can search a catalogue (the CKAN and STAC connectors can)"
            )
        elif not known:
            unavailable = (
                "the registry names no catalogue to search (a CKAN portal's row, or a STAC "
                "API's row without a collection)"
            )
        elif not covering:
            unavailable = f"no catalogue in the registry covers {country}"
        reachable = [s for s in covering if self.live or not searchers[s.connector].needs_network]
        if unavailable is None and not reachable:
            unavailable = (
                f"live sources are off here ({LIVE_ENV}=1 turns them on), and every "
                "catalogue is searched over the network"
            )
        return CataloguePlan(
            searchable=tuple((s, searchers[s.connector]) for s in reachable[:MAX_CATALOGUES]),
            unavailable=unavailable,
            known=known,
            left_out=tuple(reachable[MAX_CATALOGUES:]),
            place=place,
            bbox=bbox,
        )

    # -- resolve -------------------------------------------------------------------------

    def resolve(self, name: str, *, level: Any = None, country: str | None = None) -> Resolved:
        """The spine's units called ``name``, and what lies one level down in the first."""
        iso3 = self.country_code(country)[0] if country else None
        matches = self.spine.resolve(name, level=level, country=iso3)
        if not matches:
            return Resolved(
                matches=(), near=tuple(self.spine.near_names(name)), notes=self.spine.notes
            )
        return Resolved(
            matches=tuple(matches),
            inside=tuple(self.spine.inside(matches[0].id)),
            notes=self.spine.notes,
        )

    # -- read ----------------------------------------------------------------------------

    def source(self, source_id: str) -> Source:
        """The registry's source ``source_id``.

        Raises:
            SourceFetchError: ``not_found``, naming the near ids.
        """
        found = self.registry.get(source_id)
        if found is not None:
            return found
        import difflib  # noqa: PLC0415 - only on a miss

        near = difflib.get_close_matches(source_id, self.registry.ids(), n=3, cutoff=0.6)
        raise SourceFetchError(
            "not_found",
            f"no source {source_id!r} in the registry"
            + (f"; did you mean {', '.join(near)}?" if near else "; find_sources lists them"),
        )

    def read(
        self, source_id: str, filters: Mapping[str, JsonValue], *, cell: bool
    ) -> Cell | CellMiss | LandedTable | Download | Listing | Grid:
        """Read a cell (``cell=True``) or land a table (or a file-shaped resource).

        Blocking: it sends HTTP requests for live sources. A refused filter value teaches
        the registry the options the source published.

        Raises:
            SourceFetchError: Refused or failed; the code says which.
            UnknownPlaceError: A unit that is not a spine id.
        """
        source = self.source(source_id)
        connector = self.connectors.get(source.connector)
        if connector is None:
            raise SourceFetchError(
                "unavailable",
                f"{source.id} is read by the {source.connector} connector, "
                "which this deployment does not have",
            )
        if not self.reachable(source):
            raise SourceFetchError(
                "unavailable",
                f"{source.id} needs the network ({source.connector}), which is off here; "
                "the bundled sources are read offline",
            )
        narrowing = check_filters(source, filters, self.spine)
        try:
            if cell:
                return read_cell(source, connector, self.spine, narrowing, self.policy)
            return read_table(source, connector, self.spine, narrowing, self.policy)
        except SourceFetchError as refused:
            if refused.learnable and refused.key and refused.options:
                self.registry.learn_options(source.id, refused.key, refused.options)
            raise
