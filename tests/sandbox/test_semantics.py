"""What a body means when it runs through :class:`geomint.sandbox.Sandbox`, in every mode.

The rules a model relies on: a top-level ``return`` or a final expression is the result,
markdown fences are ignored, errors name the exception and the model's own line, the
inputs are private copies, and values come back as plain JSON.
"""

from __future__ import annotations

import copy
import json
import math
from typing import Any

import pytest

from geomint.errors import UsageError
from geomint.sandbox import CodeError, Sandbox, SandboxResult, Violation

PLACES: dict[str, Any] = {
    "places-1": {
        "type": "FeatureCollection",
        "features": [
            {
                "type": "Feature",
                "properties": {"name": "Café de Jaren", "rating": 4.5},
                "geometry": {"type": "Point", "coordinates": [4.8945, 52.3676]},
            },
            {
                "type": "Feature",
                "properties": {"name": "Koffie Academie", "rating": 4.7},
                "geometry": {"type": "Point", "coordinates": [4.8820, 52.3755]},
            },
        ],
    }
}


def _places() -> dict[str, Any]:
    return copy.deepcopy(PLACES)


def _ok(result: SandboxResult) -> Any:
    assert result.ok, f"{result.error} / hint: {result.hint}"
    return result.value


def _failed(result: SandboxResult) -> CodeError:
    assert not result.ok
    assert result.value is None
    assert result.error is not None
    return result.error


# -- what the result is ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("code", "expected"),
    [
        pytest.param("return 42", 42, id="return"),
        pytest.param("x = 6\nif x > 5:\n    return 'big'\nreturn 'small'", "big", id="early"),
        pytest.param("for i in range(10):\n    if i == 3:\n        return i", 3, id="in-loop"),
        pytest.param("try:\n    return 1\nfinally:\n    pass", 1, id="in-try"),
        pytest.param("return", None, id="bare-return"),
    ],
)
def test_top_level_return(any_mode: Sandbox, code: str, expected: Any) -> None:
    result = any_mode.run(code)
    if expected is None:
        assert _failed(result).type == "NoResult"
    else:
        assert _ok(result) == expected


@pytest.mark.parametrize(
    ("code", "expected"),
    [
        pytest.param("x = 2\nx * 21", 42, id="arithmetic"),
        pytest.param("{'a': 1, 'b': [1, 2]}", {"a": 1, "b": [1, 2]}, id="literal"),
        pytest.param("total = 0\nfor i in range(4):\n    total += i\ntotal", 6, id="after-loop"),
        pytest.param("def f(x):\n    return x + 1\nf(1)", 2, id="call"),
        pytest.param("sorted(places_by_entry)", ["places-1"], id="input"),
        pytest.param("len(places_by_entry['places-1']['features'])", 2, id="len"),
    ],
)
def test_final_expression_is_the_result(any_mode: Sandbox, code: str, expected: Any) -> None:
    assert _ok(any_mode.run(code, {"places_by_entry": _places()})) == expected


def test_a_statement_that_is_not_an_expression_is_not_a_result(any_mode: Sandbox) -> None:
    error = _failed(any_mode.run("x = 1 + 1"))
    assert error.type == "NoResult"
    assert "returned None" in error.message
    assert "return <value>" in error.message


@pytest.mark.parametrize(
    "code",
    [
        pytest.param("```python\nx = 20\nreturn x + 1\n```", id="python"),
        pytest.param("```py\nx = 20\nreturn x + 1\n```", id="py"),
        pytest.param("```\nx = 20\nreturn x + 1\n```", id="bare"),
        pytest.param("\n```python\nx = 20\nreturn x + 1\n```\n\n", id="blank-lines"),
        pytest.param("```python\nx = 20\nx + 1", id="no-closing-fence"),
    ],
)
def test_markdown_fences_are_stripped(any_mode: Sandbox, code: str) -> None:
    assert _ok(any_mode.run(code)) == 21


