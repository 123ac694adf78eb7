"""ToolEntry, the DEFAULT_TOOLS registry, one module per tool family.

A tool is a :class:`ToolEntry` (or a :class:`ToolBuilder` that builds the entry for a
turn's scope). Its ``execute(input, ctx)`` gets a :class:`ToolContext` (the chat's store
and state, the sandbox, the run's stream) and returns a :class:`ToolResult` or a
dict, or raises :class:`ToolError` (or any other :class:`~geomint.errors.ModelFacingError`)
with what the model should hear.
"""

from __future__ import annotations

from geomint.tools.context import EntryCache, ToolContext, ToolSettings
from geomint.tools.defaults import DEFAULT_TOOLS
from geomint.tools.registry import ToolBuilder, ToolEntry, ToolSpec, help_entries, resolve_tools
from geomint.tools.results import ToolError, ToolResult
from geomint.tools.watch import rerun_watchers

__all__ = [
    "DEFAULT_TOOLS",
    "EntryCache",
    "ToolBuilder",
    "ToolContext",
    "ToolEntry",
    "ToolError",
    "ToolResult",
    "ToolSettings",
    "ToolSpec",
    "help_entries",
    "rerun_watchers",
    "resolve_tools",
]
