"""The union of provenance: stable order, exact repeats dropped, licences kept apart."""

from __future__ import annotations

from datetime import timedelta

from hypothesis import given
from hypothesis import strategies as st

from geomint.provenance import (
    EntryVersion,
    Provenance,
    evidence_types,
    licences,
    publishers,
    union,
    union_inputs,
)

from .conftest import AT


def _source(n: int, *, licence: str = "ODbL-1.0", hours: int = 0) -> Provenance:
    return Provenance(
        source_id=f"source-{n}", title=f"Source {n}", publisher=f"Publisher {n % 2}",
        licence=licence, retrieved_at=AT + timedelta(hours=hours), evidence="observed",
    )  # fmt: skip


def test_union_keeps_first_seen_order_and_drops_repeats() -> None:
    a, b, c = _source(1), _source(2), _source(3)
    assert union([b, a], [a, c], [b]) == (b, a, c)


def test_union_of_nothing_is_empty() -> None:
    assert union() == ()
    assert union([], ()) == ()


def test_two_retrievals_of_one_source_are_both_kept() -> None:
    morning, evening = _source(1), _source(1, hours=9)
    assert union([morning], [evening]) == (morning, evening)


def test_records_differing_only_in_licence_both_stay() -> None:
    # Which licence is right is not union's to settle: both reach the display.
    stated, other = _source(1), _source(1, licence="CC-BY-4.0")
    merged = union([stated], [other])
    assert merged == (stated, other)
    assert licences(merged) == ("ODbL-1.0", "CC-BY-4.0")


def test_a_mixed_licence_is_a_tuple_of_distinct_licences(
    osm: Provenance, worldpop: Provenance
) -> None:
    merged = union([worldpop], [osm], [_source(7, licence="CC-BY-4.0")])
    assert licences(merged) == ("CC-BY-4.0", "ODbL-1.0")
    assert all(", " not in licence for licence in licences(merged))


def test_publishers_and_evidence_types_are_distinct_in_order(
    osm: Provenance, worldpop: Provenance
) -> None:
    merged = union([osm, worldpop, _source(3)])
    assert publishers(merged) == ("OpenStreetMap Foundation", "WorldPop", "Publisher 1")
    assert evidence_types(merged) == ("observed", "modelled")


def test_union_inputs_keeps_each_version_of_an_entry() -> None:
    v1 = EntryVersion(entry_id="places-1", version=1)
    v2 = EntryVersion(entry_id="places-1", version=2)
    routes = EntryVersion(entry_id="routes-2", version=1)
    assert union_inputs([v1, routes], [v2, v1]) == (v1, routes, v2)


@given(st.lists(st.lists(st.integers(0, 6), max_size=6), max_size=5))
def test_union_is_the_ordered_set_of_its_inputs(groups: list[list[int]]) -> None:
    sources = [[_source(n) for n in group] for group in groups]
    merged = union(*sources)
    flat = [s for group in sources for s in group]
    assert set(merged) == set(flat)
    assert len(merged) == len(set(flat))
    assert list(merged) == sorted(set(flat), key=flat.index)
    assert union(merged, *sources) == merged  # idempotent
