"""Rasters through the tools: the bundled demo grid lands as a rasters entry with its
recipe, and code over it mints labelled figures that rest on the grid's provenance."""

from __future__ import annotations

from typing import get_args

import pytest

from geomint.geo.raster import RESAMPLING, STATS
from geomint.sources import SourceRegistry, Sources
from geomint.sources.connectors.bundled import BundledConnector
from geomint.sources.registry import bundled_sources
from geomint.state import LayerMinted, ValueMinted
from geomint.store import MemoryStore
from geomint.tools import ToolContext, ToolError
from geomint.tools.rasters import Method, Stat

from .conftest import MakeCtx
from .helpers import call

pytestmark = pytest.mark.anyio

GRID = "geomint-helsinki-poi-density"


@pytest.fixture
def ctx(make_ctx: MakeCtx) -> ToolContext:
    registry = SourceRegistry(MemoryStore(), seed=bundled_sources())
    sources = Sources(registry, connectors={"bundled": BundledConnector()}, live=False)
    return make_ctx(sources=sources)


async def test_the_demo_grid_lands_as_a_raster_with_its_recipe(ctx: ToolContext) -> None:
    result = await call(ctx, "fetch", {"source_id": GRID, "filters": {}})
    model = result.model
    assert model["entry_id"] == "rasters-1"
    described = model["raster"]
    assert described["crs"] == "EPSG:3067"
    assert described["res"] == [100.0, 100.0]
    # Every bundled point lies inside the extract's bbox, so the cells count them all.
    assert described["sum"] == 1346
    assert "Derived by geomint" in model["recipe"]
    assert model["evidence"] == "derived"
    written = ctx.workspace.entries["rasters-1"].latest
    assert written.blob.media_type == "application/vnd.geomint.raster+arrow"
    (provenance,) = written.sources
    assert provenance.recipe is not None and "1,346" in provenance.recipe
    assert provenance.licence == "ODbL-1.0"
    raster = ctx.entry_raster("rasters-1")
    assert int(raster.array.sum()) == 1346


async def test_a_cell_size_outside_the_options_is_refused_with_them(ctx: ToolContext) -> None:
    result = await call(ctx, "fetch", {"source_id": GRID, "filters": {"cell_m": "30"}})
    assert result.model["code"] == "refused_filter"


async def test_zonal_stats_in_code_mints_figures_resting_on_the_grid(ctx: ToolContext) -> None:
    await call(ctx, "fetch", {"source_id": GRID, "filters": {"cell_m": "50"}})
    zones = {"type": "FeatureCollection", "features": [
        {"type": "Feature", "properties": {"name": "Everything"}, "geometry": {
            "type": "Polygon", "coordinates": [[[24.93, 60.16], [24.96, 60.16], [24.96, 60.18],
                                                [24.93, 60.18], [24.93, 60.16]]]}}]}  # fmt: skip
    await ctx.write_entry(kind="geometries", data=zones, label="the demo area")
    result = await call(
        ctx,
        "analyse_data",
        {
            "name": "poi-in-area",
            "rasters_entry_ids": ["rasters-1"],
            "geometries_entry_ids": ["geometries-1"],
            "code": "rows = zonal_stats(rasters, geometries, ['sum'], unit='points')\n"
            "coarse = load('rasters-1', like=Raster(np.zeros((4, 4)), (500, 0, "
            "rasters.bounds[0], 0, -500, rasters.bounds[3]), rasters.crs), method='sum')\n"
            "mint.layer(coarse, 'points per 500 m cell')\n"
            "return {'sum': rows[0]['sum'], 'coarse': float(np.nansum(coarse.array))}",
        },
    )
    model = result.model
    assert model["ok"], model
    (figure,) = model["figures"]
    assert figure["label"] == "sum of points of interest per cell in Everything"
    assert figure["value"] == pytest.approx(1346)
    minted = [e.body for e in ctx.chats.store.read(ctx.chat_id) if isinstance(e.body, ValueMinted)]
    assert [s.source_id for s in minted[-1].value.sources] == [GRID]
    layers = [e.body for e in ctx.chats.store.read(ctx.chat_id) if isinstance(e.body, LayerMinted)]
    assert layers and layers[-1].layer.entry.entry_id == "rasters-2"
    coarse = ctx.entry_raster("rasters-2")
    assert coarse.shape == (4, 4) and coarse.res == (500.0, 500.0)
    # What the coarse grid reaches of the area keeps its points (no nodata was averaged in).
    assert model["result"]["coarse"] <= 1346
    derived = {v.entry_id for v in ctx.workspace.entries["rasters-2"].latest.derived_from}
    assert derived == {"rasters-1", "geometries-1"}


