"""``mapview``: the map as map code sees it. It records changes and draws nothing.

It stands for MapLibre's ``map`` in the seeds' ``executeMaplibreCode``, with MapLibre's
names in Python style (``add_layer``, ``set_paint_property``, ``fly_to``...). Each call
changes a copy of the style at once, so the code reads its own changes back
(:meth:`MapView.get_style`) and a mistake fails on the line that made it, and each is
recorded as an operation: plain data, the only thing that leaves the sandbox.

The host never trusts those records. It replays them on a fresh ``MapView`` built from
the style it holds (:func:`replay`), so the same checks run again outside the child, and
what they produce, the diff, is then checked against the MapLibre style specification
(:mod:`geomint.codegen`). No code of the model's ever reaches the page.

Runs inside the sandbox child: standard library only, plus :mod:`geomint.sandbox.results`.
"""

from __future__ import annotations

import base64
import copy
import hashlib
import math
import re
import struct
import sys
import types
import zlib
from collections.abc import Mapping, Sequence
from typing import Any, Final

from geomint.errors import ModelFacingError
from geomint.sandbox.results import JsonValue, to_json_safe

__all__ = [
    "MAX_ADDED",
    "MAX_ANIMATION_FRAMES",
    "MAX_IMAGE_PIXELS",
    "MAX_OPS",
    "MAX_SOURCE_FEATURES",
    "MapCodeError",
    "MapView",
    "png_size",
    "replay",
]

#: Operations one run may record (each is one call on ``mapview``).
MAX_OPS: Final = 200
#: Sources, and layers, one run may add.
MAX_ADDED: Final = 20
#: Features in one GeoJSON source the code builds (an entry's own source is not copied).
MAX_SOURCE_FEATURES: Final = 50_000
#: Pixels in one image the code renders (2048 x 2048).
MAX_IMAGE_PIXELS: Final = 2048 * 2048
#: Largest PNG accepted, in bytes.
MAX_PNG_BYTES: Final = 8 * 1024 * 1024
#: Keyframes in one animation, and its longest duration.
MAX_ANIMATION_FRAMES: Final = 50
MAX_ANIMATION_MS: Final = 60_000
_ID_CHARS: Final = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_.")
_ENTRY_SHAPED: Final = re.compile(r"^[a-z_]+-[0-9]+(-[a-z]+)?$")
_PNG_SIGNATURE: Final = b"\x89PNG\r\n\x1a\n"
#: This chat's picture of a raster entry (geomint.ui.raster_url): the one URL map code takes.
_RASTER_URL: Final = re.compile(
    r"^/api/chats/(?P<chat>[A-Za-z0-9_-]{1,64})/entries/(?P<entry>[a-z_]+-[1-9][0-9]{0,8})"
    r"/raster\.png(?:\?version=(?P<version>[1-9][0-9]{0,8}))?$"
)
_CAMERA_KEYS: Final = ("center", "zoom", "bearing", "pitch")


class MapCodeError(ModelFacingError, ValueError):
    """A ``mapview`` call the map cannot take, said so the model can fix it."""


