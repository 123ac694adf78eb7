"""The source registry: :class:`Source` rows kept in the chat store's database.

A :class:`SourceRegistry` reads and writes rows through the store's
:class:`~geomint.store.catalogue.Catalogue` (SQLite, PostgreSQL or memory), keeps the
parsed rows in memory until the store says they changed, and learns: a fetch refused
for a filter value the source does not take records the options the source published,
so the next ``find_sources`` hit shows them before the model tries again.

The bundled sources (:func:`bundled_sources`) and any an application adds are written the
same way: adding a source is a row, not code.
"""

from __future__ import annotations

import json
import logging
import threading
from collections.abc import Iterable, Mapping, Sequence
from functools import cache
from importlib import resources
from typing import Final

from pydantic import TypeAdapter, ValidationError

from geomint.errors import UsageError
from geomint.sources.model import FilterKey, Source
from geomint.store import Store
from geomint.store.catalogue import Catalogue, CatalogueRow, Revision

__all__ = ["SourceRegistry", "bundled_sources", "catalogue_sources"]

_SOURCES: Final = TypeAdapter(list[Source])
_log = logging.getLogger(__name__)
#: Most options kept per filter key: what a model can read in one hit.
MAX_OPTIONS: Final = 200
#: What a filter key learned from a refusal (not declared by the row) says it takes.
LEARNED: Final = "one of the options the source published"


def catalogue_sources(name: str) -> tuple[Source, ...]:
    """The sources in ``geomint/sources/catalogue/<name>.json``, validated.

    Raises:
        UsageError: No such catalogue file.
    """
    path = resources.files("geomint.sources").joinpath("catalogue", f"{name}.json")
    if not path.is_file():
        raise UsageError(f"geomint ships no source catalogue named {name!r}")
    return tuple(_SOURCES.validate_json(path.read_bytes()))


@cache
def bundled_sources() -> tuple[Source, ...]:
    """Every source geomint ships rows for: the bundled tables (read offline) and the
    live APIs (read where the network allows)."""
    names = ("bundled", "live")
    return tuple(s for name in names for s in catalogue_sources(name))


def _row(source: Source) -> CatalogueRow:
    coverage = source.coverage
    return CatalogueRow(
        id=source.id,
        body=source.model_dump_json(exclude_defaults=True),
        modality=source.modality,
        start=coverage.start,
        end=coverage.end,
        world=coverage.world,
        countries=coverage.countries,
    )


