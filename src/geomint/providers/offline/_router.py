"""Routes and reachable areas on the bundled road graph (the offline provider's router).

Shortest paths by travel time: Dijkstra over the graph's directed edges, the edges a mode
may use, and a speed per mode (walking and cycling at steady paces, driving at the way's
limit or its class's usual urban speed). Dijkstra is written here with :mod:`heapq`: the
graph has a few thousand nodes, and neither networkx nor scipy is a dependency of geomint
for the sake of one small search. Every answer's notes say how it was built (the graph,
the pace, the budget, how far each point was from the graph) and what it may count too
much or too little, so the model can say so.
"""

from __future__ import annotations

import heapq
import itertools
import json
import math
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from functools import cache
from typing import Any, Final

import numpy as np
import shapely

from geomint.provenance import Provenance
from geomint.providers import bundled
from geomint.providers.base import (
    Avoid,
    Found,
    LonLat,
    ProviderMiss,
    TravelMode,
    route_summary,
)
from geomint.providers.offline._coverage import nearest_covered

__all__ = ["reachable", "route"]

_NAME: Final = "offline"
_SNAP_M: Final = 300.0
_MODE_BITS: Final = {
    "walk": bundled.FOOT,
    "bike": bundled.BICYCLE,
    "car": bundled.CAR,
    "truck": bundled.CAR,
}
#: Steady paces, m/s: 5 km/h walking, 15 km/h cycling.
_PACE: Final = {"walk": 5 / 3.6, "bike": 15 / 3.6}
#: Usual urban driving speeds by class, km/h, where a way has no limit tagged.
_CLASS_KMH: Final = {
    "motorway": 80,
    "motorway_link": 50,
    "trunk": 60,
    "trunk_link": 40,
    "primary": 40,
    "primary_link": 30,
    "secondary": 35,
    "secondary_link": 30,
    "tertiary": 30,
    "tertiary_link": 25,
    "unclassified": 30,
    "residential": 25,
    "living_street": 10,
    "service": 15,
    "road": 25,
}
_MOTORWAYS: Final = frozenset({"motorway", "motorway_link", "trunk", "trunk_link"})
_UNPAVED: Final = frozenset(
    {"unpaved", "gravel", "fine_gravel", "dirt", "earth", "ground", "grass", "sand", "mud"}
)
#: Driving in a city centre is slower than the limit: junctions, lights, parking.
_URBAN_FACTOR: Final = 0.7
#: Holes in a reachable area smaller than this (m²) are the blocks the reached streets go
#: round: filled, or a café set back from the street would lie outside the area.
_BLOCK_M2: Final = 40_000.0
#: How far either side of a street reached the area reaches, metres.
_HALF_WIDTH_M: Final = 25.0
#: What the bundled graph is, for the notes (``bundled.source`` has its licence and date).
_GRAPH: Final = "the bundled OpenStreetMap street and path graph of central Helsinki"
_WHO: Final = {"walk": "walking", "bike": "cycling", "car": "cars", "truck": "trucks"}


@dataclass(frozen=True)
class _Graph:
    lon: np.ndarray
    lat: np.ndarray
    outgoing: list[list[int]]


@cache
def _graph() -> _Graph:
    graph = bundled.road_graph()
    outgoing: list[list[int]] = [[] for _ in graph.lon]
    for edge, start in enumerate(graph.source):
        outgoing[start].append(edge)
    return _Graph(np.array(graph.lon), np.array(graph.lat), outgoing)


@dataclass(frozen=True)
class _Network:
    """What a mode (with what it avoids) may use: its edges, and where points may snap."""

    allowed: np.ndarray
    component: np.ndarray


@cache
def _network(mode: TravelMode, avoid: frozenset[Avoid]) -> _Network:
    # A mode's edges and its connected part depend only on the mode and what it avoids,
    # and take a pass over every edge in Python: worked out once per pair, not per call.
    allowed = _allowed(mode, avoid)
    component = _main_component(allowed)
    allowed.setflags(write=False)
    component.setflags(write=False)
    return _Network(allowed, component)


