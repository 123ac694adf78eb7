"""Display tools: what the map shows and where it looks. Each appends an event to the
chat's log (the workspace's display state), which the web app renders."""

from __future__ import annotations

from typing import Any, Final, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from geomint.sandbox import RASTER_MEDIA_TYPE
from geomint.state import EntryDisplayChanged, ViewChanged
from geomint.tools._digest import BBox, digest_bbox
from geomint.tools._styling import DATA_DRIVEN, DRAWN, resolve_style, style_problems
from geomint.tools.context import ToolContext
from geomint.tools.registry import ToolEntry
from geomint.tools.results import ToolError

__all__ = [
    "FIT_BOUNDS",
    "FLY_TO",
    "UPDATE_GEOMETRIES_DISPLAY",
    "UPDATE_PLACES_DISPLAY",
    "UPDATE_RASTERS_DISPLAY",
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
        description="How to draw it: color, opacity (0-1), width (lines), radius (points), "
        "color_by (a property, or {property, kind: categorical|graduated, classes, method}), "
        "size_by (a numeric property, or {property, smallest, largest}), label_by (a "
        "property); e.g. {'color_by': 'category'} or {'color': '#d33', 'opacity': 0.6}. "
        "Keys not given keep their look; null resets one.",
    )

    @model_validator(mode="after")
    def _target(self) -> DisplayInput:
        if not self.entry_ids and not self.clear_all:
            raise ValueError("pass entry_ids, or clear_all=true for every entry of the kind")
        return self


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
    if style is not None and (problems := style_problems(style)):
        raise ToolError(f"the style cannot be drawn: {'; '.join(problems)}", hint=DRAWN)
    if style is not None:
        _raster_styles(ctx, targets, style)
    visible = arguments.action == "show"
    events, drawn = [], {}
    for target in targets:
        stored = style
        if style is not None and DATA_DRIVEN & set(style):
            written = ctx.entry_version(target)
            features = ctx.entry_data(target).get("features") or []
            stored, said = resolve_style(style, features, written.version)
            drawn[target] = said
        events.append(EntryDisplayChanged(entry_id=target, visible=visible, style=stored))
    if events:
        ctx.append(events)
    result: dict[str, Any] = {"changed": targets, "visible": visible}
    if drawn:
        result["drawn"] = drawn
    return result


#: What a raster's style may set: its cells are drawn with a colour ramp of their own.
RASTER_STYLE_KEYS: Final = frozenset({"opacity"})


def _raster_styles(ctx: ToolContext, targets: list[str], style: dict[str, Any]) -> None:
    """Refuse a style a raster cannot take, before anything is stored."""
    other = sorted(set(style) - RASTER_STYLE_KEYS)
    if not other:
        return
    for target in targets:
        if ctx.entry_version(target).blob.media_type == RASTER_MEDIA_TYPE:
            data_driven = [k for k in other if k in DATA_DRIVEN]
            why = (
                f"it has cells, not features with properties, for {', '.join(data_driven)}"
                if data_driven
                else "its cells are coloured from its low to its high values"
            )
            raise ToolError(
                f"{target} is a raster: {', '.join(other)} cannot apply ({why})",
                hint="a raster's style takes opacity (0 to 1) only; to colour it otherwise, "
                "use execute_map_code (raster-hue-rotate, raster-saturation, raster-contrast "
                "on its layer " + f"{target}-raster)",
            )


def _display_tool(kind: str, what: str) -> ToolEntry[Any]:
    async def execute(arguments: DisplayInput, ctx: ToolContext) -> dict[str, Any]:
        return await change_display(ctx, kind, arguments)

    return ToolEntry(
        description=f"Show, hide or style {what} on the map. " + DRAWN[0].upper() + DRAWN[1:],
        input_schema=DisplayInput,
        execute=execute,
        effects=frozenset({"display"}),
        classification_prompt=f"Show, hide or restyle {what} on the map.",
        tags=("map",),
        related_tools=(f"recall_{kind}",),
    )


UPDATE_PLACES_DISPLAY: Final = _display_tool("places", "places")
UPDATE_GEOMETRIES_DISPLAY: Final = _display_tool("geometries", "boundaries and shapes")


async def _rasters_display(arguments: DisplayInput, ctx: ToolContext) -> dict[str, Any]:
    return await change_display(ctx, "rasters", arguments)


UPDATE_RASTERS_DISPLAY: Final = ToolEntry(
    description="Show, hide or fade rasters (gridded values: a density, a population grid, "
    "a GeoTIFF) on the map, by entry id or all with clear_all. A raster is drawn with a "
    "colour ramp from its low to its high values, with a legend; its style takes opacity "
    "(0 to 1) only.",
    input_schema=DisplayInput,
    execute=_rasters_display,
    effects=frozenset({"display"}),
    classification_prompt="Show, hide or fade rasters (gridded values) on the map.",
    tags=("map",),
    related_tools=("fetch", "execute_map_code"),
)


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
