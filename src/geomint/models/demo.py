"""The scripted demo model: a stand-in for a language model when no key is configured.

It says it is one. It knows a fixed set of example prompts (:data:`DEMO_PROMPTS`) over the
bundled Helsinki data, answers the classifier's structured call with a real pick and
scopes, and then calls real tools with real code, one step at a time, reading each tool's
result as a model would. Everything after its choice (the classifier path, the tools,
the sandbox, the store, the figures) is the real thing, so it is a showcase and a test
fixture, not a fake.
"""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import AsyncIterator, Callable, Sequence
from dataclasses import dataclass
from typing import Any, Final

from pydantic_ai.messages import (
    ModelMessage,
    ModelRequest,
    ModelResponse,
    SystemPromptPart,
    TextPart,
    ToolCallPart,
    ToolReturnPart,
    UserPromptPart,
)
from pydantic_ai.models.function import AgentInfo, DeltaToolCall, DeltaToolCalls, FunctionModel

from geomint.models._demo_discovery import DISCOVERY_MARKER, write_shortlist
from geomint.models._demo_mapcode import CODEGEN_MARKER, write_map_code

__all__ = ["DEMO_PROMPTS", "DemoModel", "DemoPrompt", "scripted_model", "second_prompt"]

DEMO_NOTICE: Final = "(scripted demo model: no language model is configured)"
_NEWEST: Final = "Newest user message: "


@dataclass(frozen=True)
class DemoPrompt:
    """One prompt the demo model knows.

    Attributes:
        text: The prompt as ``geomint demo`` asks it.
        pattern: What a person's message must match (case-insensitive) to run it.
        tools: The classifier's pick.
        scopes: The scope of each scopable tool picked.
        steps: ``(tool, build)`` pairs in order; ``build`` reads the turn so far and
            returns the call's arguments, or None to skip the step.
        answer: The closing text; ``<f0>``, ``<f1>``, ... cite the turn's minted figures
            in order (as ``{v3}``, the id the run gave each).
        needs_page: It asks the person's web page for something (their location), so a
            terminal run (``geomint demo``) leaves it out.
    """

    text: str
    pattern: str
    tools: tuple[str, ...]
    scopes: dict[str, dict[str, Any]]
    steps: tuple[tuple[str, Callable[[_Turn], dict[str, Any] | None]], ...]
    answer: str
    needs_page: bool = False


@dataclass
class _Turn:
    """What the demo model can see of the current turn."""

    instructions: str
    results: list[tuple[str, dict[str, Any]]]

    def entry(self, kind: str) -> str | None:
        """The newest entry id of a kind named in the state note (or in this turn's results)."""
        for _, result in reversed(self.results):
            found = result.get("entry_id")
            if isinstance(found, str) and found.startswith(f"{kind}-"):
                return found
        ids = re.findall(rf"^- ({kind}-\d+) ", self.instructions, flags=re.MULTILINE)
        return ids[-1] if ids else None

    def written(self, kind: str) -> list[str]:
        """The entry ids of a kind this turn's results gave, in order."""
        found = (result.get("entry_id") for _, result in self.results)
        return [e for e in found if isinstance(e, str) and e.startswith(f"{kind}-")]

    def first(self, kind: str) -> str | None:
        ids = re.findall(rf"^- ({kind}-\d+) ", self.instructions, flags=re.MULTILINE)
        return ids[0] if ids else self.entry(kind)

    def place(self, name: str) -> str | None:
        """The spine id this turn's ``resolve_place`` gave for ``name``."""
        for tool, result in self.results:
            if tool == "resolve_place":
                for found in result.get("matches", []):
                    if found.get("name") == name:
                        return str(found["id"])
        return None

    def hit(self) -> str | None:
        """The first source the newest ``find_sources`` of this turn returned."""
        for tool, result in reversed(self.results):
            if tool == "find_sources" and result.get("hits"):
                return str(result["hits"][0]["source_id"])
        return None

    def figure_ids(self) -> list[str]:
        ids: list[str] = []
        for _, result in self.results:
            ids.extend(str(f["id"]) for f in result.get("figures", []) if "id" in f)
        return ids


# -- the code the scripts run (ordinary Python bodies, checked by Gate 1 like any other) --