class MapView:
    """The ``mapview`` object injected into map code (MapLibre's ``map``, recorded).

    Example:
        >>> view = MapView({"sources": {"places-1": {"type": "geojson", "geomint": True}},
        ...                 "layers": []})
        >>> view.add_layer({"id": "cafe-heat", "type": "heatmap", "source": "places-1"})
        >>> [layer["id"] for layer in view.get_style()["layers"]]
        ['cafe-heat']
        >>> view.ops[0]["op"]
        'add_layer'
    """

    __slots__ = ("_added", "_chat", "_entries", "_initial", "_rasters", "_style", "images", "ops")

    def __init__(self, style: Mapping[str, Any]) -> None:
        """``style``: ``{"sources": {id: source}, "layers": [layer, ...]}``, geomint's own
        marked ``"geomint": true``; ``"entries"`` optionally lists the chat's entry ids a
        GeoJSON source may name as its ``data``, ``"rasters"`` maps its raster entries to
        ``{"coordinates", "version"}`` (an image source may name one), and ``"chat"`` is
        the chat's id (a raster picture's URL names it)."""
        sources = style.get("sources") or {}
        layers = style.get("layers") or []
        self._style: dict[str, Any] = {
            "sources": {str(k): dict(v) for k, v in dict(sources).items()},
            "layers": [dict(layer) for layer in layers],
        }
        self._initial = copy.deepcopy(self._style)
        self._rasters: dict[str, Any] = {
            str(k): dict(v) for k, v in dict(style.get("rasters") or {}).items()
        }
        self._entries = frozenset(str(e) for e in style.get("entries") or ()) | {
            k for k, v in self._style["sources"].items() if v.get("geomint")
        }
        self._chat = style.get("chat")
        self._added = {"sources": 0, "layers": 0}
        self.ops: list[dict[str, JsonValue]] = []
        #: The PNGs of image sources, by their SHA-256 (the style names them by it).
        self.images: dict[str, bytes] = {}

    # -- sources -------------------------------------------------------------------------

    def add_source(self, source_id: str, source: Mapping[str, Any]) -> None:
        """Add a source, as ``map.addSource(id, source)`` does.

        A ``"geojson"`` source's ``data`` is an entry id of this chat (``"places-1"``) or
        GeoJSON the code built (a FeatureCollection, a Feature, a geometry, a list of
        Features, a shapely geometry or a GeoDataFrame). An ``"image"`` source's ``data`` is
        an RGBA (or RGB) numpy array of ``uint8`` the code rendered, or PNG bytes, placed by
        ``coordinates`` (four ``[lon, lat]`` corners from the top left, clockwise) or
        ``bounds`` (``[west, south, east, north]``); or a raster entry's id
        (``"rasters-1"``): geomint's picture of it (coloured low to high, nodata
        transparent), placed where the raster is unless ``coordinates`` or ``bounds`` say
        otherwise. URLs are not allowed: a source names an entry or carries its own data
        (the one URL taken is this chat's own picture of a raster entry, as ``"url"``).
        """
        self._count("sources")
        source_id = _id(source_id, "source")
        if source_id in self._style["sources"]:
            raise MapCodeError(
                f"there is already a source {source_id!r}; pick another id, or "
                "mapview.remove_source it first"
            )
        if not isinstance(source, Mapping):
            raise MapCodeError(
                f"add_source takes the source as a dict such as "
                f"{{'type': 'geojson', 'data': 'places-1'}}, got {type(source).__name__}"
            )
        kind = source.get("type")
        if kind == "geojson":
            spec, recorded = self._geojson_source(source_id, source)
        elif kind == "image" and (isinstance(source.get("data"), str) or "url" in source):
            spec, recorded = self._raster_source(source_id, source)
        elif kind == "image":
            spec, recorded, png = _image_source(source_id, source)
            self.images[spec["image"]["sha256"]] = png
        else:
            raise MapCodeError(
                f"source {source_id!r} has type {kind!r}; map code adds 'geojson' sources "
                "(an entry or GeoJSON it built) and 'image' sources (a picture it rendered)"
            )
        self._style["sources"][source_id] = spec
        self._record("add_source", {"source_id": source_id, "source": recorded})

    def _geojson_source(
        self, source_id: str, source: Mapping[str, Any]
    ) -> tuple[dict[str, Any], dict[str, JsonValue]]:
        allowed = {"type", "data", "lineMetrics", "generateId", "promoteId", "attribution",
                   "maxzoom", "buffer", "tolerance", "cluster", "clusterRadius",
                   "clusterMaxZoom", "clusterMinPoints"}  # fmt: skip
        _no_other_keys(source, allowed, f"source {source_id!r}")
        data = source.get("data")
        options = {k: to_json_safe(v) for k, v in source.items() if k not in ("type", "data")}
        if isinstance(data, str):
            if data in self._rasters:
                raise MapCodeError(
                    f"source {source_id!r}: {data} is a raster entry, not features; add it as "
                    f"an image source, {{'type': 'image', 'data': {data!r}}}, drawn by a "
                    f"'raster' layer (or restyle its own layer, {data}-raster)"
                )
            if data not in self._entries:
                known = ", ".join(sorted(self._entries)) or "none yet"
                raise MapCodeError(
                    f"source {source_id!r}: data {data[:80]!r} is neither an entry of this chat "
                    f"nor GeoJSON (the entries are {known}); URLs are not allowed: build the "
                    "GeoJSON in the code, or name an entry"
                )
            spec = {"type": "geojson", "data": {"entry": data}, **options}
            return spec, {"type": "geojson", "entry": data, **options}
        collection = _feature_collection(data, source_id)
        spec = {"type": "geojson", "data": collection, **options}
        return spec, {"type": "geojson", "data": collection, **options}

    def _raster_source(
        self, source_id: str, source: Mapping[str, Any]
    ) -> tuple[dict[str, Any], dict[str, JsonValue]]:
        allowed = {"type", "data", "url", "coordinates", "bounds"}
        _no_other_keys(source, allowed, f"source {source_id!r}")
        if ("data" in source) == ("url" in source):
            raise MapCodeError(
                f"image source {source_id!r} names its raster entry once: 'data': 'rasters-1'"
            )
        entry_id = source.get("data") if "data" in source else self._raster_of(source["url"])
        raster = self._rasters.get(entry_id) if isinstance(entry_id, str) else None
        if raster is None:
            known = ", ".join(sorted(self._rasters)) or "none"
            raise MapCodeError(
                f"image source {source_id!r}: {str(entry_id)[:80]!r} is not a raster entry of "
                f"this chat (its raster entries: {known}); an image's 'data' is a raster "
                "entry's id, or an RGBA numpy array or PNG bytes the code rendered"
            )
        if "coordinates" in source or "bounds" in source:
            corners = _corners(source, source_id)
        elif raster.get("coordinates") is None:
            raise MapCodeError(
                f"{entry_id} has no extent in longitude and latitude to place it by; give "
                "'bounds' [west, south, east, north] or 'coordinates'"
            )
        else:
            corners = [[float(x), float(y)] for x, y in raster["coordinates"]]
        spec = {"type": "image", "raster": {"entry": entry_id}, "coordinates": corners}
        recorded: dict[str, JsonValue] = {
            "type": "image",
            "entry": entry_id,
            "coordinates": corners,  # type: ignore[dict-item]
        }
        return spec, recorded

    def _raster_of(self, url: object) -> str:
        """The raster entry a picture's URL names: this chat's own route, else refused."""
        found = _RASTER_URL.match(url) if isinstance(url, str) else None
        if found is None or found["chat"] != self._chat:
            raise MapCodeError(
                f"URLs are not allowed ({str(url)[:80]!r}) but for this chat's own pictures "
                "of its raster entries; name the entry instead: "
                "{'type': 'image', 'data': 'rasters-1'}"
            )
        entry_id = found["entry"]
        raster = self._rasters.get(entry_id)
        version = found["version"]
        if raster is not None and version is not None and int(version) != raster["version"]:
            raise MapCodeError(
                f"{entry_id} is at version {raster['version']}, and map code draws an entry's "
                f"newest picture: name it as {{'type': 'image', 'data': {entry_id!r}}}"
            )
        return entry_id

    def remove_source(self, source_id: str) -> None:
        """Remove a source map code added (no layer may still use it)."""
        source = self._source(source_id)
        if source.get("geomint"):
            raise MapCodeError(
                f"{source_id!r} is an entry of the chat; map code cannot remove it. Hide it "
                "with the entry's display tool instead, or cover it with a layer of your own"
            )
        users = [layer["id"] for layer in self._style["layers"] if layer.get("source") == source_id]
        if users:
            raise MapCodeError(
                f"source {source_id!r} is still used by layer(s) {', '.join(users)}; "
                "remove those layers first"
            )
        del self._style["sources"][source_id]
        self._record("remove_source", {"source_id": source_id})

    # -- layers --------------------------------------------------------------------------

    def add_layer(self, layer: Mapping[str, Any], before: str | None = None) -> None:
        """Add a layer, as ``map.addLayer(layer, beforeId)`` does: ``layer`` is a MapLibre
        layer (``id``, ``type``, ``source``, ``paint``, ``layout``, ``filter``,
        ``minzoom``, ``maxzoom``); ``before`` the id of the layer to draw it under (on top
        of everything when None)."""
        self._count("layers")
        if not isinstance(layer, Mapping):
            raise MapCodeError(
                f"add_layer takes the layer as a dict with 'id', 'type' and 'source', got "
                f"{type(layer).__name__}"
            )
        spec = to_json_safe(dict(layer))
        assert isinstance(spec, dict)
        layer_id = _id(spec.get("id"), "layer")
        if self._find(layer_id) is not None:
            raise MapCodeError(f"there is already a layer {layer_id!r}; pick another id")
        if "geomint" in spec:
            raise MapCodeError("'geomint' marks geomint's own layers; leave it out")
        source = spec.get("source")
        if spec.get("type") != "background":
            if not isinstance(source, str):
                raise MapCodeError(
                    f"layer {layer_id!r} needs a 'source': the id of a source on the map "
                    f"({self._source_list()})"
                )
            self._source(source)
        index = self._index_before(before)
        self._style["layers"].insert(index, spec)
        self._record("add_layer", {"layer": spec, "before": before})

    def remove_layer(self, layer_id: str) -> None:
        """Remove a layer map code added."""
        layer = self._layer(layer_id)
        if layer.get("geomint"):
            raise MapCodeError(
                f"{layer_id!r} is one of geomint's layers for an entry; map code cannot remove "
                "it. Hide the entry with its display tool, or set its opacity to 0"
            )
        self._style["layers"].remove(layer)
        self._record("remove_layer", {"layer_id": layer_id})

    def move_layer(self, layer_id: str, before: str | None = None) -> None:
        """Draw a layer under ``before`` (on top of everything when None)."""
        layer = self._layer(layer_id)
        if before == layer_id:
            raise MapCodeError("a layer cannot be moved before itself")
        self._style["layers"].remove(layer)
        self._style["layers"].insert(self._index_before(before), layer)
        self._record("move_layer", {"layer_id": layer_id, "before": before})

    def set_paint_property(self, layer_id: str, name: str, value: Any) -> None:
        """Set one paint property (``"fill-color"``, ``"circle-radius"``...); None unsets it."""
        self._set_property(layer_id, "paint", name, value)

    def set_layout_property(self, layer_id: str, name: str, value: Any) -> None:
        """Set one layout property (``"visibility"``, ``"text-field"``...); None unsets it."""
        self._set_property(layer_id, "layout", name, value)

    def set_filter(self, layer_id: str, filter: Any) -> None:
        """Set a layer's filter expression (None removes it)."""
        layer = self._layer(layer_id)
        value = to_json_safe(filter)
        if value is None:
            layer.pop("filter", None)
        else:
            layer["filter"] = value
        self._record("set_filter", {"layer_id": layer_id, "filter": value})

    def set_layer_zoom_range(self, layer_id: str, minzoom: float, maxzoom: float) -> None:
        """Show a layer only between two zooms."""
        layer = self._layer(layer_id)
        low, high = _number(minzoom, "minzoom"), _number(maxzoom, "maxzoom")
        if not 0 <= low <= high <= 24:
            raise MapCodeError(
                f"zooms must satisfy 0 <= minzoom <= maxzoom <= 24, got {low}, {high}"
            )
        layer["minzoom"], layer["maxzoom"] = low, high
        self._record(
            "set_layer_zoom_range", {"layer_id": layer_id, "minzoom": low, "maxzoom": high}
        )

    def _set_property(self, layer_id: str, group: str, name: str, value: Any) -> None:
        layer = self._layer(layer_id)
        if not isinstance(name, str) or not name or len(name) > 100:
            raise MapCodeError(
                f"a {group} property name is text such as 'fill-color', got {name!r}"
            )
        converted = to_json_safe(value)
        properties = layer.setdefault(group, {})
        if converted is None:
            properties.pop(name, None)
        else:
            properties[name] = converted
        self._record(
            f"set_{group}_property", {"layer_id": layer_id, "name": name, "value": converted}
        )

    # -- the camera and animation -------------------------------------------------------

    def fly_to(
        self,
        center: Sequence[float] | None = None,
        zoom: float | None = None,
        bearing: float | None = None,
        pitch: float | None = None,
    ) -> None:
        """Fly the camera (``map.flyTo``): ``center`` is ``[lon, lat]``."""
        self._camera("fly_to", center=center, zoom=zoom, bearing=bearing, pitch=pitch)

    def ease_to(
        self,
        center: Sequence[float] | None = None,
        zoom: float | None = None,
        bearing: float | None = None,
        pitch: float | None = None,
    ) -> None:
        """Ease the camera (``map.easeTo``), a shorter move than :meth:`fly_to`."""
        self._camera("ease_to", center=center, zoom=zoom, bearing=bearing, pitch=pitch)

    def fit_bounds(self, bounds: Sequence[float], padding: int = 40) -> None:
        """Fit the camera to ``[west, south, east, north]``."""
        box = _bounds(bounds)
        pad = int(_number(padding, "padding"))
        if not 0 <= pad <= 500:
            raise MapCodeError(f"padding is pixels from 0 to 500, got {pad}")
        self._record("fit_bounds", {"bounds": list(box), "padding": pad})

    def _camera(self, op: str, **values: Any) -> None:
        out: dict[str, JsonValue] = {}
        if values["center"] is not None:
            lon, lat = _lon_lat(values["center"], "center")
            out["center"] = [lon, lat]
        limits = {"zoom": (0, 24), "bearing": (-360, 360), "pitch": (0, 85)}
        for key, (low, high) in limits.items():
            if values[key] is not None:
                number = _number(values[key], key)
                if not low <= number <= high:
                    raise MapCodeError(f"{key} must be from {low} to {high}, got {number}")
                out[key] = number
        if not out:
            raise MapCodeError(f"{op} needs at least one of {', '.join(_CAMERA_KEYS)}")
        self._record(op, out)

    def animate(
        self,
        layer_id: str,
        keyframes: Sequence[Mapping[str, Any]],
        duration_ms: int = 3_000,
        repeat: bool = False,
    ) -> None:
        """Have the page play paint properties over time; no code runs in the browser.

        ``keyframes`` is a list of ``{"at": 0..1, "paint": {property: value}}`` in order,
        the first at 0 and the last at 1. Between two keyframes the page moves every number
        of a value (numbers inside an expression too, at the same place in both) in a
        straight line; anything else switches at the later keyframe. So a route drawn from
        start to end is a ``line-gradient`` ``["step", ["line-progress"], colour, t,
        "rgba(0,0,0,0)"]`` with ``t`` from 0 to 1 (its source needs ``lineMetrics``).
        """
        layer = self._layer(layer_id)
        if not isinstance(keyframes, Sequence) or not 2 <= len(keyframes) <= MAX_ANIMATION_FRAMES:
            raise MapCodeError(
                f"animate takes from 2 to {MAX_ANIMATION_FRAMES} keyframes, each "
                "{'at': 0..1, 'paint': {...}}"
            )
        frames: list[tuple[float, dict[str, JsonValue]]] = []
        for index, frame in enumerate(keyframes):
            if not isinstance(frame, Mapping) or set(frame) != {"at", "paint"}:
                raise MapCodeError(f"keyframe {index} must be {{'at': 0..1, 'paint': {{...}}}}")
            at = _number(frame["at"], f"keyframe {index} 'at'")
            if not (0 <= at <= 1) or (frames and at <= frames[-1][0]):
                raise MapCodeError(
                    f"keyframe {index}: 'at' values rise from 0 to 1 in order, got {at}"
                )
            paint = to_json_safe(frame["paint"])
            if not isinstance(paint, dict) or not paint:
                raise MapCodeError(f"keyframe {index}: 'paint' is a dict of paint properties")
            frames.append((at, paint))
        if frames[0][0] != 0 or frames[-1][0] != 1:
            raise MapCodeError("the first keyframe is at 0 and the last at 1")
        if any(set(paint) != set(frames[0][1]) for _, paint in frames):
            raise MapCodeError("every keyframe sets the same paint properties")
        duration = int(_number(duration_ms, "duration_ms"))
        if not 100 <= duration <= MAX_ANIMATION_MS:
            raise MapCodeError(f"duration_ms is from 100 to {MAX_ANIMATION_MS}, got {duration}")
        if not isinstance(repeat, bool):
            raise MapCodeError("repeat is True or False")
        # The layer starts as the first keyframe, so what shows before playing is right.
        layer.setdefault("paint", {}).update(copy.deepcopy(frames[0][1]))
        recorded: list[JsonValue] = [{"at": at, "paint": paint} for at, paint in frames]
        self._record(
            "animate",
            {
                "layer_id": layer_id,
                "keyframes": recorded,
                "duration_ms": duration,
                "repeat": repeat,
            },
        )

    # -- reading -------------------------------------------------------------------------

    def get_style(self) -> dict[str, Any]:
        """The style as it is now, as data (a copy: changing it changes nothing).

        ``sources`` maps ids to sources and ``layers`` lists layers bottom to top; geomint's
        own (the chat's entries and their layers) carry ``"geomint": True``. A source made
        from an entry shows ``"data": {"entry": "places-1"}``.
        """
        return copy.deepcopy(self._style)

    def layer_ids(self) -> list[str]:
        """The ids of the layers map code can style, bottom to top."""
        return [str(layer["id"]) for layer in self._style["layers"]]

    # -- bookkeeping ---------------------------------------------------------------------

    def _record(self, op: str, args: dict[str, JsonValue]) -> None:
        if len(self.ops) >= MAX_OPS:
            raise MapCodeError(f"map code may make at most {MAX_OPS} changes in one run")
        self.ops.append({"op": op, "args": args, "line": _caller_line()})

    def _count(self, what: str) -> None:
        if self._added[what] >= MAX_ADDED:
            raise MapCodeError(f"map code may add at most {MAX_ADDED} {what} in one run")
        self._added[what] += 1

    def _source(self, source_id: object) -> dict[str, Any]:
        source = self._style["sources"].get(source_id) if isinstance(source_id, str) else None
        if source is None:
            raise MapCodeError(
                f"there is no source {source_id!r}; the sources are {self._source_list()}"
            )
        result: dict[str, Any] = source
        return result

    def _source_list(self) -> str:
        return ", ".join(sorted(self._style["sources"])) or "none yet"

    def _find(self, layer_id: object) -> dict[str, Any] | None:
        for layer in self._style["layers"]:
            if layer.get("id") == layer_id:
                found: dict[str, Any] = layer
                return found
        return None

    def _layer(self, layer_id: object) -> dict[str, Any]:
        layer = self._find(layer_id)
        if layer is None:
            ids = self.layer_ids()
            shown = ", ".join(ids[:30]) + (" …" if len(ids) > 30 else "")
            raise MapCodeError(f"there is no layer {layer_id!r}; the layers are {shown or 'none'}")
        return layer

    def _index_before(self, before: object) -> int:
        if before is None:
            return len(self._style["layers"])
        layer = self._layer(before)
        return int(self._style["layers"].index(layer))

    def diff(self) -> dict[str, JsonValue]:
        """What changed since the start, as ``{added, removed, updated, camera,
        animations}`` (see ``docs/map-code.md``)."""
        return _diff(self._initial, self._style, self.ops)


