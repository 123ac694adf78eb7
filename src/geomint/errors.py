"""The exceptions geomint raises, split by who reads them.

* :class:`UsageError` — the developer called an API wrongly (bad argument, wrong order).
* :class:`ModelFacingError` — a message a language model can act on: what failed,
  the value, the fix and the valid alternatives. A tool raises one (a
  :class:`~geomint.tools.ToolError` when it has a hint) and the agent hands the model
  its :meth:`~ModelFacingError.as_result` as the call's result.
* :class:`OperatorError` — something the person running geomint must fix: a service
  down, a sandbox that cannot start on this machine.

All of them derive from :class:`GeomintError`, so an application can catch one root.
"""

from __future__ import annotations

from typing import Any

__all__ = [
    "GeomintError",
    "ModelFacingError",
    "OperatorError",
    "SandboxUnavailableError",
    "UsageError",
]


class GeomintError(Exception):
    """Root of every exception geomint raises on purpose."""


class UsageError(GeomintError, ValueError):
    """The developer used an API wrongly; the message says how to call it."""


class ModelFacingError(GeomintError):
    """An error written for the language model: what failed and how to fix it."""

    def as_result(self) -> dict[str, Any]:
        """The structured error the model reads as the tool call's result."""
        return {"error": str(self)}


class OperatorError(GeomintError):
    """Something the operator must fix: a missing system facility, a service down."""


class SandboxUnavailableError(OperatorError):
    """The sandbox cannot run code at the requested isolation level on this machine."""