_CATEGORY_CHART = """\
from collections import Counter
counts = Counter((f["properties"].get("category") or "other") for f in places["features"])
top = counts.most_common(12)
mint.value(len(places["features"]), "places counted", unit="places")
mint.value(len(counts), "distinct categories", unit="categories")
return {
    "type": "bar",
    "data": {
        "labels": [name for name, _ in top],
        "datasets": [{"label": "Places", "data": [n for _, n in top]}],
    },
    "options": {"indexAxis": "y"},
}"""

_STOPS_NEAR_CAFES = """\
frame = places.to_geodataframe()
cafes = frame[frame["category"] == "cafe"].to_crs(3067)
stops = byod.to_geodataframe().to_crs(3067)
near = stops.geometry.apply(lambda g: cafes.distance(g).min() <= 200)
mint.value(int(near.sum()), "stops within 200 m of a café", unit="stops")
mint.value(len(stops), "stops in the layer", unit="stops")
return {"near": int(near.sum()), "stops": len(stops), "cafes": len(cafes)}"""

_UNION_PARKS = """\
shapes = [shapely.geometry.shape(f["geometry"]) for f in geometries["features"]]
merged = shapely.union_all(shapes)
mint.value(round(geo.area_m2(merged)), "area of the parks, gardens and squares", unit="m²")
feature = {"type": "Feature", "properties": {"name": "parks, gardens and squares"},
           "geometry": shapely.geometry.mapping(merged)}
return {"geometries": {"type": "FeatureCollection", "features": [feature]}, "fit_on_map": True}"""

_PLACES_IN_PARKS = """\
inside = []
for place in places["features"]:
    for area in geometries["features"]:
        if geo.point_in_polygon(place, area):
            inside.append({"name": place["properties"].get("name"),
                           "category": place["properties"].get("category"),
                           "in": area["properties"].get("name")})
            break
mint.value(len(inside), "places inside a park, garden or square", unit="places")
return inside"""

_ONLY_CAFES = """\
cafes = [f for f in places["features"] if f["properties"].get("category") == "cafe"]
return {"places": {"type": "FeatureCollection", "features": cafes}, "fit_on_map": True}"""

_COUNT_STOPS = """\
kinds = {}
for f in byod["features"]:
    kind = f["properties"].get("kind") or "other"
    kinds[kind] = kinds.get(kind, 0) + 1
mint.value(len(byod["features"]), "stops in the layer", unit="stops")
return {"stops": len(byod["features"]), "by_kind": kinds, "previous": previous}"""


Step = tuple[str, Callable[[_Turn], dict[str, Any] | None]]


_NORDIC_CHART = """\
rows = sorted((f["properties"] for f in tables["features"]), key=lambda p: -p["value"])
for row in rows:
    mint.value(row["value"], "population of " + row["unit_name"], unit="people",
               period=row["period"])
periods = sorted({row["period"] for row in rows})
return {
    "type": "bar",
    "data": {
        "labels": [row["unit_name"] for row in rows],
        "datasets": [{"label": "Population, " + ", ".join(periods),
                      "data": [row["value"] for row in rows]}],
    },
}"""

_INDICATOR_LINE = """\
rows = sorted((f["properties"] for f in tables["features"] if f["properties"]["value"] is not None),
              key=lambda p: p["period"])
first, last = rows[0], rows[-1]
mint.value(first["value"], "life expectancy in " + first["unit_name"], unit="years",
           period=first["period"])
mint.value(last["value"], "life expectancy in " + last["unit_name"], unit="years",
           period=last["period"])
return {
    "type": "line",
    "data": {
        "labels": [row["period"] for row in rows],
        "datasets": [{"label": "Life expectancy at birth, " + first["unit_name"] + " (years)",
                      "data": [row["value"] for row in rows]}],
    },
}"""

_RESAMPLE = """\
fine, coarse = load({fine!r}), load({coarse!r})
moved = load({fine!r}, like={coarse!r}, method="sum")
counted = [float(np.nansum(r.values())) for r in (fine, moved, coarse)]
mint.value(round(counted[0]), "points of interest on the 100 m grid", unit="points")
mint.value(round(counted[1]), "points of interest on the 100 m grid resampled to 250 m",
           unit="points")
mint.value(round(counted[2]), "points of interest on the 250 m grid counted directly",
           unit="points")
apart = np.abs(moved.values() - coarse.values())
mint.value(round(float(np.nanmax(apart)), 1), "largest difference in one 250 m cell",
           unit="points")
mint.layer(moved, "point density, 100 m resampled to 250 m")
return {{"grid": list(coarse.shape), "cells that differ": int(np.count_nonzero(apart > 0.01))}}"""


