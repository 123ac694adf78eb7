"""The per-turn classifier: one structured-output model call that picks the active tools
and, for each scopable tool it picks, a scope.

The model sees each tool's one-line ``classification_prompt``, its ``depends_on`` and,
for a scopable tool, its ``scope_prompt``; then the last few messages, cut short. A pick of
a scopable tool without a valid scope is sent back with the validation error, twice at
most; after that the tool stays with its terse unscoped surface. Any other failure fails
open: every tool, unscoped. A tool not picked stays within the model's reach for the turn
(:mod:`geomint.agent._surface`).
"""

from __future__ import annotations

import json
import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final

from pydantic import BaseModel, Field, ValidationError, create_model
from pydantic_ai import Agent, ModelRetry, RunContext
from pydantic_ai.models import Model
from pydantic_ai.usage import RunUsage

from geomint.tools import ToolEntry

__all__ = ["Classification", "classifier_prompt", "classify"]

_log = logging.getLogger(__name__)

#: Retries of a pick that left out a scope, as the design says: twice, then terse.
SCOPE_RETRIES: Final = 2
_MESSAGES_KEPT: Final = 6
_MESSAGE_CHARS: Final = 400


@dataclass(frozen=True)
class Classification:
    """What the classifier chose for one turn.

    Attributes:
        active: The tool names active this turn (picks plus their ``depends_on``).
        scopes: A scope per scopable tool that got a valid one.
        unscoped: Scopable tools picked without a valid scope after the retries: terse.
        retries: How many times the pick was sent back.
        failed: Why the classifier failed, when it did (then every tool is active).
        prompt_chars: Size of the classifier's prompt.
    """

    active: tuple[str, ...]
    scopes: Mapping[str, BaseModel] = field(default_factory=dict)
    unscoped: tuple[str, ...] = ()
    retries: int = 0
    failed: str | None = None
    prompt_chars: int = 0

    def as_dict(self) -> dict[str, Any]:
        """JSON-able form, for ``on_classify`` and the event stream."""
        return {
            "active": list(self.active),
            "scopes": {k: v.model_dump() for k, v in self.scopes.items()},
            "unscoped": list(self.unscoped),
            "retries": self.retries,
            "failed": self.failed,
        }


def classifier_prompt(registry: Mapping[str, ToolEntry[Any]]) -> str:
    """The classifier's instructions: one line per tool, scopes described."""
    lines = [
        "Choose the tools needed to answer the newest user message of a map assistant. "
        "Pick every tool the answer may need (fetching, analysing, displaying, presenting "
        "figures), and no others. For each tool marked [scope], also give its scope in "
        "`scopes` under the tool's name.",
        "",
        "Tools:",
    ]
    for name, spec in registry.items():
        line = f"- {name}: {tool_line(spec)}"
        if spec.depends_on:
            line += f" (needs {', '.join(spec.depends_on)})"
        if spec.scope_schema is not None:
            line += f" [scope: {spec.scope_prompt}]"
        lines.append(line)
    return "\n".join(lines)


def tool_line(entry: ToolEntry[Any]) -> str:
    """A tool in one line: its ``classification_prompt``, else its description's first line."""
    return entry.classification_prompt or entry.description.split("\n", 1)[0][:160]


def _conversation(history: Sequence[tuple[str, str]], prompt: str) -> str:
    kept = list(history)[-_MESSAGES_KEPT:]
    lines = ["Recent messages (oldest first, cut short):"]
    for role, text in kept:
        short = " ".join(text.split())
        if len(short) > _MESSAGE_CHARS:
            short = short[: _MESSAGE_CHARS - 1] + "…"
        lines.append(f"{role}: {short}")
    lines.append(f"Newest user message: {' '.join(prompt.split())[:2_000]}")
    return "\n".join(lines)


def _output_type(registry: Mapping[str, ToolEntry[Any]]) -> type[BaseModel]:
    scopable = {name: spec.scope_schema for name, spec in registry.items() if spec.scope_schema}
    scope_fields: dict[str, Any] = {
        name: (dict[str, Any] | None, Field(default=None)) for name in scopable
    }
    scopes = create_model("ToolScopes", **scope_fields)
    return create_model(
        "ToolPick",
        tools=(list[str], Field(description="Names of the tools to activate.")),
        scopes=(scopes, Field(default_factory=scopes, description="Scope per scopable tool.")),
    )


