"""analyse_data and process_data: what code gets, what it mints, and what is refused."""

from __future__ import annotations

from typing import Any

import pytest

from geomint.state import AnalysisRecorded, LayerMinted, ViewChanged
from geomint.tools import ToolContext, ToolError, ToolResult
from geomint.tools._kinds import KIND_DOCS, DataScope
from geomint.tools.data import ANALYSE_DATA, PROCESS_DATA, check_envelope
from geomint.ui import AnalysisPart, ChartPart, EntryPart, ViewPart

from .conftest import UiLog
from .helpers import CITY, OSM, cafes, call, collection, parks, point, seed, square

pytestmark = pytest.mark.anyio

ALL_KINDS = (
    "places",
    "routes",
    "ranges",
    "incidents",
    "geometries",
    "traffic_area_analytics",
    "byod",
    "tables",
    "rasters",
)


def _events(ctx: ToolContext) -> list[Any]:
    return [e.body for e in ctx.chats.store.read("c1")]


async def analyse(ctx: ToolContext, code: str, **arguments: Any) -> ToolResult:
    arguments.setdefault("places_entry_ids", ["places-1"])
    arguments.setdefault("name", "probe")
    result = await call(ctx, "analyse_data", {"code": code, **arguments})
    assert isinstance(result, ToolResult)
    return result


# -- analyse_data ---------------------------------------------------------------------


async def test_a_json_result_is_recorded_with_its_inputs(ctx: ToolContext, ui: UiLog) -> None:
    await seed(ctx, "places", cafes())
    code = "return {'count': len(places['features'])}"
    result = await analyse(ctx, code, name="count-places")

    assert not result.failed
    assert result.model["ok"] is True
    assert result.model["result"] == {"count": 3}
    (record,) = ctx.refresh().analyses.values()
    assert record.name == "count-places"
    assert record.tool == "analyse_data"
    assert record.result == {"count": 3}
    assert record.error is None
    assert [i.model_dump() for i in record.inputs] == [{"entry_id": "places-1", "version": 1}]
    assert record.analysis_id == result.model["analysis_id"] == "a1"
    shown = ui[-1]
    assert isinstance(shown, AnalysisPart)
    assert (shown.analysis_id, shown.ok, shown.result) == ("a1", True, {"count": 3})


async def test_mint_value_lands_in_the_ledger_with_the_inputs_provenance(
    ctx: ToolContext,
) -> None:
    await seed(ctx, "places", cafes(), sources=(OSM,))
    await seed(ctx, "geometries", parks(), sources=(CITY,))
    code = (
        "n = mint.value(len(places['features']), 'places counted', unit='places')\nreturn {'n': n}"
    )
    result = await analyse(ctx, code, geometries_entry_ids=["geometries-1"])

    assert result.model["figures"] == [
        {"id": "v1", "label": "places counted", "value": 3, "unit": "places"}
    ]
    workspace = ctx.refresh()
    (value,) = workspace.values
    assert value.id == "v1"
    assert value.value == 3
    assert value.minted_by == "a1"
    assert value.sources == (OSM, CITY)
    assert value.licences == ("ODbL-1.0", "CC-BY-4.0")
    assert {i.entry_id for i in value.inputs} == {"places-1", "geometries-1"}
    assert "v1" in workspace.ledger
    assert workspace.analyses["a1"].values == ("v1",)


async def test_mint_value_sources_narrow_the_provenance(ctx: ToolContext) -> None:
    await seed(ctx, "places", cafes(), sources=(OSM,))
    await seed(ctx, "geometries", parks(), sources=(CITY,))
    code = "mint.value(len(geometries['features']), 'parks', sources=['geometries-1'])\nreturn 1"
    await analyse(ctx, code, geometries_entry_ids=["geometries-1"])

    (value,) = ctx.refresh().values
    assert value.sources == (CITY,)
    assert [i.entry_id for i in value.inputs] == ["geometries-1"]


