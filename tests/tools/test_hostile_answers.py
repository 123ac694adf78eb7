"""A provider's answer is judged like a user's file before anything here computes on it.

An OpenStreetMap boundary is data anyone can edit: a self-intersecting star ring made
GEOS repair and union it in the application process for minutes, outside every limit,
when it came back from a boundary search or was used as a search area. Now every answer
and every search area goes through intake's confined child first.
"""

from __future__ import annotations

import json
import resource
import time
from typing import Any

import pytest
import shapely
from shapely.geometry import shape
from tests.hostile_inputs import star_geojson

from geomint.providers.base import Found, Providers
from geomint.providers.offline import OfflineProvider
from geomint.state import FetchMade, FetchMissed
from geomint.tools import ToolContext, ToolError, _judged

from .conftest import MakeCtx
from .helpers import OSM, call

pytestmark = pytest.mark.anyio

OFFLINE = OfflineProvider()
HELSINKI = (24.945, 60.17)
#: A bow tie: two triangles meeting at a point, a ring that crosses itself once.
BOW_TIE = {
    "type": "Polygon",
    "coordinates": [[[24.94, 60.168], [24.95, 60.172], [24.95, 60.168], [24.94, 60.172],
                     [24.94, 60.168]]],
}  # fmt: skip


class ScriptedBoundaries:
    """A boundary source that answers every query with one given geometry."""

    name = "scripted"

    def __init__(self, geometry: dict[str, Any]) -> None:
        self.geometry = geometry

    async def boundary(self, query: str, *, limit: int = 1) -> Found:
        feature = {
            "type": "Feature",
            "geometry": self.geometry,
            "properties": {"name": query, "kind": "district"},
        }
        return Found(
            data={"type": "FeatureCollection", "features": [feature]},
            sources=(OSM,),
            provider=self.name,
            endpoint="scripted:boundary",
            request={"q": query},
        )


def star() -> dict[str, Any]:
    geometry: dict[str, Any] = json.loads(star_geojson(HELSINKI))["features"][0]["geometry"]
    return geometry


def _host_cpu_s() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


@pytest.fixture
def quick(monkeypatch: pytest.MonkeyPatch) -> float:
    monkeypatch.setattr(_judged, "TIMEOUT_S", 2.0)
    return 2.0


def scripted(make_ctx: MakeCtx, geometry: dict[str, Any]) -> ToolContext:
    boundaries = ScriptedBoundaries(geometry)
    return make_ctx(providers=Providers(geocoder=OFFLINE, places=OFFLINE, boundaries=boundaries))


async def test_a_star_boundary_costs_its_child_and_is_a_miss(
    make_ctx: MakeCtx, quick: float
) -> None:
    ctx = scripted(make_ctx, star())
    await call(scripted(make_ctx, BOW_TIE), "get_boundaries", {"queries": ["x"]})  # reader up
    cpu, started = _host_cpu_s(), time.monotonic()
    result = await call(ctx, "get_boundaries", {"queries": ["Kamppi"]})
    assert _host_cpu_s() - cpu < 0.5, "the star was repaired in the application process"
    assert time.monotonic() - started < quick + 3
    assert result.failed and result.model["code"] == "unavailable"
    assert result.model["miss"].startswith("scripted's answer could not be used: ")
    assert f"took longer than {quick:g} s and was stopped" in result.model["miss"]
    assert not ctx.refresh().entries
    [missed] = [e.body for e in ctx.chats.trace(ctx.chat_id) if isinstance(e.body, FetchMissed)]
    assert missed.code == "unavailable"
    assert missed.reason.startswith("scripted's answer could not be used")


async def test_a_star_search_area_costs_its_child_and_is_refused(
    make_ctx: MakeCtx, quick: float
) -> None:
    ctx = scripted(make_ctx, star())
    cpu, started = _host_cpu_s(), time.monotonic()
    with pytest.raises(ToolError) as caught:
        where = {"queries": [{"query": "Kamppi"}]}
        await call(ctx, "discover_places", {"category": "cafe", "where": where})
    assert _host_cpu_s() - cpu < 0.5, "the star was unioned in the application process"
    assert time.monotonic() - started < quick + 3
    assert caught.value.message.startswith("'Kamppi' cannot be searched: ")
    assert f"took longer than {quick:g} s and was stopped" in caught.value.message


