"""What a run streams: one small event type with a kind and JSON data.

Kinds, in the order a run usually produces them:

- ``run_started`` ``{chat_id, run_id}``
- ``classified`` ``{active, scopes, unscoped, retries, failed}``
- ``text`` ``{delta}``: answer text as the model writes it
- ``tool_call`` ``{id, name, args}`` and ``tool_result`` ``{id, name, ok, result}``
- ``progress`` ``{tool, name, state}`` while code runs
- ``entry`` ``{entry_id, kind, version, label, visible, geojson, sources}``
- ``analysis``, ``chart`` ``{config}``, ``figure_minted``, ``figure`` ``{figures}``,
  ``observation``, ``view``, ``display``, ``monitor``, ``monitor_ran``
- ``error`` ``{message}``: the run ended early (step limit, model failure, cancellation)
- ``done`` ``{text, steps, stopped}``
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from pydantic_ai import CustomEvent

__all__ = ["AgentEvent", "MapEvent"]


@dataclass(frozen=True)
class AgentEvent:
    """One event of a run.

    Attributes:
        type: The kind (see the module docstring).
        data: Its JSON data.
    """

    type: str
    data: dict[str, Any] = field(default_factory=dict)

    def as_dict(self) -> dict[str, Any]:
        """``{"type": ..., **data}``: the shape a UI stream sends."""
        return {"type": self.type, **self.data}


@dataclass(kw_only=True)
class MapEvent(CustomEvent):
    """A tool's UI event carried through pydantic-ai's event stream."""

    kind: str
    payload: dict[str, Any]
