"""The bundled road graph walked directly, for the ground truths of the station questions.

It states the offline router's model of a walk and computes it without the router
(``geomint.providers.offline._router`` is not imported): the edges whose foot bit is set,
walked at 5 km/h, so the quickest walk is the shortest; a point joins the graph at the
nearest node (geodesic) of the largest strongly connected part of the walkable graph,
where every node reaches every other; shortest paths by Dijkstra with :mod:`heapq`, in
the graph's own edge lengths (geodesic metres). The area a walk reaches is the stretch of
each street walked within the budget, 25 m either side, and the blocks under 4 ha that
those streets enclose: the router's reading of a reachable area, worked out here in
ETRS-TM35FIN (EPSG:3067, metres).
"""

from __future__ import annotations

import heapq
import math
from dataclasses import dataclass
from functools import cache
from typing import Any, Final

import numpy as np
import pyproj
import shapely

from geomint.providers import bundled

__all__ = [
    "BLOCK_M2",
    "STREET_HALF_WIDTH_M",
    "WALK_M_PER_S",
    "Reach",
    "nearest_node",
    "reach",
    "shortest_path",
    "to_metres",
]

#: The router's walking pace: 5 km/h.
WALK_M_PER_S: Final = 5 / 3.6
#: How far either side of a street walked the router's reachable area reaches.
STREET_HALF_WIDTH_M: Final = 25.0
#: The router fills the holes in a reachable area smaller than this (m²): the blocks the
#: streets walked go round.
BLOCK_M2: Final = 40_000.0

_GEOD: Final = pyproj.Geod(ellps="WGS84")


@dataclass(frozen=True)
class _Walkable:
    """The walkable edges as adjacency lists, and the nodes a point may join at."""

    #: Per node, its walkable edges as ``(target, metres)``.
    outgoing: tuple[tuple[tuple[int, float], ...], ...]
    #: The nodes of the largest strongly connected part.
    joinable: np.ndarray
    #: The nodes in EPSG:3067, metres.
    x: np.ndarray
    y: np.ndarray


@cache
def _transformer() -> pyproj.Transformer:
    return pyproj.Transformer.from_crs(4326, 3067, always_xy=True)


def to_metres(geometry: Any) -> Any:
    """``geometry`` (lon/lat) in EPSG:3067."""
    return shapely.transform(geometry, _transformer().transform, interleaved=False)


@cache
def _walkable() -> _Walkable:
    graph = bundled.road_graph()
    count = len(graph.lon)
    outgoing: list[list[tuple[int, float]]] = [[] for _ in range(count)]
    for start, end, metres, modes in zip(
        graph.source, graph.target, graph.length_m, graph.modes, strict=True
    ):
        if modes & bundled.FOOT:
            outgoing[start].append((end, metres))
    x, y = _transformer().transform(np.array(graph.lon), np.array(graph.lat))
    return _Walkable(
        outgoing=tuple(tuple(edges) for edges in outgoing),
        joinable=_largest_strongly_connected(outgoing),
        x=np.asarray(x),
        y=np.asarray(y),
    )


def _largest_strongly_connected(outgoing: list[list[tuple[int, float]]]) -> np.ndarray:
    """The nodes of the largest strongly connected part (Kosaraju, without recursion)."""
    count = len(outgoing)
    incoming: list[list[int]] = [[] for _ in range(count)]
    for start, edges in enumerate(outgoing):
        for end, _ in edges:
            incoming[end].append(start)
    finished: list[int] = []
    seen = np.zeros(count, dtype=bool)
    for root in range(count):
        if seen[root]:
            continue
        seen[root] = True
        stack = [(root, 0)]
        while stack:
            node, next_edge = stack.pop()
            edges = outgoing[node]
            if next_edge < len(edges):
                stack.append((node, next_edge + 1))
                end = edges[next_edge][0]
                if not seen[end]:
                    seen[end] = True
                    stack.append((end, 0))
            else:
                finished.append(node)
    part = np.full(count, -1)
    sizes: list[int] = []
    for root in reversed(finished):
        if part[root] >= 0:
            continue
        label = len(sizes)
        part[root] = label
        members, frontier = 1, [root]
        while frontier:
            for start in incoming[frontier.pop()]:
                if part[start] < 0:
                    part[start] = label
                    members += 1
                    frontier.append(start)
        sizes.append(members)
    joinable: np.ndarray = np.flatnonzero(part == int(np.argmax(sizes)))
    return joinable


