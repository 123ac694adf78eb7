"""Figures cited in an answer's prose, and the numbers typed in it, checked against the ledger.

The model writes a minted figure into its answer by id in braces, ``{v3}``; every surface
shows the reference as the figure's value and unit, linked to its card. Any other number
the model typed is matched against the chat's minted values as they would be displayed
(rounding, thousands separators, the units a card shows, metres as kilometres and square
metres as hectares): a match is linked like a reference, and a number that matches
nothing is marked as not minted. Not marked: dates and times, ids and ordinals, numbers
inside names, addresses and codes, numbers the person or a tool's arguments gave
(``quoted``), and numbers a tool's result stated (``stated``: a digest's feature count is
a fact a tool gave, not an invention).

:func:`check_text` is pure: the same text and ledger give the same segments, so an answer
reads back exactly as it was shown.

Example:
    >>> from datetime import UTC, datetime
    >>> v1 = Value(id="v1", label="places counted", value=1326, unit="places",
    ...            minted_by="a1", code_hash="0" * 64, minted_at=datetime.now(UTC))
    >>> checked = check_text("There are {v1}; about 1,300 in all, and 7 more.", {"v1": v1})
    >>> checked.rendered
    'There are 1,326 places; about 1,300 in all, and 7 more.'
    >>> [(s.state, s.ref) for s in checked.segments if s.state != "plain"]
    [('cited', 'v1'), ('matched', 'v1'), ('unminted', None)]
    >>> checked.cited, checked.matched, checked.unminted
    (1, 1, 1)
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping
from typing import Final, Literal

from pydantic import BaseModel, ConfigDict

from geomint.provenance.records import Value

__all__ = [
    "CheckedText",
    "Segment",
    "SegmentState",
    "check_text",
    "format_figure",
    "format_number",
    "format_shown",
    "numbers_in",
]

#: How a stretch of an answer reads: ``plain`` text; a reference that was ``cited`` (or
#: names no value: ``unknown``, ``withdrawn``); a typed number that ``matched`` a minted
#: value, was ``quoted`` from the question or a call's arguments, ``stated`` by a tool's
#: result, or is ``unminted``.
SegmentState = Literal[
    "plain", "cited", "unknown", "withdrawn", "matched", "quoted", "stated", "unminted"
]


class Segment(BaseModel):
    """A stretch of an answer.

    Attributes:
        text: What the model wrote (``{v3}`` for a reference).
        shown: What a person reads: the figure with its unit for a reference, else the text.
        state: How it reads (:data:`SegmentState`).
        ref: The value a reference or a matched number links to.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    text: str
    shown: str
    state: SegmentState = "plain"
    ref: str | None = None


class CheckedText(BaseModel):
    """An answer's text, split into segments, with what it cites and what it typed.

    Attributes:
        segments: The text in order; their ``text`` joined is the text as written.
        cited: References that name a minted value.
        matched: Typed numbers that match a minted value as displayed.
        unminted: Typed numbers that match nothing (and references that name no value).
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    segments: tuple[Segment, ...] = ()
    cited: int = 0
    matched: int = 0
    unminted: int = 0

    @property
    def rendered(self) -> str:
        """The text as a person reads it: references replaced by their values."""
        return "".join(s.shown for s in self.segments)


def format_number(value: float | int) -> str:
    """A number as a person reads it: thousands separated, about six significant digits.

    Example:
        >>> [format_number(v) for v in (1326, 205801.4567, 0.000123456, 2.5)]
        ['1,326', '205,801', '0.000123456', '2.5']
    """
    if isinstance(value, int):
        return f"{value:,}"
    if not math.isfinite(value):
        return str(value)
    return f"{value:,.6g}" if abs(value) < 1e15 else f"{value:.3e}"


def format_figure(value: Value) -> str:
    """A minted value as a sentence shows it: the value and its unit.

    Example:
        >>> from datetime import UTC, datetime
        >>> area = Value(id="v2", label="park area", value=40123.456, unit="m²",
        ...              minted_by="a1", code_hash="0" * 64, minted_at=datetime.now(UTC))
        >>> format_figure(area)
        '40,123.5 m²'
    """
    return format_shown(value.value, value.unit)


def format_shown(value: object, unit: str | None) -> str:
    """A figure's value and unit as a sentence shows them (see :func:`format_figure`)."""
    if isinstance(value, bool):
        text = "yes" if value else "no"
    elif isinstance(value, int | float):
        text = format_number(value)
    else:
        text = str(value)
    return f"{text} {unit}" if unit else text