@pytest.mark.parametrize(
    ("code", "name"),
    [
        pytest.param("def analyse(places_by_entry):\n    return 1", "analyse", id="def"),
        pytest.param("```python\ndef main():\n    return 1\n```", "main", id="fenced"),
        pytest.param(
            "import math\n\nasync def compute():\n    return math.pi", "compute", id="async"
        ),
        pytest.param("summarise = lambda fc: len(fc['features'])", "summarise", id="lambda"),
    ],
)
def test_defines_only_gets_a_targeted_message(any_mode: Sandbox, code: str, name: str) -> None:
    error = _failed(any_mode.run(code))
    assert error.type == "NoResult"
    assert f"only defines `{name}`" in error.message
    assert "never calls it" in error.message
    assert f"return {name}(...)" in error.message


@pytest.mark.parametrize(
    "code",
    [
        pytest.param("x = 1", id="no-return"),
        pytest.param("return None", id="explicit-none"),
        pytest.param("print('done')", id="print-is-none"),
        pytest.param("def f():\n    return 1\nf()\nx = 2", id="called-not-returned"),
    ],
)
def test_none_is_a_no_result_error(any_mode: Sandbox, code: str) -> None:
    result = any_mode.run(code)
    error = _failed(result)
    assert error.type == "NoResult"
    assert "returned None" in error.message
    assert "only defines" not in error.message


# -- errors name the exception and the model's line ------------------------------------------

ERRORS = [
    pytest.param(
        "a = {}\nreturn a['missing']", "KeyError", 2, "return a['missing']", "missing", id="key"
    ),
    pytest.param(
        "x = 1\ny = 0\nz = x / y\nreturn z", "ZeroDivisionError", 3, "z = x / y", "division",
        id="zero-division",
    ),
    pytest.param(
        "def helper(v):\n    return v['rating'] + 1\n\nreturn helper({'rating': None})",
        "TypeError", 2, "return v['rating'] + 1", "NoneType", id="in-helper",
    ),
    pytest.param(
        "```python\nitems = [1, 2]\n\nreturn items[5]\n```", "IndexError", 4, "return items[5]",
        "out of range", id="fenced",
    ),
    pytest.param(
        "\n\n```python\nx = 1\nraise ValueError('bad input')\n```", "ValueError", 5,
        "raise ValueError('bad input')", "bad input", id="fenced-after-blank-lines",
    ),
    pytest.param(
        "from shapely.geometry import shape\n"
        "g = shape({'type': 'Nope', 'coordinates': []})\nreturn 1",
        "GeometryTypeError", 2, "g = shape({'type': 'Nope', 'coordinates': []})", "nope",
        id="inside-library",
    ),
    pytest.param(
        "vals = [1, 'a']\nreturn sorted(vals, key=lambda v: v + 1)", "TypeError", 2,
        "return sorted(vals, key=lambda v: v + 1)", "", id="in-lambda",
    ),
    pytest.param(
        "return undefined_name + 1", "NameError", 1, "return undefined_name + 1",
        "undefined_name", id="name",
    ),
    pytest.param(
        "class Acc:\n    def __init__(self):\n        self.n = 0\n    def add(self):\n"
        "        self.n += self.missing\nAcc().add()\nreturn 1",
        "AttributeError", 5, "self.n += self.missing", "missing", id="in-method",
    ),
]  # fmt: skip


@pytest.mark.parametrize(("code", "kind", "line", "code_line", "fragment"), ERRORS)
def test_error_names_the_exception_and_the_models_line(
    any_mode: Sandbox, code: str, kind: str, line: int, code_line: str, fragment: str
) -> None:
    result = any_mode.run(code)
    error = _failed(result)
    assert error.type == kind
    assert error.line == line
    assert error.code_line == code_line
    assert fragment in error.message
    assert code.splitlines()[line - 1].strip() == code_line  # the model's own text
    assert f"line {line}" in str(error)
    assert result.violations == ()