def _allowed(mode: TravelMode, avoid: frozenset[Avoid]) -> np.ndarray:
    graph = bundled.road_graph()
    bit = _MODE_BITS[mode]
    allowed = np.array([bool(bits & bit) for bits in graph.modes])
    if not avoid:
        return allowed
    for edge, way_index in enumerate(graph.way):
        if not allowed[edge]:
            continue
        way = graph.ways[way_index]
        refused = (
            ("motorways" in avoid and way.highway in _MOTORWAYS)
            or ("tolls" in avoid and way.tags.get("toll") == "yes")
            or ("unpaved" in avoid and way.tags.get("surface") in _UNPAVED)
            or ("ferries" in avoid and way.tags.get("route") == "ferry")
        )
        if refused:
            allowed[edge] = False
    return allowed


@cache
def _seconds(mode: TravelMode) -> np.ndarray:
    graph = bundled.road_graph()
    lengths = np.array(graph.length_m)
    if mode in _PACE:
        paced: np.ndarray = lengths / _PACE[mode]
        paced.setflags(write=False)
        return paced
    speeds = np.array(
        [
            (graph.ways[w].maxspeed_kmh or _CLASS_KMH.get(graph.ways[w].highway, 20))
            * _URBAN_FACTOR
            for w in graph.way
        ]
    )
    if mode == "truck":
        speeds = np.minimum(speeds, 50 * _URBAN_FACTOR)
    driven: np.ndarray = lengths / (speeds / 3.6)
    driven.setflags(write=False)
    return driven


def _main_component(allowed: np.ndarray) -> np.ndarray:
    """The nodes of the largest strongly connected part of the graph a mode may use.

    The extract is cut at its edges and has islands (a footway in a courtyard, a one-way
    stub): a point snapped onto one could reach nothing. Snapping only onto the part where
    every node reaches every other keeps routes and ranges from failing for that reason.
    The part is found from its busiest node, forwards and backwards.
    """
    graph = bundled.road_graph()
    count = len(graph.lon)
    sources = np.array(graph.source)[allowed]
    targets = np.array(graph.target)[allowed]
    forward: list[list[int]] = [[] for _ in range(count)]
    backward: list[list[int]] = [[] for _ in range(count)]
    for a, b in zip(sources.tolist(), targets.tolist(), strict=True):
        forward[a].append(b)
        backward[b].append(a)
    if not len(sources):
        return np.zeros(count, dtype=bool)
    seed = int(np.argmax(np.bincount(sources, minlength=count)))

    def reach(adjacent: list[list[int]]) -> np.ndarray:
        seen = np.zeros(count, dtype=bool)
        seen[seed] = True
        stack = [seed]
        while stack:
            for nxt in adjacent[stack.pop()]:
                if not seen[nxt]:
                    seen[nxt] = True
                    stack.append(nxt)
        return seen

    component: np.ndarray = reach(forward) & reach(backward)
    return component


def _metres(point: LonLat, lon: np.ndarray, lat: np.ndarray) -> np.ndarray:
    """Distances from ``point`` to each (lon, lat), in a plane: exact enough over ~2 km."""
    lon0, lat0 = point
    dx = (lon - lon0) * math.cos(math.radians(lat0)) * 111_320
    dy = (lat - lat0) * 110_540
    distances: np.ndarray = np.hypot(dx, dy)
    return distances


def _snap(point: LonLat, network: _Network, what: str) -> int:
    graph = bundled.road_graph()
    usable = network.component
    nodes = _graph()
    candidates = np.flatnonzero(usable)
    lon0, lat0 = point
    distances = _metres(point, nodes.lon[candidates], nodes.lat[candidates])
    best = int(np.argmin(distances)) if len(candidates) else -1
    if best < 0 or distances[best] > _SNAP_M:
        west, south, east, north = graph.bbox
        outside = not (west <= lon0 <= east and south <= lat0 <= north)
        raise ProviderMiss(
            f"{what} ({lon0:.5f}, {lat0:.5f}) is not near the offline road graph, which covers "
            f"central Helsinki only ({west:.3f}, {south:.3f}, {east:.3f}, {north:.3f}); "
            + (f"{nearest_covered(lon0, lat0)}; " if outside else "")
            + "configure TomTom or OSRM/Valhalla to route elsewhere",
            code="unsupported",
            provider=_NAME,
            endpoint="offline:helsinki_roads",
        )
    return int(candidates[best])


