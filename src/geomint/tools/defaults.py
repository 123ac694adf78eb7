"""``DEFAULT_TOOLS``: the registry an agent starts from."""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import Any, Final

from geomint.tools.byod import ADD_BYOD_LAYER, UPDATE_BYOD_DISPLAY
from geomint.tools.clusters import CLUSTER_INCIDENTS
from geomint.tools.data import ANALYSE_DATA, MONITOR_ANALYSIS, PROCESS_DATA
from geomint.tools.display import (
    FIT_BOUNDS,
    FLY_TO,
    UPDATE_GEOMETRIES_DISPLAY,
    UPDATE_PLACES_DISPLAY,
    UPDATE_RASTERS_DISPLAY,
)
from geomint.tools.figures import PRESENT_FIGURE, RECORD_OBSERVATION
from geomint.tools.help import HELP
from geomint.tools.location import GET_CURRENT_LOCATION
from geomint.tools.mapcode import EXECUTE_MAP_CODE, UNDO_MAP_CHANGE
from geomint.tools.mapview import SET_LANGUAGE, SET_MAP_STYLE
from geomint.tools.opendata import FETCH, FIND_SOURCES, RESOLVE_PLACE
from geomint.tools.places import PROVIDER_TOOLS
from geomint.tools.rasters import RASTER_AREA, RESAMPLE_RASTER, ZONAL_STATS
from geomint.tools.recall import RECALL_STATE, RECALL_TOOLS
from geomint.tools.registry import ToolEntry
from geomint.tools.watch import CREATE_TRACKER

__all__ = ["DEFAULT_TOOLS"]

#: Every default tool by name. Read-only: an application passes its changes to
#: ``create_map_agent(tools=...)`` instead of editing this.
DEFAULT_TOOLS: Final[Mapping[str, ToolEntry[Any]]] = MappingProxyType(
    {
        **PROVIDER_TOOLS,
        "analyse_data": ANALYSE_DATA,
        "process_data": PROCESS_DATA,
        "monitor_analysis": MONITOR_ANALYSIS,
        "create_tracker": CREATE_TRACKER,
        "cluster_incidents": CLUSTER_INCIDENTS,
        "zonal_stats": ZONAL_STATS,
        "resample_raster": RESAMPLE_RASTER,
        "raster_area": RASTER_AREA,
        "add_byod_layer": ADD_BYOD_LAYER,
        "update_byod_display": UPDATE_BYOD_DISPLAY,
        **RECALL_TOOLS,
        "recall_state": RECALL_STATE,
        "update_places_display": UPDATE_PLACES_DISPLAY,
        "update_geometries_display": UPDATE_GEOMETRIES_DISPLAY,
        "update_rasters_display": UPDATE_RASTERS_DISPLAY,
        "fly_to": FLY_TO,
        "fit_bounds": FIT_BOUNDS,
        "set_map_style": SET_MAP_STYLE,
        "set_language": SET_LANGUAGE,
        "execute_map_code": EXECUTE_MAP_CODE,
        "undo_map_change": UNDO_MAP_CHANGE,
        "find_sources": FIND_SOURCES,
        "resolve_place": RESOLVE_PLACE,
        "fetch": FETCH,
        "get_current_location": GET_CURRENT_LOCATION,
        "present_figure": PRESENT_FIGURE,
        "record_observation": RECORD_OBSERVATION,
        "help": HELP,
    }
)