@pytest.mark.parametrize(
    ("code", "kind"),
    [
        pytest.param("raise SystemExit(3)", "SystemExit", id="system-exit"),
        pytest.param("raise KeyboardInterrupt", "KeyboardInterrupt", id="keyboard-interrupt"),
        pytest.param(
            "def f(n):\n    return f(n + 1)\nreturn f(0)", "RecursionError", id="recursion"
        ),
    ],
)
def test_base_exceptions_are_errors_and_the_host_lives_on(
    any_mode: Sandbox, code: str, kind: str
) -> None:
    assert _failed(any_mode.run(code)).type == kind
    assert _ok(any_mode.run("return 'still here'")) == "still here"


def test_stdout_is_kept_when_the_code_fails(any_mode: Sandbox) -> None:
    result = any_mode.run("print('before')\nraise RuntimeError('after')")
    assert _failed(result).type == "RuntimeError"
    assert result.stdout == "before\n"


# -- inputs ------------------------------------------------------------------------------------

MUTATE = """
places_by_entry["places-1"]["features"].sort(key=lambda f: f["properties"]["name"], reverse=True)
places_by_entry["places-1"]["features"][0]["properties"]["name"] = "changed"
places_by_entry["places-1"]["features"].append({"type": "Feature"})
del places_by_entry["places-1"]["type"]
places_by_entry["new"] = None
return len(places_by_entry["places-1"]["features"])
"""

READ = """
features = places_by_entry["places-1"]["features"]
return [sorted(places_by_entry), features[0]["properties"]["name"], len(features)]
"""


def test_inputs_are_copies(any_mode: Sandbox) -> None:
    places = _places()
    inputs = {"places_by_entry": places}
    assert _ok(any_mode.run(MUTATE, inputs)) == 3
    assert places == PLACES
    assert inputs == {"places_by_entry": PLACES}
    assert _ok(any_mode.run(READ, inputs)) == [["places-1"], "Café de Jaren", 2]


def test_the_same_input_object_twice_is_two_copies(any_mode: Sandbox) -> None:
    shared = [1, 2]
    code = "a.append(3)\nreturn [a, b]"
    assert _ok(any_mode.run(code, {"a": shared, "b": shared})) == [[1, 2, 3], [1, 2]]
    assert shared == [1, 2]


def test_every_input_key_becomes_an_identifier(any_mode: Sandbox) -> None:
    inputs = {
        "threshold": 800,
        "label": "cafés",
        "entry_ids": ["places-1"],
        "options": {"unit": "m"},
        "nothing": None,
        "places_by_entry": _places(),
        "_private": True,
        "Ünïcode": 1,
    }
    code = (
        "return [threshold, label, entry_ids, options['unit'], nothing, "
        "len(places_by_entry), _private, Ünïcode]"
    )
    assert _ok(any_mode.run(code, inputs)) == [800, "cafés", ["places-1"], "m", None, 1, True, 1]


def test_libraries_and_mint_are_always_injected(any_mode: Sandbox) -> None:
    code = (
        "return [callable(mint.value), np.pi > 3, pd.isna(None), h3.is_valid_cell('x'), "
        "shapely.Point(0, 0).x, pyproj.Geod is not None, gpd.GeoSeries([]).size, "
        "geo is not None]"
    )
    assert _ok(any_mode.run(code)) == [True, True, True, False, 0.0, True, 0, True]


@pytest.mark.parametrize(
    "name",
    ["not-an-id", "class", "np", "__x", "mint", "2fast", "", "a b", "shapely", "None", 3],
)
def test_invalid_input_names_are_a_usage_error(in_process: Sandbox, name: Any) -> None:
    with pytest.raises(UsageError, match="input name"):
        in_process.run("return 1", {name: 1})


def test_inputs_that_are_not_json_data_are_a_usage_error(in_process: Sandbox) -> None:
    with pytest.raises(UsageError):
        in_process.run("return 1", {"handle": object()})


def test_redundant_rebinding_is_dropped_and_shadowing_kept(any_mode: Sandbox) -> None:
    inputs = {"places_by_entry": _places(), "threshold": 4.6}
    dropped = "places_by_entry = globals()['places_by_entry']\nreturn len(places_by_entry)"
    assert _ok(any_mode.run(dropped, inputs)) == 1
    shadow = (
        "places_by_entry = {k: [f for f in fc['features'] "
        "if f['properties']['rating'] > threshold] for k, fc in places_by_entry.items()}\n"
        "return {k: len(v) for k, v in places_by_entry.items()}"
    )
    assert _ok(any_mode.run(shadow, inputs)) == {"places-1": 1}


