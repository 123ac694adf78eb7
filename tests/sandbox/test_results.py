"""Turning results into strict JSON, checking charts and digesting big results."""

from __future__ import annotations

import dataclasses
import enum
import json
import math
import subprocess
import sys
import time
from collections import namedtuple
from datetime import UTC, date, datetime, timedelta, timezone
from decimal import Decimal
from fractions import Fraction
from pathlib import Path
from typing import Any

import geopandas as gpd
import numpy as np
import pandas as pd
import pytest
import shapely
from shapely.geometry import (
    GeometryCollection,
    LineString,
    MultiPolygon,
    Point,
    Polygon,
)

from geomint.sandbox import results
from geomint.sandbox.results import (
    CHART_TYPES,
    ChartError,
    JsonValue,
    ResultCycleError,
    ResultError,
    ResultTypeError,
    digest,
    encode_json,
    json_size,
    to_json_safe,
    validate_chart,
)

MODULE_PATH = Path(results.__file__)


def roundtrip(value: object) -> object:
    """Convert, encode strictly and decode, as the host would see it."""
    return json.loads(encode_json(to_json_safe(value)))


# --- plain data ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (None, None),
        (True, True),
        (3, 3),
        (2.5, 2.5),
        ("héllo ✓", "héllo ✓"),
        ([1, "a", None], [1, "a", None]),
        ({"a": {"b": [1, 2]}}, {"a": {"b": [1, 2]}}),
        ((1, (2, 3)), [1, [2, 3]]),
        (float("nan"), None),
        (float("inf"), None),
        ([float("-inf"), {"x": float("nan")}], [None, {"x": None}]),
    ],
)
def test_plain_json_passes_through(value: object, expected: object) -> None:
    assert to_json_safe(value) == expected


def test_result_is_a_new_structure() -> None:
    data = {"a": [1, 2]}
    out = to_json_safe(data)
    assert out == data
    assert out is not data


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (Decimal("1.5"), 1.5),
        (Decimal("NaN"), None),
        (Decimal("sNaN"), None),
        (Decimal("Infinity"), None),
        (Fraction(1, 4), 0.25),
        (datetime(2024, 5, 1, 12, 30, tzinfo=UTC), "2024-05-01T12:30:00+00:00"),
        (
            datetime(2024, 5, 1, 12, 30, tzinfo=timezone(timedelta(hours=2))),
            "2024-05-01T12:30:00+02:00",
        ),
        (date(2024, 5, 1), "2024-05-01"),
        (timedelta(minutes=90), 5400.0),
        ({3, 1, 2}, [1, 2, 3]),
        (frozenset({"b", "a"}), ["a", "b"]),
        ({"k": {1, "a", None}}, {"k": ["a", 1, None]}),  # unsortable: by JSON text
        (
            {1: "a", 2.5: "b", None: "d", float("nan"): "e"},
            {"1": "a", "2.5": "b", "null": "d", "NaN": "e"},
        ),
        ({(1, 2): "pair"}, {"(1, 2)": "pair"}),
        ({True: "t", False: "f"}, {"true": "t", "false": "f"}),
    ],
)
def test_standard_library_values(value: object, expected: object) -> None:
    assert to_json_safe(value) == expected


def test_enums_namedtuples_dataclasses() -> None:
    class Colour(enum.Enum):
        RED = "red"

    class Level(enum.IntEnum):
        HIGH = 3

    Pair = namedtuple("Pair", "x y")

    @dataclasses.dataclass
    class Site:
        name: str
        score: float

    value = {Colour.RED: Level.HIGH, "pair": Pair(1, 2), "site": Site("a", float("nan"))}
    assert to_json_safe(value) == {
        "red": 3,
        "pair": {"x": 1, "y": 2},
        "site": {"name": "a", "score": None},
    }


def test_subclasses_of_builtins_become_exact_builtins() -> None:
    class Label(str):
        def __str__(self) -> str:
            return "forged"

    class Count(int):
        pass

    out = to_json_safe([Label("a"), Count(3), np.float64(0.5)])
    assert out == ["a", 3, 0.5]
    assert [type(x) for x in out] == [str, int, float]


def test_geo_interface_objects_are_normalised() -> None:
    class Thing:
        __geo_interface__ = {"type": "Point", "coordinates": (1.0, 2.0)}  # noqa: RUF012

    assert to_json_safe(Thing()) == {"type": "Point", "coordinates": [1.0, 2.0]}


