"""Gate 1 unit tests: what :func:`geomint.sandbox.prepare.prepare` refuses, and where.

Every refusal case names the line the model wrote and a fragment of the reason the model
reads, so a change that keeps refusing but points at the wrong line, or says something a
model cannot act on, fails here.
"""

from __future__ import annotations

import ast

import pytest

from geomint import audit
from geomint.sandbox import Sandbox
from geomint.sandbox import _policy as policy
from geomint.sandbox._runtime import LIBRARY_NAMES
from geomint.sandbox.prepare import (
    GateRefused,
    PreparedCode,
    check_expression,
    compile_body,
    prepare,
    strip_fences,
)

INPUTS = ("places_by_entry", "routes_by_entry", "geometries_by_entry", "threshold")
NAMES = (*LIBRARY_NAMES, *INPUTS)


def _prepare(code: str) -> PreparedCode:
    return prepare(code, NAMES)


def _refusal(code: str) -> list[tuple[int, str]]:
    return [(v.line, v.reason) for v in _prepare(code).violations]


# (id, code, line, fragment of the reason)
REFUSED: list[tuple[str, str, int, str]] = [
    # -- imports outside the allowlist ---------------------------------------------------
    ("import-os", "import os\nreturn 1", 1, "import of `os` is not allowed"),
    ("import-sys", "x = 1\nimport sys\nreturn x", 2, "import of `sys` is not allowed"),
    ("import-subprocess", "import subprocess\nreturn 1", 1, "cannot start processes"),
    ("import-socket", "import socket\nreturn 1", 1, "import of `socket` is not allowed"),
    ("import-importlib", "import importlib\nreturn 1", 1, "`importlib` is not allowed"),
    ("import-ctypes", "import ctypes\nreturn 1", 1, "import of `ctypes` is not allowed"),
    ("import-pickle", "import pickle\nreturn 1", 1, "import of `pickle` is not allowed"),
    ("import-builtins", "import builtins\nreturn 1", 1, "import of `builtins` is not allowed"),
    ("import-io", "import io\nreturn 1", 1, "import of `io` is not allowed"),
    ("import-pathlib", "import pathlib\nreturn 1", 1, "import of `pathlib` is not allowed"),
    ("import-requests", "import requests\nreturn 1", 1, "cannot reach the network"),
    ("import-urllib", "import urllib.request\nreturn 1", 1, "cannot reach the network"),
    ("import-inspect", "import inspect\nreturn 1", 1, "import of `inspect` is not allowed"),
    ("import-gc", "import gc\nreturn 1", 1, "import of `gc` is not allowed"),
    ("import-sklearn", "import sklearn.cluster\nreturn 1", 1, "geo.cluster"),
    ("import-os-alias", "import numpy as np2, os as o\nreturn 1", 1, "`os` is not allowed"),
    ("from-os-import", "from os import path\nreturn 1", 1, "import of `os` is not allowed"),
    ("from-os-path", "from os.path import join\nreturn 1", 1, "`os.path` is not allowed"),
    ("import-in-function", "def f():\n    import os\nreturn f()", 2, "`os` is not allowed"),
    ("numpy-ctypeslib", "import numpy.ctypeslib\nreturn 1", 1, "`numpy.ctypeslib` is not"),
    ("numpy-ctypeslib-from", "from numpy import ctypeslib\nreturn 1", 1, "native libraries"),
    ("numpy-ctypeslib-name", "from numpy.ctypeslib import as_array\nreturn 1", 1, "native"),
    ("numpy-ctypeslib-attr", "x = 1\nreturn np.ctypeslib.as_array(x)", 2, "`.ctypeslib`"),
    ("numpy-f2py", "import numpy.f2py as f\nreturn 1", 1, "compiles and loads native code"),
    ("array-ctypes", "a = np.zeros(3)\nreturn a.ctypes.data", 2, "raw memory access"),
    ("relative-import", "from . import helpers\nreturn 1", 1, "relative imports"),
    ("relative-import-up", "from ..x import y\nreturn 1", 1, "relative imports"),
    ("star-import", "from math import *\nreturn pi", 1, "`from math import *` is not allowed"),
    # -- builtins that get around every other rule --------------------------------------
    ("eval", "return eval('1 + 1')", 1, "`eval` is not available"),
    ("exec", "exec('x = 1')\nreturn 1", 1, "`exec` is not available"),
    ("compile", "c = compile('1', 'f', 'eval')\nreturn 1", 1, "`compile` is not available"),
    ("dunder-import", "m = __import__('os')\nreturn 1", 1, "`__import__` is not available"),
    ("open", "with open('/etc/passwd') as f:\n    return f.read()", 1, "no file access"),
    ("globals", "return globals()", 1, "`globals` is not available"),
    ("locals", "x = 1\nreturn locals()", 2, "`locals` is not available"),
    ("vars", "return vars(np)", 1, "`vars` is not available"),
    ("breakpoint", "breakpoint()\nreturn 1", 1, "no debugger"),
    ("input", "return input('?')", 1, "`input` is not available"),
    ("eval-by-name", "f = eval\nreturn f('1')", 1, "`eval` is not available"),
    ("builtins-name", "return __builtins__", 1, "`__builtins__` reaches interpreter"),
    # -- dunder attributes and subscripts ------------------------------------------------
    ("dunder-class", "return (1).__class__", 1, "`.__class__` reaches interpreter internals"),
    ("dunder-subclasses", "return object.__subclasses__()", 1, "`.__subclasses__`"),
    ("dunder-globals", "def f():\n    pass\nreturn f.__globals__", 3, "`.__globals__`"),
    ("dunder-dict", "return np.__dict__", 1, "`.__dict__` reaches interpreter internals"),
    ("dunder-in-fstring", "x = 1\nreturn f'{x.__class__}'", 2, "`.__class__`"),
    ("dunder-subscript", "d = {}\nreturn d['__builtins__']", 2, "subscript `['__builtins__']`"),
    ("private-attribute", "return np._pytesttester", 1, "private attribute `._pytesttester`"),
    # -- frame, generator and traceback internals ----------------------------------------
    ("f-back", "def f(fr):\n    return fr.f_back\nreturn 1", 2, "`.f_back` reaches frames"),
    ("f-globals", "g = None\nreturn g.f_globals", 2, "`.f_globals` reaches frames"),
    ("gi-frame", "g = (i for i in [])\nreturn g.gi_frame", 2, "`.gi_frame` reaches frames"),
    ("tb-frame", "try:\n    1 / 0\nexcept Exception as e:\n    t = e.tb_frame", 4, "`.tb_frame`"),
    ("cr-frame", "async def h():\n    pass\nc = h()\nreturn c.cr_frame", 4, "`.cr_frame`"),
    ("co-consts", "def f():\n    pass\nreturn f.co_consts", 3, "`.co_consts` reaches"),
    ("with-traceback", "e = ValueError()\nreturn e.with_traceback(None)", 2, "with_traceback"),
    ("frame-subscript", "d = {}\nreturn d['f_globals']", 2, "subscript `['f_globals']`"),
    # -- getattr/setattr/hasattr with computed or dunder names ---------------------------
    ("getattr-computed", "name = 'x'\nreturn getattr(np, name)", 2, "needs a literal"),
    ("getattr-dunder", "return getattr(np, '__loader__')", 1, "`getattr` of `__loader__`"),
    ("setattr-computed", "k = 'a'\nsetattr(np, k, 1)\nreturn 1", 2, "`setattr` needs a literal"),
    ("setattr-dunder", "class A:\n    pass\nsetattr(A, '__eq__', 1)", 3, "`setattr` of `__eq__`"),
    ("hasattr-computed", "n = 'a'\nreturn hasattr(np, n)", 2, "`hasattr` needs a literal"),
    ("getattr-frame", "g = None\nreturn getattr(g, 'gi_frame')", 2, "`.gi_frame` reaches"),
    ("getattr-alias", "g = getattr\nreturn g(np, 'x')", 1, "`getattr` may only be called"),
    (
        "getattr-reduce",
        "import functools\nreturn functools.reduce(getattr, ['a'], np)",
        2,
        "`getattr` may only be called",
    ),
    ("hasattr-map", "return list(map(hasattr, [np], ['x']))", 1, "`hasattr` may only be called"),
    # -- modules re-exported by allowed ones ----------------------------------------------
    ("pandas-io-os", "import pandas.io.common as c\nreturn c.os.listdir('/')", 2, "`.os` is not"),
    ("typing-sys", "import typing\nreturn typing.sys.modules", 2, "`.sys` is not available"),
    ("json-codecs", "import json\nreturn json.codecs.open('/etc/passwd').read()", 2, "`.codecs`"),
    ("uuid-os", "import uuid\nreturn uuid.os.environ", 2, "`.os` is not available"),
    ("from-import-os", "from pandas.io.common import os\nreturn os.getcwd()", 1, "`.os` is not"),
    ("getattr-sys", "import enum\nreturn getattr(enum, 'sys')", 2, "`.sys` is not available"),
    # -- format strings that reach attributes --------------------------------------------
    ("format-attr", "x = 1\nreturn '{0.__class__}'.format(x)", 2, "format field `{0.__class__}`"),
    ("format-item", "d = [1]\nreturn '{a[0]}'.format(a=d)", 2, "format field `{a[0]}`"),
    ("format-computed", "t = '{}'\nreturn t.format(1)", 2, "`.format` on a computed template"),
    ("format-str-method", "return str.format('{0}', 1)", 1, "`str.format` with a computed"),
    ("format-map", "t = '{a}'\nreturn t.format_map({'a': 1})", 2, "`.format_map` is not available"),
    ("string-formatter", "import string\nf = string.Formatter()\nreturn 1", 2, "Formatter"),
    # -- file and network entry points of numpy, pandas, geopandas -----------------------
    ("np-load", "return np.load('x.npy')", 1, "`.load` is not available: reads or writes"),
    ("np-fromfile", "return np.fromfile('x.bin')", 1, "`.fromfile` is not available"),
    ("np-tofile", "a = np.arange(3)\na.tofile('x.bin')\nreturn 1", 2, "`.tofile`"),
    ("np-memmap", "return np.memmap('x', mode='r')", 1, "`.memmap` is not available"),
    ("np-save", "np.save('x', np.arange(3))\nreturn 1", 1, "`.save` is not available"),
    ("np-loadtxt", "return np.loadtxt('x.txt')", 1, "`.loadtxt` is not available"),
    ("from-numpy-load", "from numpy import load\nreturn 1", 1, "`.load` is not available"),
    ("pd-read-csv", "df = pd.read_csv('data.csv')\nreturn len(df)", 1, "`.read_csv`"),
    ("pd-read-csv-url", "return pd.read_csv('https://x.org/a.csv')", 1, "`.read_csv`"),
    ("pd-read-html", "return pd.read_html('https://example.org')", 1, "`.read_html`"),
    ("pd-read-json", "return pd.read_json('a.json')", 1, "`.read_json` is not available"),
    ("pd-read-pickle", "return pd.read_pickle('x.pkl')", 1, "`.read_pickle` is not available"),
    ("from-pandas-read", "from pandas import read_csv\nreturn 1", 1, "`.read_csv`"),
    ("gpd-read-file", "return gpd.read_file('x.shp')", 1, "`.read_file` is not available"),
    ("gpd-read-parquet", "return gpd.read_parquet('x')", 1, "`.read_parquet` is not available"),
    ("to-csv-path", "df = pd.DataFrame()\ndf.to_csv('x.csv')", 2, "`.to_csv(path)` writes a file"),
    ("to-json-path-kw", "df = pd.DataFrame()\nreturn df.to_json(path_or_buf='x')", 2, "writes"),
    ("to-parquet", "df = pd.DataFrame()\ndf.to_parquet('x')\nreturn 1", 2, "`.to_parquet`"),
    ("to-pickle", "df = pd.DataFrame()\ndf.to_pickle('x')\nreturn 1", 2, "`.to_pickle`"),
    ("to-file", "g = gpd.GeoDataFrame()\ng.to_file('x.gpkg')\nreturn 1", 2, "`.to_file`"),
    ("json-load-file", "import json\nreturn json.load(x)", 2, "`.load` is not available"),
    ("pickle-loads-alias", "import numpy as json2\nreturn json2.loads(b'')", 2, "`.loads`"),
    # -- sizes ---------------------------------------------------------------------------
    ("huge-code", "x = 1\n" * 30_000, 0, "characters; the limit is"),
    ("huge-literal", "s = '" + "a" * 25_000 + "'\nreturn s", 1, "characters is over the limit"),
    ("huge-int", "n = " + "9" * 150 + "\nreturn n", 1, "integer literal over 100 digits"),
    ("power-tower", "x = 1\nreturn 10**10**10", 2, "exponent over 10,000"),
    ("big-power", "return 2 ** 100_000", 1, "exponent over 10,000"),
    ("repeat-string", "return 'a' * 10**12", 1, "would exhaust memory"),
    ("repeat-list", "return [0] * (10**9)", 1, "would exhaust memory"),
    # -- loops that never end, generators --------------------------------------------------
    ("while-true", "n = 0\nwhile True:\n    n += 1", 2, "`while True` with no `break`"),
    ("while-1", "while 1:\n    pass", 1, "never ends"),
    (
        "while-true-inner-break",
        "while True:\n    for i in range(3):\n        break\nreturn 1",
        1,
        "never ends",
    ),
    (
        "while-true-return-in-helper",
        "while True:\n    def g():\n        return 1\n    g()",
        1,
        "never ends",
    ),
    ("yield-top", "for i in range(3):\n    yield i", 2, "`yield` at the top level"),
    ("yield-from-top", "x = [1]\nyield from x", 2, "`yield` at the top level"),
    # -- names and definitions -----------------------------------------------------------
    ("dunder-param", "def f(__builtins__):\n    return 1", 1, "`__builtins__` is reserved"),
    ("dunder-class-name", "class __Evil__:\n    pass\nreturn 1", 1, "`__Evil__` is reserved"),
    ("match-class-dunder", "match 1:\n    case int(__class__=c):\n        pass", 2, "__class__"),
    # -- modules re-exported under names Gate 1 did not know, private modules -------------
    ("enum-bltns", "import enum\nreturn enum.bltns.open", 2, "`.bltns` is not available"),
    ("typing-types", "import typing\nreturn typing.types", 2, "`.types` is not available"),
    ("pyarrow-alias", "import pandas.tseries.frequencies as f\nreturn f.lib.pa", 2, "`.pa`"),
    ("pydoc", "x = shapely\nreturn x.pydoc.locate('os')", 2, "`.pydoc` is not available"),
    ("private-module", "import pandas._testing\nreturn 1", 1, "private module"),
    ("private-from-module", "from pandas._libs import lib\nreturn 1", 1, "private module"),
    ("private-name", "from typing import _eval_type\nreturn 1", 1, "`_eval_type` is private"),
    # -- Trojan Source -------------------------------------------------------------------
    (
        "bidi-in-docstring",
        'def f():\n    """ok\u2067 """\n    return 1\nreturn f()',
        2,
        "column 10: U+2067 RIGHT-TO-LEFT ISOLATE is a bidirectional control character",
    ),
    ("bidi-in-string", "x = 1\ns = 'a\u202eb'\nreturn s", 2, "U+202E RIGHT-TO-LEFT OVERRIDE"),
    ("bidi-in-comment", "return 1  # \u2066", 1, "U+2066 LEFT-TO-RIGHT ISOLATE"),
    ("arabic-letter-mark", "return 'a\u061c'", 1, "U+061C ARABIC LETTER MARK"),
    ("rlm-outside", "x = 1\u200f\nreturn x", 1, "U+200F RIGHT-TO-LEFT MARK"),
    (
        "zero-width-in-name",
        "total\u200b = 1\nreturn total",
        1,
        "column 6: U+200B ZERO WIDTH SPACE is invisible, or breaks a line where none is seen",
    ),
    ("zero-width-joiner-code", "x = 1 +\u200d 2\nreturn x", 1, "U+200D ZERO WIDTH JOINER"),
    # From the second red team: letters that look like nothing, and line breaks a reader
    # does not see (a lone CR ends a comment for Python, not on screen).
    ("hangul-filler-name", "\u3164 = 1\nreturn \u3164", 1, "U+3164 HANGUL FILLER"),
    ("hangul-choseong-filler", "x\u115f = 1\nreturn 2", 1, "U+115F HANGUL CHOSEONG FILLER"),
    ("cr-in-comment", "x = 1  # note\rreturn 999\nreturn x", 1, "U+000D CARRIAGE RETURN"),
    ("line-separator", "x = 1  # a\u2028return 2\nreturn x", 1, "U+2028 LINE SEPARATOR"),
    ("vertical-tab-in-comment", "x = 1  # note\x0breturn 999\nreturn x", 1, "U+000B"),
    ("next-line-in-comment", "x = 1  # note\x85return 999\nreturn x", 1, "U+0085"),
]