async def test_a_chart_result_is_checked_and_sent_to_the_ui(ctx: ToolContext, ui: UiLog) -> None:
    await seed(ctx, "places", cafes())
    code = (
        "from collections import Counter\n"
        "counts = Counter(f['properties']['category'] for f in places['features'])\n"
        "labels = sorted(counts)\n"
        "return {'type': 'bar', 'data': {'labels': labels,"
        " 'datasets': [{'label': 'places', 'data': [counts[k] for k in labels]}]}}"
    )
    result = await analyse(ctx, code, output_format="chart")

    assert not result.failed
    (chart,) = [p for p in ui if isinstance(p, ChartPart)]
    assert chart.config["data"]["labels"] == ["bar", "cafe"]
    assert chart.config["data"]["datasets"][0]["data"] == [1, 2]
    assert ctx.refresh().analyses["a1"].output_format == "chart"


async def test_a_bad_chart_type_is_a_failed_result_not_an_exception(
    ctx: ToolContext, ui: UiLog
) -> None:
    await seed(ctx, "places", cafes())
    code = "return {'type': 'barr', 'data': {'labels': [], 'datasets': []}}"
    result = await analyse(ctx, code, output_format="chart")

    assert result.failed
    assert result.model["ok"] is False
    assert "not a chart the UI can draw" in result.model["error"]
    assert "'barr'" in result.model["error"]
    assert "Did you mean 'bar'?" in result.model["error"]
    assert not [p for p in ui if isinstance(p, ChartPart)]
    record = ctx.refresh().analyses["a1"]
    assert record.error == result.model["error"]
    assert record.result is None


async def test_code_that_raises_is_a_failed_result_with_the_error(ctx: ToolContext) -> None:
    await seed(ctx, "places", cafes())
    code = "first = places['features'][0]\nreturn first['properties']['missing']"
    result = await analyse(ctx, code)

    assert result.failed
    assert result.model["ok"] is False
    assert "KeyError" in result.model["error"]
    assert "'missing'" in result.model["error"]
    assert "line 2" in result.model["error"]
    assert "result" not in result.model
    record = ctx.refresh().analyses["a1"]
    assert record.error == result.model["error"]
    assert ctx.workspace.values == ()


async def test_an_unknown_entry_id_is_refused_listing_the_known_ids(ctx: ToolContext) -> None:
    await seed(ctx, "places", cafes())
    await seed(ctx, "places", cafes())
    before = ctx.refresh().last_seq

    with pytest.raises(ToolError) as caught:
        await analyse(ctx, "return 1", places_entry_ids=["places-9"])

    assert caught.value.message == "no places entry 'places-9' in this chat"
    assert caught.value.hint == "the places entries are places-1, places-2"
    assert ctx.refresh().last_seq == before  # nothing ran, nothing recorded


async def test_an_id_of_another_kind_is_refused(ctx: ToolContext) -> None:
    await seed(ctx, "places", cafes())
    await seed(ctx, "byod", parks())

    with pytest.raises(ToolError) as caught:
        await analyse(ctx, "return 1", places_entry_ids=["byod-1"])

    assert "no places entry 'byod-1'" in caught.value.message
    assert caught.value.hint == "the places entries are places-1"


async def test_no_entry_ids_is_refused(ctx: ToolContext) -> None:
    await seed(ctx, "places", cafes())
    with pytest.raises(ToolError) as caught:
        await analyse(ctx, "return 1", places_entry_ids=[])
    assert "needs at least one entry" in caught.value.message
    assert caught.value.hint is not None
    assert "places-1" in caught.value.hint