# --- numpy -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    "dtype",
    ["int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64"],
)
def test_numpy_integers(dtype: str) -> None:
    scalar = np.array([7], dtype=dtype)[0]
    assert to_json_safe(scalar) == 7
    assert type(to_json_safe(scalar)) is int
    assert to_json_safe(np.array([[1, 2], [3, 4]], dtype=dtype)) == [[1, 2], [3, 4]]


@pytest.mark.parametrize("dtype", ["float16", "float32", "float64"])
def test_numpy_floats_with_nan_nested(dtype: str) -> None:
    assert type(to_json_safe(np.dtype(dtype).type(1.5))) is float
    assert to_json_safe(np.dtype(dtype).type("nan")) is None
    array = np.array([[1.5, np.nan], [np.inf, -np.inf]], dtype=dtype)
    assert to_json_safe(array) == [[1.5, None], [None, None]]
    assert to_json_safe({"a": [array[0]]}) == {"a": [[1.5, None]]}


def test_numpy_bools_strings_and_objects() -> None:
    assert to_json_safe(np.bool_(True)) is True
    assert to_json_safe(np.array([True, False])) == [True, False]
    assert to_json_safe(np.str_("x")) == "x"
    assert to_json_safe(np.array(["a", "b"])) == ["a", "b"]
    assert to_json_safe(np.array([1, None, np.nan], dtype=object)) == [1, None, None]
    assert to_json_safe(np.float64(2.0)) == 2.0
    assert to_json_safe(np.array(3.0)) == 3.0


def test_numpy_dates_and_durations() -> None:
    assert to_json_safe(np.datetime64("2024-01-02T03:04")) == "2024-01-02T03:04"
    assert to_json_safe(np.datetime64("NaT")) is None
    assert to_json_safe(np.timedelta64(90, "s")) == 90.0
    assert to_json_safe(np.timedelta64("NaT")) is None
    days = np.array(["2024-01-01", "NaT"], dtype="datetime64[D]")
    assert to_json_safe(days) == ["2024-01-01", None]
    spans = np.array([1, 2], dtype="timedelta64[m]")
    assert to_json_safe(spans) == [60.0, 120.0]


def test_numpy_complex_is_refused_with_a_fix() -> None:
    with pytest.raises(ResultTypeError, match=r"value\['z'\].*complex.*abs") as info:
        to_json_safe({"z": np.complex128(1 + 2j)})
    assert "real" in str(info.value)
    with pytest.raises(ResultTypeError, match=r"value\[0\].*complex"):
        to_json_safe([np.array([1j])])


# --- pandas ----------------------------------------------------------------------------


def test_dataframe_becomes_records_with_nulls() -> None:
    frame = pd.DataFrame(
        {
            "a": [1.5, np.nan],
            "when": pd.to_datetime(pd.Series(["2024-01-01", None])),
            "n": pd.array([1, None], dtype="Int64"),
            "kind": pd.Categorical(["x", None]),
            "text": ["p", None],
        }
    )
    assert to_json_safe(frame) == [
        {"a": 1.5, "when": "2024-01-01T00:00:00", "n": 1, "kind": "x", "text": "p"},
        {"a": None, "when": None, "n": None, "kind": None, "text": None},
    ]


def test_dataframe_keeps_a_meaningful_index() -> None:
    grouped = pd.DataFrame({"k": ["a", "b", "a"], "v": [1, 2, 3]}).groupby("k").sum()
    assert to_json_safe(grouped) == [{"k": "a", "v": 4}, {"k": "b", "v": 2}]
    filtered = pd.DataFrame({"v": [1, 2, 3]})[lambda df: df.v > 1]
    assert to_json_safe(filtered) == [{"v": 2}, {"v": 3}]


def test_dataframe_with_repeated_columns_is_refused() -> None:
    frame = pd.DataFrame([[1, 2]], columns=["a", "a"])
    with pytest.raises(ResultError, match=r"value\['rows'\].*repeated column names \(a\).*Rename"):
        to_json_safe({"rows": frame})


def test_series_and_index() -> None:
    assert to_json_safe(pd.Series([1.0, np.nan])) == [1.0, None]
    labelled = pd.Series([1.5, np.nan, 3], index=["x", "y", 7])
    assert to_json_safe(labelled) == {"x": 1.5, "y": None, "7": 3.0}
    dated = pd.Series([1], index=pd.to_datetime(["2024-01-01"]))
    assert to_json_safe(dated) == {"2024-01-01T00:00:00": 1}
    assert to_json_safe(pd.Index([3, 1])) == [3, 1]
    assert to_json_safe(pd.Categorical(["a", "b", "a"])) == ["a", "b", "a"]
    assert to_json_safe(pd.Series(["p", "q"], dtype="category")) == ["p", "q"]


