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
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final

from geomint.codegen import stylespec
from geomint.codegen.stylespec import SpecViolation
from geomint.sandbox import MapCodeError, replay

__all__ = ["MAX_DIFF_CHARS", "Verified", "describe", "verify_ops"]

#: The diff's own size in characters (built GeoJSON and PNGs travel as blobs beside it).
MAX_DIFF_CHARS: Final = 200_000
_BLOB_URL: Final = "geomint-blob:"


@dataclass(frozen=True, kw_only=True)
class Verified:
    """A diff that passed every check.

    Attributes:
        diff: ``{added, removed, updated, camera, animations}``: GeoJSON sources read
            ``{"entry": id}`` or ``{"blob": sha256}``; image sources name their PNG by
            ``image.sha256``.
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
    final = view.get_style()
    source_types = {k: str(v.get("type")) for k, v in final["sources"].items()}
    layer_types = {str(layer["id"]): str(layer.get("type")) for layer in final["layers"]}
    found: list[SpecViolation] = []
    added: dict[str, Any] = diff["added"]
    for source_id, source in added["sources"].items():
        found += stylespec.validate_source(
            source_id, _as_spec_source(source), url_check=_only_blobs
        )
    for layer in added["layers"]:
        spec = {k: v for k, v in layer.items() if k != "before"}
        found += stylespec.validate_layer(spec, source_types=source_types)
    for change in diff["updated"]["layers"]:
        found += _check_update(change, layer_types)
    for animation in diff["animations"]:
        found += _check_animation(animation, layer_types)
    if found:
        return found
    blobs: dict[str, tuple[bytes, str]] = {}
    for source in added["sources"].values():
        data = source.get("data")
        if source.get("type") == "geojson" and isinstance(data, dict) and "entry" not in data:
            encoded = json.dumps(data, separators=(",", ":"), ensure_ascii=False).encode()
            sha = hashlib.sha256(encoded).hexdigest()
            blobs[sha] = (encoded, "application/geo+json")
            source["data"] = {"blob": sha}
    for sha, png in view.images.items():
        blobs[sha] = (png, "image/png")
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
    return Verified(diff=diff, blobs=blobs, description=describe(diff))


def _as_spec_source(source: Mapping[str, Any]) -> dict[str, Any]:
    """The source as the specification knows it: an entry or a blob stands in as a URL the
    check lets through, so everything else about the source is still checked."""
    spec = dict(source)
    if spec.get("type") == "geojson":
        data = spec.get("data")
        if isinstance(data, dict) and "entry" in data:
            spec["data"] = f"{_BLOB_URL}entry"
    elif spec.get("type") == "image":
        image = spec.pop("image", {})
        spec["url"] = f"{_BLOB_URL}{image.get('sha256', '')}"
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
    found: list[SpecViolation] = []
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
            if source in sources and sources[source].get("type") == "image":
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