async def test_the_zonal_stats_tool_mints_per_zone_and_shows_its_code(ctx: ToolContext) -> None:
    await call(ctx, "fetch", {"source_id": GRID, "filters": {}})
    halves = {"type": "FeatureCollection", "features": [
        {"type": "Feature", "properties": {"name": "West"}, "geometry": {"type": "Polygon",
         "coordinates": [[[24.93, 60.16], [24.944, 60.16], [24.944, 60.18], [24.93, 60.18],
                          [24.93, 60.16]]]}},
        {"type": "Feature", "properties": {"name": "East"}, "geometry": {"type": "Polygon",
         "coordinates": [[[24.944, 60.16], [24.96, 60.16], [24.96, 60.18], [24.944, 60.18],
                          [24.944, 60.16]]]}}]}  # fmt: skip
    await ctx.write_entry(kind="geometries", data=halves, label="two halves")
    result = await call(
        ctx,
        "zonal_stats",
        {
            "raster_entry_id": "rasters-1",
            "zones_entry_id": "geometries-1",
            "stats": ["sum"],
            "label": "points of interest",
        },
    )
    model = result.model
    assert model["ok"], model
    labels = [f["label"] for f in model["figures"]]
    assert labels == ["sum of points of interest in West", "sum of points of interest in East"]
    # The halves split the grid's cells by coverage, so together they hold every point.
    assert sum(f["value"] for f in model["figures"]) == pytest.approx(1346)
    assert "zonal_stats('rasters-1', geometries_by_entry['geometries-1']" in model["code"]


async def test_zones_that_are_a_raster_are_refused(ctx: ToolContext) -> None:
    await call(ctx, "fetch", {"source_id": GRID, "filters": {}})
    with pytest.raises(ToolError, match="polygons, not a raster"):
        await call(ctx, "zonal_stats", {"raster_entry_id": "rasters-1",
                                        "zones_entry_id": "rasters-1"})  # fmt: skip


def test_the_tool_offers_every_statistic_the_operation_computes() -> None:
    assert set(get_args(Stat)) == set(STATS)
    assert set(get_args(Method)) == set(RESAMPLING)


async def test_resample_raster_adds_the_grid_and_mints_both_totals(ctx: ToolContext) -> None:
    await call(ctx, "fetch", {"source_id": GRID, "filters": {"cell_m": "50"}})
    await call(ctx, "fetch", {"source_id": GRID, "filters": {"cell_m": "250"}})
    result = await call(
        ctx,
        "resample_raster",
        {
            "raster_entry_id": "rasters-1",
            "like_entry_id": "rasters-2",
            "method": "sum",
            "label": "points per 250 m cell, from 50 m",
            "unit": "points",
        },
    )
    model = result.model
    assert model["ok"], model
    before, after = (f["value"] for f in model["figures"])
    assert before == pytest.approx(1346) and after == pytest.approx(1346)  # 50 m nests in 250 m
    assert model["figures"][1]["label"].endswith("on the grid of rasters-2")
    moved = ctx.entry_raster("rasters-3")
    assert moved.res == (250.0, 250.0) and moved.shape == ctx.entry_raster("rasters-2").shape
    assert "load('rasters-1', like='rasters-2', method='sum')" in model["code"]
    minted = [e.body for e in ctx.chats.store.read(ctx.chat_id) if isinstance(e.body, ValueMinted)]
    # a figure rests on every raster the body loaded: the 50 m grid and the target grid
    assert {v.entry_id for v in minted[-1].value.inputs} == {"rasters-1", "rasters-2"}


async def test_resample_raster_other_than_sum_mints_nothing(ctx: ToolContext) -> None:
    await call(ctx, "fetch", {"source_id": GRID, "filters": {"cell_m": "100"}})
    await call(ctx, "fetch", {"source_id": GRID, "filters": {"cell_m": "250"}})
    result = await call(ctx, "resample_raster", {"raster_entry_id": "rasters-1",
                                                 "like_entry_id": "rasters-2",
                                                 "method": "average"})  # fmt: skip
    assert result.model["ok"] and result.model.get("figures", []) == []
    assert "rasters-3" in ctx.workspace.entries


async def test_raster_area_mints_the_ground_area_of_the_cells_asked(ctx: ToolContext) -> None:
    await call(ctx, "fetch", {"source_id": GRID, "filters": {"cell_m": "100"}})
    grid = ctx.entry_raster("rasters-1")
    values = grid.values()
    every = await call(ctx, "raster_area", {"raster_entry_id": "rasters-1"})
    busy = await call(ctx, "raster_area", {"raster_entry_id": "rasters-1", "at_least": 5})
    (whole,) = every.model["figures"]
    (some,) = busy.model["figures"]
    # 100 m cells of TM35FIN near 25°E: about 0.01 km² of ground each (scale ~0.9996)
    assert whole["value"] == pytest.approx(values.size * 0.01, rel=2e-3)
    assert some["value"] == pytest.approx(int((values >= 5).sum()) * 0.01, rel=2e-3)
    assert some["label"].endswith("at least 5") and whole["unit"] == "km²"
    assert busy.model["result"]["cells"] == int((values >= 5).sum()) > 0
