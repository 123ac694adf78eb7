"""find_sources, resolve_place and fetch as the model calls them: what each returns, what
the chat records, and that a figure carries its source, licence and period."""

from __future__ import annotations

import pytest
from tests.sources.test_reads import ROWS, FixedConnector
from tests.sources.test_registry import make_source

from geomint.sources import SourceRegistry, Sources
from geomint.sources.model import Coverage, FilterKey
from geomint.state import FetchMade, FetchMissed, ValueMinted
from geomint.store import MemoryStore
from geomint.tools import ToolContext, ToolError
from geomint.ui import FigurePart

from .conftest import MakeCtx, UiLog
from .helpers import call

pytestmark = pytest.mark.anyio

POPULATION = make_source(
    "testland-population",
    connector="fixed",
    title="Population of the world by country and year",
    coverage=Coverage(world=True, levels=("country",), start=2019, end=2021),
    filters=(
        FilterKey(key="unit", takes="spine ids such as country:FIN"),
        FilterKey(key="period", takes="a year, a range 2000/2010, or latest"),
        FilterKey(key="sex", takes="T, M or F", options=("T", "M", "F")),
    ),
)
RAIL = make_source(
    "rail-lines",
    connector="fixed",
    title="Railway lines of Finland",
    concepts=("railway",),
    description="Railway lines as vectors.",
    modality="vector",
    coverage=Coverage(countries=("FIN",)),
)
LIVE = make_source(
    "live-gdp",
    connector="worldbank",
    title="GDP per capita by country",
    concepts=("gdp_per_capita",),
    description="GDP per capita, current US dollars.",
)


@pytest.fixture
def ctx(make_ctx: MakeCtx) -> ToolContext:
    registry = SourceRegistry(MemoryStore(), seed=[POPULATION, RAIL, LIVE])
    sources = Sources(registry, connectors={"fixed": FixedConnector(ROWS)}, live=False)
    return make_ctx(sources=sources)


async def test_find_sources_returns_what_the_first_fetch_needs(ctx: ToolContext) -> None:
    result = await call(ctx, "find_sources", {"query": "population by country", "country": "FIN"})
    hits = result.model["hits"]
    assert [h["source_id"] for h in hits] == ["testland-population"]
    hit = hits[0]
    assert hit["licence"] == "CC-BY-4.0"
    assert hit["coverage"] == {"countries": "world", "levels": ["country"], "areas": [],
                               "period": "2019/2021"}  # fmt: skip
    assert {f["key"] for f in hit["filters"]} == {"unit", "period", "sex"}
    assert hit["profile"]["shape"] == "one row per country and year"
    assert hit["ranked_by"] == {"bm25": 1}
    assert result.model["searched"] == "3 of 3 sources pass the filters (country=FIN)"
    assert any("BM25 alone" in n for n in result.model["notes"])


async def test_a_source_needing_the_network_is_named_not_offered(ctx: ToolContext) -> None:
    result = await call(ctx, "find_sources", {"query": "GDP per capita"})
    assert result.model["hits"] == []
    assert [s["source_id"] for s in result.model["need_network"]] == ["live-gdp"]
    assert "no source here answers 'GDP per capita'" in result.model["miss"]


async def test_filters_cut_before_ranking(ctx: ToolContext) -> None:
    result = await call(ctx, "find_sources", {"query": "railway lines", "country": "SWE"})
    assert result.model["hits"] == []
    assert result.model["searched"].startswith("2 of 3 sources")


async def test_resolve_place_gives_ids_and_units_one_level_down(ctx: ToolContext) -> None:
    result = await call(ctx, "resolve_place", {"name": "Helsingfors"})
    match = result.model["matches"][0]
    assert (match["id"], match["level"], match["parent"]["id"]) == (
        "city:658225",
        "city",
        "admin1:FI-18",
    )
    assert "population" not in str(result.model).lower()
    inside = result.model["units_inside"]
    assert inside["of"] == "city:658225" and inside["count"] >= 1
    missed = await call(ctx, "resolve_place", {"name": "Helsimki"})
    assert "helsinki" in missed.model["near"]


async def test_a_cell_is_minted_with_its_source_licence_and_period(
    ctx: ToolContext, ui: UiLog
) -> None:
    result = await call(
        ctx,
        "fetch",
        {
            "source_id": "testland-population",
            "filters": {"unit": "country:FIN", "period": 2020},
            "cell": True,
        },
    )
    figure = result.model["figures"][0]
    assert (figure["id"], figure["value"], figure["period"]) == ("v1", 5_529_614, "2020")
    assert figure["label"] == "population of Finland"
    value = ctx.refresh().ledger.value("v1")
    assert value.period == "2020"
    (source,) = value.sources
    assert (source.source_id, source.licence, source.period) == (
        "testland-population",
        "CC-BY-4.0",
        "2020",
    )
    bodies = [e.body for e in ctx.chats.store.read("c1")]
    assert any(isinstance(b, FetchMade) for b in bodies)
    assert any(isinstance(b, ValueMinted) for b in bodies)
    shown = await call(ctx, "present_figure", {"value_ids": ["v1"]})
    assert not shown.failed
    cards = [c for p in ui if isinstance(p, FigurePart) for c in p.figures]
    assert cards[-1].period == "2020"