def _resample(turn: _Turn) -> dict[str, Any] | None:
    grids = turn.written("rasters")
    if len(grids) < 2:
        return None
    fine, coarse = grids[-2], grids[-1]
    return {
        "rasters_entry_ids": [fine, coarse],
        "name": "resample-density",
        "code": _RESAMPLE.format(fine=fine, coarse=coarse),
    }


_DENSITY: Final = "geomint-helsinki-poi-density"
#: Central Helsinki, west,south,east,north in degrees.
_CENTRE_BBOX: Final = "24.90,60.15,24.97,60.19"

_NORDIC: Final = ["country:FIN", "country:SWE", "country:NOR", "country:DNK", "country:ISL"]


def _cell(name: str) -> Callable[[_Turn], dict[str, Any] | None]:
    def build(turn: _Turn) -> dict[str, Any] | None:
        source, place = turn.hit(), turn.place(name)
        if source is None or place is None:
            return None
        return {"source_id": source, "filters": {"unit": place}, "cell": True}

    return build


def _load_stops(turn: _Turn) -> dict[str, Any] | None:
    if turn.entry("byod") is not None:
        return None
    return {"label": "Bus and tram stops", "path": "helsinki_stops.csv"}


def _present(title: str) -> Step:
    def build(turn: _Turn) -> dict[str, Any] | None:
        ids = turn.figure_ids()
        return {"value_ids": ids, "title": title} if ids else None

    return ("present_figure", build)


