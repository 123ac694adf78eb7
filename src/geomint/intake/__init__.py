"""Bring your own data: load a user's GeoJSON into one clean, reported layer.

:func:`load` accepts a source whole or refuses it whole with an :class:`IntakeError`
that says what is wrong, where, and what to do. What it repaired on the way is in the
:class:`IntakeReport` on the returned :class:`Layer`.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from geomint.intake._parse import parse_json, parse_lines
from geomint.intake.errors import IntakeError
from geomint.intake.geojson import normalise
from geomint.intake.report import IntakeReport, Repair, _Builder, profile

__all__ = ["IntakeError", "IntakeReport", "Layer", "Repair", "load"]

_SUFFIXES = {".geojson": False, ".json": False, ".geojsonl": True, ".ndjson": True}


@dataclass(frozen=True, kw_only=True)
class Layer:
    """A loaded layer.

    Attributes:
        data: A GeoJSON FeatureCollection dict in EPSG:4326 with RFC 7946 winding.
        report: What was found and changed while loading.
    """

    data: dict[str, Any]
    report: IntakeReport

    def profile(self) -> dict[str, Any]:
        """Return the model-facing profile (see :func:`geomint.intake.report.profile`)."""
        return profile(self.data, self.report)


def _read(path: Path, max_bytes: int) -> tuple[bytes, bool]:
    suffix = path.suffix.lower()
    if suffix not in _SUFFIXES:
        raise IntakeError(
            [f"unsupported file type {suffix!r}; use one of {', '.join(_SUFFIXES)}"],
            source=str(path),
        )
    try:
        size = path.stat().st_size
        if size > max_bytes:
            raise IntakeError(
                [f"file is {size:,} bytes, over the {max_bytes:,}-byte limit; pass max_bytes="],
                source=str(path),
            )
        return path.read_bytes(), _SUFFIXES[suffix]
    except OSError as exc:
        raise IntakeError([f"cannot read the file: {exc.strerror}"], source=str(path)) from None


def _in_memory(source: Any) -> Any:
    if isinstance(source, dict):
        return source
    to_crs = getattr(source, "to_crs", None)
    crs = getattr(source, "crs", None)
    if to_crs is not None and crs is not None and crs.to_epsg() != 4326:
        source = to_crs(4326)
    interface = getattr(source, "__geo_interface__", None)
    if interface is None:
        raise IntakeError(
            [
                f"cannot load a {type(source).__name__}; pass bytes, a path, a dict, "
                "an object with __geo_interface__ or a GeoDataFrame"
            ],
            source=type(source).__name__,
        )
    return interface


def load(
    source: bytes | str | Path | dict[str, Any] | Any,
    *,
    label: str | None = None,
    max_bytes: int = 25_000_000,
) -> Layer:
    """Load GeoJSON from bytes, a local file or an in-memory object.

    Args:
        source: Raw bytes; a path to a ``.geojson``/``.json``/``.geojsonl``/``.ndjson``
            file; a dict; an object with ``__geo_interface__``; or a GeoDataFrame.
        label: How to name the source in the report and in error messages.
        max_bytes: Refuse bytes or files larger than this.

    Returns:
        The layer, with its report.

    Raises:
        IntakeError: The source was refused; nothing of it was loaded.
    """
    notes: list[str] = []
    lines = False
    if isinstance(source, str | Path):
        path = Path(source)
        name = label or str(path)
        raw, lines = _read(path, max_bytes)
    elif isinstance(source, bytes | bytearray):
        name = label or f"{len(source):,} bytes"
        raw = bytes(source)
        if len(raw) > max_bytes:
            raise IntakeError(
                [f"input is {len(raw):,} bytes, over the {max_bytes:,}-byte limit"], source=name
            )
    else:
        name = label or f"in-memory {type(source).__name__}"
        raw = b""
    builder = _Builder(source=name)
    if isinstance(source, str | Path | bytes | bytearray):
        values = parse_lines(raw, name, notes) if lines else [parse_json(raw, name, notes)]
    else:
        values = [_in_memory(source)]
    for note in notes:
        builder.repaired("bom_stripped", -1, note)
    data, problems = normalise(values, builder)
    if problems:
        raise IntakeError(problems, source=name)
    return Layer(data=data, report=builder.finish(data))