# -- values ------------------------------------------------------------------------------------


NORMALISED = [
    pytest.param("return np.float64(1.5)", 1.5, id="numpy-float"),
    pytest.param("return np.int64(7)", 7, id="numpy-int"),
    pytest.param("return np.bool_(True)", True, id="numpy-bool"),
    pytest.param("return float('nan')", None, id="nan"),
    pytest.param("return [float('inf'), -float('inf'), 1.0]", [None, None, 1.0], id="inf"),
    pytest.param("return np.array([1.0, np.nan, 3.0])", [1.0, None, 3.0], id="array-nan"),
    pytest.param("return np.arange(4).reshape(2, 2)", [[0, 1], [2, 3]], id="array-2d"),
    pytest.param("return {'mean': np.nanmean([1.0, np.nan])}", {"mean": 1.0}, id="nested"),
    pytest.param("return (1, 2)", [1, 2], id="tuple"),
    pytest.param("return {3, 1, 2}", [1, 2, 3], id="set"),
    pytest.param("return {1: 'a'}", {"1": "a"}, id="int-key"),
    pytest.param("return pd.Series([1, None]).tolist()", [1.0, None], id="series-nan"),
    pytest.param("return pd.DataFrame({'a': [1, 2]})", [{"a": 1}, {"a": 2}], id="dataframe"),
    pytest.param(
        "import datetime\nreturn datetime.datetime(2024, 5, 14, 8, 30)",
        "2024-05-14T08:30:00", id="datetime",
    ),
    pytest.param(
        "return shapely.Point(4.9, 52.37)",
        {"type": "Point", "coordinates": [4.9, 52.37]}, id="shapely",
    ),
]  # fmt: skip


@pytest.mark.parametrize(("code", "expected"), NORMALISED)
def test_values_are_normalised_to_json(any_mode: Sandbox, code: str, expected: Any) -> None:
    pytest.importorskip("geomint.sandbox.results")
    value = _ok(any_mode.run(code))
    assert value == expected
    assert [type(v) for v in _leaves(value)] == [type(v) for v in _leaves(expected)]


def _leaves(value: Any) -> list[Any]:
    if isinstance(value, dict):
        return [leaf for v in value.values() for leaf in _leaves(v)]
    if isinstance(value, list):
        return [leaf for v in value for leaf in _leaves(v)]
    return [value]


def test_a_geodataframe_becomes_a_feature_collection(any_mode: Sandbox) -> None:
    pytest.importorskip("geomint.sandbox.results")
    code = (
        "gdf = gpd.GeoDataFrame.from_features(places_by_entry['places-1']['features'], crs=4326)\n"
        "gdf['score'] = gdf['rating'] * 2\n"
        "return gdf.to_crs(gdf.estimate_utm_crs())"
    )
    value = _ok(any_mode.run(code, {"places_by_entry": _places()}))
    assert value["type"] == "FeatureCollection"
    features = value["features"]
    assert [f["properties"]["name"] for f in features] == ["Café de Jaren", "Koffie Academie"]
    assert [f["properties"]["score"] for f in features] == [9.0, 9.4]
    for feature, source in zip(features, PLACES["places-1"]["features"], strict=True):
        assert feature["geometry"]["type"] == "Point"
        for got, want in zip(
            feature["geometry"]["coordinates"], source["geometry"]["coordinates"], strict=True
        ):
            assert math.isclose(got, want, abs_tol=1e-7), "reprojected back to EPSG:4326"


def test_a_result_with_a_cycle_is_a_clear_error(any_mode: Sandbox) -> None:
    pytest.importorskip("geomint.sandbox.results")
    error = _failed(any_mode.run("x = {'a': []}\nx['a'].append(x)\nreturn x"))
    assert "cycle" in error.message


