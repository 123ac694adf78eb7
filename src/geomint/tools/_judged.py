"""Provider answers and search areas, judged in intake's confined child before use.

A provider's answer is hostile bytes like a user's file: an OpenStreetMap boundary anyone
can edit may be a self-intersecting star that costs GEOS minutes to repair. So what a
provider returns is parsed, walked and repaired where intake judges every file (under a
time and memory limit enforced by killing), and the geometry the host computes on
afterwards (unions, point-in-area tests, search rings) is valid and bounded in size.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Final

from geomint import intake
from geomint.providers.base import Found, ProviderMiss
from geomint.tools.results import ToolError

__all__ = ["judged_answer", "judged_area"]

#: What judging one answer or area may take; a provider's answer is rarely over 10 MB.
TIMEOUT_S: Final = 15.0


async def judged_answer(found: Found) -> tuple[dict[str, Any], tuple[str, ...]]:
    """A provider's FeatureCollection judged, and notes on what judging changed.

    Raises:
        ProviderMiss: The answer cannot be used (``unavailable``, with intake's reason).
    """
    try:
        layer = await intake.aload(
            found.data, label=f"{found.provider}'s answer", timeout_s=TIMEOUT_S
        )
    except intake.IntakeError as exc:
        raise ProviderMiss(
            f"{found.provider}'s answer could not be used: {_why(exc)}",
            code="unavailable",
            provider=found.provider,
            endpoint=found.endpoint,
        ) from None
    # Winding is only orientation (RFC 7946 wants it counter-clockwise); the rest changed
    # the answer's shape or values, which the model is told.
    notes = tuple(
        f"{r.count} repaired in {found.provider}'s answer ({r.kind.replace('_', ' ')})"
        for r in layer.report.repairs
        if r.kind != "rewound"
    )
    return layer.data, notes


async def judged_area(polygons: Sequence[dict[str, Any]], described: str) -> dict[str, Any]:
    """The union of ``polygons`` as one valid GeoJSON Polygon or MultiPolygon.

    Each polygon is first made valid on its own (one feature each: repairing them as one
    MultiPolygon would cut the overlaps out); then, if there are several, their valid
    parts go back as one MultiPolygon, which intake's repair unions. Both steps run in
    the child.

    Raises:
        ToolError: The areas cannot be combined into one (what intake said, and why).
    """
    parts = await _judged_parts(polygons, described)
    if len(parts) > 1:
        parts = await _judged_parts([{"type": "MultiPolygon", "coordinates": parts}], described)
    if len(parts) == 1:
        return {"type": "Polygon", "coordinates": parts[0]}
    return {"type": "MultiPolygon", "coordinates": parts}


async def _judged_parts(geometries: Sequence[dict[str, Any]], described: str) -> list[Any]:
    """The coordinates of the valid polygons the geometries are once judged, one each."""
    features = [{"type": "Feature", "geometry": g, "properties": {}} for g in geometries]
    try:
        layer = await intake.aload(
            {"type": "FeatureCollection", "features": features},
            label=described,
            timeout_s=TIMEOUT_S,
        )
    except intake.IntakeError as exc:
        raise ToolError(f"{described} cannot be searched: {_why(exc)}") from None
    # make_valid may leave lines beside the polygons it repaired: only area counts.
    parts = [
        part
        for feature in layer.data["features"]
        for part in _polygon_parts(feature["geometry"] or {})
    ]
    if not parts:
        raise ToolError(f"{described} has no area left once its outline is made valid")
    return parts


def _polygon_parts(geometry: dict[str, Any]) -> list[Any]:
    """The polygons' coordinates in a GeoJSON geometry, collections included."""
    kind, coordinates = geometry.get("type"), geometry.get("coordinates")
    if kind == "Polygon":
        return [coordinates]
    if kind == "MultiPolygon" and isinstance(coordinates, list):
        return coordinates
    if kind == "GeometryCollection":
        members = geometry.get("geometries") or []
        return [part for member in members for part in _polygon_parts(member)]
    return []


def _why(refused: intake.IntakeError) -> str:
    """What intake found, in the terms of an answer or an area rather than a file."""
    if refused.timed_out:
        return (
            f"checking its geometry took longer than {TIMEOUT_S:g} s and was stopped (an "
            "outline whose edges cross each other many times costs that much to repair)"
        )
    shown = "; ".join(refused.problems[:3])
    more = len(refused.problems) - 3
    return shown + (f"; and {more} more" if more > 0 else "")