@pytest.mark.parametrize(
    ("code", "line", "fragment"),
    [pytest.param(code, line, fragment, id=name) for name, code, line, fragment in REFUSED],
)
def test_refused(code: str, line: int, fragment: str) -> None:
    prepared = _prepare(code)
    assert not prepared.ok
    matching = [v for v in prepared.violations if fragment in v.reason]
    assert matching, f"no reason mentions {fragment!r}: {prepared.violations}"
    assert matching[0].line == line, prepared.violations


def test_there_are_many_refusal_cases() -> None:
    assert len(REFUSED) >= 60
    assert len({name for name, *_ in REFUSED}) == len(REFUSED)


# -- what must pass ------------------------------------------------------------------------

ALLOWED: list[tuple[str, str]] = [
    ("windows-line-endings", "x = 1\r\nreturn x"),
    ("hangul-filler-in-string", "return '\u3164 ok'"),
    ("to-csv-no-path", "df = pd.DataFrame({'a': [1]})\nreturn df.to_csv(index=False)"),
    ("to-json-no-path", "df = pd.DataFrame({'a': [1]})\nreturn df.to_json(orient='records')"),
    ("json-codec", "import json\ns = json.dumps({'a': 1})\nreturn json.loads(s)"),
    ("json-codec-alias", "import json as js\nreturn js.loads(js.dumps([1]))"),
    ("json-from-import", "from json import dumps, loads\nreturn loads(dumps(1))"),
    ("wkt-loads", "import shapely.wkt\nreturn shapely.wkt.loads('POINT (1 2)').x"),
    ("wkt-from-import", "from shapely import wkt\nreturn wkt.loads('POINT (1 2)').x"),
    ("wkt-alias", "from shapely import wkt as W\nreturn W.loads('POINT (1 2)').x"),
    ("format-spec", "return '{:.2f} km'.format(3.14159)"),
    ("format-named", "return '{name}: {n:,}'.format(name='a', n=1000)"),
    ("percent-format", "return '%s / %d' % ('a', 1)"),
    ("getattr-literal", "class A:\n    b = 1\nreturn getattr(A, 'b', None)"),
    ("hasattr-geo-interface", "g = shapely.Point(0, 0)\nreturn hasattr(g, '__geo_interface__')"),
    ("geo-interface", "g = shapely.Point(0, 0)\nreturn g.__geo_interface__"),
    ("dunder-init-super", "class A(dict):\n    def __init__(self):\n        super().__init__()"),
    ("type-name", "return type(1).__name__"),
    (
        "namedtuple-asdict",
        "from collections import namedtuple\nP = namedtuple('P', 'a')\nP(1)._asdict()",
    ),
    ("self-private", "class A:\n    def __init__(self):\n        self._cache = {}\nreturn 1"),
    ("source-property", "return [f['properties']['_source'] for f in []]"),
    ("while-true-break", "n = 0\nwhile True:\n    n += 1\n    if n > 3:\n        break\nreturn n"),
    ("while-true-return", "while True:\n    return 1"),
    ("while-true-raise", "while True:\n    raise ValueError('x')"),
    ("while-true-return-in-loop", "while True:\n    for i in range(3):\n        return i"),
    (
        "while-true-for-else-break",
        "while True:\n    for i in []:\n        pass\n    else:\n        break\nreturn 1",
    ),
    (
        "while-true-try-break",
        "it = iter([1])\nwhile True:\n    try:\n        next(it)\n"
        "    except StopIteration:\n        break\nreturn 1",
    ),
    ("while-condition", "i = 0\nwhile i < 3:\n    i += 1\nreturn i"),
    ("generator-helper", "def gen():\n    yield 1\nreturn list(gen())"),
    ("generator-expression", "return sum(i for i in range(4))"),
    ("numpy-alias", "import numpy as numpy_\nreturn float(numpy_.mean([1, 2]))"),
    (
        "shape-alias",
        "from shapely.geometry import shape as S\n"
        "return S({'type': 'Point', 'coordinates': [0, 0]}).x",
    ),
    ("numpy-submodule", "import numpy.linalg\nreturn float(numpy.linalg.norm([3, 4]))"),
    ("geomint-geo", "from geomint import geo as g\nreturn 1"),
    ("moderate-repeat", "return '-' * 40 + str([0] * 1000)"),
    ("moderate-power", "return 2 ** 64 + 10 ** 6"),
    ("await-helper", "async def h():\n    return 1\nreturn await h()"),
    ("long-literal-ok", "s = '" + "a" * 5_000 + "'\nreturn len(s)"),
    ("pandas-api-types", "return pd.api.types.is_numeric_dtype(pd.Series([1]))"),
    ("pandas-api-types-import", "from pandas.api import types\nreturn types.is_bool(True)"),
    ("joiner-in-string", "return 'family: \U0001f468\u200d\U0001f469'"),
    ("joiner-in-fstring", "n = 1\nreturn f'{n}\u200d'"),
    ("zero-width-in-multiline-string", 's = """a\n\u200bb"""\nreturn s'),
]


