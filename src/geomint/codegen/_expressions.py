"""Check a MapLibre expression against the spec: operators, arity, contexts, ramps, types.

The operators, their overloads and output types come from the spec's ``expression_name``;
the argument positions that are not expressions (stop inputs, match labels, option objects,
``let`` names) and the operators that need a context (``zoom``, feature data,
``heatmap-density``, ``line-progress``) are written here, since the spec says them in prose.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from ._spec import Spec, load
from ._values import TYPE_WORDS, as_float, check_value, is_number
from ._violation import SpecViolation, join_path, listing, near_miss, preview

# Operator -> the spec's expression parameter it needs ("get" and "has" only without an
# object argument: with one they read that object, not the feature).
_NEEDS = {
    "zoom": "zoom",
    "get": "feature",
    "has": "feature",
    "properties": "feature",
    "id": "feature",
    "geometry-type": "feature",
    "within": "feature",
    "distance": "feature",
    "feature-state": "feature-state",
    "heatmap-density": "heatmap-density",
    "line-progress": "line-progress",
    "elevation": "elevation",
    "pitch": "pitch",
    "bearing": "bearing",
}
# Where the spec's docs say these may appear, for messages.
_ONLY_IN = {
    "heatmap-density": "only inside 'heatmap-color' of a heatmap layer",
    "line-progress": "only inside 'line-gradient' of a line layer (whose geojson source has"
    " lineMetrics: true)",
    "elevation": "only inside 'color-relief-color' of a color-relief layer",
    "pitch": "only in a layer's filter",
    "bearing": "only in a layer's filter",
    "feature-state": "only in paint properties that allow it (not in layout or filters)",
}
_RAMPS = frozenset(
    {"interpolate", "interpolate-hcl", "interpolate-lab", "interpolate-oklab", "interpolate-oklch"}
)
# Operators whose output is one of their arguments: the expected type passes through.
_PASS_THROUGH = frozenset({"case", "match", "coalesce", "step", "let", *_RAMPS})
# What each spec type accepts among the operators' output types.
_ACCEPTS = {
    "number": {"number"},
    "color": {"color"},
    "string": {"string"},
    "boolean": {"boolean"},
    "enum": {"string"},
    "formatted": {"formatted", "string"},
    "resolvedImage": {"image", "string"},
    "padding": {"number", "array", "array<number>"},
    "numberArray": {"number", "array", "array<number>"},
    "colorArray": {"color", "array", "array<color>"},
}
_UNKNOWN_OUTPUTS = frozenset({"any", "value", "T", "array<T>"})
_FUNCTION_KEYS = frozenset({"stops", "property", "base", "type", "default", "colorSpace"})


@dataclass(kw_only=True)
class _Walk:
    spec: Spec
    name: str
    parameters: frozenset[str]
    property_type: str
    zoom_anywhere: bool
    found: list[SpecViolation] = field(default_factory=list)

    def add(self, path: str, rule: str, message: str) -> None:
        self.found.append(SpecViolation(path=path, rule=rule, message=message))


def is_expression(value: Any) -> bool:
    """Whether MapLibre would read ``value`` as an expression (an array naming an operator)."""
    return (
        isinstance(value, list) and bool(value) and isinstance(value[0], str)
        and value[0] in load().operators
    )  # fmt: skip


def is_function_object(value: Any) -> bool:
    """Whether ``value`` looks like a legacy ``{"stops": ...}`` function object."""
    return isinstance(value, Mapping) and bool(_FUNCTION_KEYS & set(value))


def check_expression(
    entry: Mapping[str, Any], value: list[Any], path: str, *, name: str, filter_: bool = False
) -> list[SpecViolation]:
    """Return how the expression ``value`` breaks the spec for the property ``entry``.

    Call it after the caps were checked: it walks the whole value.
    """
    options = entry.get("expression", {})
    walk = _Walk(
        spec=load(),
        name=name,
        parameters=frozenset(options.get("parameters", ())),
        property_type=str(entry.get("property-type", "")),
        zoom_anywhere=filter_,
    )
    _expression(walk, value, path, expected=entry, top=True, scope=frozenset())
    return walk.found


def _argument(
    walk: _Walk,
    node: Any,
    path: str,
    *,
    expected: Mapping[str, Any] | None,
    top: bool = False,
    scope: frozenset[str],
) -> None:
    if isinstance(node, list) and node and isinstance(node[0], str):
        _expression(walk, node, path, expected=expected, top=top, scope=scope)
    elif isinstance(node, list):
        walk.add(
            path,
            "expression",
            f"{preview(node)} is an array inside an expression; an expression starts with an"
            " operator name. Wrap a literal array as ['literal', [...]].",
        )
    elif isinstance(node, Mapping):
        walk.add(
            path,
            "expression",
            f"{preview(node)} is an object inside an expression; wrap it as ['literal', {{...}}].",
        )
    elif expected is not None:
        name = f"this part of {walk.name}"
        walk.found += check_value(expected, node, path, name=name, ranges=False)


def _expression(
    walk: _Walk,
    node: list[Any],
    path: str,
    *,
    expected: Mapping[str, Any] | None,
    top: bool,
    scope: frozenset[str],
) -> None:
    op, args = node[0], node[1:]
    spec = walk.spec
    if op not in spec.operators:
        walk.add(
            path,
            "expression",
            f"'{preview(op, 40)[1:-1]}' is not an expression operator."
            f"{near_miss(op, spec.operators)} See MapLibre's expression reference.",
        )
        return
    if not _arity_fits(walk, op, args, path):
        return
    _context(walk, op, args, path, top=top, scope=scope)
    if expected is not None and op not in _PASS_THROUGH:
        _output(walk, op, expected, path)

    if op == "literal":
        if expected is not None and expected.get("type") not in ("boolean", None):
            walk.found += check_value(
                expected, args[0], join_path(path, 1), name=walk.name, ranges=False
            )
    elif op in _RAMPS or op == "step":
        _ramp(walk, op, args, path, expected=expected, top=top, scope=scope)
    elif op == "case":
        for index, arg in enumerate(args, start=1):
            is_condition = index % 2 == 1 and index != len(args)
            branch = {"type": "boolean"} if is_condition else expected
            _argument(walk, arg, join_path(path, index), expected=branch, scope=scope)
    elif op == "match":
        _match(walk, args, path, expected=expected, scope=scope)
    elif op == "coalesce":
        for index, arg in enumerate(args, start=1):
            _argument(walk, arg, join_path(path, index), expected=None, top=top, scope=scope)
    elif op == "let":
        _let(walk, args, path, expected=expected, top=top, scope=scope)
    elif op in ("var", "global-state"):
        if not isinstance(args[0], str):
            walk.add(join_path(path, 1), "expression", f"'{op}' takes a name as a plain string.")
    elif op in ("format", "number-format", "collator"):
        _with_options(walk, op, args, path, scope=scope)
    elif op in ("within", "distance"):
        if not (isinstance(args[0], Mapping) and isinstance(args[0].get("type"), str)):
            walk.add(
                join_path(path, 1),
                "expression",
                f"'{op}' takes a GeoJSON object (a Polygon, MultiPolygon, Feature or"
                f" FeatureCollection), not {preview(args[0])}.",
            )
    elif op == "array" and len(args) > 1:
        if args[0] not in ("string", "number", "boolean"):
            walk.add(
                join_path(path, 1),
                "expression",
                f"['array', type, ...] takes 'string', 'number' or 'boolean' as its type,"
                f" not {preview(args[0])}.",
            )
        _argument(walk, args[-1], join_path(path, len(args)), expected=None, scope=scope)
    elif op != "semiliteral":
        types = _parameter_types(spec, op, len(args))
        for index, arg in enumerate(args, start=1):
            wanted = types[index - 1] if index - 1 < len(types) else None
            _argument(
                walk,
                arg,
                join_path(path, index),
                expected={"type": wanted} if wanted else None,
                scope=scope,
            )


def _arity_fits(walk: _Walk, op: str, args: list[Any], path: str) -> bool:
    overloads = walk.spec.arities.get(op, ())
    if not overloads or any(o.accepts(len(args)) for o in overloads):
        return True
    if op in ("all", "any") and not args:
        return True
    forms = " or ".join(o.signature for o in overloads)
    extra = ""
    if op in _RAMPS or op == "step":
        extra = " Stops come in pairs: an input number, then its output."
    elif op in ("match", "case"):
        extra = " Branches come in pairs and the last argument is the fallback, which is required."
    walk.add(
        path,
        "expression",
        f"'{op}' got {len(args)} argument{'s' * (len(args) != 1)} but takes {forms}.{extra}",
    )
    return False


def _context(
    walk: _Walk, op: str, args: list[Any], path: str, *, top: bool, scope: frozenset[str]
) -> None:
    if op == "accumulated":
        walk.add(
            path,
            "expression",
            "'accumulated' works only in a geojson source's clusterProperties, not in a layer.",
        )
        return
    if op == "var" and args and isinstance(args[0], str) and args[0] not in scope:
        bound = f" Bound here: {listing(scope)}." if scope else ""
        walk.add(
            path,
            "expression",
            f"no enclosing 'let' binds '{preview(args[0], 40)[1:-1]}'.{bound}",
        )
    needed = _NEEDS.get(op)
    if needed is None or (op in ("get", "has") and len(args) > 1):
        return
    if needed not in walk.parameters:
        walk.add(path, "expression", _wrong_context(walk, op, needed))
    elif op == "zoom" and not top and not walk.zoom_anywhere:
        walk.add(
            path,
            "expression",
            "['zoom'] may only be the input of a top-level 'step' or 'interpolate': write"
            " ['interpolate', ['linear'], ['zoom'], z1, value1, z2, value2] around the rest.",
        )


def _wrong_context(walk: _Walk, op: str, needed: str) -> str:
    if op in _ONLY_IN:
        return f"['{op}'] works {_ONLY_IN[op]}, not in {walk.name}."
    if needed == "feature":
        if "zoom" not in walk.parameters:
            return (
                f"{walk.name} takes one fixed value: it cannot read feature data with"
                f" ['{op}', ...] or change with zoom."
            )
        return (
            f"{walk.name} is the same for every feature ({walk.property_type}): it cannot"
            f" read feature data with ['{op}', ...]. Give one value, or a zoom ramp"
            " ['interpolate', ['linear'], ['zoom'], ...]."
        )
    if needed == "zoom":
        return f"{walk.name} cannot change with zoom; give it a fixed value."
    return f"['{op}'] is not available in {walk.name}."


def _output(walk: _Walk, op: str, expected: Mapping[str, Any], path: str) -> None:
    kind = str(expected.get("type", ""))
    accepts = _ACCEPTS.get(kind)
    outputs = walk.spec.output_types.get(op, frozenset({"any"}))
    if accepts is None or outputs & _UNKNOWN_OUTPUTS or outputs & accepts:
        return
    if kind == "array" and any(o.startswith("array") for o in outputs):
        return
    gives = " or ".join(sorted(outputs))
    walk.add(
        path,
        "type",
        f"['{op}', ...] gives a {gives}, but {walk.name} takes {TYPE_WORDS.get(kind, kind)}.",
    )


def _parameter_types(spec: Spec, op: str, count: int) -> list[str | None]:
    syntax = spec.operators[op].get("syntax", {})
    declared = {p.get("name"): p.get("type") for p in syntax.get("parameters", [])}
    per_overload: list[list[str | None]] = []
    for overload in syntax.get("overloads", []):
        names = [str(n).rstrip("?") for n in overload.get("parameters", [])]
        if "..." in names:
            names = [names[0]] * count if len(set(names) - {"..."}) <= 2 else []
        names = [n[:-2] + "_i" if n[-2:] in ("_1", "_n") else n for n in names]
        types = [declared.get(n) for n in names[:count]]
        per_overload.append([t if t in ("number", "boolean", "color") else None for t in types])
    if not per_overload or any(t != per_overload[0] for t in per_overload):
        return []
    return per_overload[0]


def _ramp(
    walk: _Walk,
    op: str,
    args: list[Any],
    path: str,
    *,
    expected: Mapping[str, Any] | None,
    top: bool,
    scope: frozenset[str],
) -> None:
    number = {"type": "number"}
    if op == "step":
        input_index, first_stop = 1, 3
        _argument(walk, args[1], join_path(path, 2), expected=expected, scope=scope)
    else:
        input_index, first_stop = 2, 3
        _interpolation(walk, args[0], join_path(path, 1))
    _argument(
        walk, args[input_index - 1], join_path(path, input_index), expected=number, top=top,
        scope=scope,
    )  # fmt: skip
    previous: Any = None
    for index in range(first_stop, len(node := [op, *args]), 2):
        stop, where = node[index], join_path(path, index)
        if not is_number(stop):
            walk.add(
                where,
                "expression",
                f"'{op}' stop inputs must be plain numbers, not {preview(stop)}.",
            )
        elif previous is not None and as_float(stop) <= as_float(previous):
            walk.add(
                where,
                "expression",
                f"'{op}' stop inputs must be in strictly ascending order: {preview(stop)}"
                f" comes after {preview(previous)}. Sort the stop pairs by their input.",
            )
        else:
            previous = stop
        _argument(walk, node[index + 1], join_path(path, index + 1), expected=expected, scope=scope)


def _interpolation(walk: _Walk, node: Any, path: str) -> None:
    kinds = walk.spec.root["interpolation_name"]["values"]
    usage = "['linear'], ['exponential', base] or ['cubic-bezier', x1, y1, x2, y2]"
    if not (isinstance(node, list) and node and isinstance(node[0], str) and node[0] in kinds):
        hint = near_miss(node[0], kinds) if isinstance(node, list) and node and isinstance(
            node[0], str
        ) else ""  # fmt: skip
        walk.add(
            path,
            "expression",
            f"{preview(node)} is not an interpolation type.{hint} Use {usage}.",
        )
        return
    wanted = {"linear": 0, "exponential": 1, "cubic-bezier": 4}.get(node[0])
    if wanted is not None and (len(node) - 1 != wanted or not all(is_number(n) for n in node[1:])):
        walk.add(path, "expression", f"{preview(node)} is malformed; use {usage}.")


def _match(
    walk: _Walk,
    args: list[Any],
    path: str,
    *,
    expected: Mapping[str, Any] | None,
    scope: frozenset[str],
) -> None:
    _argument(walk, args[0], join_path(path, 1), expected=None, scope=scope)
    seen: set[Any] = set()
    for index in range(2, len(args), 2):
        label = args[index - 1]
        labels = label if isinstance(label, list) else [label]
        fits = bool(labels) and all(
            isinstance(x, str) or (is_number(x) and not isinstance(x, bool)) for x in labels
        )
        if not fits:
            walk.add(
                join_path(path, index),
                "expression",
                f"'match' labels must be plain strings or numbers, or a non-empty array of them,"
                f" not {preview(label)}.",
            )
        else:
            repeated = [x for x in labels if x in seen]
            if repeated:
                walk.add(
                    join_path(path, index),
                    "expression",
                    f"'match' label {preview(repeated[0])} appears twice; each label once.",
                )
            seen.update(labels)
        _argument(walk, args[index], join_path(path, index + 1), expected=expected, scope=scope)
    _argument(walk, args[-1], join_path(path, len(args)), expected=expected, scope=scope)


def _let(
    walk: _Walk,
    args: list[Any],
    path: str,
    *,
    expected: Mapping[str, Any] | None,
    top: bool,
    scope: frozenset[str],
) -> None:
    bound = set(scope)
    for index in range(0, len(args) - 1, 2):
        name = args[index]
        if not isinstance(name, str):
            walk.add(
                join_path(path, index + 1),
                "expression",
                f"'let' variable names are plain strings, not {preview(name)}.",
            )
        _argument(walk, args[index + 1], join_path(path, index + 2), expected=None,
                  scope=frozenset(bound))  # fmt: skip
        if isinstance(name, str):
            bound.add(name)
    _argument(
        walk, args[-1], join_path(path, len(args)), expected=expected, top=top,
        scope=frozenset(bound),
    )  # fmt: skip


def _with_options(
    walk: _Walk, op: str, args: list[Any], path: str, *, scope: frozenset[str]
) -> None:
    declared = walk.spec.operators[op].get("syntax", {}).get("parameters", [])
    options: set[str] = set()
    for parameter in declared:
        if isinstance(parameter.get("type"), Mapping):
            options.update(parameter["type"])
    for index, arg in enumerate(args, start=1):
        where = join_path(path, index)
        if isinstance(arg, Mapping):
            for key, item in arg.items():
                if key not in options:
                    walk.add(
                        join_path(where, str(key)),
                        "expression",
                        f"'{op}' has no option {preview(key, 40)}.{near_miss(str(key), options)}"
                        f" Its options: {listing(options)}.",
                    )
                elif isinstance(item, list):
                    _argument(walk, item, join_path(where, str(key)), expected=None, scope=scope)
        elif op == "collator":
            walk.add(where, "expression", "'collator' takes an options object.")
        elif op == "number-format" and index == 2:
            walk.add(where, "expression", "'number-format' takes an options object second.")
        else:
            _argument(walk, arg, where, expected=None, scope=scope)
