"""Turn what model-written code returned into strict JSON, check charts, digest big results.

Runs inside the sandbox child, so it imports only the standard library and
:mod:`geomint.errors` (standard library only itself): numpy, pandas, shapely and geopandas
are recognised through ``sys.modules`` (the child has them loaded already) and never
imported here. Its errors are read by a language model, so each is a
:class:`~geomint.errors.ModelFacingError` that says where the problem is (a path such as
``value['a'][0]``), what it is, and the fix.

Representation choices:
    * NaN and the infinities become ``null`` everywhere, numpy arrays included.
    * Timedeltas (Python, pandas, numpy) become total seconds as a float.
    * Datetimes, dates and times become ISO 8601 text; NaT and ``pd.NA`` become ``null``.
    * Empty shapely geometries become ``null`` (GeoJSON has no empty geometry; a feature
      with a null geometry is valid). GeoDataFrames in another CRS are reprojected to
      EPSG:4326, as RFC 7946 requires.
    * A DataFrame becomes a list of row dicts; its index is kept as a column when it is
      named or not integer (group keys, labels) and its name does not clash.
    * Sets are sorted for determinism; namedtuples and dataclasses become dicts.
    * Non-text dict keys become text as ``json`` would (``1`` -> ``"1"``, ``True`` ->
      ``"true"``); other keys (tuples) use ``str(key)``.
"""

from __future__ import annotations

import dataclasses
import difflib
import enum
import json
import math
import sys
import types
import unicodedata
from collections import deque
from collections.abc import ItemsView, Iterable, KeysView, Mapping, ValuesView
from datetime import date, datetime, time, timedelta
from decimal import Decimal
from fractions import Fraction
from typing import Any, Final, TypeAlias

from geomint.errors import ModelFacingError

__all__ = [
    "CHART_TYPES", "ChartError", "JsonValue", "ResultCycleError", "ResultError",
    "ResultTypeError", "digest", "encode_json", "json_size", "to_json_safe", "validate_chart",
]  # fmt: skip

JsonValue: TypeAlias = bool | int | float | str | list["JsonValue"] | dict[str, "JsonValue"] | None

# Bound once at import so code that later rebinds ``json.dumps`` cannot change what we emit.
# Deeper tampering with ``json.encoder`` is not defended here: the host re-validates.
_ENCODE: Final = json.JSONEncoder(ensure_ascii=False, allow_nan=False, separators=(",", ":")).encode

_isfinite: Final = math.isfinite  # a module global: one lookup fewer per float

CHART_TYPES: Final = frozenset(
    {"bar", "line", "pie", "doughnut", "radar", "polarArea", "scatter", "bubble"}
)
_JOINERS: Final = "\u200d\ufe0e\ufe0f"  # zero-width joiner, variation selectors
#: Axis types Chart.js draws with what the page ships (time axes need a date adapter).
_SCALE_TYPES: Final = frozenset({"category", "linear", "logarithmic", "radialLinear"})
#: Options that only take a function: JSON can only put text there, which breaks the chart.
_FUNCTION_OPTIONS: Final = frozenset({"callbacks", "filter", "sort", "generateLabels"})
_CHART_SHAPE: Final = "{'type': 'bar', 'data': {'labels': [...], 'datasets': [{'data': [...]}]}}"
_CHART_ALIASES: Final = {
    "histogram": "bar", "column": "bar", "area": "line", "donut": "doughnut",
    "polar": "polarArea", "spider": "radar", "point": "scatter", "points": "scatter",
}  # fmt: skip


class ResultError(ModelFacingError, ValueError):
    """A result cannot be sent as JSON; the message says where and how to fix it."""


class ResultTypeError(ResultError, TypeError):
    """A result holds a value of a type that has no JSON form."""


class ResultCycleError(ResultError):
    """A result refers back to itself."""


class ChartError(ResultError):
    """A chart config is not one the UI can draw; the analysis reports it to the model."""


class _Trace(Exception):  # noqa: N818 - internal signal, never escapes this module
    """Carry a failure up the walk, collecting the path and the objects along it."""

    def __init__(
        self, what: str, fix: str, *, deep: bool = False, kind: type[ResultError] = ResultTypeError
    ) -> None:
        super().__init__(what)
        self.what, self.fix, self.deep, self.kind = what, fix, deep, kind
        self.steps: list[str] = []
        self.chain: list[object] = []