@pytest.mark.parametrize("code", [pytest.param(code, id=name) for name, code in ALLOWED])
def test_allowed(code: str) -> None:
    prepared = _prepare(code)
    assert prepared.violations == ()
    assert prepared.dropped == ()
    compile(compile_body(prepared.source, NAMES), "<code>", "exec")


# -- several violations, fences, syntax errors --------------------------------------------


def test_every_violation_is_reported_with_its_line() -> None:
    code = (
        "import os\n"  # 1
        "x = 1\n"  # 2
        "y = eval('2')\n"  # 3
        "def f(g):\n"  # 4
        "    return g.f_back\n"  # 5
        "z = np.load('a.npy')\n"  # 6
        "while True:\n"  # 7
        "    x += 1\n"  # 8
        "return x.__class__\n"  # 9
    )
    found = _refusal(code)
    assert [line for line, _ in found] == [1, 3, 5, 6, 7, 9]
    reasons = " | ".join(reason for _, reason in found)
    for fragment in ("`os`", "`eval`", "`.f_back`", "`.load`", "`while True`", "`.__class__`"):
        assert fragment in reasons


def test_two_violations_on_one_line_are_both_kept() -> None:
    found = _refusal("x = 1\nreturn eval(open('f').read())")
    assert {line for line, _ in found} == {2}
    assert any("`eval`" in r for _, r in found)
    assert any("`open`" in r for _, r in found)


