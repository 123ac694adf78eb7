"""Validate MapLibre style fragments against the vendored MapLibre style specification.

What the model's code changes on the map reaches the browser as a MapLibre style diff: sources
and layers as data. Every one passes through here first. The checks read the spec's JSON
(``spec/maplibre-style-spec.json``, the version the page's MapLibre GL JS depends on) for
layer types, property names per layer type, value types, enums, ranges, which properties take
expressions and which expression inputs (zoom, feature data) they allow, and the expression
operators with their overloads. geomint adds caps and a URL policy MapLibre does not have.

Every check collects all violations rather than stopping at the first, and none raises for
bad input: a hostile value costs bounded work because its size is capped before it is walked.

>>> validate_paint_property("circle", "circle-radius", ["get", "size"])
[]
>>> [v.rule for v in validate_paint_property("circle", "circle-raduis", 4)]
['unknown-property']
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from ._expressions import check_expression, is_expression, is_function_object
from ._spec import load
from ._values import check_value, is_number
from ._violation import (
    MAX_EXPRESSION_DEPTH,
    MAX_EXPRESSION_NODES,
    MAX_STRING_CHARS,
    SpecViolation,
    check_caps,
    join_path,
    listing,
    near_miss,
    preview,
)

__all__ = [
    "LAYER_TYPES",
    "MAX_EXPRESSION_DEPTH",
    "MAX_EXPRESSION_NODES",
    "MAX_STRING_CHARS",
    "SPEC_VERSION",
    "SUPPORTED_SOURCE_TYPES",
    "SpecViolation",
    "UrlCheck",
    "validate_filter",
    "validate_layer",
    "validate_layout_property",
    "validate_paint_property",
    "validate_source",
]

#: The vendored ``@maplibre/maplibre-gl-style-spec`` version.
SPEC_VERSION: str = load().version
#: Every layer type the spec defines.
LAYER_TYPES: frozenset[str] = load().layer_types
#: The source types geomint loads; the spec's others (vector, raster-dem, video) are refused.
SUPPORTED_SOURCE_TYPES = frozenset({"geojson", "image", "raster"})

#: Checks one URL: ``None`` when it is allowed, else the reason it is not.
UrlCheck = Callable[[str], str | None]

# Which source types each layer type draws from.
_RASTER_SOURCES = frozenset({"raster", "image"})
_DEM_SOURCES = frozenset({"raster-dem"})
_VECTOR_SOURCES = frozenset({"geojson", "vector"})
_LAYER_SOURCES = {"raster": _RASTER_SOURCES, "hillshade": _DEM_SOURCES}
_LAYER_SOURCES["color-relief"] = _DEM_SOURCES
_GEOJSON_TYPES = frozenset(
    {"FeatureCollection", "Feature", "Point", "MultiPoint", "LineString", "MultiLineString"}
    | {"Polygon", "MultiPolygon", "GeometryCollection"}
)
_URL_KEYS = ("url", "data")


def validate_paint_property(layer_type: str, name: str, value: Any) -> list[SpecViolation]:
    """Check one paint property of a layer of ``layer_type``; ``[]`` when it is valid.

    Paths start at ``paint.<name>``.

    >>> print(validate_paint_property("fill", "fill-opacity", 1.5)[0])
    paint.fill-opacity: 1.5 is above the maximum: fill-opacity is from 0 to 1.
    """
    return _property("paint", layer_type, name, value)


def validate_layout_property(layer_type: str, name: str, value: Any) -> list[SpecViolation]:
    """Check one layout property of a layer of ``layer_type``; ``[]`` when it is valid.

    Paths start at ``layout.<name>``.

    >>> print(validate_layout_property("line", "line-join", "rounded")[0])
    layout.line-join: "rounded" is not a value line-join takes. Did you mean 'round'? It takes one of 'bevel', 'miter', 'round'.
    """  # noqa: E501
    return _property("layout", layer_type, name, value)


def validate_filter(value: Any) -> list[SpecViolation]:
    """Check a layer filter: a boolean expression; ``[]`` when it is valid.

    Legacy filters (``["==", "class", "park"]``) are refused with the expression to write.
    Paths start at ``filter``.
    """
    path = "filter"
    found = check_caps(value, path)
    if found:
        return found
    if isinstance(value, bool):
        return []
    legacy = _legacy_filter(value)
    if legacy is not None:
        return [SpecViolation(path=path, rule="expression", message=legacy)]
    if not (isinstance(value, list) and value and isinstance(value[0], str)):
        return [
            SpecViolation(
                path=path,
                rule="type",
                message=f"{preview(value)} is not a filter; a filter is an expression giving"
                " true or false, such as ['==', ['get', 'kind'], 'cafe'].",
            )
        ]
    return check_expression(load().root["filter"], value, path, name="the filter", filter_=True)


def validate_layer(
    layer: Mapping[str, Any], *, source_types: Mapping[str, str]
) -> list[SpecViolation]:
    """Check a whole layer object; ``[]`` when it is valid.

    Args:
        layer: The layer as MapLibre takes it: ``id``, ``type``, ``source``, ``source-layer``,
            ``minzoom``, ``maxzoom``, ``filter``, ``layout``, ``paint`` and ``metadata``
            (a JSON object). Other top-level keys are refused.
        source_types: The type of every source the layer may name, by source id.

    Paths start at ``layers.<id>``.
    """
    given: object = layer  # typed a Mapping, but it comes from the model's code
    if not isinstance(given, Mapping):
        return [
            SpecViolation(
                path="layers",
                rule="type",
                message=f"a layer is an object with 'id' and 'type', not {preview(layer)}.",
            )
        ]
    spec = load()
    layer_id = layer.get("id")
    base = f"layers.{layer_id}" if _short_string(layer_id) else "layers.?"
    found: list[SpecViolation] = []
    allowed = spec.root["layer"]
    for key in layer:
        if not isinstance(key, str) or key not in allowed:
            found.append(
                SpecViolation(
                    path=join_path(base, str(key)[:100]),
                    rule="unknown-property",
                    message=f"a layer has no key {preview(key, 40)}."
                    f"{near_miss(str(key), allowed)} Its keys: {listing(allowed)}.",
                )
            )
    if not _short_string(layer_id):
        found.append(_required(join_path(base, "id"), "'id', a non-empty string naming the layer"))
    layer_type = layer.get("type")
    if layer_type is None:
        found.append(_required(join_path(base, "type"), f"'type', one of {listing(LAYER_TYPES)}"))
    elif not isinstance(layer_type, str) or layer_type not in LAYER_TYPES:
        hint = near_miss(layer_type, LAYER_TYPES) if isinstance(layer_type, str) else ""
        found.append(
            SpecViolation(
                path=join_path(base, "type"),
                rule="layer-type",
                message=f"{preview(layer_type)} is not a layer type.{hint}"
                f" Layer types: {listing(LAYER_TYPES)}.",
            )
        )
        layer_type = None
    found += _layer_source(layer, base, layer_type, source_types)
    for key in ("minzoom", "maxzoom"):
        if key in layer:
            found += _plain(allowed[key], layer[key], join_path(base, key), key)
    low, high = layer.get("minzoom"), layer.get("maxzoom")
    if is_number(low) and is_number(high) and low >= high:
        found.append(
            SpecViolation(
                path=join_path(base, "maxzoom"),
                rule="range",
                message=f"maxzoom {high} is not above minzoom {low}; the layer would never show.",
            )
        )
    if "filter" in layer:
        found += _prefixed(validate_filter(layer["filter"]), base)
    if "metadata" in layer:
        metadata = layer["metadata"]
        path = join_path(base, "metadata")
        if not isinstance(metadata, Mapping):
            found.append(
                SpecViolation(
                    path=path,
                    rule="type",
                    message=f"metadata is a JSON object, not {preview(metadata)}.",
                )
            )
        else:
            found += check_caps(metadata, path)
    for kind in ("paint", "layout"):
        if kind not in layer:
            continue
        block = layer[kind]
        if not isinstance(block, Mapping):
            found.append(
                SpecViolation(
                    path=join_path(base, kind),
                    rule="type",
                    message=f"{kind} is an object of {kind} properties, not {preview(block)}.",
                )
            )
        elif layer_type is not None:
            for name, value in block.items():
                found += _prefixed(_property(kind, layer_type, name, value), base)
    return found


def validate_source(
    source_id: str, source: Mapping[str, Any], *, url_check: UrlCheck
) -> list[SpecViolation]:
    """Check a source object; ``[]`` when it is valid.

    Only ``geojson``, ``image`` and ``raster`` sources are accepted. Every URL in it (``url``,
    each of ``tiles``, a ``data`` string) goes through ``url_check``, whose reason is quoted
    when it refuses. GeoJSON ``data`` given inline is checked for its ``type`` only; its
    features are the caller's to cap. Paths start at ``sources.<source_id>``.
    """
    base = f"sources.{source_id}"
    given: object = source  # typed a Mapping, but it comes from the model's code
    if not isinstance(given, Mapping):
        return [
            SpecViolation(
                path=base,
                rule="type",
                message=f"a source is an object with a 'type', not {preview(source)}.",
            )
        ]
    spec = load()
    kind = source.get("type")
    supported = listing(SUPPORTED_SOURCE_TYPES)
    if not isinstance(kind, str):
        return [_required(join_path(base, "type"), f"'type', one of {supported}")]
    if kind not in spec.source_types:
        return [
            SpecViolation(
                path=join_path(base, "type"),
                rule="source",
                message=f"{preview(kind)} is not a source type.{near_miss(kind, spec.source_types)}"
                f" geomint loads {supported} sources.",
            )
        ]
    if kind not in SUPPORTED_SOURCE_TYPES:
        return [
            SpecViolation(
                path=join_path(base, "type"),
                rule="source",
                message=f"geomint does not load '{kind}' sources; it loads {supported}. Put"
                " features in a geojson source and pictures in an image or raster source.",
            )
        ]
    table = spec.source_types[kind]
    found: list[SpecViolation] = []
    for key, value in source.items():
        path = join_path(base, str(key)[:100])
        if not isinstance(key, str) or key == "*" or key not in table:
            choices = [k for k in table if k != "*"]
            found.append(
                SpecViolation(
                    path=path,
                    rule="unknown-property",
                    message=f"a {kind} source has no key {preview(key, 40)}."
                    f"{near_miss(str(key), choices)} Its keys: {listing(choices)}.",
                )
            )
            continue
        caps = check_caps(value, path) if key != "data" else []
        if caps:
            found += caps
            continue
        found += _source_value(kind, key, table[key], value, path, url_check)
    for key, entry in table.items():
        if entry.get("required") and key not in source:
            found.append(_required(join_path(base, key), f"'{key}' for a {kind} source"))
    if kind == "raster" and "tiles" not in source and "url" not in source:
        found.append(
            _required(join_path(base, "tiles"), "'tiles' (tile URL templates) or 'url' (TileJSON)")
        )
    return found


def _source_value(
    kind: str, key: str, entry: Mapping[str, Any], value: Any, path: str, url_check: UrlCheck
) -> list[SpecViolation]:
    if key == "data":
        return _geojson_data(value, path, url_check)
    if key in _URL_KEYS or key == "tiles":
        urls = value if key == "tiles" and isinstance(value, list) else [value]
        if key == "tiles" and (not isinstance(value, list) or not value):
            return [_type(path, value, "'tiles' is a non-empty array of URL templates")]
        found: list[SpecViolation] = []
        for index, url in enumerate(urls):
            where = join_path(path, index) if key == "tiles" else path
            found += _url(url, where, url_check)
        return found
    if key == "coordinates":
        return _image_corners(value, path)
    if key == "attribution" and isinstance(value, str) and ("<" in value or ">" in value):
        # MapLibre renders attributions as HTML in the page.
        return [
            SpecViolation(
                path=path,
                rule="source",
                message="an attribution is plain text here; remove the HTML (< and >).",
            )
        ]
    if key == "filter":
        return _prefixed(validate_filter(value), path.rsplit(".", 1)[0])
    if key in ("clusterProperties", "promoteId"):
        return []
    return _plain(entry, value, path, key)


def _geojson_data(value: Any, path: str, url_check: UrlCheck) -> list[SpecViolation]:
    if isinstance(value, str):
        return _url(value, path, url_check)
    if isinstance(value, Mapping):
        kind = value.get("type")
        if isinstance(kind, str) and kind in _GEOJSON_TYPES:
            return []
        hint = near_miss(kind, _GEOJSON_TYPES) if isinstance(kind, str) else ""
        return [
            SpecViolation(
                path=join_path(path, "type"),
                rule="source",
                message=f"{preview(kind)} is not a GeoJSON type.{hint} GeoJSON data is a"
                f" FeatureCollection, a Feature or a geometry ({listing(_GEOJSON_TYPES)}).",
            )
        ]
    return [_type(path, value, "'data' is a URL string or a GeoJSON object")]


def _url(url: Any, path: str, url_check: UrlCheck) -> list[SpecViolation]:
    if not isinstance(url, str) or not url:
        return [_type(path, url, "a URL is a non-empty string")]
    if len(url) > MAX_STRING_CHARS:
        return check_caps(url, path)
    reason = url_check(url)
    if reason is None:
        return []
    return [
        SpecViolation(
            path=path,
            rule="url",
            message=f"{preview(url)} is refused: {reason}",
        )
    ]


def _image_corners(value: Any, path: str) -> list[SpecViolation]:
    usage = (
        "'coordinates' is four [longitude, latitude] corners, clockwise from the top left:"
        " [[west, north], [east, north], [east, south], [west, south]]"
    )
    if not (isinstance(value, list) and len(value) == 4):
        return [_type(path, value, usage)]
    found: list[SpecViolation] = []
    for index, corner in enumerate(value):
        where = join_path(path, index)
        if not (isinstance(corner, list) and len(corner) == 2 and all(map(is_number, corner))):
            found.append(_type(where, corner, usage))
            continue
        lon, lat = corner
        if not (-180 <= lon <= 180 and -90 <= lat <= 90):
            found.append(
                SpecViolation(
                    path=where,
                    rule="range",
                    message=f"{preview(corner)} is off the globe: longitude is from -180 to 180"
                    " and latitude from -90 to 90, in that order.",
                )
            )
    return found


def _property(kind: str, layer_type: str, name: Any, value: Any) -> list[SpecViolation]:
    if layer_type not in LAYER_TYPES:
        raise ValueError(f"unknown layer type {layer_type!r}; check it with validate_layer")
    spec = load()
    table = spec.paint[layer_type] if kind == "paint" else spec.layout[layer_type]
    path = join_path(kind, str(name)[:100])
    if not isinstance(name, str):
        return [_type(path, name, f"{kind} property names are strings")]
    entry = table.get(name)
    if entry is None and kind == "paint" and name.endswith("-transition"):
        animated = name.removesuffix("-transition")
        if table.get(animated, {}).get("transition"):
            return _transition(value, path, name)
    if entry is None:
        return [_unknown_property(kind, layer_type, name, path)]
    found = check_caps(value, path)
    if found:
        return found
    if is_function_object(value):
        return [
            SpecViolation(
                path=path,
                rule="expression",
                message="legacy function objects ({'stops': ...}) are not accepted; write an"
                " expression: ['interpolate', ['linear'], ['zoom'], z1, value1, z2, value2],"
                " ['step', ...] or ['match', ['get', 'field'], ...].",
            )
        ]
    if is_expression(value):
        if "expression" not in entry:
            return [_type(path, value, f"{name} takes a plain value, not an expression")]
        return check_expression(entry, value, path, name=name)
    literal_array = entry.get("type") in ("array", "variableAnchorOffsetCollection", "colorArray")
    if isinstance(value, list) and value and isinstance(value[0], str) and not literal_array:
        return [
            SpecViolation(
                path=join_path(path, 0),
                rule="expression",
                message=f"'{preview(value[0], 40)[1:-1]}' is not an expression operator."
                f"{near_miss(value[0], spec.operators)} See MapLibre's expression reference.",
            )
        ]
    return check_value(entry, value, path, name=name)


def _unknown_property(kind: str, layer_type: str, name: str, path: str) -> SpecViolation:
    spec = load()
    other = "layout" if kind == "paint" else "paint"
    other_table = spec.layout if kind == "paint" else spec.paint
    own = spec.paint[layer_type] if kind == "paint" else spec.layout[layer_type]
    if name in other_table[layer_type]:
        message = f"'{name}' is a {other} property, not a {kind} one; move it under '{other}'."
    else:
        owners = sorted(t for t in LAYER_TYPES if name in spec.paint[t] or name in spec.layout[t])
        where = f" It belongs to {listing(owners)} layers." if owners else ""
        message = (
            f"{layer_type} layers have no {kind} property '{preview(name, 60)[1:-1]}'.{where}"
            f"{near_miss(name, own)} Their {kind} properties: {listing(own)}."
        )
    return SpecViolation(path=path, rule="unknown-property", message=message)


def _transition(value: Any, path: str, name: str) -> list[SpecViolation]:
    table = load().root["transition"]
    if not isinstance(value, Mapping):
        return [_type(path, value, f"{name} is an object with 'duration' and 'delay'")]
    found: list[SpecViolation] = []
    for key, item in value.items():
        where = join_path(path, str(key)[:100])
        if key not in table:
            found.append(
                SpecViolation(
                    path=where,
                    rule="unknown-property",
                    message=f"a transition has 'duration' and 'delay', not {preview(key, 40)}.",
                )
            )
        else:
            found += check_value(table[key], item, where, name=key)
    return found


def _layer_source(
    layer: Mapping[str, Any],
    base: str,
    layer_type: str | None,
    source_types: Mapping[str, str],
) -> list[SpecViolation]:
    source = layer.get("source")
    path = join_path(base, "source")
    if layer_type == "background":
        if source is not None:
            return [_type(path, source, "a background layer draws no source; remove 'source'")]
        return []
    if source is None:
        if layer_type is None:
            return []
        return [_required(path, f"'source', the id of one of the sources: {_ids(source_types)}")]
    if not isinstance(source, str) or source not in source_types:
        hint = near_miss(source, source_types) if isinstance(source, str) else ""
        return [
            SpecViolation(
                path=path,
                rule="source",
                message=f"there is no source {preview(source, 60)}.{hint}"
                f" The sources: {_ids(source_types)}. Add the source first.",
            )
        ]
    found: list[SpecViolation] = []
    kind = source_types[source]
    wanted = _LAYER_SOURCES.get(layer_type or "", _VECTOR_SOURCES)
    if layer_type is not None and kind not in wanted:
        found.append(
            SpecViolation(
                path=path,
                rule="source",
                message=f"a {layer_type} layer cannot draw the {kind} source '{source}'; it"
                f" needs a source of type {' or '.join(sorted(wanted))}.",
            )
        )
    source_layer = layer.get("source-layer")
    if source_layer is not None:
        where = join_path(base, "source-layer")
        if not _short_string(source_layer):
            found.append(_type(where, source_layer, "'source-layer' is a non-empty string"))
        elif kind != "vector":
            found.append(
                SpecViolation(
                    path=where,
                    rule="source",
                    message=f"'source-layer' is for vector tile sources; '{source}' is a {kind}"
                    " source. Remove 'source-layer'.",
                )
            )
    elif kind == "vector":
        found.append(_required(join_path(base, "source-layer"), "'source-layer' for vector tiles"))
    return found


def _legacy_filter(value: Any) -> str | None:
    """The message for a legacy filter (MapLibre's ``isExpressionFilter`` is false), or None."""
    if not isinstance(value, list) or not value:
        return None
    op = value[0]
    comparisons = ("==", "!=", "<", "<=", ">", ">=")
    legacy = (
        op in ("!in", "!has", "none")
        or (op == "has" and len(value) >= 2 and value[1] in ("$id", "$type"))
        or (op == "in" and len(value) >= 3 and isinstance(value[1], str)
            and not isinstance(value[2], list))
        or (op in comparisons and len(value) == 3
            and not isinstance(value[1], list) and not isinstance(value[2], list))
        or (op in ("all", "any")
            and any(_legacy_filter(f) is not None for f in value[1:]))
    )  # fmt: skip
    if not legacy:
        return None
    example = preview(["==", ["get", "class"], "park"])
    if op in comparisons and isinstance(value[1], str) and len(value) == 3:
        key = {"$type": ["geometry-type"], "$id": ["id"]}.get(value[1], ["get", value[1]])
        example = preview([op, key, value[2]], 120)
    return (
        f"{preview(value)} is a legacy filter, which geomint does not accept; write it as an"
        f' expression, e.g. {example} (a feature property is read with ["get", name]).'
    )


def _plain(entry: Mapping[str, Any], value: Any, path: str, name: str) -> list[SpecViolation]:
    return check_caps(value, path) or check_value(entry, value, path, name=name)


def _short_string(value: Any) -> bool:
    return isinstance(value, str) and 0 < len(value) <= MAX_STRING_CHARS


def _ids(source_types: Mapping[str, str]) -> str:
    return listing(str(s) for s in source_types) if source_types else "(none yet)"


def _required(path: str, what: str) -> SpecViolation:
    return SpecViolation(path=path, rule="required", message=f"missing: give {what}.")


def _type(path: str, value: Any, what: str) -> SpecViolation:
    return SpecViolation(path=path, rule="type", message=f"{preview(value)} is wrong: {what}.")


def _prefixed(found: list[SpecViolation], base: str) -> list[SpecViolation]:
    return [
        SpecViolation(path=join_path(base, v.path), rule=v.rule, message=v.message) for v in found
    ]
