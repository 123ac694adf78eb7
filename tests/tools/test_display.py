"""Display tools: what the map shows and where it looks."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import ValidationError

from geomint.tools import ToolContext, ToolError
from geomint.tools.display import DisplayInput, FitBoundsInput
from geomint.ui import DisplayPart

from .conftest import UiLog
from .helpers import cafes, call, collection, parks, point, seed

pytestmark = pytest.mark.anyio


async def test_hide_then_show_with_a_style(ctx: ToolContext) -> None:
    await seed(ctx, "places", cafes())
    await seed(ctx, "places", cafes())

    hidden = await call(ctx, "update_places_display", {"entry_ids": ["places-2"], "action": "hide"})
    assert hidden == {"changed": ["places-2"], "visible": False}
    workspace = ctx.refresh()
    assert [e.visible for e in workspace.places] == [True, False]

    style = {"color": "#d33", "opacity": 0.6}
    shown = await call(ctx, "update_places_display", {"entry_ids": ["places-2"], "style": style})
    assert shown == {"changed": ["places-2"], "visible": True}
    entry = ctx.refresh().entries["places-2"]
    assert entry.visible
    assert entry.style == style


async def test_an_unknown_or_foreign_id_is_refused(ctx: ToolContext) -> None:
    await seed(ctx, "places", cafes())
    await seed(ctx, "geometries", parks())
    before = ctx.refresh().last_seq

    with pytest.raises(ToolError) as caught:
        await call(
            ctx, "update_places_display", {"entry_ids": ["places-1", "geometries-1", "places-5"]}
        )
    assert caught.value.message == "no places entries geometries-1, places-5"
    assert caught.value.hint == "the places entries are places-1"
    assert ctx.refresh().last_seq == before  # nothing changed, not even places-1


async def test_an_unknown_style_key_is_refused(ctx: ToolContext) -> None:
    await seed(ctx, "geometries", parks())
    with pytest.raises(ToolError) as caught:
        await call(
            ctx,
            "update_geometries_display",
            {"entry_ids": ["geometries-1"], "style": {"colour": "red", "color": "red"}},
        )
    assert caught.value.message == "the style cannot be drawn: 'colour' is not drawn"
    assert caught.value.hint == (
        "the map draws color (a CSS colour: '#d33', '#dd3333' or a name such as 'teal'), "
        "opacity (0 to 1), width (lines, 0.5 to 20 px) and radius (points, 1 to 30 px), one "
        "value for the whole entry; per-feature colours, fills and labels are not drawn"
    )
    assert ctx.refresh().entries["geometries-1"].style is None


@pytest.mark.parametrize(
    ("style", "problem"),
    [
        ({"fill": "#0a0"}, "'fill' is not drawn"),
        ({"label": "name"}, "'label' is not drawn"),
        ({"color": "category"}, "color 'category' is not a CSS colour"),
        ({"color": {"by": "category"}}, "color {'by': 'category'} is not a CSS colour"),
        ({"opacity": 3}, "opacity 3 is not a number from 0 to 1"),
        ({"width": "thick"}, "width 'thick' is not a number from 0.5 to 20"),
    ],
)
async def test_a_style_the_map_cannot_draw_is_refused_not_reported_changed(
    ctx: ToolContext, style: dict[str, Any], problem: str
) -> None:
    # Such styles were reported as "changed" and drew nothing; the model then described
    # colours nobody saw.
    await seed(ctx, "geometries", parks())
    with pytest.raises(ToolError) as caught:
        await call(
            ctx, "update_geometries_display", {"entry_ids": ["geometries-1"], "style": style}
        )
    assert caught.value.message == f"the style cannot be drawn: {problem}"
    assert ctx.refresh().entries["geometries-1"].style is None


async def test_a_style_the_map_draws_is_applied(ctx: ToolContext) -> None:
    await seed(ctx, "geometries", parks())
    style = {"color": "Teal", "opacity": 0.4, "width": 2}
    out = await call(
        ctx, "update_geometries_display", {"entry_ids": ["geometries-1"], "style": style}
    )
    assert out == {"changed": ["geometries-1"], "visible": True}
    assert ctx.refresh().entries["geometries-1"].style == style


def test_a_display_change_needs_a_target() -> None:
    with pytest.raises(ValidationError, match="pass entry_ids, or clear_all=true"):
        DisplayInput.model_validate({"action": "hide"})


async def test_fly_to_moves_the_camera(ctx: ToolContext) -> None:
    out = await call(ctx, "fly_to", {"center": [24.94, 60.17], "zoom": 15})
    assert out == {"center": [24.94, 60.17], "zoom": 15}
    view = ctx.refresh().view
    assert view is not None
    assert view.center == (24.94, 60.17)
    assert view.zoom == 15


async def test_fly_to_refuses_latitude_first_with_a_hint(ctx: ToolContext) -> None:
    with pytest.raises(ToolError) as caught:
        await call(ctx, "fly_to", {"center": [-33.87, 151.21]})  # Sydney, [lat, lon]
    assert caught.value.message == "center [-33.87, 151.21] is not [longitude, latitude]"
    assert caught.value.hint == "the order is [longitude, latitude]"
    assert ctx.refresh().view is None


async def test_fly_to_out_of_range_has_no_order_hint(ctx: ToolContext) -> None:
    with pytest.raises(ToolError) as caught:
        await call(ctx, "fly_to", {"center": [200, 10]})
    assert caught.value.hint is None


async def test_fit_bounds_to_a_box(ctx: ToolContext) -> None:
    out = await call(ctx, "fit_bounds", {"bbox": [24.9, 60.1, 25.0, 60.2]})
    assert out == {"bbox": [24.9, 60.1, 25.0, 60.2]}
    view = ctx.refresh().view
    assert view is not None
    assert view.bbox == (24.9, 60.1, 25.0, 60.2)
    assert view.center is None


async def test_fit_bounds_to_entries_covers_them_all(ctx: ToolContext) -> None:
    await seed(ctx, "places", cafes())
    await seed(ctx, "geometries", parks())
    out = await call(ctx, "fit_bounds", {"entry_ids": ["places-1", "geometries-1"]})
    assert out["bbox"] == pytest.approx([24.93, 60.16, 24.964, 60.179])
    view = ctx.refresh().view
    assert view is not None
    assert view.bbox == pytest.approx((24.93, 60.16, 24.964, 60.179))


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        ({"entry_ids": ["places-4"]}, "no entry 'places-4'"),
        ({"bbox": [24.9, 60.2, 25.0, 60.1]}, "bbox [24.9, 60.2, 25.0, 60.1] is not [west, south"),
    ],
)
async def test_fit_bounds_refuses(
    ctx: ToolContext, arguments: dict[str, Any], message: str
) -> None:
    await seed(ctx, "places", cafes())
    with pytest.raises(ToolError) as caught:
        await call(ctx, "fit_bounds", arguments)
    assert caught.value.message.startswith(message)
    assert ctx.refresh().view is None


async def test_fit_bounds_to_an_entry_without_geometry_is_refused(ctx: ToolContext) -> None:
    empty = collection({"type": "Feature", "geometry": None, "properties": {"n": 1}})
    await seed(ctx, "byod", empty)
    with pytest.raises(ToolError, match="no geometry to fit"):
        await call(ctx, "fit_bounds", {"entry_ids": ["byod-1"]})


@pytest.mark.parametrize("arguments", [{}, {"bbox": [0, 0, 1, 1], "entry_ids": ["places-1"]}])
def test_fit_bounds_takes_a_box_or_entries(arguments: dict[str, Any]) -> None:
    with pytest.raises(ValidationError, match="pass either bbox or entry_ids"):
        FitBoundsInput.model_validate(arguments)


async def test_display_of_a_point_entry_is_sent_to_the_ui(ctx: ToolContext, ui: UiLog) -> None:
    await seed(ctx, "places", collection(point(24.94, 60.17, name="x")))
    await call(ctx, "update_places_display", {"clear_all": True, "action": "hide"})
    shown = ui[-1]
    assert isinstance(shown, DisplayPart)
    assert (shown.entry_id, shown.visible, shown.style) == ("places-1", False, None)
