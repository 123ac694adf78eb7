"""Recall tools read the chat's state back; they never write."""

from __future__ import annotations

import pytest

from geomint.tools import ToolContext, ToolError, ToolResult

from .helpers import CITY, OSM, cafes, call, parks, seed

pytestmark = pytest.mark.anyio


async def _gathered(ctx: ToolContext) -> None:
    await seed(ctx, "places", cafes(), sources=(OSM,), label="Cafés")
    await seed(ctx, "places", cafes(), entry_id="places-1", label="Cafés, again")
    await seed(ctx, "geometries", parks(), sources=(CITY,), label="Parks")
    await call(
        ctx,
        "analyse_data",
        {
            "places_entry_ids": ["places-1"],
            "name": "count",
            "code": "return mint.value(len(places['features']), 'cafés', unit='places')",
            "monitor": True,
        },
    )
    await call(ctx, "fly_to", {"center": [24.94, 60.17], "zoom": 14})


async def test_recall_lists_the_entries_of_its_kind(ctx: ToolContext) -> None:
    await _gathered(ctx)
    before = ctx.refresh().last_seq
    result = await call(ctx, "recall_places", {})

    assert isinstance(result, ToolResult)
    assert result.model == {
        "kind": "places",
        "entries": [
            {
                "entry_id": "places-1",
                "label": "Cafés, again",
                "version": 2,
                "feature_count": 3,
                "bbox": [24.941, 60.168, 24.95, 60.171],
                "visible": True,
                "removed": False,
            }
        ],
    }
    assert ctx.refresh().last_seq == before


async def test_recall_one_entry_in_detail(ctx: ToolContext) -> None:
    await _gathered(ctx)
    before = ctx.refresh().last_seq
    result = await call(ctx, "recall_geometries", {"id": "geometries-1"})

    assert isinstance(result, ToolResult)
    assert result.model["entry_id"] == "geometries-1"
    assert result.model["digest"]["feature_count"] == 2
    assert result.model["sources"] == [
        {"title": "City boundaries", "publisher": "The city", "licence": "CC-BY-4.0"}
    ]
    assert result.model["derived_from"] == []
    assert result.model["analyses"] == []
    assert "geojson" not in result.model  # the bytes never reach the model
    assert ctx.refresh().last_seq == before


async def test_an_analysis_is_recorded_against_every_entry_it_read(ctx: ToolContext) -> None:
    await _gathered(ctx)
    code = "return len(places['features']) + len(geometries['features'])"
    await call(
        ctx,
        "analyse_data",
        {
            "places_entry_ids": ["places-1"],
            "geometries_entry_ids": ["geometries-1"],
            "name": "both",
            "code": code,
        },
    )
    both = {"analysis_id": "a2", "name": "both", "tool": "analyse_data", "ok": True}
    places = (await call(ctx, "recall_places", {"id": "places-1"})).model
    assert [a["name"] for a in places["analyses"]] == ["count", "both"]
    assert places["analyses"][1] == both
    geometries = (await call(ctx, "recall_geometries", {"id": "geometries-1"})).model
    assert geometries["analyses"] == [both]


@pytest.mark.parametrize(
    ("tool", "entry_id", "hint"),
    [
        ("recall_places", "places-3", "the places entries are places-1"),
        ("recall_places", "geometries-1", "the places entries are places-1"),
        ("recall_byod", "byod-1", "the byod entries are none"),
    ],
)
async def test_recall_refuses_an_id_it_does_not_hold(
    ctx: ToolContext, tool: str, entry_id: str, hint: str
) -> None:
    await _gathered(ctx)
    with pytest.raises(ToolError) as caught:
        await call(ctx, tool, {"id": entry_id})
    assert caught.value.message.endswith(f"entry {entry_id!r}")
    assert caught.value.hint == hint


async def test_recall_state_summarises_the_chat(ctx: ToolContext) -> None:
    await _gathered(ctx)
    before = ctx.refresh().last_seq
    result = await call(ctx, "recall_state", {})

    assert isinstance(result, ToolResult)
    summary = result.model
    assert [(e["entry_id"], e["kind"], e["version"]) for e in summary["entries"]] == [
        ("places-1", "places", 2),
        ("geometries-1", "geometries", 1),
    ]
    assert summary["analyses"] == [
        {
            "name": "count",
            "analysis_id": "a1",
            "tool": "analyse_data",
            "ok": True,
            "monitoring": True,
            "tracker": False,
        }
    ]
    assert summary["values"] == [{"id": "v1", "label": "cafés", "value": 3, "unit": "places"}]
    assert tuple(summary["view"]["center"]) == (24.94, 60.17)
    assert summary["view"]["zoom"] == 14
    assert summary["misses"] == []
    assert ctx.refresh().last_seq == before


async def test_recall_state_shows_a_switched_off_monitor(ctx: ToolContext) -> None:
    await _gathered(ctx)
    await call(ctx, "monitor_analysis", {"name": "count", "on": False})
    result = await call(ctx, "recall_state", {})
    assert result.model["analyses"][0]["monitoring"] is False


async def test_recall_state_of_an_empty_chat(ctx: ToolContext) -> None:
    result = await call(ctx, "recall_state", {})
    assert result.model == {
        "entries": [],
        "analyses": [],
        "values": [],
        "view": None,
        "misses": [],
        "map_changes": [],
    }