def nearest_node(lon: float, lat: float) -> int:
    """The node a walk from or to ``(lon, lat)`` starts or ends at."""
    nodes = _walkable().joinable
    graph = bundled.road_graph()
    node_lon = np.array(graph.lon)[nodes]
    node_lat = np.array(graph.lat)[nodes]
    _, _, metres = _GEOD.inv(np.full(len(nodes), lon), np.full(len(nodes), lat), node_lon, node_lat)
    return int(nodes[int(np.argmin(metres))])


def _dijkstra(
    start: int, *, stop: int | None = None, budget: float = math.inf
) -> tuple[dict[int, float], dict[int, int]]:
    """Metres walked to each node reached within ``budget``, and the node before each."""
    outgoing = _walkable().outgoing
    best: dict[int, float] = {start: 0.0}
    before: dict[int, int] = {}
    queue = [(0.0, start)]
    done: set[int] = set()
    while queue:
        walked, node = heapq.heappop(queue)
        if node in done:
            continue
        done.add(node)
        if node == stop:
            break
        for end, metres in outgoing[node]:
            total = walked + metres
            if total <= budget and total < best.get(end, math.inf):
                best[end] = total
                before[end] = node
                heapq.heappush(queue, (total, end))
    return best, before


def shortest_path(start: int, end: int) -> tuple[float, list[tuple[float, float]]]:
    """The shortest walk from node ``start`` to node ``end``: its metres and its line
    (lon/lat)."""
    best, before = _dijkstra(start, stop=end)
    graph = bundled.road_graph()
    nodes = [end]
    while nodes[-1] != start:
        nodes.append(before[nodes[-1]])
    return best[end], [(graph.lon[n], graph.lat[n]) for n in reversed(nodes)]


@dataclass(frozen=True)
class Reach:
    """What a walk from a node reaches within a budget, in EPSG:3067.

    Attributes:
        streets: The stretches of street walked within the budget, each edge from a node
            reached as far along it as the budget lasts.
        corridor: ``streets`` :data:`STREET_HALF_WIDTH_M` either side.
        area: ``corridor`` with its holes under :data:`BLOCK_M2` filled.
    """

    streets: Any
    corridor: Any
    area: Any


@cache
def reach(start: int, seconds: float) -> Reach:
    """What a walk of ``seconds`` from node ``start`` reaches."""
    budget = seconds * WALK_M_PER_S
    best, _ = _dijkstra(start, budget=budget)
    walkable = _walkable()
    x, y = walkable.x, walkable.y
    stretches = []
    whole: set[tuple[int, int]] = set()
    for node, walked in best.items():
        for end, metres in walkable.outgoing[node]:
            share = min(1.0, (budget - walked) / metres) if metres > 0 else 1.0
            if share == 1.0:
                # A street walked whole, once: both its directions are the same line.
                key = (min(node, end), max(node, end))
                if key in whole:
                    continue
                whole.add(key)
            tip = (x[node] + (x[end] - x[node]) * share, y[node] + (y[end] - y[node]) * share)
            stretches.append([(x[node], y[node]), tip])
    streets = shapely.multilinestrings(shapely.linestrings(stretches))
    corridor = shapely.union_all(shapely.buffer(shapely.get_parts(streets), STREET_HALF_WIDTH_M))
    area = shapely.union_all(
        [
            shapely.Polygon(
                part.exterior,
                [ring for ring in part.interiors if shapely.Polygon(ring).area >= BLOCK_M2],
            )
            for part in shapely.get_parts(corridor)
        ]
    )
    return Reach(streets=streets, corridor=corridor, area=area)
