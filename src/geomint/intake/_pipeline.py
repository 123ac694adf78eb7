"""Bytes in, a validated layer out: every step that reads hostile input, in one place.

This runs inside a confined child (:mod:`geomint.intake._child`), never in the
application: sniffed bytes are parsed (JSON, CSV and its WKT, or a binary format through
GDAL and Arrow), walked, repaired and reported here, so a parser that crashes, a
geometry that makes GEOS spin, or a file that swells in memory costs that child alone.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson

from geomint.intake._convert import ConvertError, convert
from geomint.intake._decoded import too_large
from geomint.intake._parse import parse_json, parse_lines
from geomint.intake._table_json import feature_collection, records
from geomint.intake.errors import IntakeError
from geomint.intake.formats import BINARY, FORMATS
from geomint.intake.geojson import normalise
from geomint.intake.report import IntakeReport, _Builder
from geomint.intake.tabular import read_csv

__all__ = ["FRAME", "Converted", "Judged", "encode", "frame_parts", "judge"]


@dataclass(frozen=True)
class Converted:
    """What the binary reader produced: the layer as JSON texts, and what it learned."""

    columns: list[str]
    float_columns: list[str]
    rows: bytes
    floats: bytes
    geometries: bytes
    crs: str | None
    layers: tuple[str, ...]
    notes: tuple[str, ...]

    def feature_collection(
        self, rows: Any, floats: Any, geometries: Any, source: str
    ) -> dict[str, Any]:
        """Zip the parsed parts into a FeatureCollection dict, checking they fit."""
        try:
            properties = records(self.columns, rows, self.float_columns, floats)
            return feature_collection(properties, geometries)
        except (TypeError, ValueError):
            raise IntakeError(
                ["the reader returned parts that do not fit together; the file may be corrupt"],
                source=source,
            ) from None


@dataclass(frozen=True, kw_only=True)
class Judged:
    """An accepted source: the FeatureCollection and what was found on the way."""

    data: dict[str, Any]
    report: IntakeReport


def _convert(path: Path, fmt: str, name: str, max_bytes: int, layer: str | None) -> Converted:
    """Read a binary format with GDAL or Arrow (in this, already confined, process)."""
    request = {
        "path": str(path),
        "format": fmt,
        "layer": layer,
        "scratch": str(path.parent),
        "max_bytes": max_bytes,
    }
    try:
        meta, (rows, floats, geometries) = convert(request)
    except ConvertError as exc:
        raise IntakeError([str(exc)], source=name) from None
    except MemoryError:
        raise IntakeError(
            ["reading the file needed more memory than it was allowed and was stopped"],
            source=name,
        ) from None
    return Converted(
        columns=list(meta["columns"]),
        float_columns=list(meta["float_columns"]),
        rows=rows.encode("utf-8", "surrogatepass"),
        floats=floats.encode(),
        geometries=geometries.encode(),
        crs=meta["crs"],
        layers=tuple(meta["layers"]),
        notes=tuple(meta["notes"]),
    )


#: A GeoDataFrame's columns as the application wrote them (see :func:`frame_parts`).
FRAME = "frame"


def frame_parts(columns: list[str], rows: str, float_columns: list[str], floats: str,
                shapes: str) -> bytes:  # fmt: skip
    """A GeoDataFrame's JSON texts (pandas' rows, numpy's floats, shapely's geometries)
    as four lines for the child, which zips them as it does a binary reader's."""
    head = json.dumps({"columns": columns, "float_columns": float_columns})
    return "\n".join([head, rows, floats, shapes]).encode("utf-8", "surrogatepass")


def _frame_parts(raw: bytes, name: str, crs: str | None) -> Converted:
    head, rows, floats, shapes = [*raw.split(b"\n", 3), b"", b"", b""][:4]
    meta = parse_json(head, name, [])
    columns, float_columns = meta.get("columns"), meta.get("float_columns")
    if not (isinstance(columns, list) and isinstance(float_columns, list)):
        raise IntakeError(["the GeoDataFrame's columns could not be read"], source=name)
    return Converted(
        columns=[str(c) for c in columns],
        float_columns=[str(c) for c in float_columns],
        rows=rows, floats=floats, geometries=shapes, crs=crs, layers=(), notes=(),
    )  # fmt: skip


