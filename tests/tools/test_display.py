"""Display tools: what the map shows and where it looks."""

from __future__ import annotations

import math
from typing import Any

import pytest
from pydantic import ValidationError

from geomint.state import PALETTE, entry_style
from geomint.tools import ToolContext, ToolError
from geomint.tools._styling import DRAWN, OTHER_COLOUR
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
    assert caught.value.hint == DRAWN
    assert "color_by" in DRAWN and "label_by" in DRAWN
    assert ctx.refresh().entries["geometries-1"].style is None


@pytest.mark.parametrize(
    ("style", "problem"),
    [
        ({"fill": "#0a0"}, "'fill' is not drawn"),
        ({"label": "name"}, "'label' is not drawn"),
        ({"color_by": {"property": "x", "classes": 40}}, "color_by: classes Input should be"),
        ({"color_by": {"field": "x"}}, "color_by: property Field required"),
        ({"label_by": 3}, "label_by 3 is not a property name"),
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
    assert caught.value.message.startswith(f"the style cannot be drawn: {problem}")
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


async def test_a_style_change_sends_the_whole_style_to_the_ui(ctx: ToolContext, ui: UiLog) -> None:
    await seed(ctx, "places", cafes())
    await call(ctx, "update_places_display", {"entry_ids": ["places-1"], "style": {"opacity": 0.3}})
    shown = ui[-1]
    assert isinstance(shown, DisplayPart) and shown.style is not None
    assert (shown.style.color, shown.style.opacity) == (PALETTE[0], 0.3)


async def test_style_changes_add_up_and_null_goes_back_to_the_default(ctx: ToolContext) -> None:
    # Each change sets only the keys it names: a colour, then an opacity, draws both (the
    # page used to draw both live and only the last after a reload).
    await seed(ctx, "places", cafes())
    await seed(ctx, "places", cafes())
    default = entry_style(ctx.refresh(), "places-2")
    assert default is not None and (default.color, default.order) == (PALETTE[1], 1)
    await call(ctx, "update_places_display", {"entry_ids": ["places-2"], "style": {"color": "red"}})
    await call(ctx, "update_places_display", {"entry_ids": ["places-2"], "style": {"opacity": 0.5}})
    style = entry_style(ctx.refresh(), "places-2")
    assert style is not None and (style.color, style.opacity) == ("red", 0.5)
    await call(ctx, "update_places_display", {"entry_ids": ["places-2"], "style": {"color": None}})
    style = entry_style(ctx.refresh(), "places-2")
    assert style is not None and (style.color, style.opacity) == (PALETTE[1], 0.5)


async def test_colour_by_a_category_counts_each_class_for_the_legend(ctx: ToolContext) -> None:
    await seed(ctx, "places", cafes())
    out = await call(
        ctx, "update_places_display", {"entry_ids": ["places-1"], "style": {"color_by": "category"}}
    )
    assert out["drawn"] == {"places-1": ["colour by category (categorical): cafe (2), bar (1)"]}
    style = entry_style(ctx.refresh(), "places-1")
    assert style is not None and style.color_by is not None
    assert [(c.value, c.count, c.color) for c in style.color_by.classes] == [
        ("cafe", 2, PALETTE[0]),
        ("bar", 1, PALETTE[1]),
    ]
    assert style.color_by.version == 1


async def test_a_graduated_colour_splits_numbers_into_classes_with_counts(
    ctx: ToolContext,
) -> None:
    points = [point(24.94 + i / 1000, 60.17, name=f"p{i}", rating=i) for i in range(10)]
    await seed(ctx, "places", collection(*points, point(24.9, 60.1, name="unrated")))
    style = {"color_by": {"property": "rating", "classes": 4, "method": "equal"}}
    await call(ctx, "update_places_display", {"entry_ids": ["places-1"], "style": style})
    drawn = entry_style(ctx.refresh(), "places-1")
    assert drawn is not None and drawn.color_by is not None
    classes = drawn.color_by.classes
    assert drawn.color_by.kind == "graduated"
    assert [(c.low, c.high, c.count) for c in classes[:-1]] == [
        (0, 2.25, 3), (2.25, 4.5, 2), (4.5, 6.75, 2), (6.75, 9, 3),
    ]  # fmt: skip
    # The place without a rating is counted, in a class of its own.
    assert (classes[-1].other, classes[-1].count, classes[-1].color) == (True, 1, OTHER_COLOUR)
    assert sum(c.count for c in classes) == 11


async def test_graduated_classes_over_the_largest_floats_are_finite(ctx: ToolContext) -> None:
    # (high - low) / classes overflowed to infinity, and the edges became NaN: a chat
    # whose parts the page's JSON.parse then refused.
    points = [point(24.94 + i / 1000, 60.17, v=v) for i, v in enumerate((-1e308, 0.0, 1e308))]
    await seed(ctx, "places", collection(*points))
    style = {"color_by": {"property": "v", "kind": "graduated", "classes": 3, "method": "equal"}}
    await call(ctx, "update_places_display", {"entry_ids": ["places-1"], "style": style})
    drawn = entry_style(ctx.refresh(), "places-1")
    assert drawn is not None and drawn.color_by is not None
    edges = [(c.low, c.high) for c in drawn.color_by.classes if not c.other]
    assert all(x is not None and math.isfinite(x) for edge in edges for x in edge), edges
    assert edges[0][0] == -1e308 and edges[-1][1] == 1e308
    assert sum(c.count for c in drawn.color_by.classes) == 3


async def test_many_categories_keep_the_commonest_and_count_the_rest(ctx: ToolContext) -> None:
    points = [point(24.94, 60.17, kind=f"k{i % 14}") for i in range(28)]
    await seed(ctx, "places", collection(*points))
    await call(
        ctx, "update_places_display", {"entry_ids": ["places-1"], "style": {"color_by": "kind"}}
    )
    drawn = entry_style(ctx.refresh(), "places-1")
    assert drawn is not None and drawn.color_by is not None
    classes = drawn.color_by.classes
    assert len(classes) == len(PALETTE)  # nine categories and "other"
    assert classes[-1].other and classes[-1].count == 28 - 9 * 2
    assert len({c.color for c in classes}) == len(classes)


async def test_an_unknown_property_is_refused_with_the_properties_there_are(
    ctx: ToolContext,
) -> None:
    await seed(ctx, "places", cafes())
    with pytest.raises(ToolError) as caught:
        await call(
            ctx, "update_places_display", {"entry_ids": ["places-1"], "style": {"label_by": "nme"}}
        )
    assert caught.value.message == "no feature has the property 'nme'"
    assert caught.value.hint is not None
    assert "name (text, 3 values, e.g. 'Kahvila A')" in caught.value.hint
    assert "category (text, 2 values" in caught.value.hint


async def test_size_by_text_is_refused(ctx: ToolContext) -> None:
    await seed(ctx, "places", cafes())
    with pytest.raises(ToolError, match="category holds no numbers to size by"):
        await call(
            ctx,
            "update_places_display",
            {"entry_ids": ["places-1"], "style": {"size_by": "category"}},
        )


async def test_size_and_labels_by_a_property(ctx: ToolContext) -> None:
    points = [point(24.94, 60.17, name="a", seats=10), point(24.95, 60.17, name="b", seats=50)]
    await seed(ctx, "places", collection(*points))
    style = {"size_by": {"property": "seats", "largest": 20}, "label_by": "name"}
    out = await call(ctx, "update_places_display", {"entry_ids": ["places-1"], "style": style})
    assert out["drawn"]["places-1"] == [
        "size by seats: 10 to 50 drawn 3 to 20 px",
        "labels from name",
    ]
    drawn = entry_style(ctx.refresh(), "places-1")
    assert drawn is not None and drawn.size_by is not None
    assert (drawn.size_by.low, drawn.size_by.high, drawn.label_by) == (10, 50, "name")


async def _raster(ctx: ToolContext) -> None:
    import numpy as np

    from geomint.geo.raster import Raster

    grid = Raster(np.ones((3, 4), dtype="float32"), (100, 0, 385_000, 0, -100, 6_673_000),
                  "EPSG:3067")  # fmt: skip
    await ctx.write_entry(kind="rasters", data=grid, label="grid")


async def test_a_raster_is_hidden_and_faded_but_not_coloured_by_a_property(
    ctx: ToolContext,
) -> None:
    await _raster(ctx)
    hidden = await call(ctx, "update_rasters_display", {"entry_ids": ["rasters-1"],
                                                        "action": "hide"})  # fmt: skip
    assert hidden == {"changed": ["rasters-1"], "visible": False}
    await call(ctx, "update_rasters_display", {"entry_ids": ["rasters-1"],
                                               "style": {"opacity": 0.5}})  # fmt: skip
    entry = ctx.refresh().entries["rasters-1"]
    assert entry.visible and entry.style == {"opacity": 0.5}
    before = ctx.refresh().last_seq
    with pytest.raises(ToolError) as caught:
        await call(ctx, "update_rasters_display", {"entry_ids": ["rasters-1"],
                                                   "style": {"color_by": "value"}})  # fmt: skip
    assert caught.value.message == (
        "rasters-1 is a raster: color_by cannot apply (it has cells, not features with "
        "properties, for color_by)"
    )
    assert "opacity (0 to 1) only" in (caught.value.hint or "")
    with pytest.raises(ToolError, match="cells are coloured from its low to its high"):
        await call(ctx, "update_rasters_display", {"clear_all": True,
                                                   "style": {"color": "#d33"}})  # fmt: skip
    assert ctx.refresh().last_seq == before  # nothing stored