_REFERENCE: Final = r"\{(?P<ref>v\d{1,9})\}"
# A numeral: digits with optional thousands separators and decimals, and an optional unit
# or ordinal suffix glued to it ("10km", "3rd"). Digits glued to letters or a hyphen
# before them are part of an id or a name ("places-1", "v3", "A4").
_NUMERAL: Final = (
    r"(?<![\w.\-/#:])(?P<num>\d{1,3}(?:,\d{3})+|\d+)(?P<dec>\.\d+)?(?P<glued>[A-Za-z²%]*)"
)
_WORDS: Final = {
    "zero": 0, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7,
    "eight": 8, "nine": 9, "ten": 10, "eleven": 11, "twelve": 12, "thirteen": 13,
    "fourteen": 14, "fifteen": 15, "sixteen": 16, "seventeen": 17, "eighteen": 18,
    "nineteen": 19, "twenty": 20,
}  # fmt: skip
_WORD: Final = r"\b(?P<word>" + "|".join(_WORDS) + r")\b"
_PATTERN: Final = re.compile(f"{_REFERENCE}|{_NUMERAL}|{_WORD}", re.IGNORECASE)
_DATE_OR_TIME: Final = re.compile(r"^(\d{4}-\d{2}(-\d{2})?|\d{1,2}:\d{2})")
_ORDINAL: Final = frozenset({"st", "nd", "rd", "th"})
#: Words after which a number is a name or a code, not a quantity ("bus 55", "tram 7").
_NAMING: Final = frozenset(
    {"bus", "tram", "line", "route", "no", "number", "platform", "gate", "exit", "track",
     "zone", "room", "floor", "level", "highway", "road", "street", "version", "step", "id"}
)  # fmt: skip
#: Units a card may show a metric figure in, as factors from the unit it was minted in.
_SCALES: Final[Mapping[str, tuple[float, ...]]] = {
    "m": (1.0, 1e-3),  # metres, and the same in kilometres
    "km": (1.0, 1e3),
    "m²": (1.0, 1e-4, 1e-6),  # square metres, hectares, square kilometres
    "m2": (1.0, 1e-4, 1e-6),
    "ha": (1.0, 1e4, 1e-2),
    "km²": (1.0, 1e2, 1e6),
    "s": (1.0, 1 / 60, 1 / 3600),  # seconds, minutes, hours
    "min": (1.0, 60.0, 1 / 60),
}


def check_text(
    text: str,
    values: Mapping[str, Value],
    *,
    withdrawn: Iterable[str] = (),
    quoted: Iterable[float] = (),
    stated: Iterable[float] = (),
) -> CheckedText:
    """Split an answer into segments: references resolved, typed numbers checked.

    Args:
        text: The answer as the model wrote it.
        values: The chat's minted values by id (withdrawn ones may be among them).
        withdrawn: Ids of values withdrawn since they were minted.
        quoted: Numbers the person's question or the run's tool arguments gave.
        stated: Numbers the run's tool results stated.
    """
    gone = frozenset(withdrawn)
    live = [v for v in values.values() if v.id not in gone and v.is_number]
    quoted_set, stated_set = frozenset(quoted), frozenset(stated)
    segments: list[Segment] = []
    counts = {"cited": 0, "matched": 0, "unminted": 0}
    at = 0
    for found in _PATTERN.finditer(text):
        segment = _segment(found, text, values, gone, live, quoted_set, stated_set)
        if segment is None:
            continue
        if found.start() > at:
            segments.append(Segment(text=text[at : found.start()], shown=text[at : found.start()]))
        segments.append(segment)
        at = found.end()
        if segment.state in counts:
            counts[segment.state] += 1
        elif segment.state in ("unknown", "withdrawn"):
            counts["unminted"] += 1
    if at < len(text):
        segments.append(Segment(text=text[at:], shown=text[at:]))
    return CheckedText(segments=_merged(segments), **counts)


def numbers_in(value: object) -> set[float]:
    """Every number in a JSON value or a text (numerals in strings included), for
    ``quoted`` and ``stated``.

    Example:
        >>> sorted(numbers_in({"radius_m": 800, "query": "within 10 minutes", "ids": ["v2"]}))
        [10.0, 800.0]
    """
    found: set[float] = set()
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, bool) or item is None:
            continue
        if isinstance(item, int | float):
            if math.isfinite(item):
                found.add(float(item))
        elif isinstance(item, str):
            for match in _PATTERN.finditer(item):
                number = _parsed(match)
                if number is not None:
                    found.add(number)
        elif isinstance(item, Mapping):
            stack.extend(item.values())
        elif isinstance(item, list | tuple):
            stack.extend(item)
    return found