def to_json_safe(value: object, *, max_depth: int = 100) -> JsonValue:
    """Convert a result into plain JSON data: dicts, lists, text, numbers, booleans, null.

    Args:
        value: What the code returned, or a value handed to ``mint``.
        max_depth: How many levels of nested containers are allowed.

    Returns:
        A new structure of JSON types only, safe for :func:`encode_json`.

    Raises:
        ResultTypeError: A value has no JSON form (bytes, a generator, a function...).
        ResultCycleError: The value refers back to itself.
        ResultError: Nesting is deeper than ``max_depth``, or two dict keys collide.
    """
    # Cycles are not tracked on the way down, which would cost a set insert per container;
    # a cycle shows up as nesting beyond max_depth, and _explain then finds the repeat.
    try:
        return _walk(value, 0, max_depth)
    except _Trace as trace:
        raise _explain(trace, value, max_depth) from None
    except RecursionError:
        pass
    # The interpreter's stack ran out before max_depth did: walk again with a shallow limit
    # so the message can still name the path, and the cycle if there is one.
    try:
        _walk(value, 0, 50)
    except _Trace as trace:
        raise _explain(trace, value, 50) from None
    except RecursionError:
        pass
    raise ResultError(
        "The result is nested too deeply to convert. Return flatter data, such as a list "
        "of records."
    )


def _explain(trace: _Trace, root: object, max_depth: int) -> ResultError:
    steps, chain = trace.steps[::-1], [root, *trace.chain[::-1]]
    path = "value" + "".join(steps)
    if trace.deep:
        seen: dict[int, int] = {}
        for pos, obj in enumerate(chain):
            if id(obj) in seen:
                back = "value" + "".join(steps[: seen[id(obj)]])
                here = "value" + "".join(steps[:pos])
                return ResultCycleError(
                    f"Cannot turn the result into JSON: {here} refers back to {back}, a cycle. "
                    "Return plain data without references back to itself (build new dicts "
                    "and lists holding copies of the values)."
                )
            seen[id(obj)] = pos
        return ResultError(
            f"Cannot turn the result into JSON: {path} is nested more than {max_depth} "
            "levels deep. Return flatter data, such as a list of records."
        )
    return trace.kind(f"Cannot turn {path} into JSON: it is {trace.what}. {trace.fix}")


# The walkers test exact types first: plain JSON data, the common case, then costs a few
# identity checks per item and never reaches the isinstance chain in _other.
def _walk(value: Any, depth: int, limit: int) -> JsonValue:
    kind = type(value)
    if kind is str or kind is int or kind is bool or value is None:
        return value  # type: ignore[no-any-return]
    if kind is float:
        return value if _isfinite(value) else None
    if kind is dict:
        return _dict(value, depth, limit)
    if kind is list or kind is tuple:
        return _list(value, depth, limit, False)
    return _other(value, depth, limit)


def _dict(value: Mapping[Any, Any], depth: int, limit: int) -> dict[str, JsonValue]:
    if depth >= limit:
        raise _Trace("", "", deep=True)
    out: dict[str, JsonValue] = {}
    key = item = None
    try:
        for key, item in value.items():
            name = key if type(key) is str else _key(key)
            kind = type(item)
            if kind is str or kind is int or kind is bool or item is None:
                out[name] = item
            elif kind is float:
                out[name] = item if _isfinite(item) else None
            else:
                out[name] = _walk(item, depth + 1, limit)
    except _Trace as trace:
        trace.steps.append(f"[{key!r}]")
        trace.chain.append(item)
        raise
    if len(out) != len(value):
        raise _Trace(
            "a dict whose keys collide once turned into text (such as 1 and '1')",
            "Give every key a distinct text form; JSON keys are always text.",
            kind=ResultError,
        )
    return out


