"""execute_map_code and undo_map_change: map code kept as map_changed events, approved as an
intent and as a diff, undone in an order that never leaves a change without what it needs."""

from __future__ import annotations

import base64
from typing import Any

import pytest
from pydantic_ai.messages import ModelMessage, ModelResponse, TextPart
from pydantic_ai.models.function import AgentInfo

from geomint.codegen.pipeline import TurnBudget
from geomint.codegen.style import current_style
from geomint.models.demo import DemoModel, scripted_model
from geomint.state import MapChanged, MapChangeUndone
from geomint.tools import ToolContext, ToolError
from geomint.tools.effects import EffectRefusedError
from geomint.ui import MapChangePart, MapUndonePart

from .conftest import MakeCtx, UiLog
from .helpers import cafes, call, model_of, parks, seed

pytestmark = pytest.mark.anyio

HEAT = """
mapview.add_layer({"id": "cafe-heat", "type": "heatmap", "source": "places-1"},
                  before="places-1-circle")
mapview.set_paint_property("places-1-circle", "circle-opacity", 0.4)
"""
ON_HEAT = """
mapview.set_paint_property("cafe-heat", "heatmap-radius", 30)
"""
EXTRUDE_BUILT = """
features = [dict(f, properties={"h": i * 10}) for i, f in enumerate(geometries["features"])]
mapview.add_source("parks-h", {"type": "geojson", "data": features})
mapview.add_layer({"id": "parks-3d", "type": "fill-extrusion", "source": "parks-h",
                   "paint": {"fill-extrusion-height": ["get", "h"]}})
"""


async def _seeded(ctx: ToolContext) -> None:
    await seed(ctx, "places", cafes(), label="cafés")
    await seed(ctx, "geometries", parks(), label="parks")


async def test_given_code_is_verified_kept_and_shown(ctx: ToolContext, ui: UiLog) -> None:
    await _seeded(ctx)
    result = model_of(
        await call(ctx, "execute_map_code", {"intent": "heatmap of the cafés",
                                             "entry_ids": ["places-1"], "code": HEAT})
    )  # fmt: skip
    assert result["change_id"] == "m1"
    assert result["applied"] == (
        "adds a heatmap layer cafe-heat over places-1; changes circle-opacity of places-1-circle"
    )
    assert result["undo"] == "undo_map_change(change_id='m1')"
    (change,) = ctx.refresh().map_changes
    assert change.entry_ids == ("places-1",) and change.usage.requests == 0
    assert change.diff["updated"]["layers"][0]["previous_paint"] == {"circle-opacity": None}
    (part,) = [p for p in ui if isinstance(p, MapChangePart)]
    source_free = part.diff["added"]["layers"][0]
    assert source_free["source"] == "places-1" and source_free["before"] == "places-1-circle"
    # The next run sees the change in its style.
    layers = [layer["id"] for layer in current_style(ctx.workspace)["layers"]]
    assert layers.index("cafe-heat") == layers.index("places-1-circle") - 1


async def test_built_geojson_is_a_blob_the_part_serves_from_geomint(
    ctx: ToolContext, ui: UiLog
) -> None:
    await _seeded(ctx)
    await call(ctx, "execute_map_code", {"intent": "parks in 3D", "entry_ids": ["geometries-1"],
                                         "code": EXTRUDE_BUILT})  # fmt: skip
    (change,) = ctx.refresh().map_changes
    (blob,) = change.blobs
    assert change.diff["added"]["sources"]["parks-h"]["data"] == {"blob": blob.sha256}
    stored = ctx.chats.read_blob("c1", blob)
    assert b'"h":10' in stored
    (part,) = [p for p in ui if isinstance(p, MapChangePart)]
    data = part.diff["added"]["sources"]["parks-h"]["data"]  # type: ignore[index, call-overload]
    assert data == f"/api/chats/c1/map-blobs/{blob.sha256}"


