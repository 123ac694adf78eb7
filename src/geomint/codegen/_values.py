"""Check a literal (non-expression) value against one property entry of the spec."""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any, TypeGuard

from ._colors import is_color
from ._violation import SpecViolation, join_path, listing, near_miss, preview

#: What a model reads for each spec type, in messages ("takes a colour").
TYPE_WORDS = {
    "number": "a number",
    "string": "a string",
    "boolean": "true or false",
    "color": "a colour such as '#3366cc', 'rgba(51, 102, 204, 0.5)' or 'steelblue'",
    "enum": "one of the listed words",
    "formatted": "a string or a ['format', ...] / ['get', ...] expression",
    "resolvedImage": "an image name (a string) or an ['image', ...] expression",
    "padding": "a number or an array of 1 to 4 numbers",
    "numberArray": "a number or an array of numbers",
    "colorArray": "a colour or an array of colours",
    "variableAnchorOffsetCollection": "an array alternating anchors and [x, y] offsets",
    "array": "an array",
}


def is_number(value: Any) -> TypeGuard[int | float]:
    """Whether ``value`` is a JSON number (booleans are not)."""
    return isinstance(value, int | float) and not isinstance(value, bool)


def as_float(value: int | float) -> float:
    """``value`` as a float; integers too large for one become infinities."""
    try:
        return float(value)
    except OverflowError:
        return math.inf if value > 0 else -math.inf


def _violation(path: str, rule: str, message: str) -> list[SpecViolation]:
    return [SpecViolation(path=path, rule=rule, message=message)]


def enum_values(entry: Mapping[str, Any]) -> list[str]:
    """The words an enum entry allows."""
    values = entry.get("values", ())
    return [str(v) for v in values]


def check_value(
    entry: Mapping[str, Any], value: Any, path: str, *, name: str, ranges: bool = True
) -> list[SpecViolation]:
    """Return how ``value`` breaks ``entry`` (type, enum, range, length); ``[]`` when it fits.

    ``ranges=False`` skips minimum and maximum, for the outputs of an expression (MapLibre
    clamps those when it draws). Types the validator does not model are accepted: their caps
    were checked before.
    """
    kind = entry.get("type")
    if kind == "number":
        return _number(entry, value, path, name=name, ranges=ranges)
    if kind == "string":
        if not isinstance(value, str):
            return _type(entry, value, path, name)
        return []
    if kind == "boolean":
        return [] if isinstance(value, bool) else _type(entry, value, path, name)
    if kind == "enum":
        return _enum(entry, value, path, name)
    if kind == "color":
        if isinstance(value, str) and is_color(value):
            return []
        if isinstance(value, str):
            return _violation(
                path,
                "type",
                f"{preview(value)} is not a colour; {name} takes {TYPE_WORDS['color']}.",
            )
        return _type(entry, value, path, name)
    if kind in ("formatted", "resolvedImage"):
        return [] if isinstance(value, str) else _type(entry, value, path, name)
    if kind == "padding":
        if is_number(value):
            return _number({"minimum": 0}, value, path, name=name, ranges=ranges)
        if isinstance(value, list) and 1 <= len(value) <= 4 and all(map(is_number, value)):
            return []
        return _type(entry, value, path, name)
    if kind == "numberArray":
        items = value if isinstance(value, list) else [value]
        if items and all(map(is_number, items)):
            return []
        return _type(entry, value, path, name)
    if kind == "colorArray":
        items = value if isinstance(value, list) else [value]
        if items and all(isinstance(v, str) and is_color(v) for v in items):
            return []
        return _type(entry, value, path, name)
    if kind == "variableAnchorOffsetCollection":
        return _anchor_offsets(value, path, name)
    if kind == "array":
        return _array(entry, value, path, name=name, ranges=ranges)
    return []