def test_a_value_with_no_json_form_is_a_clear_error(any_mode: Sandbox) -> None:
    pytest.importorskip("geomint.sandbox.results")
    error = _failed(any_mode.run("class Thing:\n    pass\nreturn {'t': Thing()}"))
    assert "Thing" in error.message


# -- stdout --------------------------------------------------------------------------------------


def test_stdout_is_captured(any_mode: Sandbox) -> None:
    result = any_mode.run("print('hello', 42)\nprint(f'{3.14159:.2f}')\nreturn 1")
    assert _ok(result) == 1
    assert result.stdout == "hello 42\n3.14\n"
    assert not result.stdout_truncated


def test_stdout_is_capped(any_mode: Sandbox) -> None:
    limit = any_mode.stdout_limit
    result = any_mode.run(f"for i in range(3):\n    print('x' * {limit})\nreturn 1")
    assert _ok(result) == 1
    assert result.stdout_truncated
    assert result.stdout == "x" * limit


def test_stdout_just_under_the_cap_is_not_truncated(any_mode: Sandbox) -> None:
    limit = any_mode.stdout_limit
    result = any_mode.run(f"print('y' * {limit - 1})\nreturn 1")
    assert not result.stdout_truncated
    assert len(result.stdout) == limit


# -- mint -----------------------------------------------------------------------------------------

MINT_ERRORS = [
    pytest.param("n = 3\nmint.value(n, '')\nreturn n", 2, "TypeError", "needs a label", id="empty"),
    pytest.param("mint.value(3, None)\nreturn 1", 1, "TypeError", "needs a label", id="none-label"),
    pytest.param("mint.value(3, 'x' * 500)\nreturn 1", 1, "ValueError", "characters", id="long"),
    pytest.param(
        "x = 1\nmint.value('12', 'count')\nreturn x", 2, "TypeError", "takes a number, got str",
        id="text",
    ),
    pytest.param(
        "mint.value([1, 2], 'count')\nreturn 1", 1, "TypeError", "mint one number per call",
        id="list",
    ),
    pytest.param(
        "```python\n\nmint.value(float('nan'), 'mean')\nreturn 1\n```", 3, "ValueError",
        "not a finite number", id="nan-fenced",
    ),
    pytest.param("mint.value(1, 'n', unit=5)\nreturn 1", 1, "TypeError", "unit", id="unit"),
    pytest.param(
        "mint.value(1, 'n', sources=[1])\nreturn 1", 1, "TypeError", "entry ids", id="sources"
    ),
    pytest.param(
        "def mk():\n    return mint.layer([1, 2], 'bad')\nmk()\nreturn 1", 2, "TypeError",
        "mint.layer takes GeoJSON", id="layer-in-helper",
    ),
]  # fmt: skip


@pytest.mark.parametrize(("code", "line", "kind", "fragment"), MINT_ERRORS)
def test_mint_misuse_is_an_error_at_the_models_line(
    any_mode: Sandbox, code: str, line: int, kind: str, fragment: str
) -> None:
    error = _failed(any_mode.run(code))
    assert error.type == kind
    assert error.line == line
    assert fragment in error.message


FIGURES = """```python
cafes = places_by_entry["places-1"]["features"]

count = mint.value(len(cafes), "cafés found", unit="places", sources=["places-1"])
ratings = [f["properties"]["rating"] for f in cafes]
summary = {"best": mint.value(max(ratings), "best rating", unit="stars")}
mint.layer(places_by_entry["places-1"], "Cafés")
return summary
```"""


def test_figures_and_layers_carry_the_models_lines(any_mode: Sandbox) -> None:
    result = any_mode.run(FIGURES, {"places_by_entry": _places()})
    assert _ok(result) == {"best": 4.7}
    assert [f.model_dump() for f in result.figures] == [
        {"label": "cafés found", "value": 2, "unit": "places", "sources": ["places-1"], "line": 4},
        {"label": "best rating", "value": 4.7, "unit": "stars", "sources": None, "line": 6},
    ]
    (layer,) = result.layers
    assert layer.label == "Cafés"
    assert layer.line == 7
    assert layer.data == PLACES["places-1"]
    lines = FIGURES.splitlines()
    assert "mint.value(len(cafes)" in lines[4 - 1]
    assert "mint.layer" in lines[7 - 1]