async def test_the_second_model_writes_the_code_and_its_cost_is_kept(make_ctx: MakeCtx) -> None:
    ctx = make_ctx(codegen_model=DemoModel())
    await _seeded(ctx)
    result = model_of(
        await call(ctx, "execute_map_code", {"intent": "heatmap of the cafés",
                                             "entry_ids": ["places-1"]})
    )  # fmt: skip
    assert result["skills"][0] == "heatmap"
    assert result["generation"]["calls"] == 1 and result["generation"]["tokens"] > 100
    (change,) = ctx.refresh().map_changes
    assert change.usage.model == "geomint-demo" and change.usage.input_tokens > 0
    assert "heatmap-density" in change.code


async def test_code_that_stays_wrong_changes_nothing_and_says_why(ctx: ToolContext) -> None:
    await _seeded(ctx)
    bad = 'mapview.add_source("t", {"type": "raster", "tiles": ["https://evil.example/{z}.png"]})'
    with pytest.raises(ToolError) as caught:
        await call(ctx, "execute_map_code", {"intent": "tiles", "code": bad})
    assert "map code adds 'geojson' sources" in caught.value.message
    assert "nothing on the map changed" in (caught.value.hint or "")
    assert ctx.refresh().map_changes == ()


async def test_approval_sees_the_intent_then_the_diff(make_ctx: MakeCtx) -> None:
    asked: list[dict[str, Any]] = []

    async def authorize(effect: str, about: dict[str, Any], **_: bool) -> None:
        asked.append({"effect": effect, **about})

    ctx = make_ctx(authorize=authorize)
    await _seeded(ctx)
    await call(ctx, "execute_map_code", {"intent": "parks in 3D", "entry_ids": ["geometries-1"],
                                         "code": EXTRUDE_BUILT})  # fmt: skip
    assert [a["stage"] for a in asked] == ["intent", "effect"]
    assert asked[0] == {"effect": "map_style", "intent": "parks in 3D",
                        "entry_ids": ["geometries-1"], "stage": "intent"}  # fmt: skip
    assert (
        asked[1]["description"] == "adds a fill-extrusion layer parks-3d over GeoJSON the "
        "code built (parks-h)"
    )
    assert asked[1]["blobs"][0]["media_type"] == "application/geo+json"


async def test_a_refused_diff_is_not_applied(make_ctx: MakeCtx) -> None:
    async def authorize(effect: str, about: dict[str, Any], **_: bool) -> None:
        if about.get("stage") == "effect":
            raise EffectRefusedError("map_style was refused: not now")

    ctx = make_ctx(authorize=authorize)
    await _seeded(ctx)
    with pytest.raises(EffectRefusedError):
        await call(ctx, "execute_map_code", {"intent": "x", "entry_ids": ["places-1"],
                                             "code": HEAT})  # fmt: skip
    assert ctx.refresh().map_changes == ()


async def test_undo_waits_for_a_later_change_built_on_it(ctx: ToolContext, ui: UiLog) -> None:
    await _seeded(ctx)
    await call(ctx, "execute_map_code", {"intent": "heat", "code": HEAT})
    await call(ctx, "execute_map_code", {"intent": "wider", "code": ON_HEAT})
    with pytest.raises(ToolError) as caught:
        await call(ctx, "undo_map_change", {"change_id": "m1"})
    assert caught.value.message == "m2 builds on what m1 added"
    assert caught.value.hint == "undo m2 first"
    assert model_of(await call(ctx, "undo_map_change", {"change_id": "m2"})) == {"undone": "m2"}
    await call(ctx, "undo_map_change", {"change_id": "m1"})
    workspace = ctx.refresh()
    assert workspace.applied_map_changes == () and workspace.undone == {"m1", "m2"}
    assert "cafe-heat" not in [layer["id"] for layer in current_style(workspace)["layers"]]
    assert [p.change_id for p in ui if isinstance(p, MapUndonePart)] == ["m2", "m1"]
    with pytest.raises(ToolError, match="no applied map change 'm1'"):
        await call(ctx, "undo_map_change", {"change_id": "m1"})