async def test_a_repaired_boundary_is_stored_valid_and_the_model_is_told(
    make_ctx: MakeCtx,
) -> None:
    ctx = scripted(make_ctx, BOW_TIE)
    result = await call(ctx, "get_boundaries", {"queries": ["Kamppi"]})
    entry_id = result.model["entry_id"]
    [feature] = ctx.entry_data(entry_id)["features"]
    stored = shape(feature["geometry"])
    assert stored.is_valid and stored.area == pytest.approx(shape(BOW_TIE).buffer(0).area * 2)
    assert feature["properties"] == {"name": "Kamppi", "kind": "district"}
    assert "1 repaired in scripted's answer (made valid)" in result.model["notes"]


async def test_an_answer_intake_refuses_is_a_miss_that_says_why(make_ctx: MakeCtx) -> None:
    ctx = scripted(make_ctx, {"type": "Polygon", "coordinates": [[[24.9, 60.1], [24.9]]]})
    result = await call(ctx, "get_boundaries", {"queries": ["Kamppi"]})
    assert result.failed and result.model["code"] == "unavailable"
    assert result.model["miss"].startswith("scripted's answer could not be used: ")
    assert not ctx.refresh().entries


async def test_overlapping_search_areas_reach_the_provider_as_one_valid_area(
    make_ctx: MakeCtx,
) -> None:
    asked: list[dict[str, Any]] = []

    class Recording(OfflineProvider):
        async def discover(self, **kwargs: Any) -> Found:
            asked.extend(kwargs["within"])
            return await super().discover(**kwargs)

    ctx = make_ctx(providers=Providers.single(Recording()))
    where = {
        "bounding_box": [24.940, 60.166, 24.950, 60.172],
        "queries": [{"query": "Esplanadinpuisto"}],
        "place_ids": [],
    }
    result = await call(ctx, "discover_places", {"category": "cafe", "where": where})
    assert not result.failed
    [area] = asked
    union = shapely.union_all(
        [
            shapely.box(24.940, 60.166, 24.950, 60.172),
            shape((await OFFLINE.boundary("Esplanadinpuisto")).data["features"][0]["geometry"]),
        ]
    )
    judged = shape(area)
    assert judged.is_valid and judged.geom_type in ("Polygon", "MultiPolygon")
    assert judged.symmetric_difference(union).area < 1e-9
    made = [e.body for e in ctx.chats.trace(ctx.chat_id) if isinstance(e.body, FetchMade)]
    assert made[-1].request["within"] == ["the bounding box", "'Esplanadinpuisto'"]


async def test_an_invalid_area_overlapping_another_keeps_the_overlap(make_ctx: MakeCtx) -> None:
    # Repaired together as one MultiPolygon, make_valid would cut the overlap out.
    asked: list[dict[str, Any]] = []

    class Recording(OfflineProvider):
        async def discover(self, **kwargs: Any) -> Found:
            asked.extend(kwargs["within"])
            return await super().discover(**kwargs)

    boundaries = ScriptedBoundaries(BOW_TIE)
    ctx = make_ctx(providers=Providers(geocoder=OFFLINE, places=Recording(), boundaries=boundaries))
    box = (24.938, 60.169, 24.946, 60.171)  # over the bow tie's left triangle
    where = {"bounding_box": list(box), "queries": [{"query": "Kamppi"}]}
    await call(ctx, "discover_places", {"category": "cafe", "where": where})
    [area] = asked
    expected = shapely.union_all([shapely.box(*box), shapely.make_valid(shape(BOW_TIE))])
    assert shape(area).is_valid
    assert shape(area).symmetric_difference(expected).area < 1e-12
