"""The style-spec validator: valid layers of every type pass, each wrong thing is named."""

from __future__ import annotations

import fnmatch
import hashlib
import json
import time
import tomllib
from importlib import resources
from pathlib import Path
from typing import Any

import pytest

from geomint.codegen import stylespec
from geomint.codegen.stylespec import (
    LAYER_TYPES,
    MAX_EXPRESSION_DEPTH,
    MAX_EXPRESSION_NODES,
    SPEC_VERSION,
    SpecViolation,
    validate_filter,
    validate_layer,
    validate_layout_property,
    validate_paint_property,
    validate_source,
)

SOURCES = {"cafes": "geojson", "photo": "image", "sat": "raster", "roads": "vector"}


def allow_own_tiles(url: str) -> str | None:
    """The URL policy of these tests: only https://tiles.geomint.test/ is allowed."""
    if url.startswith("https://tiles.geomint.test/"):
        return None
    return "the map may load only geomint's own tiles; add the data as a geojson source instead"


VALID_LAYERS: dict[str, dict[str, Any]] = {
    "fill": {
        "id": "districts",
        "type": "fill",
        "source": "cafes",
        "minzoom": 3,
        "filter": ["==", ["geometry-type"], "Polygon"],
        "paint": {
            "fill-color": ["step", ["get", "pop"], "#fee", 1000, "#fcc", 5000, "#f00"],
            "fill-opacity": 0.5,
            "fill-outline-color": "rgba(0, 0, 0, 0.4)",
        },
        "layout": {"visibility": "visible"},
    },
    "line": {
        "id": "route",
        "type": "line",
        "source": "cafes",
        "layout": {"line-cap": "round", "line-join": "round"},
        "paint": {
            "line-gradient": ["interpolate", ["linear"], ["line-progress"], 0, "blue", 1, "red"],
            "line-width": ["interpolate", ["exponential", 1.5], ["zoom"], 5, 1, 15, 8],
        },
    },
    "circle": {
        "id": "cafe-dots",
        "type": "circle",
        "source": "cafes",
        "filter": ["all", [">=", ["get", "seats"], 3], ["!", ["has", "closed"]]],
        "paint": {
            "circle-radius": ["match", ["get", "kind"], ["cafe", "bar"], 6, "shop", 4, 2],
            "circle-color": ["case", [">", ["get", "rating"], 4], "#d62728", "steelblue"],
            "circle-stroke-width": 1,
            "circle-stroke-color": "#fff",
        },
    },
    "symbol": {
        "id": "cafe-names",
        "type": "symbol",
        "source": "cafes",
        "layout": {
            "text-field": [
                "format",
                ["get", "name"],
                {"font-scale": 1.1},
                "\n",
                {},
                ["to-string", ["get", "seats"]],
                {"text-color": "#666"},
            ],
            "text-font": ["Noto Sans Regular"],
            "text-size": ["interpolate", ["linear"], ["zoom"], 10, 10, 16, 14],
            "text-variable-anchor-offset": ["top", [0, 1], "bottom", [0, -1]],
            "icon-image": "cafe",
        },
        "paint": {"text-color": "#333", "text-halo-color": "white", "text-halo-width": 1},
    },
    "heatmap": {
        "id": "cafe-heat",
        "type": "heatmap",
        "source": "cafes",
        "maxzoom": 15,
        "paint": {
            "heatmap-weight": ["interpolate", ["linear"], ["get", "seats"], 0, 0, 50, 1],
            "heatmap-intensity": ["interpolate", ["linear"], ["zoom"], 0, 1, 15, 3],
            "heatmap-color": [
                "interpolate",
                ["linear"],
                ["heatmap-density"],
                0,
                "rgba(33, 102, 172, 0)",
                0.5,
                "hsl(60, 100%, 50%)",
                1,
                "red",
            ],
            "heatmap-radius": ["interpolate", ["linear"], ["zoom"], 0, 2, 15, 20],
            "heatmap-opacity": 0.8,
        },
    },
    "fill-extrusion": {
        "id": "buildings-3d",
        "type": "fill-extrusion",
        "source": "cafes",
        "paint": {
            "fill-extrusion-height": ["get", "area"],
            "fill-extrusion-base": 0,
            "fill-extrusion-color": "#aaa",
            "fill-extrusion-opacity": 0.8,
        },
    },
    "raster": {
        "id": "old-map",
        "type": "raster",
        "source": "photo",
        "paint": {"raster-opacity": 0.7, "raster-fade-duration": 0},
    },
    "background": {
        "id": "paper",
        "type": "background",
        "paint": {"background-color": "#f8f4f0"},
    },
}