def replay(style: Mapping[str, Any], ops: Sequence[Mapping[str, Any]]) -> MapView:
    """Apply recorded ``ops`` to a fresh :class:`MapView` of ``style``, checking each again.

    Raises:
        MapCodeError: An operation the map cannot take (the message names it and its line).
    """
    if len(ops) > MAX_OPS:
        raise MapCodeError(f"map code may make at most {MAX_OPS} changes in one run")
    view = MapView(style)
    for index, op in enumerate(ops):
        name, args = op.get("op"), op.get("args")
        line = op.get("line") if isinstance(op.get("line"), int) else 0
        if name not in _REPLAYABLE or not isinstance(args, Mapping):
            raise MapCodeError(f"operation {index} is not a mapview call")
        try:
            _REPLAYABLE[name](view, dict(args))
        except MapCodeError as exc:
            raise MapCodeError(f"line {line}: {exc}") from None
        except (TypeError, ValueError, KeyError) as exc:
            raise MapCodeError(f"line {line}: {name} could not be replayed: {exc}") from None
        view.ops[-1]["line"] = line
    return view


def _replay_add_source(view: MapView, args: dict[str, Any]) -> None:
    source = dict(args["source"])
    if source.get("type") in ("geojson", "image") and "entry" in source:
        source["data"] = source.pop("entry")
    elif source.get("type") == "image":
        source["data"] = base64.b64decode(str(source.pop("png")), validate=True)
    view.add_source(args["source_id"], source)