def test_series_with_repeated_labels_is_refused() -> None:
    with pytest.raises(ResultError, match=r"value.*repeats labels.*unique.*reset_index"):
        to_json_safe(pd.Series([1, 2], index=["a", "a"]))


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (pd.Timestamp("2024-03-01 10:00", tz="Europe/Paris"), "2024-03-01T10:00:00+01:00"),
        (pd.Timedelta(hours=1, seconds=30), 3630.0),
        (pd.NaT, None),
        (pd.NA, None),
        (pd.Period("2024-03", freq="M"), "2024-03"),
    ],
)
def test_pandas_scalars(value: object, expected: object) -> None:
    assert to_json_safe(value) == expected


# --- shapely and geopandas -------------------------------------------------------------


@pytest.mark.parametrize(
    ("geometry", "expected"),
    [
        (Point(1, 2), {"type": "Point", "coordinates": [1.0, 2.0]}),
        (Point(1, 2, 3), {"type": "Point", "coordinates": [1.0, 2.0, 3.0]}),
        (
            LineString([(0, 0), (1, 1)]),
            {"type": "LineString", "coordinates": [[0.0, 0.0], [1.0, 1.0]]},
        ),
        (
            Polygon([(0, 0), (1, 0), (1, 1)]),
            {"type": "Polygon", "coordinates": [[[0.0, 0.0], [1.0, 0.0], [1.0, 1.0], [0.0, 0.0]]]},
        ),
        (
            MultiPolygon([Polygon([(0, 0), (1, 0), (1, 1)])]),
            {
                "type": "MultiPolygon",
                "coordinates": [[[[0.0, 0.0], [1.0, 0.0], [1.0, 1.0], [0.0, 0.0]]]],
            },
        ),
        (
            GeometryCollection([Point(0, 1)]),
            {
                "type": "GeometryCollection",
                "geometries": [{"type": "Point", "coordinates": [0.0, 1.0]}],
            },
        ),
        (Point(), None),
        (Polygon(), None),
        (GeometryCollection(), None),
    ],
)
def test_shapely_geometries(geometry: shapely.Geometry, expected: object) -> None:
    assert to_json_safe(geometry) == expected
    assert roundtrip({"g": geometry}) == {"g": expected}


def test_geodataframe_becomes_a_feature_collection() -> None:
    frame = gpd.GeoDataFrame(
        {"name": ["a", None], "score": [1.5, np.nan]},
        geometry=[Point(13.4, 52.5), None],
        crs=4326,
    )
    collection = roundtrip(frame)
    assert collection == {
        "type": "FeatureCollection",
        "features": [
            {
                "id": "0",
                "type": "Feature",
                "properties": {"name": "a", "score": 1.5},
                "geometry": {"type": "Point", "coordinates": [13.4, 52.5]},
            },
            {
                "id": "1",
                "type": "Feature",
                "properties": {"name": None, "score": None},
                "geometry": None,
            },
        ],
    }
    assert "bbox" not in json.dumps(collection)


def test_geodataframe_in_a_projected_crs_is_reprojected() -> None:
    frame = gpd.GeoDataFrame(geometry=[Point(500_000, 0)], crs=32631)  # UTM 31N, lon 3°
    collection: Any = to_json_safe(frame)
    (feature,) = collection["features"]
    lon, lat = feature["geometry"]["coordinates"]
    assert lon == pytest.approx(3.0) and lat == pytest.approx(0.0, abs=1e-9)


def test_geoseries_becomes_a_feature_collection() -> None:
    out = to_json_safe(gpd.GeoSeries([Point(1, 2)]))
    assert out == {
        "type": "FeatureCollection",
        "features": [
            {
                "id": "0",
                "type": "Feature",
                "properties": {},
                "geometry": {"type": "Point", "coordinates": [1.0, 2.0]},
            }
        ],
    }


# --- refusals: every message names the place and the fix --------------------------------


def _generator() -> object:
    return (x for x in range(3))