async def test_mint_layer_writes_a_geometries_entry_and_a_layer(ctx: ToolContext) -> None:
    await seed(ctx, "places", cafes(), sources=(OSM,))
    code = (
        "hull = shapely.MultiPoint([f['geometry']['coordinates'] for f in places['features']])"
        ".convex_hull\n"
        "mint.layer(hull, 'hull of the places')\n"
        "return 'done'"
    )
    result = await analyse(ctx, code)

    assert list(result.model["layers"]) == [
        {"id": "l1", "entry_id": "geometries-1", "label": "hull of the places", "feature_count": 1}
    ]
    workspace = ctx.refresh()
    entry = workspace.entries["geometries-1"]
    assert entry.kind == "geometries"
    assert entry.latest.sources == (OSM,)
    assert [d.entry_id for d in entry.latest.derived_from] == ["places-1"]
    (layer,) = workspace.layers
    assert layer.id == "l1"
    assert layer.entry.entry_id == "geometries-1"
    assert layer.minted_by == "a1"
    assert layer.bbox == pytest.approx((24.941, 60.168, 24.950, 60.171))
    assert any(isinstance(b, LayerMinted) for b in _events(ctx))
    assert workspace.analyses["a1"].layers == ("l1",)


async def test_two_entries_of_a_kind_are_merged_and_kept_apart(ctx: ToolContext) -> None:
    await seed(ctx, "places", cafes())
    await seed(ctx, "places", collection(point(24.9, 60.2, name="Far", category="museum")))
    code = (
        "return {'merged': len(places['features']),"
        " 'by_entry': {k: len(v['features']) for k, v in places_by_entry.items()},"
        " 'absent': [n for n, v in [('routes', routes), ('byod', byod),"
        " ('routes_by_entry', routes_by_entry), ('geometries', geometries)] if v is None]}"
    )
    result = await analyse(ctx, code, places_entry_ids=["places-1", "places-2"])

    assert result.model["result"] == {
        "merged": 4,
        "by_entry": {"places-1": 3, "places-2": 1},
        "absent": ["routes", "byod", "routes_by_entry", "geometries"],
    }


async def test_every_input_name_exists_and_unrequested_kinds_are_none(ctx: ToolContext) -> None:
    await seed(ctx, "places", cafes())
    names = [*ALL_KINDS, *(f"{k}_by_entry" for k in ALL_KINDS)]
    code = "return {" + ", ".join(f"{n!r}: {n} is None" for n in names) + "}"
    result = await analyse(ctx, code)

    assert result.model["result"] == {n: n not in ("places", "places_by_entry") for n in names}


# -- scope ----------------------------------------------------------------------------


def _id_fields(schema: type[Any]) -> set[str]:
    return {name for name in schema.model_fields if name.endswith("_entry_ids")}


def test_a_scope_narrows_the_schema_and_the_description() -> None:
    scoped = ANALYSE_DATA.for_scope(DataScope(kinds=["places"]))
    terse = ANALYSE_DATA

    assert _id_fields(scoped.input_schema) == {"places_entry_ids"}
    assert _id_fields(terse.input_schema) == {f"{k}_entry_ids" for k in ALL_KINDS}
    assert KIND_DOCS["places"] in scoped.description
    assert KIND_DOCS["routes"] not in scoped.description
    assert "route_progress" not in scoped.description
    for kind in ALL_KINDS:  # the terse surface names every kind but documents none
        assert f"`{kind}`" in terse.description
        assert KIND_DOCS[kind] not in terse.description
    # One scoped kind says more than the terse text says of all eight together.
    assert len(scoped.description) > len(terse.description)


def test_a_scoped_schema_refuses_ids_of_kinds_outside_the_scope() -> None:
    scoped = PROCESS_DATA.for_scope(DataScope(kinds=["geometries"]))
    assert _id_fields(scoped.input_schema) == {"geometries_entry_ids"}
    with pytest.raises(ValueError, match="places_entry_ids"):
        scoped.input_schema.model_validate({"places_entry_ids": ["places-1"], "code": "return 1"})


def test_a_scope_refuses_an_unknown_kind() -> None:
    with pytest.raises(ValueError, match=r"unknown kinds \['cafes'\]; choose from places"):
        DataScope(kinds=["places", "cafes"])
    with pytest.raises(ValueError):
        DataScope(kinds=[])
    assert DataScope(kinds=["places", "places", "routes"]).kinds == ["places", "routes"]