def _list(value: Iterable[Any], depth: int, limit: int, unordered: bool) -> list[JsonValue]:
    if depth >= limit:
        raise _Trace("", "", deep=True)
    out: list[JsonValue] = []
    append = out.append
    item = None
    try:
        for item in value:
            kind = type(item)
            if kind is str or kind is int or kind is bool or item is None:
                append(item)
            elif kind is float:
                append(item if _isfinite(item) else None)
            elif kind is dict:
                append(_dict(item, depth + 1, limit))
            else:
                append(_walk(item, depth + 1, limit))
    except _Trace as trace:
        # Find the index only now: counting on every item would tax the success path.
        index = next((i for i, x in enumerate(value) if x is item), "?")
        trace.steps.append("[*]" if unordered else f"[{index}]")
        trace.chain.append(item)
        raise
    return out


def _key(key: Any) -> str:
    if isinstance(key, enum.Enum):
        key = key.value
    if key is None or isinstance(key, bool):
        return "null" if key is None else ("true" if key else "false")
    numpy = sys.modules.get("numpy")
    if numpy is not None and isinstance(key, numpy.generic):
        key = key.item()
    if isinstance(key, float):
        # The spellings json.dumps uses for float keys, so keys match what it would write.
        if math.isfinite(key):
            return float.__repr__(key)
        return "NaN" if math.isnan(key) else ("Infinity" if key > 0 else "-Infinity")
    if isinstance(key, (datetime, date, time)):
        return key.isoformat()
    return str(key)


def _other(value: Any, depth: int, limit: int) -> JsonValue:
    """Convert anything that is not an exact builtin JSON type."""
    if isinstance(value, enum.Enum):
        return _walk(value.value, depth, limit)
    # Subclasses of text and numbers (np.float64, np.str_) become the exact builtin type;
    # the unbound methods skip any __str__ or __int__ the subclass overrides.
    if isinstance(value, str):
        return str.__str__(value)
    if isinstance(value, int):  # bool cannot be subclassed; IntEnum was caught above
        return int.__int__(value)
    if isinstance(value, float):
        return _float(float.__float__(value))
    if isinstance(value, Mapping):
        return _dict(value, depth, limit)
    if isinstance(value, tuple) and hasattr(type(value), "_fields"):
        return _dict(value._asdict(), depth, limit)  # type: ignore[attr-defined]
    if isinstance(value, (list, tuple, deque, KeysView, ValuesView, ItemsView)):
        return _list(value, depth, limit, False)
    if isinstance(value, (set, frozenset)):
        items = _list(value, depth, limit, True)
        try:
            return sorted(items)  # type: ignore[type-var]
        except TypeError:
            return sorted(items, key=_ENCODE)
    if isinstance(value, (bytes, bytearray, memoryview)):
        raise _Trace("bytes", "Return text, not bytes; decode it, e.g. data.decode('utf-8').")
    if isinstance(value, Decimal) and not value.is_finite():
        return None  # float() refuses a signalling NaN, and NaN has no JSON form anyway
    if isinstance(value, Decimal | Fraction):
        return _float(float(value))
    if isinstance(value, complex):
        raise _Trace("a complex number", "Return [z.real, z.imag] or abs(z) instead.")
    for library, convert in _LIBRARIES:
        if library in sys.modules:
            done, result = convert(sys.modules[library], value, depth, limit)
            if done:
                return result
    if isinstance(value, datetime | date | time):
        return value.isoformat()
    if isinstance(value, timedelta):
        return value.total_seconds()
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        fields = {f.name: getattr(value, f.name) for f in dataclasses.fields(value)}
        return _dict(fields, depth, limit)
    geo = None if isinstance(value, type) else getattr(value, "__geo_interface__", None)
    if isinstance(geo, Mapping):
        return _walk(geo, depth, limit)
    raise _Trace(*_refusal(value))


def _float(number: float) -> float | None:
    number = float(number)
    return number if _isfinite(number) else None


