"""Bring your own data: load a user's geodata into one clean, reported layer.

:func:`load` accepts a source whole or refuses it whole with an :class:`IntakeError`
that says what is wrong, where, and what to do. What it repaired on the way is in the
:class:`IntakeReport` on the returned :class:`Layer`.
"""

from __future__ import annotations

import json
import stat
import tempfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from geomint.intake._confined import Converted, convert_confined
from geomint.intake._convert import columns_rows_shapes
from geomint.intake._decoded import too_large
from geomint.intake._parse import parse_json, parse_lines
from geomint.intake._table_json import feature_collection, records
from geomint.intake.errors import IntakeError
from geomint.intake.formats import BINARY, FORMATS, sniff
from geomint.intake.geojson import normalise
from geomint.intake.report import IntakeReport, Repair, _Builder, profile
from geomint.intake.tabular import read_csv

__all__ = ["IntakeError", "IntakeReport", "Layer", "Repair", "load"]

_HEAD = 4096


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


def _read_path(path: Path, max_bytes: int) -> tuple[bytes, int]:
    """Return the first bytes of a file and its size, refusing what is too large.

    Only regular files: a pipe or a device reports size 0 and would be read unbounded.
    """
    try:
        info = path.stat()
        if not stat.S_ISREG(info.st_mode):
            raise IntakeError(
                ["not a regular file (a folder, pipe or device); pass a file"], source=str(path)
            )
        if info.st_size > max_bytes:
            raise IntakeError(
                [
                    f"file is {info.st_size:,} bytes, over the {max_bytes:,}-byte limit; "
                    "pass max_bytes="
                ],
                source=str(path),
            )
        with path.open("rb") as handle:
            return handle.read(_HEAD), info.st_size
    except OSError as exc:
        raise IntakeError([f"cannot read the file: {exc.strerror}"], source=str(path)) from None


def _read_bounded(path: Path, max_bytes: int, source: str) -> bytes:
    """Read a whole file, refusing it if it grew past ``max_bytes`` since it was sized."""
    try:
        with path.open("rb") as handle:
            raw = handle.read(max_bytes + 1)
    except OSError as exc:
        raise IntakeError([f"cannot read the file: {exc.strerror}"], source=source) from None
    if len(raw) > max_bytes:
        raise IntakeError(
            [f"file grew past the {max_bytes:,}-byte limit while being read"], source=source
        )
    return raw


def _in_memory(source: Any) -> Any:
    if isinstance(source, dict):
        return source
    to_crs = getattr(source, "to_crs", None)
    crs = getattr(source, "crs", None)
    if to_crs is not None and crs is not None and crs.to_epsg() != 4326:
        source = to_crs(4326)
    if to_crs is not None and hasattr(source, "geometry") and hasattr(source, "columns"):
        # A GeoDataFrame: pandas and shapely write its rows and geometries in C, far
        # faster than its __geo_interface__, which builds a dict and a bbox per feature.
        try:
            (columns, rows, float_columns, floats), shapes = columns_rows_shapes(source)
            properties = records(columns, json.loads(rows), float_columns, json.loads(floats))
            return feature_collection(properties, json.loads(shapes))
        except ValueError as exc:
            raise IntakeError(
                [f"cannot read the GeoDataFrame: {exc}"], source=type(source).__name__
            ) from None
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
    timeout_s: float = 15.0,
    layer: str | None = None,
    allowed_networks: Sequence[str] = (),
    veto: Callable[[str], str | None] | None = None,
) -> Layer:
    """Load a user's geodata from a path, a URL, bytes or an in-memory object.

    Formats: GeoJSON and newline-delimited GeoJSON, GeoParquet, GeoPackage, zipped
    Shapefile, FlatGeobuf, KML/KMZ, CSV with lon/lat or WKT columns, a dict, an object
    with ``__geo_interface__`` or a GeoDataFrame. The format is read from the content
    and checked against the name. Any CRS is reprojected to WGS84 and recorded.

    Args:
        source: Raw bytes; a path; an ``http(s)://`` URL; a dict; an object with
            ``__geo_interface__``; or a GeoDataFrame.
        label: How to name the source in the report and in error messages.
        max_bytes: Refuse sources larger than this, measured after decompression, and
            sources whose GeoJSON would be more than 20 times this (a GeoParquet or
            CSV compresses inside itself; see ``docs/intake.md``).
        timeout_s: Budget for a download, and for reading a binary format.
        layer: Which layer of a multi-layer GeoPackage or zipped Shapefile to load.
        allowed_networks: CIDR ranges a URL may reach although they are private or
            loopback (an intranet data server); public addresses are always allowed.
        veto: Called with every URL before it is fetched, redirects included; a
            returned string refuses the URL with that reason.

    Returns:
        The layer, with its report.

    Raises:
        IntakeError: The source was refused; nothing of it was loaded.
    """
    if isinstance(source, str) and "://" in source:
        return _load_url(source, label, max_bytes, timeout_s, layer, allowed_networks, veto)
    if isinstance(source, str | Path):
        path = Path(source)
        name = label or str(path)
        head, _ = _read_path(path, max_bytes)
        fmt = _sniff(head, name, path.name, "")
        return _load_data(path, fmt, name, max_bytes, timeout_s, layer)
    if isinstance(source, bytes | bytearray | memoryview):
        raw = bytes(source)
        name = label or f"{len(raw):,} bytes"
        if len(raw) > max_bytes:
            raise IntakeError(
                [f"input is {len(raw):,} bytes, over the {max_bytes:,}-byte limit"], source=name
            )
        fmt = _sniff(raw[:_HEAD], name, label or "", "")
        return _load_data(raw, fmt, name, max_bytes, timeout_s, layer)
    name = label or f"in-memory {type(source).__name__}"
    builder = _Builder(source=name, format="geojson" if isinstance(source, dict) else "object")
    builder.source_crs = _crs_name(source)
    return _finish([_in_memory(source)], builder, name)


