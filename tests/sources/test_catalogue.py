"""The live catalogue: every row is a valid Source, read by a connector that exists, with
the settings that connector needs, and honest about licences and periods."""

from __future__ import annotations

import json
from importlib import resources
from typing import Any

import pytest

from geomint.sources.connectors import (
    CkanConnector,
    Connector,
    HapiConnector,
    SdmxConnector,
    StacConnector,
    WorldBankConnector,
)
from geomint.sources.connectors.hapi import ENDPOINTS
from geomint.sources.connectors.sdmx import AGENCIES
from geomint.sources.model import Source

CONNECTORS: dict[str, Connector] = {
    c.name: c
    for c in (
        WorldBankConnector(),
        SdmxConnector(),
        CkanConnector(),
        HapiConnector(),
        StacConnector(),
    )
}
ROWS: list[dict[str, Any]] = json.loads(
    (resources.files("geomint.sources") / "catalogue" / "live.json").read_text("utf-8")
)
SOURCES = [Source.model_validate(row) for row in ROWS]


def test_ids_are_unique() -> None:
    ids = [source.id for source in SOURCES]
    assert len(ids) == len(set(ids))


@pytest.mark.parametrize("source", SOURCES, ids=lambda s: s.id)
def test_each_row_names_a_connector_and_filters_it_takes(source: Source) -> None:
    connector = CONNECTORS[source.connector]
    extra = {f.key for f in source.filters} - {"unit", "period"}
    assert extra <= set(connector.vocabulary), f"{source.id} declares {extra}"


@pytest.mark.parametrize("source", SOURCES, ids=lambda s: s.id)
def test_each_row_has_the_settings_its_connector_reads(source: Source) -> None:
    config = source.config
    if source.connector == "worldbank":
        assert isinstance(config["indicator"], str)
    elif source.connector == "sdmx":
        assert config["agency"] in AGENCIES
        assert "{geo}" in str(config["key"])
        for declared in source.filters:
            if declared.key not in ("unit", "period"):
                assert "{" + declared.key + "}" in str(config["key"])
    elif source.connector == "hapi":
        endpoint = ENDPOINTS[str(config["endpoint"])]
        assert {f.key for f in source.filters} <= endpoint.keys
        defaults = config.get("defaults", {})
        assert isinstance(defaults, dict) and set(defaults) <= endpoint.keys
        # HAPI gives no licence per row: the row says where each row's licence is.
        assert "resource_hdx_id" in source.licence
        assert "resource_hdx_id" in {c.name for c in source.profile.columns}
    elif source.connector == "stac" and "collection" not in config:
        # a whole STAC API: a catalogue discovery searches, whose collections differ
        assert str(config["api_url"]).startswith("https://")
        assert "asset" not in config and "per collection" in source.licence
        assert source.filter_key("collection") is not None
    elif source.connector == "stac":
        assert str(config["api_url"]).startswith("https://")
        assert isinstance(config["collection"], str)
        assert isinstance(config["asset"], str)
        assert source.modality == "raster"
        # cloud cover is a filter only where the items carry it
        has_cloud = source.filter_key("max_cloud_cover") is not None
        assert has_cloud == (config.get("cloud_cover") is True)
    else:
        assert str(config["base_url"]).startswith("https://")
        assert source.licence == "per dataset (see each result)"


def test_periods_are_explained_where_they_differ() -> None:
    by_id = {source.id: source for source in SOURCES}
    assert "midyear" in by_id["worldbank-population"].guidance
    assert "1 January" in by_id["eurostat-population-1-january"].guidance
    assert "projections" in by_id["hdx-hapi-baseline-population"].guidance
    assert "plan year" in by_id["hdx-hapi-humanitarian-needs"].guidance
