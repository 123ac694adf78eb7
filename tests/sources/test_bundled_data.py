"""The open data bundled for the source registry: it loads, its figures are the ones the
research summed, its records in SOURCES.json match the files, and every bundled
catalogue row reads a file that is there.

The files are built by ``scripts/build_sources_data.py``; a test that fails here after a
rebuild means the rebuild changed what users get.
"""

from __future__ import annotations

import csv
import hashlib
import json
from functools import cache
from importlib.resources import files
from importlib.resources.abc import Traversable
from typing import Any

import pytest

from geomint.sources.model import Source

PACKAGE = files("geomint")
BUNDLED = PACKAGE / "sources" / "bundled"
CATALOGUE = PACKAGE / "sources" / "catalogue" / "bundled.json"

# Summed by hand from bokeh-sampledata's WPP 2024 file during the issue 20 research.
NORDIC_2020 = {
    "FIN": 5_529_614,
    "SWE": 10_353_691,
    "NOR": 5_379_273,
    "DNK": 5_831_528,
    "ISL": 366_617,
}


def _rows(resource: Traversable) -> list[dict[str, str]]:
    with resource.open(encoding="utf-8", newline="") as file:
        return list(csv.DictReader(file))


@cache
def _population() -> list[dict[str, str]]:
    return _rows(BUNDLED / "population.csv")


@cache
def _indicators() -> list[dict[str, str]]:
    return _rows(BUNDLED / "indicators.csv")


@cache
def _admin1() -> list[dict[str, Any]]:
    collection = json.loads((BUNDLED / "admin1.geojson").read_text(encoding="utf-8"))
    assert collection["type"] == "FeatureCollection"
    features: list[dict[str, Any]] = collection["features"]
    return features


@cache
def _records() -> dict[str, dict[str, Any]]:
    records: dict[str, dict[str, Any]] = json.loads(
        (BUNDLED / "SOURCES.json").read_text(encoding="utf-8")
    )["files"]
    return records


def _catalogue() -> list[Source]:
    rows = json.loads(CATALOGUE.read_text(encoding="utf-8"))
    return [Source.model_validate(row) for row in rows]


@pytest.mark.parametrize(("iso3", "persons"), sorted(NORDIC_2020.items()))
def test_nordic_population_in_2020_is_the_un_estimate_in_persons(iso3: str, persons: int) -> None:
    (row,) = [r for r in _population() if r["iso3"] == iso3 and r["year"] == "2020"]
    assert abs(int(row["population"]) - persons) <= persons * 0.01
    assert row["variant"] == "estimate"


def test_population_says_which_years_are_projections() -> None:
    variants = {(int(r["year"]), r["variant"]) for r in _population() if r["iso3"] == "FIN"}
    assert (2020, "estimate") in variants
    assert (2025, "projection (Medium variant)") in variants
    assert {v for y, v in variants if y > 2023} == {"projection (Medium variant)"}


def test_population_has_one_row_per_country_and_year_and_no_regions() -> None:
    keys = [(r["iso3"], r["year"]) for r in _population()]
    assert len(keys) == len(set(keys))
    assert all(len(r["iso3"]) == 3 and int(r["m49"]) < 900 for r in _population())
    assert "World" not in {r["name"] for r in _population()}


def test_indicators_have_142_countries_every_five_years_with_corrected_codes() -> None:
    rows = _indicators()
    assert len({r["iso3"] for r in rows}) == 142
    assert sorted({int(r["year"]) for r in rows}) == list(range(1952, 2008, 5))
    codes = {r["name"]: r["iso3"] for r in rows}
    assert codes["Korea, Dem. Rep."] == "PRK"
    assert codes["Korea, Rep."] == "KOR"
    (finland,) = [r for r in rows if r["iso3"] == "FIN" and r["year"] == "2007"]
    assert finland["population"] == "5238460"
    assert float(finland["life_expectancy"]) == pytest.approx(79.313)


def test_finland_has_18_regions_with_finnish_names() -> None:
    finland = {
        f["properties"]["iso_3166_2"]: f["properties"]
        for f in _admin1()
        if f["properties"]["iso_a2"] == "FI"
    }
    assert len(finland) == 18
    assert "FI-01" not in finland  # Åland is Natural Earth's own admin-0
    assert finland["FI-18"]["name_fi"] == "Uusimaa"
    assert finland["FI-18"]["name_sv"] == "Nyland"
    assert finland["FI-19"]["name_fi"] == "Varsinais-Suomi"
    assert finland["FI-19"]["name_en"] == "Finland Proper"
    assert all(p["name_fi"] and p["name_local"] for p in finland.values())


def test_admin1_features_are_polygons_with_unique_ids() -> None:
    features = _admin1()
    ids = [f["properties"]["adm1_code"] for f in features]
    assert len(ids) == len(set(ids))
    assert {f["geometry"]["type"] for f in features} <= {"Polygon", "MultiPolygon"}


def test_sources_records_match_the_files() -> None:
    records = _records()
    assert records["population"]["row_count"] == len(_population())
    assert records["indicators"]["row_count"] == len(_indicators())
    assert records["admin1"]["feature_count"] == len(_admin1())
    for record in records.values():
        assert record["package_sha256"]
        assert record["retrieved_at"].endswith("Z")


@pytest.mark.parametrize("key", ["population", "indicators", "admin1"])
def test_bundled_file_sha256_matches_its_record(key: str) -> None:
    record = _records()[key]
    data = (BUNDLED / record["file"]).read_bytes()
    assert hashlib.sha256(data).hexdigest() == record["sha256"]


def test_every_catalogue_row_validates_and_reads_a_bundled_file() -> None:
    sources = _catalogue()
    assert len({s.id for s in sources}) == len(sources)
    for source in sources:
        config = source.config
        assert source.connector == "bundled"
        if "grid" in config:  # a derived grid, computed from a bundled file (test_rasters)
            assert PACKAGE.joinpath(*str(config["grid"]).split("/")).is_file()
            assert source.evidence == "derived" and source.modality == "raster"
            continue
        assert isinstance(config["file"], str)
        assert isinstance(config["sources"], str)
        rows = _rows(PACKAGE.joinpath(*config["file"].split("/")))
        columns = set(rows[0])
        named = [config["unit_column"], config["name_column"], config["value_column"]]
        named += [config["period_column"]] if config["period_column"] else []
        assert set(named) | set(config["extra_columns"]) <= columns
        sources_json = json.loads(PACKAGE.joinpath(*config["sources"].split("/")).read_text())
        assert config["record"] in sources_json["files"]
        if config["period_column"] is None:
            assert source.coverage.period == "not stated"
            continue
        years = sorted({int(r[config["period_column"]]) for r in rows})
        assert (source.coverage.start, source.coverage.end) == (years[0], years[-1])
        codes = {r[config["unit_column"]] for r in rows}
        assert source.coverage.world or set(source.coverage.countries) == codes


def test_wpp_latest_year_is_its_last_estimate() -> None:
    (wpp,) = [s for s in _catalogue() if s.id == "un-wpp-2024-population"]
    last_estimate = max(int(r["year"]) for r in _population() if r["variant"] == "estimate")
    assert wpp.config["latest_year"] == last_estimate == 2020