def _type(entry: Mapping[str, Any], value: Any, path: str, name: str) -> list[SpecViolation]:
    kind = str(entry.get("type"))
    wanted = TYPE_WORDS.get(kind, f"a value of type {kind}")
    if kind == "enum":
        wanted = f"one of {listing(enum_values(entry))}"
    return _violation(path, "type", f"{preview(value)} is the wrong type; {name} takes {wanted}.")


def _number(
    entry: Mapping[str, Any], value: Any, path: str, *, name: str, ranges: bool
) -> list[SpecViolation]:
    if not is_number(value):
        hint = ""
        if isinstance(value, str) and _numeric(value):
            hint = " (a number, not a string: drop the quotes)"
        return _violation(
            path, "type", f"{preview(value)} is the wrong type; {name} takes a number{hint}."
        )
    number = as_float(value)
    if not math.isfinite(number):
        return _violation(path, "range", f"{preview(value)} is not a finite number.")
    if not ranges:
        return []
    low, high = entry.get("minimum"), entry.get("maximum")
    units = f" {entry['units']}" if "units" in entry else ""
    if is_number(low) and number < low:
        limits = f"from {low} to {high}" if is_number(high) else f"at least {low}"
        return _violation(
            path, "range", f"{preview(value)} is below the minimum: {name} is {limits}{units}."
        )
    if is_number(high) and number > high:
        limits = f"from {low} to {high}" if is_number(low) else f"at most {high}"
        return _violation(
            path, "range", f"{preview(value)} is above the maximum: {name} is {limits}{units}."
        )
    return []


def _numeric(text: str) -> bool:
    try:
        float(text[:50])
    except ValueError:
        return False
    return len(text) <= 50


def _enum(entry: Mapping[str, Any], value: Any, path: str, name: str) -> list[SpecViolation]:
    allowed = enum_values(entry)
    hashable = isinstance(value, str | int | float) and not isinstance(value, bool)
    if hashable and value in entry.get("values", ()):
        return []
    if isinstance(value, str):
        return _violation(
            path,
            "enum",
            f"{preview(value)} is not a value {name} takes.{near_miss(value, allowed)}"
            f" It takes one of {listing(allowed)}.",
        )
    return _type(entry, value, path, name)


def _array(
    entry: Mapping[str, Any], value: Any, path: str, *, name: str, ranges: bool
) -> list[SpecViolation]:
    if not isinstance(value, list):
        return _type(entry, value, path, name)
    length = entry.get("length")
    if is_number(length) and len(value) != length:
        return _violation(
            path,
            "type",
            f"{preview(value)} has {len(value)} items; {name} takes exactly {length}.",
        )
    element = entry.get("value")
    if isinstance(element, Mapping):
        element_entry: Mapping[str, Any] = element
    elif element == "enum":
        element_entry = {"type": "enum", "values": entry.get("values", {})}
    elif isinstance(element, str):
        element_entry = {"type": element}
    else:
        return []
    found: list[SpecViolation] = []
    for index, item in enumerate(value):
        found += check_value(
            element_entry, item, join_path(path, index), name=f"each item of {name}", ranges=ranges
        )
    return found


_ANCHORS = frozenset(
    {"center", "left", "right", "top", "bottom", "top-left", "top-right", "bottom-left"}
    | {"bottom-right"}
)


def _anchor_offsets(value: Any, path: str, name: str) -> list[SpecViolation]:
    anchors = _ANCHORS
    fits = isinstance(value, list) and len(value) % 2 == 0 and len(value) > 0
    if fits:
        for anchor, offset in zip(value[::2], value[1::2], strict=True):
            pair = isinstance(offset, list) and len(offset) == 2 and all(map(is_number, offset))
            if anchor not in anchors or not pair:
                fits = False
                break
    if fits:
        return []
    return _violation(
        path,
        "type",
        f"{preview(value)} is not a list of anchor/offset pairs; {name} takes"
        ' ["top", [0, 1], "bottom", [0, -1], ...] with anchors from'
        f" {listing(anchors)}.",
    )
