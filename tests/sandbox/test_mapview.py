"""``mapview``: map code records MapLibre-style changes, and the host replays them."""

from __future__ import annotations

import base64
import struct
import zlib
from typing import Any

import numpy as np
import pytest

from geomint.errors import UsageError
from geomint.sandbox import MapCodeError, MapView, Sandbox, png_size, replay
from geomint.sandbox._mapview import MAX_ADDED, MAX_OPS, MAX_SOURCE_FEATURES

STYLE: dict[str, Any] = {
    "sources": {
        "places-1": {"type": "geojson", "geomint": True},
        "geometries-1": {"type": "geojson", "geomint": True},
    },
    "layers": [
        {"id": "geometries-1-fill", "type": "fill", "source": "geometries-1", "geomint": True},
        {"id": "places-1-circle", "type": "circle", "source": "places-1", "geomint": True},
    ],
}

HEATMAP = """
mapview.add_layer({"id": "cafe-heat", "type": "heatmap", "source": "places-1",
                   "paint": {"heatmap-radius": 20}}, before="places-1-circle")
mapview.set_paint_property("geometries-1-fill", "fill-color", "#2a9d8f")
mapview.fly_to(center=[24.94, 60.17], zoom=13)
"""


def _ops(result: Any) -> list[dict[str, Any]]:
    return [op.model_dump() for op in result.map_ops]


def test_map_code_needs_no_return_and_records_each_call_with_its_line(any_mode: Sandbox) -> None:
    result = any_mode.run(HEATMAP, mapview=STYLE)
    assert result.ok, result.error
    assert [(op["op"], op["line"]) for op in _ops(result)] == [
        ("add_layer", 2),
        ("set_paint_property", 4),
        ("fly_to", 5),
    ]


def test_the_diff_lists_what_was_added_updated_and_where_the_camera_goes() -> None:
    view = MapView(STYLE)
    view.add_layer(
        {"id": "cafe-heat", "type": "heatmap", "source": "places-1"}, before="places-1-circle"
    )
    view.set_paint_property("geometries-1-fill", "fill-color", "#2a9d8f")
    view.fly_to(center=[24.94, 60.17], zoom=13)
    diff = view.diff()
    assert diff["added"] == {
        "sources": {},
        "layers": [
            {
                "id": "cafe-heat",
                "type": "heatmap",
                "source": "places-1",
                "before": "places-1-circle",
            }
        ],
    }
    assert diff["updated"] == {
        "layers": [
            {
                "id": "geometries-1-fill",
                "paint": {"fill-color": "#2a9d8f"},
                "previous_paint": {"fill-color": None},
            }
        ]
    }
    assert diff["camera"] == {"kind": "fly_to", "center": [24.94, 60.17], "zoom": 13}
    assert diff["removed"] == {"sources": [], "layers": []}


def test_the_host_replay_gives_the_same_diff_as_the_child(isolated: Sandbox) -> None:
    result = isolated.run(HEATMAP, mapview=STYLE)
    child = MapView(STYLE)
    child.add_layer(
        {"id": "cafe-heat", "type": "heatmap", "source": "places-1",
         "paint": {"heatmap-radius": 20}},
        before="places-1-circle",
    )  # fmt: skip
    child.set_paint_property("geometries-1-fill", "fill-color", "#2a9d8f")
    child.fly_to(center=[24.94, 60.17], zoom=13)
    assert replay(STYLE, _ops(result)).diff() == child.diff()


def test_a_mistake_fails_on_its_own_line_naming_what_exists(in_process: Sandbox) -> None:
    code = "x = 1\nmapview.add_layer({'id': 'a', 'type': 'circle', 'source': 'cafes'})"
    result = in_process.run(code, mapview=STYLE)
    assert not result.ok and result.error is not None
    assert result.error.type == "MapCodeError" and result.error.line == 2
    assert "no source 'cafes'; the sources are geometries-1, places-1" in result.error.message


def test_geomint_layers_can_be_restyled_but_not_removed() -> None:
    view = MapView(STYLE)
    with pytest.raises(MapCodeError, match=r"cannot remove it\. Hide the entry"):
        view.remove_layer("places-1-circle")
    with pytest.raises(MapCodeError, match="entry of the chat; map code cannot remove it"):
        view.remove_source("places-1")