@pytest.mark.parametrize(
    ("value", "path", "names", "fix"),
    [
        ({"a": b"raw"}, "value['a']", "bytes", "decode it"),
        ([1, bytearray(b"x")], "value[1]", "bytes", "decode it"),
        ({"rows": [0, _generator()]}, "value['rows'][1]", "a generator", "list(...)"),
        ({"f": len}, "value['f']", "a function (len)", "Call it"),
        ([lambda: 1], "value[0]", "a function", "Call it"),
        ({"m": math}, "value['m']", "a module (math)", "not the module"),
        ({"o": object()}, "value['o']", "an object of type object", "dict, list, number or text"),
        ({"c": Decimal}, "value['c']", "a class (Decimal)", "not the class"),
        ({"it": map(str, [1])}, "value['it']", "an iterator (map)", "list(...)"),
        ({"r": range(3)}, "value['r']", "a range", "list(...)"),
        ({"z": 1j}, "value['z']", "a complex number", "abs(z)"),
    ],
)
def test_unsupported_values_are_refused_with_path_and_fix(
    value: object, path: str, names: str, fix: str
) -> None:
    with pytest.raises(ResultTypeError) as info:
        to_json_safe(value)
    message = str(info.value)
    assert f"Cannot turn {path} into JSON" in message
    assert names in message
    assert fix in message
    assert isinstance(info.value, TypeError) and isinstance(info.value, ValueError)


def test_objects_with_a_dict_method_get_that_suggestion() -> None:
    class Report:
        def to_dict(self) -> dict[str, int]:
            return {"n": 1}

    with pytest.raises(ResultTypeError, match=r"test_results.*Report.*obj\.to_dict\(\)"):
        to_json_safe([Report()])


def test_plain_objects_are_pointed_at_vars() -> None:
    class Box:
        def __init__(self) -> None:
            self.size = 3

    with pytest.raises(ResultTypeError, match=r"value\[0\].*Box.*vars\(obj\)"):
        to_json_safe([Box()])


def test_cycle_in_a_dict_names_the_path() -> None:
    data: dict[str, object] = {"a": [1]}
    data["a"].append(data)  # type: ignore[attr-defined]
    with pytest.raises(ResultCycleError) as info:
        to_json_safe(data)
    message = str(info.value)
    assert "value['a'][1] refers back to value," in message
    assert "return plain data without references back to itself" in message.lower()


def test_cycle_in_a_list_names_the_path() -> None:
    inner: list[object] = []
    outer = [0, {"k": inner}]
    inner.append(outer[1])
    with pytest.raises(ResultCycleError, match=r"value\[1\]\['k'\]\[0\] refers back to value\[1\]"):
        to_json_safe(outer)


def test_shared_values_are_not_cycles() -> None:
    shared = [1, 2]
    assert to_json_safe({"a": shared, "b": [shared, shared]}) == {
        "a": [1, 2],
        "b": [[1, 2], [1, 2]],
    }


def test_nesting_beyond_max_depth_names_the_path() -> None:
    deep: list[object] = [1]
    for _ in range(5):
        deep = [deep]
    assert to_json_safe(deep, max_depth=10) == deep
    with pytest.raises(ResultError, match=r"value\[0\]\[0\]\[0\] is nested more than 3 .*flatter"):
        to_json_safe(deep, max_depth=3)


def test_very_deep_nesting_does_not_crash_the_interpreter() -> None:
    deep: list[object] = []
    for _ in range(5_000):
        deep = [deep]
    with pytest.raises(ResultError, match=r"value(\[0\]){50} is nested more than 50 levels"):
        to_json_safe(deep, max_depth=10_000)


def test_a_cycle_is_named_even_when_the_stack_runs_out_first() -> None:
    data: dict[str, object] = {}
    data["self"] = [data]
    with pytest.raises(ResultCycleError, match=r"value\['self'\]\[0\] refers back to value,"):
        to_json_safe(data, max_depth=100_000)


def test_colliding_keys_are_refused() -> None:
    with pytest.raises(ResultError, match=r"value\['m'\].*collide.*distinct"):
        to_json_safe({"m": {1: "a", "1": "b"}})


# --- encoding --------------------------------------------------------------------------


def test_encode_json_is_compact_utf8() -> None:
    assert encode_json({"a": [1, "é"], "b": None}) == '{"a":[1,"é"],"b":null}'.encode()
    assert json_size({"a": "é"}) == len('{"a":"é"}')