_REPLAYABLE: Final[dict[str, Any]] = {
    "add_source": _replay_add_source,
    "remove_source": lambda v, a: v.remove_source(a["source_id"]),
    "add_layer": lambda v, a: v.add_layer(a["layer"], before=a.get("before")),
    "remove_layer": lambda v, a: v.remove_layer(a["layer_id"]),
    "move_layer": lambda v, a: v.move_layer(a["layer_id"], before=a.get("before")),
    "set_paint_property": lambda v, a: v.set_paint_property(a["layer_id"], a["name"], a["value"]),
    "set_layout_property": lambda v, a: v.set_layout_property(a["layer_id"], a["name"], a["value"]),
    "set_filter": lambda v, a: v.set_filter(a["layer_id"], a["filter"]),
    "set_layer_zoom_range": lambda v, a: v.set_layer_zoom_range(
        a["layer_id"], a["minzoom"], a["maxzoom"]
    ),
    "fly_to": lambda v, a: v.fly_to(**a),
    "ease_to": lambda v, a: v.ease_to(**a),
    "fit_bounds": lambda v, a: v.fit_bounds(a["bounds"], a.get("padding", 40)),
    "animate": lambda v, a: v.animate(
        a["layer_id"], a["keyframes"], a.get("duration_ms", 3_000), a.get("repeat", False)
    ),
}