@pytest.mark.parametrize("layer_type", sorted(VALID_LAYERS))
def test_a_realistic_layer_of_each_type_is_valid(layer_type: str) -> None:
    layer = VALID_LAYERS[layer_type]
    assert layer["type"] == layer_type
    assert validate_layer(layer, source_types=SOURCES) == []


def test_a_let_binding_and_a_raster_tile_source_are_valid() -> None:
    radius = ["let", "r", ["get", "seats"], ["*", ["var", "r"], 2]]
    assert validate_paint_property("circle", "circle-radius", radius) == []
    raster = {"type": "raster", "tiles": ["https://tiles.geomint.test/{z}/{x}/{y}.png"]}
    assert validate_source("sat", raster, url_check=allow_own_tiles) == []
    layer = {"id": "sat", "type": "raster", "source": "sat"}
    assert validate_layer(layer, source_types=SOURCES) == []


def _only(found: list[SpecViolation]) -> SpecViolation:
    assert len(found) == 1, found
    return found[0]


# (what is wrong, the call, the rule, words the message must hold)
PROPERTY_FAULTS = [
    ("unknown paint property", ("paint", "circle", "circle-raduis", 3), "unknown-property",
     ["no paint property 'circle-raduis'", "Did you mean 'circle-radius'?"]),
    ("paint given as layout", ("layout", "circle", "circle-color", "red"), "unknown-property",
     ["'circle-color' is a paint property, not a layout one"]),
    ("layout given as paint", ("paint", "line", "line-cap", "round"), "unknown-property",
     ["'line-cap' is a layout property, not a paint one"]),
    ("another type's property", ("paint", "circle", "text-color", "red"), "unknown-property",
     ["It belongs to 'symbol' layers"]),
    ("bad enum", ("layout", "line", "line-join", "rounded"), "enum",
     ['"rounded"', "Did you mean 'round'?", "'bevel', 'miter', 'round'"]),
    ("out of range", ("paint", "fill", "fill-opacity", 1.5), "range",
     ["1.5 is above the maximum", "from 0 to 1"]),
    ("below minimum", ("paint", "heatmap", "heatmap-radius", 0), "range",
     ["below the minimum", "at least 1", "pixels"]),
    ("bad colour", ("paint", "circle", "circle-color", "bleu"), "type",
     ['"bleu" is not a colour', "'#3366cc'"]),
    ("number as string", ("paint", "circle", "circle-radius", "5"), "type",
     ["drop the quotes"]),
    ("unknown operator", ("paint", "circle", "circle-radius", ["gett", "size"]), "expression",
     ["'gett' is not an expression operator", "Did you mean 'get'?"]),
    ("wrong arity", ("paint", "circle", "circle-radius", ["get"]), "expression",
     ["'get' got 0 arguments", '["get", property_name, object?]']),
    ("odd stops", ("paint", "circle", "circle-radius",
                   ["interpolate", ["linear"], ["zoom"], 5, 1, 10]), "expression",
     ["Stops come in pairs"]),
    ("stops not ascending", ("paint", "circle", "circle-radius",
                             ["interpolate", ["linear"], ["zoom"], 10, 1, 5, 2]), "expression",
     ["strictly ascending", "5 comes after 10"]),
    ("bad interpolation", ("paint", "circle", "circle-radius",
                           ["interpolate", ["linaer"], ["zoom"], 5, 1, 10, 2]), "expression",
     ["not an interpolation type", "Did you mean 'linear'?"]),
    ("match without fallback", ("paint", "circle", "circle-radius",
                                ["match", ["get", "k"], "a", 1, "b", 2]), "expression",
     ["the fallback, which is required"]),
    ("data expression on data-constant", ("paint", "heatmap", "heatmap-intensity",
                                          ["get", "n"]), "expression",
     ["heatmap-intensity is the same for every feature (data-constant)", "zoom ramp"]),
    ("line-progress outside line-gradient", ("paint", "line", "line-width",
                                             ["line-progress"]), "expression",
     ["only inside 'line-gradient'"]),
    ("zoom not at the top", ("paint", "circle", "circle-radius", ["*", ["zoom"], 2]),
     "expression", ["top-level 'step' or 'interpolate'"]),
    ("unbound var", ("paint", "circle", "circle-radius", ["var", "r"]), "expression",
     ["no enclosing 'let' binds 'r'"]),
    ("number where colour", ("paint", "circle", "circle-color", ["+", 1, 2]), "type",
     ["gives a number, but circle-color takes a colour"]),
    ("colour stop output wrong", ("paint", "circle", "circle-color",
                                  ["step", ["get", "n"], "red", 5, 7]), "type",
     ["7 is the wrong type", "colour"]),
    ("legacy function", ("paint", "fill", "fill-color", {"stops": [[0, "red"], [5, "blue"]]}),
     "expression", ["legacy function objects", "['interpolate', ['linear'], ['zoom']"]),
    ("NaN", ("paint", "circle", "circle-radius", float("nan")), "type",
     ["nan is not a number JSON can carry"]),
    ("infinity", ("paint", "circle", "circle-radius", float("inf")), "type", ["inf"]),
    ("huge integer", ("paint", "circle", "circle-radius", 10**400), "range",
     ["not a finite number"]),
    ("feature data on a constant", ("layout", "line", "visibility", ["get", "v"]), "expression",
     ["visibility takes one fixed value"]),
    ("text-field of the wrong type", ("layout", "symbol", "text-field", 42), "type",
     ["text-field takes a string or a ['format', ...] / ['get', ...] expression"]),
    ("array wrapped wrong", ("paint", "circle", "circle-radius",
                             ["at", 0, [1, 2]]), "expression", ["['literal', [...]]"]),
]  # fmt: skip


