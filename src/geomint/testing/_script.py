"""A scripted model for an agent's tests: the classifier's picks, then the tool loop's steps.

A map agent asks its model twice over in a turn: once as the classifier (a structured
call that picks the tools and their scopes) and then once per step of the tool loop.
:class:`Script` answers the first kind from ``picks`` and the second from ``steps``, in
order, and remembers every request, so a test can say what "the model" does and then
assert what it was shown. A tool's sub-agent asks it too: discovery's shortlisting
request is answered from ``shortlists``. It is a plain function of the messages underneath
(:func:`geomint.models.demo.scripted_model`), so no request leaves the process.
"""

from __future__ import annotations

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
from pydantic_ai.models.function import AgentInfo, FunctionModel

from geomint.models import DISCOVERY_MARKER
from geomint.models.demo import scripted_model, second_prompt

__all__ = ["Script", "Step", "tool_returns"]

#: One step of the tool loop: the tool calls of one response, or the closing text.
Step = list[tuple[str, dict[str, Any]]] | str


@dataclass
class Script:
    """A scripted model: the classifier's picks in order, then the loop's steps in order.

    When a list runs out, its last item repeats. Build the model with :meth:`model` (or
    give :meth:`respond` to :func:`~geomint.models.demo.scripted_model` yourself).

    Attributes:
        picks: The classifier's answers, ``{"tools": [...], "scopes": {...}}`` each, or an
            exception to raise in its place (a model that fails).
        steps: The tool loop's answers: a list of ``(tool, arguments)`` calls made in one
            response, or the final text.
        shortlists: Discovery's shortlisting answers (``find_sources``' sub-agent):
            ``{"shortlist": [{"id", "why"}]}`` each, sent as JSON, or text sent as it is,
            or an exception to raise (a model that fails). An empty list answers an
            empty shortlist.
        seen: Every request received, as ``("classifier", "loop" or "discovery",
            messages, info)``.
        classifier_calls: How many classifier requests were answered.
        loop_calls: How many tool-loop requests were answered.
        discovery_calls: How many shortlisting requests were answered.

    Example:
        >>> import asyncio
        >>> from geomint import create_map_agent
        >>> script = Script(
        ...     picks=[{"tools": ["help"], "scopes": {}}],
        ...     steps=[[("help", {})], "Those are my tools."],
        ... )
        >>> agent = create_map_agent(
        ...     script.model(), store="memory:", code_execution={"mode": "in-process"}
        ... )
        >>> result = asyncio.run(agent.run("What can you do?"))
        >>> result.text, [call["name"] for call in result.tool_calls]
        ('Those are my tools.', ['help'])
        >>> [kind for kind, _, _ in script.seen]
        ['classifier', 'loop', 'loop']
        >>> tool_returns(script.seen[-1][1])[0][0]
        'help'
        >>> agent.close()
    """

    picks: list[dict[str, Any] | Exception] = field(default_factory=list)
    steps: list[Step] = field(default_factory=list)
    shortlists: list[dict[str, Any] | str | Exception] = field(default_factory=list)
    seen: list[tuple[str, list[ModelMessage], AgentInfo]] = field(default_factory=list)
    classifier_calls: int = 0
    loop_calls: int = 0
    discovery_calls: int = 0

    def respond(self, messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        """Answer one request: a classifier pick, a shortlist, or the loop's next step."""
        if second_prompt(messages, DISCOVERY_MARKER) is not None:
            self.seen.append(("discovery", list(messages), info))
            said = (
                self.shortlists[min(self.discovery_calls, len(self.shortlists) - 1)]
                if self.shortlists
                else {"shortlist": []}
            )
            self.discovery_calls += 1
            if isinstance(said, Exception):
                raise said
            return ModelResponse(
                parts=[TextPart(said if isinstance(said, str) else json.dumps(said))]
            )
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

    def model(self, *, name: str = "scripted", word_delay_s: float = 0.0) -> FunctionModel:
        """Return a model that answers from this script, streaming as the agent expects.

        Args:
            name: The model's name, as the agent reports it.
            word_delay_s: Seconds between streamed words (0 for tests).
        """
        return scripted_model(self.respond, name=name, word_delay_s=word_delay_s)


def tool_returns(messages: list[ModelMessage]) -> list[tuple[str, dict[str, Any]]]:
    """Return the tool results in a request history, in order, as ``(tool, parsed JSON)``.

    Args:
        messages: A request's messages, e.g. ``script.seen[-1][1]``.
    """
    found = []
    for message in messages:
        if isinstance(message, ModelRequest):
            for part in message.parts:
                if isinstance(part, ToolReturnPart):
                    found.append((part.tool_name, json.loads(str(part.content))))
    return found
