"""Scripted models for the agent tests: a plain function of the messages says what to call next."""

from __future__ import annotations

import asyncio
import json
from dataclasses import dataclass, field
from typing import Any

from pydantic_ai.messages import (
    ModelMessage,
    ModelRequest,
    ModelResponse,
    TextPart,
    ToolCallPart,
    ToolReturnPart,
)
from pydantic_ai.models.function import AgentInfo

Step = list[tuple[str, dict[str, Any]]] | str


@dataclass
class Script:
    """A scripted model: classifier picks in order, then the main loop's steps in order.

    Each step is a list of tool calls (made in one response, i.e. one model step) or the
    final text. ``seen`` records every request the model received.
    """

    picks: list[dict[str, Any] | Exception] = field(default_factory=list)
    steps: list[Step] = field(default_factory=list)
    seen: list[tuple[str, list[ModelMessage], AgentInfo]] = field(default_factory=list)
    classifier_calls: int = 0
    loop_calls: int = 0

    def respond(self, messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        if info.output_tools and not info.function_tools:
            self.seen.append(("classifier", list(messages), info))
            pick = self.picks[min(self.classifier_calls, len(self.picks) - 1)]
            self.classifier_calls += 1
            if isinstance(pick, Exception):
                raise pick
            return ModelResponse(parts=[ToolCallPart(info.output_tools[0].name, pick)])
        self.seen.append(("loop", list(messages), info))
        step = self.steps[min(self.loop_calls, len(self.steps) - 1)]
        self.loop_calls += 1
        if isinstance(step, str):
            return ModelResponse(parts=[TextPart(step)])
        return ModelResponse(parts=[ToolCallPart(name, args) for name, args in step])


def tool_returns(messages: list[ModelMessage]) -> list[tuple[str, dict[str, Any]]]:
    """The tool results in a request history, parsed."""
    found = []
    for message in messages:
        if isinstance(message, ModelRequest):
            for part in message.parts:
                if isinstance(part, ToolReturnPart):
                    found.append((part.tool_name, json.loads(str(part.content))))
    return found


def run(coroutine: Any) -> Any:
    """Run a coroutine to completion (the tests are synchronous)."""
    return asyncio.run(coroutine)


def all_text(messages: list[ModelMessage]) -> str:
    """Every part's content in a request history, joined (reprs cut long text short)."""
    return "\n".join(
        str(getattr(part, "content", "")) for message in messages for part in message.parts
    )
