"""Bytes to JSON values, refusing what strict JSON and RFC 7946 refuse."""

from __future__ import annotations

import json
from typing import Any

from geomint.intake.errors import IntakeError

__all__ = ["MAX_DEPTH", "parse_json", "parse_lines"]

MAX_DEPTH = 64
_BOM = b"\xef\xbb\xbf"


class _DuplicateKeyError(ValueError):
    pass


def _pairs(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    seen: dict[str, Any] = {}
    for key, value in pairs:
        if key in seen:
            raise _DuplicateKeyError(
                f"duplicate member {key!r} in one object ({_brief(seen[key])} and "
                f"{_brief(value)}): the meaning is ambiguous, so it is refused; keep one of them"
            )
        seen[key] = value
    return seen


def _brief(value: Any) -> str:
    text = json.dumps(value)
    return text if len(text) <= 30 else text[:27] + "..."


def _constant(name: str) -> float:
    raise _DuplicateKeyError(
        f"non-finite number ({name}) is not valid JSON and not a valid coordinate; "
        "replace it with a number or remove the feature"
    )


def _decode_text(raw: bytes, source: str, notes: list[str]) -> str:
    if raw.startswith(_BOM):
        raw = raw[len(_BOM) :]
        notes.append("a UTF-8 byte-order mark (BOM) at the start was stripped")
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        bad = raw[exc.start : exc.start + 1].hex()
        raise IntakeError(
            [
                f"not UTF-8: byte 0x{bad} at byte offset {exc.start} cannot be decoded "
                "(GeoJSON must be UTF-8, RFC 7946 s11); re-save the file as UTF-8, e.g. "
                "iconv -f latin1 -t utf-8"
            ],
            source=source,
        ) from None


def _depth_problem(value: Any) -> str | None:
    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if depth > MAX_DEPTH:
            return (
                f"nesting is deeper than {MAX_DEPTH} levels; no GeoJSON needs that, "
                "so the file is refused as hostile or corrupt"
            )
        if isinstance(item, dict):
            stack.extend((v, depth + 1) for v in item.values())
        elif isinstance(item, list) and item and isinstance(item[0], list | dict):
            stack.extend((v, depth + 1) for v in item)
    return None


def _loads(text: str, where: str) -> Any:
    try:
        value = json.loads(text, object_pairs_hook=_pairs, parse_constant=_constant)
    except _DuplicateKeyError as exc:
        raise ValueError(f"{where}{exc}") from None
    except json.JSONDecodeError as exc:
        raise ValueError(
            f"{where}not valid JSON: {exc.msg} at line {exc.lineno} column {exc.colno} "
            f"(char {exc.pos}); fix the syntax or re-export the file"
        ) from None
    except RecursionError:
        raise ValueError(
            f"{where}nesting is deeper than {MAX_DEPTH} levels; no GeoJSON needs that, "
            "so the file is refused as hostile or corrupt"
        ) from None
    problem = _depth_problem(value)
    if problem:
        raise ValueError(f"{where}{problem}")
    return value


def parse_json(raw: bytes, source: str, notes: list[str]) -> Any:
    """Parse one JSON document from ``raw`` or raise :class:`IntakeError`."""
    text = _decode_text(raw, source, notes)
    if not text.strip():
        raise IntakeError(
            [f"the input is empty ({len(raw)} bytes); expected a GeoJSON object"],
            source=source,
        )
    try:
        return _loads(text, "")
    except ValueError as exc:
        raise IntakeError([str(exc)], source=source) from None


def parse_lines(raw: bytes, source: str, notes: list[str]) -> list[Any]:
    """Parse newline-delimited GeoJSON (one Feature or Geometry per line)."""
    text = _decode_text(raw, source, notes)
    values: list[Any] = []
    problems: list[str] = []
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            values.append(_loads(line, f"line {number}: "))
        except ValueError as exc:
            problems.append(str(exc))
    if problems:
        raise IntakeError(problems, source=source)
    if not values:
        raise IntakeError(["the input has no features (every line is blank)"], source=source)
    return values