def _diff(
    before: Mapping[str, Any], after: Mapping[str, Any], ops: Sequence[Mapping[str, Any]]
) -> dict[str, JsonValue]:
    """What changed, applied in this order: remove ``removed`` layers then sources, add
    ``added`` sources, set ``updated`` properties, place ``added`` layers and moved
    ``updated`` ones from the top of ``order`` down (each under its ``before``), then the
    camera and the animations. A layer or source removed and added again, or whose type
    or source changed, is *replaced*: removed and added, so the new one is checked whole.
    """
    old_sources, new_sources = before["sources"], after["sources"]
    old_layers = {layer["id"]: layer for layer in before["layers"]}
    new_layers = {layer["id"]: layer for layer in after["layers"]}
    order = [layer["id"] for layer in after["layers"]]

    def named(op: str, key: str) -> set[str]:
        return {str(o["args"].get(key)) for o in ops if o.get("op") == op}

    replaced_sources = {
        k for k in old_sources
        if k in new_sources and (k in named("remove_source", "source_id")
                                 or old_sources[k] != new_sources[k])
    }  # fmt: skip
    replaced_layers = {
        i for i in old_layers
        if i in new_layers and (
            i in named("remove_layer", "layer_id")
            or old_layers[i].get("type") != new_layers[i].get("type")
            or old_layers[i].get("source") != new_layers[i].get("source")
            or new_layers[i].get("source") in replaced_sources
        )
    }  # fmt: skip

    def above(layer_id: str) -> str | None:
        index = order.index(layer_id)
        return order[index + 1] if index + 1 < len(order) else None

    kept = [i for i in order if i in old_layers and i not in replaced_layers]
    old_kept = [i for i in (layer["id"] for layer in before["layers"]) if i in kept]
    moved = named("move_layer", "layer_id")
    updated: list[JsonValue] = []
    for layer_id in kept:
        old, new = old_layers[layer_id], new_layers[layer_id]
        change: dict[str, JsonValue] = {}
        for group in ("paint", "layout"):
            o, n = old.get(group) or {}, new.get(group) or {}
            names = [k for k in dict.fromkeys([*o, *n]) if o.get(k) != n.get(k)]
            if names:
                change[group] = {k: n.get(k) for k in names}
                change[f"previous_{group}"] = {k: o.get(k) for k in names}
        for key in ("filter", "minzoom", "maxzoom"):
            if old.get(key) != new.get(key):
                change[key] = new.get(key)
                change[f"previous_{key}"] = old.get(key)
        if old_kept.index(layer_id) != kept.index(layer_id) or layer_id in moved:
            change["before"] = above(layer_id)
        if change:
            updated.append({"id": layer_id, **change})
    camera = [op for op in ops if op.get("op") in ("fly_to", "ease_to", "fit_bounds")]
    return {
        "added": {
            "sources": {
                k: v
                for k, v in new_sources.items()
                if k not in old_sources or k in replaced_sources
            },
            "layers": [
                {**new_layers[i], "before": above(i)}
                for i in order
                if i not in old_layers or i in replaced_layers
            ],
        },
        "removed": {
            "sources": [k for k in old_sources if k not in new_sources or k in replaced_sources],
            "layers": [i for i in old_layers if i not in new_layers or i in replaced_layers],
        },
        "updated": {"layers": updated},
        "camera": ({"kind": camera[-1]["op"], **camera[-1]["args"]} if camera else None),
        # An animation of a layer the code then removed has nothing to play on.
        "animations": [
            op["args"]
            for op in ops
            if op.get("op") == "animate" and op["args"].get("layer_id") in new_layers
        ],
        "order": list(order),
    }