def test_the_same_violation_twice_on_a_line_is_reported_once() -> None:
    found = _refusal("return eval('1') + eval('2')")
    assert len(found) == 1


FENCED = "```python\nx = 1\nimport os\nreturn x\n```"


def test_fenced_code_reports_lines_of_the_original_text() -> None:
    prepared = _prepare(FENCED)
    assert prepared.line_offset == 1
    assert prepared.source == "x = 1\nimport os\nreturn x"
    assert [v.line for v in prepared.violations] == [3]


def test_fence_with_blank_lines_above_counts_them() -> None:
    prepared = _prepare("\n\n```py\nreturn eval('1')\n```\n")
    assert prepared.line_offset == 3
    assert [v.line for v in prepared.violations] == [4]


def test_fence_without_language_and_without_closing() -> None:
    body, offset = strip_fences("```\nreturn 1")
    assert (body, offset) == ("return 1", 1)
    assert _prepare("```\nreturn 1\n```").ok


@pytest.mark.parametrize(
    ("code", "line"),
    [
        pytest.param("x = (1,\nreturn x", 1, id="unclosed"),
        pytest.param("x = 1\nreturn x +", 2, id="dangling-operator"),
        pytest.param("for i in range(3):\nreturn 1", 2, id="indentation"),
        pytest.param("```python\nx = 1\ny = = 2\n```", 3, id="fenced"),
    ],
)
def test_syntax_error_is_one_violation_with_a_line(code: str, line: int) -> None:
    prepared = _prepare(code)
    assert prepared.syntax_error
    assert len(prepared.violations) == 1
    assert prepared.violations[0].line == line
    assert "does not parse" in prepared.violations[0].reason