def test_figures_registered_before_an_error_are_kept(any_mode: Sandbox) -> None:
    # The figure was computed right; only what came after it failed.
    result = any_mode.run("mint.value(1, 'one')\nraise ValueError('no')")
    assert _failed(result).type == "ValueError"
    assert [(f.label, f.value, f.line) for f in result.figures] == [("one", 1, 1)]


def test_mint_layer_accepts_geometry_feature_and_geodataframe(any_mode: Sandbox) -> None:
    code = (
        "mint.layer(shapely.Point(1, 2), 'a point')\n"
        "mint.layer(places_by_entry['places-1']['features'][0], 'a feature')\n"
        "mint.layer(gpd.GeoDataFrame.from_features(places_by_entry['places-1'], crs=4326), 'gdf')\n"
        "return 1"
    )
    result = any_mode.run(code, {"places_by_entry": _places()})
    assert _ok(result) == 1
    assert [(lay.label, len(lay.data["features"]), lay.line) for lay in result.layers] == [
        ("a point", 1, 1),
        ("a feature", 1, 2),
        ("gdf", 2, 3),
    ]
    assert all(lay.data["type"] == "FeatureCollection" for lay in result.layers)


# -- async ----------------------------------------------------------------------------------------


def test_await_of_a_body_defined_async_helper(any_mode: Sandbox) -> None:
    code = (
        "async def rating(f):\n"
        "    return f['properties']['rating']\n"
        "async def total(fs):\n"
        "    return sum([await rating(f) for f in fs])\n"
        "return round(await total(places_by_entry['places-1']['features']), 1)"
    )
    assert _ok(any_mode.run(code, {"places_by_entry": _places()})) == 9.2


def test_an_error_inside_an_awaited_helper_has_its_line(any_mode: Sandbox) -> None:
    code = "async def h():\n    return 1 / 0\nreturn await h()"
    error = _failed(any_mode.run(code))
    assert (error.type, error.line) == ("ZeroDivisionError", 2)


# -- what reaches the model, and the plain-data form ------------------------------------------


def test_refused_code_did_not_run(any_mode: Sandbox) -> None:
    result = any_mode.run("print('ran')\nimport os\nreturn eval('1')")
    assert not result.ok
    assert result.stdout == ""
    assert [v.line for v in result.violations] == [2, 3]
    error = _failed(result)
    assert error.type == "GateRefused"
    assert "import of `os`" in error.message and "`eval`" in error.message
    assert result.mode == any_mode.mode


def test_syntax_error_gets_the_unparsable_hint(any_mode: Sandbox) -> None:
    result = any_mode.run("```python\nx = [1,\n```")
    assert result.violations and result.violations[0].line == 2
    assert result.hint is not None
    assert "plain Python function body" in result.hint


def test_for_model_lists_violations(any_mode: Sandbox) -> None:
    text = any_mode.run("import os\nreturn open('x')").for_model()
    assert text.startswith("The code was refused before it ran:")
    assert "- line 1: import of `os`" in text
    assert "- line 2: `open` is not available" in text


def test_for_model_names_error_and_hint() -> None:
    result = SandboxResult(
        ok=False,
        error=CodeError(type="KeyError", message="'places-9'", line=3, code_line="fc = x['p']"),
        hint="the ids that exist are places-1",
    )
    assert result.for_model() == (
        "Error: KeyError: 'places-9' (line 3: `fc = x['p']`)\nHint: the ids that exist are places-1"
    )


def test_for_model_of_a_real_error(any_mode: Sandbox) -> None:
    text = any_mode.run("x = 1\nreturn x.nope").for_model()
    assert text.startswith("Error: AttributeError:")
    assert "(line 2: `return x.nope`)" in text


