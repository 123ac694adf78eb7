"""Union of provenance: what a thing derived from other things carries.

A figure computed from two layers rests on every source either layer rests on, so its
sources are the union of theirs. The union keeps the first-seen order (the order inputs
were given, then the order each listed its sources) so that folding the same events
twice gives the same record, and drops only exact repeats.

What counts as "the same source" is the whole :class:`~geomint.provenance.Provenance`
record: source id, title, publisher, licence, url, retrieval time and evidence type.
Two retrievals of one source at different times are two records, because the figure
rests on both and a person may need to know it; two records that differ only in licence
both stay, so a disagreement between them is shown rather than settled by whichever
came first. Retrieval times are compared as instants, so ``10:00Z`` and ``12:00+02:00``
are one retrieval.
"""

from __future__ import annotations

from collections.abc import Hashable, Iterable
from typing import TYPE_CHECKING, TypeVar

if TYPE_CHECKING:
    from geomint.provenance.records import EntryVersion, Evidence, Provenance

__all__ = ["evidence_types", "licences", "publishers", "union", "union_inputs"]

_H = TypeVar("_H", bound=Hashable)


def _distinct(items: Iterable[_H]) -> tuple[_H, ...]:
    return tuple(dict.fromkeys(items))


def union(*groups: Iterable[Provenance]) -> tuple[Provenance, ...]:
    """Return every source of every group once, in first-seen order.

    Args:
        *groups: The sources of each input, e.g. ``value.sources`` for each value a new
            figure was computed from.

    Returns:
        The distinct records; an exact repeat keeps its first position.
    """
    return _distinct(source for group in groups for source in group)


def union_inputs(*groups: Iterable[EntryVersion]) -> tuple[EntryVersion, ...]:
    """Return every entry version of every group once, in first-seen order.

    Two versions of one entry are two inputs: a re-run that reads ``previous`` and
    ``now`` rests on both.
    """
    return _distinct(entry for group in groups for entry in group)


def licences(sources: Iterable[Provenance]) -> tuple[str, ...]:
    """Return the distinct licences of ``sources`` in first-seen order.

    A mixed licence is this tuple, one licence per element, never joined into one text:
    the display lists them, and nothing downstream has to parse a sentence to find them.
    """
    return _distinct(source.licence for source in sources)


def publishers(sources: Iterable[Provenance]) -> tuple[str, ...]:
    """Return the distinct publishers of ``sources`` in first-seen order."""
    return _distinct(source.publisher for source in sources)


def evidence_types(sources: Iterable[Provenance]) -> tuple[Evidence, ...]:
    """Return the distinct evidence types of ``sources`` in first-seen order."""
    return _distinct(source.evidence for source in sources)