def test_a_geojson_source_names_an_entry_or_carries_data_never_a_url() -> None:
    view = MapView(STYLE)
    view.add_source("copy", {"type": "geojson", "data": "places-1"})
    assert view.get_style()["sources"]["copy"]["data"] == {"entry": "places-1"}
    with pytest.raises(MapCodeError, match="URLs are not allowed"):
        view.add_source("evil", {"type": "geojson", "data": "https://evil.example/x.json"})
    with pytest.raises(MapCodeError, match="map code adds 'geojson' sources"):
        view.add_source("t", {"type": "raster", "tiles": ["https://evil.example/{z}/{x}/{y}"]})
    with pytest.raises(MapCodeError, match="which map code cannot set"):
        view.add_source("u", {"type": "geojson", "data": "places-1", "url": "https://x.example"})


def test_a_built_source_is_capped_in_features() -> None:
    view = MapView(STYLE)
    point = {
        "type": "Feature",
        "properties": {},
        "geometry": {"type": "Point", "coordinates": [0, 0]},
    }
    view.add_source("one", {"type": "geojson", "data": point})
    assert view.get_style()["sources"]["one"]["data"]["features"] == [point]
    with pytest.raises(MapCodeError, match="at most 50,000 per source"):
        view.add_source("many", {"type": "geojson", "data": [point] * (MAX_SOURCE_FEATURES + 1)})


def test_an_image_source_is_encoded_as_a_png_named_by_its_hash() -> None:
    view = MapView(STYLE)
    pixels = np.zeros((3, 5, 4), dtype=np.uint8)
    pixels[1, 2] = [255, 0, 0, 255]
    view.add_source("density", {"type": "image", "data": pixels, "bounds": [24, 60, 25, 61]})
    source = view.get_style()["sources"]["density"]
    png = view.images[source["image"]["sha256"]]
    assert png_size(png) == (5, 3)
    assert source["coordinates"] == [[24, 61], [25, 61], [25, 60], [24, 60]]
    # The IDAT decompresses to each row's filter byte and its RGBA pixels.
    length = struct.unpack(">I", png[33:37])[0]
    rows = zlib.decompress(png[41 : 41 + length])
    assert rows[1 * 21 + 1 + 2 * 4 : 1 * 21 + 1 + 3 * 4] == bytes([255, 0, 0, 255])
    with pytest.raises(MapCodeError, match="uint8 of shape"):
        view.add_source(
            "bad", {"type": "image", "data": pixels.astype(float), "bounds": [0, 0, 1, 1]}
        )


@pytest.mark.parametrize(
    "png",
    [
        b"GIF89a" + b"\0" * 40,
        b"\x89PNG\r\n\x1a\n"
        + struct.pack(">I", 13)
        + b"IHDR"
        + struct.pack(">II", 50_000, 50_000)
        + b"\0" * 9,
    ],
    ids=["not-png", "too-many-pixels"],
)
def test_replayed_image_bytes_are_checked_again_on_the_host(png: bytes) -> None:
    op = {
        "op": "add_source",
        "line": 3,
        "args": {
            "source_id": "x",
            "source": {
                "type": "image",
                "png": base64.b64encode(png).decode(),
                "bounds": [0, 0, 1, 1],
            },
        },
    }
    with pytest.raises(MapCodeError, match=r"line 3: .*(not a PNG|pixels)"):
        replay(STYLE, [op])


def test_replay_refuses_what_no_mapview_call_makes() -> None:
    with pytest.raises(MapCodeError, match="operation 0 is not a mapview call"):
        replay(STYLE, [{"op": "__class__", "args": {}, "line": 1}])
    forged = {"op": "remove_layer", "args": {"layer_id": "places-1-circle"}, "line": 7}
    with pytest.raises(MapCodeError, match="line 7: 'places-1-circle' is one of geomint's"):
        replay(STYLE, [forged])
    with pytest.raises(MapCodeError, match=f"at most {MAX_OPS} changes"):
        replay(STYLE, [{"op": "fly_to", "args": {"zoom": 3}, "line": 1}] * (MAX_OPS + 1))


def test_caps_on_what_one_run_adds() -> None:
    view = MapView(STYLE)
    for index in range(MAX_ADDED):
        view.add_layer({"id": f"l{index}", "type": "circle", "source": "places-1"})
    with pytest.raises(MapCodeError, match=f"at most {MAX_ADDED} layers"):
        view.add_layer({"id": "one-more", "type": "circle", "source": "places-1"})