def test_empty_code_is_refused() -> None:
    prepared = _prepare("  \n\n")
    assert prepared.syntax_error
    assert "empty" in prepared.violations[0].reason


def test_too_many_lines() -> None:
    found = _refusal("pass\n" * (policy.LIMITS["max_lines"] + 10))
    assert len(found) == 1
    assert "lines" in found[0][1]


def test_static_checks_off_skips_the_verifier_but_still_parses() -> None:
    assert prepare("import os\nreturn 1", NAMES, static_checks=False).ok
    assert prepare("return (", NAMES, static_checks=False).syntax_error


def test_non_text_code_is_a_type_error() -> None:
    with pytest.raises(TypeError):
        prepare(b"return 1", NAMES)  # type: ignore[arg-type]


# -- redundant re-bindings -------------------------------------------------------------------


@pytest.mark.parametrize(
    "lookup",
    [
        "globals()['places_by_entry']",
        "kwargs['places_by_entry']",
        "locals()['places_by_entry']",
        'globals()["places_by_entry"]',
    ],
)
def test_redundant_rebinding_of_an_injected_name_is_dropped(lookup: str) -> None:
    prepared = _prepare(f"places_by_entry = {lookup}\nreturn len(places_by_entry)")
    assert prepared.dropped == (0,)
    assert prepared.ok, prepared.violations
    module = compile_body(prepared.source, NAMES, dropped=prepared.dropped)
    function = module.body[0]
    assert isinstance(function, ast.AsyncFunctionDef)
    assert [type(s) for s in function.body] == [ast.Return]


