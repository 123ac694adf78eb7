"""The sandbox's raster operations as tools: ``zonal_stats``, ``resample_raster`` and
``raster_area``.

Each tool writes the body that calls the sandbox's own operation (``zonal_stats``,
``load(..., like=...)``, ``cell_area``) with the call's arguments as ``repr``'d literals,
and runs it like ``analyse_data``: the run's record shows exactly what was computed, the
model can copy it into ``analyse_data`` to go further, and every figure is minted by code
in the sandbox, labelled, and rests on each entry the body loaded.
"""

from __future__ import annotations

from typing import Final, Literal

from pydantic import BaseModel, ConfigDict, Field

from geomint.tools._analysis import CodeCall, entry_ids_by_kind, run_code
from geomint.tools.context import ToolContext
from geomint.tools.registry import ToolEntry
from geomint.tools.results import ToolError, ToolResult

__all__ = [
    "RASTER_AREA",
    "RESAMPLE_RASTER",
    "ZONAL_STATS",
    "RasterAreaInput",
    "ResampleRasterInput",
    "ZonalStatsInput",
]

#: What the tool computes: geomint.geo.raster.STATS (tests/tools/test_rasters.py checks).
Stat = Literal["sum", "mean", "count", "min", "max", "median", "stdev", "majority"]
#: How cells combine: geomint.geo.raster.RESAMPLING (tests/tools/test_rasters.py checks).
Method = Literal["nearest", "bilinear", "cubic", "average", "sum", "min", "max", "mode"]
_RASTER_ID: Final = r"^rasters-\d+$"
#: Characters of the tool's result the model reads.
_RESULT_CHARS: Final = 6_000


class ZonalStatsInput(BaseModel):
    """Arguments of ``zonal_stats``."""

    model_config = ConfigDict(extra="forbid")

    raster_entry_id: str = Field(pattern=_RASTER_ID, description="The raster, rasters-N.")
    zones_entry_id: str = Field(
        pattern=r"^[a-z_]+-\d+$",
        description="The polygons: any entry of polygons (geometries-N, byod-N, tables-N).",
    )
    stats: list[Stat] = Field(default=["sum"], min_length=1, max_length=8)
    label: str | None = Field(
        default=None, max_length=100, description="What the raster's values are (people)."
    )
    unit: str | None = Field(default=None, max_length=40, description="Unit of sum/mean/min/max.")
    band: int = Field(default=1, ge=1, le=16)


def _body(arguments: ZonalStatsInput, zones_kind: str) -> str:
    # Every value is a literal written with repr(), never text pasted into code.
    return (
        f"rows = zonal_stats({arguments.raster_entry_id!r}, "
        f"{zones_kind}_by_entry[{arguments.zones_entry_id!r}], {list(arguments.stats)!r}, "
        f"label={arguments.label!r}, unit={arguments.unit!r}, band={arguments.band!r})\n"
        "return [{k: v for k, v in r.items() if k != 'properties'} for r in rows]\n"
    )


async def _zonal(arguments: ZonalStatsInput, ctx: ToolContext) -> ToolResult:
    zones_kind = arguments.zones_entry_id.rsplit("-", 1)[0]
    if zones_kind == "rasters":
        raise ToolError(
            "zones are polygons, not a raster",
            hint="pass a geometries, byod or tables entry as zones_entry_id",
        )
    ids = entry_ids_by_kind([arguments.raster_entry_id, arguments.zones_entry_id])
    name = f"zonal-{arguments.raster_entry_id}-{arguments.zones_entry_id}"
    return await _run_body(ctx, "zonal_stats", _body(arguments, zones_kind), ids, name)


async def _run_body(
    ctx: ToolContext, tool: str, code: str, ids: dict[str, list[str]], name: str
) -> ToolResult:
    """Run a tool's written body as analyse_data runs code; the result shows the code."""
    run = await run_code(ctx, CodeCall(tool=tool, code=code, ids_by_kind=ids, name=name))
    out = run.for_model(_RESULT_CHARS)
    out["code"] = run.record.code
    return ToolResult(model=out, failed=not run.ok)


ZONAL_STATS: Final = ToolEntry(
    description=(
        "Statistics of a raster inside each polygon of another entry (sum, mean, count, "
        "min, max, median, stdev, majority), each cell weighted by the exact share of it the "
        "polygon covers. Each statistic of each zone is minted as a figure labelled with the "
        "zone's name (up to 40; past that the rows come back as data). The result shows the "
        "code it ran, to continue in analyse_data (masks, ratios, load(like=...))."
    ),
    input_schema=ZonalStatsInput,
    execute=_zonal,
    effects=frozenset({"code_entry"}),
    classification_prompt="Sum, average or count a raster's values inside polygons.",
    tags=("data", "rasters"),
    examples=(
        "zonal_stats(raster_entry_id='rasters-1', zones_entry_id='geometries-1', "
        "stats=['sum'], label='people')",
    ),
    example_prompts=("How many people live in each park?", "Average temperature per district"),
    related_tools=("analyse_data", "fetch"),
    changes_chat=True,
    result_chars=_RESULT_CHARS,
)


# --- resample_raster ----------------------------------------------------------------------


