"""Bytes to JSON values, refusing what strict JSON and RFC 7946 refuse.

``NaN`` and ``Infinity`` literals are the one exception: they are parsed, marked as
:class:`NonFinite`, and judged by the validator, which knows where they stand. Problems
are located as precisely as the layer allows: a byte offset with its line and
column for encoding errors, a line and column for syntax errors, and a member path such
as ``features[3].properties`` for duplicate members.
"""

from __future__ import annotations

import codecs
import gc
import json
import re
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from geomint.intake.errors import IntakeError

__all__ = [
    "MAX_DEPTH",
    "TOO_DEEP",
    "Lines",
    "NonFinite",
    "gc_paused",
    "member_path",
    "parse_json",
    "parse_lines",
]

MAX_DEPTH = 64
_BOMS = (
    # UTF-32 first: its little-endian mark begins with UTF-16's.
    (codecs.BOM_UTF32_LE, "utf-32-le", "UTF-32LE"),
    (codecs.BOM_UTF32_BE, "utf-32-be", "UTF-32BE"),
    (codecs.BOM_UTF8, "utf-8", "UTF-8"),
    (codecs.BOM_UTF16_LE, "utf-16-le", "UTF-16LE"),
    (codecs.BOM_UTF16_BE, "utf-16-be", "UTF-16BE"),
)
_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,39}")
_EMPTY_EXAMPLE = (
    'expected a GeoJSON object such as {"type": "FeatureCollection", "features": [...]}'
)
TOO_DEEP = (
    f"nesting is deeper than {MAX_DEPTH} levels; no GeoJSON needs that, "
    "so the input is refused as hostile or corrupt"
)


class NonFinite(float):
    """A ``NaN``, ``Infinity`` or ``-Infinity`` literal as written in the JSON text.

    Strict JSON has no such literals. They are kept through parsing, marked, so that
    the validator can refuse them where they matter with the member path and the
    literal the user wrote.

    Attributes:
        literal: The literal exactly as written.
    """

    literal: str

    def __new__(cls, literal: str) -> NonFinite:
        value = super().__new__(cls, literal.replace("Infinity", "inf"))
        value.literal = literal
        return value


class Lines(list[Any]):
    """Values parsed from newline-delimited GeoJSON, with the line each came from.

    Attributes:
        numbers: The 1-based line number of each value, in order.
    """

    def __init__(self, values: list[Any], numbers: list[int]) -> None:
        super().__init__(values)
        self.numbers = numbers


class _Duplicates(dict[str, Any]):
    """An object that had repeated member names: kept only to be located and refused."""

    def __init__(self, pairs: list[tuple[str, Any]]) -> None:
        super().__init__(pairs)
        self.repeats: list[tuple[str, Any, Any]] = []
        seen: dict[str, Any] = {}
        for key, value in pairs:
            if key in seen:
                self.repeats.append((key, seen[key], value))
            seen.setdefault(key, value)


class _RefusedError(Exception):
    def __init__(self, problems: list[str]) -> None:
        super().__init__(problems)
        self.problems = problems


@contextmanager
def gc_paused() -> Iterator[None]:
    """Pause the cyclic garbage collector while building many containers.

    Parsing and validating a large file allocates millions of dicts and lists that all
    stay alive; every collection pass would scan them again, which doubles the time
    taken. Reference counting still frees garbage meanwhile. The collector's previous
    state is restored, so a caller that disabled it keeps it disabled.
    """
    if not gc.isenabled():
        yield
        return
    gc.disable()
    try:
        yield
    finally:
        gc.enable()


def member_path(path: str, key: str | int) -> str:
    """Return the path of member ``key`` (a name or an array index) under ``path``.

    >>> member_path("features[0].properties", "name")
    'features[0].properties.name'
    >>> member_path("", 2)
    '[2]'
    >>> member_path("properties", "two words")
    'properties["two words"]'
    """
    if isinstance(key, int):
        return f"{path}[{key}]"
    if _IDENTIFIER.fullmatch(key):
        return f"{path}.{key}" if path else key
    shown = key if len(key) <= 40 else key[:39] + "…"
    return f"{path}[{json.dumps(shown)}]"