def _dijkstra(
    start: int,
    cost: np.ndarray,
    allowed: np.ndarray,
    *,
    stop: int | None = None,
    budget: float | None = None,
) -> tuple[dict[int, float], dict[int, int]]:
    graph = bundled.road_graph()
    outgoing = _graph().outgoing
    best: dict[int, float] = {start: 0.0}
    via: dict[int, int] = {}
    queue = [(0.0, start)]
    done: set[int] = set()
    while queue:
        spent, node = heapq.heappop(queue)
        if node in done:
            continue
        done.add(node)
        if node == stop:
            break
        for edge in outgoing[node]:
            if not allowed[edge]:
                continue
            nxt = graph.target[edge]
            total = spent + float(cost[edge])
            if budget is not None and total > budget:
                continue
            if total < best.get(nxt, math.inf):
                best[nxt] = total
                via[nxt] = edge
                heapq.heappush(queue, (total, nxt))
    return best, via


def _corridor_area(
    lines: list[list[tuple[float, float]]], origin: LonLat, half_width_m: float
) -> Any:
    """The streets reached, ``half_width_m`` either side, and the blocks they enclose
    (holes under :data:`_BLOCK_M2`), as one polygon in lon/lat.

    Buffered in a plane tangent at the origin (over the ~2 km of the offline graph that is
    exact to centimetres), one segment at a time and then unioned: GEOS buffers a
    MultiLineString of 8,000 overlapping segments in ~13 s, the segments one by one plus
    a cascaded union in ~0.3 s, to the same area.
    """
    lat0 = math.radians(origin[1])
    x_scale = 111_320.0 * math.cos(lat0)
    y_scale = 110_540.0
    ox, oy = origin

    def to_plane(xy: np.ndarray) -> np.ndarray:
        return np.column_stack(((xy[:, 0] - ox) * x_scale, (xy[:, 1] - oy) * y_scale))

    def to_lonlat(xy: np.ndarray) -> np.ndarray:
        return np.column_stack((xy[:, 0] / x_scale + ox, xy[:, 1] / y_scale + oy))

    segments = shapely.transform(shapely.linestrings(lines), to_plane)
    buffered = shapely.union_all(shapely.buffer(segments, half_width_m, quad_segs=4))
    filled = shapely.union_all(
        [
            shapely.Polygon(
                part.exterior,
                [ring for ring in part.interiors if shapely.Polygon(ring).area >= _BLOCK_M2],
            )
            for part in shapely.get_parts(buffered)
        ]
    )
    return shapely.transform(shapely.simplify(filled, 2.0), to_lonlat)


def _snapped_m(points: Sequence[LonLat], nodes: Sequence[int]) -> list[float]:
    """How far each point is from the graph node it was snapped to, metres."""
    graph = _graph()
    return [
        float(_metres(p, graph.lon[[n]], graph.lat[[n]])[0])
        for p, n in zip(points, nodes, strict=True)
    ]


def _route_notes(
    mode: TravelMode,
    snapped: Sequence[float],
    *,
    depart_at: datetime | None,
    alternatives: int,
) -> list[str]:
    """How a route was found and timed, and what it leaves out."""
    away = ", ".join(f"{m:.0f} m" for m in snapped)
    notes = [
        f"the fastest way for {_WHO[mode]} on {_GRAPH}, timed {_pace(mode)}: travel times "
        "are estimates, with no traffic",
        f"the route runs between the graph's nodes nearest the waypoints ({away} away, in "
        "order): the way to and from them is not in its length or time",
    ]
    if alternatives:
        asked = f"{alternatives} alternatives" if alternatives > 1 else "alternative"
        notes.append(
            f"the offline router finds one route: the {asked} asked for "
            f"{'were' if alternatives > 1 else 'was'} not looked for"
        )
    if depart_at is not None:
        notes.append(
            "the departure time only dates the summary: with no traffic, travel times are "
            "the same at any hour"
        )
    return notes


def _pace(mode: TravelMode) -> str:
    """How travel time is reckoned for ``mode``, in words for a note."""
    if mode in _PACE:
        return f"at a steady {_PACE[mode] * 3.6:g} km/h"
    cap = f", at most {50 * _URBAN_FACTOR:g} km/h" if mode == "truck" else ""
    return (
        "at each way's speed limit (or its class's usual urban speed) times "
        f"{_URBAN_FACTOR:g} for city-centre driving{cap}"
    )


