"""The map's style as map code sees it: geomint's layers for the chat's entries, with the
map changes applied so far on top. A fold of the chat's state, like everything the page
shows, so the sandbox, the prompt and the page agree on what is there.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any, Final

from geomint.codegen.verify import stored_diff_problem
from geomint.geo.errors import GeoInputError
from geomint.geo.raster import image_corners
from geomint.sandbox import RASTER_MEDIA_TYPE
from geomint.state import Entry, Workspace

__all__ = [
    "ENTRY_LAYER_TYPES",
    "RASTER_LAYER",
    "apply_diff",
    "base_style",
    "current_style",
    "entry_layer_ids",
    "map_change_problems",
    "raster_corners",
]

#: The layers the page draws for every entry, bottom to top, by suffix (``places-1-fill``).
ENTRY_LAYER_TYPES: Final = (("fill", "fill"), ("line", "line"), ("circle", "circle"),
                            ("label", "symbol"))  # fmt: skip


#: The one layer the page draws for a raster entry (``rasters-1-raster``), over its picture.
RASTER_LAYER: Final = ("raster", "raster")


def entry_layer_ids(entry_id: str, *, raster: bool = False) -> list[str]:
    """The ids of the page's layers for an entry (a raster entry has one)."""
    suffixes = [RASTER_LAYER[0]] if raster else [suffix for suffix, _ in ENTRY_LAYER_TYPES]
    return [f"{entry_id}-{suffix}" for suffix in suffixes]


def raster_corners(entry: Entry) -> list[list[float]] | None:
    """Where the page places a raster entry's picture (its latest version): four
    ``[lon, lat]`` corners from the top left, clockwise; None when it has no lon/lat bbox."""
    bbox = entry.latest.digest.get("bbox")
    given = bbox if isinstance(bbox, list) else []
    numbers = [float(v) for v in given if isinstance(v, int | float) and not isinstance(v, bool)]
    if len(given) != 4 or len(numbers) != 4:
        return None
    try:
        return [list(corner) for corner in image_corners(numbers)]
    except GeoInputError:
        return None


def base_style(workspace: Workspace) -> dict[str, Any]:
    """geomint's own sources and layers for the entries on the map (not removed), marked
    ``"geomint": True``, in the order the page draws them.

    A raster entry is an ``image`` source (its picture, placed by ``coordinates``) drawn by
    one ``raster`` layer; ``"rasters"`` maps every raster entry of the chat (removed ones
    too) to its corners and version, for an image source map code adds of one, and
    ``"chat"`` is the chat's id (a picture's URL names it)."""
    sources: dict[str, Any] = {}
    layers: list[dict[str, Any]] = []
    rasters: dict[str, Any] = {}
    for entry in workspace.entries.values():
        latest = entry.versions[-1]
        raster = latest.blob.media_type == RASTER_MEDIA_TYPE
        if raster:
            rasters[entry.entry_id] = {"coordinates": raster_corners(entry),
                                       "version": latest.version}  # fmt: skip
        if getattr(entry, "removed", False):
            continue
        sources[entry.entry_id] = {"type": "image" if raster else "geojson", "geomint": True,
                                   "kind": entry.kind, "label": latest.label}  # fmt: skip
        if raster:
            sources[entry.entry_id]["coordinates"] = rasters[entry.entry_id]["coordinates"]
        types = [RASTER_LAYER] if raster else ENTRY_LAYER_TYPES
        for suffix, kind in types:
            layers.append({"id": f"{entry.entry_id}-{suffix}", "type": kind,
                           "source": entry.entry_id, "geomint": True})  # fmt: skip
    return {"sources": sources, "layers": layers, "entries": list(workspace.entries),
            "rasters": rasters, "chat": workspace.chat_id}  # fmt: skip


def current_style(workspace: Workspace) -> dict[str, Any]:
    """The map as it is now: :func:`base_style` with every applied map change on top.

    A stored change that does not pass :func:`~geomint.codegen.verify.stored_diff_problem`
    (a damaged or hostile import) is left out, as the page leaves it out.
    """
    return _fold(workspace)[0]


def map_change_problems(workspace: Workspace) -> dict[str, str]:
    """Why each applied change left out of :func:`current_style` was left out, by id."""
    return _fold(workspace)[1]


def _fold(workspace: Workspace) -> tuple[dict[str, Any], dict[str, str]]:
    style = base_style(workspace)
    problems: dict[str, str] = {}
    for change in workspace.applied_map_changes:
        problem = stored_diff_problem(change.diff, style)
        if problem is None:
            style = apply_diff(style, change.diff)
        else:
            problems[change.change_id] = problem
    return style, problems


def apply_diff(style: Mapping[str, Any], diff: Mapping[str, Any]) -> dict[str, Any]:
    """``style`` with ``diff`` applied (a new dict; ``style`` is unchanged), in the order
    the page applies it (``docs/map-code.md``).

    A change whose target is gone (an entry removed from the map since) is skipped: the
    page skips it the same way.
    """
    out = copy.deepcopy(dict(style))
    sources: dict[str, Any] = out["sources"]
    layers: list[dict[str, Any]] = out["layers"]
    removed = diff.get("removed") or {}
    gone = set(removed.get("layers") or [])
    layers[:] = [layer for layer in layers if layer["id"] not in gone]
    for source_id in removed.get("sources") or []:
        sources.pop(source_id, None)
    added = diff.get("added") or {}
    for source_id, source in (added.get("sources") or {}).items():
        sources[source_id] = copy.deepcopy(source)
    by_id = {layer["id"]: layer for layer in layers}
    for change in (diff.get("updated") or {}).get("layers") or []:
        target = by_id.get(change["id"])
        if target is None:
            continue
        for group in ("paint", "layout"):
            for name, value in (change.get(group) or {}).items():
                values = target.setdefault(group, {})
                if value is None:
                    values.pop(name, None)
                else:
                    values[name] = copy.deepcopy(value)
        for key in ("filter", "minzoom", "maxzoom"):
            if key in change:
                if change[key] is None:
                    target.pop(key, None)
                else:
                    target[key] = copy.deepcopy(change[key])
    placements: list[tuple[dict[str, Any], object]] = []
    for layer in added.get("layers") or []:
        if layer.get("source") is not None and layer["source"] not in sources:
            continue
        spec = {k: copy.deepcopy(v) for k, v in layer.items() if k != "before"}
        placements.append((spec, layer.get("before")))
    for change in (diff.get("updated") or {}).get("layers") or []:
        if "before" in change and change["id"] in by_id:
            placements.append((by_id[change["id"]], change["before"]))
    # From the top of the final order down: each layer goes under one already in place.
    order = {layer_id: index for index, layer_id in enumerate(diff.get("order") or [])}
    placements.sort(key=lambda placed: order.get(placed[0]["id"], len(order)), reverse=True)
    for layer, before in placements:
        layers[:] = [other for other in layers if other is not layer]
        _insert(layers, layer, before)
    for animation in diff.get("animations") or []:
        target = next((layer for layer in layers if layer["id"] == animation["layer_id"]), None)
        if target is not None:
            target.setdefault("paint", {}).update(copy.deepcopy(animation["keyframes"][0]["paint"]))
    return out


def _insert(layers: list[dict[str, Any]], layer: dict[str, Any], before: object) -> None:
    index = next((i for i, other in enumerate(layers) if other["id"] == before), len(layers))
    layers.insert(index, layer)