async def test_a_scoped_entry_runs_like_the_terse_one(ctx: ToolContext) -> None:
    await seed(ctx, "places", cafes())
    result = await call(
        ctx,
        "analyse_data",
        {"places_entry_ids": ["places-1"], "name": "n", "code": "return len(places['features'])"},
        scope=DataScope(kinds=["places"]),
    )
    assert result.model["result"] == 3


# -- process_data: the envelope -------------------------------------------------------


@pytest.mark.parametrize(
    ("envelope", "message"),
    [
        ([1, 2], "process_data code returned list; return a dict"),
        ("places", "process_data code returned str"),
        ({"polygons": {}, "fit": True}, "unknown envelope keys ['polygons', 'fit']"),
        ({}, "the envelope writes nothing"),
        ({"places": None, "fit_on_map": False}, "the envelope writes nothing"),
        ({"place_connections": [[0, 1]], "fit_on_map": True}, "place_connections need places"),
        ({"places": {}, "fit_on_map": 0}, "the envelope writes nothing"),
    ],
)
def test_check_envelope_refuses(envelope: Any, message: str) -> None:
    with pytest.raises(ToolError) as caught:
        check_envelope(envelope)
    assert message in caught.value.message


def test_check_envelope_names_the_keys_and_suggests_renames() -> None:
    with pytest.raises(ToolError) as caught:
        check_envelope({"places": {}, "polygons": {}})
    assert "the keys are places, place_connections, geometries, fit_on_map, byod" in (
        caught.value.message
    )
    assert caught.value.hint is not None
    assert "'polygons' -> 'geometries'" in caught.value.hint


def test_check_envelope_accepts_a_writing_envelope() -> None:
    envelope = {"geometries": parks(), "fit_on_map": True}
    assert check_envelope(envelope) == envelope


async def process(ctx: ToolContext, code: str, **arguments: Any) -> ToolResult:
    if not any(k.endswith("_entry_ids") for k in arguments):
        arguments["places_entry_ids"] = ["places-1"]
    result = await call(ctx, "process_data", {"code": code, **arguments})
    assert isinstance(result, ToolResult)
    return result


async def test_process_data_refuses_a_bad_envelope_as_a_failed_result(ctx: ToolContext) -> None:
    await seed(ctx, "places", cafes())
    result = await process(ctx, "return {'polygons': places}")

    assert result.failed
    assert "unknown envelope keys ['polygons']" in result.model["error"]
    assert "'polygons' -> 'geometries'" in result.model["hint"]
    assert ctx.refresh().analyses["a1"].error == result.model["error"]
    assert set(ctx.workspace.entries) == {"places-1"}


async def test_process_data_writes_places(ctx: ToolContext, ui: UiLog) -> None:
    await seed(ctx, "places", cafes(), sources=(OSM,))
    code = (
        "kept = [f for f in places['features'] if f['properties']['category'] == 'cafe']\n"
        "return {'places': {'type': 'FeatureCollection', 'features': kept}}"
    )
    result = await process(ctx, code, label="cafés only")

    assert not result.failed
    assert result.model["entry_id"] == "places-2"
    assert result.model["digest"]["feature_count"] == 2
    entry = ctx.refresh().entries["places-2"]
    assert entry.latest.label == "cafés only"
    assert entry.latest.sources == (OSM,)
    assert [d.model_dump() for d in entry.latest.derived_from] == [
        {"entry_id": "places-1", "version": 1}
    ]
    assert ctx.entry_data("places-2")["features"][0]["properties"]["name"] == "Kahvila A"
    assert "places-2" in [p.entry_id for p in ui if isinstance(p, EntryPart)]