async def test_the_turn_budget_refuses_generation_with_the_reason(make_ctx: MakeCtx) -> None:
    def never_right(_: list[ModelMessage], __: AgentInfo) -> ModelResponse:
        return ModelResponse(parts=[TextPart("```python\nmapview.fly_to(zoom=99)\n```")])

    budget = TurnBudget(max_requests=1)
    ctx = make_ctx(codegen_model=scripted_model(never_right), budget=budget)
    await _seeded(ctx)
    with pytest.raises(ToolError) as caught:
        await call(ctx, "execute_map_code", {"intent": "zoom in a lot"})
    assert caught.value.message == (
        "this turn's budget for second model calls (map code and discovery) of 1 call is "
        "spent; the map was not changed"
    )


async def test_the_log_refuses_changes_out_of_order(ctx: ToolContext) -> None:
    from geomint.store import RefusedEventError

    await _seeded(ctx)
    with pytest.raises(RefusedEventError, match="the next map change is m1, not m2"):
        ctx.append([MapChanged(change_id="m2", intent="x", description="", diff={},
                               code="", code_hash="0" * 64, spec_version="1")])  # fmt: skip
    with pytest.raises(RefusedEventError, match="no map change 'm1'"):
        ctx.append([MapChangeUndone(change_id="m1")])


def test_png_blob_of_an_image_change_is_named_by_its_hash() -> None:
    # The recorder's PNG and the blob the event names are the same bytes.
    import hashlib

    from geomint.codegen.verify import Verified, verify_ops

    png = base64.b64encode(b"\x89PNG\r\n\x1a\n" + b"\x00\x00\x00\rIHDR" + b"\x00\x00\x00\x02"
                           * 2 + b"\x08\x06\x00\x00\x00" + b"\x00" * 8).decode()  # fmt: skip
    style = {"sources": {}, "layers": []}
    ops = [
        {"op": "add_source", "line": 1,
         "args": {"source_id": "img", "source": {"type": "image", "png": png,
                                                 "coordinates": [[0, 1], [1, 1], [1, 0], [0, 0]]}}},
        {"op": "add_layer", "line": 2,
         "args": {"layer": {"id": "img", "type": "raster", "source": "img"}, "before": None}},
    ]  # fmt: skip
    verified = verify_ops(style, ops)
    assert isinstance(verified, Verified)
    ((sha, (data, media)),) = verified.blobs.items()
    assert media == "image/png" and hashlib.sha256(data).hexdigest() == sha
    assert verified.diff["added"]["sources"]["img"]["image"]["sha256"] == sha


async def test_an_exported_chat_keeps_the_blobs_its_map_changes_name(ctx: ToolContext) -> None:
    from geomint.store import Chats, MemoryStore

    await _seeded(ctx)
    await call(ctx, "execute_map_code", {"intent": "parks in 3D", "entry_ids": ["geometries-1"],
                                         "code": EXTRUDE_BUILT})  # fmt: skip
    exported = ctx.chats.export("c1")
    elsewhere = Chats(MemoryStore())
    chat = elsewhere.import_(exported, chat_id="c2")
    (change,) = elsewhere.open(chat).map_changes
    (blob,) = change.blobs
    assert elsewhere.read_blob(chat, blob) == ctx.chats.read_blob("c1", blob)


async def test_the_model_is_told_which_map_changes_exist(ctx: ToolContext) -> None:
    from geomint.agent._prompt import state_note

    await _seeded(ctx)
    await call(ctx, "execute_map_code", {"intent": "heat", "code": HEAT})
    await call(ctx, "execute_map_code", {"intent": "parks in 3D", "code": EXTRUDE_BUILT,
                                         "entry_ids": ["geometries-1"]})  # fmt: skip
    await call(ctx, "undo_map_change", {"change_id": "m2"})
    note = state_note(ctx.refresh())
    assert "- m1: adds a heatmap layer cafe-heat over places-1; changes circle-opacity" in note
    assert "m2" not in note
    recalled = model_of(await call(ctx, "recall_state", {}))
    assert [(c["id"], c["undone"]) for c in recalled["map_changes"]] == [("m1", False),
                                                                         ("m2", True)]  # fmt: skip