DEMO_PROMPTS: Final[tuple[DemoPrompt, ...]] = (
    DemoPrompt(
        text="Cafés within 10 minutes' walk of the central station",
        pattern=(
            r"\b(minutes?|min)\b'?.*\bwalk|\bwalk.*\b(minutes?|min)\b"
            r"|walk(ing)? distance|on foot"
        ),
        tools=("find_reachable_areas", "discover_places"),
        scopes={},
        steps=(
            (
                "find_reachable_areas",
                lambda t: {"origin": {"query": "Rautatientori"}, "time_s": 600, "mode": "walk"},
            ),
            (
                "discover_places",
                lambda t: {
                    "category": "cafe",
                    "where": {"mode": "within", "range": t.entry("ranges")},
                    "limit": 200,
                },
            ),
        ),
        answer="These cafés are within a 10-minute walk of the station square (Rautatientori), "
        "along the streets, on the offline road graph.",
    ),
    DemoPrompt(
        text="Route from the central station to the cathedral avoiding motorways",
        pattern=r"^(?!.*animat).*(route|directions|how do i get|get from|way (to|from) the)",
        tools=("set_route", "fit_bounds"),
        scopes={},
        steps=(
            (
                "set_route",
                lambda t: {
                    "origin": {"query": "Rautatientori"},
                    "destination": {"query": "Helsingin tuomiokirkko"},
                    "mode": "car",
                    "avoid": ["motorways"],
                },
            ),
            ("fit_bounds", lambda t: {"entry_ids": [t.entry("routes")]}),
        ),
        answer="The route is on the map; its length and time are estimates on the offline "
        "road graph, without traffic.",
    ),
    DemoPrompt(
        text="Which cafés are inside the Esplanade park?",
        pattern=r"esplanad",
        tools=("get_boundaries", "discover_places"),
        scopes={},
        steps=(
            ("get_boundaries", lambda t: {"queries": ["Esplanadinpuisto"]}),
            (
                "discover_places",
                lambda t: {
                    "category": "cafe",
                    "where": {"mode": "within", "geometries": [t.entry("geometries")]},
                },
            ),
        ),
        answer="These cafés lie inside the Esplanade park's boundary (Esplanadinpuisto).",
    ),
    DemoPrompt(
        text="Bar chart of these places by category",
        pattern=r"chart.*categor|categor.*chart",
        tools=("analyse_data", "present_figure"),
        scopes={"analyse_data": {"kinds": ["places"]}},
        steps=(
            (
                "analyse_data",
                lambda t: {
                    "places_entry_ids": [t.first("places")],
                    "name": "category-bar",
                    "output_format": "chart",
                    "code": _CATEGORY_CHART,
                },
            ),
            _present("Places by category"),
        ),
        answer="Here is the bar chart of the <f0> by category: <f1> in all, the twelve "
        "largest shown, with their source.",
    ),
    DemoPrompt(
        text="Colour the places by category",
        pattern=r"\bcolou?r\w*\b.*\bby\b|\bby (category|kind|type)\b.*\bcolou?r|legend",
        tools=("update_places_display",),
        scopes={},
        steps=(
            (
                "update_places_display",
                lambda t: {"entry_ids": [t.first("places")], "style": {"color_by": "category"}},
            ),
        ),
        answer="The places are coloured by category; the layers panel holds the legend, "
        "with how many places each colour stands for.",
    ),
    DemoPrompt(
        text="Load my bus and tram stops file",
        pattern=r"\b(load|add|open)\b(?!.*\bagain\b).*stop",
        tools=("add_byod_layer",),
        scopes={},
        steps=(("add_byod_layer", _load_stops),),
        answer="Your stops file is on the map as a layer of its own.",
    ),
    DemoPrompt(
        text="How many stops are within 200 m of a café?",
        pattern=r"stops?.*(within|near|close).*caf",
        tools=("add_byod_layer", "analyse_data", "present_figure"),
        scopes={"analyse_data": {"kinds": ["places", "byod"]}},
        steps=(
            ("add_byod_layer", _load_stops),
            (
                "analyse_data",
                lambda t: {
                    "places_entry_ids": [t.first("places")],
                    "byod_entry_ids": [t.entry("byod")],
                    "name": "stops-near-cafes",
                    "code": _STOPS_NEAR_CAFES,
                },
            ),
            _present("Stops near cafés"),
        ),
        answer="<f0> are within 200 m of a café, of <f1> in the layer, counted in "
        "metres (ETRS-TM35FIN) from the stops layer and the places.",
    ),
    DemoPrompt(
        text="Union the park boundaries and show them",
        pattern=r"union|merge|combine",
        tools=("process_data", "present_figure"),
        scopes={"process_data": {"kinds": ["geometries"]}},
        steps=(
            (
                "process_data",
                lambda t: {
                    "geometries_entry_ids": [t.first("geometries")],
                    "code": _UNION_PARKS,
                    "label": "parks, gardens and squares (merged)",
                },
            ),
            _present("Merged parks"),
        ),
        answer="The parks, gardens and squares are merged into one shape on the map.",
    ),
    DemoPrompt(
        text="Which of these places are inside a park?",
        pattern=r"inside|\b(within|in) (a |the )?parks?\b",
        tools=("analyse_data", "present_figure"),
        scopes={"analyse_data": {"kinds": ["places", "geometries"]}},
        steps=(
            (
                "analyse_data",
                lambda t: {
                    "places_entry_ids": [t.first("places")],
                    "geometries_entry_ids": [t.first("geometries")],
                    "name": "places-in-parks",
                    "code": _PLACES_IN_PARKS,
                },
            ),
            _present("Places inside parks"),
        ),
        answer="These places lie inside a park, garden or square.",
    ),
    DemoPrompt(
        text="Show only the cafés on the map",
        pattern=r"only.*caf|caf.*only|just (the )?caf|(everything|all) but (the )?caf",
        tools=("process_data", "update_places_display"),
        scopes={"process_data": {"kinds": ["places"]}},
        steps=(
            (
                "process_data",
                lambda t: {
                    "places_entry_ids": [t.first("places")],
                    "code": _ONLY_CAFES,
                    "label": "cafés",
                },
            ),
            (
                "update_places_display",
                lambda t: {"entry_ids": [t.first("places")], "action": "hide"},
            ),
        ),
        answer="Only the cafés are shown now; the other places are hidden, not deleted.",
    ),
    DemoPrompt(
        text="Keep counting my stops whenever the stops layer changes",
        pattern=r"keep|whenever|monitor|watch",
        tools=("add_byod_layer", "analyse_data"),
        scopes={"analyse_data": {"kinds": ["byod"]}},
        steps=(
            ("add_byod_layer", _load_stops),
            (
                "analyse_data",
                lambda t: {
                    "byod_entry_ids": [t.entry("byod")],
                    "name": "stop-count",
                    "code": _COUNT_STOPS,
                    "monitor": True,
                },
            ),
        ),
        answer="The stop count is monitored: it re-runs whenever the stops layer gets a new "
        "version.",
    ),
    DemoPrompt(
        text="Reload my stops file",
        pattern=r"\b(reload|refresh)\b|^update\b|\bagain\b",
        tools=("add_byod_layer",),
        scopes={},
        steps=(
            (
                "add_byod_layer",
                lambda t: {
                    "label": "Bus and tram stops",
                    "path": "helsinki_stops.csv",
                    **({"replace": t.entry("byod")} if t.entry("byod") else {}),
                },
            ),
        ),
        answer="The stops layer has a new version; monitors watching it ran again.",
    ),
    DemoPrompt(
        text="Heatmap of the cafés",
        pattern=r"heat ?map",
        tools=("execute_map_code",),
        scopes={},
        steps=(
            (
                "execute_map_code",
                lambda t: {"intent": "heatmap of the cafés", "entry_ids": [t.first("places")]},
            ),
        ),
        answer="The cafés are drawn as a heatmap under the places: red where they crowd "
        "together. Its card in the chat can undo it.",
    ),
    DemoPrompt(
        text="Extrude the parks by their area",
        pattern=r"extru|\b3d\b",
        tools=("execute_map_code",),
        scopes={},
        steps=(
            (
                "execute_map_code",
                lambda t: {
                    "intent": "extrude the parks by their area",
                    "entry_ids": [t.first("geometries")],
                },
            ),
        ),
        answer="The parks, gardens and squares stand up from the map, taller and darker the "
        "larger their area (measured on the ellipsoid), with the map tilted to show it.",
    ),
    DemoPrompt(
        text="Animate the route from start to end",
        pattern=r"animat",
        tools=("set_route", "execute_map_code"),
        scopes={},
        steps=(
            (
                "set_route",
                lambda t: (
                    None
                    if t.entry("routes")
                    else {
                        "origin": {"query": "Rautatientori"},
                        "destination": {"query": "Helsingin tuomiokirkko"},
                        "mode": "car",
                    }
                ),
            ),
            (
                "execute_map_code",
                lambda t: {
                    "intent": "animate the route from start to end",
                    "entry_ids": [t.entry("routes")],
                },
            ),
        ),
        answer="The route draws itself from start to end over four seconds; the page plays "
        "it, and no code runs in your browser.",
    ),
    DemoPrompt(
        text="A hexagon density surface of the restaurants as an overlay",
        pattern=r"hexagon|density surface",
        tools=("execute_map_code",),
        scopes={},
        steps=(
            (
                "execute_map_code",
                lambda t: {
                    "intent": "a hexagon density surface of the restaurants as an overlay",
                    "entry_ids": [t.first("places")],
                },
            ),
        ),
        answer="The restaurants are counted in H3 hexagons about a city block across and "
        "drawn as a picture over the map: darker where there are more.",
    ),
    DemoPrompt(
        text="Population of Helsinki against Espoo",
        pattern=(
            r"(population|people live).*(helsinki.*espoo|espoo.*helsinki)"
            r"|(helsinki.*espoo|espoo.*helsinki).*population"
        ),
        tools=("resolve_place", "find_sources", "fetch", "present_figure"),
        scopes={},
        steps=(
            ("resolve_place", lambda t: {"name": "Helsinki", "level": "city"}),
            ("resolve_place", lambda t: {"name": "Espoo", "level": "city"}),
            ("find_sources", lambda t: {"query": "population of cities", "country": "FIN"}),
            ("fetch", _cell("Helsinki")),
            ("fetch", _cell("Espoo")),
            _present("Helsinki and Espoo"),
        ),
        answer="Helsinki has <f0> and Espoo <f1>, as GeoNames records them (CC BY 4.0). "
        "GeoNames states no year for these figures, so each card says the period is not "
        "stated: read them as recent, not as a census of a known date.",
    ),
    DemoPrompt(
        text="Population of the Nordic countries in the latest year, as a bar chart",
        pattern=r"nordic",
        tools=("find_sources", "fetch", "analyse_data", "present_figure"),
        scopes={"analyse_data": {"kinds": ["tables"]}},
        steps=(
            ("find_sources", lambda t: {"query": "population of countries, latest estimates"}),
            (
                "fetch",
                lambda t: {
                    "source_id": t.hit(),
                    "filters": {"unit": _NORDIC, "period": "latest", "variant": "estimate"},
                },
            ),
            (
                "analyse_data",
                lambda t: {
                    "tables_entry_ids": [t.entry("tables")],
                    "name": "nordic-population",
                    "output_format": "chart",
                    "code": _NORDIC_CHART,
                },
            ),
            _present("Population of the Nordic countries"),
        ),
        answer="In the newest year the UN's World Population Prospects 2024 estimates rather "
        "than projects, Sweden has <f0>, Denmark <f1>, Finland <f2>, Norway <f3> and Iceland "
        "<f4>; every card names that year.",
    ),
    DemoPrompt(
        text="Life expectancy in Finland over time as a line chart",
        pattern=r"life expectancy",
        tools=("resolve_place", "find_sources", "fetch", "analyse_data", "present_figure"),
        scopes={"analyse_data": {"kinds": ["tables"]}},
        steps=(
            ("resolve_place", lambda t: {"name": "Finland", "level": "country"}),
            (
                "find_sources",
                lambda t: {"query": "life expectancy at birth by country and year"},
            ),
            (
                "fetch",
                lambda t: {"source_id": t.hit(), "filters": {"unit": t.place("Finland")}},
            ),
            (
                "analyse_data",
                lambda t: {
                    "tables_entry_ids": [t.entry("tables")],
                    "name": "finland-life-expectancy",
                    "output_format": "chart",
                    "code": _INDICATOR_LINE,
                },
            ),
            _present("Life expectancy in Finland"),
        ),
        answer="Life expectancy at birth in Finland rose from <f0> to <f1> over the years "
        "the Gapminder table covers; the line shows every year it has.",
    ),
    DemoPrompt(
        text="GDP per capita of Helsinki",
        pattern=r"gdp",
        tools=("resolve_place", "find_sources", "fetch"),
        scopes={},
        steps=(
            ("resolve_place", lambda t: {"name": "Helsinki", "level": "city"}),
            ("find_sources", lambda t: {"query": "GDP per capita"}),
            (
                "fetch",
                lambda t: {
                    "source_id": t.hit(),
                    "filters": {"unit": t.place("Helsinki"), "period": "latest"},
                    "cell": True,
                },
            ),
        ),
        answer="No source here gives GDP per capita for Helsinki. I searched the registry for "
        "GDP per capita: what it has is figures for whole countries, and a country's figure "
        "is not a city's, so I will not estimate one. A city figure would need a regional "
        "accounts source, which this installation does not have.",
    ),
    DemoPrompt(
        text="Zonal sum of the point density grid over the parks",
        pattern=r"zonal|\b(grid|raster)\b.*\b(per|each|every|over (the |each )?)parks?",
        tools=("fetch", "zonal_stats", "present_figure"),
        scopes={},
        steps=(
            ("fetch", lambda t: {"source_id": _DENSITY, "filters": {"cell_m": "100"}}),
            (
                "zonal_stats",
                lambda t: {
                    "raster_entry_id": t.entry("rasters"),
                    "zones_entry_id": t.first("geometries"),
                    "stats": ["sum"],
                    "label": "points of interest",
                    "unit": "points",
                },
            ),
            _present("Points of interest per park"),
        ),
        answer="Each park, garden and square has its own figure: the grid's points of "
        "interest summed over it, each 100 m cell weighted by the share of it the park "
        "covers, so <f0>, <f1> and <f2> are the first three. The grid is geomint's own, "
        "counted from the bundled OpenStreetMap points, not a published density.",
    ),
    DemoPrompt(
        text="Resample the density grid onto a 250 m grid and compare the totals",
        pattern=r"resampl|coarser",
        tools=("fetch", "analyse_data", "present_figure"),
        scopes={"analyse_data": {"kinds": ["rasters"]}},
        steps=(
            ("fetch", lambda t: {"source_id": _DENSITY, "filters": {"cell_m": "100"}}),
            ("fetch", lambda t: {"source_id": _DENSITY, "filters": {"cell_m": "250"}}),
            ("analyse_data", _resample),
            _present("The density grid at 100 m and 250 m"),
        ),
        answer="Summing the 100 m cells onto the 250 m grid keeps the total: <f0> before "
        "and <f1> after, and the grid counted directly at 250 m holds <f2>. Cell by "
        "cell the two 250 m grids differ by at most <f3>, because 100 m cells straddle the "
        "250 m cells' edges and are split between them by area.",
    ),
    DemoPrompt(
        text="Search the Earth Search STAC catalogue for elevation data over Helsinki",
        pattern=r"\bstac\b|earth search",
        tools=("find_sources", "fetch"),
        scopes={},
        steps=(
            (
                "find_sources",
                lambda t: {"query": "digital elevation model", "search_catalogues": True},
            ),
            (
                "fetch",
                lambda t: {
                    "source_id": "earth-search",
                    "filters": {
                        "collection": "cop-dem-glo-30",
                        "list": "yes",
                        "bbox": _CENTRE_BBOX,
                    },
                },
            ),
        ),
        answer="The registry has the Copernicus DEM, and searching Earth Search's collections "
        "shortlisted its finer and coarser Copernicus DEM collections; over central Helsinki "
        "the finer one has one tile, named in the listing. This demo answers the catalogue "
        "from recordings shipped with geomint, not the live API, so the listing shows its "
        "shape, not today's holdings; reading the tile's cells needs the network.",
    ),
    DemoPrompt(
        text="What can you do?",
        pattern=r"what can you|help|what (are you able to|do you) do",
        tools=("help",),
        scopes={},
        steps=(("help", lambda t: {}),),
        answer="Those are the tools I can use; ask about the places, the parks or your stops.",
    ),
    DemoPrompt(
        text="Switch the map to dark mode",
        pattern=r"\bdark\b",
        tools=("set_map_style",),
        scopes={},
        steps=(("set_map_style", lambda t: {"style": "dark"}),),
        answer="The map is on its dark basemap now; your layers are as they were.",
    ),
    DemoPrompt(
        text="Show the place names in Swedish",
        pattern=r"swedish|svenska|på svenska",
        tools=("set_language",),
        scopes={},
        steps=(("set_language", lambda t: {"language": "sv"}),),
        answer="Place labels are in Swedish where OpenStreetMap has a Swedish name, and in "
        "their own name elsewhere; street names and countries have no translations.",
    ),
    DemoPrompt(
        text="Cafés near me",
        pattern=r"near me|around me|close to me|nearby|where am i",
        tools=("get_current_location", "discover_places"),
        scopes={},
        steps=(
            ("get_current_location", lambda t: {"purpose": "to find cafés near you"}),
            (
                "discover_places",
                lambda t: {
                    "category": "cafe",
                    "near": {"place_id": "device:current-location"},
                    "radius_m": 500,
                },
            ),
        ),
        answer="These are the cafés within 500 m of where your device says you are; the "
        "search is only as good as its accuracy.",
        needs_page=True,
    ),
)


