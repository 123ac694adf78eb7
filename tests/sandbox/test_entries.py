"""Big layers by reference: fidelity of the column round trip, laziness, build-ahead."""

from __future__ import annotations

from typing import Any

import geopandas as gpd
import pytest
import shapely

from geomint.errors import UsageError
from geomint.sandbox import Entry, Sandbox

POINTS: dict[str, Any] = {
    "type": "FeatureCollection",
    "name": "cafes",
    "features": [
        {"type": "Feature", "id": 7, "geometry": {"type": "Point", "coordinates": [13.4, 52.5]},
         "properties": {"name": "A", "rating": 4.5, "tags": ["wifi", "cake"], "open": True}},
        {"type": "Feature", "id": "b", "geometry": {"type": "Point", "coordinates": [13.5, 52.6]},
         "properties": {"name": "B", "rating": None, "tags": [], "open": False}},
    ],
}  # fmt: skip
POLYGONS: dict[str, Any] = {
    "type": "FeatureCollection",
    "features": [
        {"type": "Feature", "properties": {"district": "Mitte", "pop": 100},
         "geometry": {"type": "Polygon",
                      "coordinates": [[[13.3, 52.5], [13.4, 52.5], [13.4, 52.6], [13.3, 52.5]]]}},
        {"type": "Feature", "properties": {"district": "Nord", "pop": 7},
         "geometry": {"type": "LineString", "coordinates": [[13.0, 52.0], [13.1, 52.1]]}},
        {"type": "Feature", "properties": {"district": "Nowhere", "pop": 0}, "geometry": None},
    ],
}  # fmt: skip


@pytest.mark.parametrize("layer", [POINTS, POLYGONS], ids=["points", "mixed"])
def test_features_come_back_as_they_went_in(any_mode: Sandbox, layer: dict[str, Any]) -> None:
    entry = Entry("byod-1", len(layer["features"]), layer)
    result = any_mode.run("return byod_by_entry['byod-1']", {"byod_by_entry": {"byod-1": entry}})
    assert result.ok, result.error
    assert result.value == layer


def test_a_layer_can_be_an_input_of_its_own(any_mode: Sandbox) -> None:
    result = any_mode.run("return len(layer['features'])", {"layer": Entry("x-1", 1, POINTS)})
    assert result.value == 2


def test_geodataframe_straight_from_columns(any_mode: Sandbox) -> None:
    code = (
        "gdf = places_by_entry['places-1'].to_geodataframe()\n"
        "return [str(gdf.crs), list(gdf.columns), gdf.geometry.x.round(1).tolist(),\n"
        "        gdf['tags'].tolist()]"
    )
    result = any_mode.run(code, {"places_by_entry": {"places-1": Entry("places-1", 1, POINTS)}})
    assert result.ok, result.error
    crs, columns, xs, tags = result.value  # type: ignore[misc]
    assert crs == "EPSG:4326"
    assert columns == ["name", "rating", "tags", "open", "geometry"]
    assert xs == [13.4, 13.5]
    assert tags == [["wifi", "cake"], []]


def test_an_entry_made_from_a_geodataframe(any_mode: Sandbox) -> None:
    frame = gpd.GeoDataFrame(
        {"name": ["a", "b"]},
        geometry=[shapely.Point(500_000, 0), shapely.Point(600_000, 0)],
        crs="EPSG:32633",
    )
    entry = Entry("byod-2", 3, frame)
    result = any_mode.run(
        "f = layer['features']\nreturn [f[0]['properties']['name'], "
        "round(f[0]['geometry']['coordinates'][0], 3)]",
        {"layer": entry},
    )
    assert result.value == ["a", 15.0]  # reprojected to EPSG:4326 (UTM 33N's central meridian)


def test_mutating_a_layer_never_reaches_the_next_call(isolated: Sandbox) -> None:
    inputs = {"places_by_entry": {"places-1": Entry("places-1", 1, POINTS)}}
    code = (
        "fc = places_by_entry['places-1']\n"
        "names = [f['properties']['name'] for f in fc['features']]\n"
        "fc['features'].clear()\n"
        "return names"
    )
    # The first call's child reads the features, so the next spare builds them ahead.
    assert isolated.run(code, inputs).value == ["A", "B"]
    assert isolated.run(code, inputs).value == ["A", "B"]
    assert isolated.run(code, inputs).value == ["A", "B"]


def test_a_new_version_is_a_new_layer(isolated: Sandbox) -> None:
    code = "return [f['properties']['name'] for f in layer['features']]"
    assert isolated.run(code, {"layer": Entry("byod-9", 1, POINTS)}).value == ["A", "B"]
    changed = {**POINTS, "features": POINTS["features"][:1]}
    assert isolated.run(code, {"layer": Entry("byod-9", 2, changed)}).value == ["A"]


def test_the_collection_is_a_real_dict(in_process: Sandbox) -> None:
    code = (
        "fc = layer\n"
        "return [sorted(fc), 'features' in fc, len(fc.get('features')), fc['name'],\n"
        "        isinstance(fc, dict)]"
    )
    result = in_process.run(code, {"layer": Entry("byod-1", 1, POINTS)})
    assert result.value == [["features", "name", "type"], True, 2, "cafes", True]


def test_changed_data_under_an_old_version_is_refused(isolated: Sandbox) -> None:
    isolated.run("return 1", {"layer": Entry("byod-5", 1, POINTS)})
    with pytest.raises(UsageError, match="byod-5 version 1 was passed before with different"):
        isolated.run("return 1", {"layer": Entry("byod-5", 1, POLYGONS)})
    # the same data wrapped again is the same layer
    assert isolated.run("return 2", {"layer": Entry("byod-5", 1, POINTS)}).value == 2


def test_only_feature_collections_and_frames_are_entries() -> None:
    with pytest.raises(TypeError, match="FeatureCollection or a GeoDataFrame"):
        Entry("byod-1", 1, [1, 2, 3])


def test_hints_see_the_property_names_of_a_layer(in_process: Sandbox) -> None:
    result = in_process.run(
        "return [f['properties']['nme'] for f in places_by_entry['places-1']['features']]",
        {"places_by_entry": {"places-1": Entry("places-1", 1, POINTS)}},
    )
    assert result.error is not None and result.error.type == "KeyError"
    assert result.hint is not None and "rating" in result.hint
