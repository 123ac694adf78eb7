"""What the model is shown at each step of a turn, and ``use_tools``, which shows it more.

The classifier picks a turn's tools; the others stay within reach. Every tool of the agent
is built for the turn (scoped where the classifier gave a scope, terse otherwise) and can
run, through the same loop and approvals as any other; what changes from step to step is
only which of them the model is shown: the picked tools, those it has activated, and
``use_tools``, whose description names each tool left out in one line. A tool is activated
for the rest of the turn by naming it to ``use_tools`` or by calling it: a call to a tool
the model was not shown at that step does not run, and its result says the tool is active
now and to call it again.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from typing import Annotated, Any, Final

from pydantic import BaseModel, ConfigDict, Field
from pydantic_ai import RunContext
from pydantic_ai.capabilities import AbstractCapability
from pydantic_ai.models import ModelRequestContext

from geomint.agent.classifier import tool_line
from geomint.tools import ToolContext, ToolEntry, ToolError

__all__ = ["USE_TOOLS", "ShowSurface", "ToolSurface", "UseTools"]

#: The name of the tool that activates the others; no tool of a registry may take it.
USE_TOOLS: Final = "use_tools"

_INTRO: Final = (
    "Activate tools for the rest of this turn; they join your tool list at your next step. "
    "Not active now:"
)


class UseTools(BaseModel):
    """``use_tools``' arguments."""

    model_config = ConfigDict(extra="forbid")

    names: list[Annotated[str, Field(max_length=100)]] = Field(
        min_length=1, max_length=50, description="Tool names from the list."
    )


@dataclass
class ToolSurface:
    """The tools of one turn, and which of them the model is shown at the current step.

    Attributes:
        entries: Every tool the agent offers, as built for this turn.
        picked: The tools the classifier picked (all of them without a classifier).
        not_offered: Tools the agent does not offer, with the capabilities no provider
            serves, so asking for one says why it cannot be had.
        activated: Tools the model activated this turn, in order.
    """

    entries: Mapping[str, ToolEntry[Any]]
    picked: tuple[str, ...]
    not_offered: Mapping[str, list[str]] = field(default_factory=dict)
    activated: list[str] = field(default_factory=list)
    _shown: frozenset[str] = field(default=frozenset(), init=False, repr=False)

    def __post_init__(self) -> None:
        self._shown = self.visible

    @property
    def left_out(self) -> tuple[str, ...]:
        """Tools the classifier did not pick, in the registry's order."""
        return tuple(name for name in self.entries if name not in self.picked)

    @property
    def still_left_out(self) -> tuple[str, ...]:
        """Tools left out and not activated yet: what ``use_tools`` lists now."""
        return tuple(name for name in self.left_out if name not in self.activated)

    @property
    def visible(self) -> frozenset[str]:
        """What the model is shown at its next step (``use_tools`` while any tool is still
        left out)."""
        extra = {USE_TOOLS} if self.still_left_out else set()
        return frozenset({*self.picked, *self.activated, *extra})

    def step(self) -> frozenset[str]:
        """Start a model step: what is visible now is what the step's calls were shown."""
        self._shown = self.visible
        return self._shown

    def was_shown(self, name: str) -> bool:
        """Whether the model was shown ``name`` at the step that called it."""
        return name in self._shown

    def activate(self, names: Iterable[str]) -> None:
        """Show ``names`` (tools of this turn) from the next step on."""
        for name in names:
            if name in self.entries and name not in self.visible:
                self.activated.append(name)

    def not_shown(self, name: str) -> dict[str, Any]:
        """Activate ``name``, called at a step that did not show it, and return what the
        model reads: the call did not run; call it again."""
        self.activate([name])
        return {
            "error": f"{name} was not active this turn, so this call did not run",
            "hint": f"it is active now: call {name} again, with the parameters in its schema",
            "not_run": True,
        }

    def shown_entries(self) -> dict[str, ToolEntry[Any]]:
        """The entries the model is shown now, ``use_tools`` last when any tool is left out."""
        shown = {name: entry for name, entry in self.entries.items() if name in self.visible}
        if self.left_out:
            shown[USE_TOOLS] = self.use_tools()
        return shown

    def all_entries(self) -> dict[str, ToolEntry[Any]]:
        """Every entry of the turn, shown or not, ``use_tools`` last when any is left out."""
        every = dict(self.entries)
        if self.left_out:
            every[USE_TOOLS] = self.use_tools()
        return every

    def use_tools_description(self) -> str:
        """``use_tools``' description now: the tools still left out, one line each."""
        lines = [f"- {name}: {tool_line(self.entries[name])}" for name in self.still_left_out]
        return "\n".join([_INTRO, *lines])

    def use_tools(self) -> ToolEntry[UseTools]:
        """``use_tools``: its description lists the tools left out, one line each (and is
        rewritten at each step as tools are activated: see :class:`ShowSurface`)."""

        async def execute(args: UseTools, _: ToolContext) -> dict[str, Any]:
            return self._use(args.names)

        return ToolEntry(
            description=self.use_tools_description(),
            input_schema=UseTools,
            execute=execute,
            classification_prompt="Activate tools not picked for this turn.",
            changes_chat=False,
        )

    def _use(self, names: list[str]) -> dict[str, Any]:
        wanted = list(dict.fromkeys(names))
        unknown = [name for name in wanted if name not in self.entries]
        if unknown:
            raise ToolError(
                "; ".join(self._why_not(name) for name in unknown),
                hint="name tools from the list in use_tools' description; nothing was activated",
            )
        self.activate(wanted)
        return {
            "active": wanted,
            "hint": "call them now: they are in your tool list, with their parameters",
        }

    def _why_not(self, name: str) -> str:
        missing = self.not_offered.get(name)
        if missing:
            return f"{name} is not offered here: no provider answers {', '.join(missing)}"
        close = difflib.get_close_matches(name, list(self.entries), n=1)
        near = f"; did you mean {close[0]!r}?" if close else ""
        return f"there is no tool named {name!r}{near}"


@dataclass
class ShowSurface(AbstractCapability[Any]):
    """Show the model, at each step, only what its turn's :class:`ToolSurface` makes
    visible. The other tools stay callable, so a call to one reaches the tool loop, which
    answers it with :meth:`ToolSurface.not_shown`."""

    surface: ToolSurface

    async def before_model_request(
        self, ctx: RunContext[Any], request_context: ModelRequestContext
    ) -> ModelRequestContext:
        shown = self.surface.step()
        parameters = request_context.model_request_parameters
        tools = [
            replace(tool, description=self.surface.use_tools_description())
            if tool.name == USE_TOOLS
            else tool
            for tool in parameters.function_tools
            if tool.name in shown
        ]
        return replace(
            request_context, model_request_parameters=replace(parameters, function_tools=tools)
        )