@pytest.mark.parametrize(
    ("call", "rule", "words"),
    [case[1:] for case in PROPERTY_FAULTS],
    ids=[case[0] for case in PROPERTY_FAULTS],
)
def test_each_wrong_property_names_its_rule_and_fix(
    call: tuple[str, str, str, Any], rule: str, words: list[str]
) -> None:
    kind, layer_type, name, value = call
    check = validate_paint_property if kind == "paint" else validate_layout_property
    found = check(layer_type, name, value)
    assert found, f"{name}={value!r} passed"
    assert found[0].rule == rule, found
    assert found[0].path.startswith(f"{kind}.{name}")
    for word in words:
        assert word in found[0].message, found[0].message


def test_heatmap_density_works_only_in_heatmap_color() -> None:
    assert validate_paint_property("heatmap", "heatmap-color", VALID_LAYERS["heatmap"]["paint"][
        "heatmap-color"]) == []  # fmt: skip
    found = validate_paint_property("circle", "circle-radius", ["heatmap-density"])
    message = _only(found).message
    assert "['heatmap-density'] works only inside 'heatmap-color'" in message


def test_too_deep_and_too_large_expressions_hit_the_caps_quickly() -> None:
    deep: Any = ["get", "n"]
    for _ in range(MAX_EXPRESSION_DEPTH + 2):
        deep = ["+", deep, 1]
    found = _only(validate_paint_property("circle", "circle-radius", deep))
    assert (found.rule, found.path) == ("cap", "paint.circle-radius")
    assert f"cap of {MAX_EXPRESSION_DEPTH} levels" in found.message

    wide = ["+", *([1] * 10_000_000)]
    started = time.perf_counter()
    found = _only(validate_paint_property("circle", "circle-radius", wide))
    assert time.perf_counter() - started < 0.5
    assert found.rule == "cap"
    assert f"cap of {MAX_EXPRESSION_NODES:,} parts" in found.message


def test_a_megabyte_string_is_capped_and_not_quoted_whole() -> None:
    found = _only(validate_layout_property("symbol", "text-field", "x" * 1_000_000))
    assert found.rule == "cap"
    assert "a string of 1,000,000 characters" in found.message
    assert len(found.message) < 400


def test_a_self_referencing_value_is_bounded() -> None:
    loop: list[Any] = ["+", 1]
    loop.append(loop)
    assert _only(validate_paint_property("circle", "circle-radius", loop)).rule == "cap"


