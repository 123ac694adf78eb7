"""Our own hostile JSON corpus, one family per section, each case with its exact verdict.

A refused case asserts the exact problem text: what is wrong, where (relative to what was
passed) and what to do. An accepted case asserts the exact repairs recorded and the data
that came out. The validators' suite in ``test_bad_geojson.py`` is separate.
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pytest
import shapely
from shapely.geometry import shape

from geomint.intake import IntakeError, Layer, load

EXAMPLE = 'expected a GeoJSON object such as {"type": "FeatureCollection", "features": [...]}'
ALL_TYPES = (
    "Point, MultiPoint, LineString, MultiLineString, Polygon, MultiPolygon, "
    "GeometryCollection, Feature, FeatureCollection"
)
GEOMETRY_TYPES = (
    "Point, MultiPoint, LineString, MultiLineString, Polygon, MultiPolygon, GeometryCollection"
)
NOT_A_NUMBER = "write it as a JSON number, without quotes"
RANGE = "EPSG:4326 needs -180<=lon<=180 and -90<=lat<=90 (longitudes up to +/-360 are wrapped)"
TOO_DEEP = (
    "nesting is deeper than 64 levels; no GeoJSON needs that, "
    "so the input is refused as hostile or corrupt"
)
DUPLICATE = "the meaning is ambiguous, so it is refused; keep one of them"
RESAVE = (
    "GeoJSON must be UTF-8 (RFC 7946 s11): re-save the file as UTF-8, e.g. "
    "iconv -f latin1 -t utf-8 in.geojson > out.geojson"
)
SURROGATE = (
    "which is not a Unicode character and cannot be stored as UTF-8; remove it or replace "
    "it with the intended character"
)
NON_FINITE = "replace it with the real value or remove the feature"
WRAPPED = "longitudes beyond +/-180 (up to +/-360) wrapped into [-180, 180]"
SPLIT = (
    "geometries crossing the antimeridian split at +/-180 (an edge spanning more than "
    "180 degrees of longitude is read as crossing it)"
)
SQUARE = [[0.0, 0.0], [1.0, 0.0], [1.0, 1.0], [0.0, 1.0], [0.0, 0.0]]


def _bytes(value: object) -> bytes:
    return json.dumps(value).encode()


def _fc(*geometries: object, **members: object) -> dict[str, Any]:
    features = [{"type": "Feature", "properties": {}, "geometry": g} for g in geometries]
    return {"type": "FeatureCollection", **members, "features": features}


def _point(lon: object, lat: object) -> dict[str, object]:
    return {"type": "Point", "coordinates": [lon, lat]}


def _line(*positions: object) -> dict[str, object]:
    return {"type": "LineString", "coordinates": list(positions)}


def _polygon(*rings: object) -> dict[str, object]:
    return {"type": "Polygon", "coordinates": list(rings)}


def _nested(depth: int) -> list[object]:
    value: list[object] = []
    for _ in range(depth - 1):
        value = [value]
    return value


def _collections(depth: int) -> dict[str, object]:
    value: dict[str, object] = {"type": "Point", "coordinates": [1, 2]}
    for _ in range(depth):
        value = {"type": "GeometryCollection", "geometries": [value]}
    return value


def _problems(source: object, **kwargs: Any) -> tuple[str, ...]:
    with pytest.raises(IntakeError) as caught:
        load(source, **kwargs)
    return caught.value.problems


def _repairs(layer: Layer) -> dict[str, tuple[int, tuple[int, ...]]]:
    return {r.kind: (r.count, r.feature_indices) for r in layer.report.repairs}


def _geometries(layer: Layer) -> list[Any]:
    return [f["geometry"] for f in layer.data["features"]]


# --- empty input -----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("raw", "detail"),
    [
        pytest.param(b"", "0 bytes", id="zero-bytes"),
        pytest.param(b" \n\t\r\n", "5 bytes, all whitespace", id="whitespace"),
        pytest.param(b"\xef\xbb\xbf", "3 bytes: only a byte-order mark", id="only-bom"),
        pytest.param(b"\xef\xbb\xbf \n", "5 bytes, all whitespace", id="bom-and-whitespace"),
    ],
)
def test_empty_input_is_refused(raw: bytes, detail: str) -> None:
    assert _problems(raw) == (f"the input is empty ({detail}); {EXAMPLE}",)


def test_an_empty_file_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "empty.geojson"
    path.write_bytes(b"")
    assert _problems(path) == (f"the input is empty (0 bytes); {EXAMPLE}",)


def test_a_line_delimited_file_of_blank_lines_is_refused() -> None:
    assert _problems(b"\n  \n\n", label="blank.geojsonl") == (
        "the input has no features (every line is blank)",
    )


def test_an_empty_collection_loads_with_a_note() -> None:
    layer = load(_fc())
    assert layer.data == {"type": "FeatureCollection", "features": []}
    assert layer.report.warnings == ("the input has no features; the layer is empty",)
    assert layer.report.bbox is None


# --- broken JSON syntax ----------------------------------------------------------------

TRUNCATED = "the file looks truncated: re-export or re-download it"


@pytest.mark.parametrize(
    ("raw", "problem"),
    [
        pytest.param(
            b'{"type": "Point", "coordinates": [1,',
            "not valid JSON: the text ends too early at line 1 column 37 (char 36) "
            f"(Expecting value); {TRUNCATED}",
            id="truncated-in-array",
        ),
        pytest.param(
            b'{"type": "Poi',
            "not valid JSON: the string that starts at line 1 column 10 (char 9) is never "
            "closed; the text looks truncated (re-export or re-download it), or a closing "
            "quote is missing",
            id="truncated-in-string",
        ),
        pytest.param(
            b'{"type": "FeatureCollection", "features": [\n  {"type": "Feature"',
            "not valid JSON: the text ends too early at line 2 column 21 (char 64) "
            f"(Expecting ',' delimiter); {TRUNCATED}",
            id="truncated-mid-feature",
        ),
        pytest.param(
            b'{"type": "Point", "coordinates": [1, 2]} xyz',
            "not valid JSON: unexpected text after the end of the JSON value at line 1 "
            "column 42 (char 41); remove it (for one Feature per line, name the file "
            ".geojsonl)",
            id="trailing-garbage",
        ),
        pytest.param(
            _bytes(_point(1, 2)) + _bytes(_point(3, 4)),
            "not valid JSON: unexpected text after the end of the JSON value at line 1 "
            "column 41 (char 40); remove it (for one Feature per line, name the file "
            ".geojsonl)",
            id="two-documents-concatenated",
        ),
        pytest.param(
            b'{"type": "Point" "coordinates": [1, 2]}',
            "not valid JSON: Expecting ',' delimiter at line 1 column 18 (char 17); fix the "
            "syntax or re-export the file",
            id="missing-comma",
        ),
        pytest.param(
            b"{'type': 'Point', 'coordinates': [1, 2]}",
            "not valid JSON: Expecting property name enclosed in double quotes at line 1 "
            "column 2 (char 1); fix the syntax or re-export the file",
            id="single-quotes",
        ),
        pytest.param(
            b'{"type": "Point", "coordinates": [1, 2,]}',
            "not valid JSON: a trailing comma at line 1 column 39 (char 38) before the "
            "closing bracket; remove the comma",
            id="trailing-comma",
        ),
        pytest.param(
            b'{"type": "Feature", "properties": {"a": 1,\n}, "geometry": null}',
            "not valid JSON: a trailing comma at line 1 column 42 (char 41) before the "
            "closing bracket; remove the comma",
            id="trailing-comma-in-an-object",
        ),
    ],
)
def test_broken_syntax_is_located(raw: bytes, problem: str) -> None:
    assert _problems(raw) == (problem,)


def test_broken_syntax_in_line_delimited_input_names_the_line() -> None:
    raw = _bytes(_point(1, 2)) + b'\n{"type": "Point", "coordinates": [1 2]}\n'
    assert _problems(raw, label="points.geojsonl") == (
        "line 2: not valid JSON: Expecting ',' delimiter at column 37 (char 36); fix the "
        "syntax or re-export the file",
    )


def test_a_line_separator_inside_a_string_does_not_split_a_line() -> None:
    raw = '{"type": "Feature", "properties": {"a": "x\u2028y"}, "geometry": null}\r\n'
    layer = load((raw * 2).encode(), label="notes.geojsonl")
    assert [f["properties"] for f in layer.data["features"]] == [{"a": "x\u2028y"}] * 2


# --- a root that is not an object ------------------------------------------------------

AN_OBJECT = "expected an object with a 'type' member, such as a FeatureCollection"
WRAP_LIST = 'to load a list of Features, wrap it: {"type": "FeatureCollection", "features": [...]}'


@pytest.mark.parametrize(
    ("raw", "problem"),
    [
        pytest.param(b'"hello"', f'found the string "hello"); {AN_OBJECT}', id="string"),
        pytest.param(b"42", f"found a number); {AN_OBJECT}", id="number"),
        pytest.param(b"null", f"found null); {AN_OBJECT}", id="null"),
        pytest.param(b"true", f"found true); {AN_OBJECT}", id="boolean"),
        pytest.param(b"[1, 2]", f"found an array); {WRAP_LIST}", id="array"),
        pytest.param(
            _bytes([{"type": "Feature", "properties": {}, "geometry": None}]),
            f"found an array); {WRAP_LIST}",
            id="array-of-features",
        ),
    ],
)
def test_a_root_that_is_not_an_object_is_refused(raw: bytes, problem: str) -> None:
    assert _problems(raw) == (f"root must be a GeoJSON object ({problem}",)


# --- wrong 'type' values ---------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "problem"),
    [
        pytest.param(
            {"type": "point", "coordinates": [1, 2]},
            "root: type names are case-sensitive: 'point' is not 'Point'; fix the case",
            id="lower-case-point",
        ),
        pytest.param(
            {"type": "FEATURE", "properties": {}, "geometry": None},
            "root: type names are case-sensitive: 'FEATURE' is not 'Feature'; fix the case",
            id="upper-case-feature",
        ),
        pytest.param(
            {"type": "Circle", "coordinates": [1, 2], "radius": 5},
            f"root: unknown type 'Circle'; expected one of {ALL_TYPES}",
            id="circle",
        ),
        pytest.param(
            {"type": "Polgon", "coordinates": []},
            f"root: unknown type 'Polgon' (did you mean 'Polygon'?); expected one of {ALL_TYPES}",
            id="misspelt-polygon",
        ),
        pytest.param(
            {"type": 7, "coordinates": [1, 2]},
            "root: 'type' member must be a string (found a number); write the type name in "
            'quotes, e.g. "type": "FeatureCollection"',
            id="numeric-type",
        ),
        pytest.param(
            {"coordinates": [1, 2]},
            'root: \'type\' member required; add it, e.g. "type": "FeatureCollection"',
            id="no-type",
        ),
        pytest.param(
            _fc(_point(1, 2))["features"][0] | {"geometry": {"type": "Feature"}},
            f"geometry: a Feature cannot stand here; expected one of {GEOMETRY_TYPES}",
            id="feature-as-geometry",
        ),
        pytest.param(
            {"type": "FeatureCollection", "features": [_point(1, 2)]},
            "features[0]: feature type 'Point' is not 'Feature': a FeatureCollection holds "
            'Features, so wrap it as {"type": "Feature", "properties": {}, "geometry": '
            "<the Point>}",
            id="bare-geometry-in-a-collection",
        ),
        pytest.param(
            {"type": "FeatureCollection", "features": [{"type": "Featur", "geometry": None}]},
            "features[0]: feature type 'Featur' is not 'Feature' (did you mean 'Feature'?)",
            id="misspelt-feature",
        ),
    ],
)
def test_wrong_type_values_are_refused(value: dict[str, object], problem: str) -> None:
    assert _problems(_bytes(value)) == (problem,)


# --- coordinates of the wrong type or shape --------------------------------------------


@pytest.mark.parametrize(
    ("geometry", "problem"),
    [
        pytest.param(
            {"type": "Point", "coordinates": "1,2"},
            'coordinates: a position must be an array of numbers (found the string "1,2"); '
            "write it as [longitude, latitude]",
            id="coordinates-as-a-string",
        ),
        pytest.param(
            _point("1", "2"),
            "coordinates[0]: each element of a position must be a number (found the string "
            f'"1"); {NOT_A_NUMBER}',
            id="numbers-as-strings",
        ),
        pytest.param(
            _point(1, True),
            f"coordinates[1]: each element of a position must be a number (found true); "
            f"{NOT_A_NUMBER}",
            id="boolean",
        ),
        pytest.param(
            {"type": "Point", "coordinates": None},
            "coordinates: a position must be an array of numbers (found null); write it as "
            "[longitude, latitude]",
            id="null-coordinates",
        ),
        pytest.param(
            _line([1, 2], [3, None]),
            "coordinates[1][1]: each element of a position must be a number (found null); "
            f"{NOT_A_NUMBER}",
            id="null-element",
        ),
        pytest.param(
            {"type": "Point", "coordinates": [[1, 2]]},
            "coordinates: Point coordinates must be a single position (found an array of "
            "arrays); a Point is [lon, lat]; for several points use a MultiPoint",
            id="point-nested-too-deeply",
        ),
        pytest.param(
            {"type": "LineString", "coordinates": [[[1, 2], [3, 4]]]},
            "coordinates[0][0]: found an array inside a position: nested too deeply; a "
            "position is [longitude, latitude], so remove a level of brackets",
            id="line-nested-too-deeply",
        ),
        pytest.param(
            {"type": "LineString", "coordinates": [1, 2]},
            "coordinates: LineString must be an array of positions (found a number): nested "
            "one level too shallowly; a LineString is [[lon, lat], [lon, lat], ...]; for a "
            "single location use a Point",
            id="line-nested-too-shallowly",
        ),
        pytest.param(
            {"type": "Polygon", "coordinates": SQUARE},
            "coordinates: Polygon coordinates must be an array of linear rings, found "
            "positions where rings were expected: nested one level too shallowly; wrap the "
            "ring in brackets: a Polygon is [[[lon, lat], ..., [first lon, first lat]], ...]",
            id="polygon-nested-too-shallowly",
        ),
        pytest.param(
            {"type": "MultiPolygon", "coordinates": [SQUARE]},
            "coordinates: MultiPolygon coordinates nested too shallowly (found numbers at "
            "depth 3 of 4); a MultiPolygon is [[[[lon, lat], ..., [first lon, first lat]], "
            "...], ...]",
            id="polygon-labelled-multipolygon",
        ),
        pytest.param(
            _point(1, 2) | {"coordinates": [1]},
            "coordinates: position must have at least 2 elements (found 1); write it as "
            "[longitude, latitude]",
            id="one-element-position",
        ),
        pytest.param(
            _line([1, 2], []),
            "coordinates[1]: position must have at least 2 elements (found 0); write it as "
            "[longitude, latitude]",
            id="empty-position",
        ),
        pytest.param(
            {"type": "Point", "coordinates": _nested(100)},
            "coordinates: Point coordinates must be a single position (found an array of "
            "arrays); a Point is [lon, lat]; for several points use a MultiPoint",
            id="coordinates-100-levels-deep",
        ),
    ],
)
def test_malformed_coordinates_are_refused(geometry: dict[str, object], problem: str) -> None:
    assert _problems(_bytes(geometry)) == (problem,)


# --- 3D and 4D positions ---------------------------------------------------------------


def test_a_3d_point_is_flattened_and_reported() -> None:
    layer = load(_bytes({"type": "Point", "coordinates": [1.5, 2.5, 100]}))
    assert _geometries(layer) == [{"type": "Point", "coordinates": [1.5, 2.5]}]
    assert _repairs(layer) == {"dropped_dimensions": (1, (0,))}
    assert layer.report.warnings == ("Z/M ordinates dropped to 2D (1x; features [0])",)


def test_4d_positions_are_flattened_and_noted() -> None:
    layer = load(_bytes(_fc(_point(9, 9), _line([1, 2, 3, 4], [5, 6, 7, 8]))))
    assert _geometries(layer)[1] == {"type": "LineString", "coordinates": [[1.0, 2.0], [5.0, 6.0]]}
    assert _repairs(layer) == {"dropped_dimensions": (2, (1,))}
    assert layer.report.warnings == (
        "Z/M ordinates dropped to 2D (2x; features [1])",
        "positions with 4 elements found; extra ordinates dropped (RFC 7946 s3.1.1: SHOULD "
        "NOT extend positions beyond three elements)",
    )


def test_a_ring_closed_in_2d_but_not_in_z_loads() -> None:
    ring = [[0, 0, 1], [1, 0, 1], [1, 1, 1], [0, 1, 1], [0, 0, 2]]
    layer = load(_polygon(ring))
    assert _geometries(layer) == [{"type": "Polygon", "coordinates": [SQUARE]}]
    assert _repairs(layer) == {"dropped_dimensions": (5, (0,))}


# --- non-finite and oversized numbers --------------------------------------------------


@pytest.mark.parametrize(
    ("raw", "problem"),
    [
        pytest.param(
            b'{"type": "Point", "coordinates": [NaN, 1]}',
            f"coordinates[0]: non-finite number (NaN) is not valid JSON and not a valid "
            f"coordinate; {NON_FINITE}",
            id="nan",
        ),
        pytest.param(
            b'{"type": "Point", "coordinates": [1, Infinity]}',
            f"coordinates[1]: non-finite number (Infinity) is not valid JSON and not a valid "
            f"coordinate; {NON_FINITE}",
            id="infinity",
        ),
        pytest.param(
            b'{"type": "Point", "coordinates": [-Infinity, 1]}',
            f"coordinates[0]: non-finite number (-Infinity) is not valid JSON and not a valid "
            f"coordinate; {NON_FINITE}",
            id="minus-infinity",
        ),
        pytest.param(
            b'{"type": "LineString", "coordinates": [[0, 0], [1, -1e400]]}',
            "coordinates[1][1]: non-finite number (-Infinity) is not a valid coordinate (a "
            "JSON number too large for a 64-bit float, such as 1e400, reads as Infinity); "
            f"{NON_FINITE}",
            id="1e400",
        ),
        pytest.param(
            b'{"type": "Point", "coordinates": [1' + b"0" * 400 + b", 1]}",
            "coordinates[0]: the integer 100000000000... (401 digits) is too large for a "
            "coordinate; replace it with the real value",
            id="400-digit-integer",
        ),
        pytest.param(
            b'{"type": "Point", "coordinates": [1' + b"0" * 5000 + b", 1]}",
            "a number in the text has more than 4,300 digits; no coordinate or property "
            "needs that many: shorten it or quote it as a string",
            id="5000-digit-integer",
        ),
        pytest.param(
            b'{"type": "Feature", "properties": {"max": Infinity}, "geometry": null}',
            "properties.max: non-finite number (Infinity) cannot be stored in JSON; replace "
            "it with a finite number or null",
            id="infinity-in-a-property",
        ),
    ],
)
def test_non_finite_numbers_are_refused(raw: bytes, problem: str) -> None:
    assert _problems(raw) == (problem,)


def test_in_memory_non_finite_values_are_refused() -> None:
    nan_point = {"type": "Point", "coordinates": [1.0, float("nan")]}
    assert _problems(nan_point) == (
        f"coordinates[1]: non-finite number (NaN) is not a valid coordinate; {NON_FINITE}",
    )
    feature = {"type": "Feature", "properties": {"v": [1.0, float("-inf")]}, "geometry": None}
    assert _problems(feature) == (
        "properties.v[1]: non-finite number (-Infinity) cannot be stored in JSON; replace it "
        "with a finite number or null",
    )


def test_nan_property_values_become_null() -> None:
    raw = b'{"type": "Feature", "properties": {"h": NaN, "n": [1, NaN]}, "geometry": null}'
    layer = load(raw)
    assert layer.data["features"][0]["properties"] == {"h": None, "n": [1, None]}
    assert _repairs(layer) == {"nan_to_null": (2, (0,))}
    assert json.loads(json.dumps(layer.data, allow_nan=False)) == layer.data


# --- coordinates out of range ----------------------------------------------------------


@pytest.mark.parametrize(
    ("geometry", "problem"),
    [
        pytest.param(
            _point(100, 95),
            f"coordinates: coordinate out of range: latitude 95 is beyond +/-90 (position "
            f"[100, 95]); {RANGE}; correct or remove this position",
            id="latitude-over-90",
        ),
        pytest.param(
            _point(-400, 10),
            f"coordinates: coordinate out of range: longitude -400 is beyond +/-360 (position "
            f"[-400, 10]); {RANGE}; correct or remove this position",
            id="longitude-under-minus-360",
        ),
        pytest.param(
            _point(52.52, 173.4),
            f"coordinates: coordinate out of range: latitude 173.4 is beyond +/-90 (position "
            f"[52.52, 173.4]); {RANGE}; it looks like [lat, lng] order: GeoJSON positions "
            "are [lng, lat], so write [173.4, 52.52]",
            id="lat-lng-swap",
        ),
        pytest.param(
            _point(1113194.9, 6800000),
            "coordinates: coordinate out of range: latitude 6800000 is beyond +/-90 (position "
            f"[1113194.9, 6800000]); {RANGE}; these look like projected coordinates (e.g. "
            "metres): reproject the data to EPSG:4326 first (ogr2ogr -t_srs EPSG:4326 "
            "out.geojson in.geojson) or name its CRS in a 'crs' member",
            id="projected-metres",
        ),
        pytest.param(
            _polygon([[100, 0], [101, 0], [101, -91], [100, 0]]),
            f"coordinates[0][2]: coordinate out of range: latitude -91 is beyond +/-90 "
            f"(position [101, -91]); {RANGE}; correct or remove this position",
            id="one-bad-vertex",
        ),
    ],
)
def test_out_of_range_coordinates_are_refused(geometry: dict[str, object], problem: str) -> None:
    assert _problems(_bytes(geometry)) == (problem,)


def test_the_extremes_themselves_load_unchanged() -> None:
    layer = load(_bytes(_fc(_point(180, 90), _point(-180, -90), _line([180, 0], [180, 10]))))
    assert _geometries(layer) == [
        {"type": "Point", "coordinates": [180.0, 90.0]},
        {"type": "Point", "coordinates": [-180.0, -90.0]},
        {"type": "LineString", "coordinates": [[180.0, 0.0], [180.0, 10.0]]},
    ]
    assert layer.report.clean


# --- longitudes beyond 180 and the antimeridian ----------------------------------------


@pytest.mark.parametrize(
    ("lon", "wrapped"),
    [
        pytest.param(200, -160.0, id="200"),
        pytest.param(-190, 170.0, id="-190"),
        pytest.param(360, 0.0, id="360"),
        pytest.param(-360, 0.0, id="-360"),
        pytest.param(180.5, -179.5, id="180.5"),
    ],
)
def test_point_longitudes_beyond_180_are_wrapped(lon: float, wrapped: float) -> None:
    layer = load(_bytes(_fc(_point(0, 0), _point(lon, 10))))
    assert _geometries(layer)[1] == {"type": "Point", "coordinates": [wrapped, 10.0]}
    assert _repairs(layer) == {"longitude_wrapped": (1, (1,))}
    assert layer.report.warnings == (f"{WRAPPED} (1x; features [1])",)


def test_multipoint_longitudes_are_wrapped_one_by_one() -> None:
    layer = load({"type": "MultiPoint", "coordinates": [[200, 0], [-200, 10], [180, 5]]})
    assert _geometries(layer) == [
        {"type": "MultiPoint", "coordinates": [[-160.0, 0.0], [160.0, 10.0], [180.0, 5.0]]}
    ]
    assert _repairs(layer) == {"longitude_wrapped": (2, (0,))}


def test_a_line_crossing_the_antimeridian_is_split() -> None:
    layer = load(_line([170, 0], [-170, 10]))
    assert _geometries(layer) == [
        {
            "type": "MultiLineString",
            "coordinates": [[[170.0, 0.0], [180.0, 5.0]], [[-180.0, 5.0], [-170.0, 10.0]]],
        }
    ]
    assert _repairs(layer) == {"antimeridian_split": (1, (0,))}
    assert layer.report.warnings == (f"{SPLIT} (1x; features [0])",)


def test_a_line_written_in_0_to_360_is_wrapped_then_split() -> None:
    layer = load(_line([170, 0], [190, 10], [200, 10]))
    assert _geometries(layer) == [
        {
            "type": "MultiLineString",
            "coordinates": [
                [[170.0, 0.0], [180.0, 5.0]],
                [[-180.0, 5.0], [-170.0, 10.0], [-160.0, 10.0]],
            ],
        }
    ]
    assert _repairs(layer) == {"longitude_wrapped": (2, (0,)), "antimeridian_split": (1, (0,))}


def test_a_line_wholly_beyond_180_is_only_wrapped() -> None:
    layer = load(_line([200, 0], [210, 10]))
    assert _geometries(layer) == [
        {"type": "LineString", "coordinates": [[-160.0, 0.0], [-150.0, 10.0]]}
    ]
    assert _repairs(layer) == {"longitude_wrapped": (2, (0,))}


def test_one_crossing_part_of_a_multilinestring_is_split() -> None:
    layer = load(
        {"type": "MultiLineString", "coordinates": [[[170, 0], [-170, 10]], [[0, 0], [1, 1]]]}
    )
    assert _geometries(layer)[0]["coordinates"] == [
        [[170.0, 0.0], [180.0, 5.0]],
        [[-180.0, 5.0], [-170.0, 10.0]],
        [[0.0, 0.0], [1.0, 1.0]],
    ]
    assert _repairs(layer) == {"antimeridian_split": (1, (0,))}


def test_a_line_ending_on_the_far_side_of_180_leaves_no_stub() -> None:
    layer = load(_line([179, 0], [-180, 0]))
    assert _geometries(layer) == [
        {"type": "LineString", "coordinates": [[179.0, 0.0], [180.0, 0.0]]}
    ]
    assert _repairs(layer) == {"antimeridian_split": (1, (0,))}


@pytest.mark.parametrize(
    "geometry",
    [
        pytest.param(_line([170, 0], [180, 10]), id="line-to-180"),
        pytest.param(_line([-180, 0], [180, 0]), id="line-across-the-map"),
        pytest.param(_line([-180, -10], [-170, 0]), id="line-from-minus-180"),
        pytest.param(
            _polygon([[170, 0], [180, 0], [180, 10], [170, 10], [170, 0]]), id="polygon-to-180"
        ),
    ],
)
def test_data_touching_180_is_not_altered(geometry: dict[str, Any]) -> None:
    layer = load(_bytes(geometry))
    assert layer.report.clean
    expected = json.loads(json.dumps(geometry), parse_int=float)
    assert _geometries(layer) == [expected]


def test_a_polygon_wholly_beyond_180_is_wrapped_not_split() -> None:
    layer = load(_polygon([[190, 0], [200, 0], [200, 10], [190, 10], [190, 0]]))
    assert _geometries(layer) == [
        _polygon([[-170.0, 0.0], [-160.0, 0.0], [-160.0, 10.0], [-170.0, 10.0], [-170.0, 0.0]])
    ]
    assert _repairs(layer) == {"longitude_wrapped": (5, (0,))}


def test_multipolygon_parts_either_side_of_180_are_rewound_not_split() -> None:
    west = [[170, 0], [170, 10], [171, 10], [171, 0], [170, 0]]
    east = [[-171, 0], [-171, 10], [-170, 10], [-170, 0], [-171, 0]]
    layer = load({"type": "MultiPolygon", "coordinates": [[west], [east]]})
    assert _geometries(layer)[0]["coordinates"] == [
        [[[170.0, 0.0], [171.0, 0.0], [171.0, 10.0], [170.0, 10.0], [170.0, 0.0]]],
        [[[-171.0, 0.0], [-170.0, 0.0], [-170.0, 10.0], [-171.0, 10.0], [-171.0, 0.0]]],
    ]
    assert _repairs(layer) == {"rewound": (2, (0,))}


# --- lines and rings -------------------------------------------------------------------


@pytest.mark.parametrize(
    ("geometry", "problem"),
    [
        pytest.param(
            _line([1, 2]),
            "coordinates: LineString needs two or more positions (found 1); add another "
            "position, or use a Point for a single location",
            id="line-of-one-position",
        ),
        pytest.param(
            {"type": "MultiLineString", "coordinates": [[[0, 0], [1, 1]], [[2, 2]]]},
            "coordinates[1]: MultiLineString part needs two or more positions (found 1); add "
            "another position, or use a Point for a single location",
            id="multiline-part-of-one-position",
        ),
        pytest.param(
            _polygon([[0, 0], [1, 0], [0, 0]]),
            "coordinates[0]: LinearRing needs four or more positions and must be closed (found "
            "3 positions, first = last); a ring is at least a triangle with its first position "
            "repeated at the end: [a, b, c, a]",
            id="closed-ring-of-three",
        ),
        pytest.param(
            _polygon([[0, 0], [1, 0], [1, 1]]),
            "coordinates[0]: LinearRing needs four or more positions and must be closed (found "
            "3 positions, first != last); a ring is at least a triangle with its first "
            "position repeated at the end: [a, b, c, a]",
            id="open-ring-of-three",
        ),
        pytest.param(
            _polygon([[0, 0], [1, 0], [1, 1], [0, 1]]),
            "coordinates[0]: LinearRing not closed (first != last: [0, 0] vs [0, 1]); repeat "
            "the first position [0, 0] at the end",
            id="unclosed-ring",
        ),
        pytest.param(
            _polygon(SQUARE, [[0.2, 0.2], [0.2, 0.4], [0.4, 0.4], [0.4, 0.2]]),
            "coordinates[1]: LinearRing not closed (first != last: [0.2, 0.2] vs [0.4, 0.2]); "
            "repeat the first position [0.2, 0.2] at the end",
            id="unclosed-hole",
        ),
        pytest.param(
            _polygon(SQUARE, [[5, 5], [5, 6], [6, 6], [6, 5], [5, 5]]),
            "coordinates[1]: this hole (interior ring) lies outside its polygon's exterior "
            "ring; if it is a separate area, make it a polygon of its own (a MultiPolygon "
            "part); if it is a mistake, remove it",
            id="hole-outside-shell",
        ),
        pytest.param(
            _polygon([[0, 0], [2, 0], [1, 0], [0, 0]]),
            "coordinates: polygon has no area (collapses to lines; GEOS: Self-intersection"
            "[1 0]); fix the ring or supply it as a LineString",
            id="ring-with-no-area",
        ),
    ],
)
def test_bad_lines_and_rings_are_refused(geometry: dict[str, object], problem: str) -> None:
    assert _problems(_bytes(geometry)) == (problem,)


def test_a_bowtie_is_made_valid_and_counted() -> None:
    layer = load(_fc(_point(0, 0), _polygon([[0, 0], [2, 2], [2, 0], [0, 2], [0, 0]])))
    assert _geometries(layer)[1] == {
        "type": "MultiPolygon",
        "coordinates": [
            [[[0.0, 2.0], [0.0, 0.0], [1.0, 1.0], [0.0, 2.0]]],
            [[[2.0, 0.0], [2.0, 2.0], [1.0, 1.0], [2.0, 0.0]]],
        ],
    }
    assert _repairs(layer) == {"made_valid": (1, (1,))}
    assert layer.report.warnings == (
        "invalid geometry repaired with make_valid (Self-intersection[1 1]) (1x; features [1])",
    )


def test_overlapping_multipolygon_parts_are_merged_not_cut() -> None:
    first = [[0, 0], [2, 0], [2, 2], [0, 2], [0, 0]]
    second = [[1, 1], [3, 1], [3, 3], [1, 3], [1, 1]]
    layer = load({"type": "MultiPolygon", "coordinates": [[first], [second]]})
    merged = _geometries(layer)[0]
    assert merged["type"] == "Polygon"
    assert shapely.area(shape(merged)) == 7.0
    assert shapely.is_ccw(shapely.linearrings(merged["coordinates"][0]))
    assert _repairs(layer) == {"made_valid": (1, (0,))}


def test_a_clockwise_shell_is_rewound() -> None:
    layer = load(_polygon(list(reversed(SQUARE))))
    assert _geometries(layer) == [_polygon(SQUARE)]
    assert _repairs(layer) == {"rewound": (1, (0,))}


def test_a_line_that_never_moves_becomes_a_point() -> None:
    layer = load(_line([1, 2], [1, 2]))
    assert _geometries(layer) == [{"type": "Point", "coordinates": [1.0, 2.0]}]
    assert _repairs(layer) == {"made_valid": (1, (0,))}


# --- duplicate members -----------------------------------------------------------------


@pytest.mark.parametrize(
    ("raw", "problems"),
    [
        pytest.param(
            b'{"type": "Point", "type": "LineString", "coordinates": [1, 2]}',
            (f'root: duplicate member \'type\' ("Point" and "LineString"): {DUPLICATE}',),
            id="at-the-root",
        ),
        pytest.param(
            b'{"type": "Feature", "properties": {"a": 1, "a": 2}, "geometry": null}',
            (f"properties: duplicate member 'a' (1 and 2): {DUPLICATE}",),
            id="in-properties",
        ),
        pytest.param(
            b'{"type": "FeatureCollection", "features": [{}, {"type": "Feature", '
            b'"properties": {"x": {"b": [1], "b": {"c": 2}}}, "geometry": null}]}',
            ("features[1].properties.x: duplicate member 'b' ([1] and {\"c\": 2}): " + DUPLICATE,),
            id="three-levels-down",
        ),
        pytest.param(
            b'{"type": "Point", "coordinates": [1, 2], "coordinates": [3, 4]}',
            (f"root: duplicate member 'coordinates' ([1, 2] and [3, 4]): {DUPLICATE}",),
            id="two-coordinates",
        ),
        pytest.param(
            b'{"a": 1, "a": 2, "b": {"c": 1, "c": 1}}',
            (
                f"root: duplicate member 'a' (1 and 2): {DUPLICATE}",
                f"b: duplicate member 'c' (1 and 1): {DUPLICATE}",
            ),
            id="two-places",
        ),
    ],
)
def test_duplicate_members_are_refused_where_they_are(
    raw: bytes, problems: tuple[str, ...]
) -> None:
    assert _problems(raw) == problems


def test_a_duplicate_in_line_delimited_input_names_the_line() -> None:
    raw = _bytes(_point(1, 2)) + b'\n{"type": "Point", "type": "Point", "coordinates": [1, 2]}'
    assert _problems(raw, label="points.geojsonl") == (
        f'line 2: root: duplicate member \'type\' ("Point" and "Point"): {DUPLICATE}',
    )


# --- text encodings --------------------------------------------------------------------


@pytest.mark.parametrize(
    ("raw", "problem"),
    [
        pytest.param(
            '{"type": "Feature", "properties": {"name": "Zürich"}, "geometry": null}'.encode(
                "latin-1"
            ),
            "not UTF-8: byte 0xfc at byte offset 45 (line 1, byte 46 of the line) cannot be "
            f"decoded (invalid start byte); {RESAVE}",
            id="latin-1-property",
        ),
        pytest.param(
            b'{"type": "Feature",\n "properties":\n  {"name": "S\xe3o Paulo"},\n "geometry": null}',
            "not UTF-8: byte 0xe3 at byte offset 48 (line 3, byte 14 of the line) cannot be "
            f"decoded (invalid continuation byte); {RESAVE}",
            id="latin-1-on-line-3",
        ),
        pytest.param(
            b'{"type": "Feature", "properties": {"a": "\xc0\xaf"}, "geometry": null}',
            "not UTF-8: byte 0xc0 at byte offset 41 (line 1, byte 42 of the line) cannot be "
            f"decoded (invalid start byte); {RESAVE}",
            id="overlong-utf-8",
        ),
        pytest.param(
            '{"type": "Point", "coordinates": [1, 2]}'.encode("utf-16-le"),
            "the input looks like UTF-16 or UTF-32 without a byte-order mark (it has zero "
            "bytes between the characters); GeoJSON must be UTF-8 (RFC 7946 s11): re-save the "
            "file as UTF-8",
            id="utf-16-without-bom",
        ),
        pytest.param(
            b"\xfe\xff" + b'{"type"}',
            "the input starts with a UTF-16BE byte-order mark, but read as UTF-16BE it is not "
            "JSON (the mark is probably wrong); re-save the file as UTF-8",
            id="utf-16-bom-on-utf-8-text",
        ),
        pytest.param(
            b"\xff\xfe" + '{"type": "Point"}'.encode("utf-16-le")[:-1],
            "the input starts with a UTF-16LE byte-order mark but is not valid UTF-16LE "
            "(truncated data at byte offset 34); re-save the file as UTF-8",
            id="utf-16-cut-mid-character",
        ),
    ],
)
def test_text_that_is_not_utf_8_is_refused(raw: bytes, problem: str) -> None:
    assert _problems(raw, label="input.geojson") == (problem,)


@pytest.mark.parametrize("codec", ["utf-16", "utf-16-be"])
def test_utf_16_with_a_byte_order_mark_is_decoded_and_reported(codec: str) -> None:
    text = '{"type": "Feature", "properties": {"name": "Zürich"}, "geometry": null}'
    raw = ("\ufeff" if codec == "utf-16-be" else "") + text
    layer = load(raw.encode(codec), label="input.geojson")
    assert layer.data["features"][0]["properties"] == {"name": "Zürich"}
    name = "UTF-16BE" if codec == "utf-16-be" else "UTF-16LE"
    assert layer.report.warnings == (
        f"the input was {name} with a byte-order mark; it was decoded and the mark stripped "
        "(GeoJSON must be UTF-8: re-save the file as UTF-8) (1x; features [])",
    )


def test_repeated_utf_8_byte_order_marks_are_stripped() -> None:
    layer = load(b"\xef\xbb\xbf\xef\xbb\xbf" + _bytes(_point(1, 2)))
    assert _repairs(layer) == {"bom_stripped": (1, ())}


@pytest.mark.parametrize(
    ("raw", "problem"),
    [
        pytest.param(
            b'{"type": "Feature", "properties": {"a": "x\\ud800y"}, "geometry": null}',
            f"properties.a: the string has an unpaired surrogate (\\ud800 at character 1), "
            f"{SURROGATE}",
            id="lone-high-surrogate",
        ),
        pytest.param(
            b'{"type": "Feature", "properties": {"k\\udc00": 1}, "geometry": null}',
            'properties["k\\udc00"]: the member name has an unpaired surrogate (\\udc00 at '
            f"character 1), {SURROGATE}",
            id="lone-low-surrogate-in-a-key",
        ),
        pytest.param(
            b'{"type": "Feature", "id": "\\udfff", "properties": {}, "geometry": null}',
            f"id: the string has an unpaired surrogate (\\udfff at character 0), {SURROGATE}",
            id="lone-surrogate-id",
        ),
    ],
)
def test_lone_surrogate_escapes_are_refused(raw: bytes, problem: str) -> None:
    assert _problems(raw) == (problem,)


def test_a_surrogate_pair_is_one_character() -> None:
    layer = load(b'{"type": "Feature", "properties": {"a": "\\ud83d\\ude00"}, "geometry": null}')
    assert layer.data["features"][0]["properties"] == {"a": "\U0001f600"}
    assert layer.report.clean


# --- size ------------------------------------------------------------------------------


def test_twenty_thousand_features_load_quickly() -> None:
    points = [_point(i % 360 - 180, i % 180 - 90) for i in range(20_000)]
    raw = _bytes(_fc(*points))
    started = time.perf_counter()
    layer = load(raw)
    elapsed = time.perf_counter() - started
    assert layer.report.feature_count == 20_000
    assert layer.report.clean
    assert elapsed < 2.0, f"20,000 features took {elapsed:.2f}s"


def test_a_hundred_thousand_tiny_features_load_whole() -> None:
    # Their time is measured in benchmarks/bench_intake.py, not here.
    features = [
        {"type": "Feature", "properties": {"i": i}, "geometry": _point(i % 3600 / 10 - 180, 0.5)}
        for i in range(100_000)
    ]
    raw = _bytes({"type": "FeatureCollection", "features": features})
    layer = load(raw)
    assert layer.report.feature_count == 100_000
    assert layer.data["features"][99_999]["properties"] == {"i": 99_999}
    assert layer.report.bbox == (-180.0, 0.5, 3599 / 10 - 180, 0.5)


def test_one_bad_feature_in_twenty_thousand_refuses_them_all() -> None:
    points: list[object] = [_point(1, 1)] * 19_999 + [_point(1, "north")]
    assert _problems(_bytes(_fc(*points))) == (
        "features[19999].geometry.coordinates[1]: each element of a position must be a number "
        f'(found the string "north"); {NOT_A_NUMBER}',
    )


def test_a_megabyte_key_loads_and_the_profile_cuts_it() -> None:
    key = "k" * 1_000_000
    layer = load(_bytes({"type": "Feature", "properties": {key: 1}, "geometry": None}))
    assert list(layer.data["features"][0]["properties"]) == [key]
    profile = layer.profile()
    assert list(profile["properties"]) == ["k" * 79 + "…"]
    assert list(profile["sample_rows"][0]) == ["k" * 79 + "…"]


def test_five_thousand_properties_load_and_the_profile_lists_a_hundred() -> None:
    props = {f"p{i:04}": i for i in range(5_000)}
    layer = load(_bytes({"type": "Feature", "properties": props, "geometry": None}))
    assert layer.data["features"][0]["properties"] == props
    profile = layer.profile()
    assert profile["property_count"] == 5_000
    assert list(profile["properties"]) == [f"p{i:04}" for i in range(100)]
    assert profile["properties"]["p0099"] == {"types": ["number"], "min": 99, "max": 99}
    assert len(profile["sample_rows"][0]) == 100


# --- properties, ids and the collection's shape ----------------------------------------


@pytest.mark.parametrize(
    ("value", "problem"),
    [
        pytest.param(
            {"type": "Feature", "properties": [1, 2], "geometry": None},
            "root: 'properties' must be an object or null (found an array); put the values in "
            'an object such as {"name": ...}, or write null',
            id="properties-array",
        ),
        pytest.param(
            {"type": "Feature", "properties": "name=x", "geometry": None},
            "root: 'properties' must be an object or null (found the string \"name=x\"); put "
            'the values in an object such as {"name": ...}, or write null',
            id="properties-string",
        ),
        pytest.param(
            {"type": "Feature", "id": {"n": 1}, "properties": {}, "geometry": None},
            "root: Feature 'id' must be a string or number (found an object); use a string or "
            "number, or move it into 'properties'",
            id="id-object",
        ),
        pytest.param(
            {"type": "Feature", "id": True, "properties": {}, "geometry": None},
            "root: Feature 'id' must be a string or number (found true); use a string or "
            "number, or move it into 'properties'",
            id="id-boolean",
        ),
        pytest.param(
            {"type": "FeatureCollection", "features": {"0": {}}},
            "root: 'features' must be an array (found an object); write \"features\": "
            '[{"type": "Feature", ...}, ...]',
            id="features-object",
        ),
        pytest.param(
            {"type": "FeatureCollection", "features": "none"},
            "root: 'features' must be an array (found the string \"none\"); write "
            '"features": [{"type": "Feature", ...}, ...]',
            id="features-string",
        ),
        pytest.param(
            {"type": "FeatureCollection"},
            "root: FeatureCollection requires a 'features' member (an array); add "
            '"features": [] for an empty collection',
            id="features-missing",
        ),
        pytest.param(
            {"type": "FeatureCollection", "features": [{"type": "Feature", "geometry": None}, "f"]},
            'features[1] is the string "f", every feature must be an object; remove '
            'it or write it as {"type": "Feature", "properties": {}, "geometry": ...}',
            id="feature-string",
        ),
    ],
)
def test_bad_properties_ids_and_collections_are_refused(
    value: dict[str, object], problem: str
) -> None:
    assert _problems(_bytes(value)) == (problem,)


def test_in_memory_non_finite_ids_and_bad_collections_are_refused() -> None:
    feature = {"type": "Feature", "id": float("nan"), "properties": {}, "geometry": None}
    assert _problems(feature) == (
        "root: Feature 'id' must be a finite number (found NaN); use a string or a finite number",
    )
    collection = {"type": "GeometryCollection", "geometries": {"type": "Point"}}
    assert _problems(collection) == (
        "root: GeometryCollection.geometries must be an array (found an object); write "
        '"geometries": [{"type": ...}, ...]',
    )


def test_missing_and_null_properties_become_empty() -> None:
    layer = load(
        {
            "type": "FeatureCollection",
            "features": [
                {"type": "Feature", "geometry": None},
                {"type": "Feature", "properties": None, "geometry": None},
            ],
        }
    )
    assert [f["properties"] for f in layer.data["features"]] == [{}, {}]
    assert layer.report.warnings == (
        "features without a 'properties' member were given empty properties",
    )


# --- null and empty geometries ---------------------------------------------------------


def test_null_and_empty_geometries_of_every_kind_load_as_null() -> None:
    empties = [
        None,
        {"type": "Point", "coordinates": []},
        {"type": "GeometryCollection", "geometries": []},
        {"type": "MultiPolygon", "coordinates": []},
        {"type": "MultiLineString", "coordinates": [[]]},
    ]
    layer = load(_bytes(_fc(*empties)))
    assert _geometries(layer) == [None] * 5
    assert layer.report.geometry_types == {"null": 5}
    assert _repairs(layer) == {
        "empty_geometry": (4, (1, 2, 3, 4)),
        "empty_part_dropped": (1, (4,)),
    }


def test_a_geometry_without_a_type_is_refused() -> None:
    feature = {"type": "Feature", "properties": {}, "geometry": {}}
    assert _problems(feature) == (
        'geometry: \'type\' member required; add it, e.g. "type": "Point"',
    )


def test_nested_geometry_collections_are_flattened() -> None:
    inner = {"type": "GeometryCollection", "geometries": [_point(3, 4), _collections(1)]}
    layer = load({"type": "GeometryCollection", "geometries": [_point(1, 2), inner]})
    assert _geometries(layer) == [
        {
            "type": "GeometryCollection",
            "geometries": [
                {"type": "Point", "coordinates": [1.0, 2.0]},
                {"type": "Point", "coordinates": [3.0, 4.0]},
                {"type": "Point", "coordinates": [1.0, 2.0]},
            ],
        }
    ]
    assert _repairs(layer) == {"collection_flattened": (2, (0,))}


# --- formats mistaken for GeoJSON ------------------------------------------------------

ESRI = (
    "this is Esri JSON (an ArcGIS FeatureSet), not GeoJSON; convert it (e.g. ogr2ogr -f "
    "GeoJSON out.geojson in.json) or ask the ArcGIS service for f=geojson"
)
TOPOJSON = (
    "this is TopoJSON, not GeoJSON; convert it first (e.g. topojson-client's topo2geo, "
    "mapshaper, or geopandas.read_file)"
)


@pytest.mark.parametrize(
    ("value", "problem"),
    [
        pytest.param(
            {"type": "Topology", "objects": {}, "arcs": []}, f"root: {TOPOJSON}", id="topojson"
        ),
        pytest.param(
            {"objects": {"a": {}}, "arcs": [[[0, 0]]]}, f"root: {TOPOJSON}", id="topojson-untyped"
        ),
        pytest.param(
            {
                "geometryType": "esriGeometryPoint",
                "spatialReference": {"wkid": 4326},
                "features": [{"attributes": {"a": 1}, "geometry": {"x": 1, "y": 2}}],
            },
            f"root: {ESRI}",
            id="esri-featureset",
        ),
        pytest.param(
            {"features": [{"attributes": {"a": 1}, "geometry": {"x": 1, "y": 2}}]},
            f"root: {ESRI}",
            id="esri-features-only",
        ),
        pytest.param(
            {"x": 1, "y": 2, "spatialReference": {"wkid": 4326}},
            "root: this is an Esri JSON geometry, not GeoJSON; convert it (e.g. ogr2ogr -f "
            "GeoJSON out.geojson in.json)",
            id="esri-point",
        ),
        pytest.param(
            {"type": "Feature", "properties": {}, "geometry": {"rings": [[[0, 0], [1, 0]]]}},
            "geometry: this is an Esri JSON geometry, not GeoJSON; convert the file (e.g. "
            "ogr2ogr -f GeoJSON out.geojson in.json)",
            id="esri-polygon-in-a-feature",
        ),
    ],
)
def test_topojson_and_esri_json_are_named(value: dict[str, object], problem: str) -> None:
    assert _problems(_bytes(value)) == (problem,)


# --- legacy 'crs' members --------------------------------------------------------------


def _with_crs(name: str | None, *geometries: object) -> dict[str, Any]:
    crs = None if name is None else {"type": "name", "properties": {"name": name}}
    return _fc(*(geometries or (_point(1, 2),)), crs=crs)


def test_a_crs84_member_is_removed_with_a_note() -> None:
    layer = load(_bytes(_with_crs("urn:ogc:def:crs:OGC:1.3:CRS84")))
    assert layer.data == _fc({"type": "Point", "coordinates": [1.0, 2.0]})
    assert layer.report.warnings == (
        "legacy 'crs' member (urn:ogc:def:crs:OGC:1.3:CRS84) is WGS 84 longitude/latitude; removed",
    )


def test_an_epsg_4326_member_gets_an_axis_order_note() -> None:
    layer = load(_bytes(_with_crs("urn:ogc:def:crs:EPSG::4326")))
    assert _geometries(layer) == [{"type": "Point", "coordinates": [1.0, 2.0]}]
    assert layer.report.warnings == (
        "legacy 'crs' member (urn:ogc:def:crs:EPSG::4326) names EPSG:4326, whose official "
        "axis order is latitude, longitude; positions were read as longitude, latitude as "
        "GeoJSON requires (and GDAL writes): if features land in the wrong place, swap the "
        "two numbers of every position; the member was removed",
    )


def test_an_epsg_3857_member_is_reprojected_and_recorded() -> None:
    layer = load(_bytes(_with_crs("EPSG:3857", _point(111319.49079327357, 111325.14286638486))))
    lon, lat = _geometries(layer)[0]["coordinates"]
    assert (lon, lat) == pytest.approx((1.0, 1.0))
    assert _repairs(layer) == {"reprojected": (1, ())}
    assert layer.report.warnings == ("reprojected from EPSG:3857 to EPSG:4326 (1x; features [])",)


@pytest.mark.parametrize(
    ("value", "problem"),
    [
        pytest.param(
            _with_crs("EPSG:99999999"),
            "root: the 'crs' member names 'EPSG:99999999', which is not a recognised CRS; "
            "remove the member if the positions are longitude/latitude, or reproject the "
            "file to EPSG:4326 first (e.g. ogr2ogr -t_srs EPSG:4326 out.geojson in.geojson)",
            id="unknown-crs",
        ),
        pytest.param(
            _fc(_point(1, 2), crs={"type": "link", "properties": {"href": "http://x/crs"}}),
            "root: the legacy 'crs' member has no properties.name; remove it if the positions "
            'are longitude/latitude, or name the CRS, e.g. {"type": "name", "properties": '
            '{"name": "EPSG:3857"}}',
            id="linked-crs",
        ),
    ],
)
def test_a_crs_that_cannot_be_used_is_refused(value: dict[str, object], problem: str) -> None:
    assert _problems(_bytes(value)) == (problem,)


def test_a_null_crs_is_removed_with_a_note() -> None:
    layer = load(_bytes(_with_crs(None)))
    assert layer.report.warnings == (
        "'crs': null (an unknown CRS in GeoJSON 2008) removed; positions were read as "
        "longitude/latitude",
    )


def test_a_crs_below_the_root_is_ignored_with_a_note() -> None:
    feature = {"type": "Feature", "properties": {}, "geometry": _point(1, 2)}
    crs = {"type": "name", "properties": {"name": "EPSG:3857"}}
    layer = load(_bytes({"type": "FeatureCollection", "features": [feature | {"crs": crs}]}))
    assert _geometries(layer) == [{"type": "Point", "coordinates": [1.0, 2.0]}]
    assert "crs" not in layer.data["features"][0]
    assert layer.report.warnings == ("'crs' members below the root are not supported; ignored",)


# --- bbox members ----------------------------------------------------------------------

BBOX_IGNORED = (
    "'bbox' members that do not match the data ignored; the report's bbox is computed from the data"
)


def test_a_root_bbox_that_disagrees_is_ignored_and_reported() -> None:
    layer = load(_bytes(_fc(_point(1, 2), _point(3, 4), bbox=[0, 0, 10, 10])))
    assert "bbox" not in layer.data
    assert layer.report.bbox == (1.0, 2.0, 3.0, 4.0)
    assert _repairs(layer) == {"bbox_ignored": (1, ())}
    assert layer.report.warnings == (
        f"{BBOX_IGNORED} (1x; features [])",
        "root bbox [0, 0, 10, 10] does not match the data ([1, 2, 3, 4]); ignored",
    )


def test_feature_bboxes_that_disagree_are_counted() -> None:
    features = [
        {"type": "Feature", "bbox": [1, 2, 1, 2], "properties": {}, "geometry": _point(1, 2)},
        {"type": "Feature", "bbox": [0, 0, 0, 0], "properties": {}, "geometry": _point(3, 4)},
    ]
    layer = load(_bytes({"type": "FeatureCollection", "features": features}))
    assert _repairs(layer) == {"bbox_ignored": (1, (1,))}
    assert all("bbox" not in f for f in layer.data["features"])


@pytest.mark.parametrize(
    "bbox", [pytest.param([1, 2, 3, 4], id="2d"), pytest.param([1, 2, 0, 3, 4, 9], id="3d")]
)
def test_a_bbox_that_agrees_is_dropped_silently(bbox: list[float]) -> None:
    layer = load(_bytes(_fc(_point(1, 2), _point(3, 4), bbox=bbox)))
    assert layer.report.clean


def test_a_bbox_with_a_nan_is_ignored_with_a_note() -> None:
    raw = b'{"type": "Point", "coordinates": [1, 2], "bbox": [1, 2, NaN, 2]}'
    layer = load(raw)
    assert layer.report.warnings == ("bbox elements must be finite numbers; ignored",)


# --- foreign members -------------------------------------------------------------------


def test_foreign_members_of_collections_and_features_are_kept() -> None:
    feature = {"type": "Feature", "title": "A", "properties": {}, "geometry": None, "n": [1]}
    layer = load(_bytes({"type": "FeatureCollection", "name": "towns", "features": [feature]}))
    assert layer.data == {
        "type": "FeatureCollection",
        "name": "towns",
        "features": [
            {"type": "Feature", "properties": {}, "title": "A", "n": [1], "geometry": None}
        ],
    }
    assert layer.report.clean


def test_foreign_members_of_geometries_are_dropped_with_a_note() -> None:
    layer = load(_bytes(_point(1, 2) | {"title": "t", "style": {"colour": "red"}}))
    assert _geometries(layer) == [{"type": "Point", "coordinates": [1.0, 2.0]}]
    assert layer.report.warnings == (
        "members other than type/coordinates on geometry objects (['style', 'title']) were "
        "dropped; put such values in the Feature's properties",
    )


# --- nesting attacks -------------------------------------------------------------------


@pytest.mark.parametrize(
    ("source", "problem"),
    [
        pytest.param(
            _bytes({"type": "Feature", "properties": {"a": _nested(70)}, "geometry": None}),
            f"properties.a[0][0][0][0][0][0][0][0][0][0][0][0][0][0][0]…: {TOO_DEEP}; "
            "flatten the value or store it as text",
            id="property-70-levels",
        ),
        pytest.param(
            {"type": "Feature", "properties": {"a": {"b": _nested(5_000)}}, "geometry": None},
            f"properties.a.b[0][0][0][0][0][0][0][0][0][0][0][0][0][0][0]…: {TOO_DEEP}; "
            "flatten the value or store it as text",
            id="property-5000-levels-in-memory",
        ),
        pytest.param(
            _bytes(_fc(_point(1, 2), meta={"deep": _nested(70)})),
            f"meta.deep[0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0]…: {TOO_DEEP}; "
            "flatten the value or store it as text",
            id="foreign-member-70-levels",
        ),
        pytest.param(
            _bytes(_collections(40)),
            f"geometries[0].geometries[0].geometries[0].geometries[0]…: {TOO_DEEP}",
            id="collections-40-deep",
        ),
        pytest.param(
            _collections(10_000),
            f"geometries[0].geometries[0].geometries[0].geometries[0]…: {TOO_DEEP}",
            id="collections-10000-deep-in-memory",
        ),
        pytest.param(b"{" + b'"a":{' * 50_000 + b"}" * 50_001, TOO_DEEP, id="objects-50000-deep"),
    ],
)
def test_absurd_nesting_is_refused(source: object, problem: str) -> None:
    assert _problems(source) == (problem,)


def test_a_property_nested_fifty_levels_loads_intact() -> None:
    value = _nested(50)
    feature = {"type": "Feature", "properties": {"a": value}, "geometry": None}
    layer = load(_bytes({"type": "FeatureCollection", "features": [feature]}))
    assert layer.data["features"][0]["properties"] == {"a": value}
    assert layer.report.clean


def test_prototype_pollution_keys_are_plain_keys() -> None:
    raw = (
        b'{"type": "Feature", "__proto__": {"admin": true}, "properties": {"__proto__": '
        b'{"polluted": 1}, "constructor": {"prototype": {"x": 1}}}, "geometry": null}'
    )
    feature = load(raw).data["features"][0]
    assert feature["properties"] == {
        "__proto__": {"polluted": 1},
        "constructor": {"prototype": {"x": 1}},
    }
    assert feature["__proto__"] == {"admin": True}
    assert not hasattr(feature, "admin")
    assert type(feature) is dict


# --- where problems are said to be -----------------------------------------------------

BAD_POSITION = f'each element of a position must be a number (found the string "x"); {NOT_A_NUMBER}'


@pytest.mark.parametrize(
    ("source", "kwargs", "where"),
    [
        pytest.param(
            _bytes(_polygon([[0, 0], [1, "x"], [1, 1], [0, 0]])),
            {},
            "coordinates[0][1][1]",
            id="bare-geometry",
        ),
        pytest.param(
            _bytes({"type": "Feature", "properties": {}, "geometry": _line([0, 0], ["x", 1])}),
            {},
            "geometry.coordinates[1][0]",
            id="bare-feature",
        ),
        pytest.param(
            _bytes(_fc(None, None, None, _line([0, 0], ["x", 1]))),
            {},
            "features[3].geometry.coordinates[1][0]",
            id="collection",
        ),
        pytest.param(
            _bytes({"type": "GeometryCollection", "geometries": [_point(1, 2), _point("x", 1)]}),
            {},
            "geometries[1].coordinates[0]",
            id="bare-geometry-collection",
        ),
        pytest.param(
            _bytes(_point(1, 2))
            + b"\n\n"
            + _bytes({"type": "Feature", "properties": {}, "geometry": _point("x", 1)}),
            {"label": "points.geojsonl"},
            "line 3: geometry.coordinates[0]",
            id="third-line",
        ),
        pytest.param(
            {"type": "Polygon", "coordinates": ((("x", 0), (1, 0), (1, 1), (0, 0)),)},
            {},
            "coordinates[0][0][0]",
            id="geo-interface-tuples",
        ),
    ],
)
def test_problems_are_located_relative_to_what_was_passed(
    source: object, kwargs: dict[str, str], where: str
) -> None:
    assert _problems(source, **kwargs) == (f"{where}: {BAD_POSITION}",)


def test_a_repair_problem_is_located_in_a_collection() -> None:
    spike = _polygon([[0, 0], [2, 0], [1, 0], [0, 0]])
    assert _problems(_fc(_point(0, 0), spike)) == (
        "features[1].geometry.coordinates: polygon has no area (collapses to lines; GEOS: "
        "Self-intersection[1 0]); fix the ring or supply it as a LineString",
    )


def test_in_memory_input_is_never_mutated() -> None:
    ring = [[0, 0], [0, 1], [1, 1], [1, 0], [0, 0]]
    source = _fc(_polygon(ring), _point(200, 0), _line([170, 0], [-170, 0]))
    before = json.dumps(source)
    load(source)
    assert json.dumps(source) == before
