"""create_map_agent, the per-turn classifier and scopes, the tool loop, and its events."""

from __future__ import annotations

from geomint.agent._toolset import approval_preview
from geomint.agent.classifier import Classification, classify
from geomint.agent.events import AgentEvent
from geomint.agent.map_agent import ApprovalRequest, MapAgent, RunResult, create_map_agent

__all__ = [
    "AgentEvent",
    "ApprovalRequest",
    "Classification",
    "MapAgent",
    "RunResult",
    "approval_preview",
    "classify",
    "create_map_agent",
]
