"""Self-correcting error hints: a curated table from error text to a fix.

When model-written code fails, :func:`hint_for` looks the error up in :data:`PATTERNS`, a
tuple of small frozen records, and returns the first hint that applies: one or two
sentences naming the fix in code. A record matches on the exception type, on a regex over
``"<type>: <message>"`` (so a type whose message is empty, as h3's are, can be named too)
and on a regex over the failing line. Its hint is a template whose ``{group}`` fields are
filled from the regex groups, or a small function of the match and the call's inputs that
may return None to pass the error on to later records.

Runs on the host: the message and line are text the model's code produced, so regexes are
linear, interpolated values are shortened, and nothing named in a message is imported
unless it is one of the sandbox's own libraries.
"""

from __future__ import annotations

import difflib
import importlib
import logging
import re
import sys
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from types import ModuleType
from typing import Any, Final, NamedTuple, Protocol

from geomint.sandbox import _policy as policy

__all__ = ["PATTERNS", "UNPARSABLE_HINT", "ErrorLike", "Pattern", "Seen", "find_hint", "hint_for"]

logger = logging.getLogger("geomint.sandbox")

UNPARSABLE_HINT = (
    "write a plain Python function body (no markdown around it), ending with `return <value>`"
)

_MAX_TEXT: Final = 4_000  # characters of a message read; the runtime caps it near 2,000
_LIBRARY_NAMES: Final = (*policy.INJECTED_LIBRARIES, "mint", *policy.RASTER_NAMES)
_ALIAS: Final = {module: name for name, module in policy.INJECTED_LIBRARIES.items()}
# Modules whose names a hint may list; importing them on the host is harmless.
_INTROSPECTABLE: Final = frozenset(
    {*policy.INJECTED_LIBRARIES.values(), "shapely.geometry", "shapely.ops", "math", "statistics"}
)


class ErrorLike(Protocol):
    """What a hint is chosen from."""

    @property
    def type(self) -> str: ...
    @property
    def message(self) -> str: ...
    @property
    def code_line(self) -> str | None: ...


class Seen(NamedTuple):
    """One record's match against an error: what a hint builder reads.

    Attributes:
        error: The error being explained.
        inputs: The call's inputs (the data the body received by name).
        message: The match over ``"<type>: <message>"``, when the record has that regex.
        code: The match over the failing line, when the record has that regex.
    """

    error: ErrorLike
    inputs: Mapping[str, Any]
    message: re.Match[str] | None
    code: re.Match[str] | None

    def group(self, name: str) -> str:
        """The named regex group from either match, shortened ("" when it did not take part)."""
        for found in (self.message, self.code):
            if found is not None and name in found.re.groupindex and found[name] is not None:
                return _short(found[name])
        return ""


Builder = Callable[[Seen], str | None]


@dataclass(frozen=True, slots=True)
class Pattern:
    """One known pitfall and its fix.

    Attributes:
        name: A stable identifier, unique in :data:`PATTERNS`.
        hint: A template with ``{group}`` fields, or a builder returning the text or None.
        types: Exception type names matched, or None for any type.
        message: Searched in ``"<type>: <message>"``; None matches any message.
        code: Searched in the failing line; None matches any line (or none).
    """

    name: str
    hint: str | Builder
    types: frozenset[str] | None = None
    message: re.Pattern[str] | None = None
    code: re.Pattern[str] | None = None

    def match(self, error: ErrorLike, inputs: Mapping[str, Any]) -> Seen | None:
        """Return the match when this record applies to ``error``, else None."""
        if self.types is not None and error.type not in self.types:
            return None
        found = code = None
        if self.message is not None:
            found = self.message.search(f"{error.type}: {error.message}"[:_MAX_TEXT])
            if found is None:
                return None
        if self.code is not None:
            code = self.code.search((error.code_line or "")[:_MAX_TEXT])
            if code is None:
                return None
        return Seen(error, inputs, found, code)

    def render(self, seen: Seen) -> str | None:
        """Build the hint text for a match (None when a builder declines)."""
        if callable(self.hint):
            return self.hint(seen)
        return re.sub(r"\{(\w+)\}", lambda m: seen.group(m[1]), self.hint)


def find_hint(error: ErrorLike, inputs: Mapping[str, Any]) -> tuple[str, str] | None:
    """Find the first record that applies to an error.

    Args:
        error: The failure (type, message and the model's failing line).
        inputs: The call's inputs, which some hints read (entry ids, property names).

    Returns:
        ``(pattern name, hint text)``, or None when no record applies.
    """
    for pattern in PATTERNS:
        seen = pattern.match(error, inputs)
        text = pattern.render(seen) if seen is not None else None
        if text:
            return pattern.name, text
    return None


def hint_for(error: ErrorLike, inputs: Mapping[str, Any]) -> str | None:
    """Return a targeted suggestion for a known pitfall, or None.

    Args:
        error: The failure (type, message and the model's failing line).
        inputs: The call's inputs, which some hints read (entry ids, property names).

    Returns:
        The hint text, or None. Never raises: a failing builder is logged and the error
        simply gets no hint.
    """
    try:
        found = find_hint(error, inputs)
    except Exception:
        logger.exception("choosing a hint failed for %s", getattr(error, "type", "?"))
        return None
    return found[1] if found else None