def _reach_notes(
    mode: TravelMode,
    *,
    time_s: float | None,
    distance_m: float | None,
    snapped_m: float,
    at_edge: bool,
    depart_at: datetime | None,
) -> list[str]:
    """How a reachable area was built, and where it may count too much or too little."""
    budget = (
        f"{time_s / 60:g} min {_pace(mode)}, with no traffic"
        if time_s is not None
        else f"{distance_m:g} m along them"
    )
    block_ha = f"{_BLOCK_M2 / 10_000:g} ha"
    notes = [
        f"built on {_GRAPH}: the ways {_WHO[mode]} may use, followed from the graph's node "
        f"nearest the origin ({snapped_m:.0f} m away) for up to {budget}",
        f"the area is every street reached, {_HALF_WIDTH_M:g} m either side (the street the "
        f"budget runs out on, up to where it does), with every gap under {block_ha} that "
        "those streets enclose filled in",
        "it may over-count: a filled-in gap (a block, with its buildings and courtyards) "
        "counts as reached though no path into it was followed",
        f"it may under-count: a gap of {block_ha} or more (a large park, a rail yard, "
        f"water) is left out beyond {_HALF_WIDTH_M:g} m of its streets, and paths missing "
        "from the graph were not followed",
    ]
    if at_edge:
        notes.append(
            "the area reaches the edge of the offline road graph: streets beyond it are not "
            "in the graph, so the area is cut there and under-counts on that side"
        )
    if depart_at is not None:
        notes.append(
            "the departure time was not used: the offline graph has no traffic, so the area "
            "is the same at any hour"
        )
    return notes


def _source() -> Provenance:
    return Provenance(**bundled.source("helsinki_roads"))


def route(
    waypoints: Sequence[LonLat],
    *,
    mode: TravelMode = "car",
    avoid: Sequence[Avoid] = (),
    depart_at: datetime | None = None,
    alternatives: int = 0,
) -> Found:
    """The fastest route through ``waypoints`` in order (one route: no alternatives).

    The notes say how it was found and timed, and what it leaves out.
    """
    if len(waypoints) < 2:
        raise ProviderMiss(
            "a route needs an origin and a destination", code="refused", provider=_NAME
        )
    graph = bundled.road_graph()
    network = _network(mode, frozenset(avoid))
    allowed = network.allowed
    seconds = _seconds(mode)
    nodes = [
        _snap(
            p,
            network,
            "origin" if i == 0 else "a waypoint" if i < len(waypoints) - 1 else "the destination",
        )
        for i, p in enumerate(waypoints)
    ]
    coordinates: list[list[float]] = []
    sections: list[dict[str, Any]] = []
    streets: list[str] = []
    length = duration = 0.0
    for leg, (start, end) in enumerate(itertools.pairwise(nodes)):
        best, via = _dijkstra(start, seconds, allowed, stop=end)
        if end not in best:
            raise ProviderMiss(
                f"no {mode} route between waypoints {leg} and {leg + 1} on the offline road "
                f"graph{' avoiding ' + ', '.join(avoid) if avoid else ''}",
                code="not_found",
                provider=_NAME,
                endpoint="offline:helsinki_roads",
            )
        edges: list[int] = []
        node = end
        while node != start:
            edge = via[node]
            edges.append(edge)
            node = graph.source[edge]
        edges.reverse()
        first = len(coordinates) - 1 if coordinates else 0
        if not coordinates:
            coordinates.append([graph.lon[start], graph.lat[start]])
        for edge in edges:
            target = graph.target[edge]
            coordinates.append([graph.lon[target], graph.lat[target]])
            length += graph.length_m[edge]
            duration += float(seconds[edge])
            name = graph.ways[graph.way[edge]].name
            if name and (not streets or streets[-1] != name):
                streets.append(name)
        sections.append(
            {"start_index": first, "end_index": len(coordinates) - 1, "kind": "leg", "leg": leg}
        )
    if len(coordinates) < 2:
        coordinates.append(list(coordinates[0]))
    departure = depart_at or datetime.now(UTC)
    feature = {
        "type": "Feature",
        "geometry": {"type": "LineString", "coordinates": coordinates},
        "properties": {
            "summary": route_summary(length, duration, departure),
            "sections": sections,
            "mode": mode,
            "avoid": list(avoid),
            "streets": streets[:40],
            "provider": _NAME,
        },
    }
    return Found(
        data={"type": "FeatureCollection", "features": [feature]},
        sources=(_source(),),
        provider=_NAME,
        endpoint="offline:helsinki_roads",
        request={"waypoints": [list(p) for p in waypoints], "mode": mode, "avoid": list(avoid)},
        notes=tuple(
            _route_notes(
                mode,
                _snapped_m(waypoints, nodes),
                depart_at=depart_at,
                alternatives=alternatives,
            )
        ),
    )


