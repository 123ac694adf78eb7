"""ToolEntry, the DEFAULT_TOOLS registry, one module per tool family.

So far: :class:`ToolEntry`, :class:`ToolBuilder` for scopable tools, :func:`resolve_tools`
(an application's removals, replacements and additions merged into the defaults) and
:func:`help_entries`. The default tools themselves come with the agent issue.
"""

from __future__ import annotations

from geomint.tools.registry import ToolBuilder, ToolEntry, ToolSpec, help_entries, resolve_tools

__all__ = ["ToolBuilder", "ToolEntry", "ToolSpec", "help_entries", "resolve_tools"]
