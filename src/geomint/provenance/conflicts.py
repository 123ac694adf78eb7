"""Conflicts: two figures of one chat that disagree, and what code computes about them.

The model names the two values by id and says why they disagree; code reads both off the
chat's ledger and computes their ratio and difference, so the conflict panel shows minted
numbers beside the model's explanation instead of numbers the model retyped.

Figures in different units are recorded but flagged, not refused: two sources that count
one thing in different units is itself worth showing. Their ratio and difference are not
computed (a ratio of metres to kilometres would be a thousandfold "disagreement" that
is not one); the notes say why and what to mint to compare them.

Only ``a``, ``b`` and ``reason`` are stored. ``comparable``, ``ratio``, ``difference``
and ``notes`` are computed each time, written into the JSON for the display, and ignored
when JSON is read back, so a stored conflict cannot carry a number code did not compute.
"""

from __future__ import annotations

import math
from typing import Annotated, Any, Final

from pydantic import StringConstraints, computed_field, model_validator

from geomint.provenance.errors import ConflictRefusedError
from geomint.provenance.figures import cited_value
from geomint.provenance.ledger import Ledger
from geomint.provenance.records import Value, _Record

__all__ = ["Conflict", "record_conflict"]

_COMPUTED: Final = frozenset({"comparable", "ratio", "difference", "notes"})
_SAFE_INT: Final = 2**53 - 1
_MAX_REASON: Final = 2_000

Reason = Annotated[
    str, StringConstraints(strip_whitespace=True, min_length=1, max_length=_MAX_REASON)
]


class Conflict(_Record):
    """Two values of one chat that disagree, and why, in the model's words.

    Attributes:
        a: The first value, as the ledger holds it.
        b: The second value, as the ledger holds it.
        reason: Why they disagree: the model's explanation, shown beside the figures.

    Computed (in the JSON, never read from it): ``comparable``, ``ratio``,
    ``difference`` and ``notes``; see the properties.

    Example:
        >>> from datetime import UTC, datetime
        >>> at = datetime(2026, 1, 5, tzinfo=UTC)
        >>> a = Value(id="v1", label="population (census)", value=120, unit="people",
        ...           minted_at=at)
        >>> b = Value(id="v2", label="population (model)", value=100, unit="people",
        ...           minted_at=at)
        >>> conflict = Conflict(a=a, b=b, reason="the model counts night-time residents")
        >>> conflict.ratio, conflict.difference
        (1.2, 20)
    """

    a: Value
    b: Value
    reason: Reason

    @model_validator(mode="before")
    @classmethod
    def _drop_computed(cls, data: Any) -> Any:
        # What code computes is written out for the display and recomputed on reading.
        if isinstance(data, dict):
            return {k: v for k, v in data.items() if k not in _COMPUTED}
        return data

    @model_validator(mode="after")
    def _two_values(self) -> Conflict:
        if self.a.id == self.b.id:
            raise ValueError(f"a conflict names two different values; got {self.a.id} twice")
        return self

    @computed_field  # type: ignore[prop-decorator]
    @property
    def comparable(self) -> bool:
        """True when both values are numbers in the same unit (both unitless counts too)."""
        return self.a.is_number and self.b.is_number and self.a.unit == self.b.unit

    @computed_field  # type: ignore[prop-decorator]
    @property
    def ratio(self) -> float | None:
        """``a / b`` when comparable and ``b`` is not zero, else None (``notes`` says why)."""
        return _compare(self.a, self.b)[0]

    @computed_field  # type: ignore[prop-decorator]
    @property
    def difference(self) -> int | float | None:
        """``a - b`` when comparable, else None; exact for two integers."""
        return _compare(self.a, self.b)[1]

    @computed_field  # type: ignore[prop-decorator]
    @property
    def notes(self) -> tuple[str, ...]:
        """Why a ratio or difference is missing, and what else differs (the periods)."""
        return _compare(self.a, self.b)[2]


def record_conflict(ledger: Ledger, a_id: object, b_id: object, reason: object) -> Conflict:
    """Record that two values of the chat disagree, reading both off its ledger.

    Args:
        ledger: The chat's ledger.
        a_id: The first value's id, as the model gave it.
        b_id: The second value's id.
        reason: Why they disagree, in the model's words.

    Raises:
        FigureRefusedError: An id is a number the model typed, an entry id, or not text.
        UnknownValueError: An id names no value this chat can cite; the message lists
            the ones it can.
        ConflictRefusedError: The same id twice, or no reason.
    """
    a = cited_value(ledger, a_id)
    b = cited_value(ledger, b_id)
    if a.id == b.id:
        raise ConflictRefusedError(
            f"a conflict names two different values; got {a.id} twice. Name the other "
            "figure it disagrees with"
        )
    if not isinstance(reason, str) or not reason.strip():
        raise ConflictRefusedError(
            f"a conflict between {a.id} and {b.id} needs a reason: say in a sentence why "
            "the two figures disagree (different sources, periods, definitions, ...)"
        )
    if len(reason.strip()) > _MAX_REASON:
        raise ConflictRefusedError(
            f"the reason for the conflict between {a.id} and {b.id} is {len(reason.strip()):,} "
            f"characters; keep it under {_MAX_REASON:,}: the figures speak for themselves"
        )
    return Conflict(a=a, b=b, reason=reason)


def _compare(a: Value, b: Value) -> tuple[float | None, int | float | None, tuple[str, ...]]:
    notes: list[str] = []
    ratio: float | None = None
    difference: int | float | None = None
    x, y = _number(a, notes), _number(b, notes)
    if a.unit != b.unit:
        notes.append(
            f"{a.id} {_unit(a.unit)} and {b.id} {_unit(b.unit)}; no ratio or difference "
            "is computed across units: mint both in one unit to compare them"
        )
    elif x is not None and y is not None:
        difference = x - y
        if isinstance(difference, int) and abs(difference) > _SAFE_INT:
            difference = float(difference)
        if not math.isfinite(difference):
            difference = None
            notes.append("the difference is too large to represent")
        if y == 0:
            notes.append(f"{b.id} is zero, so there is no ratio")
        elif math.isfinite(quotient := x / y):
            ratio = quotient
        else:
            notes.append("the ratio is too large to represent")
    if a.period != b.period:
        notes.append(f"{a.id} {_period(a.period)} and {b.id} {_period(b.period)}")
    return ratio, difference, tuple(notes)


def _number(value: Value, notes: list[str]) -> int | float | None:
    figure = value.value
    if isinstance(figure, bool):
        notes.append(f"{value.id} is a yes/no value, not a number")
        return None
    if isinstance(figure, str):
        notes.append(f"{value.id} is a text ({figure!r}), not a number")
        return None
    return figure


def _unit(unit: str | None) -> str:
    return "has no unit" if unit is None else f"is in {unit}"


def _period(period: str | None) -> str:
    return "states no period" if period is None else f"describes {period}"