def reachable(
    origin: LonLat,
    *,
    time_s: float | None = None,
    distance_m: float | None = None,
    mode: TravelMode = "car",
    depart_at: datetime | None = None,
) -> Found:
    """The area reachable from ``origin`` within a time or distance budget.

    The notes say how it was built (the graph, the mode's pace, the budget, how far the
    origin was from the graph) and where it may count too much or too little.
    """
    if (time_s is None) == (distance_m is None):
        raise ProviderMiss("give a time or a distance budget", code="refused", provider=_NAME)
    graph = bundled.road_graph()
    network = _network(mode, frozenset())
    allowed = network.allowed
    cost = _seconds(mode) if time_s is not None else np.array(graph.length_m)
    budget = float(time_s if time_s is not None else distance_m)  # type: ignore[arg-type]
    start = _snap(origin, network, "the origin")
    best, _ = _dijkstra(start, cost, allowed, budget=budget)
    # The way from the origin to the street it was snapped to is reached too, so the area
    # holds the origin.
    lines = [[(origin[0], origin[1]), (graph.lon[start], graph.lat[start])]]
    outgoing = _graph().outgoing
    # A two-way street reached from both ends is one line, not two: buffering each
    # direction doubled the work (0.41 s against 0.19 s for a 10-minute walk).
    whole: set[tuple[int, int]] = set()
    for node, spent in best.items():
        for edge in outgoing[node]:
            if not allowed[edge]:
                continue
            target = graph.target[edge]
            a = (graph.lon[node], graph.lat[node])
            b = (graph.lon[target], graph.lat[target])
            if target in best:
                street = (min(node, target), max(node, target))
                if street not in whole:
                    whole.add(street)
                    lines.append([a, b])
            else:
                # The budget runs out along this edge: keep the part that is reached.
                share = (budget - spent) / float(cost[edge]) if cost[edge] > 0 else 0.0
                if share > 0:
                    lines.append([a, (a[0] + (b[0] - a[0]) * share, a[1] + (b[1] - a[1]) * share)])
    if len(lines) == 1:
        raise ProviderMiss(
            "nothing is reachable from there within the budget", code="not_found", provider=_NAME
        )
    area = _corridor_area(lines, origin, _HALF_WIDTH_M)
    budget_props = {"time_s": time_s} if time_s is not None else {"distance_m": distance_m}
    feature = {
        "type": "Feature",
        # Lists, as JSON reads back; the exterior counter-clockwise, as RFC 7946 asks.
        "geometry": json.loads(shapely.to_geojson(shapely.orient_polygons(area))),
        "properties": {
            "origin": list(origin),
            "budget": budget_props,
            "mode": mode,
            "reached_nodes": len(best),
            "provider": _NAME,
        },
    }
    west, south, east, north = graph.bbox
    notes = _reach_notes(
        mode,
        time_s=time_s,
        distance_m=distance_m,
        snapped_m=_snapped_m([origin], [start])[0],
        at_edge=not shapely.box(west, south, east, north).buffer(-0.0005).contains(area),
        depart_at=depart_at,
    )
    return Found(
        data={"type": "FeatureCollection", "features": [feature]},
        sources=(_source(),),
        provider=_NAME,
        endpoint="offline:helsinki_roads",
        request={"origin": list(origin), "mode": mode, **budget_props},
        notes=tuple(notes),
    )