def _brief(value: Any) -> str:
    text = json.dumps(value, default=str)
    return text if len(text) <= 30 else text[:27] + "..."


def _line_column(data: bytes | str, offset: int) -> tuple[int, int]:
    newline: Any = b"\n" if isinstance(data, bytes) else "\n"
    line = data.count(newline, 0, offset) + 1
    return line, offset - (data.rfind(newline, 0, offset) + 1) + 1


def _decode_text(raw: bytes, source: str, notes: list[str]) -> str:
    bom, codec, name = next(
        (entry for entry in _BOMS if raw.startswith(entry[0])), (b"", "utf-8", "UTF-8")
    )
    if not bom and b"\x00" in raw[:4]:
        # JSON text starts with ASCII, so zero bytes there mean UTF-16 or UTF-32.
        raise IntakeError(
            [
                "the input looks like UTF-16 or UTF-32 without a byte-order mark (it has "
                "zero bytes between the characters); GeoJSON must be UTF-8 (RFC 7946 s11): "
                "re-save the file as UTF-8"
            ],
            source=source,
        )
    body = raw[len(bom) :]
    try:
        text = body.decode(codec)
    except UnicodeDecodeError as exc:
        offset = exc.start + len(bom)
        if codec != "utf-8":
            message = (
                f"the input starts with a {name} byte-order mark but is not valid {name} "
                f"({exc.reason} at byte offset {offset}); re-save the file as UTF-8"
            )
        else:
            line, column = _line_column(raw, offset)
            message = (
                f"not UTF-8: byte 0x{raw[offset : offset + 1].hex()} at byte offset {offset} "
                f"(line {line}, byte {column} of the line) cannot be decoded ({exc.reason}); "
                "GeoJSON must be UTF-8 (RFC 7946 s11): re-save the file as UTF-8, e.g. "
                "iconv -f latin1 -t utf-8 in.geojson > out.geojson"
            )
        raise IntakeError([message], source=source) from None
    if name != "UTF-8" and text.lstrip()[:1] not in ("{", "[", '"'):
        raise IntakeError(
            [
                f"the input starts with a {name} byte-order mark, but read as {name} it is "
                "not JSON (the mark is probably wrong); re-save the file as UTF-8"
            ],
            source=source,
        )
    if name != "UTF-8":
        notes.append(
            f"the input was {name} with a byte-order mark; it was decoded and the mark "
            "stripped (GeoJSON must be UTF-8: re-save the file as UTF-8)"
        )
    elif bom or text.startswith("\ufeff"):
        text = text.lstrip("\ufeff")
        notes.append("a UTF-8 byte-order mark (BOM) at the start was stripped")
    return text


def _trailing_comma(exc: json.JSONDecodeError, text: str) -> int | None:
    """Return the offset of a comma right before ``]`` or ``}``, if that is the error."""
    if exc.msg.startswith("Illegal trailing comma"):  # Python 3.13 names it itself
        return exc.pos
    if text[exc.pos : exc.pos + 1] not in ("]", "}"):
        return None
    before = text[: exc.pos].rstrip()
    return len(before) - 1 if before.endswith(",") else None


def _syntax(exc: json.JSONDecodeError, text: str, in_line: bool) -> str:
    where = (
        f"column {exc.colno} (char {exc.pos})"
        if in_line
        else f"line {exc.lineno} column {exc.colno} (char {exc.pos})"
    )
    comma = _trailing_comma(exc, text)
    if comma is not None:
        line, column = _line_column(text, comma)
        at = f"column {column}" if in_line else f"line {line} column {column}"
        return (
            f"not valid JSON: a trailing comma at {at} (char {comma}) before the closing "
            "bracket; remove the comma"
        )
    if exc.msg.startswith("Unterminated string"):
        return (
            f"not valid JSON: the string that starts at {where} is never closed; the text "
            "looks truncated (re-export or re-download it), or a closing quote is missing"
        )
    if exc.msg == "Extra data":
        return (
            f"not valid JSON: unexpected text after the end of the JSON value at {where}; "
            "remove it (for one Feature per line, name the file .geojsonl)"
        )
    if exc.pos >= len(text.rstrip()):
        return (
            f"not valid JSON: the text ends too early at {where} ({exc.msg}); the file "
            "looks truncated: re-export or re-download it"
        )
    return f"not valid JSON: {exc.msg} at {where}; fix the syntax or re-export the file"