# -- reading the inputs ------------------------------------------------------------------


def _short(text: str, limit: int = 60) -> str:
    text = " ".join(str(text).split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _records(inputs: Mapping[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in inputs.items() if isinstance(k, str) and k.endswith("_by_entry")}


def _ids_arg(record: str) -> str:
    return f"`{record.removesuffix('_by_entry')}_entry_ids`"


def _and(items: list[str], word: str = "and") -> str:
    return items[0] if len(items) == 1 else f"{', '.join(items[:-1])} {word} {items[-1]}"


def _code_list(names: list[str], budget: int = 200) -> str:
    """Names as code, comma-separated, as many as fit in ``budget`` characters."""
    shown: list[str] = []
    for name in names:
        if sum(len(n) + 4 for n in shown) + len(name) > budget:
            return ", ".join(shown) + ", …"
        shown.append(f"`{name}`")
    return ", ".join(shown)


def _listing(inputs: Mapping[str, Any], first: str, limit: int = 6, budget: int = 180) -> str:
    """``places_by_entry has places-1, places-2; routes_by_entry is None``, ``first`` first."""
    records = _records(inputs)
    parts = []
    for name in sorted(records, key=lambda n: n != first):
        value = records[name]
        if value is None:
            parts.append(f"{name} is None")
        elif isinstance(value, Mapping):
            ids = [_short(str(k), 30) for k in list(value)[: limit + 1]]
            more = f", … ({len(value)} in all)" if len(ids) > limit else ""
            parts.append(f"{name} has {', '.join(ids[:limit]) or 'no entries'}{more}")
    text = "; ".join(parts)
    return text if len(text) <= budget else text[: budget - 1].rsplit("; ", 1)[0] + "; …"


def _mentioned(line: str | None, names: list[str]) -> list[str]:
    return [n for n in names if line and re.search(rf"\b{re.escape(n)}\b", line)]


def _example_record(seen: Seen) -> str:
    """The record the failing line uses, else the first one holding entries."""
    records = _records(seen.inputs)
    named = _mentioned(seen.error.code_line, list(records))
    full = [n for n, v in records.items() if isinstance(v, Mapping) and v]
    return (named or full or ["places_by_entry"])[0]


def _features(value: Any, depth: int = 0) -> Iterator[Mapping[str, Any]]:
    """The first few GeoJSON Features of each collection, however the record nests them."""
    if depth > 4:
        return
    if isinstance(value, Mapping):
        if value.get("type") == "Feature":
            yield value
        elif isinstance(value.get("features"), list):
            yield from _features(value["features"], depth + 1)
        else:
            for item in list(value.values())[:20]:
                yield from _features(item, depth + 1)
    elif isinstance(value, list):
        for item in value[:5]:
            yield from _features(item, depth + 1)


def _property_names(inputs: Mapping[str, Any], limit: int = 12) -> list[str]:
    names: dict[str, None] = {}
    for record in _records(inputs).values():
        for feature in _features(record):
            properties = feature.get("properties")
            if isinstance(properties, Mapping):
                names.update(dict.fromkeys(str(k) for k in properties))
    return [_short(n, 40) for n in list(names)[:limit]]


def _module(name: str) -> ModuleType | None:
    """A sandbox library by name, importing only the known ones."""
    if name in sys.modules:
        return sys.modules[name]
    if name in _INTROSPECTABLE:
        try:
            return importlib.import_module(name)
        except ImportError:
            return None
    return None


def _public(module: ModuleType) -> list[str]:
    return [n for n in dir(module) if not n.startswith("_")]


# -- builders: hints that read the match or the inputs -------------------------------------


def _none_record(seen: Seen) -> str | None:
    records = _records(seen.inputs)
    nones = [n for n, v in records.items() if v is None]
    named = _mentioned(seen.error.code_line, list(records))
    if not nones or (named and not set(named) & set(nones)):
        return None
    if not named and any(v is not None for v in records.values()):
        return None  # the None may be data inside a record: _none_value explains it
    culprits = [n for n in nones if n in named] or nones
    verb = "is" if len(culprits) == 1 else "are"
    return (
        f"{_and([f'`{n}`' for n in culprits])} {verb} None: the tool call passed no ids for "
        f"{'it' if len(culprits) == 1 else 'them'}. Pass {_and([_ids_arg(n) for n in culprits])}"
        f", and guard with `if {culprits[0]}:` before using it."
    )


def _none_value(seen: Seen) -> str:
    nones = [n for n, v in _records(seen.inputs).items() if v is None]
    also = f" Also, `{nones[0]}` is None: pass {_ids_arg(nones[0])} to get it." if nones else ""
    return (
        "A value is None here: GeoJSON may hold null geometries or properties, and `.get()` "
        "returns None for a missing key. Guard it: `if f.get('geometry') is None: continue`, "
        f"or `(f['properties'].get('name') or '')`.{also}"
    )


def _entry_id(seen: Seen) -> str | None:
    key, line = seen.group("key"), seen.error.code_line or ""
    ids = {
        n: [str(k) for k in v] for n, v in _records(seen.inputs).items() if isinstance(v, Mapping)
    }
    if not ids or any(key in v for v in ids.values()):
        return None
    literal = re.search(rf"_by_entry\s*\[\s*['\"]{re.escape(key)}['\"]", line)
    prefix = re.split(r"[-:]", key, maxsplit=1)[0]
    stems = {re.split(r"[-:]", i, maxsplit=1)[0] for v in ids.values() for i in v}
    stems |= {n.removesuffix("_by_entry") for n in ids}
    shaped = re.fullmatch(r"[A-Za-z_]+[-:][\w:.-]+", key) and any(
        prefix and (s.startswith(prefix) or prefix.startswith(s)) for s in stems
    )
    if not (literal or shaped) or key in _property_names(seen.inputs):
        return None
    record = _example_record(seen)
    return (
        f"'{key}' is not an entry id here: {_listing(seen.inputs, record)}. Use one of those "
        f"ids, or loop: `for entry_id, data in {record}.items():`; to get another entry, pass "
        f"its id in {_ids_arg(record)}."
    )


def _missing_property(seen: Seen) -> str | None:
    key, line = seen.group("key"), seen.error.code_line or ""
    names = _property_names(seen.inputs)
    close = difflib.get_close_matches(key, [n for n in names if n != key], n=1, cutoff=0.6)
    if not (close or (re.search(r"propert|\bprops?\b", line) and (names or "properties" in line))):
        return None
    seen_text = f" Properties seen: {', '.join(names)}." if names else ""
    guess = f" Did you mean '{close[0]}'?" if close else ""
    return (
        f"Not every feature has the property '{key}'.{seen_text}{guess} Read optional keys "
        f"with `f['properties'].get('{close[0] if close else key}')`."
    )


def _tool_call(seen: Seen) -> str | None:
    name = seen.group("name")
    if name not in _TOOL_NAMES and not _TOOL_PREFIX.match(name):
        return None
    record = _example_record(seen)
    return (
        f"`{name}` is a tool or network call, and code cannot call tools or reach the network. "
        f"Call the tool first, then pass its entry id to this code ({_ids_arg(record)}) and "
        f"read the data here, e.g. `{record}[entry_id]`."
    )


def _inputs_as_names(seen: Seen) -> str | None:
    name = seen.group("name")
    if name not in {"inputs", "data", "kwargs", "args", "params", "arguments", "context", "ctx"}:
        return None
    names = [n for n in seen.inputs if isinstance(n, str)]
    have = f"this call received: {_code_list(names)}" if names else ""
    return (
        f"There is no `{name}`: each input is its own name in the code "
        f"({have or 'this call received no inputs'}), e.g. `places_by_entry['places-1']`."
    )


def _missing_import(seen: Seen) -> str | None:
    name = seen.group("name")
    if name in policy.ALLOWED_MODULES and name not in _ALIAS:
        return f"`{name}` must be imported first: add `import {name}` at the top of the body."
    module = _FROM_IMPORTS.get(name)
    if module is None:
        return None
    return f"`{name}` must be imported first: add `from {module} import {name}`."


def _near_miss(seen: Seen) -> str | None:
    name = seen.group("name")
    inputs = [n for n in seen.inputs if isinstance(n, str)]
    snake = re.sub(r"(?<=[a-z0-9])([A-Z])", r"_\1", name).lower()
    found = [_NAME_ALIASES[name]] if name in _NAME_ALIASES else []
    found += [n for n in _LIBRARY_NAMES if n.lower() == name.lower()]
    found += [n for n in inputs if n == snake or (len(snake) >= 4 and n.startswith(snake))]
    found += difflib.get_close_matches(snake, inputs, n=2, cutoff=0.6)
    if not found:
        return None
    others = _code_list([*inputs, *_LIBRARY_NAMES])
    return f"`{name}` is not defined. Did you mean `{found[0]}`? The names you have: {others}."


def _unavailable_module(seen: Seen) -> str:
    module = seen.group("mod") or seen.group("mod2")
    root = module.split(".")[0]
    advice = policy.MODULE_HINTS.get(module) or policy.MODULE_HINTS.get(root)
    std = [m for m in _STANDARD if m in policy.ALLOWED_MODULES]
    return (
        f"`{module}` is not available{f' ({advice})' if advice else ''}. Already injected, no "
        "import needed: `np`, `pd`, `gpd`, `shapely`, `h3`, `pyproj`, `geo`; you may also "
        f"`import` {', '.join(std)}."
    )


def _h3_v3(seen: Seen) -> str | None:
    name = seen.group("name") or seen.group("name2")
    new = _H3_V4.get(name)
    if new is None:
        return None
    return (
        f"h3 v4 renamed `h3.{name}`: use `h3.{new}`. v4 takes and returns (lat, lng), while "
        "GeoJSON coordinates are [lng, lat]."
    )


def _pandas_removed(seen: Seen) -> str:
    name = seen.group("attr") or "fillna(method=...)"
    return f"pandas 3 removed `.{name}`: use {_PANDAS_NEW[name]}."


def _module_near_miss(seen: Seen) -> str | None:
    name = seen.group("mod") or seen.group("mod2")
    attr = seen.group("attr") or seen.group("attr2")
    allowed = any(name == m or name.startswith(m + ".") for m in policy.ALLOWED_MODULES)
    module = _module(name) if allowed else None
    if module is None:
        return None
    close = difflib.get_close_matches(attr, _public(module), n=3, cutoff=0.6)
    if not close:
        return None
    shown = _ALIAS.get(name, name)
    return (
        f"`{shown}` has no `{attr}`. Did you mean {_and([f'`{shown}.{c}`' for c in close], 'or')}?"
    )


# -- data the builders read ----------------------------------------------------------------

_TOOL_NAMES: Final = frozenset(
    {"discover_places", "locate_place", "set_route", "functions", "tools", "analyse_data",
     "analyze_data", "process_data", "fetch", "requests", "httpx", "urllib", "tool",
     "multi_tool_use", "call_tool", "run_code", "geocode"}
)  # fmt: skip
_TOOL_PREFIX: Final = re.compile(
    r"(?:discover|locate|set|analy[sz]e|process|fetch|search|geocode|recall|get|find|present"
    r"|record|update|add|fly|fit|monitor|create|cluster)_"
)
_NAME_ALIASES: Final = {
    "numpy": "np", "pandas": "pd", "geopandas": "gpd", "turf": "geo", "geomint": "geo",
    "shp": "shapely", "proj": "pyproj", "Mint": "mint",
    # clustering is a geo helper, not a name of its own (turf's is clustersDbscan)
    "cluster": "geo.cluster", "dbscan": "geo.cluster", "DBSCAN": "geo.cluster",
    "clustersDbscan": "geo.cluster",
}  # fmt: skip
_FROM_IMPORTS: Final = {
    **dict.fromkeys(("Counter", "defaultdict", "deque", "OrderedDict", "namedtuple"),
                    "collections"),
    **dict.fromkeys(("sqrt", "radians", "degrees", "pi", "sin", "cos", "atan2", "hypot"), "math"),
    **dict.fromkeys(("mean", "median", "stdev"), "statistics"),
    **dict.fromkeys(("shape", "mapping", "Point", "Polygon", "LineString", "box"),
                    "shapely.geometry"),
    **dict.fromkeys(("unary_union", "nearest_points"), "shapely.ops"),
    **dict.fromkeys(("chain", "combinations", "product", "groupby"), "itertools"),
    "reduce": "functools", "Transformer": "pyproj", "Geod": "pyproj",
}  # fmt: skip
_STANDARD: Final = ("math", "statistics", "collections", "itertools", "functools", "datetime",
                    "json", "re", "heapq", "bisect", "random", "dataclasses")  # fmt: skip
_H3_V4: Final = {
    "geo_to_h3": "latlng_to_cell(lat, lng, res)", "h3_to_geo": "cell_to_latlng(cell)",
    "h3_to_geo_boundary": "cell_to_boundary(cell)",
    "polyfill": "geo_to_cells(geometry, res)` (GeoJSON order) or "
                "`h3.polygon_to_cells(h3.LatLngPoly(...), res)",
    "polyfill_geojson": "geo_to_cells(geometry, res)", "k_ring": "grid_disk(cell, k)",
    "hex_range": "grid_disk(cell, k)", "hex_ring": "grid_ring(cell, k)",
    "k_ring_distances": "grid_ring(cell, k)", "h3_distance": "grid_distance(a, b)",
    "h3_line": "grid_path_cells(a, b)", "h3_to_parent": "cell_to_parent(cell, res)",
    "h3_to_children": "cell_to_children(cell, res)", "h3_get_resolution": "get_resolution(cell)",
    "h3_is_valid": "is_valid_cell(cell)", "h3_set_to_multi_polygon": "cells_to_geo(cells)",
    "compact": "compact_cells(cells)", "uncompact": "uncompact_cells(cells, res)",
    "hex_area": "average_hexagon_area(res, unit='m^2')",
    "edge_length": "average_hexagon_edge_length(res, unit='m')",
    "point_dist": "great_circle_distance(a, b, unit='m')",
    "h3_indexes_are_neighbors": "are_neighbor_cells(a, b)", "string_to_h3": "str_to_int(text)",
    "h3_to_string": "int_to_str(number)", "get_res0_indexes": "get_res0_cells()",
    "num_hexagons": "get_num_cells(res)",
}  # fmt: skip
_PANDAS_NEW: Final = {
    "iteritems": "`.items()`", "ix": "`.loc[label]` or `.iloc[position]`",
    "swapaxes": "`.T` (or `.transpose()`)", "applymap": "`.map(func)`",
    "is_monotonic": "`.is_monotonic_increasing`", "mad": "`(s - s.mean()).abs().mean()`",
    "bool": "`.item()`", "pad": "`.ffill()`", "backfill": "`.bfill()`",
    "fillna(method=...)": "`.ffill()` or `.bfill()`",
}  # fmt: skip

# -- the table -----------------------------------------------------------------------------


def _p(
    name: str,
    hint: str | Builder,
    *,
    types: str | None = None,
    msg: str | None = None,
    code: str | None = None,
) -> Pattern:
    """Build a record; ``types`` is space-separated, ``msg`` and ``code`` are regexes."""
    return Pattern(
        name=name,
        hint=hint,
        types=frozenset(types.split()) if types else None,
        message=re.compile(msg, re.DOTALL) if msg else None,
        code=re.compile(code) if code else None,
    )


_QUOTED_KEY = r"^KeyError: (?P<q>['\"])(?P<key>[^\n]{1,200})(?P=q)$"
_NAME = r"name '(?P<name>\w+)' is not defined"
_GEOMETRY_METHODS = (
    r"buffer|area|length|centroid|bounds|intersects|intersection|within|contains|distance"
    r"|union|difference|simplify|is_valid|exterior|geoms|coords|x|y|geom_type|representative_point"
)
_SWAP = (
    "GeoJSON and shapely use (lng, lat) = (x, y); h3 takes `h3.latlng_to_cell(lat, lng, res)`, "
    "and pyproj takes (lng, lat) only with "
    "`pyproj.Transformer.from_crs(4326, crs, always_xy=True)`."
)
_SHAPE = "`shapely.geometry.shape(f['geometry'])`"

# fmt: off
PATTERNS: Final[tuple[Pattern, ...]] = (
    # -- the body itself: parsing, imports, results, limits
    _p("unparsable-markdown", "Send only the Python body: no prose, no markdown fences (```) and "
       "no explanation around it; end it with `return <value>`.",
       types="GateRefused", msg=r"does not parse.*(?:```|near `[A-Z][^`]*[:.]`)"),
    _p("unparsable", f"{UNPARSABLE_HINT[:1].upper()}{UNPARSABLE_HINT[1:]}; check brackets, "
       "quotes and indentation.",
       types="GateRefused", msg=r"does not parse|the code is empty"),
    _p("module-not-available", _unavailable_module, types="GateRefused ImportError "
       "ModuleNotFoundError", msg=r"import of [`'](?P<mod>[\w.]+)[`'] is not allowed"
       r"|No module named '(?P<mod2>[\w.]+)'"),
    _p("no-result", "End the body with `return result` (a bare expression on the last line also "
       "works); if you defined a function, call it: `return main()`.", types="NoResult"),
    _p("timeout", "Too slow: replace nested loops over two feature lists (N×M) with a spatial "
       "index, `tree = shapely.STRtree(polygons)` then `tree.query(points, predicate="
       "'intersects')`, or bucket points by `h3.latlng_to_cell(lat, lng, 8)`; prefer "
       "GeoDataFrame columns and `gpd.sjoin` over per-feature dicts.", types="Timeout"),
    _p("degree-buffer", "`.buffer({n})` on lng/lat data buffers by {n} degrees, not metres: use "
       "`geo.buffer_m(g, {n})`, or project first: `gdf.to_crs(gdf.estimate_utm_crs())"
       ".buffer({n})`.", types="H3FailedError H3LatLngDomainError MemoryError GEOSException",
       code=r"\.buffer\(\s*(?P<n>\d{2,}(?:\.\d+)?|[1-9](?:\.\d+)?)\s*[,)]"),
    _p("out-of-memory", "Out of memory: do not build huge lists or N×M pairwise tables; find "
       "pairs with `shapely.STRtree(geoms).query(...)`, keep data in GeoDataFrame columns rather "
       "than per-feature dicts, and aggregate as you go (`collections.Counter`, sums).",
       types="MemoryError WorkerDied"),
    _p("result-too-large", "Return a summary, not every feature: counts and totals, "
       "`df.head(50)`, or fewer, simplified geometries (`gdf.simplify(0.0001)`).",
       types="ResultTooLarge"),
    _p("result-not-json", "Return plain data (dicts, lists, numbers, text): wrap generators, "
       "`map`, `zip` and `dict.values()` in `list(...)`, call `.to_dict()` / `.tolist()` on "
       "pandas and numpy objects, and build fresh dicts instead of self-references.",
       types="ResultTypeError ResultCycleError ResultError"),
    _p("json-dumps", "No need for `json.dumps`: return the value itself (numpy, pandas, shapely "
       "and GeoDataFrames are converted for you); inside JSON text, convert first: `float(x)`, "
       "`shapely.geometry.mapping(g)`, `list(s)`.", msg=r"is not JSON serializable"),
    # -- names: tools, inputs, imports, typos
    _p("tool-call-in-code", _tool_call, types="NameError", msg=_NAME),
    _p("inputs-as-names", _inputs_as_names, types="NameError", msg=_NAME),
    _p("missing-import", _missing_import, types="NameError", msg=_NAME),
    _p("near-miss-name", _near_miss, types="NameError", msg=_NAME),
    # -- None records, entry ids, properties, GeoJSON as dicts
    _p("shape-null-geometry", "A geometry is null or has no 'type' (a Feature may carry "
       "`geometry: null`): skip those, `[shape(f['geometry']) for f in features if "
       "f.get('geometry')]`.", msg=r"'NoneType' object has no attribute '(?:get|lower)'",
       code=r"\bshape\("),
    _p("none-record", _none_record, types="TypeError AttributeError", msg=r"'NoneType'"),
    _p("none-value", _none_value, types="TypeError AttributeError", msg=r"'NoneType'"),
    _p("unknown-entry-id", _entry_id, types="KeyError", msg=_QUOTED_KEY),
    _p("geojson-missing-key", "'{key}' is missing: GeoJSON nests as FeatureCollection → "
       "`fc['features']` (a list) → Feature → `f['geometry']` (with 'type' and 'coordinates') "
       "and `f['properties']`. Pass a geometry where one is expected: `shape(f['geometry'])`, "
       "`h3.geo_to_cells(f['geometry'], 9)`.", msg=r"^KeyError: '(?P<key>coordinates|geometry|"
       r"type|features)'$", code=r"^(?!.*propert)"),
    _p("missing-property", _missing_property, types="KeyError", msg=_QUOTED_KEY),
    _p("string-indices", "A str was indexed like a dict: looping over a dict yields its keys. "
       "Use `for entry_id, fc in places_by_entry.items():` and then `for f in fc['features']:` "
       "(a FeatureCollection is a dict; its features are in `fc['features']`).",
       msg=r"string indices must be integers"),
    _p("list-indices", "A list was indexed with a text key: `incidents_by_entry[id]` and "
       "`geometries_by_entry[key]` are lists of Features, and `fc['features']` is a list; loop "
       "it (`for f in items:`) and read `f['properties']['name']`.",
       msg=r"list indices must be integers or slices, not str"),
    _p("dict-geojson-attribute", "GeoJSON features are plain dicts: write `f['{attr}']`, not "
       "`f.{attr}`.", msg=r"'dict' object has no attribute '(?P<attr>geometry|properties|type|"
       r"features|coordinates|id|bbox)'"),
    _p("dict-shapely-method", "This is a GeoJSON dict, not a shapely geometry: convert first, "
       "`g = shapely.geometry.shape(f['geometry'])`, then `g.{attr}`.",
       msg=rf"'dict' object has no attribute '(?P<attr>{_GEOMETRY_METHODS})'"),
    _p("shape-feature-collection", "shape() takes one geometry, not a {kind}: convert each, "
       "`[shape(f['geometry']) for f in fc['features']]`, or build a frame with "
       "`gpd.GeoDataFrame.from_features(fc['features'], crs=4326)`.",
       msg=r"Unknown geometry type: '(?P<kind>featurecollection|feature)'"),
    _p("shape-coordinates-list", f"shape() got a list (of coordinates or of features); pass one "
       f"Feature or its geometry: {_SHAPE}, or loop `[shape(f['geometry']) for f in features]`.",
       msg=r"'list' object has no attribute 'get'", code=r"\bshape\("),
    _p("geometry-from-geojson", "shapely constructors take coordinates, not GeoJSON: build from "
       f"a geometry dict with {_SHAPE} (a GeoJSON Polygon's coordinates are a list of rings: "
       "`shapely.Polygon(rings[0], rings[1:])`).", msg=r"float\(\) argument must be|could not "
       r"convert string to float|0-d array|only scalar|Invalid values passed",
       code=r"\b(?:Point|Polygon|LineString|LinearRing|Multi(?:Point|LineString|Polygon))\("),
    # -- shapely 2
    _p("too-few-points", "A LineString needs at least 2 points and a Polygon ring 4 (closed): "
       f"skip short ones, e.g. `if len(coords) >= 2:`, or build from GeoJSON with {_SHAPE}.",
       msg=r"point array must contain 0 or >1|linearring requires at least 4"
       r"|Invalid number of points in LinearRing"),
    _p("invalid-geometry", "A geometry is invalid (self-intersecting ring, bow-tie): repair it "
       "before overlays, `g = shapely.make_valid(g)` (or `geo.make_valid(g)`); for a frame, "
       "`gdf.geometry = gdf.make_valid()`.", msg=r"TopologyException|[Ss]elf-intersection"
       r"|IllegalArgumentException|input geometry is invalid|non-noded"),
    _p("cascaded-union", "shapely 2 removed `cascaded_union`: use `shapely.union_all(geoms)` "
       "(or `shapely.ops.unary_union(geoms)`).", msg=r"\bcascaded_union\b"),
    _p("shapely-as-adapters", f"shapely 2 removed `as{{kind}}`: build geometries with {_SHAPE} "
       "or the constructors, e.g. `shapely.Point(lng, lat)`.", msg=r"'as(?P<kind>Shape|Point|"
       r"Polygon|LineString|LinearRing|Multi(?:Point|LineString|Polygon))'"),
    _p("multi-part-iteration", "shapely 2 geometries are not sequences: loop over the parts "
       "with `for part in g.geoms:`, index with `g.geoms[0]`, count with `len(g.geoms)`.",
       msg=r"'(?:Multi\w+|GeometryCollection)' object is not (?:iterable|subscriptable)"
       r"|object of type '(?:Multi\w+|GeometryCollection)' has no len\(\)"),
    _p("multi-part-exterior", "A MultiPolygon has no single exterior: use each part, "
       "`[p.exterior for p in g.geoms]`, or the largest, `max(g.geoms, key=lambda p: "
       "p.area).exterior`.",
       msg=r"'MultiPolygon' object has no attribute '(?:exterior|interiors)'"),
    _p("single-part-geometry", "This {kind} is a single part (union and intersection may return "
       "a single or a Multi geometry): handle both with `parts = getattr(g, 'geoms', [g])`.",
       msg=r"'(?P<kind>Polygon|LineString|Point|LinearRing)' object (?:is not iterable|is not "
       r"subscriptable|has no attribute 'geoms'|has no len)"),
    _p("polygon-coords", "A Polygon has rings, not coordinates: use `g.exterior.coords` (holes: "
       "`[r.coords for r in g.interiors]`).", msg=r"Component rings have coordinate sequences"
       r"|'Polygon' object has no attribute 'coords'"),
    _p("strtree-indices", "shapely 2 `STRtree.query(g)` returns integer indices, not geometries: "
       "`hits = [geoms[i] for i in tree.query(g)]` (`tree.nearest(g)` is an index too).",
       msg=rf"'numpy\.u?int(?:64|32|p)?' object has no attribute '(?:{_GEOMETRY_METHODS})'"),
    _p("point-lat-attribute", "A shapely Point has `.x` (longitude) and `.y` (latitude), not "
       "`.{attr}`: `lat, lng = p.y, p.x`.",
       msg=r"'Point' object has no attribute '(?P<attr>lat|lng|lon|latitude|longitude)'"),
    # -- h3 v4 and coordinate order
    _p("h3-v3-name", _h3_v3, msg=r"module 'h3[\w.]*' has no attribute '(?P<name>\w+)'"
       r"|cannot import name '(?P<name2>\w+)' from 'h3"),
    _p("h3-latlng-args", "h3.latlng_to_cell takes lat, lng and res as separate numbers, latitude "
       "first, while GeoJSON is [lng, lat]: `lng, lat = f['geometry']['coordinates']` then "
       "`h3.latlng_to_cell(lat, lng, 9)`.",
       msg=r"latlng_to_cell\(\) missing 1 required positional argument"),
    _p("h3-geo-json-kwarg", "h3 v4 dropped `geo_json=`: `h3.cell_to_boundary(c)` returns (lat, "
       "lng) pairs; for GeoJSON use `h3.cells_to_geo([c])`, or swap: `[(lng, lat) for lat, lng "
       "in h3.cell_to_boundary(c)]`.", msg=r"unexpected keyword argument 'geo_json'"),
    _p("h3-polygon-input", "`h3.polygon_to_cells` takes an `h3.LatLngPoly`, one ring of (lat, "
       "lng) pairs; pass a GeoJSON geometry or a shapely shape straight to "
       "`h3.geo_to_cells(f['geometry'], res)`, which reads [lng, lat].",
       msg=r"Unrecognized type: <class|LatLngPoly"),
    _p("h3-latlng-domain", "h3 rejected the coordinates: they must be finite, latitude first "
       "(`h3.latlng_to_cell(lat, lng, res)`; GeoJSON is [lng, lat]); drop NaN rows first, e.g. "
       "`df.dropna(subset=['lat', 'lng'])`.", types="H3LatLngDomainError H3FailedError"),
    _p("h3-resolution", "h3 resolutions run 0–15 (9 ≈ 0.1 km² cells), and cells compared with "
       "`h3.grid_distance` must share one resolution: align them with `h3.cell_to_parent(c, 8)`.",
       types="H3ResDomainError H3ResMismatchError"),
    _p("h3-invalid-cell", "h3 v4 cells are hex strings such as '8928308280fffff': make one with "
       "`h3.latlng_to_cell(lat, lng, 9)`, convert integers with `h3.int_to_str(n)`, and check "
       "with `h3.is_valid_cell(c)`.", msg=r"H3CellInvalidError|invalid literal for int\(\) "
       r"with base 16|can't convert non-string with explicit base"),
    _p("lat-lng-order", "The coordinates look swapped (an infinite or out-of-range value from "
       "pyproj or h3 usually means so): " + _SWAP, msg=r"Invalid latitude|latitude (?:must|"
       r"should|is out|out of)|Unable to determine UTM|\[-90, ?90\]|float infinity|\binf\b"),
    # -- CRS and geopandas
    _p("crs-error", "pyproj could not read that CRS: use EPSG codes, `4326` (lng/lat degrees) or "
       "`3857` (web maps, not for measuring); for metres use the local UTM zone, "
       "`gdf.to_crs(gdf.estimate_utm_crs())`.", types="CRSError"),
    _p("naive-crs", "The GeoDataFrame has no CRS: GeoJSON is EPSG:4326, so build it with "
       "`gpd.GeoDataFrame.from_features(fc['features'], crs=4326)` or call `.set_crs(4326)` "
       "before `.to_crs(...)`.", msg=r"naive geometries|crs must be set|without a CRS"),
    _p("degrees-as-metres", "Lengths, areas, distances and buffers on EPSG:4326 are in degrees, "
       "not metres: project first, `m = gdf.to_crs(gdf.estimate_utm_crs())`, then `m.area` or "
       "`m.buffer(500)`; or use `geo.buffer_m(g, 500)`.", msg=r"geographic CRS"),
    _p("no-active-geometry", "`gpd.GeoDataFrame(features)` keeps GeoJSON dicts as plain columns: "
       "build it with `gpd.GeoDataFrame.from_features(fc['features'], crs=4326)` (properties "
       "become columns, geometries shapely).", msg=r"active geometry column"),
    _p("set-geometry-missing", "`set_geometry` needs a column of shapely geometries that exists: "
       "`gpd.GeoDataFrame(df, geometry=gpd.points_from_xy(df['lng'], df['lat']), crs=4326)`, or "
       "`gpd.GeoDataFrame.from_features(fc['features'], crs=4326)`.", msg=r"Unknown column",
       code=r"set_geometry"),
    _p("sjoin-op", "geopandas 1.x renamed `op=` to `predicate=`: `gpd.sjoin(points, areas, "
       "predicate='within')`.", msg=r"unexpected keyword argument 'op'"),
    _p("dataframe-append", "pandas removed `.append`: collect rows in a list, then "
       "`pd.concat([df, pd.DataFrame(rows)], ignore_index=True)`.",
       msg=r"'(?:Geo)?(?:DataFrame|Series)' object has no attribute 'append'"),
    _p("geopandas-datasets", "geopandas 1.x removed `gpd.datasets`, and code has no files or "
       "network: use the data passed in (e.g. `places_by_entry`), or call a data tool first and "
       "pass its entry id.", msg=r"geopandas\.datasets?\b|has no attribute 'datasets'"),
    _p("pandas-removed", _pandas_removed, msg=r"'(?:Geo)?(?:DataFrame|Series)' object has no "
       rf"attribute '(?P<attr>{'|'.join(k for k in _PANDAS_NEW if k.isidentifier())})'"
       r"|fillna\(\) got an unexpected keyword argument 'method'"),
    _p("groupby-non-numeric", "A text column cannot be averaged or summed: select the numeric "
       "column, `df.groupby('category')['value'].mean()`, or pass `numeric_only=True`.",
       msg=r"does not support operation|agg function failed|Could not convert .{0,200} to numeric"),
    # -- values: truth, NaN, empty collections, calls
    _p("ambiguous-truth", "A Series or array has no single True/False: test with `.any()`, "
       "`.all()` or `.empty` (`if not gdf.empty:`), and combine conditions with `&`, `|`, `~` "
       "and parentheses, `df[(df.a > 0) & (df.b < 5)]`, not `and`/`or`.",
       msg=r"truth value of an? (?:Series|DataFrame|array|Index|GeoSeries).{0,60} is ambiguous"),
    _p("nan-to-int", "A value is NaN (missing data, or the mean of nothing): check `pd.isna(x)` "
       "before `int(x)`, or drop missing rows first: `df.dropna(subset=['col'])`.",
       msg=r"float NaN to integer|non-finite values \(NA or inf\)"),
    _p("division-by-zero", "A count was 0 (an entry with no features, or nothing matched): guard "
       "the division, e.g. `share = hits / total if total else 0`.", types="ZeroDivisionError"),
    _p("empty-sequence", "A collection was empty (an entry with no features, or a filter that "
       "matched nothing): check first, `if not values: return {'count': 0}`, or use "
       "`max(values, default=None)`.", msg=r"arg is an empty sequence|requires at least one "
       r"data point|No objects to concatenate|zero-size array"),
    _p("reduce-empty", "`reduce` got nothing to combine (a filter that matched nothing): give it "
       "a start value, `functools.reduce(f, items, start)`, or check `if not items:` first; "
       "to merge shapes use `shapely.union_all(geoms)`, which takes an empty list.",
       msg=r"reduce\(\) of empty (?:iterable|sequence) with no initial value"),
    _p("unpack-none", "A value was None where a pair or a list was expected (a lookup that "
       "found nothing, or a function with no `return`): check it first, `if found is None:`.",
       msg=r"cannot unpack non-iterable NoneType object"),
    _p("tuple-assignment", "Tuples cannot be changed in place: make a list, change it and "
       "convert back (`coords = list(coords); coords[0] = x`), or build a new tuple.",
       msg=r"'tuple' object does not support item assignment"),
    _p("unbound-local", "`{name}` is assigned later in the body, so Python treats it as a new "
       "local from the start: give it a value before its first use (`{name} = 0` at the top), "
       "or name the new value differently.", types="UnboundLocalError",
       msg=r"local variable '(?P<name>\w+)'"),
    _p("index-out-of-range", "A list or frame is shorter than expected, often empty: check "
       "`if features:` before `features[0]`, and `if not df.empty:` before `df.iloc[0]`.",
       types="IndexError", msg=r"out of range|out-of-bounds|out of bounds"),
    _p("not-callable", "This {kind} is a value, not a function: `.area`, `.length`, `.bounds`, "
       "`.centroid` and `.geometry` take no parentheses (`g.area`, not `g.area()`), columns are "
       "`df['col']`, and a variable may shadow a function (`sum = ...`).",
       msg=r"'(?P<kind>[\w.]{1,40})' object is not callable"),
    # -- modules: geo helpers and near-miss attributes
    _p("geo-helper", "`geo` has no `{attr}{attr2}` (see what it offers with `dir(geo)`). For "
       "metres, project first, `m = gdf.to_crs(gdf.estimate_utm_crs())`, or measure on the "
       "ellipsoid: `pyproj.Geod(ellps='WGS84').inv(lng1, lat1, lng2, lat2)`.",
       msg=r"module 'geomint\.geo' has no attribute '(?P<attr>\w+)'"
       r"|cannot import name '(?P<attr2>\w+)' from 'geomint\.geo'"),
    _p("module-near-miss", _module_near_miss, msg=r"module '(?P<mod>[\w.]+)' has no attribute "
       r"'(?P<attr>\w+)'|cannot import name '(?P<attr2>\w+)' from '(?P<mod2>[\w.]+)'"),
)
# fmt: on