class ResampleRasterInput(BaseModel):
    """Arguments of ``resample_raster``."""

    model_config = ConfigDict(extra="forbid")

    raster_entry_id: str = Field(pattern=_RASTER_ID, description="The raster to move.")
    like_entry_id: str = Field(
        pattern=_RASTER_ID, description="The raster whose grid (CRS, cells, extent) to use."
    )
    method: Method = Field(
        default="nearest",
        description="sum for counts going coarser, average for densities and rates, "
        "nearest or mode for categories, bilinear for smooth fields going finer.",
    )
    label: str | None = Field(default=None, max_length=100, description="The new layer's name.")
    unit: str | None = Field(default=None, max_length=40, description="Unit of the totals.")


def _resample_body(arguments: ResampleRasterInput) -> str:
    raster, like = arguments.raster_entry_id, arguments.like_entry_id
    label = arguments.label or f"{raster} on the grid of {like}"
    body = [
        f"source = load({raster!r})",
        f"moved = load({raster!r}, like={like!r}, method={arguments.method!r})",
        f"mint.layer(moved, {label!r})",
        "kept = int(np.count_nonzero(np.isfinite(moved.values())))",
    ]
    if arguments.method == "sum":
        # A sum resampling keeps a total where the new grid covers the old: say both.
        body += [
            "what = source.label or " + repr(raster),
            "before = float(np.nansum(source.values()))",
            "after = float(np.nansum(moved.values()))",
            f"mint.value(before, 'total of ' + what + ' on its own grid', unit={arguments.unit!r})",
            f"mint.value(after, 'total of ' + what + ' on the grid of {like}', "
            f"unit={arguments.unit!r})",
            "return {'grid': moved.describe(), 'cells with data': kept, "
            "'total before': before, 'total after': after}",
        ]
    else:
        body.append("return {'grid': moved.describe(), 'cells with data': kept}")
    return "\n".join(body) + "\n"


async def _resample(arguments: ResampleRasterInput, ctx: ToolContext) -> ToolResult:
    ids = entry_ids_by_kind([arguments.raster_entry_id, arguments.like_entry_id])
    name = f"resample-{arguments.raster_entry_id}-{arguments.like_entry_id}"
    return await _run_body(ctx, "resample_raster", _resample_body(arguments), ids, name)


RESAMPLE_RASTER: Final = ToolEntry(
    description=(
        "Put a raster onto another raster's grid (its CRS, cell size and extent), cells "
        "with nodata left out, and add it as a new raster layer. With method='sum' the "
        "totals before and after are minted as figures (a sum keeps the total where the "
        "new grid covers the old). The result shows the code it ran."
    ),
    input_schema=ResampleRasterInput,
    execute=_resample,
    effects=frozenset({"code_entry"}),
    classification_prompt="Resample or align a raster onto another raster's grid.",
    tags=("data", "rasters"),
    examples=(
        "resample_raster(raster_entry_id='rasters-1', like_entry_id='rasters-2', "
        "method='sum', label='people per 1 km cell')",
    ),
    example_prompts=("Put the population grid onto the temperature grid",),
    related_tools=("zonal_stats", "analyse_data"),
    changes_chat=True,
    result_chars=_RESULT_CHARS,
)


# --- raster_area --------------------------------------------------------------------------


class RasterAreaInput(BaseModel):
    """Arguments of ``raster_area``."""

    model_config = ConfigDict(extra="forbid")

    raster_entry_id: str = Field(pattern=_RASTER_ID, description="The raster, rasters-N.")
    at_least: float | None = Field(
        default=None,
        allow_inf_nan=False,
        description="Count only cells whose value is at least this; none: every cell with data.",
    )
    band: int = Field(default=1, ge=1, le=16)


def _area_body(arguments: RasterAreaInput) -> str:
    raster, low = arguments.raster_entry_id, arguments.at_least
    which = "with data" if low is None else f"at least {low:g}"
    test = "np.isfinite(values)" if low is None else f"np.isfinite(values) & (values >= {low!r})"
    return (
        f"grid = load({raster!r})\n"
        f"values = grid.values({arguments.band!r})\n"
        f"kept = {test}\n"
        "km2 = float(cell_area(grid)[kept].sum()) / 1e6\n"
        f"what = grid.label or {raster!r}\n"
        f"mint.value(km2, 'ground area of the cells of ' + what + ' {which}', unit='km²')\n"
        "return {'cells': int(kept.sum()), 'of cells': int(values.size), 'km2': km2}\n"
    )


async def _area(arguments: RasterAreaInput, ctx: ToolContext) -> ToolResult:
    ids = entry_ids_by_kind([arguments.raster_entry_id])
    name = f"area-{arguments.raster_entry_id}"
    return await _run_body(ctx, "raster_area", _area_body(arguments), ids, name)


RASTER_AREA: Final = ToolEntry(
    description=(
        "The ground area (km², on the WGS84 ellipsoid, whatever the raster's CRS) of a "
        "raster's cells with data, or of those whose value is at least a threshold, "
        "minted as a figure. The result shows the code it ran (cell_area in analyse_data "
        "gives each cell's area for more)."
    ),
    input_schema=RasterAreaInput,
    execute=_area,
    effects=frozenset({"code_entry"}),
    classification_prompt="Measure the ground area a raster covers, or its cells above a value.",
    tags=("data", "rasters"),
    examples=("raster_area(raster_entry_id='rasters-1', at_least=100)",),
    example_prompts=("How much of the area is above 100 m?",),
    related_tools=("zonal_stats", "analyse_data"),
    changes_chat=True,
    result_chars=_RESULT_CHARS,
)