@pytest.mark.parametrize("bad", [float("nan"), float("inf"), [1, float("-inf")]])
def test_encode_json_refuses_nan(bad: object) -> None:
    with pytest.raises(ValueError, match="Out of range float"):
        encode_json(bad)  # type: ignore[arg-type]


def test_encode_json_refuses_lone_surrogates() -> None:
    with pytest.raises(ResultError, match=r"surrogates.*encode"):
        encode_json("\ud800")


def test_encode_json_ignores_a_rebound_json_dumps() -> None:
    original = json.dumps
    try:
        json.dumps = lambda *a, **k: "forged"
        assert encode_json({"a": 1}) == b'{"a":1}'
        assert digest({"a": 1}) == '{"a":1}'
    finally:
        json.dumps = original


def test_module_imports_only_the_standard_library_and_the_errors() -> None:
    # geomint.errors (the root its errors derive from) is standard library only, and loads
    # only the package's __init__ beside it.
    script = (
        "import importlib.util, sys\n"
        f"spec = importlib.util.spec_from_file_location('r', {str(MODULE_PATH)!r})\n"
        "module = importlib.util.module_from_spec(spec)\n"
        "spec.loader.exec_module(module)\n"
        "heavy = {'numpy', 'pandas', 'shapely', 'geopandas'} & set(sys.modules)\n"
        "ours = {m for m in sys.modules if m.partition('.')[0] == 'geomint'}\n"
        "assert not heavy and ours == {'geomint', 'geomint.errors'}, (heavy, ours)\n"
        "assert module.to_json_safe({'a': (1, float('nan'))}) == {'a': [1, None]}\n"
    )
    subprocess.run([sys.executable, "-c", script], check=True, timeout=60)


# --- charts ----------------------------------------------------------------------------


def test_valid_chart_is_returned_as_json() -> None:
    config = {
        "type": "bar",
        "data": {"labels": ("a", "b"), "datasets": [{"label": "n", "data": np.array([1, 2])}]},
        "options": {},
    }
    assert validate_chart(config) == {
        "type": "bar",
        "data": {"labels": ["a", "b"], "datasets": [{"label": "n", "data": [1, 2]}]},
        "options": {},
    }


@pytest.mark.parametrize("chart_type", sorted(CHART_TYPES))
def test_every_chart_type_is_accepted(chart_type: str) -> None:
    assert validate_chart({"type": chart_type, "data": {}})["type"] == chart_type


@pytest.mark.parametrize(
    ("given", "suggested"),
    [
        ("Bar", "bar"),
        ("piechart", "pie"),
        ("polararea", "polarArea"),
        ("histogram", "bar"),
        ("Line Chart", "line"),
        ("donut", "doughnut"),
        ("scater", "scatter"),
    ],
)
def test_near_miss_chart_types_get_a_suggestion_not_a_substitute(
    given: str, suggested: str
) -> None:
    with pytest.raises(ChartError) as info:
        validate_chart({"type": given, "data": {}})
    message = str(info.value)
    assert f"Chart type {given!r} is not supported. Did you mean {suggested!r}?" in message
    assert "bar, bubble, doughnut, line, pie, polarArea, radar, scatter" in message


@pytest.mark.parametrize(
    ("config", "expected"),
    [
        ([1, 2], "The chart must be a dict like"),
        ({"data": {}}, "The chart has no 'type'. Set 'type' to one of: bar"),
        ({"type": "sankey", "data": {}}, "Chart type 'sankey' is not supported. Use one of"),
        ({"type": 3, "data": {}}, "Chart type 3 is not supported."),
        ({"type": ["bar"], "data": {}}, "Chart type ['bar'] is not supported. Use one of"),
        ({"type": "bar"}, "The chart's 'data' must be a dict like"),
        ({"type": "bar", "data": [1, 2]}, "The chart's 'data' must be a dict like {'type'"),
        ({"type": "bar", "data": {"datasets": {}}}, "data['datasets'] must be a list"),
        ({"type": "bar", "data": {"datasets": [1]}}, "data['datasets'][0] must be a dict"),
        (
            {"type": "bar", "data": {"datasets": [{"data": [1]}, {"label": "x"}]}},
            "data['datasets'][1]['data'] must be a list, not missing",
        ),
        ({"type": "bar", "data": {}, "options": []}, "The chart's 'options' must be a dict"),
        (
            {"type": "line", "data": {}, "options": {"scales": {"x": {"type": "time"}}}},
            "options['scales']['x']['type'] is 'time'; axes can be category, linear",
        ),
        (
            {
                "type": "bar",
                "data": {},
                "options": {"plugins": {"legend": {"labels": {"filter": "(item) => true"}}}},
            },
            "options['plugins']['legend']['labels']['filter'] takes a function",
        ),
        (
            {"type": "bar", "data": {}, "options": {"onClick": "alert(1)"}},
            "options['onClick'] takes a function",
        ),
    ],
)
def test_bad_charts_are_refused_with_the_fix(config: object, expected: str) -> None:
    with pytest.raises(ChartError) as info:
        validate_chart(config)
    assert expected in str(info.value)