def test_rebinding_later_in_the_body_is_dropped_by_index() -> None:
    prepared = _prepare("n = 1\nthreshold = kwargs['threshold']\nreturn threshold + n")
    assert prepared.dropped == (1,)
    assert prepared.ok


@pytest.mark.parametrize(
    "code",
    [
        pytest.param(
            "places_by_entry = {k: v for k, v in places_by_entry.items() if v}\nreturn 1",
            id="genuine-shadowing",
        ),
        pytest.param("other = kwargs['places_by_entry']\nreturn 1", id="other-target"),
        pytest.param("places_by_entry = kwargs['routes_by_entry']\nreturn 1", id="other-key"),
        pytest.param("not_injected = kwargs['not_injected']\nreturn 1", id="not-injected"),
        pytest.param("places_by_entry = dict(places_by_entry)\nreturn 1", id="copy"),
    ],
)
def test_other_assignments_are_kept(code: str) -> None:
    assert _prepare(code).dropped == ()


def test_a_lookup_that_is_not_a_rebinding_is_still_refused() -> None:
    found = _refusal("other = globals()['places_by_entry']\nreturn 1")
    assert found and "`globals`" in found[0][1]


# -- defines_only --------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("code", "name"),
    [
        pytest.param("def analyse(places):\n    return 1", "analyse", id="function"),
        pytest.param("import math\ndef f():\n    '''Doc.'''\n    return 1", "f", id="import"),
        pytest.param("async def run():\n    return 1", "run", id="async"),
        pytest.param("def a():\n    return 1\ndef b():\n    return a()", "b", id="two"),
        pytest.param("analyse = lambda places: len(places)", "analyse", id="lambda"),
    ],
)
def test_defines_only(code: str, name: str) -> None:
    prepared = _prepare(code)
    assert prepared.ok
    assert prepared.defines_only == name


