"""fetch over a CKAN portal (the live connector against recordings on 127.0.0.1): a
search is a menu of datasets with their own licences, and a resource is judged by the
confined intake before it lands, with the dataset's licence on the entry."""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest
from tests.sources.connectors.support import RECORDED, fast, live_source

from geomint.sources import SourceRegistry, Sources
from geomint.state import FetchMissed
from geomint.store import MemoryStore
from geomint.testing import RecordedServer
from geomint.tools import ToolContext

from .conftest import MakeCtx
from .helpers import call

pytestmark = pytest.mark.anyio
ACTION = "/api/3/action/"
GEOJSON_RESOURCE = "a1b2c3d4-0009-4e5f-8a9b-999999999999"
STATIONS = {
    "type": "FeatureCollection",
    "features": [
        {
            "type": "Feature",
            "geometry": {"type": "Point", "coordinates": [24.9384, 60.1699]},
            "properties": {"name": "Baana", "kind": "counter"},
        },
        {
            "type": "Feature",
            "geometry": {"type": "Point", "coordinates": [24.9950, 60.1880]},
            "properties": {"name": "Kulosaaren silta", "kind": "counter"},
        },
    ],
}


@pytest.fixture
def server() -> Iterator[RecordedServer]:
    with RecordedServer(RECORDED / "ckan") as running:
        yield running


@pytest.fixture
def ctx(make_ctx: MakeCtx, server: RecordedServer) -> ToolContext:
    portal = live_source("hri-catalogue", base_url=server.base_url)
    sources = Sources(SourceRegistry(MemoryStore(), seed=[portal]), policy=fast(), live=True)
    return make_ctx(sources=sources)


def _serve(server: RecordedServer, action: str, body: str) -> None:
    server.add("GET", ACTION + action, body=body.replace("{BASE}", server.base_url))


async def test_a_search_is_a_menu_of_datasets_each_with_its_licence(
    ctx: ToolContext, server: RecordedServer
) -> None:
    _serve(server, "package_search", (RECORDED / "ckan/package_search.json").read_text("utf-8"))
    result = await call(
        ctx, "fetch", {"source_id": "hri-catalogue", "filters": {"q": "pyöräily", "rows": "2"}}
    )
    assert result.model["count"] == 27
    first = result.model["datasets"][0]
    assert first["dataset"] == "helsingin-pyorailijamaarat"
    assert first["licence"] == "Creative Commons Attribution 4.0"
    assert first["resources"][0]["format"] == "CSV"
    assert ctx.refresh().entries == {}  # a menu, not data


async def test_a_geojson_resource_lands_after_the_intake_judged_it(
    ctx: ToolContext, server: RecordedServer
) -> None:
    shown = json.loads((RECORDED / "ckan/resource_show.json").read_text("utf-8"))
    shown["result"].update(
        id=GEOJSON_RESOURCE,
        name="Laskentapisteet (GeoJSON)",
        format="GeoJSON",
        mimetype="application/geo+json",
        url="{BASE}/files/stations.geojson",
    )
    _serve(server, "resource_show", json.dumps(shown))
    dataset = json.loads((RECORDED / "ckan/package_show.json").read_text("utf-8"))
    dataset["result"]["resources"].append(dict(shown["result"]))
    _serve(server, "package_show", json.dumps(dataset))
    server.add(
        "GET",
        "/files/stations.geojson",
        body=json.dumps(STATIONS),
        content_type="application/geo+json",
    )
    result = await call(
        ctx, "fetch", {"source_id": "hri-catalogue", "filters": {"resource": GEOJSON_RESOURCE}}
    )
    assert "entry_id" in result.model, result.model
    assert result.model["entry_id"] == "byod-1"
    assert result.model["licence"] == "Creative Commons Attribution 4.0"
    entry = ctx.refresh().entries["byod-1"]
    (source,) = entry.latest.sources
    assert source.publisher == "Helsingin kaupunkiympäristön toimiala"
    assert source.source_id == "hri-catalogue"
    assert entry.latest.digest["feature_count"] == 2


async def test_a_resource_the_intake_refuses_is_a_miss_and_nothing_lands(
    ctx: ToolContext, server: RecordedServer
) -> None:
    _serve(server, "resource_show", (RECORDED / "ckan/resource_show.json").read_text("utf-8"))
    _serve(server, "package_show", (RECORDED / "ckan/package_show.json").read_text("utf-8"))
    server.add(
        "GET",
        "/files/pyorailijamaarat_2025.csv",
        file="files/pyorailijamaarat_2025.csv",
        content_type="text/csv; charset=utf-8",
    )
    result = await call(
        ctx,
        "fetch",
        {
            "source_id": "hri-catalogue",
            "filters": {"resource": "a1b2c3d4-0001-4e5f-8a9b-111111111111"},
        },
    )
    assert result.model["code"] == "malformed"
    assert result.failed
    assert ctx.refresh().entries == {}
    assert isinstance(list(ctx.chats.store.read("c1"))[-1].body, FetchMissed)
