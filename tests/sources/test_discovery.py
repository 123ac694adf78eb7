"""Discovery's searches: which catalogues a live search reads (or why none), the CKAN
connector as a catalogue searcher against recorded answers on 127.0.0.1, and searches
that fail one catalogue at a time."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from typing import Any

import pytest
from tests.sources.connectors.support import RECORDED, fast, live_source

from geomint.sources import (
    CatalogueQuery,
    CatalogueSearcher,
    SourceRegistry,
    Sources,
    search_catalogues,
)
from geomint.sources.connectors import CkanConnector, WorldBankConnector
from geomint.sources.connectors.bundled import BundledConnector
from geomint.store import MemoryStore
from geomint.testing import RecordedServer

SEARCH = "/(hri|avoindata)/api/3/action/package_search"


def search_body(base: str, *, notes: str | None = None, extra: int = 0) -> str:
    """The recorded package_search answer, with a description on the first dataset and
    ``extra`` more datasets cloned from it (``aineisto-1``...)."""
    answer: dict[str, Any] = json.loads(
        (RECORDED / "ckan/package_search.json").read_text("utf-8").replace("{BASE}", base)
    )
    results = answer["result"]["results"]
    if notes is not None:
        results[0]["notes"] = notes
    for number in range(1, extra + 1):
        clone = json.loads(json.dumps(results[0]))
        clone.update(name=f"aineisto-{number}", title=f"Aineisto {number}")
        results.append(clone)
    return json.dumps(answer)


@pytest.fixture
def server() -> Iterator[RecordedServer]:
    with RecordedServer(RECORDED / "ckan") as running:
        yield running


def portals(server: RecordedServer, *, live: bool = True) -> Sources:
    """The two CKAN catalogues of the live catalogue, both on the recorded server."""
    rows = [
        live_source("hri-catalogue", base_url=f"{server.base_url}/hri"),
        live_source("avoindata-catalogue", base_url=f"{server.base_url}/avoindata"),
    ]
    return Sources(SourceRegistry(MemoryStore(), seed=rows), policy=fast(), live=live)


def test_the_ckan_connector_is_a_catalogue_searcher_and_the_others_are_not() -> None:
    assert isinstance(CkanConnector(), CatalogueSearcher)
    assert not isinstance(WorldBankConnector(), CatalogueSearcher)
    assert not isinstance(BundledConnector(), CatalogueSearcher)


def test_a_ckan_search_gives_candidates_the_fetch_tool_reads_next(
    server: RecordedServer,
) -> None:
    server.add("GET", SEARCH, body=search_body(server.base_url, notes="Laskurit\n\nvuodesta 2015"))
    catalogue = live_source("hri-catalogue", base_url=f"{server.base_url}/hri")
    found = CkanConnector().search(
        CatalogueQuery(catalogue=catalogue, query="pyöräily", limit=5, policy=fast())
    )
    assert found.matched == 27
    first, second = found.candidates
    assert first.ref == "hri-catalogue/helsingin-pyorailijamaarat"
    assert first.fetch == {
        "source_id": "hri-catalogue",
        "filters": {"dataset": "helsingin-pyorailijamaarat"},
    }
    assert first.description == "Laskurit\n\nvuodesta 2015"
    assert first.licence == "Creative Commons Attribution 4.0"
    assert first.publisher == "Helsingin kaupunkiympäristön toimiala"
    assert first.formats == ("CSV", "GeoJSON")
    assert first.url == f"{server.base_url}/hri/dataset/helsingin-pyorailijamaarat"
    assert (second.licence, second.publisher) == (None, None)  # "notspecified", no organisation
    (asked,) = server.requests
    assert asked.query["q"] == ["pyöräily"] and asked.query["rows"] == ["5"]


def test_the_plan_says_why_nothing_can_be_searched_and_what_exists(
    server: RecordedServer,
) -> None:
    offline = portals(server, live=False).catalogues("FIN")
    assert offline.searchable == ()
    assert offline.unavailable is not None and "GEOMINT_SOURCES_LIVE=1" in offline.unavailable
    assert {s.id for s in offline.known} == {"hri-catalogue", "avoindata-catalogue"}
    elsewhere = portals(server).catalogues("SWE")
    assert elsewhere.unavailable == "no catalogue in the registry covers SWE"
    bare = Sources(SourceRegistry(MemoryStore()), connectors={"bundled": BundledConnector()})
    assert "no connector here can search a catalogue" in str(bare.catalogues().unavailable)


def test_the_plan_searches_the_catalogues_covering_the_country(server: RecordedServer) -> None:
    plan = portals(server).catalogues("Finland")
    assert [s.id for s, _ in plan.searchable] == ["avoindata-catalogue", "hri-catalogue"]
    assert plan.place == "country:FIN" and plan.bbox is not None
    assert plan.unavailable is None


def test_a_failing_catalogue_costs_its_own_results_only(server: RecordedServer) -> None:
    server.add("GET", "/hri/api/3/action/package_search", body=search_body(server.base_url))
    server.add(
        "GET",
        "/avoindata/api/3/action/package_search",
        status=409,
        file="search_query_error.json",
    )
    plan = portals(server).catalogues("FIN")
    searched = asyncio.run(search_catalogues(plan.searchable, "pyöräily", policy=fast()))
    avoindata, hri = searched
    assert avoindata.results is None and avoindata.error is not None
    assert avoindata.error.code == "refused_filter"
    assert hri.results is not None and len(hri.results.candidates) == 2


def test_a_searcher_may_not_return_another_catalogues_results() -> None:
    from geomint.sources import Candidate, CatalogueResults

    class Leaky:
        name, needs_network = "leaky", False

        def search(self, query: CatalogueQuery) -> CatalogueResults:
            mine = Candidate(id="a", title="A", kind="dataset", catalogue=query.catalogue.id,
                             fetch={})  # fmt: skip
            theirs = Candidate(id="b", title="B", kind="dataset", catalogue="elsewhere", fetch={})
            return CatalogueResults(candidates=(mine, theirs))

    catalogue = live_source("hri-catalogue")
    (searched,) = asyncio.run(search_catalogues([(catalogue, Leaky())], "x"))
    assert searched.results is not None
    assert [c.id for c in searched.results.candidates] == ["a"]
    assert "left out" in searched.results.notes[-1]
