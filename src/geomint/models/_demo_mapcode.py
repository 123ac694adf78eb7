"""The demo model as the second model of map code: it writes the body for the demo's four
map-code intents, as a model answering the generation prompt would (one fenced block).

What it writes then goes through the real pipeline: Gate 1, the dry run against the
recording ``mapview``, the style-specification checks. It reads the entry ids from the
prompt's "Entries the intent concerns" lines, so the code names the chat's own entries.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Final

__all__ = ["CODEGEN_MARKER", "write_map_code"]

#: How a map-code generation request's system prompt begins.
CODEGEN_MARKER: Final = "You write map code for geomint."

_HEATMAP: Final = """\
mapview.add_layer({
    "id": "cafe-heat",
    "type": "heatmap",
    "source": "{places}",
    "filter": ["==", ["get", "category"], "cafe"],
    "paint": {
        "heatmap-weight": 1,
        "heatmap-intensity": ["interpolate", ["linear"], ["zoom"], 11, 1, 16, 3],
        "heatmap-radius": ["interpolate", ["linear"], ["zoom"], 11, 14, 16, 34],
        "heatmap-opacity": 0.85,
        "heatmap-color": ["interpolate", ["linear"], ["heatmap-density"],
                          0, "rgba(33, 102, 172, 0)", 0.25, "rgb(103, 169, 207)",
                          0.5, "rgb(253, 219, 199)", 0.75, "rgb(239, 138, 98)",
                          1, "rgb(178, 24, 43)"],
    },
}, before="{places}-circle")"""

_EXTRUDE: Final = """\
features = []
for park in geometries["features"]:
    area = geo.area_m2(shapely.geometry.shape(park["geometry"]))
    features.append({"type": "Feature", "geometry": park["geometry"],
                     "properties": {"name": park["properties"].get("name"),
                                    "area_m2": round(area)}})
largest = max(f["properties"]["area_m2"] for f in features) or 1
mapview.add_source("parks-area", {"type": "geojson", "data": features})
mapview.add_layer({
    "id": "parks-3d",
    "type": "fill-extrusion",
    "source": "parks-area",
    "paint": {
        "fill-extrusion-color": ["interpolate", ["linear"], ["get", "area_m2"],
                                 0, "#b7e4c7", largest, "#1b4332"],
        "fill-extrusion-height": ["*", ["get", "area_m2"], 300 / largest],
        "fill-extrusion-opacity": 0.85,
    },
})
mapview.ease_to(pitch=55, bearing=-20)"""

_ANIMATE: Final = """\
mapview.add_source("route-drawn", {"type": "geojson", "data": "{routes}", "lineMetrics": True})
mapview.add_layer({
    "id": "route-drawn",
    "type": "line",
    "source": "route-drawn",
    "layout": {"line-cap": "round", "line-join": "round"},
    "paint": {"line-width": 7},
})


def drawn_to(t):
    return ["step", ["line-progress"], "#e63946", t, "rgba(230, 57, 70, 0)"]


mapview.animate("route-drawn", [
    {"at": 0, "paint": {"line-gradient": drawn_to(0)}},
    {"at": 1, "paint": {"line-gradient": drawn_to(1)}},
], duration_ms=4000)"""

_HEXAGONS: Final = """\
restaurants = [f for f in places["features"]
               if f["properties"].get("category") == "restaurant"]
counts = {}
for f in restaurants:
    lon, lat = f["geometry"]["coordinates"][:2]
    cell = h3.latlng_to_cell(lat, lon, 9)
    counts[cell] = counts.get(cell, 0) + 1
lons = [f["geometry"]["coordinates"][0] for f in restaurants]
lats = [f["geometry"]["coordinates"][1] for f in restaurants]
west, east = min(lons) - 0.004, max(lons) + 0.004
south, north = min(lats) - 0.002, max(lats) + 0.002
width, height = 320, 200
# Rows evenly spaced in Web Mercator y, as the map draws the picture.
y = np.linspace(np.arcsinh(np.tan(np.radians(north))), np.arcsinh(np.tan(np.radians(south))),
                height)
row_lats = np.degrees(np.arctan(np.sinh(y)))
col_lons = np.linspace(west, east, width)
top = max(counts.values())
ramp = np.array([[255, 237, 160], [254, 178, 76], [240, 59, 32], [128, 0, 38]], dtype=float)
img = np.zeros((height, width, 4), dtype=np.uint8)
for row, lat in enumerate(row_lats):
    for col, lon in enumerate(col_lons):
        n = counts.get(h3.latlng_to_cell(lat, lon, 9), 0)
        if n:
            t = (n / top) * (len(ramp) - 1)
            low = int(t)
            high = min(low + 1, len(ramp) - 1)
            colour = ramp[low] + (ramp[high] - ramp[low]) * (t - low)
            img[row, col, :3] = colour.astype(np.uint8)
            img[row, col, 3] = 190
mapview.add_source("restaurant-density", {"type": "image", "data": img,
                                          "bounds": [west, south, east, north]})
mapview.add_layer({"id": "restaurant-density", "type": "raster",
                   "source": "restaurant-density",
                   "paint": {"raster-opacity": 0.8, "raster-resampling": "nearest"}},
                  before="{places}-circle")"""

#: ``(intent pattern, body)``; ``{kind}`` in a body is the prompt's entry of that kind.
_BODIES: Final[tuple[tuple[str, str], ...]] = (
    (r"heat ?map", _HEATMAP),
    (r"extru|3d", _EXTRUDE),
    (r"animat", _ANIMATE),
    (r"hex|density surface|overlay", _HEXAGONS),
)


def write_map_code(prompt: str) -> str:
    """The demo's answer to a generation prompt: a fenced body, or a plain sentence when
    the intent is none of the four it knows."""
    intent = prompt.split("\n", 1)[0].lower()
    ids = _entry_ids(prompt)
    for pattern, body in _BODIES:
        if re.search(pattern, intent):
            return "```python\n" + _fill(body, ids.get) + "\n```"
    return (
        "The demo model writes map code for four intents only: heatmap, extrude, animate, hexagons."
    )


def _entry_ids(prompt: str) -> dict[str, str]:
    found: dict[str, str] = {}
    for line in prompt.splitlines():
        if line.startswith("{") and '"id"' in line:
            try:
                entry = json.loads(line)
            except ValueError:
                continue
            found.setdefault(str(entry.get("kind")), str(entry.get("id")))
    return found


def _fill(body: str, entry: Callable[[str], str | None]) -> str:
    for kind in ("places", "routes", "geometries"):
        body = body.replace("{" + kind + "}", entry(kind) or f"{kind}-1")
    return body