def judge(
    raw: bytes,
    fmt: str,
    name: str,
    *,
    max_bytes: int,
    layer: str | None,
    scratch: Path,
    format_name: str | None = None,
    source_crs: str | None = "EPSG:4326",
) -> Judged:
    """Parse, validate and repair one source; refuse it whole or accept it whole.

    Args:
        raw: The source's bytes, already within ``max_bytes``.
        fmt: The sniffed format (a key of :data:`~geomint.intake.formats.FORMATS`).
        name: How the source is named in messages and in the report.
        max_bytes: The caller's input limit, which also bounds the decoded GeoJSON.
        layer: The layer of a multi-layer file to read.
        scratch: A private directory a binary file is written to and unpacked in.
        format_name: What the report calls the format, when not ``fmt`` (an in-memory
            object arrives as GeoJSON text).
        source_crs: The CRS the source had before it arrived (an in-memory object's).

    Raises:
        IntakeError: The source was refused; the message says what, where and why.
    """
    builder = _Builder(source=name, format=format_name or fmt, source_crs=source_crs)
    notes: list[str] = []
    values: list[Any]
    if fmt in BINARY or fmt == FRAME:
        if fmt == FRAME:
            converted = _frame_parts(raw, name, source_crs)
        else:
            path = scratch / f"upload.{fmt}"
            path.write_bytes(raw)
            converted = _convert(path, fmt, name, max_bytes, layer)
        del raw
        # Measured before it is parsed, although the reader measured it too.
        sent = len(converted.rows) + len(converted.floats) + len(converted.geometries)
        what = "the GeoDataFrame" if fmt == FRAME else f"the {FORMATS[fmt]} layer"
        problem = too_large(what, sent, max_bytes)
        if problem:
            raise IntakeError([problem], source=name)
        builder.source_crs = converted.crs
        for note in converted.notes:
            builder.warn(note)
        rows = parse_json(converted.rows, name, notes)
        floats = parse_json(converted.floats, name, notes)
        shapes = parse_json(converted.geometries, name, notes)
        values = [converted.feature_collection(rows, floats, shapes, name)]
    elif fmt == "csv":
        values = [read_csv(raw, name, notes, max_bytes=max_bytes)]
    elif fmt == "geojsonseq":
        values = parse_lines(raw, name, notes)
    else:
        values = [parse_json(raw, name, notes, literals=format_name is None)]
    for note in notes:
        if note.startswith("the input was UTF-"):
            builder.repaired("decoded_to_utf8", -1, note)
        elif "byte-order mark" in note:
            builder.repaired("bom_stripped", -1, note)
        else:
            builder.warn(note)
    data, problems = normalise(values, builder)
    if problems:
        raise IntakeError(problems, source=name)
    return Judged(data=data, report=builder.finish(data))


#: Features per line of the answer: the host decodes one line at a time, so a thread that
#: decodes a large layer lets the event loop run between lines.
BATCH = 5_000


def encode(judged: Judged) -> bytes:
    """The child's answer for an accepted source, as JSON lines.

    The first line holds the report and the FeatureCollection without its features, and
    says how many lines of features follow, each a JSON array of at most :data:`BATCH`.
    orjson writes them an order of magnitude faster than :mod:`json`; what it cannot
    write (a lone surrogate from a ``\\ud800`` escape, an integer past 64 bits) falls back.
    """
    features = judged.data["features"]
    head = {key: value for key, value in judged.data.items() if key != "features"}
    batches = [features[i : i + BATCH] for i in range(0, len(features), BATCH)]
    first = {"ok": True, "report": judged.report.as_dict(), "data": head, "lines": len(batches)}
    return b"\n".join([_dumps(first), *map(_dumps, batches)])


def _dumps(value: Any) -> bytes:
    try:
        return orjson.dumps(value)
    except (TypeError, orjson.JSONEncodeError):
        return json.dumps(value).encode()
