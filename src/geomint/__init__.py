"""geomint: a toolkit for map and GIS agents. The model chooses; code mints.

The public surface is re-exported here; everything else is an implementation detail.
The agent's names (``create_map_agent``, ``DEFAULT_TOOLS``, ``ToolEntry``, ...) load on
first use, so ``import geomint`` stays light for code that only needs the sandbox or
geometry.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

from geomint.errors import (
    GeomintError,
    ModelFacingError,
    OperatorError,
    SandboxUnavailableError,
    UsageError,
)

if TYPE_CHECKING:
    from geomint.agent import MapAgent, RunResult, create_map_agent
    from geomint.tools import DEFAULT_TOOLS, ToolEntry
    from geomint.ui import Part

_LAZY = {
    "create_map_agent": "geomint.agent",
    "MapAgent": "geomint.agent",
    "RunResult": "geomint.agent",
    "DEFAULT_TOOLS": "geomint.tools",
    "ToolEntry": "geomint.tools",
    "Part": "geomint.ui",
}

__all__ = [
    "DEFAULT_TOOLS",
    "GeomintError",
    "MapAgent",
    "ModelFacingError",
    "OperatorError",
    "Part",
    "RunResult",
    "SandboxUnavailableError",
    "ToolEntry",
    "UsageError",
    "__version__",
    "create_map_agent",
]

__version__ = "0.1.0"


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'geomint' has no attribute {name!r}")
    value = getattr(import_module(module), name)
    globals()[name] = value
    return value