@pytest.mark.parametrize(
    "code",
    [
        pytest.param("def f():\n    return 1\nreturn f()", id="return-call"),
        pytest.param("def f():\n    return 1\nf()", id="final-call"),
        pytest.param("def f():\n    return 1\nresult = f()", id="assigned-call"),
        pytest.param("f = lambda: 1\nreturn f()", id="lambda-called"),
        pytest.param("x = 1\ndef f():\n    return x", id="other-statement"),
    ],
)
def test_not_defines_only(code: str) -> None:
    assert _prepare(code).defines_only is None


# -- compile_body --------------------------------------------------------------------------


def test_compile_body_turns_a_final_expression_into_the_result() -> None:
    module = compile_body("x = 2\nx * 3", ["np"])
    function = module.body[0]
    assert isinstance(function, ast.AsyncFunctionDef)
    assert [a.arg for a in function.args.args] == ["np"]
    last = function.body[-1]
    assert isinstance(last, ast.Return)
    assert last.lineno == 2


def test_policy_lists_are_consistent() -> None:
    assert "numpy" in policy.ALLOWED_MODULES
    assert all(m.split(".")[0] in policy.ALLOWED_MODULES for m in policy.DENIED_SUBMODULES)
    assert not set(policy.DENIED_CALLS) & set(LIBRARY_NAMES)


