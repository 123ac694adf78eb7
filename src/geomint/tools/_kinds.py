"""What the code-taking tools tell the model about each kind of entry, and about the names
a code body can use.

A scoped tool documents only the kinds its scope names; the unscoped (terse) surface lists
the names and a line per kind. The sandbox always carries every name either way: a kind
that was not requested arrives as ``None``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

from pydantic import BaseModel, Field, field_validator

from geomint.state import ENTRY_KINDS

__all__ = ["KIND_DOCS", "DataScope", "code_names_doc", "kinds_doc"]

KIND_DOCS: Final[dict[str, str]] = {
    "places": (
        "`places`: FeatureCollection of Point features, one per place; properties carry "
        "`name`, `category`, `categories` (list), and whatever the source had (`address`, "
        "`opening_hours`, ...). A places entry may carry `attached_geometries` (a "
        "FeatureCollection of polygons keyed by `place_id`) and `connections`."
    ),
    "routes": (
        "`routes`: FeatureCollection of LineString features, one per route; properties "
        "carry `summary` (`length_m`, `duration_s`, `departure`, `arrival`) and `sections` "
        "(list of `{start_index, end_index, kind}` over the line's positions). "
        "`geo.route_progress_at_point`, `geo.along` and `geo.section_bbox` read them."
    ),
    "ranges": (
        "`ranges`: FeatureCollection of Polygon features, reachable areas; properties carry "
        "`origin` [lon, lat] and `budget` (`{time_s}` or `{distance_m}`)."
    ),
    "incidents": (
        "`incidents`: FeatureCollection of traffic incidents (Points and LineStrings); "
        "properties carry `category`, `magnitude` (0-4), `delay_s`, `from`, `to`, `start`. "
        "`geo.cluster(features, eps_m=250, min_members=2, max_clusters=None, "
        "pre_filter=None, previous=None)` groups them by distance in metres (DBSCAN) and "
        "returns `.clusters` (largest first, each with `.id`, `.members` (indices into "
        "features), `.keys`, `.centroid` (lng, lat), `.bbox` and `.hull`, a shapely "
        "Polygon), `.noise` and `.skipped` (indices); `pre_filter` is a function of one "
        "Feature, true for those to cluster; `previous` is an earlier result, to keep ids."
    ),
    "geometries": (
        "`geometries`: FeatureCollection of polygons and other shapes: boundaries of named "
        "places and layers code minted; properties carry `name` when known."
    ),
    "traffic_area_analytics": (
        "`traffic_area_analytics`: FeatureCollection of area cells with traffic statistics "
        "in their properties."
    ),
    "byod": (
        "`byod`: FeatureCollection the user brought (any geometry); its property names are "
        "in the entry's digest (call recall_byod)."
    ),
    "tables": (
        "`tables`: FeatureCollection of rows a `fetch` read from a published source, one "
        "feature per row; properties carry `unit_id` (a place spine id such as country:FIN, "
        "None when the unit is not on the spine), `unit_name`, `unit_code`, `period` (text: "
        "'2020', or 'not stated'), `value` (None when the source has no value) and the "
        "source's other columns. Geometry is the unit's boundary, or its label point when "
        "units repeat over periods. `tables.to_geodataframe()` gives a frame; sort periods "
        "as text. Mint a figure read off one row with mint.value(x, label, unit=..., "
        "period=row['period']): the card then shows that period beside the source's."
    ),
    "rasters": (
        "`rasters`: a Raster (not features): `.array` (rows, cols) or (bands, rows, cols), "
        "read-only; `.transform` (a, b, c, d, e, f), `.crs`, `.nodata`, `.res`, `.bounds` "
        "(in its CRS), `.values()` (band 1 as float, nodata as NaN), `.with_array(a)` (the "
        "same grid with other values). `rasters` is the first asked; `rasters_by_entry` has "
        "them all. Use `zonal_stats(raster, zones, ['sum', 'mean', 'count', 'min', 'max'], "
        "unit=...)` (exact cell coverage; mints a labelled figure per zone and statistic, up "
        "to 40), `load('rasters-2', like='rasters-1', method='sum'|'average'|'nearest')` "
        "(onto another grid, nodata left out), `cell_area(raster)` (m² per cell), and "
        "`mint.layer(raster, label)` to show a computed raster."
    ),
}

_LIBRARIES: Final = (
    "Also available: `shapely`, `gpd` (geopandas), `pd`, `np`, `h3`, `pyproj`, and `geo` "
    "(metre-true helpers: geo.area_m2, geo.length_m, geo.distance_m, geo.buffer_m, "
    "geo.points_within, geo.point_in_polygon, geo.nearest, geo.union, geo.intersection, "
    "geo.difference, geo.centroid, geo.bbox, geo.cells_for_points, geo.cluster). "
    "A FeatureCollection input has `.to_geodataframe()`. Mint every number a person will read "
    "with `mint.value(x, label, unit=..., period=None)` (period: the one its rows refer to, "
    "when they carry one) and every layer to show with "
    "`mint.layer(geojson_or_gdf_or_raster, label)`; the ids they get are in the tool's result. "
    "Rasters: `zonal_stats`, `load`, `cell_area`, `Raster` (see the rasters kind). "
    "The body is a function body: end with `return ...` (plain JSON data). No network, no "
    "files."
)


class DataScope(BaseModel):
    """The scope of a data tool for one turn: the kinds of entry the turn touches."""

    kinds: list[str] = Field(min_length=1, description="Entry kinds this turn touches.")

    @field_validator("kinds")
    @classmethod
    def _known(cls, kinds: list[str]) -> list[str]:
        unknown = [k for k in kinds if k not in ENTRY_KINDS]
        if unknown:
            raise ValueError(f"unknown kinds {unknown}; choose from {', '.join(ENTRY_KINDS)}")
        return list(dict.fromkeys(kinds))


def kinds_doc(kinds: Sequence[str] | None) -> str:
    """Per-kind documentation: every kind in full for a scope, one line each without."""
    if kinds is None:
        names = ", ".join(f"`{k}`" for k in ENTRY_KINDS)
        return (
            f"Inputs: {names} (FeatureCollections, None when not requested) and "
            "`<kind>_by_entry` ({entry_id: FeatureCollection})."
        )
    return "\n".join(KIND_DOCS[k] for k in kinds) + (
        "\nEach requested kind also comes as `<kind>_by_entry` ({entry_id: FeatureCollection})."
    )


def code_names_doc() -> str:
    """What every code body can use besides its inputs."""
    return _LIBRARIES