def test_for_model_of_a_value(any_mode: Sandbox) -> None:
    pytest.importorskip("geomint.sandbox.results")
    small = any_mode.run("return {'count': 3, 'names': ['a', 'b']}").for_model()
    assert json.loads(small) == {"count": 3, "names": ["a", "b"]}
    big = any_mode.run("return [f'item-{i:05d}' for i in range(5000)]").for_model(max_chars=500)
    assert len(big) < 1_000
    assert "item-00000" in big and "item-04999" in big  # keeps the start and the end
    assert "5,000" in big


def test_to_dict_is_json_serialisable(any_mode: Sandbox) -> None:
    results = [
        any_mode.run(FIGURES, {"places_by_entry": _places()}),
        any_mode.run("print('p')\nreturn {}['k']"),
        any_mode.run("import os\nreturn 1"),
        any_mode.run("return (", {}),
    ]
    for result in results:
        data = json.loads(json.dumps(result.to_dict()))
        assert data["ok"] is result.ok
        assert data["mode"] == any_mode.mode
        assert isinstance(data["duration_ms"], float)
    ok, failed, refused, unparsable = (json.loads(json.dumps(r.to_dict())) for r in results)
    assert ok["figures"][0]["line"] == 4 and ok["layers"][0]["label"] == "Cafés"
    assert failed["error"]["type"] == "KeyError" and failed["stdout"] == "p\n"
    assert refused["violations"] == [
        {"line": 1, "reason": refused["violations"][0]["reason"], "rule": "import"},
    ]
    assert unparsable["error"]["type"] == "GateRefused"


def test_violation_text() -> None:
    assert str(Violation(line=3, reason="no")) == "line 3: no"
    assert str(Violation(line=0, reason="too long")) == "too long"


def test_result_reports_mode_and_duration(any_mode: Sandbox) -> None:
    result = any_mode.run("return 1")
    assert result.mode == any_mode.mode
    assert result.mode in {"in-process", "isolated", "restricted"}
    assert result.duration_ms > 0


def test_every_allowed_module_imports_in_every_mode(any_mode: Sandbox) -> None:
    # The child's uid may not read the interpreter's directory: whatever `import` allows
    # must already be loaded (a regression once made `import colorsys` fail in a child).
    from geomint.sandbox import _policy

    modules = sorted(_policy.ALLOWED_MODULES)
    body = "\n".join(f"import {m} as m{i}" for i, m in enumerate(modules))
    body += "\nreturn [m.__name__ for m in [" + ", ".join(f"m{i}" for i in range(len(modules)))
    body += "]]"
    result = any_mode.run(body)
    assert result.ok, result.error
    assert result.value == modules


def test_geo_cluster_runs_in_every_mode(any_mode: Sandbox) -> None:
    # Pure computation (numpy, shapely, pyproj): the confined worker clusters without the
    # host, with the model's own pre_filter, and `previous` as the JSON it gets back.
    incidents = [
        {"type": "Feature", "id": i, "properties": {"m": m}, "geometry": g}
        for i, (m, g) in enumerate(
            [
                (3, {"type": "Point", "coordinates": [24.9400, 60.17]}),
                (3, {"type": "Point", "coordinates": [24.9405, 60.17]}),
                (0, {"type": "Point", "coordinates": [24.9410, 60.17]}),
                (4, {"type": "LineString", "coordinates": [[24.95, 60.17], [24.96, 60.17]]}),
                (4, {"type": "Point", "coordinates": [24.9550, 60.1705]}),
            ]
        )
    ]
    previous = {"clusters": [{"id": 7, "keys": [3, 4]}]}
    code = (
        "found = geo.cluster(incidents, eps_m=100, "
        "pre_filter=lambda f: f['properties']['m'] >= 3, previous=previous)\n"
        "return [[c.id, c.members, c.hull.geom_type] for c in found.clusters], found.skipped"
    )
    result = any_mode.run(code, inputs={"incidents": incidents, "previous": previous})
    assert result.ok, result.error
    # Two clusters of two, in input order; the one that shares members with `previous`
    # keeps its id 7, the other takes the next id.
    assert result.value == [[[8, [0, 1], "Polygon"], [7, [3, 4], "Polygon"]], [2]]
