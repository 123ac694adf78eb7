"""What a tool call can do to the chat and the world, in one small vocabulary.

Approvals guard these effects, not tool names: an application that requires approval
for ``code_entry`` is asked before any code-made layer is written, whichever tool (or
monitor re-run) would write it. Each :class:`~geomint.tools.ToolEntry` declares the
effects it may have; the code that has the effect asks for it where it happens
(:meth:`~geomint.tools.ToolContext.require`), so no tool reaches an effect another tool
was refused without the person being asked.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable, Mapping
from types import MappingProxyType
from typing import Final, Literal, TypeGuard, get_args

from geomint.tools.results import ToolError

__all__ = ["EFFECTS", "Effect", "EffectRefusedError", "effects_of", "is_effect"]

Effect = Literal[
    "runs_code", "code_entry", "fetched_entry", "display", "map_style", "network", "location"
]

#: Each effect and what it means, as a person approving it reads it.
EFFECTS: Final[Mapping[Effect, str]] = MappingProxyType(
    {
        "runs_code": "runs model-written Python in the sandbox",
        "code_entry": "adds a layer computed by model-written code to the map",
        "fetched_entry": "adds a layer of data from outside the chat (a provider, a file, a URL)",
        "display": "changes what the map shows (layers shown or hidden, the camera)",
        "map_style": "changes the map's style with map code (layers, colours, overlays)",
        "network": "asks a data provider or fetches a URL",
        "location": "reads where the person is from their device (always asked)",
    }
)
assert set(EFFECTS) == set(get_args(Effect))


def is_effect(name: str) -> TypeGuard[Effect]:
    """Whether ``name`` is an effect (rather than, say, a tool's name)."""
    return name in EFFECTS


class EffectRefusedError(ToolError):
    """A person refused (or no one could approve) an effect this call needed."""


def effects_of(
    names: Iterable[str], declared: Mapping[str, frozenset[Effect]]
) -> frozenset[Effect]:
    """The effects named: each an effect, or a tool name standing for its effects.

    Args:
        names: Effect names and tool names, as an application or ``--approve`` gives them.
        declared: Each tool's declared effects.

    Raises:
        ValueError: A name is neither an effect nor a tool (the message lists both).
    """
    out: set[Effect] = set()
    unknown: list[str] = []
    for name in names:
        if is_effect(name):
            out.add(name)
        elif name in declared:
            out |= declared[name]
        else:
            unknown.append(name)
    if unknown:
        known = [*EFFECTS, *declared]
        guesses = [difflib.get_close_matches(name, known, n=1) for name in unknown]
        near = [
            f"{name!r} (did you mean {g[0]!r}?)" if g else repr(name)
            for name, g in zip(unknown, guesses, strict=True)
        ]
        raise ValueError(
            f"require_approval names {', '.join(near)}, neither an effect nor a tool; "
            f"the effects are {', '.join(EFFECTS)}"
        )
    return frozenset(out)
