"""Tools that fetch: places, boundaries, routes, reachable areas, traffic.

Each asks the configured provider (``ToolContext.providers``), writes what it found as an
entry with its provenance (``FetchMade``), or records the miss (``FetchMissed``) and tells
the model why. The recall tools read these entries back; these tools never read state
except to resolve what the model points at (a place id, a route for a corridor).
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any, Final, Literal

import shapely
from pydantic import BaseModel, ConfigDict, Field, model_validator

from geomint import geo
from geomint.provenance import LICENCE_NOT_STATED, Provenance
from geomint.providers._text import normalise
from geomint.providers.base import Avoid, Found, LonLat, ProviderMiss, TravelMode
from geomint.providers.offline import category_of
from geomint.tools._fetch import fetch_into_entry, no_provider
from geomint.tools._where import Where, place_point, resolve_where, union_bbox_km2
from geomint.tools.context import ToolContext
from geomint.tools.registry import ToolEntry
from geomint.tools.results import ToolError, ToolResult

__all__ = [
    "DISCOVER_PLACES",
    "FIND_REACHABLE_AREAS",
    "GET_BOUNDARIES",
    "GET_TRAFFIC_AREA_ANALYTICS",
    "GET_TRAFFIC_INCIDENTS",
    "LOCATE_PLACE",
    "PROVIDER_TOOLS",
    "SET_ROUTE",
]

#: The largest area traffic incidents are fetched for at once.
MAX_TRAFFIC_KM2: Final = 10_000.0


class Point(BaseModel):
    """A point: coordinates, a place found earlier, or a name to look up."""

    model_config = ConfigDict(extra="forbid")

    lon: float | None = Field(default=None, ge=-180, le=180)
    lat: float | None = Field(default=None, ge=-90, le=90)
    place_id: str | None = Field(default=None, description="The id of a place found earlier.")
    query: str | None = Field(default=None, max_length=200, description="A name to look up.")

    @model_validator(mode="after")
    def _one(self) -> Point:
        # lon without lat (or lat without lon) is half a point, never to be dropped quietly
        # beside a query or a place_id.
        if (self.lon is None) != (self.lat is None):
            raise ValueError("give lon and lat together, or a place_id or query instead")
        given = [self.lon is not None, self.place_id, self.query]
        if sum(bool(g) for g in given) != 1:
            raise ValueError("give exactly one of lon+lat, place_id or query")
        return self


def typed_by_model(role: str, points: Sequence[Point], ctx: ToolContext) -> tuple[Provenance, ...]:
    """The points the model typed as coordinates, each as the source it is: a figure
    computed from them rests on the model's recall, and its card says so."""
    return tuple(
        Provenance(
            source_id="model-typed",
            title=f"{role} typed by the model: {p.lon:.4f}, {p.lat:.4f}",
            publisher="the model",
            licence=LICENCE_NOT_STATED,
            retrieved_at=ctx.now(),
            evidence="model-typed",
        )
        for p in points
        if p.lon is not None and p.lat is not None
    )


async def _resolve_point(ctx: ToolContext, point: Point) -> LonLat:
    if point.lon is not None and point.lat is not None:
        return (point.lon, point.lat)
    if point.place_id is not None:
        lon, lat = place_point(ctx, point.place_id)["coordinates"][:2]
        return (float(lon), float(lat))
    providers = ctx.providers
    if providers is None or providers.geocoder is None:
        raise no_provider("geocoding")
    assert point.query is not None
    # The query is chat text that leaves for the provider: asked before it is sent.
    await ctx.require("network", {"geocode": point.query})
    try:
        found = await providers.geocoder.locate(point.query, limit=1)
    except ProviderMiss as miss:
        raise ToolError(f"{point.query!r} was not found: {miss.reason}") from None
    if not found.count:
        raise ToolError(f"{point.query!r} was not found")
    lon, lat = found.data["features"][0]["geometry"]["coordinates"][:2]
    return (float(lon), float(lat))


# -- locate_place --------------------------------------------------------------------------


class LocateInput(BaseModel):
    """Arguments of ``locate_place``."""

    model_config = ConfigDict(extra="forbid")

    query: str = Field(min_length=1, max_length=200, description="An address or a place name.")
    near: tuple[float, float] | None = Field(default=None, description="[lon, lat] to prefer")
    country: str | None = Field(default=None, max_length=2, description="ISO 3166 alpha-2")
    limit: int = Field(default=5, ge=1, le=20)