# -- values ------------------------------------------------------------------------------


def _id(value: object, what: str) -> str:
    if not isinstance(value, str) or not 1 <= len(value) <= 64 or not set(value) <= _ID_CHARS:
        raise MapCodeError(
            f"a {what} id is 1 to 64 letters, digits, '-', '_' or '.', such as 'cafe-heat'; "
            f"got {value!r}"[:300]
        )
    if _ENTRY_SHAPED.match(value):
        # places-2 and places-2-circle are kept for the entries geomint writes next.
        raise MapCodeError(
            f"{value!r} has the shape of an entry's id (a kind, a number, a part); pick a "
            "name of your own, such as 'cafe-heat'"
        )
    return value


def _no_other_keys(given: Mapping[str, Any], allowed: set[str], where: str) -> None:
    extra = sorted(str(k) for k in given if k not in allowed)
    if extra:
        raise MapCodeError(
            f"{where} has {', '.join(map(repr, extra))}, which map code cannot set; "
            f"it may set {', '.join(sorted(allowed))}"
        )


def _number(value: object, what: str) -> float:
    if isinstance(value, bool) or (
        not isinstance(value, int | float) and type(value).__module__ != "numpy"
    ):
        raise MapCodeError(f"{what} must be a number, got {value!r}"[:300])
    number = float(value)  # type: ignore[arg-type]
    if not math.isfinite(number):
        raise MapCodeError(f"{what} must be a finite number, got {number}")
    return int(number) if number.is_integer() and abs(number) < 2**53 else number


