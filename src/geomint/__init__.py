"""geomint: a toolkit for map and GIS agents. The model chooses; code mints.

The public surface is re-exported here; everything else is an implementation detail.
"""

from __future__ import annotations

from geomint.errors import (
    GeomintError,
    ModelFacingError,
    OperatorError,
    SandboxUnavailableError,
    UsageError,
)

__all__ = [
    "GeomintError",
    "ModelFacingError",
    "OperatorError",
    "SandboxUnavailableError",
    "UsageError",
    "__version__",
]

__version__ = "0.1.0"