def found_label(query: str, found: Found) -> str:
    """An entry's label for places found by name: the name that matched, not the query
    ("Helsingin tuomiokirkko (Helsinki Cathedral)"), and how many more there are.

    Example:
        >>> from geomint.providers.base import Found
        >>> place = {"name": "Helsingin tuomiokirkko", "matched_name": "Helsinki Cathedral"}
        >>> other = {"name": "Tuomiokirkon krypta"}
        >>> data = {"type": "FeatureCollection", "features": [
        ...     {"type": "Feature", "geometry": None, "properties": p} for p in (place, other)]}
        >>> found = Found(data=data, sources=(), provider="offline", endpoint="")
        >>> found_label("Helsinki Cathedral", found)
        'Helsingin tuomiokirkko (Helsinki Cathedral) and 1 more'
    """
    features = found.data["features"]
    props = features[0].get("properties") or {}
    name = props.get("name") or query
    matched = props.get("matched_name")
    label = f"{name} ({matched})" if matched and matched != name else str(name)
    return label if len(features) == 1 else f"{label} and {len(features) - 1} more"


async def _locate(arguments: LocateInput, ctx: ToolContext) -> ToolResult:
    providers = ctx.providers
    if providers is None or providers.geocoder is None:
        raise no_provider("geocoding")
    geocoder = providers.geocoder
    request = arguments.model_dump()
    return await fetch_into_entry(
        ctx,
        tool="locate_place",
        kind="places",
        label=lambda found: found_label(arguments.query, found),
        request=request,
        call=lambda: geocoder.locate(
            arguments.query, near=arguments.near, country=arguments.country, limit=arguments.limit
        ),
    )


LOCATE_PLACE: Final = ToolEntry(
    needs=frozenset({"geocoder"}),
    description=(
        "Find where an address or a named place is (geocoding). Writes a places entry with "
        "the matches, best first."
    ),
    input_schema=LocateInput,
    execute=_locate,
    effects=frozenset({"network", "fetched_entry"}),
    classification_prompt="Find where an address, a city, a landmark or a named place is.",
    tags=("places",),
    example_prompts=("Where is the central station?", "Show me Helsinki"),
    related_tools=("discover_places", "fly_to"),
)


# -- discover_places ---------------------------------------------------------------------


class DiscoverInput(BaseModel):
    """Arguments of ``discover_places``."""

    model_config = ConfigDict(extra="forbid")

    query: str | None = Field(default=None, max_length=200, description="Free text, e.g. 'pizza'.")
    category: str | None = Field(default=None, max_length=100, description="e.g. 'cafe'.")
    near: Point | None = Field(default=None, description="Search around this point.")
    radius_m: float | None = Field(default=None, gt=0, le=100_000)
    where: Where | None = Field(default=None, description="Search within these areas.")
    limit: int = Field(default=50, ge=1, le=500)
    include_my_layers: bool = Field(
        default=True, description="Also search the points of the user's own (byod) layers."
    )


async def _discover(arguments: DiscoverInput, ctx: ToolContext) -> ToolResult:
    providers = ctx.providers
    if providers is None or providers.places is None:
        raise no_provider("place search")
    search = providers.places
    near = await _resolve_point(ctx, arguments.near) if arguments.near else None
    within: tuple[dict[str, Any], ...] = ()
    described: tuple[str, ...] = ()
    notes: list[str] = []
    if arguments.where is not None:
        areas = await resolve_where(ctx, arguments.where, providers)
        within, described = areas.polygons, areas.described
        notes.extend(areas.narrowed)
        if areas.ignored_viewport:
            notes.append("searched the named areas, not the map's view")
    label = arguments.query or arguments.category or "places"
    if described:
        label += " in " + ", ".join(described)
    request = {
        **arguments.model_dump(exclude={"where", "near"}),
        "near": list(near) if near else None,
        "within": list(described),
    }

    async def provider_and_own_layers() -> Found:
        found: Found | None = None
        missed: ProviderMiss | None = None
        try:
            found = await search.discover(
                query=arguments.query,
                category=arguments.category,
                near=near,
                radius_m=arguments.radius_m,
                within=within,
                limit=arguments.limit,
            )
        except ProviderMiss as miss:
            missed = miss
        own, own_sources = (
            _own_layer_places(ctx, arguments, near, within)
            if arguments.include_my_layers
            else ([], ())
        )
        if not own:
            if missed is not None:
                raise missed
            assert found is not None
            return found
        features = [*(found.data["features"] if found else []), *own][: arguments.limit]
        notes = [*(found.notes if found else ())]
        notes.append(f"{len(own)} from your own layers")
        if missed is not None:
            notes.append(f"{missed.provider}: {missed.reason}")
        return Found(
            data={"type": "FeatureCollection", "features": features},
            sources=tuple(dict.fromkeys((*(found.sources if found else ()), *own_sources))),
            provider=found.provider if found else search.name,
            endpoint=found.endpoint if found else "own layers",
            request=found.request if found else {},
            notes=tuple(notes),
        )

    result = await fetch_into_entry(
        ctx,
        tool="discover_places",
        kind="places",
        label=label,
        request=request,
        call=provider_and_own_layers,
        typed=typed_by_model("search centre", [arguments.near] if arguments.near else [], ctx),
    )
    if notes:
        result.model.setdefault("notes", []).extend(notes)
    outlined = _with_outlines(ctx, result)
    if outlined:
        result.model.setdefault("notes", []).append(outlined)
    return result