def _segment(
    found: re.Match[str],
    text: str,
    values: Mapping[str, Value],
    gone: frozenset[str],
    live: list[Value],
    quoted: frozenset[float],
    stated: frozenset[float],
) -> Segment | None:
    written = found.group(0)
    ref = found.group("ref")
    if ref is not None:
        value = values.get(ref)
        if value is None:
            return Segment(text=written, shown=f"[{ref}: no such figure]", state="unknown", ref=ref)
        if ref in gone:
            return Segment(text=written, shown=f"[{ref}: withdrawn]", state="withdrawn", ref=ref)
        return Segment(text=written, shown=format_figure(value), state="cited", ref=ref)
    if _exempt(found, text):
        return None
    number = _parsed(found)
    if number is None:
        return None
    if number in quoted:
        return Segment(text=written, shown=written, state="quoted")
    decimals = len(found.group("dec") or "") - 1 if found.group("dec") else 0
    for value in live:
        if _matches(number, decimals, value):
            return Segment(text=written, shown=written, state="matched", ref=value.id)
    if number in stated:
        return Segment(text=written, shown=written, state="stated")
    return Segment(text=written, shown=written, state="unminted")


def _parsed(found: re.Match[str]) -> float | None:
    if found.group("ref") is not None:
        return None
    word = found.group("word")
    if word is not None:
        return float(_WORDS[word.lower()])
    return float(found.group("num").replace(",", "") + (found.group("dec") or ""))


def _exempt(found: re.Match[str], text: str) -> bool:
    """Whether a numeral is a date, a time, an ordinal, or part of a name or a code."""
    if found.group("word") is not None:
        # "one of the parks" is not a count anyone minted; a spelled number before a
        # noun is ("seven cafés"), so only "one" as a pronoun is let go.
        after = text[found.end() : found.end() + 4].lower()
        return found.group("word").lower() == "one" and after.startswith((" of", "."))
    digits = found.group("num")
    glued = found.group("glued").lower()
    start = found.start()
    if glued in _ORDINAL:
        return True
    if _DATE_OR_TIME.match(text[start:]):
        return True
    if digits.startswith("0") and len(digits) > 1:
        return True  # a code: postcodes, ids
    if (
        len(digits) == 4
        and not found.group("dec")
        and 1800 <= int(digits) <= 2100
        and not glued
        and not text[found.end() : found.end() + 2].strip().startswith(("%",))
    ):
        return True  # a year
    before = text[:start].rstrip()
    word = re.search(r"([A-Za-zÀ-ÿ.]+)$", before)
    if word is not None and text[word.end() : start].strip() == "":
        previous = word.group(1).rstrip(".").lower()
        if previous in _NAMING:
            return True
        # A capitalised word that does not start a sentence names something: a street
        # with its house number, a place ("Terminal 2").
        head = before[: word.start()].rstrip()
        if word.group(1)[0].isupper() and head and head[-1] not in ".!?:;\n":
            return True
    return False


def _matches(number: float, decimals: int, value: Value) -> bool:
    """Whether ``number``, written with ``decimals`` decimals, shows ``value`` rounded."""
    raw = value.value
    if isinstance(raw, bool) or not isinstance(raw, int | float):
        return False
    shown = [raw * factor for factor in _SCALES.get(value.unit or "", (1.0,))]
    if not value.unit and 0 < abs(raw) <= 1:
        shown.append(raw * 100)  # a share written as a percentage
    tolerance = _tolerance(number, decimals)
    return any(abs(candidate - number) <= tolerance for candidate in shown)


def _tolerance(number: float, decimals: int) -> float:
    """How far a number may be from what it shows: half its last written place ("2.5":
    0.05; "1,300": 50, a whole number rounded to its significant figures)."""
    if decimals:
        return 0.5 * 10.0**-decimals + 1e-9
    whole = str(int(number))
    significant = whole.rstrip("0")
    # Trailing zeros are the rounding the writer chose when two or more figures are
    # significant ("1,300" for 1,326); "200" or "10" are read as exact, not as 150 or 7.
    zeros = len(whole) - len(significant) if len(significant) >= 2 else 0
    return 0.5 * 10.0**zeros + 1e-9


def _merged(segments: list[Segment]) -> tuple[Segment, ...]:
    """Adjacent plain segments as one (numbers let go read as plain text)."""
    out: list[Segment] = []
    for segment in segments:
        if out and segment.state == "plain" and out[-1].state == "plain":
            joined = out[-1].text + segment.text
            out[-1] = Segment(text=joined, shown=joined)
        else:
            out.append(segment)
    return tuple(out)
