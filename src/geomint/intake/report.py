"""What an intake did to a source, and the short profile a model may read of it."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

__all__ = ["IntakeReport", "Repair", "profile"]

_FIRST_INDICES = 5
_SAMPLE_ROWS = 5
_SAMPLE_CHARS = 80
_PROFILE_PROPERTIES = 100

Bbox = tuple[float, float, float, float]


@dataclass(frozen=True, kw_only=True)
class Repair:
    """One kind of repair applied to a source.

    Attributes:
        kind: A short stable name, e.g. ``"rewound"`` or ``"made_valid"``.
        count: How many times it was applied (rings, geometries or positions).
        feature_indices: The first few feature indices it touched, in order.
    """

    kind: str
    count: int
    feature_indices: tuple[int, ...]


@dataclass(frozen=True, kw_only=True)
class IntakeReport:
    """What :func:`geomint.intake.load` found and changed.

    Attributes:
        source: A description of where the data came from (never its content).
        feature_count: Number of features in the loaded layer.
        geometry_types: Feature count by geometry type (``"null"`` for no geometry).
        repairs: The repairs applied, one entry per kind.
        warnings: Human-readable notes: every repair kind and everything ignored.
        bbox: ``(west, south, east, north)`` in EPSG:4326, or None when no geometry.
        format: What the source was: ``"geojson"``, ``"gpkg"``, ``"csv"``, ...
        source_crs: The CRS the source declared (``"EPSG:27700"``), ``"EPSG:4326"``
            for GeoJSON and CSV, or None when a file named none.
    """

    source: str
    feature_count: int
    geometry_types: Mapping[str, int]
    repairs: tuple[Repair, ...]
    warnings: tuple[str, ...]
    bbox: Bbox | None
    format: str = "geojson"
    source_crs: str | None = "EPSG:4326"

    def as_dict(self) -> dict[str, Any]:
        """Return the report as JSON-serialisable data."""
        return {
            "source": self.source,
            "format": self.format,
            "source_crs": self.source_crs,
            "feature_count": self.feature_count,
            "geometry_types": dict(self.geometry_types),
            "repairs": [
                {"kind": r.kind, "count": r.count, "feature_indices": list(r.feature_indices)}
                for r in self.repairs
            ],
            "warnings": list(self.warnings),
            "bbox": list(self.bbox) if self.bbox else None,
        }

    def repair(self, kind: str) -> Repair | None:
        """Return the repair entry of ``kind``, or None if it was not applied."""
        return next((r for r in self.repairs if r.kind == kind), None)

    @property
    def clean(self) -> bool:
        """True when the source loaded with no repair and no warning."""
        return not self.repairs and not self.warnings


@dataclass
class _Builder:
    """Mutable accumulator used while loading; frozen into an IntakeReport at the end."""

    source: str
    format: str = "geojson"
    source_crs: str | None = "EPSG:4326"
    warnings: list[str] = field(default_factory=list)
    _repairs: dict[str, list[int]] = field(default_factory=dict)
    _repair_counts: Counter[str] = field(default_factory=Counter)
    _repair_text: dict[str, str] = field(default_factory=dict)

    def warn(self, message: str) -> None:
        if message not in self.warnings:
            self.warnings.append(message)

    def repaired(self, kind: str, index: int, text: str, count: int = 1) -> None:
        self._repair_counts[kind] += count
        self._repair_text.setdefault(kind, text)
        indices = self._repairs.setdefault(kind, [])
        if index >= 0 and index not in indices and len(indices) < _FIRST_INDICES:
            indices.append(index)

    def finish(self, data: Mapping[str, Any]) -> IntakeReport:
        features = data["features"]
        types: Counter[str] = Counter((f["geometry"] or {}).get("type", "null") for f in features)
        repairs = tuple(
            Repair(kind=k, count=self._repair_counts[k], feature_indices=tuple(v))
            for k, v in self._repairs.items()
        )
        notes = [
            f"{self._repair_text[r.kind]} ({r.count}x; features {list(r.feature_indices)})"
            for r in repairs
        ]
        return IntakeReport(
            source=self.source,
            feature_count=len(features),
            geometry_types=dict(types),
            repairs=repairs,
            warnings=tuple(notes + self.warnings),
            bbox=_extent(f["geometry"] for f in features),
            format=self.format,
            source_crs=self.source_crs,
        )


def _extent(geometries: Iterable[Mapping[str, Any] | None]) -> Bbox | None:
    """Return ``(west, south, east, north)`` of clean 2D geometries, or None if none."""
    xs: list[float] = []
    ys: list[float] = []
    stack = [g for g in geometries if g]
    while stack:
        geom = stack.pop()
        kind = geom["type"]
        if kind == "GeometryCollection":
            stack.extend(geom["geometries"])
            continue
        coords = geom["coordinates"]
        if kind == "Point":
            xs.append(coords[0])
            ys.append(coords[1])
            continue
        if kind in ("MultiPoint", "LineString"):
            positions = coords
        elif kind in ("MultiLineString", "Polygon"):
            positions = [p for part in coords for p in part]
        else:
            positions = [p for polygon in coords for ring in polygon for p in ring]
        xs.extend(p[0] for p in positions)
        ys.extend(p[1] for p in positions)
    if not xs:
        return None
    return (min(xs), min(ys), max(xs), max(ys))


def json_type(value: Any) -> str:
    """The JSON type of a property value, as profiles and digests name it."""
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int | float):
        return "number"
    if isinstance(value, str):
        return "string"
    if value is None:
        return "null"
    return "array" if isinstance(value, list) else "object"


def _cut(text: str) -> str:
    return text if len(text) <= _SAMPLE_CHARS else text[: _SAMPLE_CHARS - 1] + "…"


def _sample(value: Any) -> Any:
    if isinstance(value, str):
        return _cut(value)
    if isinstance(value, list | tuple | dict):
        return f"<{json_type(value)}>"
    return value


def profile(data: Mapping[str, Any], report: IntakeReport) -> dict[str, Any]:
    """Describe a loaded layer for a model without handing it the user's text.

    Only property names and the sample rows carry user text, each cut to 80 characters;
    everything else is counts, types, ranges and the bbox. At most the first 100
    property names are described; ``property_count`` says how many there are.

    Args:
        data: The loaded FeatureCollection.
        report: Its intake report.

    Returns:
        A JSON-serialisable dict.
    """
    kinds: dict[str, set[str]] = {}
    ranges: dict[str, list[float]] = {}
    for feature in data["features"]:
        for name, value in (feature.get("properties") or {}).items():
            kind = json_type(value)
            kinds.setdefault(name, set()).add(kind)
            if kind == "number":
                low_high = ranges.setdefault(name, [value, value])
                low_high[0], low_high[1] = min(low_high[0], value), max(low_high[1], value)
    shown = list(kinds)[:_PROFILE_PROPERTIES]
    properties: dict[str, dict[str, Any]] = {}
    for name in shown:
        # Names cut to the same prefix share one entry, merged.
        entry = properties.setdefault(_cut(str(name)), {"types": []})
        entry["types"] = sorted(kinds[name] | set(entry["types"]))
        if name in ranges:
            low, high = ranges[name]
            entry["min"] = min(low, entry.get("min", low))
            entry["max"] = max(high, entry.get("max", high))
    listed = set(shown)
    samples = [
        {_cut(str(k)): _sample(v) for k, v in (f.get("properties") or {}).items() if k in listed}
        for f in data["features"][:_SAMPLE_ROWS]
    ]
    return {
        "feature_count": report.feature_count,
        "geometry_types": dict(report.geometry_types),
        "bbox": list(report.bbox) if report.bbox else None,
        "property_count": len(kinds),
        "properties": properties,
        "sample_rows": samples,
        "repairs": {r.kind: r.count for r in report.repairs},
        "warning_count": len(report.warnings),
    }