def _with_outlines(ctx: ToolContext, result: ToolResult) -> str:
    """A note naming the places found that have an outline (a park, a square, a
    building): as points they under-count what lies in them."""
    entry_id = result.model.get("entry_id")
    if not entry_id:
        return ""
    names = [
        str(props.get("name"))
        for f in ctx.entry_data(entry_id)["features"]
        if (props := f.get("properties") or {}).get("has_outline")
    ]
    if not names:
        return ""
    shown = ", ".join(repr(n) for n in names[:5]) + (
        f" and {len(names) - 5} more" if len(names) > 5 else ""
    )
    return (
        f"{len(names)} of these are points of an area with an outline ({shown}): a point "
        "stands for the whole area only roughly; get_boundaries(queries=[...]) with their "
        "names gives their polygons"
    )


def _own_layer_places(
    ctx: ToolContext,
    arguments: DiscoverInput,
    near: LonLat | None,
    within: tuple[dict[str, Any], ...],
) -> tuple[list[dict[str, Any]], tuple[Any, ...]]:
    """Points of the chat's byod layers that match the query or category, in the area.

    A layer the user brought is searched like the provider's data: a text matches any text
    property, a category matches ``category``, ``kind``, ``type`` or ``amenity``.
    """
    wanted_text = normalise(arguments.query) if arguments.query else None
    wanted_kind = normalise(category_of(arguments.category)) if arguments.category else None
    area = None
    if within:
        area = shapely.union_all([shapely.geometry.shape(p) for p in within])
    if near is not None:
        circle = geo.buffer_m(shapely.Point(near), arguments.radius_m or 1_000.0)
        area = circle if area is None else area.intersection(circle)
    found: list[dict[str, Any]] = []
    sources: list[Any] = []
    for entry in ctx.workspace.of_kind("byod"):
        matched = 0
        for feature in ctx.entry_data(entry.entry_id)["features"]:
            geometry = feature.get("geometry") or {}
            props = feature.get("properties") or {}
            if geometry.get("type") != "Point":
                continue
            texts = [normalise(str(v)) for v in props.values() if isinstance(v, str)]
            if wanted_text and not any(wanted_text in t for t in texts):
                continue
            if wanted_kind:
                kinds = {
                    normalise(str(props.get(k)))
                    for k in ("category", "kind", "type", "amenity")
                    if props.get(k)
                }
                if wanted_kind not in kinds:
                    continue
            lon, lat = geometry["coordinates"][:2]
            if area is not None and not area.contains(shapely.Point(lon, lat)):
                continue
            found.append({**feature, "properties": {**props, "provider": entry.entry_id}})
            matched += 1
        if matched:
            sources.extend(entry.latest.sources)
    return found, tuple(sources)