def test_animation_keyframes_rise_from_0_to_1_over_the_same_properties() -> None:
    view = MapView(STYLE)
    view.add_layer({"id": "r", "type": "line", "source": "places-1"})
    step = ["step", ["line-progress"], "#e63946", 0, "rgba(0,0,0,0)"]
    end = ["step", ["line-progress"], "#e63946", 1, "rgba(0,0,0,0)"]
    view.animate("r", [{"at": 0, "paint": {"line-gradient": step}},
                       {"at": 1, "paint": {"line-gradient": end}}], duration_ms=4000)  # fmt: skip
    assert view.get_style()["layers"][-1]["paint"] == {"line-gradient": step}
    assert view.diff()["animations"] == [
        {
            "layer_id": "r",
            "keyframes": [{"at": 0, "paint": {"line-gradient": step}},
                          {"at": 1, "paint": {"line-gradient": end}}],
            "duration_ms": 4000,
            "repeat": False,
        }
    ]  # fmt: skip
    with pytest.raises(MapCodeError, match="rise from 0 to 1"):
        view.animate(
            "r", [{"at": 0.5, "paint": {"line-width": 1}}, {"at": 0.2, "paint": {"line-width": 2}}]
        )
    with pytest.raises(MapCodeError, match="the same paint properties"):
        view.animate(
            "r", [{"at": 0, "paint": {"line-width": 1}}, {"at": 1, "paint": {"line-opacity": 1}}]
        )


def test_get_style_is_a_copy_and_marks_geomint_layers() -> None:
    view = MapView(STYLE)
    style = view.get_style()
    style["layers"].clear()
    assert [layer["geomint"] for layer in view.get_style()["layers"]] == [True, True]


def test_mapview_is_not_an_input_name(in_process: Sandbox) -> None:
    with pytest.raises(UsageError, match="'mapview' is reserved"):
        in_process.run("return 1", {"mapview": 1})


def test_bodies_without_a_mapview_do_not_see_one(in_process: Sandbox) -> None:
    result = in_process.run("return mapview")
    assert not result.ok and result.error is not None and result.error.type == "NameError"


RASTER_STYLE: dict[str, Any] = {
    "sources": {"rasters-1": {"type": "image", "geomint": True, "coordinates": [
        [24.9, 60.2], [25.0, 60.2], [25.0, 60.1], [24.9, 60.1]]}},
    "layers": [{"id": "rasters-1-raster", "type": "raster", "source": "rasters-1",
                "geomint": True}],
    "entries": ["rasters-1"],
    "rasters": {"rasters-1": {"coordinates": [[24.9, 60.2], [25.0, 60.2], [25.0, 60.1],
                                              [24.9, 60.1]], "version": 2}},
    "chat": "c1",
}  # fmt: skip


@pytest.mark.parametrize(
    "source",
    [
        {"type": "image", "data": "rasters-1"},
        {"type": "image", "url": "/api/chats/c1/entries/rasters-1/raster.png"},
        {"type": "image", "url": "/api/chats/c1/entries/rasters-1/raster.png?version=2"},
    ],
)
def test_an_image_of_a_raster_entry_names_it_and_takes_its_corners(source: Any) -> None:
    view = MapView(RASTER_STYLE)
    view.add_source("grid", source)
    added = view.diff()["added"]["sources"]["grid"]  # type: ignore[index, call-overload]
    corners = RASTER_STYLE["rasters"]["rasters-1"]["coordinates"]
    assert added == {"type": "image", "raster": {"entry": "rasters-1"}, "coordinates": corners}
    # The host replays the record, and gets the same.
    again = replay(RASTER_STYLE, view.ops)
    assert again.diff() == view.diff()
    assert not view.images  # no pixels travel: the page draws geomint's own picture


@pytest.mark.parametrize(
    ("source", "said"),
    [
        ({"type": "image", "url": "/api/chats/c1/entries/rasters-1/raster.png?version=1"},
         "rasters-1 is at version 2"),
        ({"type": "image", "url": "/api/chats/c2/entries/rasters-1/raster.png"},
         "URLs are not allowed"),
        ({"type": "image", "url": "http://127.0.0.1/api/chats/c1/entries/rasters-1/raster.png"},
         "URLs are not allowed"),
        ({"type": "image", "data": "rasters-2"}, "is not a raster entry of this chat"),
        ({"type": "image", "data": "rasters-1", "url": "/x"}, "names its raster entry once"),
        ({"type": "geojson", "data": "rasters-1"}, "rasters-1 is a raster entry, not features"),
    ],
)  # fmt: skip
def test_a_raster_picture_from_elsewhere_or_as_features_is_refused(source: Any, said: str) -> None:
    with pytest.raises(MapCodeError) as caught:
        MapView(RASTER_STYLE).add_source("grid", source)
    assert said in str(caught.value)


def test_a_raster_entrys_own_layer_is_restyled_not_removed() -> None:
    view = MapView(RASTER_STYLE)
    view.set_paint_property("rasters-1-raster", "raster-saturation", -1)
    with pytest.raises(MapCodeError, match="cannot remove"):
        view.remove_layer("rasters-1-raster")
