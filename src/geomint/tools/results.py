"""How a tool answers: a result for the model (a handle and a digest), or a structured
error the model can act on. What the person is shown comes from the events the tool
appended (:mod:`geomint.ui`), never from its result.

A tool raises :class:`ToolError` for anything the model should hear about ("no entry
places-9; the places entries are places-1, places-2"); the agent turns it (and any other
:class:`~geomint.errors.ModelFacingError`, and any unexpected exception) into
``{"error": ..., "hint": ...}``. Nothing raises into the loop.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from geomint.errors import ModelFacingError

__all__ = ["ToolError", "ToolResult", "plain_json"]


def plain_json(value: Any) -> Any:
    """A plain-JSON copy of what a model or a provider passed, for an event in the log
    (anything without a JSON form, a datetime say, becomes its text)."""
    return json.loads(json.dumps(value, default=str))


class ToolError(ModelFacingError):
    """A refusal or failure the model should read and can correct.

    Args:
        message: What went wrong, naming what was passed.
        hint: What to do instead, when there is something specific.
    """

    def __init__(self, message: str, hint: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.hint = hint

    def as_result(self) -> dict[str, Any]:
        """The structured error the model reads: the message, and the hint if there is one."""
        out: dict[str, Any] = {"error": self.message}
        if self.hint:
            out["hint"] = self.hint
        return out


@dataclass(frozen=True)
class ToolResult:
    """What a tool returns.

    Attributes:
        model: What the model reads: handles (entry ids, value ids) and a digest. Cut to
            the agent's size budget before it is sent.
        failed: True when the call did not do what was asked (counted by the
            two-failure rule) although it returned normally, e.g. code that raised.
    """

    model: dict[str, Any]
    failed: bool = False
    notes: tuple[str, ...] = field(default=())