DISCOVER_PLACES: Final = ToolEntry(
    needs=frozenset({"places"}),
    description=(
        "Search places by free text or category, near a point (with a radius) and/or within "
        "areas (`where`: viewport, bounding_box, named queries, place_ids, geometries entries, "
        "a range, or a corridor along a route). Writes a places entry."
    ),
    input_schema=DiscoverInput,
    execute=_discover,
    effects=frozenset({"network", "fetched_entry"}),
    classification_prompt="Find places (cafés, schools, shops...) by kind or name in an area.",
    tags=("places",),
    examples=(
        "discover_places(category='cafe', where={'mode': 'within', "
        "'queries': [{'query': 'Kluuvi'}]})",
    ),
    example_prompts=("Cafés near the central station", "Pharmacies along my route"),
    related_tools=("locate_place", "analyse_data", "update_places_display"),
)


# -- get_boundaries ------------------------------------------------------------------------


class BoundariesInput(BaseModel):
    """Arguments of ``get_boundaries``."""

    model_config = ConfigDict(extra="forbid")

    queries: list[str] = Field(default_factory=list, max_length=10, description="Named places.")
    list_names: bool = Field(
        default=False,
        description="List the names of the outlines the provider has instead (where it "
        "has a finite list: the offline provider's central Helsinki).",
    )

    @model_validator(mode="after")
    def _something_asked(self) -> BoundariesInput:
        if not self.queries and not self.list_names:
            raise ValueError("give queries (the names of places), or list_names=true")
        return self


async def _boundaries(arguments: BoundariesInput, ctx: ToolContext) -> ToolResult:
    providers = ctx.providers
    if providers is None or providers.boundaries is None:
        raise no_provider("boundaries")
    source = providers.boundaries
    if arguments.list_names:
        return _boundary_names(source)

    async def all_of() -> Any:
        # One unknown name must not lose the others: found ones are kept, misses noted.
        found, missed = [], []
        for query in arguments.queries:
            try:
                found.append(await source.boundary(query))
            except ProviderMiss as miss:
                if len(arguments.queries) == 1:
                    raise
                missed.append(f"{query!r}: {miss.reason}")
        if not found:
            raise ProviderMiss("; ".join(missed), code="not_found", provider=source.name)
        features = [f for one in found for f in one.data["features"]]
        sources = tuple({s: None for one in found for s in one.sources})
        first = found[0]
        return type(first)(
            data={"type": "FeatureCollection", "features": features},
            sources=sources,
            provider=first.provider,
            endpoint=first.endpoint,
            request={"queries": arguments.queries},
            notes=tuple(f"no boundary for {m}" for m in missed),
        )

    return await fetch_into_entry(
        ctx,
        tool="get_boundaries",
        kind="geometries",
        label=", ".join(arguments.queries),
        request={"queries": arguments.queries},
        call=all_of,
    )


def _boundary_names(source: object) -> ToolResult:
    """The names of the outlines a provider with a finite list has, by kind."""
    listing = getattr(source, "boundary_names", None)
    if not callable(listing):
        return ToolResult(
            model={
                "names": None,
                "note": f"{getattr(source, 'name', 'the provider')} finds outlines by name "
                "wherever it has them and keeps no list: ask by name",
            }
        )
    names: dict[str, list[str]] = listing()
    return ToolResult(
        model={
            "names": names,
            "note": "besides these, every country's outline; ask get_boundaries with "
            "queries=[names]",
        }
    )


GET_BOUNDARIES: Final = ToolEntry(
    needs=frozenset({"boundaries"}),
    description=(
        "Get the boundary polygons of named places (countries, cities, districts, parks). "
        "list_names=true lists the outlines the provider has, where it has a finite list."
    ),
    input_schema=BoundariesInput,
    execute=_boundaries,
    effects=frozenset({"network", "fetched_entry"}),
    classification_prompt="Get the outline or boundary polygon of a named area.",
    tags=("places", "geometries"),
    example_prompts=("Show the boundary of Finland", "Which places are inside the park?"),
    related_tools=("analyse_data", "process_data", "update_geometries_display"),
)


# -- set_route -----------------------------------------------------------------------------


class RouteInput(BaseModel):
    """Arguments of ``set_route``."""

    model_config = ConfigDict(extra="forbid")

    origin: Point
    destination: Point
    waypoints: list[Point] = Field(default_factory=list, max_length=20)
    mode: TravelMode = "car"
    avoid: list[Avoid] = Field(default_factory=list)
    depart_at: datetime | None = None
    alternatives: int = Field(default=0, ge=0, le=3)


