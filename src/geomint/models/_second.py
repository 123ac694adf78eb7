"""Second model calls: one request from inside a tool, its text, and what it cost the turn.

A tool sometimes asks a model of its own: map code is written by one
(:mod:`geomint.codegen`), and a live catalogue search is shortlisted by one
(:mod:`geomint.sources.shortlist`). Each is a single request with a system and a user
prompt and no tools, made through :func:`second_call` on the same pydantic-ai model
plumbing the agent uses, and each is counted against the turn's :class:`TurnBudget`, so
an application's cap holds whichever tool spends it.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any

from pydantic_ai.direct import model_request
from pydantic_ai.messages import ModelRequest, SystemPromptPart, TextPart, UserPromptPart
from pydantic_ai.models import Model
from pydantic_ai.settings import ModelSettings

__all__ = ["TurnBudget", "Usage", "second_call"]


@dataclass
class Usage:
    """What second model calls cost so far: calls, tokens and wall time."""

    requests: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    ms: float = 0.0
    model: str | None = None

    @property
    def tokens(self) -> int:
        """Input plus output tokens."""
        return self.input_tokens + self.output_tokens

    def add(self, other: Usage) -> None:
        """Add ``other``'s counts to these."""
        self.requests += other.requests
        self.input_tokens += other.input_tokens
        self.output_tokens += other.output_tokens
        self.ms += other.ms
        self.model = other.model or self.model

    def as_dict(self) -> dict[str, Any]:
        """The counts as plain data (the ``ModelUsage`` of an event)."""
        return {
            "requests": self.requests,
            "input_tokens": self.input_tokens,
            "output_tokens": self.output_tokens,
            "ms": round(self.ms, 1),
            "model": self.model,
        }


@dataclass
class TurnBudget:
    """An application's cap on what second model calls may cost in one turn.

    Map code's generation and discovery's shortlisting share it: both are spent from
    ``used``, and either is refused once it is spent.

    Attributes:
        max_tokens: Input plus output tokens of every second model call in the turn, or
            None for no cap.
        max_requests: Second model calls in the turn, or None for no cap.
        used: What the turn has spent so far.
    """

    max_tokens: int | None = None
    max_requests: int | None = None
    used: Usage = field(default_factory=Usage)

    def refusal(self) -> str | None:
        """Why another call would go over the cap, or None when it would not."""
        spent = self.used.tokens
        if self.max_tokens is not None and spent >= self.max_tokens:
            return (
                f"this turn's budget for second model calls (map code and discovery) of "
                f"{self.max_tokens:,} tokens is spent ({spent:,} used)"
            )
        if self.max_requests is not None and self.used.requests >= self.max_requests:
            calls = f"{self.max_requests} call{'s' * (self.max_requests != 1)}"
            return (
                f"this turn's budget for second model calls (map code and discovery) of "
                f"{calls} is spent"
            )
        return None

    def spend(self, usage: Usage) -> None:
        """Count a call's cost against the turn."""
        self.used.add(usage)


async def second_call(
    model: Model, *, system: str, user: str, max_tokens: int | None = None
) -> tuple[str, Usage]:
    """Ask ``model`` once, with no tools and no history, and return its text and cost.

    The caller checks :meth:`TurnBudget.refusal` before and :meth:`TurnBudget.spend`
    after: what it does on a refusal (say why, fall back) is its own.

    Args:
        model: The model (the agent's, or one the application chose for the job).
        system: The system prompt: the job and its rules.
        user: What to read.
        max_tokens: The longest answer wanted, when the job's answer is short.
    """
    request = ModelRequest(parts=[SystemPromptPart(content=system), UserPromptPart(content=user)])
    settings = ModelSettings(max_tokens=max_tokens) if max_tokens is not None else None
    started = time.perf_counter()
    response = await model_request(model, [request], model_settings=settings)
    elapsed = (time.perf_counter() - started) * 1000
    text = "".join(p.content for p in response.parts if isinstance(p, TextPart))
    reported = response.usage
    return text, Usage(
        requests=1,
        input_tokens=reported.input_tokens,
        output_tokens=reported.output_tokens,
        ms=elapsed,
        model=response.model_name,
    )