def _lon_lat(value: object, what: str) -> tuple[float, float]:
    if not isinstance(value, Sequence) or isinstance(value, str) or len(value) != 2:
        raise MapCodeError(f"{what} is [lon, lat], got {value!r}"[:300])
    lon, lat = _number(value[0], f"{what} longitude"), _number(value[1], f"{what} latitude")
    if not (-180 <= lon <= 180 and -90 <= lat <= 90):
        raise MapCodeError(f"{what} is [lon, lat] in degrees; got [{lon}, {lat}]")
    return lon, lat


def _bounds(value: object) -> tuple[float, float, float, float]:
    if not isinstance(value, Sequence) or isinstance(value, str) or len(value) != 4:
        raise MapCodeError(f"bounds are [west, south, east, north], got {value!r}"[:300])
    west, south = _lon_lat(value[:2], "bounds' south-west corner")
    east, north = _lon_lat(value[2:], "bounds' north-east corner")
    if south > north or west > east:
        raise MapCodeError(f"bounds are [west, south, east, north]; got {list(value)}")
    return west, south, east, north


def _feature_collection(data: object, source_id: str) -> dict[str, JsonValue]:
    value = to_json_safe(data)
    features: list[JsonValue] | None = None
    if isinstance(value, dict):
        kind = value.get("type")
        if kind == "FeatureCollection" and isinstance(value.get("features"), list):
            features = value["features"]  # type: ignore[assignment]
        elif kind == "Feature":
            features = [value]
        elif (isinstance(kind, str) and "coordinates" in value) or kind == "GeometryCollection":
            features = [{"type": "Feature", "properties": {}, "geometry": value}]
    elif isinstance(value, list) and all(
        isinstance(f, dict) and f.get("type") == "Feature" for f in value
    ):
        features = value
    if features is None:
        raise MapCodeError(
            f"source {source_id!r}: 'data' is an entry id or GeoJSON (a FeatureCollection, a "
            f"Feature, a geometry, a list of Features, a shapely geometry or a GeoDataFrame); "
            f"got {type(data).__name__}"
        )
    if len(features) > MAX_SOURCE_FEATURES:
        raise MapCodeError(
            f"source {source_id!r} has {len(features):,} features; map code may build at most "
            f"{MAX_SOURCE_FEATURES:,} per source (aggregate them, or use the entry itself)"
        )
    return {"type": "FeatureCollection", "features": features}


