"""find_sources on a registry miss: the catalogues searched live (CKAN recordings on
127.0.0.1), a scripted sub-agent's shortlist, what the model reads, the one row the person
is shown, and what happens where live search cannot run."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from tests.sources.connectors.support import EARTH_SEARCH, RECORDED, fast, live_source
from tests.sources.test_discovery import SEARCH, search_body
from tests.sources.test_registry import make_source

from geomint.models import TurnBudget
from geomint.sources import SourceRegistry, Sources
from geomint.state import DiscoveryRan, ValueMinted
from geomint.store import MemoryStore
from geomint.testing import RecordedServer, Script
from geomint.tools import ToolContext
from geomint.tools.effects import EffectRefusedError
from geomint.ui import DiscoveryPart, chat_parts

from .conftest import MakeCtx, UiLog
from .helpers import call

pytestmark = pytest.mark.anyio

PYORAILY = "hri-catalogue/helsingin-pyorailijamaarat"
LASKENTA = "hri-catalogue/liikenteen-laskentatiedot"
POPULATION = make_source("testland-population", connector="plain", title="Population")


@pytest.fixture
def server() -> Iterator[RecordedServer]:
    with RecordedServer(RECORDED / "ckan") as running:
        yield running


def portals(server: RecordedServer, *, live: bool = True, extra: tuple[Any, ...] = ()) -> Sources:
    rows = [
        live_source("hri-catalogue", base_url=f"{server.base_url}/hri"),
        live_source("avoindata-catalogue", base_url=f"{server.base_url}/avoindata"),
        *extra,
    ]
    return Sources(SourceRegistry(MemoryStore(), seed=rows), policy=fast(), live=live)


def serve_search(server: RecordedServer, **options: Any) -> None:
    server.add("GET", SEARCH, body=search_body(server.base_url, **options))


def discovery_ctx(make_ctx: MakeCtx, server: RecordedServer, script: Script, **more: Any) -> (
    ToolContext
):  # fmt: skip
    return make_ctx(
        sources=more.pop("sources", None) or portals(server),
        discovery_model=script.model(),
        budget=more.pop("budget", None) or TurnBudget(),
        call_id="call-1",
        **more,
    )


SHORTLIST = {
    "shortlist": [
        {"id": PYORAILY, "why": "bicycle counts at Helsinki's counting points"},
        {"id": "avoindata-catalogue/aineisto-1", "why": "the same counts, national copy"},
        {"id": "hri-catalogue/invented-dataset", "why": "sounds right"},
    ]
}


async def test_a_catalogue_only_hit_is_a_miss_and_the_catalogues_are_searched(
    make_ctx: MakeCtx, server: RecordedServer
) -> None:
    serve_search(server)
    script = Script(shortlists=[SHORTLIST])
    ctx = discovery_ctx(make_ctx, server, script)
    result = await call(ctx, "find_sources", {"query": "Helsinki region open data"})
    assert [h["source_id"] for h in result.model["hits"]][:1] == ["hri-catalogue"]
    assert result.model["catalogues"]["read"] == 4 and script.discovery_calls == 1


async def test_a_miss_searches_the_catalogues_and_returns_a_short_list_with_reasons(
    make_ctx: MakeCtx, server: RecordedServer
) -> None:
    serve_search(server, extra=1)
    script = Script(shortlists=[SHORTLIST])
    ctx = discovery_ctx(make_ctx, server, script)
    result = await call(ctx, "find_sources", {"query": "bicycle counts", "country": "FIN"})
    live = result.model["catalogues"]
    assert live["searched"] == (
        "2 catalogues live: avoindata-catalogue (27 match, read 3); "
        "hri-catalogue (27 match, read 3)"
    )
    assert live["read"] == 6
    assert [c["id"] for c in live["candidates"]] == [PYORAILY, "avoindata-catalogue/aineisto-1"]
    first = live["candidates"][0]
    assert first["why"] == "bicycle counts at Helsinki's counting points"
    assert first["licence"] == "Creative Commons Attribution 4.0"
    assert first["fetch"] == {
        "source_id": "hri-catalogue",
        "filters": {"dataset": "helsingin-pyorailijamaarat"},
    }
    assert "invented-dataset" in live["dropped"]
    assert "it fetched and chose nothing" in live["shortlisted_by"]
    assert "fetch with a candidate's `fetch` arguments" in live["next"]
    assert "shortlisted 2 datasets" in result.model["miss"]
    # The model read a short list, not the search: six results, two kept.
    assert len(live["candidates"]) == 2 and "aineisto-1" not in str(live["candidates"][0])


async def test_the_model_can_fetch_a_shortlisted_dataset_next(
    make_ctx: MakeCtx, server: RecordedServer
) -> None:
    serve_search(server)
    server.add(
        "GET",
        "/hri/api/3/action/package_show",
        body=(RECORDED / "ckan/package_show.json").read_text("utf-8"),
    )
    ctx = discovery_ctx(make_ctx, server, Script(shortlists=[SHORTLIST]))
    found = await call(ctx, "find_sources", {"query": "bicycle counts", "country": "FIN"})
    arguments = found.model["catalogues"]["candidates"][0]["fetch"]
    listed = await call(ctx, "fetch", arguments)
    (dataset,) = listed.model["datasets"]
    assert dataset["dataset"] == "helsingin-pyorailijamaarat"
    assert dataset["resources"][0]["resource"] == "a1b2c3d4-0001-4e5f-8a9b-111111111111"


async def test_the_search_is_one_row_that_expands_into_its_steps(
    make_ctx: MakeCtx, server: RecordedServer, ui: UiLog
) -> None:
    serve_search(server)
    server.add(
        "GET",
        "/avoindata/api/3/action/package_search",
        status=409,
        file="search_query_error.json",
    )
    ctx = discovery_ctx(make_ctx, server, Script(shortlists=[SHORTLIST]))
    await call(ctx, "find_sources", {"query": "bicycle counts", "country": "FIN"})
    (event,) = [e.body for e in ctx.chats.store.read("c1") if isinstance(e.body, DiscoveryRan)]
    assert event.call_id == "call-1" and event.query == "bicycle counts"
    (row,) = [p for p in ui if isinstance(p, DiscoveryPart)]
    assert row.summary == "Searched 2 catalogues, 1 candidate (1 failed)"
    failed, searched = row.searches
    assert (failed.catalogue, failed.ok, failed.code) == ("avoindata-catalogue", False,
                                                         "refused_filter")  # fmt: skip
    assert (searched.catalogue, searched.read, searched.matched) == ("hri-catalogue", 2, 27)
    (kept,) = row.shortlist
    assert (kept.id, kept.why) == (PYORAILY, "bicycle counts at Helsinki's counting points")
    assert row.dropped == ("avoindata-catalogue/aineisto-1", "hri-catalogue/invented-dataset")
    assert row.usage["requests"] == 1
    # Read back, the chat shows the same row.
    assert [p for p in chat_parts(ctx.chats, "c1") if isinstance(p, DiscoveryPart)] == [row]


async def test_the_sub_agents_tokens_are_counted_in_the_turns_budget(
    make_ctx: MakeCtx, server: RecordedServer
) -> None:
    serve_search(server)
    budget = TurnBudget(max_requests=1)
    script = Script(shortlists=[SHORTLIST])
    ctx = discovery_ctx(make_ctx, server, script, budget=budget)
    await call(ctx, "find_sources", {"query": "bicycle counts", "country": "FIN"})
    events = [e.body for e in ctx.chats.store.read("c1") if isinstance(e.body, DiscoveryRan)]
    assert budget.used.requests == 1
    assert budget.used.tokens == events[0].usage.input_tokens + events[0].usage.output_tokens > 0
    again = await call(ctx, "find_sources", {"query": "bicycle counts", "country": "FIN"})
    assert script.discovery_calls == 1  # the spent budget is not spent again
    live = again.model["catalogues"]
    assert "the shortlist was not made (this turn's budget" in live["shortlisted_by"]
    assert all("why" not in c for c in live["candidates"])


async def test_offline_find_sources_says_live_search_was_not_available_and_what_exists(
    make_ctx: MakeCtx, server: RecordedServer
) -> None:
    script = Script()
    ctx = discovery_ctx(make_ctx, server, script, sources=portals(server, live=False))
    result = await call(ctx, "find_sources", {"query": "bicycle counts", "country": "FIN"})
    live = result.model["catalogues"]
    assert live["searched"] is False
    assert live["why"] == (
        "live catalogue search was not available: live sources are off here "
        "(GEOMINT_SOURCES_LIVE=1 turns them on), and every catalogue is searched over the "
        "network"
    )
    assert [c["source_id"] for c in live["catalogues"]] == ["avoindata-catalogue",
                                                           "hri-catalogue"]  # fmt: skip
    assert "Say so plainly rather than estimate" in result.model["miss"]
    assert server.requests == [] and script.discovery_calls == 0


async def test_a_refused_network_effect_is_said_and_nothing_is_searched(
    make_ctx: MakeCtx, server: RecordedServer
) -> None:
    async def refuse(effect: str, about: dict[str, Any], **_: Any) -> None:
        assert effect == "network" and about["catalogues"] == ["avoindata-catalogue",
                                                               "hri-catalogue"]  # fmt: skip
        raise EffectRefusedError("find_sources needs a person's approval and was refused: no")

    ctx = discovery_ctx(make_ctx, server, Script(), authorize=refuse)
    result = await call(ctx, "find_sources", {"query": "bicycle counts", "country": "FIN"})
    assert result.model["catalogues"]["why"].startswith(
        "live catalogue search was not run: find_sources needs a person's approval"
    )
    assert server.requests == []


async def test_registry_hits_are_not_searched_past_unless_asked(
    make_ctx: MakeCtx, server: RecordedServer
) -> None:
    serve_search(server)
    sources = portals(server, extra=(POPULATION,))
    sources.connectors["plain"] = _NotASearcher()
    script = Script(shortlists=[SHORTLIST])
    ctx = discovery_ctx(make_ctx, server, script, sources=sources)
    hit = await call(ctx, "find_sources", {"query": "population", "country": "FIN"})
    # A catalogue's own row may rank too ("Population Data Services Agency"): a data row
    # among the hits is what keeps the catalogues from being searched.
    assert hit.model["hits"][0]["source_id"] == "testland-population"
    assert "catalogues" not in hit.model and server.requests == []
    assert any("search_catalogues=true" in note for note in hit.model["notes"])
    asked = await call(
        ctx, "find_sources", {"query": "population", "country": "FIN", "search_catalogues": True}
    )
    assert asked.model["catalogues"]["read"] == 4 and script.discovery_calls == 1


async def test_the_sub_agent_cannot_mint_or_fetch(
    make_ctx: MakeCtx, server: RecordedServer
) -> None:
    serve_search(server)
    script = Script(shortlists=[SHORTLIST])
    ctx = discovery_ctx(make_ctx, server, script)
    await call(ctx, "find_sources", {"query": "bicycle counts", "country": "FIN"})
    ((kind, _, info),) = script.seen
    assert kind == "discovery"
    assert info.function_tools == [] and info.output_tools == []  # no tool: nothing to mint with
    events = [e.body for e in ctx.chats.store.read("c1")]
    assert not any(isinstance(e, ValueMinted) for e in events)
    assert ctx.refresh().entries == {} and ctx.workspace.values == ()
    # Only searches were sent: no dataset was listed or downloaded.
    assert {r.path.rsplit("/", 1)[-1] for r in server.requests} == {"package_search"}


class _NotASearcher:
    """A connector with no search: its rows are data, not catalogues."""

    name, needs_network, vocabulary = "plain", False, {}

    def fetch(self, request: Any) -> Any:
        raise AssertionError("nothing is fetched here")


async def test_a_stac_api_is_searched_for_collections_and_one_is_listed_next(
    make_ctx: MakeCtx, server: RecordedServer
) -> None:
    """A whole STAC API (a row without a collection) is a catalogue: its collections are
    ranked by the words, shortlisted, and the one kept is listed by the fetch it names."""
    stac, api = EARTH_SEARCH, "https://earth-search.aws.element84.com/v1"
    base = f"{server.base_url}/stac"
    for name, token in (("collections_page1.json", None), ("collections_page2.json", "next:naip")):
        body = (stac / name).read_text("utf-8").replace(api, base)
        server.add("GET", "/stac/collections", body=body, query={"token": token} if token else None)
    server.add("POST", "/stac/search", body=(stac / "cop_dem_search.json").read_text("utf-8"))
    server.add(
        "GET",
        "/stac/collections/cop-dem-glo-30",
        body=(stac / "cop_dem_collection.json").read_bytes(),
    )
    earth = live_source("earth-search", api_url=base)
    sources = Sources(SourceRegistry(MemoryStore(), seed=[earth]), policy=fast(), live=True)
    shortlist = {"shortlist": [{"id": "earth-search/cop-dem-glo-30", "why": "surface heights"}]}
    ctx = discovery_ctx(make_ctx, server, Script(shortlists=[shortlist]), sources=sources)

    found = await call(
        ctx,
        "find_sources",
        {"query": "digital elevation model", "country": "FIN", "search_catalogues": True},
    )

    (candidate,) = found.model["catalogues"]["candidates"]
    assert (
        candidate["id"] == "earth-search/cop-dem-glo-30" and candidate["why"] == "surface heights"
    )
    assert candidate["fetch"] == {
        "source_id": "earth-search",
        "filters": {"collection": "cop-dem-glo-30", "list": "yes"},
    }
    arguments = candidate["fetch"]
    arguments["filters"]["bbox"] = "24.90,60.15,24.97,60.19"
    listed = await call(ctx, "fetch", arguments)
    assert [d["dataset"] for d in listed.model["datasets"]][:1] == [
        "Copernicus_DSM_COG_10_N60_00_E024_00_DEM"
    ]
    # A STAC listing says how to read an item with its own filters, not CKAN's.
    assert "'item': <a dataset>" in listed.model["next"]
