"""ToolEntry, and merging an application's tools into the defaults.

A registry is data: a flat mapping of tool name to a :class:`ToolEntry`. A scopable
entry is its own terse, unscoped form and has a ``prepare`` hook that makes the entry for
the scope the classifier chose this turn. An application removes a
default (``{"set_language": False}``), replaces one (same name), adds its own, or starts
from none (``include_default_tools=False``) and re-adds a few; :func:`resolve_tools` does
the merge and refuses what it cannot do, naming the near miss rather than guessing it.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Generic, TypeVar

from pydantic import BaseModel

from geomint.errors import UsageError
from geomint.tools.effects import EFFECTS, Effect

if TYPE_CHECKING:
    from geomint.tools.context import ToolContext

__all__ = ["InputT", "ToolEntry", "help_entries", "resolve_tools"]

_NAME = re.compile(r"^[a-z][a-z0-9_]{0,63}$")

#: A tool's input model: ``execute`` receives an instance of its ``input_schema``.
InputT = TypeVar("InputT", bound=BaseModel)


@dataclass(frozen=True, kw_only=True)
class ToolEntry(Generic[InputT]):
    """One tool the model may call, and what the classifier and ``help`` know of it.

    Generic in its input model, so ``execute`` is typed: ``ToolEntry(input_schema=Route,
    execute=route)`` checks that ``route`` takes a ``Route``.

    Attributes:
        description: The full description the model reads.
        input_schema: The pydantic model its arguments are validated against.
        execute: ``async (input, ctx) -> result``; it returns a result or a structured
            error and never raises into the tool loop.
        output_schema: The shape of its result, when it has a fixed one.
        classification_prompt: One line: when the classifier should activate it.
        tags: Categories for ``help`` (``"route"``, ``"data"``).
        examples: Usage examples ``help`` shows.
        example_prompts: Things a person might say that need it.
        related_tools: Tools often used with it.
        depends_on: Tools that must run before it in a turn.
        scope_schema: For a scopable tool, the shape of its scope (e.g. ``{"kinds": [...]}``).
        scope_prompt: For a scopable tool, how the classifier should fill the scope.
        prepare: For a scopable tool, ``(scope) -> ToolEntry``: the tool as this turn's
            scope describes it (a description and input schema naming only what the scope
            covers). The entry itself is the tool unscoped, terse.
        requires_approval: A person must approve each call.
        effects: What a call may do (:data:`geomint.tools.effects.EFFECTS`); an
            application requiring approval for an effect is asked where it happens.
        changes_chat: Whether a call may change the chat (fetch, write, mint). Calls that
            do run one at a time; calls that only read (recall, help) run beside them.
        needs: The provider capabilities it answers from (``geocoder``, ``places``,
            ``boundaries``, ``router``, ``ranges``, ``traffic``, ``traffic_analytics``):
            an agent whose providers do not serve them all does not offer the tool.
        result_chars: The size budget of its result when it needs more than the agent's
            (``find_sources``: what makes the first fetch right is read in full); None
            keeps the agent's.
    """

    description: str
    input_schema: type[InputT]
    execute: Callable[[InputT, ToolContext], Awaitable[Any]]
    output_schema: type[BaseModel] | None = None
    classification_prompt: str = ""
    tags: tuple[str, ...] = ()
    examples: tuple[str, ...] = ()
    example_prompts: tuple[str, ...] = ()
    related_tools: tuple[str, ...] = ()
    depends_on: tuple[str, ...] = ()
    scope_schema: type[BaseModel] | None = None
    scope_prompt: str = ""
    prepare: Callable[[BaseModel], ToolEntry[Any]] | None = None
    requires_approval: bool = False
    effects: frozenset[Effect] = frozenset()
    changes_chat: bool = True
    needs: frozenset[str] = frozenset()
    result_chars: int | None = None

    def __post_init__(self) -> None:
        unknown = sorted(set(self.effects) - set(EFFECTS))
        if unknown:
            raise UsageError(
                f"effects {', '.join(unknown)} are not effects; the effects are "
                f"{', '.join(EFFECTS)}"
            )
        if not self.description.strip():
            raise UsageError("a ToolEntry needs a description the model can read")
        if not (isinstance(self.input_schema, type) and issubclass(self.input_schema, BaseModel)):
            raise UsageError(
                f"input_schema must be a pydantic model class, got {self.input_schema!r}"
            )
        if (self.scope_schema is None) != (not self.scope_prompt):
            raise UsageError(
                "a scopable tool needs both scope_schema and scope_prompt; give both or neither"
            )
        if self.prepare is not None and self.scope_schema is None:
            raise UsageError(
                "prepare receives the turn's scope: give scope_schema and scope_prompt"
            )

    @property
    def scopable(self) -> bool:
        """True when the classifier emits a scope for this tool."""
        return self.scope_schema is not None

    def for_scope(self, scope: BaseModel | None) -> ToolEntry[Any]:
        """The tool as ``scope`` describes it: ``prepare(scope)``, or itself when there is
        no scope or nothing to prepare."""
        if scope is None or self.prepare is None:
            return self
        return self.prepare(scope)


def resolve_tools(
    defaults: Mapping[str, ToolEntry[Any]],
    tools: Mapping[str, ToolEntry[Any] | bool] | None = None,
    *,
    include_default_tools: bool = True,
) -> dict[str, ToolEntry[Any]]:
    """Merge an application's tools into the defaults.

    Args:
        defaults: The default registry (``DEFAULT_TOOLS``).
        tools: Per name: ``False`` removes a default, ``True`` keeps (or, with
            ``include_default_tools=False``, re-adds) one, an entry adds or
            replaces.
        include_default_tools: Start from the defaults (True) or from nothing.

    Returns:
        The registry for the agent, defaults first in their order, then additions.

    Raises:
        UsageError: A name that is not a valid tool name, ``False``/``True`` for a name
            that is not a default (the near miss is named), or a value of another type.
    """
    resolved: dict[str, ToolEntry[Any]] = dict(defaults) if include_default_tools else {}
    for name, spec in (tools or {}).items():
        if not _NAME.match(name):
            raise UsageError(
                f"tool name {name!r} must be lower_snake_case letters and digits, "
                "starting with a letter"
            )
        if isinstance(spec, bool):
            if name not in defaults:
                raise UsageError(
                    f"{'remove' if not spec else 'keep'} {name!r}: there is no default tool "
                    f"of that name{_near(name, defaults)}"
                )
            if spec:
                resolved[name] = defaults[name]
            else:
                resolved.pop(name, None)
        elif isinstance(spec, ToolEntry):
            resolved[name] = spec
        else:
            raise UsageError(
                f"tools[{name!r}] must be a ToolEntry, True or False; got {type(spec).__name__}"
            )
    for name, entry in resolved.items():
        for needed in entry.depends_on:
            if needed not in resolved:
                raise UsageError(
                    f"tool {name!r} depends on {needed!r}, which is not in the registry; "
                    f"add it back or remove {name!r}"
                )
    return resolved


def _near(name: str, known: Mapping[str, object]) -> str:
    close = difflib.get_close_matches(name, list(known), n=1)
    return f"; did you mean {close[0]!r}?" if close else ""


def help_entries(
    registry: Mapping[str, ToolEntry[Any]], tag: str | None = None
) -> list[dict[str, Any]]:
    """What the ``help`` tool shows: each tool's description, examples and prompts.

    Args:
        registry: The active registry.
        tag: Only tools with this tag; None for all.

    Raises:
        UsageError: ``tag`` is on no tool (the tags that exist are listed).
    """
    rows = []
    tags: set[str] = set()
    for name, entry in registry.items():
        tags.update(entry.tags)
        if tag is not None and tag not in entry.tags:
            continue
        rows.append(
            {
                "name": name,
                "description": entry.description,
                "tags": list(entry.tags),
                "examples": list(entry.examples),
                "example_prompts": list(entry.example_prompts),
                "related_tools": list(entry.related_tools),
            }
        )
    if tag is not None and not rows:
        raise UsageError(
            f"no tool is tagged {tag!r}; the tags are {', '.join(sorted(tags)) or 'none'}"
        )
    return rows