def _refusal(value: object) -> tuple[str, str]:
    """Name what a value is and what to return instead."""
    kind = type(value)
    name = f"{kind.__module__}.{kind.__qualname__}".removeprefix("builtins.")
    if isinstance(value, types.GeneratorType | types.AsyncGeneratorType):
        return "a generator", "Wrap it in list(...) to return its items."
    if isinstance(value, types.CoroutineType):
        return "a coroutine", "Await it and return the result."
    if isinstance(value, types.ModuleType):
        return f"a module ({value.__name__})", "Return a value computed with it, not the module."
    if isinstance(value, type):
        return f"a class ({value.__qualname__})", "Return data built from it, not the class."
    if callable(value):
        return f"a function ({getattr(value, '__qualname__', name)})", "Call it, return the result."
    if isinstance(value, range):
        return "a range", "Wrap it in list(...) to return its numbers."
    if hasattr(value, "__next__"):
        return f"an iterator ({name})", "Wrap it in list(...) to return its items."
    for method in ("to_dict", "model_dump", "_asdict", "tolist"):
        if callable(getattr(value, method, None)):
            return f"an object of type {name}", f"Return obj.{method}() instead."
    if hasattr(value, "__iter__"):
        return f"an iterable of type {name}", "Wrap it in list(...) if its items are the data."
    fix = "Return its data as a dict, list, number or text"
    fix += " (vars(obj) gives its attributes as a dict)." if hasattr(value, "__dict__") else "."
    return f"an object of type {name}", fix


_Converted: TypeAlias = tuple[bool, JsonValue]


def _numpy(np: Any, value: Any, depth: int, limit: int) -> _Converted:
    if isinstance(value, np.ndarray):
        return True, _array(np, value, depth, limit)
    if not isinstance(value, np.generic):
        return False, None
    # timedelta64 first: numpy counts it as an integer type.
    if isinstance(value, np.datetime64 | np.timedelta64) and np.isnat(value):
        return True, None
    if isinstance(value, np.datetime64):
        return True, str(np.datetime_as_string(value))
    if isinstance(value, np.timedelta64):
        return True, _float(value / np.timedelta64(1, "s"))
    if isinstance(value, np.bool_ | np.integer | np.floating):
        return True, _walk(value.item(), depth, limit)
    if isinstance(value, np.complexfloating):
        raise _Trace("a complex number", "Return [z.real, z.imag] or abs(z) instead.")
    return True, _walk(value.item(), depth, limit)


def _array(np: Any, array: Any, depth: int, limit: int) -> JsonValue:
    kind = array.dtype.kind
    if kind == "f" and not np.isfinite(array).all():
        array = np.where(np.isfinite(array), array.astype(object), None)
    elif kind == "M":
        text = np.datetime_as_string(array)
        array = np.where(np.isnat(array), None, text.astype(object))
    elif kind == "m":
        seconds = array / np.timedelta64(1, "s")
        array = np.where(np.isnat(array), None, seconds.astype(object))
    elif kind == "c":
        raise _Trace("an array of complex numbers", "Return np.abs(a) or a.real and a.imag.")
    elif kind == "S":
        raise _Trace("an array of bytes", "Return text, not bytes; decode it, e.g. a.astype(str).")
    return _walk(array.tolist(), depth, limit)


def _pandas(pd: Any, value: Any, depth: int, limit: int) -> _Converted:
    if value is pd.NA or value is pd.NaT:
        return True, None
    if isinstance(value, pd.DataFrame):
        if not value.columns.is_unique:
            dupes = ", ".join(sorted({str(c) for c in value.columns[value.columns.duplicated()]}))
            fix = "Rename the columns so each name is used once."
            raise _Trace(f"a DataFrame with repeated column names ({dupes})", fix, kind=ResultError)
        index = value.index
        if any(n is not None for n in index.names) or index.dtype.kind not in "iu":
            names = [n if n is not None else "index" for n in index.names]
            if not set(names) & set(value.columns):
                value = value.reset_index(names=names)
        return True, _list(value.to_dict(orient="records"), depth, limit, False)
    if isinstance(value, pd.Series):
        index = value.index
        if isinstance(index, pd.RangeIndex) and index.start == 0 and index.step == 1:
            return True, _list(value.tolist(), depth, limit, False)
        if not index.is_unique:
            fix = "Make them unique (s.groupby(level=0).sum()) or return s.reset_index()."
            raise _Trace("a Series whose index repeats labels", fix, kind=ResultError)
        return True, _dict(dict(zip(index.tolist(), value.tolist(), strict=True)), depth, limit)
    if isinstance(value, pd.Index | pd.Categorical | pd.api.extensions.ExtensionArray):
        return True, _list(value.tolist(), depth, limit, False)
    if isinstance(value, pd.Period | pd.Interval):
        return True, str(value)
    return False, None