def _crs_name(source: Any) -> str | None:
    crs = getattr(source, "crs", None)
    if crs is None or isinstance(source, dict):
        return "EPSG:4326"
    return str(crs.to_string())


def _sniff(head: bytes, source: str, name: str, media_type: str) -> str:
    try:
        return sniff(head, name=name, media_type=media_type)
    except IntakeError as exc:
        raise IntakeError(exc.problems, source=source) from None


def _load_url(
    url: str,
    label: str | None,
    max_bytes: int,
    timeout_s: float,
    layer: str | None,
    allowed_networks: Sequence[str],
    veto: Callable[[str], str | None] | None,
) -> Layer:
    # httpx is imported only when a URL arrives: a local file needs no HTTP client.
    from geomint._http import FetchError, FetchPolicy, fetch  # noqa: PLC0415

    name = label or url
    policy = FetchPolicy(
        max_bytes=max_bytes,
        timeout_s=timeout_s,
        allowed_networks=tuple(allowed_networks),
        veto=veto,
    )
    try:
        fetched = fetch(url, policy)
    except FetchError as exc:
        raise IntakeError([exc.reason or str(exc)], source=name) from None
    path_name = urlsplit(fetched.final_url).path.rsplit("/", 1)[-1]
    fmt = _sniff(fetched.body[:_HEAD], name, path_name, fetched.content_type)
    return _load_data(fetched.body, fmt, name, max_bytes, timeout_s, layer)


def _load_data(
    data: bytes | Path, fmt: str, name: str, max_bytes: int, timeout_s: float, layer: str | None
) -> Layer:
    # Every source that arrives as bytes ends here, and each branch bounds the size of
    # its GeoJSON (see _decoded): the child refuses a binary layer that decodes past the
    # limit and what it sends is measured again; read_csv measures its table before it
    # builds a feature; GeoJSON, validated, grows by a small factor at most (integers
    # written as floats, absent properties added), far inside the limit.
    builder = _Builder(source=name, format=fmt)
    notes: list[str] = []
    values: list[Any]
    if fmt in BINARY:
        converted = _convert(data, fmt, name, max_bytes, timeout_s, layer)
        # The child's answer is hostile output too: measured before it is parsed.
        sent = len(converted.rows) + len(converted.floats) + len(converted.geometries)
        problem = too_large(f"the {FORMATS[fmt]} layer", sent, max_bytes)
        if problem:
            raise IntakeError([problem], source=name)
        builder.source_crs = converted.crs
        for note in converted.notes:
            builder.warn(note)
        rows = parse_json(converted.rows, name, notes)
        floats = parse_json(converted.floats, name, notes)
        shapes = parse_json(converted.geometries, name, notes)
        values = [converted.feature_collection(rows, floats, shapes, name)]
    else:
        raw = _read_bounded(data, max_bytes, name) if isinstance(data, Path) else data
        if fmt == "csv":
            values = [read_csv(raw, name, notes, max_bytes=max_bytes)]
        elif fmt == "geojsonseq":
            values = parse_lines(raw, name, notes)
        else:
            values = [parse_json(raw, name, notes)]
    for note in notes:
        if note.startswith("the input was UTF-"):
            builder.repaired("decoded_to_utf8", -1, note)
        elif "byte-order mark" in note:
            builder.repaired("bom_stripped", -1, note)
        else:
            builder.warn(note)
    return _finish(values, builder, name)


def _convert(
    data: bytes | Path, fmt: str, name: str, max_bytes: int, timeout_s: float, layer: str | None
) -> Converted:
    if isinstance(data, Path):
        return convert_confined(
            data, fmt, source=name, layer=layer, max_bytes=max_bytes, timeout_s=timeout_s
        )
    with tempfile.TemporaryDirectory(prefix="geomint-upload-") as folder:
        path = Path(folder) / f"upload.{fmt}"
        path.write_bytes(data)
        return convert_confined(
            path, fmt, source=name, layer=layer, max_bytes=max_bytes, timeout_s=timeout_s
        )


def _finish(values: list[Any], builder: _Builder, name: str) -> Layer:
    data, problems = normalise(values, builder)
    if problems:
        raise IntakeError(problems, source=name)
    return Layer(data=data, report=builder.finish(data))
