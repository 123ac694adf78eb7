"""ToolEntry, the DEFAULT_TOOLS registry, one module per tool family.

A tool is a :class:`ToolEntry` (a scopable one prepares itself for each turn's scope).
Its ``execute(input, ctx)`` gets a :class:`ToolContext` (the chat's store
and state, the sandbox, the run's stream) and returns a :class:`ToolResult` or a
dict, or raises :class:`ToolError` (or any other :class:`~geomint.errors.ModelFacingError`)
with what the model should hear.
"""

from __future__ import annotations

from geomint.tools.basemaps import MapStyle
from geomint.tools.context import EntryCache, ToolContext, ToolSettings
from geomint.tools.defaults import DEFAULT_TOOLS
from geomint.tools.registry import ToolEntry, help_entries, resolve_tools
from geomint.tools.results import ToolError, ToolResult
from geomint.tools.watch import rerun_watchers

__all__ = [
    "DEFAULT_TOOLS",
    "EntryCache",
    "MapStyle",
    "ToolContext",
    "ToolEntry",
    "ToolError",
    "ToolResult",
    "ToolSettings",
    "help_entries",
    "rerun_watchers",
    "resolve_tools",
]
