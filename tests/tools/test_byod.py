"""add_byod_layer and update_byod_display: the user's layers, and the folders they come from."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from pydantic import ValidationError

from geomint.providers import bundled
from geomint.tools import DEFAULT_TOOLS, ToolContext, ToolEntry, ToolError, ToolSettings
from geomint.ui import DisplayPart, EntryPart

from .conftest import MakeCtx, UiLog
from .helpers import cafes, call, model_of, parks

pytestmark = pytest.mark.anyio

STOPS_CSV = "name,lon,lat\nRautatientori,24.9414,60.1710\nKamppi,24.9316,60.1690\n"


async def add(ctx: ToolContext, **arguments: Any) -> dict[str, Any]:
    arguments.setdefault("label", "my layer")
    return model_of(await call(ctx, "add_byod_layer", arguments))


async def test_inline_data_is_stored_as_a_byod_entry(ctx: ToolContext, ui: UiLog) -> None:
    out = await add(ctx, data=parks(), label="Parks")

    assert out["entry_id"] == "byod-1"
    assert out["version"] == 1
    assert out["digest"]["feature_count"] == 2
    entry = ctx.refresh().entries["byod-1"]
    assert entry.kind == "byod"
    assert entry.latest.label == "Parks"
    (source,) = entry.latest.sources
    assert source.publisher == "the user"
    assert source.evidence == "user-supplied"
    assert source.licence == "not stated"
    assert source.url is None
    (shown,) = ui
    assert isinstance(shown, EntryPart)
    assert (shown.entry_id, shown.version, shown.features) == ("byod-1", 1, 2)
    assert shown.geojson_url == "/api/chats/c1/entries/byod-1?version=1"


async def test_a_hidden_layer_is_stored_but_not_shown(ctx: ToolContext) -> None:
    await add(ctx, data=parks(), show=False)
    assert ctx.refresh().entries["byod-1"].visible is False


async def test_a_geojson_file_in_an_allowed_folder(ctx: ToolContext, tmp_path: Path) -> None:
    (tmp_path / "cafes.geojson").write_text(json.dumps(cafes()), encoding="utf-8")
    out = await add(ctx, path="cafes.geojson", label="Cafés")

    assert out["format"] == "geojson"
    assert out["digest"]["feature_count"] == 3
    (source,) = ctx.refresh().entries["byod-1"].latest.sources
    assert source.publisher == "the user"


async def test_a_csv_file_by_absolute_path(ctx: ToolContext, tmp_path: Path) -> None:
    stops = tmp_path / "stops.csv"
    stops.write_text(STOPS_CSV, encoding="utf-8")
    out = await add(ctx, path=str(stops), label="Stops")

    assert out["format"] == "csv"
    assert out["digest"]["feature_count"] == 2
    assert out["digest"]["geometry_types"] == {"Point": 2}
    data = ctx.entry_data("byod-1")
    assert data["features"][0]["geometry"]["coordinates"] == pytest.approx([24.9414, 60.1710])


@pytest.fixture
def allowed(make_ctx: MakeCtx, tmp_path: Path) -> ToolContext:
    """A context allowed to read ``tmp_path/allowed`` only, beside a secret file."""
    folder = tmp_path / "allowed"
    folder.mkdir()
    (tmp_path / "secret.geojson").write_text(json.dumps(cafes()), encoding="utf-8")
    (folder / "link.geojson").symlink_to(tmp_path / "secret.geojson")
    return make_ctx(settings=ToolSettings(byod_dirs=(folder,)))


@pytest.mark.parametrize(
    "path",
    ["/etc/passwd", "../secret.geojson", "link.geojson", "sub/../../secret.geojson", "missing.csv"],
)
async def test_a_path_outside_the_allowed_folders_is_refused(
    allowed: ToolContext, path: str
) -> None:
    with pytest.raises(ToolError) as caught:
        await add(allowed, path=path)

    assert caught.value.message == f"{path!r} is not a file in the folders this agent may read"
    assert caught.value.hint is not None
    # The folder is named, never located: no host path reaches the model.
    assert caught.value.hint == "pass a file name relative to an allowed folder (allowed)"
    assert allowed.refresh().entries == {}


async def test_no_allowed_folders_switches_files_off(make_ctx: MakeCtx, tmp_path: Path) -> None:
    ctx = make_ctx(settings=ToolSettings())
    (tmp_path / "cafes.geojson").write_text(json.dumps(cafes()), encoding="utf-8")
    with pytest.raises(ToolError) as caught:
        await add(ctx, path=str(tmp_path / "cafes.geojson"))
    assert caught.value.message == "reading files is switched off for this agent"
    assert caught.value.hint == "pass the layer as a url or as inline data instead"


@pytest.mark.parametrize(
    "arguments",
    [
        {"data": {"type": "FeatureCollection", "features": []}, "path": "x.geojson"},
        {"url": "https://example.org/x.geojson", "path": "x.geojson"},
        {},
    ],
)
def test_exactly_one_source_is_required_by_the_schema(arguments: dict[str, Any]) -> None:
    schema = _schema()
    with pytest.raises(ValidationError, match="pass exactly one of url, data or path"):
        schema.model_validate({"label": "x", **arguments})


def _schema() -> Any:
    entry = DEFAULT_TOOLS["add_byod_layer"]
    assert isinstance(entry, ToolEntry)
    return entry.input_schema


async def test_invalid_data_is_refused_with_intakes_problems(ctx: ToolContext) -> None:
    bad = {"type": "FeatureCollection", "features": [{"type": "Feature", "geometry": {
        "type": "Point", "coordinates": [24.9]}, "properties": {}}]}  # fmt: skip
    with pytest.raises(ToolError) as caught:
        await add(ctx, data=bad)

    assert caught.value.message.startswith("the layer could not be loaded: ")
    assert "features[0]" in caught.value.message
    assert caught.value.hint == "fix the source and call add_byod_layer again; nothing was stored"
    workspace = ctx.refresh()
    assert workspace.entries == {}
    assert workspace.last_seq == 1  # only the chat's creation


async def test_replace_writes_a_new_version(ctx: ToolContext) -> None:
    await add(ctx, data=parks())
    out = await add(ctx, data=cafes(), replace="byod-1", label="now cafés")

    assert out["entry_id"] == "byod-1"
    assert out["version"] == 2
    entry = ctx.refresh().entries["byod-1"]
    assert [v.version for v in entry.versions] == [1, 2]
    assert entry.latest.label == "now cafés"
    assert ctx.entry_data("byod-1", 1)["features"][0]["geometry"]["type"] == "Polygon"
    assert ctx.entry_data("byod-1")["features"][0]["geometry"]["type"] == "Point"


async def test_replace_of_an_unknown_entry_is_refused(ctx: ToolContext) -> None:
    await add(ctx, data=parks())
    with pytest.raises(ToolError) as caught:
        await add(ctx, data=cafes(), replace="byod-4")
    assert caught.value.message == "no entry 'byod-4' to replace"
    assert caught.value.hint == "the byod entries are byod-1"


async def test_a_bundled_file_keeps_its_own_provenance(make_ctx: MakeCtx) -> None:
    ctx = make_ctx(settings=ToolSettings(byod_dirs=(bundled.DATA_DIR,)))
    out = await add(ctx, path=str(bundled.demo_stops_path()), label="Stops")

    assert out["format"] == "csv"
    assert out["digest"]["feature_count"] > 0
    (source,) = ctx.refresh().entries["byod-1"].latest.sources
    assert source.licence == "ODbL-1.0"
    assert source.publisher == "OpenStreetMap contributors"
    assert source.evidence == "observed"
    assert (
        source.model_dump() == source.model_validate(bundled.source("helsinki_stops")).model_dump()
    )


async def test_a_bundled_file_by_relative_path(make_ctx: MakeCtx) -> None:
    ctx = make_ctx(settings=ToolSettings(byod_dirs=(bundled.DATA_DIR,)))
    await add(ctx, path="helsinki_stops.csv", label="Stops")
    (source,) = ctx.refresh().entries["byod-1"].latest.sources
    assert source.licence == "ODbL-1.0"


# -- update_byod_display --------------------------------------------------------------


async def test_clear_all_hides_every_byod_layer(ctx: ToolContext, ui: UiLog) -> None:
    await add(ctx, data=parks())
    await add(ctx, data=cafes())
    out = await call(ctx, "update_byod_display", {"clear_all": True, "action": "hide"})

    assert out == {"changed": ["byod-1", "byod-2"], "visible": False}
    assert [e.visible for e in ctx.refresh().byod] == [False, False]
    assert [p.entry_id for p in ui if isinstance(p, DisplayPart)] == ["byod-1", "byod-2"]


async def test_update_byod_display_refuses_a_places_id(ctx: ToolContext) -> None:
    await add(ctx, data=parks())
    await ctx.write_entry(kind="places", data=cafes(), label="p")
    with pytest.raises(ToolError) as caught:
        await call(ctx, "update_byod_display", {"entry_ids": ["places-1"], "action": "hide"})
    assert caught.value.message == "no byod entries places-1"
    assert caught.value.hint == "the byod entries are byod-1"


@pytest.mark.anyio
async def test_a_limit_the_model_cannot_change_is_not_advised_as_if_it_could(
    make_ctx: MakeCtx, tmp_path: Path
) -> None:
    # Intake tells a caller to "pass a larger timeout_s"; the model has no such argument.
    import geopandas as gpd

    towns = gpd.GeoDataFrame(
        {"n": range(50_000)}, geometry=gpd.points_from_xy([4.9] * 50_000, [52.4] * 50_000)
    )
    towns.set_crs(4326).to_file(tmp_path / "towns.gpkg")
    ctx = make_ctx(settings=ToolSettings(byod_dirs=(tmp_path,), fetch_timeout_s=0.05))
    with pytest.raises(ToolError) as caught:
        await add(ctx, path=str(tmp_path / "towns.gpkg"))
    message = caught.value.message
    assert message.startswith("the layer could not be loaded: reading the file took longer")
    assert "pass a larger" not in message and "timeout_s" not in message
    assert "the time limit is the application's setting, not the call's" in message
    assert "load a smaller layer, or filter it first" in message
