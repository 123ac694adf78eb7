"""``zonal_stats`` as a tool: a raster's statistics per zone, each minted as a figure.

Without code, the tool writes the body that calls the sandbox's own ``zonal_stats`` with
the call's arguments, so the run's record shows exactly what was computed and the model
can copy it into ``analyse_data`` to go further (a mask, a ratio, ``load(like=...)``).
The figures are minted by that call in the sandbox, labelled with each zone's name, and
rest on the raster and the zones.
"""

from __future__ import annotations

from typing import Final, Literal

from pydantic import BaseModel, ConfigDict, Field

from geomint.tools._analysis import CodeCall, entry_ids_by_kind, run_code
from geomint.tools.context import ToolContext
from geomint.tools.registry import ToolEntry
from geomint.tools.results import ToolError, ToolResult

__all__ = ["ZONAL_STATS", "ZonalStatsInput"]

#: What the tool computes: geomint.geo.raster.STATS (tests/tools/test_rasters.py checks).
Stat = Literal["sum", "mean", "count", "min", "max", "median", "stdev", "majority"]
#: Characters of the tool's result the model reads.
_RESULT_CHARS: Final = 6_000


class ZonalStatsInput(BaseModel):
    """Arguments of ``zonal_stats``."""

    model_config = ConfigDict(extra="forbid")

    raster_entry_id: str = Field(pattern=r"^rasters-\d+$", description="The raster, rasters-N.")
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
    run = await run_code(
        ctx,
        CodeCall(
            tool="zonal_stats",
            code=_body(arguments, zones_kind),
            ids_by_kind=ids,
            name=f"zonal-{arguments.raster_entry_id}-{arguments.zones_entry_id}",
        ),
    )
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
