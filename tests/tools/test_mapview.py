"""set_map_style and set_language: the map's basemap and label language, kept in the log."""

from __future__ import annotations

import pytest

from geomint.errors import UsageError
from geomint.tools import MapStyle, ToolContext, ToolError, ToolSettings
from geomint.tools.basemaps import BUILTIN_STYLES, style_catalogue
from geomint.ui import BasemapPart, LanguagePart

from .conftest import MakeCtx, UiLog
from .helpers import call, collection, point, seed

pytestmark = pytest.mark.anyio


async def test_switching_to_dark_is_kept_and_lists_every_style(ctx: ToolContext, ui: UiLog) -> None:
    result = await call(ctx, "set_map_style", {"style": "Dark"})
    assert result == {
        "style": "dark",
        "styles": [
            {"name": "light", "label": "Light", "theme": "light"},
            {"name": "dark", "label": "Dark", "theme": "dark"},
        ],
    }
    assert ctx.refresh().basemap == "dark"
    assert [(type(p), p.style) for p in ui if isinstance(p, BasemapPart)] == [(BasemapPart, "dark")]


async def test_an_unknown_style_is_refused_with_the_near_miss(ctx: ToolContext) -> None:
    before = ctx.refresh().last_seq
    with pytest.raises(ToolError) as caught:
        await call(ctx, "set_map_style", {"style": "drak"})
    assert caught.value.message == "there is no map style 'drak' (did you mean 'dark'?)"
    assert caught.value.hint == "the styles are 'light', 'dark'"
    assert ctx.refresh().last_seq == before


async def test_an_application_style_can_be_chosen(make_ctx: MakeCtx) -> None:
    paper = MapStyle(name="paper", url="/static/paper.json", label="Paper")
    ctx = make_ctx(settings=ToolSettings(map_styles=style_catalogue([paper])))
    result = await call(ctx, "set_map_style", {"style": "paper"})
    assert [s["name"] for s in result["styles"]] == ["light", "dark", "paper"]
    assert ctx.refresh().basemap == "paper"


def test_a_style_from_another_origin_must_be_allowed() -> None:
    with pytest.raises(UsageError, match="another origin than the page's"):
        MapStyle(name="sat", url="https://tiles.example.org/s.json", label="Satellite")
    with pytest.raises(UsageError, match="give a path on this server"):
        MapStyle(name="sat", url="//tiles.example.org/s.json", label="Satellite")
    with pytest.raises(UsageError, match="must be https://host"):
        MapStyle(name="sat", url="/s.json", label="Satellite", origins=("https://a.org/x",))
    allowed = MapStyle(
        name="sat",
        url="https://tiles.example.org/s.json",
        label="Satellite",
        origins=("https://tiles.example.org",),
    )
    assert allowed.origins == ("https://tiles.example.org",)


def test_an_application_style_replaces_a_builtin_in_place() -> None:
    light = MapStyle(name="light", url="/static/mine.json", label="Mine")
    assert style_catalogue([light]) == (light, BUILTIN_STYLES[1])
    with pytest.raises(UsageError, match="given twice"):
        style_catalogue([light, light])


async def test_labels_in_swedish_count_the_places_named_in_it(ctx: ToolContext, ui: UiLog) -> None:
    await seed(
        ctx,
        "places",
        collection(
            point(24.94, 60.17, name="Rautatientori", **{"name:sv": "Järnvägstorget"}),
            point(24.95, 60.17, name="Kahvila"),
        ),
    )
    result = await call(ctx, "set_language", {"language": "Swedish"})
    assert result["language"] == "sv"
    assert result["places_named"] == {"places-1": {"features": 2, "named": 1}}
    assert "street names" in result["untranslated"]
    assert ctx.refresh().language == "sv"
    assert [p.language for p in ui if isinstance(p, LanguagePart)] == ["sv"]


async def test_a_language_the_data_has_no_names_in_is_refused(ctx: ToolContext) -> None:
    with pytest.raises(ToolError) as caught:
        await call(ctx, "set_language", {"language": "de"})
    assert caught.value.message == "map labels cannot be shown in 'de'"
    assert caught.value.hint == (
        "the shipped data names places in fi (Finnish), sv (Swedish), en (English); "
        "nothing else has translations"
    )


def test_the_description_says_which_languages_and_what_stays() -> None:
    from geomint.tools import DEFAULT_TOOLS

    description = DEFAULT_TOOLS["set_language"].description
    assert "fi (Finnish), sv (Swedish), en (English)" in description
    assert "Street names and country labels have no translations" in description
