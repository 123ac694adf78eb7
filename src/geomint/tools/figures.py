"""Figures: ``present_figure`` (value ids only) and ``record_observation`` (conflicts).

Both read the chat's ledger; neither accepts a number the model typed. A refusal says
why and how to mint the figure instead, so the honest path is always the reachable one.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any, Final, Literal

from pydantic import BaseModel, ConfigDict, Field

from geomint.provenance import Value, check_figure_ids, record_conflict
from geomint.state import FigurePresented, ObservationRecorded
from geomint.tools.context import ToolContext
from geomint.tools.registry import ToolEntry
from geomint.tools.results import ToolError, ToolResult

__all__ = ["PRESENT_FIGURE", "RECORD_OBSERVATION", "typed_numbers"]

# A number in free text: digits with their separators and decimals ("1,234,567", "3.5").
_NUMBER = re.compile(r"\d(?:[\d,.\u202f\u00a0']*\d)?")
_YEAR = re.compile(r"(1[89]|20)\d\d")


def typed_numbers(text: str, cited: Iterable[Value]) -> list[str]:
    """Numbers in model-written text (a title, a reason) that the cited values do not carry.

    A title or a reason sits beside minted figures on a card, so a number in it would be
    read as one. Years are allowed (a period, an edition), and so is any number the cited
    values' own labels, units or periods contain; every other number is a typed one.
    """
    allowed = " ".join(f"{v.label} {v.unit or ''} {v.period or ''}" for v in cited)
    found = []
    for match in _NUMBER.finditer(text):
        number = match.group().strip(",.'")
        if _YEAR.fullmatch(number) or number in allowed:
            continue
        found.append(number)
    return found


def _refuse_typed(text: str | None, cited: Iterable[Value], what: str) -> None:
    if not text:
        return
    numbers = typed_numbers(text, cited)
    if numbers:
        raise ToolError(
            f"the {what} carries numbers ({', '.join(numbers[:5])}) that no presented figure "
            "has; a number a person reads must be a minted value",
            hint="compute it in analyse_data, mint it with mint.value(x, label, unit=...), and "
            f"present its id; keep the {what} to words",
        )


class PresentInput(BaseModel):
    """Arguments of ``present_figure``."""

    model_config = ConfigDict(extra="forbid")

    # Any JSON is accepted here on purpose: a typed number must reach the ledger's check
    # and be refused with the reason, not bounce off the schema with a type error.
    value_ids: list[Any] = Field(
        min_length=1, max_length=50, description="Value ids minted by code, e.g. ['v1', 'v3']."
    )
    title: str | None = Field(default=None, max_length=200)


async def _present(arguments: PresentInput, ctx: ToolContext) -> ToolResult:
    # A refused id raises provenance's ModelFacingError, which the model reads as it is.
    values = check_figure_ids(ctx.workspace.ledger, arguments.value_ids)
    _refuse_typed(arguments.title, values, "title")
    ids = tuple(v.id for v in values)
    ctx.append([FigurePresented(value_ids=ids, title=arguments.title)])
    return ToolResult(
        model={
            "presented": list(ids),
            "figures": [
                {
                    "id": v.id,
                    "label": v.label,
                    "value": v.value,
                    "unit": v.unit,
                    "licences": list(v.licences),
                }
                for v in values
            ],
        },
    )


PRESENT_FIGURE: Final = ToolEntry(
    description=(
        "Show figures to the person as cards with their unit, label and sources. Takes "
        "value ids minted by code (v1, v2, ...) only; a number typed here is refused. To show "
        "a number, compute it in analyse_data and mint it with mint.value(x, label, unit=...)."
    ),
    input_schema=PresentInput,
    execute=_present,
    classification_prompt="Show computed numbers to the person as figures with sources.",
    tags=("figures",),
    examples=("present_figure(value_ids=['v2'], title='Schools beyond 800 m')",),
    example_prompts=("How many children is that?",),
    related_tools=("analyse_data", "record_observation"),
    depends_on=(),
)


class ObservationInput(BaseModel):
    """Arguments of ``record_observation``."""

    model_config = ConfigDict(extra="forbid")

    kind: Literal["conflict"] = "conflict"
    value_ids: list[Any] = Field(min_length=2, max_length=2, description="Two value ids.")
    why: str = Field(min_length=1, max_length=2_000, description="Why they disagree.")


async def _observe(arguments: ObservationInput, ctx: ToolContext) -> dict[str, Any]:
    a, b = arguments.value_ids
    conflict = record_conflict(ctx.workspace.ledger, a, b, arguments.why)
    _refuse_typed(arguments.why, (conflict.a, conflict.b), "reason")
    ctx.append([ObservationRecorded(conflict=conflict)])
    return {
        "kind": "conflict",
        "a": conflict.a.id,
        "b": conflict.b.id,
        "ratio": conflict.ratio,
        "difference": conflict.difference,
        "notes": list(conflict.notes),
    }


RECORD_OBSERVATION: Final = ToolEntry(
    description=(
        "Record that two minted figures disagree (kind='conflict'), naming both value ids "
        "and why in words. Code reads both off the ledger and computes their ratio."
    ),
    input_schema=ObservationInput,
    execute=_observe,
    classification_prompt="Two computed figures disagree and the person should see both.",
    tags=("figures",),
    related_tools=("present_figure",),
)