def _image_source(
    source_id: str, source: Mapping[str, Any]
) -> tuple[dict[str, Any], dict[str, JsonValue], bytes]:
    _no_other_keys(source, {"type", "data", "coordinates", "bounds"}, f"source {source_id!r}")
    corners = _corners(source, source_id)
    png = _png(source.get("data"), source_id)
    width, height = png_size(png)
    spec = {
        "type": "image",
        "image": {"sha256": hashlib.sha256(png).hexdigest(), "width": width, "height": height},
        "coordinates": corners,
    }
    recorded: dict[str, JsonValue] = {
        "type": "image",
        "png": base64.b64encode(png).decode("ascii"),
        "coordinates": corners,  # type: ignore[dict-item]
    }
    return spec, recorded, png


def _corners(source: Mapping[str, Any], source_id: str) -> list[list[float]]:
    """An image's four ``[lon, lat]`` corners, from its ``bounds`` or ``coordinates``."""
    if ("coordinates" in source) == ("bounds" in source):
        raise MapCodeError(
            f"image source {source_id!r} needs its place: 'bounds' [west, south, east, north] "
            "or 'coordinates' (four [lon, lat] corners from the top left, clockwise)"
        )
    if "bounds" in source:
        west, south, east, north = _bounds(source["bounds"])
        return [[west, north], [east, north], [east, south], [west, south]]
    given = source["coordinates"]
    if not isinstance(given, Sequence) or len(given) != 4:
        raise MapCodeError("'coordinates' are four [lon, lat] corners: top left, top right, "
                           "bottom right, bottom left")  # fmt: skip
    return [list(_lon_lat(c, "an image corner")) for c in given]


def _png(data: object, source_id: str) -> bytes:
    if isinstance(data, bytes | bytearray):
        return bytes(data)
    if type(data).__name__ == "ndarray":
        return _encode_png(data, source_id)
    raise MapCodeError(
        f"image source {source_id!r}: 'data' is an RGBA or RGB numpy array of uint8 "
        f"(height x width x 4 or 3) or PNG bytes, got {type(data).__name__}"
    )


def png_size(png: bytes) -> tuple[int, int]:
    """Width and height from a PNG's header, refusing what is not a PNG within the caps.

    Only the fixed-size header is read; the pixels are never decoded here.

    Raises:
        MapCodeError: Not a PNG, or larger than :data:`MAX_PNG_BYTES` or
            :data:`MAX_IMAGE_PIXELS`.
    """
    if len(png) > MAX_PNG_BYTES:
        raise MapCodeError(f"the image is {len(png):,} bytes; at most {MAX_PNG_BYTES:,}")
    if len(png) < 33 or not png.startswith(_PNG_SIGNATURE) or png[12:16] != b"IHDR":
        raise MapCodeError("the image bytes are not a PNG")
    width, height = struct.unpack(">II", png[16:24])
    if not (width and height) or width * height > MAX_IMAGE_PIXELS:
        raise MapCodeError(
            f"the image is {width} x {height} pixels; at most {MAX_IMAGE_PIXELS:,} pixels "
            "(2048 x 2048)"
        )
    return int(width), int(height)


def _encode_png(array: Any, source_id: str) -> bytes:
    # PNG is written here rather than with Pillow: the sandbox has no imaging library, and
    # an RGBA PNG is a zlib stream of rows behind three chunks, a few lines of stdlib.
    shape = tuple(getattr(array, "shape", ()))
    if len(shape) != 3 or shape[2] not in (3, 4) or str(array.dtype) != "uint8":
        raise MapCodeError(
            f"image source {source_id!r}: the array must be uint8 of shape (height, width, 4) "
            f"or (height, width, 3), got {array.dtype!s} of shape {shape}; use "
            "np.clip(x, 0, 255).astype(np.uint8)"
        )
    height, width, channels = (int(n) for n in shape)
    if not (width and height) or width * height > MAX_IMAGE_PIXELS:
        raise MapCodeError(
            f"the image is {width} x {height} pixels; at most {MAX_IMAGE_PIXELS:,} (2048 x 2048)"
        )
    raw = array.tobytes(order="C")
    stride = width * channels
    rows = b"".join(b"\x00" + raw[y * stride : (y + 1) * stride] for y in range(height))
    colour_type = 6 if channels == 4 else 2

    def chunk(kind: bytes, body: bytes) -> bytes:
        return (
            struct.pack(">I", len(body)) + kind + body + struct.pack(">I", zlib.crc32(kind + body))
        )

    header = struct.pack(">IIBBBBB", width, height, 8, colour_type, 0, 0, 0)
    return (
        _PNG_SIGNATURE
        + chunk(b"IHDR", header)
        + chunk(b"IDAT", zlib.compress(rows, 6))
        + chunk(b"IEND", b"")
    )


def _caller_line() -> int:
    # The first frame of the model's code up the stack (mapview.x -> _record -> here, or
    # one more for the helpers that share _set_property / _camera).
    frame: types.FrameType | None = sys._getframe(2)
    for _ in range(4):
        if frame is None:
            return 0
        if frame.f_code.co_filename == "<code>":
            return frame.f_lineno
        frame = frame.f_back
    return 0