async def test_a_narrowing_to_two_rows_is_a_miss_recorded_as_one(ctx: ToolContext) -> None:
    result = await call(
        ctx,
        "fetch",
        {
            "source_id": "testland-population",
            "filters": {"unit": "country:FIN", "period": "2019/2020"},
            "cell": True,
        },
    )
    assert result.model["code"] == "several_rows"
    assert "reaches 2 rows" in result.model["miss"]
    assert not result.failed  # a miss is a result, not a failure
    assert ctx.refresh().ledger.values == ()
    assert isinstance(list(ctx.chats.store.read("c1"))[-1].body, FetchMissed)


async def test_a_unit_of_another_level_is_a_miss_before_any_request(ctx: ToolContext) -> None:
    result = await call(
        ctx,
        "fetch",
        {"source_id": "testland-population", "filters": {"unit": "city:658225"}, "cell": True},
    )
    assert result.model["code"] == "not_covered"
    assert "has figures for countries only" in result.model["miss"]


async def test_a_refused_option_is_learned_for_the_next_hit(ctx: ToolContext) -> None:
    result = await call(
        ctx,
        "fetch",
        {"source_id": "testland-population", "filters": {"unit": "country:FIN", "sex": "X"}},
    )
    assert result.model["code"] == "refused_filter"
    assert result.model["options"] == ["T", "M", "F"]


async def test_a_name_where_a_unit_id_belongs_points_to_resolve_place(ctx: ToolContext) -> None:
    with pytest.raises(ToolError, match=r"resolve_place gives country:FIN \(Finland\)"):
        await call(
            ctx,
            "fetch",
            {"source_id": "testland-population", "filters": {"unit": "Finland"}, "cell": True},
        )
    assert ctx.refresh().ledger.values == ()


async def test_a_table_lands_as_an_entry_joined_to_the_spine(ctx: ToolContext) -> None:
    result = await call(
        ctx,
        "fetch",
        {"source_id": "testland-population", "filters": {"period": 2020}},
    )
    assert result.model["entry_id"] == "tables-1"
    assert result.model["rows"] == 3 and result.model["units"] == 2
    entry = ctx.refresh().entries["tables-1"]
    assert entry.kind == "tables"
    (source,) = entry.latest.sources
    assert source.period == "2020"
    analysed = await call(
        ctx,
        "analyse_data",
        {
            "tables_entry_ids": ["tables-1"],
            "name": "t",
            "code": (
                "row = next(f['properties'] for f in tables['features'] "
                "if f['properties']['unit_id'] == 'country:SWE')\n"
                "mint.value(row['value'], 'population of Sweden', unit='people', "
                "period=row['period'])\nreturn row['unit_name']"
            ),
        },
    )
    assert not analysed.failed, analysed.model
    value = ctx.refresh().ledger.value("v1")
    assert (value.value, value.period) == (10_353_691, "2020")
    assert value.sources[0].source_id == "testland-population"


async def test_an_unknown_source_names_the_near_ids(ctx: ToolContext) -> None:
    result = await call(ctx, "fetch", {"source_id": "testland-populaton", "cell": True})
    assert result.model["code"] == "not_found"
    assert "did you mean testland-population" in result.model["miss"]


async def test_a_period_code_mints_must_be_short_text(ctx: ToolContext) -> None:
    await call(ctx, "fetch", {"source_id": "testland-population", "filters": {"period": 2020}})
    result = await call(
        ctx,
        "analyse_data",
        {
            "tables_entry_ids": ["tables-1"],
            "name": "bad-period",
            "code": "mint.value(1, 'one', period=['2020'])\nreturn 1",
        },
    )
    assert result.failed
    assert "period must be a short text" in str(result.model)
    assert ctx.refresh().ledger.values == ()


async def test_a_period_outside_what_the_sources_state_is_not_minted(ctx: ToolContext) -> None:
    await call(ctx, "fetch", {"source_id": "testland-population", "filters": {"period": 2020}})
    result = await call(
        ctx,
        "analyse_data",
        {
            "tables_entry_ids": ["tables-1"],
            "name": "forged-period",
            "code": "mint.value(1, 'population of Finland', period='2024')\nreturn 1",
        },
    )
    assert "outside what its sources state (2020)" in str(result.model)
    assert ctx.refresh().ledger.values == ()


async def test_a_cells_label_is_written_by_code_not_by_the_model(ctx: ToolContext) -> None:
    result = await call(
        ctx,
        "fetch",
        {
            "source_id": "testland-population",
            "filters": {"unit": "country:FIN", "period": 2020},
            "cell": True,
            "label": "population of Sweden (was 10,500,000 last year)",
        },
    )
    assert result.model["figures"][0]["label"] == "population of Finland"