async def classify(
    model: Model,
    registry: Mapping[str, ToolEntry[Any]],
    history: Sequence[tuple[str, str]],
    prompt: str,
    *,
    usage: RunUsage | None = None,
) -> Classification:
    """Pick this turn's tools and scopes; fail open on any error.

    Args:
        model: The model to ask.
        registry: The agent's tools.
        history: Earlier ``(role, text)`` messages, oldest first.
        prompt: The newest user message.
        usage: Counts the classifier's requests and tokens in place, also when it fails.
    """
    names = list(registry)
    instructions = classifier_prompt(registry)
    user = _conversation(history, prompt)
    output = _output_type(registry)
    attempts = {"retries": 0}
    unscoped: list[str] = []

    agent: Agent[None, Any] = Agent(
        model,
        instructions=instructions,
        output_type=output,
        retries={"output": SCOPE_RETRIES},
        name="geomint-classifier",
    )

    @agent.output_validator
    def _check(ctx: RunContext[None], pick: Any) -> Any:
        problems = []
        unknown = [t for t in pick.tools if t not in registry]
        if unknown:
            problems.append(f"unknown tools {unknown}; choose from {', '.join(names)}")
        missing: list[str] = []
        for tool in pick.tools:
            spec = registry.get(tool)
            if spec is None:
                continue
            scope_schema = spec.scope_schema
            if scope_schema is None:
                continue
            given = getattr(pick.scopes, tool, None)
            try:
                if given is None:
                    raise ValueError("no scope given")
                scope_schema.model_validate(given)
            except (ValueError, ValidationError) as exc:
                missing.append(tool)
                problems.append(
                    f"{tool} was picked without a valid scope ({_short(exc)}); add "
                    f"scopes.{tool} = {spec.scope_prompt}"
                )
        if problems and ctx.retry < SCOPE_RETRIES:
            attempts["retries"] = ctx.retry + 1
            raise ModelRetry("; ".join(problems))
        unscoped[:] = missing
        return pick

    try:
        result = await agent.run(user, usage=usage)
    except Exception as exc:
        _log.warning("the classifier failed; every tool is active this turn: %s", exc)
        return Classification(
            active=tuple(names),
            failed=f"{type(exc).__name__}: {exc}"[:500],
            retries=attempts["retries"],
            prompt_chars=len(instructions) + len(user),
        )
    pick = result.output
    chosen = [t for t in dict.fromkeys(pick.tools) if t in registry]
    active = _with_dependencies(chosen, registry)
    scopes: dict[str, BaseModel] = {}
    for tool in active:
        spec = registry[tool]
        scope_schema = spec.scope_schema
        given = getattr(pick.scopes, tool, None)
        if scope_schema is None or given is None or tool in unscoped:
            continue
        try:
            scopes[tool] = scope_schema.model_validate(given)
        except ValidationError:
            unscoped.append(tool)
    return Classification(
        active=tuple(active),
        scopes=scopes,
        unscoped=tuple(t for t in dict.fromkeys(unscoped) if t in active),
        retries=attempts["retries"],
        prompt_chars=len(instructions) + len(user),
    )


def _with_dependencies(chosen: list[str], registry: Mapping[str, ToolEntry[Any]]) -> list[str]:
    active: list[str] = []
    pending = list(chosen)
    while pending:
        tool = pending.pop(0)
        if tool in active or tool not in registry:
            continue
        active.append(tool)
        pending.extend(registry[tool].depends_on)
    return active


def _short(exc: Exception) -> str:
    if isinstance(exc, ValidationError):
        return "; ".join(f"{'.'.join(map(str, e['loc']))}: {e['msg']}" for e in exc.errors())[:300]
    return str(exc)[:300]


def describe_entry(entry: ToolEntry[Any]) -> str:
    """The JSON a tool costs in a prompt: its description and input schema."""
    return json.dumps(
        {"description": entry.description, "parameters": entry.input_schema.model_json_schema()},
        separators=(",", ":"),
    )