class SourceRegistry:
    """The sources a deployment can find and fetch, kept in a store's database.

    Args:
        catalogue: The store (every geomint store is a
            :class:`~geomint.store.catalogue.Catalogue`).
        seed: Sources written on first use when the store has none of their ids yet, or
            an older body for them (the bundled sources, by default). An application's
            own rows, and options learned since, are kept.

    Example:
        >>> from geomint.store import MemoryStore
        >>> registry = SourceRegistry(MemoryStore())
        >>> registry.get("un-wpp-2024-population").publisher
        'United Nations, Department of Economic and Social Affairs, Population Division'
    """

    def __init__(
        self, catalogue: Catalogue | Store, *, seed: Iterable[Source] | None = None
    ) -> None:
        if not isinstance(catalogue, Catalogue):
            raise UsageError(
                f"{type(catalogue).__name__} cannot keep sources: a registry needs a store "
                "with put_sources/source_bodies/matching_sources (every geomint store has them)"
            )
        self._catalogue = catalogue
        self._lock = threading.Lock()
        self._cache: dict[str, Source] = {}
        self._revision: Revision | None = None
        self._seed(bundled_sources() if seed is None else tuple(seed))

    @property
    def catalogue(self) -> Catalogue:
        """Where the rows are kept."""
        return self._catalogue

    def _seed(self, sources: Sequence[Source]) -> None:
        stored = self._catalogue.source_bodies([s.id for s in sources])
        missing = [s for s in sources if s.id not in stored]
        stale = [s for s in sources if s.id in stored and self._older(s, stored[s.id])]
        if missing or stale:
            self._catalogue.put_sources([_row(s) for s in [*missing, *stale]])

    @staticmethod
    def _older(shipped: Source, body: str) -> bool:
        """Whether a stored row differs from the shipped one in more than learned options."""
        try:
            stored = Source.model_validate_json(body)
        except ValidationError:
            return True
        return _without_options(stored) != _without_options(shipped)

    def revision(self) -> Revision:
        """What changes whenever a row is written or deleted (rankings cache by it)."""
        return self._catalogue.sources_revision()

    def _fresh(self) -> None:
        revision = self._catalogue.sources_revision()
        if revision != self._revision:
            self._cache.clear()
            self._revision = revision

    def put(self, sources: Iterable[Source]) -> None:
        """Add or replace sources by id."""
        rows = [_row(s) for s in sources]
        if rows:
            self._catalogue.put_sources(rows)

    def remove(self, ids: Sequence[str]) -> None:
        """Remove sources by id."""
        self._catalogue.delete_sources(list(ids))

    def get(self, source_id: str) -> Source | None:
        """The source ``source_id``, or None."""
        return self.many([source_id]).get(source_id)

    def many(self, ids: Sequence[str]) -> dict[str, Source]:
        """The sources of ``ids`` that exist and read back, by id."""
        with self._lock:
            self._fresh()
            wanted = [i for i in ids if i not in self._cache]
            if wanted:
                self._read(self._catalogue.source_bodies(wanted))
            return {i: self._cache[i] for i in ids if i in self._cache}

    def all(self) -> list[Source]:
        """Every source that reads back, in id order."""
        bodies = self._catalogue.source_bodies()
        with self._lock:
            self._fresh()
            self._read({i: b for i, b in bodies.items() if i not in self._cache})
            return [self._cache[i] for i in sorted(bodies) if i in self._cache]

    def _read(self, bodies: Mapping[str, str]) -> None:
        # A row this geomint cannot read (written by hand, or by a newer version) is left
        # out and logged, rather than taking every search down with it.
        for source_id, body in bodies.items():
            try:
                self._cache[source_id] = Source.model_validate_json(body)
            except ValidationError as exc:
                _log.warning("source %s in the registry does not read back: %s", source_id, exc)

    def ids(self) -> list[str]:
        """Every source id, in id order."""
        return sorted(self._catalogue.source_bodies())

    def matching(
        self,
        *,
        country: str | None = None,
        start: int | None = None,
        end: int | None = None,
        modality: str | None = None,
    ) -> list[str]:
        """The ids of sources that cover ``country`` (ISO alpha-3), overlap the years and
        have ``modality``: the filter that runs before any ranking."""
        return self._catalogue.matching_sources(
            country=country, start=start, end=end, modality=modality
        )

    def learn_options(self, source_id: str, key: str, options: Sequence[str]) -> Source | None:
        """Keep the values a source published for a filter key (from a refused fetch), so
        later hits show them. Returns the updated source, or None when it is unknown."""
        source = self.get(source_id)
        if source is None or not options:
            return source
        # What a remote service published is hostile text: only options a row can hold
        # are kept (the rest are dropped), and the row is validated whole before it is
        # written, so no refusal can leave a row that no longer reads back.
        kept = tuple(
            dict.fromkeys(
                o.strip() for o in options if isinstance(o, str) and 0 < len(o.strip()) <= 200
            )
        )[:MAX_OPTIONS]
        found = source.filter_key(key)
        if not kept or (found is not None and found.options == kept):
            return source
        try:
            changed = FilterKey.model_validate(
                {"key": key, "takes": found.takes if found else LEARNED, "options": kept}
                | ({"required": found.required} if found else {})
            )
            data = source.model_dump(mode="json")
            data["filters"] = [
                *(f for f in data["filters"] if f["key"] != key),
                changed.model_dump(mode="json"),
            ]
            updated = Source.model_validate(data)
        except ValidationError as exc:
            _log.warning("options for %s of %s not kept: %s", key, source_id, exc)
            return source
        self.put([updated])
        return updated


def _without_options(source: Source) -> str:
    data = source.model_dump(mode="json")
    data["filters"] = [f for f in data["filters"] if f["takes"] != LEARNED]
    for item in data["filters"]:
        item.pop("options", None)
    return json.dumps(data, sort_keys=True)
