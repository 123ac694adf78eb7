"""A display tool's style, checked and resolved against an entry's data into the style the
chat's log stores (geomint.state.styles).

What the model may ask for is exactly what the page draws: one colour, opacity, width and
radius for the whole entry; colour by a property (categorical, or graduated into classes);
size by a numeric property; labels from a property. Classes and their counts are computed
here, once, from the entry's current version, and stored with the style, so the legend
and the map read the same classes on every reload.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any, Final, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from geomint.state import GRADUATED, PALETTE, ColorBy, SizeBy, StyleClass
from geomint.tools.results import ToolError

__all__ = ["DATA_DRIVEN", "DRAWN", "OTHER_COLOUR", "STYLE_KEYS", "resolve_style", "style_problems"]

#: What the map draws of a style, for the tool's description and its errors.
DRAWN: Final = (
    "the map draws: color (a CSS colour: '#d33', '#dd3333' or a name such as 'teal'), "
    "opacity (0 to 1), width (lines, 0.5 to 20 px) and radius (points, 1 to 30 px) for the "
    "whole entry; color_by {property, kind: 'categorical' or 'graduated', classes: 2-8, "
    "method: 'quantile' or 'equal'} colours features by a property, with a legend of the "
    "classes and their counts; size_by {property, smallest, largest} sizes points or lines "
    "by a numeric property; label_by names the property whose value labels each feature. "
    "A key set to null goes back to its default."
)
STYLE_KEYS: Final = frozenset(
    {"color", "opacity", "width", "radius", "color_by", "size_by", "label_by"}
)
#: The keys resolved against the entry's data.
DATA_DRIVEN: Final = frozenset({"color_by", "size_by", "label_by"})
_RANGES: Final = {"opacity": (0.0, 1.0), "width": (0.5, 20.0), "radius": (1.0, 30.0)}
_HEX: Final = re.compile(r"^#(?:[0-9a-fA-F]{3,4}|[0-9a-fA-F]{6}|[0-9a-fA-F]{8})$")
#: CSS's named colours, which the map (MapLibre) accepts.
_CSS_NAMES: Final = """
aliceblue antiquewhite aqua aquamarine azure beige bisque black blanchedalmond blue
blueviolet brown burlywood cadetblue chartreuse chocolate coral cornflowerblue cornsilk
crimson cyan darkblue darkcyan darkgoldenrod darkgray darkgreen darkgrey darkkhaki
darkmagenta darkolivegreen darkorange darkorchid darkred darksalmon darkseagreen
darkslateblue darkslategray darkslategrey darkturquoise darkviolet deeppink deepskyblue
dimgray dimgrey dodgerblue firebrick floralwhite forestgreen fuchsia gainsboro
ghostwhite gold goldenrod gray green greenyellow grey honeydew hotpink indianred indigo
ivory khaki lavender lavenderblush lawngreen lemonchiffon lightblue lightcoral
lightcyan lightgoldenrodyellow lightgray lightgreen lightgrey lightpink lightsalmon
lightseagreen lightskyblue lightslategray lightslategrey lightsteelblue lightyellow
lime limegreen linen magenta maroon mediumaquamarine mediumblue mediumorchid
mediumpurple mediumseagreen mediumslateblue mediumspringgreen mediumturquoise
mediumvioletred midnightblue mintcream mistyrose moccasin navajowhite navy oldlace
olive olivedrab orange orangered orchid palegoldenrod palegreen paleturquoise
palevioletred papayawhip peachpuff peru pink plum powderblue purple rebeccapurple red
rosybrown royalblue saddlebrown salmon sandybrown seagreen seashell sienna silver
skyblue slateblue slategray slategrey snow springgreen steelblue tan teal thistle
tomato turquoise violet wheat white whitesmoke yellow yellowgreen
"""
_NAMED: Final = frozenset(_CSS_NAMES.split())
#: Everything a categorical style has no colour of its own for, features without the
#: property included: a neutral grey the palette does not use.
OTHER_COLOUR: Final = "#a5a5a5"
#: Categories with a colour of their own; the rest share OTHER_COLOUR.
_MOST_CATEGORIES: Final = len(PALETTE) - 1


class ColorByInput(BaseModel):
    model_config = ConfigDict(extra="forbid")

    property: str = Field(min_length=1, max_length=200)
    kind: Literal["categorical", "graduated"] | None = None
    classes: int = Field(default=5, ge=2, le=len(GRADUATED))
    method: Literal["quantile", "equal"] = "quantile"


class SizeByInput(BaseModel):
    model_config = ConfigDict(extra="forbid")

    property: str = Field(min_length=1, max_length=200)
    smallest: float = Field(default=3, ge=0.5, le=40)
    largest: float = Field(default=14, ge=0.5, le=40)


def style_problems(style: Mapping[str, Any]) -> list[str]:
    """What in ``style`` the map cannot draw, each in words (empty when all of it can)."""
    problems = [f"{key!r} is not drawn" for key in sorted(set(style) - STYLE_KEYS)]
    color = style.get("color")
    if color is not None and not (
        isinstance(color, str) and (_HEX.match(color) or color.lower() in _NAMED)
    ):
        problems.append(f"color {color!r} is not a CSS colour")
    for key, (low, high) in _RANGES.items():
        value = style.get(key)
        if value is None:
            continue
        if (
            isinstance(value, bool)
            or not isinstance(value, int | float)
            or not low <= value <= high
        ):
            problems.append(f"{key} {value!r} is not a number from {low:g} to {high:g}")
    for key, model in (("color_by", ColorByInput), ("size_by", SizeByInput)):
        given = style.get(key)
        if given is None or isinstance(given, str):
            continue
        try:
            model.model_validate(given)
        except ValidationError as exc:
            problems.extend(f"{key}: {_said(e)}" for e in exc.errors())
    label = style.get("label_by")
    if label is not None and not (isinstance(label, str) and label):
        problems.append(f"label_by {label!r} is not a property name")
    return problems


def _said(error: Mapping[str, Any]) -> str:
    where = ".".join(str(p) for p in error.get("loc", ()))
    return f"{where} {error.get('msg', 'is not valid')}".strip()


def resolve_style(
    style: Mapping[str, Any], features: Sequence[Mapping[str, Any]], version: int
) -> tuple[dict[str, Any], list[str]]:
    """``style`` as stored (data-driven parts resolved into classes and ranges), and one
    line per data-driven part saying what it drew, for the model.

    Raises:
        ToolError: A property named is not in the entry's data, or is not numeric where a
            number is needed; the error lists the properties the entry has.
    """
    properties = [f.get("properties") or {} for f in features]
    stored = {k: v for k, v in style.items() if k not in DATA_DRIVEN}
    said: list[str] = []
    if "color_by" in style:
        given = style["color_by"]
        if given is None:
            stored["color_by"] = None
        else:
            asked = ColorByInput.model_validate(
                {"property": given} if isinstance(given, str) else given
            )
            color_by = _color_by(asked, properties, version)
            stored["color_by"] = color_by.model_dump(mode="json")
            said.append(_legend_line(color_by))
    if "size_by" in style:
        given = style["size_by"]
        if given is None:
            stored["size_by"] = None
        else:
            sized = SizeByInput.model_validate(
                {"property": given} if isinstance(given, str) else given
            )
            low, high = _numeric_range(sized.property, properties)
            size_by = SizeBy(
                property=sized.property,
                low=low,
                high=high,
                smallest=sized.smallest,
                largest=sized.largest,
            )
            stored["size_by"] = size_by.model_dump(mode="json")
            said.append(
                f"size by {sized.property}: {low:g} to {high:g} drawn "
                f"{sized.smallest:g} to {sized.largest:g} px"
            )
    if "label_by" in style:
        label = style["label_by"]
        if label is not None:
            _present(label, properties)
            said.append(f"labels from {label}")
        stored["label_by"] = label
    return stored, said


def _color_by(asked: ColorByInput, properties: list[Mapping[str, Any]], version: int) -> ColorBy:
    _present(asked.property, properties)
    values = [p.get(asked.property) for p in properties]
    numbers = [float(v) for v in values if v is not None and _is_number(v)]
    kind = asked.kind or (
        "graduated" if numbers and len(set(numbers)) > _MOST_CATEGORIES else "categorical"
    )
    if kind == "graduated":
        if not numbers:
            raise ToolError(
                f"{asked.property} holds no numbers to grade",
                hint=f"colour it with kind 'categorical'; {_properties(properties)}",
            )
        classes = _graduated(numbers, asked.classes, asked.method)
        others = len(values) - len(numbers)
    else:
        classes, others = _categorical(values)
    if others:
        classes = (*classes, StyleClass(color=OTHER_COLOUR, count=others, other=True))
    return ColorBy(property=asked.property, kind=kind, classes=classes, version=version)


def _categorical(values: list[Any]) -> tuple[tuple[StyleClass, ...], int]:
    scalars = Counter(v for v in values if isinstance(v, str | int | float) and v is not None)
    most = scalars.most_common()
    if len(most) > len(PALETTE):
        kept, rest = most[:_MOST_CATEGORIES], most[_MOST_CATEGORIES:]
    else:
        kept, rest = most, []
    classes = tuple(StyleClass(color=PALETTE[i], count=n, value=v) for i, (v, n) in enumerate(kept))
    return classes, sum(n for _, n in rest) + (len(values) - sum(scalars.values()))


def _graduated(numbers: list[float], wanted: int, method: str) -> tuple[StyleClass, ...]:
    ordered = sorted(numbers)
    low, high = ordered[0], ordered[-1]
    if method == "equal":
        step = high / wanted - low / wanted  # (high - low) overflows for ±1e308
        edges = [low + step * i for i in range(wanted)]
    else:
        edges = [ordered[math.floor(len(ordered) * i / wanted)] for i in range(wanted)]
    edges = sorted(set(edges))  # repeated values make fewer classes, never empty ones
    colours = _spread(GRADUATED, len(edges))
    classes = []
    for i, start in enumerate(edges):
        end = edges[i + 1] if i + 1 < len(edges) else high
        last = i + 1 == len(edges)
        count = sum(1 for v in ordered if start <= v < end or (last and v == end))
        classes.append(StyleClass(color=colours[i], count=count, low=start, high=end))
    return tuple(classes)


def _spread(colours: Sequence[str], n: int) -> list[str]:
    if n == 1:
        return [colours[len(colours) // 2]]
    return [colours[round(i * (len(colours) - 1) / (n - 1))] for i in range(n)]


def _numeric_range(name: str, properties: list[Mapping[str, Any]]) -> tuple[float, float]:
    _present(name, properties)
    numbers = [p[name] for p in properties if _is_number(p.get(name))]
    if not numbers:
        raise ToolError(
            f"{name} holds no numbers to size by", hint=_properties(properties, numeric=True)
        )
    return float(min(numbers)), float(max(numbers))


def _present(name: str, properties: list[Mapping[str, Any]]) -> None:
    if not any(name in p for p in properties):
        raise ToolError(f"no feature has the property {name!r}", hint=_properties(properties))


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)


def _properties(properties: list[Mapping[str, Any]], *, numeric: bool = False) -> str:
    """The entry's properties as the model reads them: name, type and a sample."""
    seen: dict[str, list[Any]] = {}
    for p in properties:
        for key, value in p.items():
            seen.setdefault(key, []).append(value)
    described = []
    for key, values in seen.items():
        numbers = [float(v) for v in values if v is not None and _is_number(v)]
        if numbers:
            described.append(f"{key} (numbers {min(numbers):g} to {max(numbers):g})")
        elif not numeric:
            distinct = len({str(v) for v in values})
            described.append(f"{key} (text, {distinct} values, e.g. {str(values[0])[:30]!r})")
        if len(described) >= 20:
            described.append("…")
            break
    if not described:
        return (
            "the entry's features have no numeric properties"
            if numeric
            else ("the entry's features have no properties")
        )
    kind = "numeric properties" if numeric else "properties"
    return f"the entry's {kind}: {', '.join(described)}"


def _legend_line(color_by: ColorBy) -> str:
    rows = []
    for c in color_by.classes:
        if c.other:
            rows.append(f"other ({c.count})")
        elif color_by.kind == "categorical":
            rows.append(f"{c.value} ({c.count})")
        else:
            rows.append(f"{c.low:g}-{c.high:g} ({c.count})")
    return f"colour by {color_by.property} ({color_by.kind}): {', '.join(rows)}"
