"""The hint table: every record is exercised by code a model would plausibly write.

Each case runs a body through the in-process sandbox over realistic inputs and checks
both which record answered and that its text carries the key part of the fix. Errors the
in-process mode cannot produce (timeouts, dead workers, memory) are built directly.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Mapping
from typing import Any

import h3
import pytest

from geomint.sandbox import CodeError, Sandbox, hints
from geomint.sandbox.hints import PATTERNS, Pattern, find_hint, hint_for


def _point(lng: float, lat: float, **properties: object) -> dict[str, Any]:
    geometry = {"type": "Point", "coordinates": [lng, lat]}
    return {"type": "Feature", "geometry": geometry, "properties": properties}


def _collection(*features: dict[str, Any]) -> dict[str, Any]:
    return {"type": "FeatureCollection", "features": list(features)}


MITTE = {
    "type": "Feature",
    "geometry": {
        "type": "Polygon",
        "coordinates": [[[13.3, 52.4], [13.5, 52.4], [13.5, 52.6], [13.3, 52.6], [13.3, 52.4]]],
    },
    "properties": {"label": "Mitte"},
}
INPUTS: dict[str, Any] = {
    "places_by_entry": {
        "places-1": _collection(
            _point(13.35, 52.51, title="Café Einstein", category="cafe"),
            _point(13.41, 52.52, title="Zum Schusterjungen", category="bar"),
        ),
        "places-2": _collection(
            _point(13.38, 52.50, title="Bäckerei", category="bakery"),
            {
                "type": "Feature",
                "geometry": None,
                "properties": {"title": None, "category": "kiosk"},
            },
        ),
    },
    "routes_by_entry": None,
    "ranges_by_entry": None,
    "incidents_by_entry": {"incidents-1": [_point(13.40, 52.52, severity="major")]},
    "geometries_by_entry": {"district:mitte": [MITTE]},
}

PLACES = "places_by_entry['places-1']['features']"
FRAME = f"gdf = gpd.GeoDataFrame.from_features({PLACES}, crs=4326)\n"
MULTI = "m = shapely.MultiPolygon([shapely.box(0, 0, 1, 1), shapely.box(2, 2, 3, 3)])\n"
BOWTIE = "a = shapely.Polygon([(0, 0), (2, 2), (2, 0), (0, 2), (0, 0)])\n"
DISTRICT = "g = geometries_by_entry['district:mitte'][0]['geometry']\n"
FIRST = f"f = {PLACES}[0]\n"
CELL = "'8928308280fffff'"

# (pattern name, body, fragment the hint must contain)
CASES: list[tuple[str, str, str]] = [
    ("unparsable-markdown", "Here is the code:\n```python\nreturn 1\n```", "no markdown fences"),
    (
        "unparsable",
        "total = sum(\n    len(fc['features']) for fc in places_by_entry.values()\n",
        "`return <value>`",
    ),
    (
        "module-not-available",
        "import requests\nreturn requests.get('https://x.org').json()",
        "`import` math",
    ),
    ("module-not-available", "import scipy.spatial\nreturn 1", "use numpy, shapely (STRtree)"),
    ("no-result", f"total = len({PLACES})", "`return result`"),
    ("result-not-json", f"return (f['properties']['title'] for f in {PLACES})", "`list(...)`"),
    (
        "json-dumps",
        "import json\nreturn json.dumps({'centre': shapely.Point(13.4, 52.5)})",
        "`shapely.geometry.mapping(g)`",
    ),
    (
        "tool-call-in-code",
        "fc = discover_places(query='cafe', near='Berlin')\nreturn fc",
        "code cannot call tools",
    ),
    (
        "tool-call-in-code",
        "return functions.locate_place(name='Alexanderplatz')",
        "`places_entry_ids`",
    ),
    ("tool-call-in-code", "state = recall_state()\nreturn state", "code cannot call tools"),
    (
        "reduce-empty",
        "import functools\nreturn functools.reduce(lambda a, b: a + b, [])",
        "`functools.reduce(f, items, start)`",
    ),
    ("unpack-none", "lon, lat = None\nreturn lon", "`if found is None:`"),
    ("tuple-assignment", "point = (1, 2)\npoint[0] = 3\nreturn point", "make a list"),
    (
        "unbound-local",
        "def count():\n    total += 1\n    return total\ntotal = 0\nreturn count()",
        "`total = 0` at the top",
    ),
    (
        "inputs-as-names",
        "fc = inputs['places_by_entry']['places-1']\nreturn len(fc['features'])",
        "each input is its own name",
    ),
    (
        "missing-import",
        f"c = Counter(f['properties']['category'] for f in {PLACES})\nreturn dict(c)",
        "`from collections import Counter`",
    ),
    ("missing-import", "return math.sqrt(2)", "`import math`"),
    ("near-miss-name", "return len(places['places-1']['features'])", "`places_by_entry`"),
    ("near-miss-name", "return len(placesByEntry)", "`places_by_entry`"),
    ("near-miss-name", "return numpy.mean([1, 2])", "`np`"),
    ("near-miss-name", "return pandas.DataFrame({'a': [1]})", "`pd`"),
    ("near-miss-name", "return geopandas.GeoDataFrame()", "`gpd`"),
    ("near-miss-name", "return turf.area(geometries_by_entry)", "`geo`"),
    (
        "near-miss-name",
        "return cluster(incidents_by_entry['incidents-1'], eps_m=300)",
        "Did you mean `geo.cluster`?",
    ),
    (
        "shape-null-geometry",
        "feats = places_by_entry['places-2']['features']\n"
        "return [shapely.geometry.shape(f['geometry']).wkt for f in feats]",
        "f.get('geometry')",
    ),
    ("none-record", "return len(routes_by_entry['routes-1']['features'])", "`routes_entry_ids`"),
    (
        "none-record",
        "for entry_id, fc in ranges_by_entry.items():\n    pass\nreturn 1",
        "`if ranges_by_entry:`",
    ),
    (
        "none-value",
        "return [f['properties']['title'].upper() "
        "for f in places_by_entry['places-2']['features']]",
        "is None: continue",
    ),
    (
        "unknown-entry-id",
        "return len(places_by_entry['places-9']['features'])",
        "places_by_entry has places-1, places-2",
    ),
    ("unknown-entry-id", "return len(places_by_entry['features'])", "places-1, places-2"),
    (
        "geojson-missing-key",
        "return h3.geo_to_cells(geometries_by_entry['district:mitte'][0], 8)",
        "`h3.geo_to_cells(f['geometry'], 9)`",
    ),
    (
        "missing-property",
        f"return [f['properties']['name'] for f in {PLACES}]",
        "Properties seen: title, category",
    ),
    (
        "missing-property",
        f"return sorted({{f['properties']['titel'] for f in {PLACES}}})",
        "Did you mean 'title'?",
    ),
    (
        "string-indices",
        "n = 0\nfor fc in places_by_entry:\n    n += len(fc['features'])\nreturn n",
        "`for entry_id, fc in places_by_entry.items():`",
    ),
    (
        "list-indices",
        "return len(incidents_by_entry['incidents-1']['features'])",
        "lists of Features",
    ),
    (
        "dict-geojson-attribute",
        f"return [f.properties['title'] for f in {PLACES}]",
        "`f['properties']`",
    ),
    (
        "dict-shapely-method",
        f"return [f['geometry'].buffer(0.001).area for f in {PLACES}]",
        "`g = shapely.geometry.shape(f['geometry'])`",
    ),
    (
        "shape-feature-collection",
        "return shapely.geometry.shape(places_by_entry['places-1']).centroid.wkt",
        "`[shape(f['geometry']) for f in fc['features']]`",
    ),
    (
        "shape-coordinates-list",
        FIRST + "return shapely.geometry.shape(f['geometry']['coordinates']).wkt",
        "pass one Feature or its geometry",
    ),
    (
        "geometry-from-geojson",
        DISTRICT + "return shapely.Polygon(g['coordinates']).area",
        "`shapely.geometry.shape(f['geometry'])`",
    ),
    ("too-few-points", "return shapely.LineString([(13.4, 52.5)]).length", "at least 2 points"),
    (
        "invalid-geometry",
        BOWTIE + "return a.intersection(shapely.box(0, 0, 1, 1)).area",
        "`g = shapely.make_valid(g)`",
    ),
    (
        "invalid-geometry",
        BOWTIE + "return shapely.union_all([a, shapely.box(1, 0, 3, 3)]).area",
        "make_valid",
    ),
    (
        "cascaded-union",
        "from shapely.ops import cascaded_union\n"
        "return cascaded_union([shapely.box(0, 0, 1, 1)]).area",
        "`shapely.union_all(geoms)`",
    ),
    (
        "cascaded-union",
        "return shapely.ops.cascaded_union([shapely.box(0, 0, 1, 1)]).area",
        "union_all",
    ),
    (
        "shapely-as-adapters",
        DISTRICT + "return shapely.geometry.asShape(g).area",
        "removed `asShape`",
    ),
    ("multi-part-iteration", MULTI + "return [p.area for p in m]", "`for part in g.geoms:`"),
    ("multi-part-iteration", MULTI + "return m[0].area", "`g.geoms[0]`"),
    ("multi-part-iteration", MULTI + "return len(m)", "`len(g.geoms)`"),
    ("multi-part-exterior", MULTI + "return list(m.exterior.coords)", "p.exterior for p in"),
    (
        "single-part-geometry",
        "u = shapely.union_all([shapely.box(0, 0, 2, 2), "
        "shapely.box(1, 1, 3, 3)])\nreturn [p.area for p in u.geoms]",
        "`parts = getattr(g, 'geoms', [g])`",
    ),
    (
        "single-part-geometry",
        "for part in shapely.box(0, 0, 1, 1):\n    pass\nreturn 1",
        "getattr(g, 'geoms', [g])",
    ),
    ("polygon-coords", "return list(shapely.box(0, 0, 1, 1).coords)", "`g.exterior.coords`"),
    (
        "strtree-indices",
        "boxes = [shapely.box(0, 0, 1, 1), shapely.box(1, 1, 2, 2)]\n"
        "tree = shapely.STRtree(boxes)\n"
        "return [b.area for b in tree.query(shapely.Point(0.5, 0.5))]",
        "`hits = [geoms[i] for i in tree.query(g)]`",
    ),
    (
        "point-lat-attribute",
        FIRST + "p = shapely.geometry.shape(f['geometry'])\nreturn {'lat': p.lat, 'lng': p.lng}",
        "`.y` (latitude)",
    ),
    ("h3-v3-name", "return h3.geo_to_h3(52.5, 13.4, 9)", "`h3.latlng_to_cell(lat, lng, res)`"),
    ("h3-v3-name", f"return h3.h3_to_geo({CELL})", "`h3.cell_to_latlng(cell)`"),
    (
        "h3-v3-name",
        f"return h3.h3_to_geo_boundary({CELL}, geo_json=True)",
        "`h3.cell_to_boundary(cell)`",
    ),
    (
        "h3-v3-name",
        DISTRICT + "return h3.polyfill(g, 8, geo_json_conformant=True)",
        "`h3.geo_to_cells(geometry, res)`",
    ),
    ("h3-v3-name", f"return h3.k_ring({CELL}, 1)", "`h3.grid_disk(cell, k)`"),
    ("h3-v3-name", f"return h3.h3_distance({CELL}, '8928308280bffff')", "`h3.grid_distance(a, b)`"),
    ("h3-v3-name", "from h3 import geo_to_h3\nreturn geo_to_h3(52.5, 13.4, 9)", "latlng_to_cell"),
    (
        "h3-latlng-args",
        FIRST + "return h3.latlng_to_cell(f['geometry']['coordinates'], 9)",
        "`h3.latlng_to_cell(lat, lng, 9)`",
    ),
    (
        "h3-geo-json-kwarg",
        f"return h3.cell_to_boundary({CELL}, geo_json=True)",
        "`h3.cells_to_geo([c])`",
    ),
    (
        "h3-polygon-input",
        "return h3.polygon_to_cells(shapely.box(13.3, 52.4, 13.5, 52.6), 7)",
        "`h3.geo_to_cells(f['geometry'], res)`",
    ),
    (
        "h3-polygon-input",
        DISTRICT + "return h3.polygon_to_cells(h3.LatLngPoly(g['coordinates']), 7)",
        "geo_to_cells",
    ),
    (
        "degree-buffer",
        "return len(h3.geo_to_cells(shapely.Point(13.4, 52.5).buffer(500), 0))",
        "`geo.buffer_m(g, 500)`",
    ),
    (
        "h3-latlng-domain",
        "df = pd.DataFrame({'lat': [52.5, None], 'lng': [13.4, 13.5]})\n"
        "return [h3.latlng_to_cell(r.lat, r.lng, 9) for r in df.itertuples()]",
        "`df.dropna(",
    ),
    ("h3-resolution", "return h3.latlng_to_cell(52.5, 13.4, 16)", "0–15"),
    (
        "h3-resolution",
        f"return h3.grid_distance({CELL}, h3.latlng_to_cell(37.77, -122.42, 7))",
        "`h3.cell_to_parent(c, 8)`",
    ),
    ("h3-invalid-cell", "return h3.grid_disk(617700169958293503, 1)", "`h3.int_to_str(n)`"),
    ("h3-invalid-cell", "return h3.cell_to_latlng('8928308280fffffx')", "hex strings"),
    (
        "lat-lng-order",
        "gdf = gpd.GeoDataFrame(geometry=gpd.points_from_xy([35.6], [139.7]), "
        "crs=4326)\nreturn str(gdf.estimate_utm_crs())",
        "`h3.latlng_to_cell(lat, lng, res)`",
    ),
    (
        "lat-lng-order",
        "t = pyproj.Transformer.from_crs(4326, 32654)\n"
        "return [round(v) for v in t.transform(139.7, 35.6)]",
        "always_xy=True",
    ),
    ("crs-error", FRAME + "return gdf.to_crs('UTM').area.sum()", "estimate_utm_crs()"),
    (
        "naive-crs",
        f"gdf = gpd.GeoDataFrame.from_features({PLACES})\n"
        "return gdf.to_crs(3857).geometry.x.tolist()",
        "crs=4326)",
    ),
    (
        "degrees-as-metres",
        FRAME + "return float(gdf.buffer(500).area.sum())",
        "`m = gdf.to_crs(gdf.estimate_utm_crs())`",
    ),
    (
        "no-active-geometry",
        f"gdf = gpd.GeoDataFrame({PLACES})\nreturn gdf.to_crs(3857)",
        "`gpd.GeoDataFrame.from_features(fc['features'], crs=4326)`",
    ),
    (
        "set-geometry-missing",
        f"df = pd.DataFrame([f['properties'] for f in {PLACES}])\n"
        "return gpd.GeoDataFrame(df).set_geometry('geometry')",
        "gpd.points_from_xy",
    ),
    (
        "sjoin-op",
        FRAME + "zones = gpd.GeoDataFrame.from_features("
        "geometries_by_entry['district:mitte'], crs=4326)\n"
        "return gpd.sjoin(gdf, zones, op='within')",
        "`predicate=`",
    ),
    (
        "dataframe-append",
        "df = pd.DataFrame(columns=['title'])\n"
        f"for f in {PLACES}:\n    df = df.append({{'title': f['properties']['title']}}, "
        "ignore_index=True)\nreturn df",
        "`pd.concat([df, pd.DataFrame(rows)]",
    ),
    (
        "geopandas-datasets",
        "path = gpd.datasets.get_path('naturalearth_lowres')\nreturn path",
        "removed `gpd.datasets`",
    ),
    ("pandas-removed", "s = pd.Series([1, 2])\nreturn [k for k, v in s.iteritems()]", "`.items()`"),
    ("pandas-removed", "df = pd.DataFrame({'a': [1]})\nreturn df.ix[0]", "`.loc[label]`"),
    ("pandas-removed", "df = pd.DataFrame({'a': [1]})\nreturn df.swapaxes(0, 1)", "`.T`"),
    ("pandas-removed", "df = pd.DataFrame({'a': [1]})\nreturn df.applymap(str)", "`.map(func)`"),
    (
        "pandas-removed",
        "df = pd.DataFrame({'a': [1.0, None]})\nreturn df.fillna(method='ffill')",
        "`.ffill()`",
    ),
    (
        "groupby-non-numeric",
        f"df = pd.DataFrame([f['properties'] for f in {PLACES}])\n"
        "df['n'] = 1\nreturn df.groupby('category').mean()",
        "numeric_only=True",
    ),
    (
        "ambiguous-truth",
        f"df = pd.DataFrame([f['properties'] for f in {PLACES}])\n"
        "return df[df.category == 'cafe' or df.category == 'bar']",
        "`&`, `|`, `~`",
    ),
    ("ambiguous-truth", "a = np.array([1, 2])\nif a > 1:\n    return 1\nreturn 0", "`.any()`"),
    (
        "nan-to-int",
        f"ratings = pd.Series([f['properties'].get('rating') for f in {PLACES}], "
        "dtype=float)\nreturn int(ratings.max())",
        "`pd.isna(x)`",
    ),
    (
        "division-by-zero",
        f"museums = [f for f in {PLACES} if f['properties']['category'] == "
        "'museum']\nreturn sum(1 for m in museums) / len(museums)",
        "if total else 0",
    ),
    (
        "empty-sequence",
        f"return max(f['properties']['rating'] for f in {PLACES} if 'rating' in f['properties'])",
        "`max(values, default=None)`",
    ),
    ("empty-sequence", "import statistics\nreturn statistics.mean([])", "if not values"),
    ("empty-sequence", "return pd.concat([])", "if not values"),
    (
        "index-out-of-range",
        f"museums = [f for f in {PLACES} if f['properties']['category'] == "
        "'museum']\nreturn museums[0]['properties']['title']",
        "`if features:`",
    ),
    ("not-callable", FRAME + "return gdf.to_crs(3857).area().sum()", "`g.area`, not `g.area()`"),
    ("not-callable", "return shapely.box(0, 0, 1, 1).area()", "take no parentheses"),
    ("geo-helper", "return geo.buffer_meters(shapely.Point(13.4, 52.5), 500).area", "`dir(geo)`"),
    ("module-near-miss", "return np.arrange(5).tolist()", "`np.arange`"),
    ("module-near-miss", "return pd.concatenate([pd.DataFrame()])", "`pd.concat`"),
]

# Errors the in-process mode cannot produce: (pattern name, error, fragment)
DIRECT: list[tuple[str, CodeError, str]] = [
    ("timeout", CodeError(type="Timeout", message="the code ran longer than 10 s and was stopped"),
     "`tree = shapely.STRtree(polygons)`"),
    ("out-of-memory", CodeError(type="MemoryError", message="", line=4,
                                code_line="pairs = [(p, q) for p in points for q in polygons]"),
     "`shapely.STRtree(geoms).query(...)`"),
    ("out-of-memory", CodeError(type="WorkerDied", message="the process running the code died "
                                "before replying (memory or CPU limit, or a crash): signal 9"),
     "GeoDataFrame columns"),
    ("result-too-large", CodeError(type="ResultTooLarge", message="the reply is over 64 MB; "
                                   "return a summary or fewer features"), "`df.head(50)`"),
    ("degree-buffer", CodeError(type="MemoryError", message="", line=2,
                                code_line="zone = h3.geo_to_cells(p.buffer(2.5), 12)"),
     "buffers by 2.5 degrees"),
]  # fmt: skip


def _cases() -> list[Any]:
    return [pytest.param(*case, id=f"{case[0]}-{i}") for i, case in enumerate(CASES)]


def _run(sandbox: Sandbox, code: str, inputs: Mapping[str, Any] = INPUTS) -> tuple[str, str]:
    """Run a failing body; return the (pattern name, hint) chosen for its error."""
    result = sandbox.run(code, inputs)
    if result.ok:  # it ran, but warned of a pitfall (a buffer in degrees): hinted all the same
        assert result.warnings, result.value
        kind, _, message = result.warnings[0].partition(": ")
        found = find_hint(CodeError(type=kind, message=message), inputs)
    else:
        assert result.error is not None
        found = find_hint(result.error, inputs)
    assert found is not None, f"no hint for {result.error or result.warnings}"
    assert result.hint == found[1]
    return found


@pytest.mark.parametrize(("name", "code", "fragment"), _cases())
def test_a_plausible_mistake_gets_its_hint(
    in_process: Sandbox, name: str, code: str, fragment: str
) -> None:
    chosen, text = _run(in_process, code)
    assert chosen == name, text
    assert fragment in text


@pytest.mark.parametrize(("name", "error", "fragment"), DIRECT, ids=[d[0] for d in DIRECT])
def test_limits_the_in_process_mode_cannot_hit_get_hints(
    name: str, error: CodeError, fragment: str
) -> None:
    found = find_hint(error, INPUTS)
    assert found is not None and found[0] == name
    assert fragment in found[1]
    assert hint_for(error, INPUTS) == found[1]


def test_the_table_is_large_named_uniquely_and_fully_exercised() -> None:
    names = [p.name for p in PATTERNS]
    assert len(names) >= 30
    assert len(set(names)) == len(names)
    assert all(re.fullmatch(r"[a-z0-9]+(?:-[a-z0-9]+)*", n) for n in names)
    assert all(isinstance(p, Pattern) for p in PATTERNS)
    covered = {c[0] for c in CASES} | {d[0] for d in DIRECT}
    assert covered == set(names)


def test_every_rendered_hint_is_short_and_names_code(in_process: Sandbox) -> None:
    texts = [_run(in_process, code)[1] for _, code, _ in CASES]
    texts += [text for _, error, _ in DIRECT if (text := hint_for(error, INPUTS))]
    assert len(texts) == len(CASES) + len(DIRECT)
    for text in texts:
        assert len(text) < 400, text
        assert re.search(r"`[^`]+`", text), text
        assert text.endswith((".", "?", "`")) and "  " not in text, text
        assert not re.search(r"\{\w+\}", text), text  # every template field was filled


def test_an_unrelated_error_gets_no_hint(in_process: Sandbox) -> None:
    for code in (
        "raise ValueError('boom')",
        "d = {'a': 1}\nreturn d['b']",
        "return totl + 1",
        "raise RuntimeError('the analysis found nothing to compare')",
    ):
        result = in_process.run(code, INPUTS)
        assert result.error is not None and result.hint is None, result.hint


def test_the_none_hint_names_only_the_records_that_are_none(in_process: Sandbox) -> None:
    result = in_process.run("return len(routes_by_entry)", INPUTS)
    assert result.hint is not None
    assert "`routes_by_entry` is None" in result.hint
    assert "ranges_by_entry" not in result.hint
    both = {"routes_by_entry": None, "ranges_by_entry": None}
    result = in_process.run("return [r for r in routes_by_entry]", both)
    assert result.hint is not None and "`routes_entry_ids`" in result.hint
    code = "routes = routes_by_entry\nfor r in routes:\n    pass\nreturn 1"
    result = in_process.run(code, both)
    assert result.hint is not None
    assert "`routes_by_entry` and `ranges_by_entry` are None" in result.hint


def test_unknown_ids_list_every_record_and_cap_long_listings(in_process: Sandbox) -> None:
    many = {f"places-{i}": {"type": "FeatureCollection", "features": []} for i in range(1, 30)}
    inputs = {"places_by_entry": many, "routes_by_entry": None}
    result = in_process.run("return places_by_entry['places-99']", inputs)
    assert result.hint is not None
    assert "places-1, places-2" in result.hint and "(29 in all)" in result.hint
    assert "routes_by_entry is None" in result.hint


def test_gate_refusals_get_their_hint_from_the_sandbox(in_process: Sandbox) -> None:
    result = in_process.run("Sure! Here it is:\n```python\nreturn 1\n```", INPUTS)
    assert result.error is not None and result.error.type == "GateRefused"
    assert result.hint is not None and "no markdown fences" in result.hint
    assert result.hint == hint_for(result.error, INPUTS)


def test_every_h3_v4_name_the_hints_suggest_exists() -> None:
    for suggestion in hints._H3_V4.values():
        for name in re.findall(r"(?:^|h3\.)(\w+)\(", suggestion):
            assert hasattr(h3, name), name


def test_hostile_or_odd_errors_never_break_hint_selection() -> None:
    odd_inputs: dict[str, Any] = {
        "places_by_entry": {"places-1": "not a collection", 3: None},
        "byod_by_entry": [1, 2, 3],
        "traffic_area_analytics_by_entry": {"t-1": {"features": "x"}},
    }
    for error in (
        CodeError(type="KeyError", message="'" + "x" * 10_000 + "'"),
        CodeError(type="KeyError", message="'places-7'", code_line="places_by_entry['places-7']"),
        CodeError(type="NameError", message="name '" + "a" * 5_000 + "' is not defined"),
        CodeError(type="AttributeError", message="module 'os' has no attribute 'sytem'"),
        CodeError(type="TypeError", message="'NoneType' object is not subscriptable",
                  code_line=None),
        CodeError(type="H3FailedError", message="", code_line="x.buffer(" * 2000),
    ):  # fmt: skip
        text = hint_for(error, odd_inputs)
        assert text is None or len(text) < 400


def test_a_failing_builder_is_logged_not_raised(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    def broken(seen: object) -> str:
        raise RuntimeError("bug in a builder")

    monkeypatch.setattr(hints, "PATTERNS", (Pattern(name="broken", hint=broken),))
    with caplog.at_level(logging.ERROR, logger="geomint.sandbox"):
        assert hint_for(CodeError(type="KeyError", message="'a'"), INPUTS) is None
    assert "choosing a hint failed" in caplog.text


def test_a_buffer_in_degrees_runs_but_is_hinted_in_every_mode(any_mode: Sandbox) -> None:
    result = any_mode.run(FRAME + "return float(gdf.buffer(500).area.sum())", INPUTS)
    assert result.ok, result.error
    assert any("geographic CRS" in w for w in result.warnings), result.warnings
    assert result.hint is not None and "estimate_utm_crs" in result.hint
    assert "Hint:" in result.for_model() and "Warnings:" in result.for_model()