def _duplicates(value: Any, prefix: str) -> list[str]:
    problems: list[str] = []
    stack: list[tuple[Any, str]] = [(value, "")]
    while stack:
        item, path = stack.pop()
        if isinstance(item, _Duplicates):
            problems.extend(
                f"{prefix}{path or 'root'}: duplicate member {key!r} ({_brief(first)} and "
                f"{_brief(second)}): the meaning is ambiguous, so it is refused; keep one of them"
                for key, first, second in item.repeats
            )
        if isinstance(item, dict):
            stack.extend((v, member_path(path, k)) for k, v in reversed(item.items()))
        elif isinstance(item, list):
            stack.extend((v, member_path(path, i)) for i, v in reversed(list(enumerate(item))))
    return problems


def _loads(text: str, prefix: str, constant: Any = NonFinite) -> Any:
    repeated: list[bool] = []

    def pairs(items: list[tuple[str, Any]]) -> dict[str, Any]:
        value = dict(items)
        if len(value) == len(items):
            return value
        repeated.append(True)
        return _Duplicates(items)

    try:
        with gc_paused():
            value = json.loads(text, object_pairs_hook=pairs, parse_constant=constant)
    except json.JSONDecodeError as exc:
        raise _RefusedError([prefix + _syntax(exc, text, bool(prefix))]) from None
    except RecursionError:
        raise _RefusedError([prefix + TOO_DEEP]) from None
    except ValueError:
        # The only other ValueError json raises: an integer longer than Python converts.
        raise _RefusedError(
            [
                f"{prefix}a number in the text has more than {sys.get_int_max_str_digits():,} "
                "digits; no coordinate or property needs that many: shorten it or quote it "
                "as a string"
            ]
        ) from None
    if repeated:
        raise _RefusedError(_duplicates(value, prefix))
    return value


def parse_json(raw: bytes, source: str, notes: list[str], *, literals: bool = True) -> Any:
    """Parse one JSON document from ``raw`` or raise :class:`IntakeError`.

    ``literals=False`` reads ``NaN`` and ``Infinity`` as plain floats: the text was
    written from an in-memory object, where they were values, not literals a user typed.
    """
    text = _decode_text(raw, source, notes)
    if not text or text.isspace():
        detail = (
            "0 bytes"
            if not raw
            else f"{len(raw)} bytes: only a byte-order mark"
            if not text
            else f"{len(raw)} bytes, all whitespace"
        )
        raise IntakeError([f"the input is empty ({detail}); {_EMPTY_EXAMPLE}"], source=source)
    try:
        return _loads(text, "", NonFinite if literals else float)
    except _RefusedError as exc:
        raise IntakeError(exc.problems, source=source) from None


def parse_lines(raw: bytes, source: str, notes: list[str]) -> Lines:
    """Parse newline-delimited GeoJSON (one Feature or Geometry per line)."""
    text = _decode_text(raw, source, notes)
    values: list[Any] = []
    numbers: list[int] = []
    problems: list[str] = []
    # Split on LF only: str.splitlines would also split inside strings holding U+2028.
    for number, line in enumerate(text.split("\n"), start=1):
        if not line.strip():
            continue
        try:
            values.append(_loads(line, f"line {number}: "))
            numbers.append(number)
        except _RefusedError as exc:
            problems.extend(exc.problems)
    if problems:
        raise IntakeError(problems, source=source)
    if not values:
        raise IntakeError(["the input has no features (every line is blank)"], source=source)
    return Lines(values, numbers)
