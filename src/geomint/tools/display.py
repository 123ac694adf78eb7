"""Display tools: what the map shows and where it looks. Each appends an event to the
chat's log (the workspace's display state), which the web app renders."""

from __future__ import annotations

import re
from typing import Any, Final, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from geomint.state import EntryDisplayChanged, ViewChanged
from geomint.tools._digest import BBox, digest_bbox
from geomint.tools.context import ToolContext
from geomint.tools.registry import ToolEntry
from geomint.tools.results import ToolError

__all__ = [
    "FIT_BOUNDS",
    "FLY_TO",
    "UPDATE_GEOMETRIES_DISPLAY",
    "UPDATE_PLACES_DISPLAY",
    "DisplayInput",
    "change_display",
]


class DisplayInput(BaseModel):
    """Show or hide entries of one kind, optionally with a style."""

    model_config = ConfigDict(extra="forbid")

    entry_ids: list[str] | None = Field(default=None, description="Entries to change.")
    action: Literal["show", "hide"] = "show"
    clear_all: bool = Field(default=False, description="Apply to every entry of the kind.")
    style: dict[str, Any] | None = Field(
        default=None,
        description="One look for the whole entry: color, opacity (0-1), width (lines), "
        "radius (points), e.g. {'color': '#d33', 'opacity': 0.6}",
    )

    @model_validator(mode="after")
    def _target(self) -> DisplayInput:
        if not self.entry_ids and not self.clear_all:
            raise ValueError("pass entry_ids, or clear_all=true for every entry of the kind")
        return self


#: What the page draws of a style, each key with its range: anything else is refused with
#: this list, never reported as changed and then not drawn.
_STYLE_RANGES: Final = {"opacity": (0.0, 1.0), "width": (0.5, 20.0), "radius": (1.0, 30.0)}
_DRAWN: Final = (
    "the map draws color (a CSS colour: '#d33', '#dd3333' or a name such as 'teal'), "
    "opacity (0 to 1), width (lines, 0.5 to 20 px) and radius (points, 1 to 30 px), one "
    "value for the whole entry; per-feature colours, fills and labels are not drawn"
)
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


def _style_problems(style: dict[str, Any]) -> list[str]:
    problems = [f"{key!r} is not drawn" for key in sorted(set(style) - {"color", *_STYLE_RANGES})]
    color = style.get("color")
    if color is not None and not (
        isinstance(color, str) and (_HEX.match(color) or color.lower() in _NAMED)
    ):
        problems.append(f"color {color!r} is not a CSS colour")
    for key, (low, high) in _STYLE_RANGES.items():
        value = style.get(key)
        if value is None:
            continue
        if (
            isinstance(value, bool)
            or not isinstance(value, int | float)
            or not low <= value <= high
        ):
            problems.append(f"{key} {value!r} is not a number from {low:g} to {high:g}")
    return problems


async def change_display(ctx: ToolContext, kind: str, arguments: DisplayInput) -> dict[str, Any]:
    """Show or hide entries of ``kind`` and return what changed."""
    await ctx.require("display", {"kind": kind, **arguments.model_dump(mode="json")})
    entries = ctx.workspace.of_kind(kind)
    if arguments.clear_all:
        targets = [e.entry_id for e in entries]
    else:
        targets = list(dict.fromkeys(arguments.entry_ids or []))
        known = {e.entry_id for e in entries}
        wrong = [t for t in targets if t not in known]
        if wrong:
            raise ToolError(
                f"no {kind} entries {', '.join(wrong)}",
                hint=f"the {kind} entries are {', '.join(sorted(known)) or 'none'}",
            )
    style = arguments.style
    if style is not None and (problems := _style_problems(style)):
        raise ToolError(f"the style cannot be drawn: {'; '.join(problems)}", hint=_DRAWN)
    visible = arguments.action == "show"
    events = [EntryDisplayChanged(entry_id=t, visible=visible, style=style) for t in targets]
    if events:
        ctx.append(events)
    return {"changed": targets, "visible": visible}


