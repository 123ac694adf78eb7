"""create_map_agent, the per-turn classifier and scopes, and the tool loop.

A run streams typed parts (:mod:`geomint.ui.parts`); they are projected from the events it
stores, so a chat read back (:func:`geomint.ui.chat_parts`) shows the same.
"""

from __future__ import annotations

from geomint.agent.classifier import Classification, classify
from geomint.agent.map_agent import (
    ApprovalRequest,
    MapAgent,
    RunResult,
    ToolCallOutcome,
    create_map_agent,
)

__all__ = [
    "ApprovalRequest",
    "Classification",
    "MapAgent",
    "RunResult",
    "ToolCallOutcome",
    "classify",
    "create_map_agent",
]