async def _route(arguments: RouteInput, ctx: ToolContext) -> ToolResult:
    providers = ctx.providers
    if providers is None or providers.router is None:
        raise no_provider("routing")
    router = providers.router
    points = [
        await _resolve_point(ctx, p)
        for p in (arguments.origin, *arguments.waypoints, arguments.destination)
    ]
    request = {
        "waypoints": [list(p) for p in points],
        "mode": arguments.mode,
        "avoid": list(arguments.avoid),
        "depart_at": arguments.depart_at,
        "alternatives": arguments.alternatives,
    }
    label = f"{arguments.mode} route"
    if arguments.avoid:
        label += " avoiding " + ", ".join(arguments.avoid)
    result = await fetch_into_entry(
        ctx,
        tool="set_route",
        kind="routes",
        label=label,
        request=request,
        typed=(
            *typed_by_model("origin", [arguments.origin], ctx),
            *typed_by_model("waypoint", arguments.waypoints, ctx),
            *typed_by_model("destination", [arguments.destination], ctx),
        ),
        call=lambda: router.route(
            points,
            mode=arguments.mode,
            avoid=arguments.avoid,
            depart_at=arguments.depart_at,
            alternatives=arguments.alternatives,
        ),
    )
    entry_id = result.model.get("entry_id")
    if isinstance(entry_id, str):
        summaries = [f["properties"].get("summary") for f in ctx.entry_data(entry_id)["features"]]
        result.model["summaries"] = summaries[:4]
    return result


SET_ROUTE: Final = ToolEntry(
    needs=frozenset({"router"}),
    description=(
        "Plan a route from an origin to a destination (each: lon+lat, a place_id, or a query), "
        "through waypoints, by car, walk, bike or truck, avoiding motorways, tolls, ferries or "
        "unpaved roads. Writes a routes entry with summary (length_m, duration_s) and sections."
    ),
    input_schema=RouteInput,
    execute=_route,
    effects=frozenset({"network", "fetched_entry"}),
    classification_prompt="Plan a route or directions between places.",
    tags=("route",),
    example_prompts=("Route from the station to the cathedral avoiding motorways",),
    related_tools=("discover_places", "find_reachable_areas", "get_traffic_incidents"),
)


# -- find_reachable_areas ----------------------------------------------------------------------


class RangeInput(BaseModel):
    """Arguments of ``find_reachable_areas``."""

    model_config = ConfigDict(extra="forbid")

    origin: Point
    time_s: float | None = Field(default=None, gt=0, le=4 * 3600)
    distance_m: float | None = Field(default=None, gt=0, le=500_000)
    mode: TravelMode = "car"
    depart_at: datetime | None = None

    @model_validator(mode="after")
    def _budget(self) -> RangeInput:
        if (self.time_s is None) == (self.distance_m is None):
            raise ValueError("give a time_s or a distance_m budget, not both")
        return self


async def _ranges(arguments: RangeInput, ctx: ToolContext) -> ToolResult:
    providers = ctx.providers
    if providers is None or providers.ranges is None:
        raise no_provider("reachable areas")
    ranges = providers.ranges
    origin = await _resolve_point(ctx, arguments.origin)
    budget = (
        f"{arguments.time_s / 60:g} min"
        if arguments.time_s is not None
        else f"{arguments.distance_m:g} m"
    )
    request = {
        "origin": list(origin),
        "time_s": arguments.time_s,
        "distance_m": arguments.distance_m,
        "mode": arguments.mode,
    }
    return await fetch_into_entry(
        ctx,
        tool="find_reachable_areas",
        kind="ranges",
        label=f"reachable by {arguments.mode} in {budget}",
        request=request,
        typed=typed_by_model("origin", [arguments.origin], ctx),
        call=lambda: ranges.reachable(
            origin,
            time_s=arguments.time_s,
            distance_m=arguments.distance_m,
            mode=arguments.mode,
            depart_at=arguments.depart_at,
        ),
    )


FIND_REACHABLE_AREAS: Final = ToolEntry(
    needs=frozenset({"ranges"}),
    description=(
        "The area reachable from an origin within a time (time_s) or distance (distance_m) "
        "budget, by car, walk, bike or truck (an isochrone). Writes a ranges entry."
    ),
    input_schema=RangeInput,
    execute=_ranges,
    effects=frozenset({"network", "fetched_entry"}),
    classification_prompt="Find the area reachable within some minutes or metres (isochrone).",
    tags=("route",),
    example_prompts=("Cafés within 10 minutes' walk of the station",),
    related_tools=("discover_places", "analyse_data"),
)


