"""Shared records: two sources with different licences and a ledger holding a few values."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from geomint.provenance import EntryVersion, Ledger, Provenance

AT = datetime(2026, 1, 5, 9, 30, tzinfo=UTC)


@pytest.fixture
def osm() -> Provenance:
    return Provenance(
        source_id="osm-overpass",
        title="OpenStreetMap",
        publisher="OpenStreetMap Foundation",
        licence="ODbL-1.0",
        url="https://www.openstreetmap.org/copyright",
        retrieved_at=AT,
        evidence="observed",
    )


@pytest.fixture
def worldpop() -> Provenance:
    return Provenance(
        source_id="worldpop_eth_2020",
        title="WorldPop Ethiopia 2020, 100 m",
        publisher="WorldPop",
        licence="CC-BY-4.0",
        retrieved_at=AT,
        evidence="modelled",
    )


@pytest.fixture
def ledger(osm: Provenance, worldpop: Provenance) -> Ledger:
    """v1 stops (osm), v2 people (worldpop), v3 people (osm), l1 a layer of stops."""
    places = EntryVersion(entry_id="places-1", version=1)
    _, book = Ledger().mint_value(
        label="bus stops", value=412, sources=[osm], inputs=[places], minted_at=AT
    )
    _, book = book.mint_value(
        label="people (modelled)", value=2400, unit="people", period="2020",
        sources=[worldpop], minted_at=AT,
    )  # fmt: skip
    _, book = book.mint_value(
        label="people (counted)", value=2000, unit="people", period="2023",
        sources=[osm], minted_at=AT,
    )  # fmt: skip
    _, book = book.mint_layer(
        label="stops", entry=EntryVersion(entry_id="layers-1", version=1), feature_count=412,
        sources=[osm], inputs=[places], minted_at=AT,
    )  # fmt: skip
    return book