def _shapely(shapely: Any, value: Any, depth: int, limit: int) -> _Converted:
    if not isinstance(value, shapely.Geometry):
        return False, None
    if value.is_empty:
        return True, None
    return True, _walk(shapely.geometry.mapping(value), depth, limit)


def _geopandas(gpd: Any, value: Any, depth: int, limit: int) -> _Converted:
    if isinstance(value, gpd.GeoSeries):
        value = value.to_frame()
    if not isinstance(value, gpd.GeoDataFrame):
        return False, None
    crs = value.crs
    if crs is not None and crs.to_epsg() != 4326:
        value = value.to_crs(4326)
    return True, _walk(value.to_geo_dict(na="null", show_bbox=False), depth, limit)


# geopandas before pandas (a GeoDataFrame is a DataFrame), all before the datetime check
# (a pandas Timestamp is a datetime, and NaT claims to be one too).
_LIBRARIES: Final = (
    ("geopandas", _geopandas), ("pandas", _pandas), ("numpy", _numpy), ("shapely", _shapely),
)  # fmt: skip


def encode_json(value: JsonValue) -> bytes:
    """Encode JSON data as compact, strict UTF-8 JSON (no NaN, no Infinity).

    Uses an encoder bound at import, so rebinding ``json.dumps`` later changes nothing;
    the host re-validates what it receives in any case.

    Raises:
        ValueError: The value holds NaN or an infinity, or text that is not valid Unicode.
        TypeError: The value holds a non-JSON type; call :func:`to_json_safe` first.
    """
    try:
        return _ENCODE(value).encode("utf-8")
    except UnicodeEncodeError:
        raise ResultError(
            "The result holds text with invalid characters (lone surrogates). Clean it, "
            "e.g. text.encode('utf-8', 'replace').decode('utf-8')."
        ) from None


def json_size(value: JsonValue) -> int:
    """Return the length in characters of the compact JSON text of a value."""
    return len(_ENCODE(value))


def validate_chart(value: object) -> dict[str, JsonValue]:
    """Check a Chart.js-style config and return it as JSON data.

    Raises:
        ChartError: The config is not a dict, its type is unknown, or its data is malformed.
        ResultError: The config holds values with no JSON form.
    """
    config = to_json_safe(value)
    if not isinstance(config, dict):
        raise _chart_error("chart", f"a dict like {_CHART_SHAPE}", config)
    chart_type = config.get("type")
    if not isinstance(chart_type, str) or chart_type not in CHART_TYPES:
        valid = ", ".join(sorted(CHART_TYPES, key=str.lower))
        if chart_type is None:
            raise ChartError(f"The chart has no 'type'. Set 'type' to one of: {valid}.")
        hint = _nearest_type(chart_type) if isinstance(chart_type, str) else None
        raise ChartError(
            f"Chart type {chart_type!r} is not supported."
            + (f" Did you mean {hint!r}?" if hint else "")
            + f" Use one of: {valid} (spelled exactly so; case matters)."
        )
    data = config.get("data")
    if not isinstance(data, dict):
        raise _chart_error("chart's 'data'", f"a dict like {_CHART_SHAPE}", data)
    datasets = data.get("datasets", [])
    if not isinstance(datasets, list):
        raise _chart_error("data['datasets']", "a list of dicts", datasets)
    for i, dataset in enumerate(datasets):
        if not isinstance(dataset, dict):
            raise _chart_error(f"data['datasets'][{i}]", "a dict", dataset)
        if not isinstance(dataset.get("data"), list):
            raise _chart_error(f"data['datasets'][{i}]['data']", "a list", dataset.get("data"))
    options = config.get("options", {})
    if not isinstance(options, dict):
        raise _chart_error("chart's 'options'", "a dict", config["options"])
    _check_options(options, "options")
    return config