# -- rule names, the operator's log, text a library evaluates -------------------------------


@pytest.mark.parametrize(
    ("code", "rule"),
    [
        ("import os\nreturn 1", "import"),
        ("return ().__class__", "dunder"),
        ("return 'a\u2067'", "bidi"),
        ("x\u200b = 1", "invisible"),
        ("import enum\nreturn enum.bltns", "denied-attribute"),
        ("return eval('1')", "builtin"),
    ],
)
def test_every_violation_names_its_rule(code: str, rule: str) -> None:
    assert _prepare(code).violations[0].rule == rule


def test_a_refusal_is_logged_with_its_rule_and_line_never_the_code(
    caplog: pytest.LogCaptureFixture,
) -> None:
    audit.reset()
    with Sandbox(mode="in-process") as sandbox, caplog.at_level("WARNING", "geomint.security"):
        result = sandbox.run("x = 1\nsecret_marker = ().__class__\nreturn x")
        sandbox.run("return (")  # a syntax error is a typo, not a refusal to log
    assert not result.ok
    assert audit.counts()["gate1_refused"] == 1
    (line,) = [r.getMessage() for r in caplog.records]
    assert '"rule": "dunder"' in line and '"line": 2' in line
    assert "secret_marker" not in line and "__class__" not in line


@pytest.mark.parametrize(
    "text",
    ["a > 1 and b < 2", "c = a + b", "list[int]", "dict[str, 'float']", "a.str.len() > 3"],
)
def test_plain_expressions_pass_the_call_time_check(text: str) -> None:
    check_expression(text, what="the expression", instead="write it plainly")


@pytest.mark.parametrize(
    ("text", "fragment"),
    [
        ("__import__('os')", "`__import__` is not available"),
        ("x.__class__.__base__", "`.__class__` reaches interpreter internals"),
        ("np.load('f')", "`.load` is not available"),
        ("a > 1 \u2067", "bidirectional control character"),
        ("a >", "does not parse as Python"),
    ],
)
def test_the_call_time_check_refuses_what_gate1_refuses(text: str, fragment: str) -> None:
    with pytest.raises(GateRefused, match="boolean indexing") as caught:
        check_expression(text, what="the query", instead="use boolean indexing")
    assert fragment in str(caught.value)
