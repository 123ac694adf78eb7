"""present_figure and record_observation: figures come from the ledger, never from the model."""

from __future__ import annotations

from typing import Any

import pytest

from geomint.errors import ModelFacingError
from geomint.state import FigurePresented, ObservationRecorded
from geomint.tools import ToolContext, ToolResult
from geomint.ui import FigurePart, ObservationPart

from .conftest import UiLog
from .helpers import CITY, OSM, cafes, call, parks, seed

pytestmark = pytest.mark.anyio


async def _minted(ctx: ToolContext) -> None:
    """v1 = 100 places (OSM), v2 = 80 places (city), v3 = 2.5 km² (city)."""
    await seed(ctx, "places", cafes(), sources=(OSM,))
    await seed(ctx, "geometries", parks(), sources=(CITY,))
    for ids, code in [
        ({"places_entry_ids": ["places-1"]}, "mint.value(100, 'places (OSM)', unit='places')"),
        (
            {"geometries_entry_ids": ["geometries-1"]},
            "mint.value(80, 'places (city)', unit='places')",
        ),
        ({"geometries_entry_ids": ["geometries-1"]}, "mint.value(2.5, 'park area', unit='km²')"),
    ]:
        result = await call(ctx, "analyse_data", {**ids, "name": "m", "code": code + "\nreturn 0"})
        assert not result.failed


def _last_body(ctx: ToolContext) -> Any:
    return list(ctx.chats.store.read("c1"))[-1].body


async def test_present_figure_shows_minted_values_with_their_sources(
    ctx: ToolContext, ui: UiLog
) -> None:
    await _minted(ctx)
    result = await call(ctx, "present_figure", {"value_ids": ["v1", "v3"], "title": "Counts"})

    assert isinstance(result, ToolResult)
    assert result.model == {
        "presented": ["v1", "v3"],
        "figures": [
            {"id": "v1", "label": "places (OSM)", "value": 100, "unit": "places",
             "licences": ["ODbL-1.0"]},
            {"id": "v3", "label": "park area", "value": 2.5, "unit": "km²",
             "licences": ["CC-BY-4.0"]},
        ],
    }  # fmt: skip
    body = _last_body(ctx)
    assert isinstance(body, FigurePresented)
    assert body.value_ids == ("v1", "v3")
    assert body.title == "Counts"
    assert ctx.refresh().presented == (body,)
    shown = ui[-1]
    assert isinstance(shown, FigurePart)
    assert shown.title == "Counts"
    assert [(c.id, c.value, c.unit) for c in shown.figures] == [
        ("v1", 100, "places"),
        ("v3", 2.5, "km²"),
    ]
    assert shown.figures[0].licences == ("ODbL-1.0",)
    cards = shown.figures
    assert cards[0].sources[0].publisher == "OpenStreetMap contributors"
    assert cards[1].sources[0].url == "https://example.org/boundaries"
    assert [i.model_dump() for i in cards[0].inputs] == [{"entry_id": "places-1", "version": 1}]


async def test_a_repeated_id_is_presented_once(ctx: ToolContext) -> None:
    await _minted(ctx)
    result = await call(ctx, "present_figure", {"value_ids": ["v2", "v2"]})
    assert result.model["presented"] == ["v2"]


@pytest.mark.parametrize("typed", [42, "42 stops", {"value": 3}, 3.5, "12,400 people"])
async def test_a_typed_number_is_refused_with_the_way_to_mint_it(
    ctx: ToolContext, typed: Any
) -> None:
    await _minted(ctx)
    before = ctx.refresh().last_seq
    with pytest.raises(ModelFacingError) as caught:
        await call(ctx, "present_figure", {"value_ids": [typed]})
    error = caught.value.as_result()["error"]  # what the model reads
    assert "is a number typed by hand" in error
    assert "mint.value(x, label, unit=...)" in error
    assert ctx.refresh().last_seq == before


async def test_an_unknown_id_is_refused_listing_the_known_ids(ctx: ToolContext) -> None:
    await _minted(ctx)
    with pytest.raises(ModelFacingError) as caught:
        await call(ctx, "present_figure", {"value_ids": ["v1", "v9"]})
    error = caught.value.as_result()["error"]  # what the model reads
    assert "v9 was never minted in this chat" in error
    assert "the values minted so far are v1" in error
    assert "v3" in error
    assert ctx.refresh().presented == ()


async def test_an_entry_id_is_refused(ctx: ToolContext) -> None:
    await _minted(ctx)
    with pytest.raises(ModelFacingError) as caught:
        await call(ctx, "present_figure", {"value_ids": ["places-1"]})
    error = caught.value.as_result()["error"]  # what the model reads
    assert "places-1 is an entry id, not a value id" in error
    assert "mint.value" in error


async def test_nothing_minted_yet_says_how_to_mint(ctx: ToolContext) -> None:
    with pytest.raises(ModelFacingError) as caught:
        await call(ctx, "present_figure", {"value_ids": ["v1"]})
    error = caught.value.as_result()["error"]  # what the model reads
    assert "no values have been minted in this chat yet" in error


# -- record_observation ---------------------------------------------------------------


async def test_an_observation_is_computed_from_the_ledger(ctx: ToolContext, ui: UiLog) -> None:
    await _minted(ctx)
    out = await call(
        ctx,
        "record_observation",
        {"value_ids": ["v1", "v2"], "why": "OSM counts kiosks the city register leaves out"},
    )

    # Conflict.ratio is a / b: 100 / 80.
    assert out == {
        "kind": "conflict",
        "a": "v1",
        "b": "v2",
        "ratio": 1.25,
        "difference": 20,
        "notes": [],
    }
    body = _last_body(ctx)
    assert isinstance(body, ObservationRecorded)
    (conflict,) = ctx.refresh().observations
    assert conflict.a.value == 100
    assert conflict.b.value == 80
    assert conflict.reason == "OSM counts kiosks the city register leaves out"
    shown = ui[-1]
    assert isinstance(shown, ObservationPart)
    assert shown.conflict.ratio == 1.25


async def test_an_observation_across_units_has_no_ratio(ctx: ToolContext) -> None:
    await _minted(ctx)
    out = await call(ctx, "record_observation", {"value_ids": ["v3", "v1"], "why": "apples"})
    assert out["ratio"] is None
    assert out["difference"] is None
    assert "no ratio or difference is computed across units" in out["notes"][0]


@pytest.mark.parametrize(
    ("value_ids", "message"),
    [
        (["v1", "v1"], "a conflict names two different values; got v1 twice"),
        (["v1", "v7"], "v7 was never minted in this chat"),
        (["v1", 80], "80 is a number typed by hand"),
    ],
)
async def test_an_observation_is_refused(
    ctx: ToolContext, value_ids: list[Any], message: str
) -> None:
    await _minted(ctx)
    before = ctx.refresh().last_seq
    with pytest.raises(ModelFacingError) as caught:
        await call(ctx, "record_observation", {"value_ids": value_ids, "why": "they differ"})
    error = caught.value.as_result()["error"]  # what the model reads
    assert message in error
    assert ctx.refresh().observations == ()
    assert ctx.workspace.last_seq == before