# -- traffic -------------------------------------------------------------------------------


class IncidentsInput(BaseModel):
    """Arguments of ``get_traffic_incidents``."""

    model_config = ConfigDict(extra="forbid")

    where: Where = Field(default_factory=lambda: Where(viewport=True))


async def _incidents(arguments: IncidentsInput, ctx: ToolContext) -> ToolResult:
    providers = ctx.providers
    if providers is None or providers.traffic is None:
        raise no_provider("traffic incidents")
    traffic = providers.traffic
    areas = await resolve_where(ctx, arguments.where, providers)
    bbox = areas.bbox
    km2 = union_bbox_km2(bbox)
    if km2 > MAX_TRAFFIC_KM2:
        raise ToolError(
            f"the area ({', '.join(areas.described)}) spans {km2:,.0f} km², over the "
            f"{MAX_TRAFFIC_KM2:,.0f} km² traffic incidents are fetched for at once",
            hint="narrow it: name a city or district, a smaller bounding_box, or a corridor "
            "along a route",
        )
    result = await fetch_into_entry(
        ctx,
        tool="get_traffic_incidents",
        kind="incidents",
        label="traffic incidents in " + ", ".join(areas.described),
        request={"bbox": list(bbox), "within": list(areas.described)},
        call=lambda: traffic.incidents(bbox),
        extra={"area_km2": round(km2, 1)},
    )
    if areas.narrowed:
        result.model.setdefault("notes", []).extend(areas.narrowed)
    if areas.ignored_viewport:
        result.model.setdefault("notes", []).append(
            "answered for the named areas, not the map's view"
        )
    return result


GET_TRAFFIC_INCIDENTS: Final = ToolEntry(
    needs=frozenset({"traffic"}),
    description=(
        "Traffic incidents (jams, closures, roadworks) within `where` (default: the map's view; "
        "a named area wins over the view). The areas' union box may span at most "
        f"{MAX_TRAFFIC_KM2:,.0f} km². Writes an incidents entry."
    ),
    input_schema=IncidentsInput,
    execute=_incidents,
    effects=frozenset({"network", "fetched_entry"}),
    classification_prompt="Traffic jams, incidents, closures or roadworks in an area.",
    tags=("traffic",),
    example_prompts=("Any traffic jams in Helsinki?", "Roadworks along my route"),
    related_tools=("cluster_incidents", "set_route"),
)


class AnalyticsInput(BaseModel):
    """Arguments of ``get_traffic_area_analytics``."""

    model_config = ConfigDict(extra="forbid")

    where: Where
    kind: Literal["congestion", "speed"] = "congestion"


async def _analytics(arguments: AnalyticsInput, ctx: ToolContext) -> ToolResult:
    providers = ctx.providers
    analytics = getattr(providers.traffic, "area_analytics", None) if providers else None
    if analytics is None:
        raise no_provider("traffic area analytics")
    areas = await resolve_where(ctx, arguments.where, providers)
    geometry = areas.area
    return await fetch_into_entry(
        ctx,
        tool="get_traffic_area_analytics",
        kind="traffic_area_analytics",
        label=f"traffic {arguments.kind} in " + ", ".join(areas.described),
        request={"within": list(areas.described), "kind": arguments.kind},
        call=lambda: analytics(geometry, kind=arguments.kind),
    )


GET_TRAFFIC_AREA_ANALYTICS: Final = ToolEntry(
    needs=frozenset({"traffic_analytics"}),
    description="Traffic statistics (congestion, speeds) over an area, where a provider has them.",
    input_schema=AnalyticsInput,
    execute=_analytics,
    effects=frozenset({"network", "fetched_entry"}),
    classification_prompt="Typical congestion or speeds over an area (traffic statistics).",
    tags=("traffic",),
    related_tools=("analyse_data",),
)

PROVIDER_TOOLS: Final[dict[str, ToolEntry[Any]]] = {
    "locate_place": LOCATE_PLACE,
    "discover_places": DISCOVER_PLACES,
    "get_boundaries": GET_BOUNDARIES,
    "set_route": SET_ROUTE,
    "find_reachable_areas": FIND_REACHABLE_AREAS,
    "get_traffic_incidents": GET_TRAFFIC_INCIDENTS,
    "get_traffic_area_analytics": GET_TRAFFIC_AREA_ANALYTICS,
}