def test_every_violation_is_collected_not_just_the_first() -> None:
    layer = {
        "id": "x",
        "type": "circle",
        "source": "nope",
        "colour": "red",
        "paint": {"circle-raduis": 3, "circle-color": "bleu", "circle-opacity": 3},
        "layout": {"circle-color": "red"},
    }
    found = validate_layer(layer, source_types=SOURCES)
    assert [(v.rule, v.path) for v in found] == [
        ("unknown-property", "layers.x.colour"),
        ("source", "layers.x.source"),
        ("unknown-property", "layers.x.paint.circle-raduis"),
        ("type", "layers.x.paint.circle-color"),
        ("range", "layers.x.paint.circle-opacity"),
        ("unknown-property", "layers.x.layout.circle-color"),
    ]


LAYER_FAULTS = [
    ("misspelt layer type", {"id": "h", "type": "heat-map", "source": "cafes"}, "layer-type",
     "layers.h.type", "Did you mean 'heatmap'?"),
    ("missing source", {"id": "c", "type": "circle", "source": "cafe"}, "source",
     "layers.c.source", "there is no source \"cafe\". Did you mean 'cafes'?"),
    ("no source at all", {"id": "c", "type": "circle"}, "required", "layers.c.source",
     "'cafes'"),
    ("raster over geojson", {"id": "r", "type": "raster", "source": "cafes"}, "source",
     "layers.r.source", "a raster layer cannot draw the geojson source 'cafes'"),
    ("circle over an image", {"id": "c", "type": "circle", "source": "photo"}, "source",
     "layers.c.source", "needs a source of type geojson or vector"),
    ("source-layer on geojson", {"id": "c", "type": "circle", "source": "cafes",
                                 "source-layer": "x"}, "source", "layers.c.source-layer",
     "Remove 'source-layer'"),
    ("no id", {"type": "background"}, "required", "layers.?.id", "missing"),
    ("metadata not an object", {"id": "b", "type": "background", "metadata": "note"}, "type",
     "layers.b.metadata", "metadata is a JSON object"),
    ("maxzoom out of range", {"id": "b", "type": "background", "maxzoom": 30}, "range",
     "layers.b.maxzoom", "from 0 to 24"),
    ("legacy filter", {"id": "c", "type": "circle", "source": "cafes",
                       "filter": ["==", "kind", "cafe"]}, "expression", "layers.c.filter",
     '["==", ["get", "kind"], "cafe"]'),
]  # fmt: skip


@pytest.mark.parametrize(
    ("layer", "rule", "path", "words"),
    [case[1:] for case in LAYER_FAULTS],
    ids=[case[0] for case in LAYER_FAULTS],
)
def test_each_wrong_layer_names_its_rule(
    layer: dict[str, Any], rule: str, path: str, words: str
) -> None:
    found = _only(validate_layer(layer, source_types=SOURCES))
    assert (found.rule, found.path) == (rule, path)
    assert words in found.message, found.message


@pytest.mark.parametrize(
    ("value", "words"),
    [
        (["feature-state", "hover"], "['feature-state'] works only in paint properties"),
        (["==", "$type", "Point"], '["==", ["geometry-type"], "Point"]'),
        ("yes", "a filter is an expression giving true or false"),
    ],
)
def test_wrong_filters(value: Any, words: str) -> None:
    assert words in _only(validate_filter(value)).message


@pytest.mark.parametrize(
    "value",
    [True, ["==", ["zoom"], 3], ["within", {"type": "Polygon", "coordinates": []}], ["all"]],
)
def test_valid_filters(value: Any) -> None:
    assert validate_filter(value) == []


