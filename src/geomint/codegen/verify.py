"""Verify what map code did: replay its calls on the host, check the diff they make against
the MapLibre style specification and geomint's caps, and describe it in words.

Nothing the sandbox child said is trusted. Its operations are replayed on a fresh
:class:`~geomint.sandbox.MapView` of the style the host holds (the recorder's own checks
run again outside the child), the diff that replay makes is validated property by property
(:mod:`geomint.codegen.stylespec`), and every URL is refused: a source names an entry of
the chat or carries its data, which leaves here as a blob named by its hash. Every
violation is collected, so a retry can fix them all at once.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final

from geomint.codegen import stylespec
from geomint.codegen.stylespec import SpecViolation
from geomint.sandbox import MapCodeError, replay

__all__ = ["MAX_DIFF_CHARS", "Verified", "describe", "stored_diff_problem", "verify_ops"]

#: The diff's own size in characters (built GeoJSON and PNGs travel as blobs beside it).
MAX_DIFF_CHARS: Final = 200_000
_BLOB_URL: Final = "geomint-blob:"
_SHA256: Final = re.compile(r"^[0-9a-f]{64}$")
_ENTRY_ID: Final = re.compile(r"^[a-z_]+-(0|[1-9][0-9]*)$")
_DIFF_KEYS: Final = frozenset({"added", "removed", "updated", "camera", "animations", "order"})
_CAMERA_KINDS: Final = frozenset({"fly_to", "ease_to", "fit_bounds"})


@dataclass(frozen=True, kw_only=True)
class Verified:
    """A diff that passed every check.

    Attributes:
        diff: ``{added, removed, updated, camera, animations}``: GeoJSON sources read
            ``{"entry": id}`` or ``{"blob": sha256}``; image sources name their PNG by
            ``image.sha256``, or a raster entry by ``raster.entry``.
        blobs: The bytes the diff names, by SHA-256, with their media types.
        description: The diff in words, one clause per change.
    """

    diff: dict[str, Any]
    blobs: dict[str, tuple[bytes, str]] = field(default_factory=dict)
    description: str = ""


def verify_ops(
    style: Mapping[str, Any], ops: Sequence[Mapping[str, Any]]
) -> Verified | list[SpecViolation]:
    """Replay ``ops`` on ``style`` and check the diff; the diff, or every violation found."""
    try:
        view = replay(style, ops)
    except MapCodeError as exc:
        return [SpecViolation(path="mapview", rule="call", message=str(exc))]
    diff: dict[str, Any] = view.diff()
    # GeoJSON the code built leaves as a blob named by its hash: the diff then has the form
    # a stored one has, and one check (:func:`_check_diff`) serves both.
    blobs: dict[str, tuple[bytes, str]] = {}
    for source in diff["added"]["sources"].values():
        data = source.get("data")
        if source.get("type") == "geojson" and isinstance(data, dict) and "entry" not in data:
            encoded = json.dumps(data, separators=(",", ":"), ensure_ascii=False).encode()
            sha = hashlib.sha256(encoded).hexdigest()
            blobs[sha] = (encoded, "application/geo+json")
            source["data"] = {"blob": sha}
    for sha, png in view.images.items():
        blobs[sha] = (png, "image/png")
    found = _check_diff(diff, style)
    if found:
        return found
    return Verified(diff=diff, blobs=blobs, description=describe(diff))


def stored_diff_problem(diff: object, style: Mapping[str, Any]) -> str | None:
    """Why a stored diff must not be applied over ``style``, or None when it may.

    A diff made here passed :func:`verify_ops`; one read from a store may not have been
    made here (an imported chat, a damaged database). So it is checked again, whole: its
    shape, sources that name an entry or a blob by hash (never a URL), every layer,
    property and animation against the style specification, and the size cap.
    """
    if not isinstance(diff, dict) or not set(diff) <= _DIFF_KEYS:
        return "it is not a map diff"
    try:
        found = _check_diff(diff, style)
    except (AttributeError, IndexError, KeyError, TypeError, ValueError) as exc:
        return f"the stored change is damaged ({type(exc).__name__})"
    return "; ".join(str(v) for v in found[:5]) if found else None


def _check_diff(diff: Mapping[str, Any], style: Mapping[str, Any]) -> list[SpecViolation]:
    """Every violation of a diff in its stored form, applied over ``style``: its size, its
    parts' shapes, sources that name an entry or a blob by hash (never a URL), and every
    source, layer, property and animation against the style specification."""
    size = len(json.dumps(diff))
    if size > MAX_DIFF_CHARS:
        return [
            SpecViolation(
                path="diff",
                rule="cap",
                message=(
                    f"the change is {size:,} characters of style; at most {MAX_DIFF_CHARS:,}: "
                    "use fewer, simpler expressions, or build the data as a source"
                ),
            )
        ]
    added = diff.get("added") or {}
    removed = diff.get("removed") or {}
    sources = added.get("sources") or {}
    layers = added.get("layers") or []
    updates = (diff.get("updated") or {}).get("layers") or []
    animations = diff.get("animations") or []
    if not (isinstance(sources, dict) and isinstance(layers, list) and isinstance(updates, list)
            and isinstance(animations, list) and isinstance(removed, dict)):  # fmt: skip
        return [_shape("its parts are not of a diff's shape")]
    found: list[SpecViolation] = []
    rasters = style.get("rasters") or {}
    for source_id, source in sources.items():
        problem = _stored_source(source)
        named = source.get("raster") if problem is None else None
        if isinstance(named, dict) and named["entry"] not in rasters:
            problem = f"names {named['entry']!r}, which is not a raster entry of this chat"
        if problem is not None:
            found.append(_shape(f"source {str(source_id)[:64]!r} {problem}"))
        else:
            found += stylespec.validate_source(
                str(source_id), _as_spec_source(source), url_check=_only_blobs
            )
    gone = set(removed.get("sources") or []) | set(removed.get("layers") or [])
    source_types = {
        str(k): str(v.get("type")) for k, v in style["sources"].items() if k not in gone
    }
    source_types.update({str(k): str(v.get("type")) for k, v in sources.items()})
    layer_types = {str(x["id"]): str(x.get("type")) for x in style["layers"] if x["id"] not in gone}
    for layer in layers:
        spec = {k: v for k, v in layer.items() if k != "before"}
        found += stylespec.validate_layer(spec, source_types=source_types)
        found += _no_fonts(layer.get("layout"), str(layer.get("id")))
        layer_types[str(layer.get("id"))] = str(layer.get("type"))
    for change in updates:
        found += _check_update(change, layer_types)
    for animation in animations:
        frames = animation["keyframes"]
        if not isinstance(frames, list) or not 2 <= len(frames) <= 50:
            found.append(_shape("an animation has no keyframes to play"))
            continue
        found += _check_animation(animation, layer_types)
    camera = diff.get("camera")
    if camera is not None and (
        not isinstance(camera, dict) or camera.get("kind") not in _CAMERA_KINDS
    ):
        found.append(_shape("its camera move is not one the page makes"))
    return found


def _shape(message: str) -> SpecViolation:
    return SpecViolation(path="diff", rule="shape", message=message)


def _stored_source(source: object) -> str | None:
    """Why a stored source is not one map code makes, or None."""
    if not isinstance(source, dict):
        return "is not a source"
    if source.get("type") == "geojson":
        data = source.get("data")
        if not isinstance(data, dict) or len(data) != 1:
            return "names neither an entry nor a blob"
        if "entry" in data and isinstance(data["entry"], str) and _ENTRY_ID.match(data["entry"]):
            return None
        if "blob" in data and isinstance(data["blob"], str) and _SHA256.match(data["blob"]):
            return None
        return "names neither an entry nor a blob"
    if source.get("type") == "image" and "raster" in source:
        raster = source.get("raster")
        if set(source) != {"type", "raster", "coordinates"} or not isinstance(raster, dict):
            return "is not an image map code made"
        entry = raster.get("entry")
        if set(raster) != {"entry"} or not isinstance(entry, str) or not _ENTRY_ID.match(entry):
            return "names no raster entry"
        return None
    if source.get("type") == "image":
        image = source.get("image")
        if set(source) != {"type", "image", "coordinates"} or not isinstance(image, dict):
            return "is not an image map code made"
        if not isinstance(image.get("sha256"), str) or not _SHA256.match(image["sha256"]):
            return "names its picture by no hash"
        return None
    return f"has type {str(source.get('type'))[:20]!r}, which map code does not make"


def _as_spec_source(source: Mapping[str, Any]) -> dict[str, Any]:
    """The source as the specification knows it: an entry or a blob stands in as a URL the
    check lets through, so everything else about the source is still checked."""
    spec = dict(source)
    if spec.get("type") == "geojson":
        data = spec.get("data")
        if isinstance(data, dict) and ("entry" in data or "blob" in data):
            spec["data"] = f"{_BLOB_URL}entry"
    elif spec.get("type") == "image":
        image = spec.pop("image", None) or {}
        raster = spec.pop("raster", None) or {}
        spec["url"] = f"{_BLOB_URL}{image.get('sha256') or raster.get('entry', '')}"
    return spec


def _only_blobs(url: str) -> str | None:
    if url.startswith(_BLOB_URL):
        return None
    return (
        "map code cannot name URLs: a request to another host would send the map's data out; "
        "name an entry or build the data in the code"
    )


def _check_update(change: Mapping[str, Any], layer_types: Mapping[str, str]) -> list[SpecViolation]:
    layer_id = str(change["id"])
    kind = layer_types.get(layer_id, "")
    if kind not in stylespec.LAYER_TYPES:
        return [_no_layer(layer_id, kind)]
    found: list[SpecViolation] = _no_fonts(change.get("layout"), layer_id)
    for name, value in (change.get("paint") or {}).items():
        if value is not None:
            found += _at(stylespec.validate_paint_property(kind, name, value), layer_id)
    for name, value in (change.get("layout") or {}).items():
        if value is not None:
            found += _at(stylespec.validate_layout_property(kind, name, value), layer_id)
    if change.get("filter") is not None:
        found += _at(stylespec.validate_filter(change["filter"]), layer_id)
    return found


def _check_animation(
    animation: Mapping[str, Any], layer_types: Mapping[str, str]
) -> list[SpecViolation]:
    layer_id = str(animation["layer_id"])
    kind = layer_types.get(layer_id, "")
    if kind not in stylespec.LAYER_TYPES:
        return [_no_layer(layer_id, kind)]
    found: list[SpecViolation] = []
    for index, frame in enumerate(animation["keyframes"]):
        for name, value in frame["paint"].items():
            for violation in stylespec.validate_paint_property(kind, name, value):
                found.append(
                    SpecViolation(
                        path=f"animations.{layer_id}.keyframes[{index}].{violation.path}",
                        rule=violation.rule,
                        message=violation.message,
                    )
                )
    return found


def _no_layer(layer_id: str, kind: str) -> SpecViolation:
    return SpecViolation(
        path=f"layers.{layer_id}",
        rule="layer-type",
        message=f"layer {layer_id!r} is not on the map as a layer of a known type ({kind!r})",
    )


def _no_fonts(layout: object, layer_id: str) -> list[SpecViolation]:
    # A font name goes into the glyph URL the page requests, on whatever host serves the
    # basemap's glyphs: a way to send text out by request. The page's fonts are enough.
    if isinstance(layout, Mapping) and layout.get("text-font") is not None:
        return [
            SpecViolation(
                path=f"layers.{layer_id}.layout.text-font",
                rule="font",
                message="map code uses the map's own fonts: leave text-font unset",
            )
        ]
    return []


def _at(found: list[SpecViolation], layer_id: str) -> list[SpecViolation]:
    return [
        SpecViolation(path=f"layers.{layer_id}.{v.path}", rule=v.rule, message=v.message)
        for v in found
    ]


def describe(diff: Mapping[str, Any]) -> str:
    """The diff in words, as a person approving it reads it.

    Example:
        >>> describe({"added": {"sources": {}, "layers": [
        ...     {"id": "cafe-heat", "type": "heatmap", "source": "places-1"}]},
        ...     "removed": {"sources": [], "layers": []}, "updated": {"layers": []},
        ...     "camera": None, "animations": []})
        'adds a heatmap layer cafe-heat over places-1'
    """
    clauses: list[str] = []
    added = diff.get("added") or {}
    sources = added.get("sources") or {}
    for layer in added.get("layers") or []:
        source = layer.get("source")
        over = ""
        if source is not None:
            data = (sources.get(source) or {}).get("data")
            origin = data.get("entry") if isinstance(data, dict) else None
            over = f" over {origin or source}"
            raster = (sources.get(source) or {}).get("raster")
            if isinstance(raster, dict):
                over = f" of the raster {raster.get('entry')} ({source})"
            elif source in sources and sources[source].get("type") == "image":
                over = f" of an image the code rendered ({source})"
            elif source in sources and origin is None:
                over = f" over GeoJSON the code built ({source})"
        clauses.append(f"adds {_article(str(layer.get('type')))} layer {layer.get('id')}{over}")
    for change in (diff.get("updated") or {}).get("layers") or []:
        changed = [*(change.get("paint") or {}), *(change.get("layout") or {})]
        changed += [k for k in ("filter", "minzoom", "maxzoom") if k in change]
        if changed:
            clauses.append(f"changes {', '.join(changed)} of {change['id']}")
        elif "before" in change:
            clauses.append(f"moves {change['id']}")
    removed = diff.get("removed") or {}
    if removed.get("layers"):
        clauses.append(f"removes layer {', '.join(map(str, removed['layers']))}")
    if removed.get("sources"):
        clauses.append(f"removes source {', '.join(map(str, removed['sources']))}")
    for animation in diff.get("animations") or []:
        seconds = animation["duration_ms"] / 1000
        names = ", ".join(animation["keyframes"][0]["paint"])
        again = ", repeating" if animation.get("repeat") else ""
        clauses.append(f"animates {names} of {animation['layer_id']} over {seconds:g} s{again}")
    camera = diff.get("camera")
    if camera:
        clauses.append(
            "fits the camera to a box" if camera["kind"] == "fit_bounds" else "moves the camera"
        )
    return "; ".join(clauses) or "changes nothing"


def _article(kind: str) -> str:
    return f"an {kind}" if kind[:1] in "aeiou" else f"a {kind}"