def match(text: str) -> DemoPrompt | None:
    """The demo prompt a message asks for, or None."""
    lowered = text.lower()
    for prompt in DEMO_PROMPTS:
        if re.search(prompt.pattern, lowered):
            return prompt
    return None


def _unknown_answer() -> str:
    listing = "\n".join(f"- {p.text}" for p in DEMO_PROMPTS)
    return (
        f"{DEMO_NOTICE}\nI only know a few example prompts over the bundled Helsinki data:\n"
        f"{listing}\nSet GEOMINT_MODEL (e.g. openai:gpt-4.1 with OPENAI_API_KEY) for a real "
        "model."
    )


def _current_turn(
    messages: Sequence[ModelMessage],
) -> tuple[str, list[tuple[str, dict[str, Any]]], list[str]]:
    """The newest user prompt, the tool results that followed it, and the first tool name
    of each response since that called tools (one per script step taken)."""
    prompt = ""
    start = 0
    for index, message in enumerate(messages):
        if isinstance(message, ModelRequest):
            for part in message.parts:
                if isinstance(part, UserPromptPart) and isinstance(part.content, str):
                    prompt, start = part.content, index
    results: list[tuple[str, dict[str, Any]]] = []
    made: list[str] = []
    for message in messages[start:]:
        if isinstance(message, ModelRequest):
            for part in message.parts:
                if isinstance(part, ToolReturnPart):
                    results.append((part.tool_name, _parsed(part.content)))
        elif isinstance(message, ModelResponse):
            calls = [p.tool_name for p in message.parts if isinstance(p, ToolCallPart)]
            if calls:
                made.append(calls[0])
    return prompt, results, made