def test_ordinary_chart_options_pass() -> None:
    config = {
        "type": "bar",
        "data": {"labels": ["a"], "datasets": [{"data": [1], "type": "line"}]},
        "options": {
            "indexAxis": "y",
            "scales": {"x": {"type": "logarithmic", "ticks": {"stepSize": 1}}, "y": {}},
            "plugins": {"legend": {"display": False}, "title": {"text": "once"}},
        },
    }
    assert validate_chart(config) == config


def test_chart_with_unconvertible_values_reports_the_path() -> None:
    with pytest.raises(ResultTypeError, match=r"value\['data'\]\['labels'\].*generator"):
        validate_chart({"type": "bar", "data": {"labels": _generator()}})


# --- digest ----------------------------------------------------------------------------


@pytest.mark.parametrize("value", [None, 3, "text", [1, 2], {"a": {"b": [1.5, None]}}])
def test_small_values_are_returned_whole(value: object) -> None:
    assert digest(value) == encode_json(value).decode()  # type: ignore[arg-type]


def test_digest_keeps_start_and_end_and_counts_the_rest() -> None:
    rows: JsonValue = [{"id": i, "name": f"n{i}"} for i in range(100_000)]
    text = encode_json(rows).decode()
    out = digest(rows, max_chars=2_000)
    summary, body = out.split("\n", 1)
    assert summary == "list of 100,000 items; the first is a dict with keys id, name"
    head, rest = body.split("…[truncated ", 1)
    count, tail = rest.split("; the full result went to the UI]…")
    omitted, total = count.split(" characters of ")
    assert text.startswith(head) and text.endswith(tail)
    assert len(head) > 500 and len(tail) > 300
    assert int(total.replace(",", "")) == len(text)
    assert int(omitted.replace(",", "")) == len(text) - len(head) - len(tail)
    assert len(out) <= 2_000


@pytest.mark.parametrize("max_chars", [0, 10, 100, 1_000])
def test_digest_stays_within_a_small_margin(max_chars: int) -> None:
    value: JsonValue = {f"key_{i}_{'x' * 50}": list(range(50)) for i in range(200)}
    assert len(digest(value, max_chars=max_chars)) <= max_chars + 400


def test_digest_summarises_feature_collections_and_dicts() -> None:
    frame = gpd.GeoDataFrame(
        {"name": ["a"] * 500, "score": [1.0] * 500}, geometry=[Point(1, 2)] * 500, crs=4326
    )
    out = digest(to_json_safe(frame), max_chars=1_000)
    assert out.startswith("FeatureCollection of 500 features, properties: name, score\n")
    out = digest({"alpha": "x" * 5_000, "beta": 1}, max_chars=1_000)
    assert out.startswith("dict with 2 keys: alpha, beta\n")
    assert digest("y" * 10_000, max_chars=100).startswith("text of 10,000 characters\n")


def test_digest_never_separates_a_character_from_its_marks() -> None:
    combining = "e\u0301"  # e + combining acute: one visible character, two code points
    text = combining * 5_000
    out = digest(text, max_chars=1_001)
    body = out.split("\n", 1)[1]
    head, rest = body.split("…[truncated ", 1)
    tail = rest.split("UI]…", 1)[1]
    assert not head.endswith("e") or head.endswith('"')
    assert tail.startswith("e\u0301") or tail == '"'
    out.encode("utf-8")


# --- speed -----------------------------------------------------------------------------


@pytest.mark.slow
def test_a_million_small_dicts_convert_quickly() -> None:
    rows = [{"id": i, "name": "x", "score": 0.5} for i in range(1_000_000)]
    start = time.perf_counter()
    out = to_json_safe(rows)
    elapsed = time.perf_counter() - start
    assert out == rows
    assert elapsed < 5.0, f"{elapsed:.2f} s"
