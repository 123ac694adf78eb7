"""What a right answer holds, and the judge that checks an answer against it.

A truth names what the answer must show: figures (each within the question's tolerance,
or within a band where two honest readings of the question differ, its label naming what
it is when several are asked for), the members of a list (each named in the answer on
its own, beside a figure for how many), a chart (its bars the true values,
the largest categories shown), or what the agent can do (each capability named, none it
lacks claimed). Figures are read only off minted values the answer cited or presented,
never off a number the model typed.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

__all__ = ["Figure", "Minted", "Truth", "fold", "judge"]


@dataclass(frozen=True, kw_only=True)
class Figure:
    """One figure the answer must show.

    Attributes:
        value: The true value (the smaller end, when ``upto`` is given).
        about: Words one of which the figure's label must hold (case and accents
            ignored); empty when any label will do (a question asking for one figure).
        upto: The larger end, when two honest readings of the question give two values
            (cafés reached by network distance, and inside the reachable area): any
            value from ``value`` to ``upto`` is right.
        slack: How far off, in the figure's unit, is right whatever the tolerance: 0.5
            when a person reads the figure in whole units (a café 1.09 m away is "1 m",
            though 2 % of it is 2 cm).
    """

    value: float
    about: tuple[str, ...] = ()
    upto: float | None = None
    slack: float = 0.0

    def __str__(self) -> str:
        shown = f"{self.value:g}" if self.upto is None else f"{self.value:g} to {self.upto:g}"
        return f"{self.about[0]}: {shown}" if self.about else shown


@dataclass(frozen=True, kw_only=True)
class Truth:
    """What a right answer holds; each part given must be met.

    Attributes:
        figures: Figures the answer must cite or present, each matched by a minted value
            of its own.
        names: The members of a list the answer must name (its count is a figure).
        chart: The true value per category: a chart the run drew must show at least
            ``min_bars`` of them, each bar its true value, leaving out no category larger
            than its smallest bar.
        min_bars: The fewest bars a chart may show.
        mentions: Per capability the agent has, words one of which the answer must use.
        never: Per capability it lacks, words the answer may use only in a sentence that
            says it cannot (no, not, cannot, without).
    """

    figures: tuple[Figure, ...] = ()
    names: tuple[str, ...] = ()
    chart: Mapping[str, float] | None = None
    min_bars: int = 5
    mentions: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    never: Mapping[str, tuple[str, ...]] = field(default_factory=dict)

    def summary(self) -> str:
        """The truth in a few words, for a table."""
        parts = [", ".join(str(f) for f in self.figures)] if self.figures else []
        if self.names:
            parts.append(f"{len(self.names)} named")
        if self.chart is not None:
            parts.append(f"bar chart of the largest of {len(self.chart)} categories")
        if self.mentions:
            parts.append(f"{len(self.mentions)} capabilities named")
        if self.never:
            parts.append(f"no {', '.join(self.never)}")
        return "; ".join(parts)


@dataclass(frozen=True)
class Minted:
    """A minted figure the answer showed: its label and value."""

    label: str
    value: float


def fold(text: str) -> str:
    """``text`` lower-cased with its accents dropped, for comparing words.

    Example:
        >>> fold("Cafés in the Centre zone")
        'cafes in the centre zone'
    """
    decomposed = unicodedata.normalize("NFKD", text.casefold())
    return "".join(c for c in decomposed if not unicodedata.combining(c))


def judge(
    truth: Truth,
    tolerance: float,
    figures: Sequence[Minted],
    text: str,
    charts: Iterable[Mapping[str, Any]] = (),
) -> tuple[list[str], list[float]]:
    """Check an answer against ``truth``.

    Args:
        truth: What a right answer holds.
        tolerance: How far a figure may be from its true value, as a fraction (0: exact).
        figures: The minted figures the answer cited or presented.
        text: The answer as a person reads it.
        charts: The chart configs the run drew.

    Returns:
        What is missing or wrong (empty when the answer is right), and the values of the
        figures that matched.

    Example:
        >>> truth = Truth(figures=(Figure(value=40, about=("south",)),), names=("Esplanadi",))
        >>> judge(truth, 0.0, [Minted("cafés in the South zone", 40)], "By Esplanadi.")
        ([], [40])
        >>> judge(truth, 0.0, [Minted("cafés in the North zone", 40)], "None.")[0]
        ['no figure about south of 40', 'Esplanadi is not named']
    """
    wrong: list[str] = []
    matched: list[float] = []
    unused = list(figures)
    for wanted in truth.figures:
        found = next((m for m in unused if _meets(m, wanted, tolerance)), None)
        if found is None:
            wrong.append(f"no figure {_about(wanted)}of {_shown(wanted)}")
            continue
        unused.remove(found)
        matched.append(found.value)
    said = fold(text)
    wrong += [f"{name} is not named" for name in _unnamed(truth.names, said)]
    if truth.chart is not None and not any(
        _chart_right(c, truth.chart, truth.min_bars, tolerance) for c in charts
    ):
        wrong.append("no chart shows the largest categories with their true values")
    for capability, words in truth.mentions.items():
        if not any(fold(w) in said for w in words):
            wrong.append(f"{capability} is not mentioned")
    for capability, words in truth.never.items():
        if any(_claimed(fold(w), said) for w in words):
            wrong.append(f"{capability} is claimed, and the agent has none")
    return wrong, matched


def _meets(minted: Minted, wanted: Figure, tolerance: float) -> bool:
    low = wanted.value
    high = wanted.value if wanted.upto is None else wanted.upto
    give = wanted.slack + 1e-9
    close = low - tolerance * abs(low) - give <= minted.value <= high + tolerance * abs(high) + give
    label = fold(minted.label)
    return close and (not wanted.about or any(fold(w) in label for w in wanted.about))


def _shown(wanted: Figure) -> str:
    return str(Figure(value=wanted.value, upto=wanted.upto))


def _unnamed(names: Sequence[str], said: str) -> list[str]:
    """The members ``said`` does not name. A member whose name is part of another's
    ("Yliopiston apteekki", "Yliopiston Apteekki Kaivopiha") is named only where it stands
    on its own, not as part of the longer name."""
    folded = {name: fold(name) for name in names}
    missing = []
    for name, mine in folded.items():
        rest = said
        for longer in sorted(set(folded.values()), key=len, reverse=True):
            if mine in longer and mine != longer:
                rest = rest.replace(longer, " ")
        if mine not in rest:
            missing.append(name)
    return missing


def _about(wanted: Figure) -> str:
    return f"about {' or '.join(wanted.about)} " if wanted.about else ""


def _chart_right(
    config: Mapping[str, Any], truth: Mapping[str, float], min_bars: int, tolerance: float
) -> bool:
    data = config.get("data") or {}
    labels = list(data.get("labels") or [])
    datasets = data.get("datasets") or [{}]
    values = list(datasets[0].get("data") or [])
    if len(labels) < min_bars or len(labels) != len(values):
        return False
    for label, value in zip(labels, values, strict=True):
        true = truth.get(str(label))
        if true is None or not isinstance(value, int | float) or isinstance(value, bool):
            return False
        if abs(value - true) > tolerance * abs(true) + 1e-9:
            return False
    smallest = min(values)
    return all(label in labels for label, n in truth.items() if n > smallest)


_NEGATION = re.compile(r"\b(no|not|cannot|can't|without|none)\b")


def _claimed(word: str, said: str) -> bool:
    """Whether a sentence of ``said`` uses ``word`` without saying it cannot."""
    sentences = re.split(r"(?<=[.!?;])\s+", said)
    return any(word in s and not _NEGATION.search(s) for s in sentences)
