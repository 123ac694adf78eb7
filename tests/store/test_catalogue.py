"""Every store keeps the source registry's rows the same way, and filters them by one
predicate: country (or the world), overlapping years, modality."""

from __future__ import annotations

import pytest

from geomint.store import Store
from geomint.store.catalogue import Catalogue, CatalogueRow


def _row(source_id: str, **overrides: object) -> CatalogueRow:
    fields: dict[str, object] = {
        "id": source_id,
        "body": f'{{"id": "{source_id}"}}',
        "modality": "table",
        "start": 2000,
        "end": 2020,
        "world": False,
        "countries": ("FIN",),
    }
    fields.update(overrides)
    return CatalogueRow(**fields)  # type: ignore[arg-type]


ROWS = (
    _row("fin-table"),
    _row("world-table", world=True, countries=()),
    _row("swe-vector", modality="vector", countries=("SWE",), start=2015, end=None),
    _row("no-years", start=None, end=None, countries=("FIN", "SWE")),
    _row("old", start=1950, end=1990, countries=("FIN",)),
)


def _catalogue(store: Store) -> Catalogue:
    assert isinstance(store, Catalogue)
    store.put_sources(ROWS)
    return store


@pytest.mark.parametrize(
    ("filters", "expected"),
    [
        ({}, {"fin-table", "world-table", "swe-vector", "no-years", "old"}),
        ({"country": "FIN"}, {"fin-table", "world-table", "no-years", "old"}),
        ({"country": "NOR"}, {"world-table"}),
        ({"modality": "vector"}, {"swe-vector"}),
        ({"start": 2021}, {"swe-vector", "no-years"}),
        ({"start": 1960, "end": 1970}, {"old", "no-years"}),
        ({"country": "SWE", "start": 2018, "end": 2018}, {"world-table", "swe-vector", "no-years"}),
    ],
)
def test_a_filter_keeps_what_covers_the_country_the_years_and_the_modality(
    store: Store, filters: dict[str, object], expected: set[str]
) -> None:
    catalogue = _catalogue(store)
    assert set(catalogue.matching_sources(**filters)) == expected  # type: ignore[arg-type]


def test_rows_read_back_as_written_and_are_replaced_by_id(store: Store) -> None:
    catalogue = _catalogue(store)
    assert catalogue.source_bodies(["old", "missing"]) == {"old": '{"id": "old"}'}
    catalogue.put_sources([_row("old", body='{"id": "old", "v": 2}', countries=("NOR",))])
    assert catalogue.source_bodies(["old"]) == {"old": '{"id": "old", "v": 2}'}
    # The countries are replaced with the row, not added to.
    assert "old" not in catalogue.matching_sources(country="FIN")
    assert "old" in catalogue.matching_sources(country="NOR")
    assert len(catalogue.source_bodies()) == len(ROWS)


def test_the_revision_changes_on_every_write_and_delete(store: Store) -> None:
    catalogue = _catalogue(store)
    seen = {catalogue.sources_revision()}
    catalogue.delete_sources(["old"])
    seen.add(catalogue.sources_revision())
    catalogue.put_sources([_row("old")])  # back to the same rows: still a new revision
    seen.add(catalogue.sources_revision())
    assert len(seen) == 3
    catalogue.delete_sources(["never-there"])
    assert catalogue.sources_revision() not in seen
    assert "old" in catalogue.source_bodies()
