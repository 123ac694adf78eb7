"""The violation record and the helpers every check shares: bounded previews, near misses."""

from __future__ import annotations

import difflib
import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

#: How many characters of a value a message quotes.
PREVIEW_CHARS = 80


@dataclass(frozen=True, kw_only=True)
class SpecViolation:
    """One way a style fragment breaks the MapLibre style specification or geomint's caps.

    Attributes:
        path: Where, dotted from the style's root: ``layers.cafe-heat.paint.heatmap-radius``,
            ``sources.cafes.data``; indexes into arrays as ``[2]``.
        rule: A short code for the kind of fault: ``unknown-property``, ``type``, ``enum``,
            ``range``, ``expression``, ``url``, ``required``, ``cap``, ``layer-type`` or
            ``source``.
        message: Plain words a model can act on: what is wrong, the value (truncated), the
            fix and the valid alternatives.
    """

    path: str
    rule: str
    message: str

    def __str__(self) -> str:
        return f"{self.path}: {self.message}" if self.path else self.message


def preview(value: Any, limit: int = PREVIEW_CHARS) -> str:
    """Return a JSON-like rendering of ``value`` cut at about ``limit`` characters.

    Bounded work whatever the size of ``value``: it never renders more than it shows.
    """
    parts: list[str] = []
    budget = [limit]

    def emit(text: str) -> bool:
        parts.append(text[: max(budget[0], 0)])
        budget[0] -= len(text)
        return budget[0] > 0

    def walk(item: Any, depth: int) -> bool:
        if depth > 8:
            return emit("…")
        if isinstance(item, str):
            if len(item) > limit:
                return emit(_quote(item[:limit]) + f"… ({len(item):,} characters)")
            return emit(_quote(item))
        if item is None or isinstance(item, bool):
            return emit({None: "null", True: "true", False: "false"}[item])
        if isinstance(item, int):
            if item.bit_length() > 64:
                return emit(f"<an integer of {item.bit_length():,} bits>")
            return emit(str(item))
        if isinstance(item, float):
            return emit(repr(item) if math.isfinite(item) else str(item))
        if isinstance(item, list | tuple):
            if not emit("["):
                return False
            for index, element in enumerate(item):
                if (index and not emit(", ")) or not walk(element, depth + 1):
                    return False
            return emit("]")
        if isinstance(item, Mapping):
            if not emit("{"):
                return False
            for index, key in enumerate(item):
                if index and not emit(", "):
                    return False
                if not walk(key if isinstance(key, str) else repr(key), depth + 1):
                    return False
                if not emit(": ") or not walk(item[key], depth + 1):
                    return False
            return emit("}")
        return emit(f"<a {type(item).__name__}>")

    if not walk(value, 0):
        return "".join(parts)[:limit] + "…"
    return "".join(parts)


def _quote(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def near_miss(name: str, choices: Iterable[str]) -> str:
    """Return " Did you mean 'x'?" for the closest of ``choices``, or "" when none is close."""
    if len(name) > 100:
        return ""
    found = difflib.get_close_matches(name, list(choices), n=1, cutoff=0.6)
    return f" Did you mean '{found[0]}'?" if found else ""


def listing(choices: Iterable[str], limit: int = 30) -> str:
    """Return ``choices`` quoted and comma-separated, cut after ``limit`` with a count."""
    names = sorted(choices)
    shown = ", ".join(f"'{n}'" for n in names[:limit])
    return shown if len(names) <= limit else f"{shown} and {len(names) - limit} more"


def join_path(base: str, part: str | int) -> str:
    """Return ``base.part``, or ``base[part]`` for an index."""
    if isinstance(part, int):
        return f"{base}[{part}]"
    return f"{base}.{part}" if base else part


# geomint's caps. MapLibre has none: an expression is walked, type-checked and compiled on
# the page's main thread, and the diff the model's code makes reaches every open page. A
# property's value is counted whole (every array, object and scalar in it is a node), before
# anything else looks at it, so hostile input costs at most a thousand steps. Real styles stay
# far inside both: the deepest expression in MapLibre's own examples nests 6 deep and the
# largest is about 200 nodes.
#: The deepest nesting of arrays and objects in one property value.
MAX_EXPRESSION_DEPTH = 16
#: The most arrays, objects and scalars in one property value.
MAX_EXPRESSION_NODES = 1_000
#: The longest string anywhere in a value: a label, a property name, an id, a URL.
MAX_STRING_CHARS = 1_000


def check_caps(value: Any, path: str) -> list[SpecViolation]:
    """Return the cap violations of ``value`` (size, depth, string length, non-JSON parts).

    Bounded work: it stops counting at the node cap and never iterates past it, so a list of
    a million items or a self-referencing structure costs as much as a small one.
    """
    found: list[SpecViolation] = []
    nodes = 0
    deepest = 0
    stack: list[tuple[Any, str, int]] = [(value, path, 0)]
    while stack:
        item, where, depth = stack.pop()
        nodes += 1
        if nodes > MAX_EXPRESSION_NODES:
            found.append(_too_big(path))
            return found
        deepest = max(deepest, depth)
        if depth > MAX_EXPRESSION_DEPTH:
            found.append(
                SpecViolation(
                    path=path,
                    rule="cap",
                    message=f"nests deeper than geomint's cap of {MAX_EXPRESSION_DEPTH} levels;"
                    " flatten it (a 'match' or 'case' instead of nested ones, 'let' for"
                    " repeated parts).",
                )
            )
            return found
        if isinstance(item, str):
            if len(item) > MAX_STRING_CHARS:
                found.append(
                    SpecViolation(
                        path=where,
                        rule="cap",
                        message=f"a string of {len(item):,} characters is longer than geomint's"
                        f" cap of {MAX_STRING_CHARS:,}: {preview(item, 40)}. Keep long text"
                        " in the data and refer to it with ['get', 'property'].",
                    )
                )
        elif isinstance(item, float):
            if not math.isfinite(item):
                found.append(
                    SpecViolation(
                        path=where,
                        rule="type",
                        message=f"{item} is not a number JSON can carry; give a finite number.",
                    )
                )
        elif isinstance(item, list | tuple):
            if nodes + len(item) > MAX_EXPRESSION_NODES:
                found.append(_too_big(path))
                return found
            stack.extend(
                (element, join_path(where, index), depth + 1) for index, element in enumerate(item)
            )
        elif isinstance(item, Mapping):
            if nodes + 2 * len(item) > MAX_EXPRESSION_NODES:
                found.append(_too_big(path))
                return found
            for key, element in item.items():
                if not isinstance(key, str):
                    found.append(
                        SpecViolation(
                            path=where,
                            rule="type",
                            message=f"object keys must be strings, not {preview(key, 20)}"
                            f" ({type(key).__name__}).",
                        )
                    )
                    continue
                stack.append((key, where, depth + 1))
                stack.append((element, join_path(where, key), depth + 1))
        elif not (item is None or isinstance(item, bool | int)):
            found.append(
                SpecViolation(
                    path=where,
                    rule="type",
                    message=f"a {type(item).__name__} is not a JSON value; use strings, numbers,"
                    " booleans, null, arrays and objects.",
                )
            )
    return found


def _too_big(path: str) -> SpecViolation:
    return SpecViolation(
        path=path,
        rule="cap",
        message=f"has more than geomint's cap of {MAX_EXPRESSION_NODES:,} parts (arrays,"
        " objects and values, counted together); simplify it: fewer stops, a 'match' with"
        " grouped labels, or precompute the value into a feature property and ['get'] it.",
    )