SOURCE_FAULTS = [
    ("tiles elsewhere", {"type": "raster", "tiles": ["https://evil.example/{z}/{x}/{y}.png"]},
     "url", "sources.s.tiles[0]", "may load only geomint's own tiles"),
    ("data URL elsewhere", {"type": "geojson", "data": "https://evil.example/a.geojson"}, "url",
     "sources.s.data", "is refused: the map may load only"),
    ("image URL elsewhere", {"type": "image", "url": "http://evil.example/a.png",
                             "coordinates": [[0, 1], [1, 1], [1, 0], [0, 0]]}, "url",
     "sources.s.url", "is refused"),
    ("video", {"type": "video", "urls": ["https://tiles.geomint.test/a.mp4"]}, "source",
     "sources.s.type", "geomint does not load 'video' sources"),
    ("vector", {"type": "vector", "url": "https://tiles.geomint.test/t.json"}, "source",
     "sources.s.type", "geomint does not load 'vector' sources"),
    ("unknown type", {"type": "geojsn", "data": {}}, "source", "sources.s.type",
     "Did you mean 'geojson'?"),
    ("not GeoJSON", {"type": "geojson", "data": {"type": "Featurecollection"}}, "source",
     "sources.s.data.type", "Did you mean 'FeatureCollection'?"),
    ("no data", {"type": "geojson"}, "required", "sources.s.data", "'data'"),
    ("corner off the globe", {"type": "image", "url": "https://tiles.geomint.test/a.png",
                              "coordinates": [[0, 1], [1, 1], [1, 0], [0, 200]]}, "range",
     "sources.s.coordinates[3]", "off the globe"),
    ("three corners", {"type": "image", "url": "https://tiles.geomint.test/a.png",
                       "coordinates": [[0, 1], [1, 1], [1, 0]]}, "type",
     "sources.s.coordinates", "four [longitude, latitude] corners"),
    ("HTML attribution", {"type": "geojson", "data": {"type": "Point", "coordinates": [0, 0]},
                          "attribution": "<img src=x onerror=alert(1)>"}, "source",
     "sources.s.attribution", "plain text"),
    ("misspelt key", {"type": "geojson", "data": {"type": "Point", "coordinates": [0, 0]},
                      "buffr": 3}, "unknown-property", "sources.s.buffr",
     "Did you mean 'buffer'?"),
]  # fmt: skip


@pytest.mark.parametrize(
    ("source", "rule", "path", "words"),
    [case[1:] for case in SOURCE_FAULTS],
    ids=[case[0] for case in SOURCE_FAULTS],
)
def test_each_wrong_source_names_its_rule(
    source: dict[str, Any], rule: str, path: str, words: str
) -> None:
    found = _only(validate_source("s", source, url_check=allow_own_tiles))
    assert (found.rule, found.path) == (rule, path)
    assert words in found.message, found.message


def test_every_url_of_a_source_goes_through_the_check() -> None:
    seen: list[str] = []

    def record(url: str) -> str | None:
        seen.append(url)
        return None

    tiles = [f"https://tiles.geomint.test/{n}/{{z}}/{{x}}/{{y}}.png" for n in range(3)]
    assert validate_source("t", {"type": "raster", "tiles": tiles}, url_check=record) == []
    image = {"type": "image", "url": "https://a.test/p.png",
             "coordinates": [[0, 1], [1, 1], [1, 0], [0, 0]]}  # fmt: skip
    assert validate_source("i", image, url_check=record) == []
    geojson = {"type": "geojson", "data": "https://a.test/d.geojson"}
    assert validate_source("g", geojson, url_check=record) == []
    assert seen == [*tiles, "https://a.test/p.png", "https://a.test/d.geojson"]


@pytest.mark.parametrize(
    "value",
    [None, 3, "x", [], {1: 2}, {"type": ["geojson"]}],
)
def test_hostile_sources_never_raise(value: Any) -> None:
    found = validate_source("s", value, url_check=allow_own_tiles)
    assert found and all(isinstance(v, SpecViolation) for v in found)


@pytest.mark.parametrize(
    "layer",
    [
        None,
        {"id": "x", "type": "circle", "source": "cafes", "paint": [1]},
        {"id": "x", "type": "circle", "source": "cafes", "paint": {3: 1}},
        {"id": ["x"], "type": ["circle"], 5: 1},
        {"id": "x", "type": "fill", "source": "cafes", "filter": {"a": object()}},
    ],
)
def test_hostile_layers_never_raise(layer: Any) -> None:
    found = validate_layer(layer, source_types=SOURCES)
    assert found and all(isinstance(v, SpecViolation) for v in found)


def test_an_unknown_layer_type_in_a_property_check_is_a_programming_error() -> None:
    with pytest.raises(ValueError, match="validate_layer"):
        validate_paint_property("heat-map", "heatmap-radius", 3)