def _check_options(value: JsonValue, where: str) -> None:
    """Refuse what Chart.js cannot draw from JSON: function-only options, time axes."""
    if isinstance(value, list):
        for i, item in enumerate(value):
            _check_options(item, f"{where}[{i}]")
        return
    if not isinstance(value, dict):
        return
    for key, item in value.items():
        here = f"{where}[{key!r}]"
        if key in _FUNCTION_OPTIONS or (key.startswith("on") and key[2:3].isupper()):
            raise ChartError(
                f"The chart's {here} takes a function, which a chart config cannot carry; "
                "remove it (labels and values come from 'data')."
            )
        if key == "type" and where.startswith("options['scales']") and item not in _SCALE_TYPES:
            raise ChartError(
                f"The chart's {here} is {item!r}; axes can be "
                f"{', '.join(sorted(_SCALE_TYPES))}. For dates, use them as category labels."
            )
        _check_options(item, here)


def _chart_error(where: str, wanted: str, got: object) -> ChartError:
    names = {dict: "a dict", list: "a list", str: "text", bool: "a boolean"}
    kind = "missing" if got is None else names.get(type(got), f"a {type(got).__name__}")
    return ChartError(f"The {where} must be {wanted}, not {kind}.")


def _nearest_type(name: str) -> str | None:
    folded = "".join(c for c in name.lower() if c.isalpha())
    for suffix in ("chart", "plot", "graph"):
        if folded.endswith(suffix) and len(folded) > len(suffix):
            folded = folded.removesuffix(suffix)
    by_fold = {t.lower(): t for t in CHART_TYPES}
    if folded in by_fold:
        return by_fold[folded]
    if folded in _CHART_ALIASES:
        return _CHART_ALIASES[folded]
    close = difflib.get_close_matches(folded, by_fold, n=1, cutoff=0.6)
    return by_fold[close[0]] if close else None


def digest(value: JsonValue, *, max_chars: int = 8_000) -> str:
    """Render a result as text for the model, eliding the middle when it is too long.

    Returns the compact JSON whole when it fits in ``max_chars``; otherwise a one-line
    summary of the shape, then the start and end of the JSON with a note in between of
    how much was left out. The text stays within ``max_chars`` plus about 350 characters.
    """
    text = _ENCODE(value)
    if len(text) <= max_chars:
        return text
    summary = _summary(value)
    note_size = 100 + len(f"{len(text):,}") * 2
    budget = max(max_chars - len(summary) - note_size, 0)
    head_end = _boundary(text, budget * 2 // 3)
    tail_start = _boundary(text, len(text) - (budget - head_end))
    omitted = tail_start - head_end
    note = f"…[truncated {omitted:,} characters of {len(text):,}; the full result went to the UI]…"
    return f"{summary}\n{text[:head_end]}{note}{text[tail_start:]}"


def _boundary(text: str, cut: int) -> int:
    """Move a cut left so it does not part a character from the marks that follow it."""
    cut = max(0, min(cut, len(text)))
    while 0 < cut < len(text) and (unicodedata.combining(text[cut]) or text[cut] in _JOINERS):
        cut -= 1
    return cut


def _summary(value: JsonValue) -> str:
    if isinstance(value, list):
        line = f"list of {len(value):,} items"
        if value and isinstance(value[0], dict):
            line += f"; the first is a dict with keys {_keys(value[0])}"
        return line
    if isinstance(value, dict):
        features = value.get("features")
        if value.get("type") == "FeatureCollection" and isinstance(features, list):
            first = features[0] if features and isinstance(features[0], dict) else {}
            props = first.get("properties")
            keys = _keys(props) if isinstance(props, dict) and props else "none"
            return f"FeatureCollection of {len(features):,} features, properties: {keys}"
        return f"dict with {len(value):,} keys: {_keys(value)}"
    if isinstance(value, str):
        return f"text of {len(value):,} characters"
    return type(value).__name__


def _keys(mapping: dict[str, JsonValue], room: int = 150) -> str:
    names: list[str] = []
    for key in mapping:  # stops early: a dict may have a million keys
        name = " ".join(key.split())[:30]  # one line, however odd the key
        if sum(len(n) + 2 for n in names) + len(name) > room:
            break
        names.append(name)
    more = len(mapping) - len(names)
    return ", ".join(names) + (f" and {more:,} more" if more else "")
