"""The ``where`` argument of the place and traffic tools: areas named in several ways,
resolved to polygons (and, for traffic, to one bounding box).

``{"mode": "within", "viewport": true}`` is the map's current view; ``bounding_box`` a box;
``queries`` named areas (geocoded to a boundary, or to a place with a radius);
``place_ids`` places already found; ``geometries`` and ``range`` entries of this chat;
``route`` a corridor around a route. Several may be given: the areas are combined. When a
named area and the viewport are both given, the named area wins: a tool never answers
about the viewport when the person named a place.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Final, Literal

import shapely
from pydantic import BaseModel, ConfigDict, Field

from geomint import geo
from geomint.providers._text import normalise
from geomint.providers.base import ProviderMiss, Providers
from geomint.tools._judged import judged_area
from geomint.tools.context import ToolContext
from geomint.tools.results import ToolError

__all__ = ["Areas", "Where", "WhereQuery", "place_point", "resolve_where", "union_bbox_km2"]

#: Radius around a place (a point) when it stands for an area.
PLACE_RADIUS_M: Final = 500.0
_EARTH_RADIUS_KM: Final = 6_371.0088


class WhereQuery(BaseModel):
    """A named area."""

    model_config = ConfigDict(extra="forbid")

    query: str = Field(min_length=1, max_length=200, description="e.g. 'Kamppi' or 'Finland'")
    query_as: Literal["area", "place"] = Field(
        default="area",
        description="'area': its boundary polygon; 'place': a point with radius_m around it.",
    )
    radius_m: float = Field(default=PLACE_RADIUS_M, gt=0, le=50_000)


class RouteCorridor(BaseModel):
    """A corridor around a route."""

    model_config = ConfigDict(extra="forbid")

    entry_id: str | None = Field(default=None, description="A routes entry; the latest if omitted.")
    width_m: float = Field(default=1_000, gt=0, le=50_000, description="Total corridor width.")


class Where(BaseModel):
    """Where to look: one or more areas, combined."""

    model_config = ConfigDict(extra="forbid")

    mode: Literal["within"] = "within"
    viewport: bool = Field(default=False, description="The map's current view.")
    bounding_box: tuple[float, float, float, float] | None = Field(
        default=None, description="[west, south, east, north]"
    )
    queries: list[WhereQuery] = Field(default_factory=list, max_length=10)
    place_ids: list[str] = Field(
        default_factory=list, max_length=50, description="Ids of places found earlier."
    )
    geometries: list[str] = Field(
        default_factory=list, max_length=20, description="geometries entry ids"
    )
    range: str | None = Field(default=None, description="A ranges entry id.")
    route: RouteCorridor | None = None

    def named(self) -> bool:
        """Whether anything other than the viewport names an area."""
        return bool(
            self.bounding_box
            or self.queries
            or self.place_ids
            or self.geometries
            or self.range
            or self.route
        )


@dataclass(frozen=True)
class Areas:
    """Resolved areas: their union, one valid GeoJSON (Multi)Polygon, and what it came from.

    The union was judged in intake's confined child (see :mod:`geomint.tools._judged`), so
    what the providers and tools compute on it here is valid geometry.
    """

    area: dict[str, Any]
    described: tuple[str, ...]
    ignored_viewport: bool = False
    #: What stood in for a named area, each said in a sentence the model reads: a circle
    #: round a name's point where no boundary was found is not the area the name means.
    narrowed: tuple[str, ...] = ()

    @property
    def polygons(self) -> tuple[dict[str, Any], ...]:
        """The area as the ``within`` of a provider call."""
        return (self.area,)

    @property
    def bbox(self) -> tuple[float, float, float, float]:
        west, south, east, north = shapely.geometry.shape(self.area).bounds
        return (west, south, east, north)


def union_bbox_km2(bbox: Sequence[float]) -> float:
    """The area of a lon/lat box in km² on a sphere (good to a fraction of a percent)."""
    west, south, east, north = bbox
    width = math.radians((east - west) % 360 if east < west else east - west)
    band = abs(math.sin(math.radians(north)) - math.sin(math.radians(south)))
    return _EARTH_RADIUS_KM**2 * width * band


async def resolve_where(ctx: ToolContext, where: Where, providers: Providers | None) -> Areas:
    """Resolve ``where`` to polygons, the named areas winning over the viewport.

    Raises:
        ToolError: Nothing usable was named, or a named thing cannot be found.
    """
    polygons: list[dict[str, Any]] = []
    described: list[str] = []
    narrowed: list[str] = []
    if where.bounding_box is not None:
        west, south, east, north = where.bounding_box
        if not (-180 <= west <= 180 and -180 <= east <= 180 and -90 <= south < north <= 90):
            raise ToolError(
                f"bounding_box {list(where.bounding_box)} is not [west, south, east, north]"
            )
        polygons.append(shapely.geometry.mapping(shapely.box(west, south, east, north)))
        described.append("the bounding box")
    for named in where.queries:
        # The name is chat text that leaves for the provider: asked before it is sent.
        await ctx.require("network", {"area": named.query})
        resolved = await _query_area(named, providers)
        polygons.append(resolved.polygon)
        described.append(resolved.described)
        if resolved.narrowed:
            narrowed.append(resolved.narrowed)
    for place_id in where.place_ids:
        point = place_point(ctx, place_id)
        polygons.append(shapely.geometry.mapping(geo.buffer_m(point, PLACE_RADIUS_M)))
        described.append(f"place {place_id}")
    for entry_id in where.geometries:
        polygons.extend(_entry_polygons(ctx, entry_id, "geometries"))
        described.append(entry_id)
    if where.range is not None:
        polygons.extend(_entry_polygons(ctx, where.range, "ranges"))
        described.append(where.range)
    if where.route is not None:
        polygons.append(await _corridor(ctx, where.route))
        described.append(f"{where.route.width_m:g} m around the route")
    ignored = False
    if polygons:
        ignored = where.viewport
    elif where.viewport:
        polygons.append(_viewport(ctx))
        described.append("the map's view")
    else:
        raise ToolError(
            "where names no area",
            hint="pass queries=[{'query': 'Kamppi'}], a bounding_box, geometries, a route, or "
            "viewport=true",
        )
    area = await judged_area(polygons, " and ".join(described))
    return Areas(area, tuple(described), ignored_viewport=ignored, narrowed=tuple(narrowed))


@dataclass(frozen=True)
class _NamedArea:
    polygon: dict[str, Any]
    #: How the area is named in the entry's label.
    described: str
    #: What stood in for the area the name means, in a sentence the model reads.
    narrowed: str = ""


#: A city or country with no outline whose point lies this close to a provider's covered
#: box is searched over the whole box: all the provider has of it. Helsinki's point is in
#: the offline box; Espoo's (16 km) and Vantaa's (14 km) are not, and no part of the box
#: is theirs.
_COVERED_NEAR_M: Final = 5_000.0
_WIDE_KINDS: Final = frozenset({"city", "country"})


async def _query_area(named: WhereQuery, providers: Providers | None) -> _NamedArea:
    """The area a name stands for. Without a boundary: for a city whose data stops at a
    box (the offline provider's central Helsinki), that whole box, the widest honest
    reading; else a circle round its point. Either way the result says what stood in."""
    if named.query_as == "area" and providers is not None and providers.boundaries is not None:
        try:
            found = await providers.boundaries.boundary(named.query)
        except ProviderMiss:
            found = None
        if found is not None and found.count:
            outline = found.data["features"][0]
            geometry: dict[str, Any] = outline["geometry"]
            props = outline.get("properties") or {}
            name = str(props.get("name") or "")
            matched = str(props.get("matched_name") or name)
            if normalise(named.query) in {normalise(name), normalise(matched)}:
                return _NamedArea(geometry, f"{named.query!r}")
            # The best outline by name is not what was asked: say what stood in.
            what = f", a {props['kind']}" if props.get("kind") else ""
            read = f"{name} ({matched})" if matched != name else name
            return _NamedArea(
                geometry,
                f"{named.query!r} (read as {read}{what})",
                f"{named.query!r} has no outline of its own here; the outline searched is "
                f"{read}{what}, the nearest by name; to search elsewhere pass a "
                "bounding_box, or query_as='place' with a radius_m",
            )
    if providers is None or providers.geocoder is None:
        raise ToolError(f"no provider can find {named.query!r} here")
    try:
        located = await providers.geocoder.locate(named.query, limit=1)
    except ProviderMiss as miss:
        raise ToolError(f"{named.query!r} was not found: {miss.reason}") from None
    if not located.count:  # a provider may answer "nothing" rather than miss
        raise ToolError(f"{named.query!r} was not found")
    feature = located.data["features"][0]
    point = feature["geometry"]
    kind = (feature.get("properties") or {}).get("category")
    if named.query_as == "area" and kind in _WIDE_KINDS:
        covered = _covered_box(providers, point)
        if covered is not None:
            west, south, east, north = covered
            box = f"[{west:.3f}, {south:.3f}, {east:.3f}, {north:.3f}]"
            return _NamedArea(
                shapely.geometry.mapping(shapely.box(*covered)),
                f"{named.query!r} where the place data covers it (bbox {box})",
                f"{named.query!r} has no boundary here, and the place search covers only the "
                f"box {box} of it, so that whole box was searched: what was found is what "
                f"the data has in {named.query!r}, not all of it",
            )
    circle = dict(shapely.geometry.mapping(geo.buffer_m(point, named.radius_m)))
    if named.query_as == "place":
        return _NamedArea(circle, f"{named.query!r}")
    return _NamedArea(
        circle,
        f"{named.radius_m:g} m around {named.query!r} (no boundary found)",
        f"{named.query!r} has no boundary here, so only {named.radius_m:g} m around its "
        "point was searched, not the whole of it; to search more widely pass a larger "
        "radius_m or a bounding_box, or leave out where to search everything the provider "
        "covers",
    )


def _covered_box(
    providers: Providers, point: dict[str, Any]
) -> tuple[float, float, float, float] | None:
    """The box the place search's data stops at, when ``point`` lies in or near it."""
    # An optional attribute of a place search (see PlaceSearch): the offline provider's.
    covered: tuple[float, float, float, float] | None = getattr(
        providers.places, "covered_bbox", None
    )
    if covered is None:
        return None
    west, south, east, north = covered
    lon, lat = point["coordinates"][:2]
    nearest = (min(max(lon, west), east), min(max(lat, south), north))
    if geo.distance_m(shapely.Point(lon, lat), shapely.Point(*nearest)) > _COVERED_NEAR_M:
        return None
    return covered


def place_point(ctx: ToolContext, place_id: str) -> dict[str, Any]:
    """The Point of a place found earlier in this chat, by its ``id``.

    Raises:
        ToolError: No places entry holds a feature with that id.
    """
    for entry in ctx.workspace.of_kind("places"):
        for feature in ctx.entry_data(entry.entry_id)["features"]:
            props = feature.get("properties") or {}
            if place_id in (feature.get("id"), props.get("id")):
                geometry: dict[str, Any] = feature["geometry"]
                return geometry
    raise ToolError(
        f"no place with id {place_id!r} in this chat",
        hint="place ids are the `id` of features in places entries (recall_places); or "
        "pass a query",
    )


def _entry_polygons(ctx: ToolContext, entry_id: str, kind: str) -> list[dict[str, Any]]:
    entry = ctx.workspace.entries.get(entry_id)
    if entry is None or entry.kind != kind:
        known = ", ".join(e.entry_id for e in ctx.workspace.of_kind(kind)) or "none"
        raise ToolError(f"no {kind} entry {entry_id!r}", hint=f"the {kind} entries are {known}")
    polygons = [
        f["geometry"]
        for f in ctx.entry_data(entry_id)["features"]
        if (f.get("geometry") or {}).get("type") in ("Polygon", "MultiPolygon")
    ]
    if not polygons:
        raise ToolError(f"{entry_id} has no polygons to search within")
    return polygons


#: The corridor is computed in the sandbox: a valid route line can still cost GEOS's buffer
#: minutes and gigabytes (a zigzag whose offsets cross each other everywhere), and the
#: sandbox's child is killed at its time and memory limits.
_CORRIDOR_CODE: Final = (
    "import json\n"
    "line = shapely.geometry.shape(route)\n"
    "return json.loads(shapely.to_geojson(geo.buffer_m(line, half_width_m)))"
)


async def _corridor(ctx: ToolContext, corridor: RouteCorridor) -> dict[str, Any]:
    routes = ctx.workspace.of_kind("routes")
    entry_id = corridor.entry_id or (routes[-1].entry_id if routes else None)
    if entry_id is None:
        raise ToolError("this chat has no route yet", hint="call set_route first")
    entry = ctx.workspace.entries.get(entry_id)
    if entry is None or entry.kind != "routes":
        raise ToolError(f"no routes entry {entry_id!r}")
    lines = [f["geometry"] for f in ctx.entry_data(entry_id)["features"][:1]]
    if not lines:
        raise ToolError(f"{entry_id} holds no route")
    inputs = {"route": lines[0], "half_width_m": corridor.width_m / 2}
    result = await ctx.sandbox.arun(_CORRIDOR_CODE, inputs)
    if not result.ok or not isinstance(result.value, dict):
        why = result.error.message if result.error is not None else "no polygon came back"
        raise ToolError(
            f"the corridor around {entry_id} could not be computed: {why}"[:1_000],
            hint="ask for a narrower corridor, or search within a bounding box of the route",
        )
    polygon: dict[str, Any] = result.value
    return polygon


def _viewport(ctx: ToolContext) -> dict[str, Any]:
    view = ctx.workspace.view
    if view is None:
        raise ToolError(
            "the map's view is not known in this chat",
            hint="name an area (queries=[{'query': ...}]) or pass a bounding_box",
        )
    if view.bbox is not None:
        west, south, east, north = view.bbox
    else:
        assert view.center is not None
        # A zoom level's span, roughly: 360° / 2^zoom across, and as much north-south.
        lon, lat = view.center
        span = 360 / 2 ** (view.zoom or 12)
        west, east = lon - span / 2, lon + span / 2
        south, north = max(lat - span / 4, -90), min(lat + span / 4, 90)
    return dict(shapely.geometry.mapping(shapely.box(west, south, east, north)))