def _display_tool(kind: str, what: str) -> ToolEntry[Any]:
    async def execute(arguments: DisplayInput, ctx: ToolContext) -> dict[str, Any]:
        return await change_display(ctx, kind, arguments)

    return ToolEntry(
        description=f"Show or hide {what} on the map, by entry id or all at once, with a style.",
        input_schema=DisplayInput,
        execute=execute,
        effects=frozenset({"display"}),
        classification_prompt=f"Show, hide or restyle {what} on the map.",
        tags=("map",),
        related_tools=(f"recall_{kind}",),
    )


UPDATE_PLACES_DISPLAY: Final = _display_tool("places", "places")
UPDATE_GEOMETRIES_DISPLAY: Final = _display_tool("geometries", "boundaries and shapes")


class FlyToInput(BaseModel):
    """Move the camera to a point."""

    model_config = ConfigDict(extra="forbid")

    center: tuple[float, float] = Field(description="[longitude, latitude]")
    zoom: float = Field(default=13, ge=0, le=22)


async def _fly_to(arguments: FlyToInput, ctx: ToolContext) -> dict[str, Any]:
    lon, lat = arguments.center
    if not (-180 <= lon <= 180 and -90 <= lat <= 90):
        hint = "the order is [longitude, latitude]" if -90 <= lon <= 90 else None
        raise ToolError(f"center {list(arguments.center)} is not [longitude, latitude]", hint)
    await ctx.require("display", {"center": [lon, lat], "zoom": arguments.zoom})
    ctx.append([ViewChanged(center=(lon, lat), zoom=arguments.zoom)])
    return {"center": [lon, lat], "zoom": arguments.zoom}


FLY_TO: Final = ToolEntry(
    description="Move the map's camera to [longitude, latitude] at a zoom level.",
    input_schema=FlyToInput,
    execute=_fly_to,
    effects=frozenset({"display"}),
    classification_prompt="Move the map to a location.",
    tags=("map",),
    example_prompts=("Zoom to the harbour",),
)


class FitBoundsInput(BaseModel):
    """Fit the camera to a box, or to entries."""

    model_config = ConfigDict(extra="forbid")

    bbox: tuple[float, float, float, float] | None = Field(
        default=None, description="[west, south, east, north]"
    )
    entry_ids: list[str] | None = Field(default=None, description="Fit these entries.")

    @model_validator(mode="after")
    def _one(self) -> FitBoundsInput:
        if (self.bbox is None) == (not self.entry_ids):
            raise ValueError("pass either bbox or entry_ids")
        return self


async def _fit_bounds(arguments: FitBoundsInput, ctx: ToolContext) -> dict[str, Any]:
    if arguments.bbox is not None:
        box = arguments.bbox
    else:
        boxes: list[BBox] = []
        for entry_id in arguments.entry_ids or []:
            entry = ctx.workspace.entries.get(entry_id)
            if entry is None:
                raise ToolError(f"no entry {entry_id!r}", hint="call recall_state for the ids")
            found = digest_bbox(entry.latest.digest)
            if found is not None:
                boxes.append(found)
        if not boxes:
            raise ToolError("those entries have no geometry to fit")
        box = (
            min(b[0] for b in boxes),
            min(b[1] for b in boxes),
            max(b[2] for b in boxes),
            max(b[3] for b in boxes),
        )
    try:
        event = ViewChanged.model_validate({"bbox": [float(v) for v in box]})
    except ValueError as exc:
        raise ToolError(f"bbox {list(box)} is not [west, south, east, north]: {exc}") from None
    await ctx.require("display", {"bbox": list(event.bbox or ())})
    ctx.append([event])
    return {"bbox": list(event.bbox or ())}


FIT_BOUNDS: Final = ToolEntry(
    description="Fit the map's camera to [west, south, east, north] or to entries.",
    input_schema=FitBoundsInput,
    execute=_fit_bounds,
    effects=frozenset({"display"}),
    classification_prompt="Zoom the map to show a box or some entries.",
    tags=("map",),
)