def _parsed(content: Any) -> dict[str, Any]:
    if isinstance(content, dict):
        return content
    try:
        value = json.loads(str(content))
    except ValueError:
        return {"text": str(content)}
    return value if isinstance(value, dict) else {"value": value}


def second_prompt(messages: Sequence[ModelMessage], marker: str) -> str | None:
    """The user prompt of a second model call whose system prompt begins with ``marker``
    (map code's, discovery's), or None for any other request."""
    first = messages[0] if messages else None
    if not isinstance(first, ModelRequest):
        return None
    system = [p.content for p in first.parts if isinstance(p, SystemPromptPart)]
    if not system or not system[0].startswith(marker):
        return None
    asked = [p.content for p in first.parts if isinstance(p, UserPromptPart)]
    return str(asked[-1]) if asked else ""


def _respond(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
    codegen = second_prompt(messages, CODEGEN_MARKER)
    if codegen is not None:
        # The second model of map code (geomint.codegen): it writes the body.
        return ModelResponse(parts=[TextPart(write_map_code(codegen))])
    shortlisting = second_prompt(messages, DISCOVERY_MARKER)
    if shortlisting is not None:
        # Discovery's second model (geomint.sources.shortlist): a shortlist, no more.
        return ModelResponse(parts=[TextPart(write_shortlist(shortlisting))])
    prompt, results, made = _current_turn(messages)
    # The classifier's request quotes the conversation; the newest message is what counts.
    script = match(prompt.rsplit(_NEWEST, 1)[-1])
    if info.output_tools and not info.function_tools:
        # The classifier's structured call: answer with the script's pick and scopes.
        pick = {
            "tools": list(script.tools) if script else [],
            "scopes": script.scopes if script else {},
        }
        return ModelResponse(parts=[ToolCallPart(info.output_tools[0].name, pick)])
    if script is None:
        return ModelResponse(parts=[TextPart(_unknown_answer())])
    available = {t.name for t in info.function_tools}
    turn = _Turn(instructions=info.instructions or "", results=results)
    failures = [r.get("error") for _, r in results if r.get("error")]
    taken = 0
    for name, build in script.steps:
        if taken < len(made) and made[taken] == name:
            taken += 1
            continue
        if failures:
            break  # a step failed or was refused: the rest rested on it (hiding the places
            # once the cafés layer was refused left the map empty)
        arguments = build(turn)
        if arguments is not None and name in available:
            return ModelResponse(parts=[ToolCallPart(name, arguments)])
    if failures:
        return ModelResponse(parts=[TextPart(f"{DEMO_NOTICE} A step failed: {failures[-1]}")])
    answer = script.answer
    for index, value_id in enumerate(turn.figure_ids()):
        answer = answer.replace(f"<f{index}>", "{" + value_id + "}")
    return ModelResponse(parts=[TextPart(f"{answer} {DEMO_NOTICE}")])


Respond = Callable[[list[ModelMessage], AgentInfo], ModelResponse]


def scripted_model(
    respond: Respond, *, name: str = "scripted", word_delay_s: float = 0.0
) -> FunctionModel:
    """A model from a plain function of the messages, streaming what it returns.

    The agent streams every run, so a function model needs a streaming twin: this one
    replays the response as text deltas (word by word, ``word_delay_s`` apart, as a
    model's tokens arrive) and tool calls. Tests and the demo use it; an application can
    too, to script its own examples.
    """

    async def stream(
        messages: list[ModelMessage], info: AgentInfo
    ) -> AsyncIterator[str | DeltaToolCalls]:
        response = respond(messages, info)
        for index, part in enumerate(response.parts):
            if isinstance(part, TextPart):
                words = part.content.split(" ")
                for i, word in enumerate(words):
                    if i and word_delay_s:
                        await asyncio.sleep(word_delay_s)
                    yield word if i == 0 else " " + word
            elif isinstance(part, ToolCallPart):
                yield {
                    index: DeltaToolCall(
                        name=part.tool_name,
                        json_args=part.args_as_json_str(),
                        tool_call_id=part.tool_call_id,
                    )
                }

    return FunctionModel(respond, stream_function=stream, model_name=name)


class DemoModel(FunctionModel):
    """The scripted demo model (see the module docstring)."""

    is_demo: Final = True

    def __init__(self, *, word_delay_s: float = 0.0) -> None:
        """``word_delay_s`` paces the streamed words like a model's (the web app's demo)."""
        twin = scripted_model(_respond, name="geomint-demo", word_delay_s=word_delay_s)
        assert twin.stream_function is not None
        super().__init__(_respond, stream_function=twin.stream_function, model_name="geomint-demo")

    @property
    def system(self) -> str:
        """The provider name shown beside the model's: this one is geomint's own."""
        return "geomint-demo"
