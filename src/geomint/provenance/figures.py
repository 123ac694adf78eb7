"""The rule for showing a figure: value ids minted by code, never a number the model typed.

``present_figure`` (and anything else that puts a number in front of a person) takes
value ids and reads each value off the chat's ledger, with its label, unit and sources.
A number the model typed, in any form (``42``, ``"12,400 people"``, ``{"value": 3}``),
is refused with the reason and the way to mint it instead: the model can always reach
the honest path, so it is never tempted to dress up the other one.
"""

from __future__ import annotations

import numbers
from collections.abc import Iterable, Mapping
from typing import Final

from geomint.provenance._ids import (
    ENTRY_ID,
    LAYER_ID,
    NEAR_LAYER_ID,
    NEAR_VALUE_ID,
    VALUE_ID,
)
from geomint.provenance.errors import FigureRefusedError, UnknownValueError
from geomint.provenance.ledger import Ledger
from geomint.provenance.records import Value

__all__ = ["check_figure_ids", "cited_value", "refuse_typed_number"]

_SHOWN_CHARS: Final = 60
_HOW: Final = (
    "pass value ids such as v3 minted by code; a typed number cannot be shown as a figure. "
    "To show it, compute it in an analysis and mint it with mint.value(x, label, unit=...)"
)


def refuse_typed_number(argument: object) -> None:
    """Refuse a number the model typed where a value id belongs; accept anything else.

    A bare number, a text carrying digits that is no kind of id (``"3.2 km"``), and a
    mapping or list holding a number are typed numbers. Ids (``v3``, ``l2``,
    ``places-1``, even a near miss such as ``V3``) are left for the ledger to judge.

    Raises:
        FigureRefusedError: ``argument`` is a typed number.
    """
    if _is_typed_number(argument):
        raise FigureRefusedError([f"{_show(argument)} is a number typed by hand; {_HOW}"])


def cited_value(ledger: Ledger, argument: object) -> Value:
    """Return the value a model-supplied argument cites.

    Args:
        ledger: The chat's ledger.
        argument: What the model passed where a value id belongs.

    Raises:
        FigureRefusedError: A typed number, an entry id, or something that is not text.
        UnknownValueError: Text that names no value this chat can cite; the message
            says why (never minted, withdrawn, a layer, a near miss) and lists the ids.
    """
    refuse_typed_number(argument)
    if not isinstance(argument, str):
        raise FigureRefusedError(
            [f"{_show(argument)} ({type(argument).__name__}) is not a value id; {_HOW}"]
        )
    if ENTRY_ID.fullmatch(argument.strip()):
        raise FigureRefusedError(
            [
                f"{argument.strip()} is an entry id, not a value id: compute the figure from "
                "the entry in an analysis, mint it with mint.value(x, label, unit=...), "
                "and pass the value id it gets"
            ]
        )
    return ledger.value(argument)


def check_figure_ids(ledger: Ledger, ids: object) -> tuple[Value, ...]:
    """Return the values ``ids`` cite, in order, refusing anything that is not a minted id.

    Every argument is checked before answering, so one refusal names every problem. A
    repeated id is shown once.

    Args:
        ledger: The chat's ledger.
        ids: What the model passed: a list of value ids, or a single argument.

    Raises:
        FigureRefusedError: No ids, or at least one argument is not a value this chat can
            cite; ``problems`` has one line per refused argument.

    Example:
        >>> from datetime import UTC, datetime
        >>> value, ledger = Ledger().mint_value(
        ...     label="stops", value=12, minted_at=datetime(2026, 1, 5, tzinfo=UTC))
        >>> [v.label for v in check_figure_ids(ledger, ["v1"])]
        ['stops']
        >>> check_figure_ids(ledger, [12])
        Traceback (most recent call last):
        ...
        geomint.provenance.errors.FigureRefusedError: 12 is a number typed by hand; pass ...
    """
    items: list[object]
    if isinstance(ids, Iterable) and not isinstance(ids, str | bytes | Mapping):
        items = list(ids)
    else:
        items = [ids]
    if not items:
        raise FigureRefusedError([f"no figure was named; {_HOW}"])
    problems: list[str] = []
    found: dict[str, Value] = {}
    for item in items:
        try:
            value = cited_value(ledger, item)
        except (FigureRefusedError, UnknownValueError) as exc:
            problems.append(str(exc))
        else:
            found.setdefault(value.id, value)
    if problems:
        raise FigureRefusedError(problems)
    return tuple(found.values())


def _is_typed_number(argument: object) -> bool:
    if isinstance(argument, bool):
        return False
    if isinstance(argument, numbers.Number):
        return True
    if isinstance(argument, str):
        text = argument.strip()
        ids = (VALUE_ID, LAYER_ID, ENTRY_ID, NEAR_VALUE_ID, NEAR_LAYER_ID)
        if any(pattern.fullmatch(text) for pattern in ids):
            return False
        return any(char.isdigit() for char in text)
    # One level deep is where a hand-written figure puts its number ({"value": 3}); a
    # container nested deeper is not an id either way, and is refused as such.
    if isinstance(argument, Mapping):
        return any(_is_typed_number(item) for item in argument.values() if _flat(item))
    if isinstance(argument, list | tuple):
        return any(_is_typed_number(item) for item in argument if _flat(item))
    return False


def _flat(item: object) -> bool:
    return not isinstance(item, Mapping | list | tuple)


def _show(argument: object) -> str:
    text = repr(argument) if not isinstance(argument, int | float) else str(argument)
    return text if len(text) <= _SHOWN_CHARS else f"{text[: _SHOWN_CHARS - 1]}…"