def test_messages_read_well() -> None:
    layer = {
        "id": "cafe-heat",
        "type": "heatmap",
        "source": "cafes",
        "paint": {"heatmap-raduis": 10, "heatmap-intensity": ["get", "n"]},
    }
    rendered = [str(v) for v in validate_layer(layer, source_types=SOURCES)]
    assert rendered[0].startswith(
        "layers.cafe-heat.paint.heatmap-raduis: heatmap layers have no paint property"
        " 'heatmap-raduis'. Did you mean 'heatmap-radius'? Their paint properties: "
    )
    assert rendered[1] == (
        "layers.cafe-heat.paint.heatmap-intensity: heatmap-intensity is the same for every"
        " feature (data-constant): it cannot read feature data with ['get', ...]. Give one"
        " value, or a zoom ramp ['interpolate', ['linear'], ['zoom'], ...]."
    )
    source = {"type": "raster", "tiles": ["https://evil.example/{z}/{x}/{y}.png"]}
    (refused,) = validate_source("sat", source, url_check=allow_own_tiles)
    assert str(refused) == (
        'sources.sat.tiles[0]: "https://evil.example/{z}/{x}/{y}.png" is refused: the map may'
        " load only geomint's own tiles; add the data as a geojson source instead"
    )
    (wrong,) = validate_layer(
        {"id": "h", "type": "heat-map", "source": "cafes"}, source_types=SOURCES
    )
    assert str(wrong) == (
        "layers.h.type: \"heat-map\" is not a layer type. Did you mean 'heatmap'? Layer types:"
        " 'background', 'circle', 'color-relief', 'fill', 'fill-extrusion', 'heatmap',"
        " 'hillshade', 'line', 'raster', 'symbol'."
    )


def test_the_layer_types_come_from_the_spec() -> None:
    assert set(VALID_LAYERS) <= LAYER_TYPES
    assert {"hillshade", "color-relief"} <= LAYER_TYPES


def test_the_vendored_spec_is_the_recorded_one() -> None:
    folder = resources.files("geomint.codegen").joinpath("spec")
    vendor = json.loads(folder.joinpath("VENDOR.json").read_text(encoding="utf-8"))
    data = folder.joinpath(vendor["path"]).read_bytes()
    assert vendor["version"] == SPEC_VERSION
    assert vendor["name"] == "@maplibre/maplibre-gl-style-spec"
    assert hashlib.sha256(data).hexdigest() == vendor["sha256"]
    assert len(data) == vendor["bytes"]
    assert json.loads(data)["$version"] == 8
    assert folder.joinpath(vendor["licence_file"]).is_file()


def test_the_spec_version_is_the_one_the_page_s_maplibre_depends_on() -> None:
    # maplibre-gl 6.20.0 depends on @maplibre/maplibre-gl-style-spec ^26.11.0.
    page = resources.files("geomint.server").joinpath("static/vendor/VENDOR.json")
    packages = json.loads(page.read_text(encoding="utf-8"))["packages"]
    maplibre = next(p for p in packages if p["name"] == "maplibre-gl")
    assert (maplibre["version"], SPEC_VERSION) == ("6.20.0", "26.11.0")


def test_the_spec_ships_as_package_data() -> None:
    root = Path(__file__).resolve().parents[2]
    config = tomllib.loads((root / "pyproject.toml").read_text(encoding="utf-8"))
    patterns = config["tool"]["setuptools"]["package-data"]["geomint"]
    folder = root / "src" / "geomint" / "codegen" / "spec"
    names = sorted(p.name for p in folder.iterdir())
    assert names == ["LICENSE.txt", "VENDOR.json", "maplibre-style-spec.json"]
    for name in names:
        assert any(fnmatch.fnmatch(f"codegen/spec/{name}", p) for p in patterns), name


def test_the_public_surface() -> None:
    assert set(stylespec.__all__) == {
        "LAYER_TYPES", "MAX_EXPRESSION_DEPTH", "MAX_EXPRESSION_NODES", "MAX_STRING_CHARS",
        "SPEC_VERSION", "SUPPORTED_SOURCE_TYPES", "SpecViolation", "UrlCheck",
        "validate_filter", "validate_layer", "validate_layout_property",
        "validate_paint_property", "validate_source",
    }  # fmt: skip