async def test_process_data_refuses_a_polygon_among_places(ctx: ToolContext) -> None:
    await seed(ctx, "places", cafes())
    code = "return {'places': [places['features'][0], " + repr(square(24.9, 60.1, 0.01)) + "]}"
    result = await process(ctx, code)

    assert result.failed
    assert result.model["error"] == "envelope places.features[1] is a Polygon; places are Points"
    assert "geometries" in result.model["hint"]
    assert set(ctx.refresh().entries) == {"places-1"}
    # The refusal is the run's recorded error, not a success with nothing written.
    (record,) = [a for a in ctx.workspace.analyses.values() if a.tool == "process_data"]
    assert record.error == "envelope places.features[1] is a Polygon; places are Points"


async def test_places_and_geometries_make_one_places_entry(ctx: ToolContext) -> None:
    await seed(ctx, "places", cafes())
    await seed(ctx, "geometries", parks())
    code = "return {'places': places, 'geometries': geometries}"
    result = await process(
        ctx, code, places_entry_ids=["places-1"], geometries_entry_ids=["geometries-1"]
    )

    assert result.model["entry_id"] == "places-2"
    assert result.model["digest"]["members"] == ["attached_geometries"]
    assert set(ctx.refresh().entries) == {"places-1", "geometries-1", "places-2"}
    data = ctx.entry_data("places-2")
    assert len(data["features"]) == 3
    assert data["attached_geometries"]["type"] == "FeatureCollection"
    assert len(data["attached_geometries"]["features"]) == 2


async def test_place_connections_are_stored_as_index_pairs(ctx: ToolContext) -> None:
    await seed(ctx, "places", cafes())
    code = "return {'places': places, 'place_connections': [[0, 1], {'from': 1, 'to': 2}]}"
    result = await process(ctx, code)

    assert not result.failed
    assert ctx.entry_data("places-2")["connections"] == [
        {"from": 0, "to": 1},
        {"from": 1, "to": 2},
    ]


@pytest.mark.parametrize(
    ("connections", "error"),
    [
        ("[[0, 3]]", "place_connections[0] = [0, 3]: indexes must lie in 0..2"),
        ("[[0, 1], [True, False]]", "place_connections[1] = [True, False]: indexes must lie"),
        ("[{'from': 0}]", "place_connections[0] = {'from': 0}: indexes must lie"),
        ("[[0, 1, 2]]", "place_connections[0] must be {'from': i, 'to': j} or [i, j]"),
    ],
)
async def test_a_connection_that_is_not_a_pair_of_indexes_is_refused(
    ctx: ToolContext, connections: str, error: str
) -> None:
    await seed(ctx, "places", cafes())
    code = f"return {{'places': places, 'place_connections': {connections}}}"
    result = await process(ctx, code)

    assert result.failed
    assert result.model["error"].startswith(error)
    assert result.model["analysis_id"] == "a1"
    assert set(ctx.refresh().entries) == {"places-1"}


@pytest.mark.parametrize(
    ("first", "note"),
    [
        ("places", "byod was dropped: one call writes one entry, and places came first"),
        ("geometries", "byod was dropped: one call writes one entry, and geometries came first"),
    ],
)
async def test_byod_beside_places_or_geometries_is_dropped_with_a_note(
    ctx: ToolContext, first: str, note: str
) -> None:
    await seed(ctx, "places", cafes())
    await seed(ctx, "geometries", parks())
    code = f"return {{{first!r}: {first}, 'byod': {{'label': 'x', 'data': geometries}}}}"
    result = await process(
        ctx, code, places_entry_ids=["places-1"], geometries_entry_ids=["geometries-1"]
    )

    assert result.model["notes"] == [note]
    assert result.model["entry_id"] == f"{first}-2"
    assert ctx.refresh().byod == ()


async def test_byod_alone_is_written_with_its_label(ctx: ToolContext) -> None:
    await seed(ctx, "places", cafes(), sources=(OSM,))
    code = "return {'byod': {'label': 'my copy', 'data': places}}"
    result = await process(ctx, code)

    assert result.model["entry_id"] == "byod-1"
    entry = ctx.refresh().entries["byod-1"]
    assert entry.latest.label == "my copy"
    assert entry.latest.sources == (OSM,)