async def test_code_reading_an_entry_not_named_is_told_to_name_it(ctx: ToolContext) -> None:
    await _seeded(ctx)
    with pytest.raises(ToolError) as caught:
        await call(ctx, "execute_map_code", {"intent": "parks in 3D", "code": EXTRUDE_BUILT})
    assert "only the entries in execute_map_code's entry_ids reach the code" in (
        caught.value.message
    )
    assert "places_entry_ids" not in caught.value.message


RASTER_OVERLAY = """
mapview.set_paint_property("rasters-1-raster", "raster-opacity", 0.5)
mapview.add_source("grid-again", {"type": "image", "data": "rasters-1"})
mapview.add_layer({"id": "grid-again", "type": "raster", "source": "grid-again",
                   "paint": {"raster-hue-rotate": 90}})
"""


async def _with_raster(ctx: ToolContext) -> None:
    import numpy as np

    from geomint.geo.raster import Raster

    grid = Raster(np.arange(20, dtype="float32").reshape(4, 5),
                  (100.0, 0.0, 385_000.0, 0.0, -100.0, 6_673_000.0), "EPSG:3067")  # fmt: skip
    await ctx.write_entry(kind="rasters", data=grid, label="grid")


async def test_map_code_draws_a_raster_entry_from_geomints_own_picture(
    ctx: ToolContext, ui: UiLog
) -> None:
    await _with_raster(ctx)
    style = current_style(ctx.workspace)
    assert style["sources"]["rasters-1"]["type"] == "image"
    assert [layer["id"] for layer in style["layers"]] == ["rasters-1-raster"]
    result = model_of(
        await call(ctx, "execute_map_code", {"intent": "the grid again, hue turned",
                                             "entry_ids": ["rasters-1"], "code": RASTER_OVERLAY})
    )  # fmt: skip
    assert result["applied"] == (
        "adds a raster layer grid-again of the raster rasters-1 (grid-again); changes "
        "raster-opacity of rasters-1-raster"
    )
    (change,) = ctx.refresh().map_changes
    stored = change.diff["added"]["sources"]["grid-again"]
    assert stored["raster"] == {"entry": "rasters-1"} and not change.blobs  # no copy of pixels
    assert stored["coordinates"] == style["rasters"]["rasters-1"]["coordinates"]
    (part,) = [p for p in ui if isinstance(p, MapChangePart)]
    assert part.diff["added"]["sources"]["grid-again"]["url"] == (
        "/api/chats/c1/entries/rasters-1/raster.png?version=1"
    )


@pytest.mark.parametrize(
    ("code", "said"),
    [
        ('mapview.add_source("g", {"type": "geojson", "data": "rasters-1"})',
         "rasters-1 is a raster entry, not features"),
        ('mapview.add_source("g", {"type": "image", "url": "https://tiles.example/x.png"})',
         "URLs are not allowed"),
        ('mapview.add_source("g", {"type": "image", "url": '
         '"/api/chats/another-chat/entries/rasters-1/raster.png"})', "URLs are not allowed"),
    ],
)  # fmt: skip
async def test_map_code_cannot_draw_a_raster_as_features_or_from_elsewhere(
    ctx: ToolContext, code: str, said: str
) -> None:
    await _with_raster(ctx)
    with pytest.raises(ToolError) as caught:
        await call(ctx, "execute_map_code", {"intent": "the grid", "entry_ids": ["rasters-1"],
                                             "code": code})  # fmt: skip
    assert said in caught.value.message
    assert not ctx.refresh().map_changes
