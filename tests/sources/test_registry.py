"""The registry keeps sources as rows in the store, seeds the shipped ones without
undoing what it learned, and learns the options a source published from a refusal."""

from __future__ import annotations

from pathlib import Path

import pytest

from geomint.errors import UsageError
from geomint.sources import Source, SourceRegistry
from geomint.sources.model import Column, Coverage, FilterKey, Profile
from geomint.store import MemoryStore, SQLiteStore


def make_source(source_id: str, **overrides: object) -> Source:
    fields: dict[str, object] = {
        "id": source_id,
        "title": f"Title of {source_id}",
        "publisher": "Statistics Testland",
        "licence": "CC-BY-4.0",
        "evidence": "observed",
        "connector": "bundled",
        "coverage": Coverage(world=True, start=2000, end=2020),
        "modality": "table",
        "concepts": ("population",),
        "description": "Population by country and year.",
        "guidance": "Values are 1 July estimates.",
        "filters": (
            FilterKey(key="unit", takes="a spine id such as country:FIN"),
            FilterKey(key="period", takes="a year, a range 2000/2010, or latest"),
        ),
        "profile": Profile(
            shape="one row per country and year",
            columns=(Column(name="value", meaning="people", unit="people"),),
            unit="people",
        ),
    }
    fields.update(overrides)
    return Source.model_validate(fields)


def test_a_source_written_reads_back_equal_from_sqlite(tmp_path: Path) -> None:
    source = make_source("pop")
    with SQLiteStore(tmp_path / "chats.db") as store:
        SourceRegistry(store, seed=[source])
    with SQLiteStore(tmp_path / "chats.db") as store:
        assert SourceRegistry(store, seed=[]).get("pop") == source


def test_learned_options_survive_a_reseed_and_show_on_the_filter() -> None:
    store = MemoryStore()
    registry = SourceRegistry(store, seed=[make_source("pop")])
    registry.learn_options("pop", "sex", ["T", "M", "F", "T"])
    learned = registry.get("pop")
    assert learned is not None and learned.filter_key("sex") is not None
    assert learned.filter_key("sex").options == ("T", "M", "F")  # type: ignore[union-attr]
    again = SourceRegistry(store, seed=[make_source("pop")])
    assert again.get("pop") == learned  # the shipped row is the same but for options
    changed = SourceRegistry(store, seed=[make_source("pop", title="A new title")])
    assert changed.get("pop").title == "A new title"  # type: ignore[union-attr]


def test_the_filter_runs_in_the_store_before_any_ranking() -> None:
    registry = SourceRegistry(
        MemoryStore(),
        seed=[
            make_source("world"),
            make_source("fin", coverage=Coverage(countries=("FIN",), start=1990, end=1995)),
        ],
    )
    assert set(registry.matching(country="FIN")) == {"world", "fin"}
    assert registry.matching(country="SWE") == ["world"]
    assert registry.matching(country="FIN", start=2010, end=2010) == ["world"]


def test_a_store_that_cannot_keep_sources_is_refused() -> None:
    with pytest.raises(UsageError, match="cannot keep sources"):
        SourceRegistry(object())  # type: ignore[arg-type]


def test_options_a_row_cannot_hold_are_dropped_and_the_row_still_reads_back() -> None:
    store = MemoryStore()
    registry = SourceRegistry(store, seed=[make_source("pop")])
    registry.learn_options("pop", "sex", ["x" * 300, "", "T"])
    learned = registry.get("pop")
    assert learned is not None and learned.filter_key("sex").options == ("T",)  # type: ignore[union-attr]
    assert SourceRegistry(store, seed=[]).get("pop") == learned


def test_a_row_that_does_not_read_back_is_left_out_not_fatal() -> None:
    from geomint.store.catalogue import CatalogueRow

    store = MemoryStore()
    registry = SourceRegistry(store, seed=[make_source("pop")])
    store.put_sources(
        [
            CatalogueRow(
                id="broken",
                body='{"id": "broken"}',
                modality="table",
                start=None,
                end=None,
                world=True,
                countries=(),
            )
        ]
    )
    assert [s.id for s in registry.all()] == ["pop"]
    assert registry.get("broken") is None
