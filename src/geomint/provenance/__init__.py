"""Provenance, Value and Layer records, the per-chat ledger, and the rules for figures and
conflicts.

Every figure a person reads is a :class:`Value` minted by code: it gets an id (``v1``,
``v2``, … per chat, never reissued), a label, a unit, and the :class:`Provenance` of
everything it was computed from. A :class:`Layer` is minted the same way (``l1``, ``l2``,
…). The :class:`Ledger` of a chat issues the ids and answers for them; it never changes,
so the state of a chat can be a fold over its events.

A thing derived from others carries the :func:`union` of their provenance, and its
``licences`` are the distinct licences of those sources, a tuple rather than a sentence.
:func:`check_figure_ids` lets only minted ids become figures, and
:func:`record_conflict` reads two minted values off the ledger and computes their ratio.

Example:
    >>> from datetime import UTC, datetime
    >>> at = datetime(2026, 1, 5, 9, 30, tzinfo=UTC)
    >>> osm = Provenance(source_id="osm", title="OpenStreetMap", publisher="OSMF",
    ...                  licence="ODbL-1.0", retrieved_at=at, evidence="observed")
    >>> pop = Provenance(source_id="worldpop", title="WorldPop 2020", publisher="WorldPop",
    ...                  licence="CC-BY-4.0", retrieved_at=at, evidence="modelled")
    >>> stops, ledger = Ledger().mint_value(label="bus stops", value=412, sources=[osm],
    ...                                     minted_at=at)
    >>> people, ledger = ledger.mint_value(label="people beyond 800 m", value=2210,
    ...                                    unit="people", sources=[pop],
    ...                                    derived_from=[stops.id], minted_at=at)
    >>> people.id, people.licences
    ('v2', ('CC-BY-4.0', 'ODbL-1.0'))
"""

from geomint.provenance import conflicts, errors, figures, ledger, merge, records
from geomint.provenance.conflicts import Conflict, record_conflict
from geomint.provenance.errors import (
    ConflictRefusedError,
    FigureRefusedError,
    ReusedIdError,
    UnknownLayerError,
    UnknownValueError,
)
from geomint.provenance.figures import check_figure_ids, cited_value, refuse_typed_number
from geomint.provenance.ledger import Ledger
from geomint.provenance.merge import evidence_types, licences, publishers, union, union_inputs
from geomint.provenance.records import (
    EVIDENCE_TYPES,
    LICENCE_NOT_STATED,
    PERIOD_NOT_STATED,
    EntryVersion,
    Evidence,
    Layer,
    MintedRecord,
    Provenance,
    Value,
    hash_code,
)

__all__ = [
    "EVIDENCE_TYPES",
    "LICENCE_NOT_STATED",
    "PERIOD_NOT_STATED",
    "Conflict",
    "ConflictRefusedError",
    "EntryVersion",
    "Evidence",
    "FigureRefusedError",
    "Layer",
    "Ledger",
    "MintedRecord",
    "Provenance",
    "ReusedIdError",
    "UnknownLayerError",
    "UnknownValueError",
    "Value",
    "check_figure_ids",
    "cited_value",
    "conflicts",
    "errors",
    "evidence_types",
    "figures",
    "hash_code",
    "ledger",
    "licences",
    "merge",
    "publishers",
    "record_conflict",
    "records",
    "refuse_typed_number",
    "union",
    "union_inputs",
]