async def test_fit_on_map_moves_the_view_to_the_new_entry(ctx: ToolContext, ui: UiLog) -> None:
    await seed(ctx, "geometries", parks())
    result = await process(
        ctx,
        "return {'geometries': geometries, 'fit_on_map': True}",
        geometries_entry_ids=["geometries-1"],
    )

    bbox = [24.93, 60.16, 24.964, 60.179]
    assert result.model["fit_on_map"] == pytest.approx(bbox)
    view = ctx.refresh().view
    assert isinstance(view, ViewChanged)
    assert view.bbox == pytest.approx(tuple(bbox))
    assert [p.bbox for p in ui if isinstance(p, ViewPart)] == [pytest.approx(tuple(bbox))]


async def test_fit_on_map_takes_a_box(ctx: ToolContext) -> None:
    await seed(ctx, "places", cafes())
    result = await process(ctx, "return {'fit_on_map': [24.0, 60.0, 25.0, 61.0]}")

    assert result.model["fit_on_map"] == [24.0, 60.0, 25.0, 61.0]
    view = ctx.refresh().view
    assert view is not None
    assert view.bbox == (24.0, 60.0, 25.0, 61.0)


async def test_fit_on_map_with_nothing_to_fit_is_noted(ctx: ToolContext) -> None:
    await seed(ctx, "places", cafes())
    result = await process(ctx, "return {'fit_on_map': True}")

    assert not result.failed
    assert "entry_id" not in result.model
    assert result.model["notes"] == ["fit_on_map was ignored: there was nothing with a bbox to fit"]
    assert ctx.refresh().view is None


async def test_invalid_geojson_is_refused_with_intakes_message(ctx: ToolContext) -> None:
    await seed(ctx, "places", cafes())
    bad = {"type": "FeatureCollection", "features": [{"type": "Feature", "geometry": {
        "type": "Polygon", "coordinates": [[[0, 0], [1, 1]]]}, "properties": {}}]}  # fmt: skip
    result = await process(ctx, f"return {{'geometries': {bad!r}}}")

    assert result.failed
    assert result.model["error"].startswith("envelope geometries is not valid GeoJSON: ")
    assert len(result.model["error"]) > len("envelope geometries is not valid GeoJSON: ")
    assert set(ctx.refresh().entries) == {"places-1"}


async def test_process_data_needs_an_entry(ctx: ToolContext) -> None:
    with pytest.raises(ToolError) as caught:
        await call(ctx, "process_data", {"code": "return {'fit_on_map': True}"})
    assert caught.value.message == "process_data needs at least one entry to read"
    assert caught.value.hint == "this chat has no entries yet: fetch or add data first"


async def test_every_run_is_one_analysis_record(ctx: ToolContext) -> None:
    await seed(ctx, "places", cafes())
    await process(ctx, "return {'places': places}")
    await analyse(ctx, "return 0")
    kinds = [type(b).__name__ for b in _events(ctx) if isinstance(b, AnalysisRecorded)]
    assert kinds == ["AnalysisRecorded", "AnalysisRecorded"]


async def test_a_figure_minted_before_the_code_failed_is_kept_and_said(ctx: ToolContext) -> None:
    await seed(ctx, "places", cafes())
    code = "mint.value(len(places['features']), 'places', unit='places')\nreturn places['nope']"
    result = await analyse(ctx, code)
    assert result.failed and result.model["ok"] is False
    assert "KeyError" in result.model["error"]
    assert result.model["figures"] == [
        {"id": "v1", "label": "places", "value": 3, "unit": "places"}
    ]
    assert "v1 minted before the error, and kept" in result.model["notes"]
    assert [v.id for v in ctx.refresh().values] == ["v1"]
