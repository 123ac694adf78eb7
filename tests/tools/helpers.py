"""Small layers, sources and a way to call a default tool as the agent does."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from pydantic import BaseModel

from geomint.provenance import Provenance
from geomint.state import EntryWritten
from geomint.tools import DEFAULT_TOOLS, ToolContext, ToolResult

OSM = Provenance(
    source_id="osm-test",
    title="OpenStreetMap test extract",
    publisher="OpenStreetMap contributors",
    licence="ODbL-1.0",
    url="https://www.openstreetmap.org/copyright",
    retrieved_at=datetime(2025, 3, 1, tzinfo=UTC),
    evidence="observed",
)
CITY = Provenance(
    source_id="city-open-data",
    title="City boundaries",
    publisher="The city",
    licence="CC-BY-4.0",
    url="https://example.org/boundaries",
    retrieved_at=datetime(2025, 4, 1, tzinfo=UTC),
    evidence="observed",
)


def point(lon: float, lat: float, **properties: Any) -> dict[str, Any]:
    return {
        "type": "Feature",
        "geometry": {"type": "Point", "coordinates": [lon, lat]},
        "properties": properties,
    }


def square(west: float, south: float, size: float, **properties: Any) -> dict[str, Any]:
    ring = [
        [west, south],
        [west + size, south],
        [west + size, south + size],
        [west, south + size],
        [west, south],
    ]
    return {
        "type": "Feature",
        "geometry": {"type": "Polygon", "coordinates": [ring]},
        "properties": properties,
    }


def collection(*features: dict[str, Any]) -> dict[str, Any]:
    return {"type": "FeatureCollection", "features": list(features)}


def cafes() -> dict[str, Any]:
    """Three places in central Helsinki: two cafés and a bar."""
    return collection(
        point(24.941, 60.169, name="Kahvila A", category="cafe"),
        point(24.945, 60.171, name="Kahvila B", category="cafe"),
        point(24.950, 60.168, name="Baari", category="bar"),
    )


def parks() -> dict[str, Any]:
    """Two small square parks."""
    return collection(
        square(24.930, 60.160, 0.005, name="Park one"),
        square(24.960, 60.175, 0.004, name="Park two"),
    )


async def seed(
    ctx: ToolContext,
    kind: str,
    data: dict[str, Any],
    *,
    sources: tuple[Provenance, ...] = (OSM,),
    entry_id: str | None = None,
    label: str = "seeded",
) -> EntryWritten:
    return await ctx.write_entry(
        kind=kind, data=data, label=label, sources=sources, entry_id=entry_id
    )


async def call(
    ctx: ToolContext, name: str, arguments: dict[str, Any], scope: BaseModel | None = None
) -> Any:
    """Validate ``arguments`` against the tool's schema and execute it."""
    entry = DEFAULT_TOOLS[name].for_scope(scope)
    return await entry.execute(entry.input_schema.model_validate(arguments), ctx)


def model_of(result: Any) -> dict[str, Any]:
    """What the model reads of a tool's result."""
    if isinstance(result, ToolResult):
        return result.model
    assert isinstance(result, dict)
    return result
