"""``help``: what the active tools do, with examples and example prompts, by tag."""

from __future__ import annotations

from dataclasses import fields
from typing import Any, Final

from pydantic import BaseModel, ConfigDict, Field

from geomint.errors import UsageError
from geomint.providers.base import Providers
from geomint.tools.context import ToolContext
from geomint.tools.registry import ToolEntry
from geomint.tools.results import ToolError

__all__ = ["HELP"]


class HelpInput(BaseModel):
    """Arguments of ``help``."""

    model_config = ConfigDict(extra="forbid")

    tag: str | None = Field(default=None, description="Only tools with this tag, e.g. 'data'.")


async def _help(arguments: HelpInput, ctx: ToolContext) -> dict[str, Any]:
    if ctx.registry_help is None:
        raise ToolError("help is not available in this context")
    try:
        rows = ctx.registry_help(arguments.tag)
    except UsageError as exc:
        raise ToolError(str(exc)) from None
    if arguments.tag is None:
        # Every tool in a line, so the whole registry fits the model's result budget; the
        # tags are listed once (help(tag=...) gives a tag's tools with their examples).
        out: dict[str, Any] = {
            "tools": [{"name": r["name"], "does": _first_sentence(r["description"])} for r in rows],
            "tags": sorted({t for r in rows for t in r["tags"]}),
            "more": "call help(tag=...) for examples and example prompts of one kind of tool",
        }
        coverage = _coverage(ctx)
        if coverage:
            # The place and route tools say where they can answer in their descriptions,
            # but a turn that asks what the agent can do is offered only help: without
            # this, a model would promise places and routes anywhere.
            out["coverage"] = coverage
        return out
    return {
        "tools": [
            {
                "name": r["name"],
                # The first sentence is enough to choose; the full text is in the tool itself.
                "does": _words(r["description"].split("\n", 1)[0], 300),
                "tags": r["tags"],
                "examples": r["examples"][:2],
                "example_prompts": r["example_prompts"][:3],
            }
            for r in rows
        ]
    }


def _coverage(ctx: ToolContext) -> dict[str, str]:
    """What each configured provider can answer, by the provider's name."""
    said: dict[str, str] = {}
    for capability in fields(Providers):
        provider = getattr(ctx.providers, capability.name, None)
        coverage = getattr(provider, "coverage", None)
        if isinstance(coverage, str) and coverage:
            said.setdefault(str(getattr(provider, "name", capability.name)), coverage)
    return said


def _first_sentence(text: str) -> str:
    return _words(text.split("\n", 1)[0].split(". ", 1)[0].rstrip("."), 80)


def _words(text: str, limit: int) -> str:
    """``text`` cut to at most ``limit`` characters at a word's end, marked "…" when cut.

    Example:
        >>> _words("Find reachable areas from a point", 20)
        'Find reachable…'
    """
    if len(text) <= limit:
        return text
    cut = text[: limit - 1]
    if " " in cut and not text[limit - 1].isspace():
        cut = cut.rsplit(" ", 1)[0]
    return cut.rstrip(" ,;:") + "…"


HELP: Final = ToolEntry(
    changes_chat=False,
    description=(
        "List what this agent can do: each tool with examples and example prompts, "
        "optionally only those with a tag (data, map, recall, figures, byod, monitor), "
        "and where its providers have data."
    ),
    input_schema=HelpInput,
    execute=_help,
    classification_prompt="The person asks what the assistant can do, or for examples.",
    tags=("help",),
    example_prompts=("What can you do?", "Show me data examples"),
    # The whole registry and the providers' coverage, read in one piece.
    result_chars=6_000,
)
