"""Every case of the bad-geojson suite gets the verdict its sidecar asks for."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import shapely
from shapely.geometry import shape

from geomint.intake import IntakeError, load

FIXTURES = Path(__file__).parent / "fixtures" / "bad-geojson"
CASES = sorted(p.name.removesuffix(".geojson") for p in FIXTURES.glob("*.geojson"))

# The key words of each REJECT case's expected message that our message must carry.
FRAGMENTS: dict[str, tuple[str, ...]] = {
    "geos-zero-area-L": ("polygon has no area", "collapses to lines"),
    "hint-bad-duplicate-properties": ("duplicate member 'type'", "ambiguous"),
    "hint-bad-featurelist": ("Polygon coordinates must be an array of linear rings", "a number"),
    "hint-bad-json": ("not valid JSON", "line 3 column 5"),
    "hint-bad-object-type": ("'type' member must be a string",),
    "hint-bad-polygonloop": (
        "Polygon coordinates",
        "one level too shallow",
        "positions where rings",
    ),
    "hint-bad-properties-as-array": ("'properties' must be an object or null", "an array"),
    "hint-badcoord": ("each element of a position must be a number", '"f"'),
    "hint-badcoordtype": ("MultiPolygon coordinates nested too shallowly",),
    "hint-badfeature": ("features[0] is null", "every feature must be an object"),
    "hint-badfeatureid": ("Feature 'id' must be a string or number", "an object"),
    "hint-different-first-last": ("LinearRing not closed", "first != last"),
    "hint-different-first-size": ("LinearRing not closed", "last position has 3 elements"),
    "hint-expected_object": ("'properties' must be an object or null", "a number"),
    "hint-false": ("GeometryCollection.geometries must contain geometry objects", "false"),
    "hint-featurecollection-obj": ("'features' must be an array", "an object"),
    "hint-featurecollection-type-case": ("case-sensitive", "'featurecollection'"),
    "hint-featurecollection": ("FeatureCollection requires a 'features' member",),
    "hint-multiple_problems": (
        "5 problems",
        "features[0]: Feature 'id'",
        "features[0].geometry.coordinates[1]",
        "features[2]: feature type 'Foo'",
        "features[3]: feature type 'Foo'",
        "features[3].geometry.coordinates",
    ),
    "hint-multipoint-multidimension": ("nested too deeply",),
    "hint-multipoint-nondimension": ("MultiPoint coordinates must be an array of positions",),
    "hint-nofeaturetype": ("feature type 'Featre' is not 'Feature'",),
    "hint-notype": ("'type' member required",),
    "hint-point-labeled-as-a-multipolygon": ("MultiPolygon coordinates", "too shallow"),
    "hint-point-string": ("each element of a position must be a number", '"foo"'),
    "hint-point-toofew": ("position must have at least 2 elements",),
    "hint-point": ("'coordinates' member required",),
    "hint-rootstring": ("root must be a GeoJSON object", "null"),
    "hint-short-line": ("LineString needs two or more positions",),
    "hint-short-linearring": ("LinearRing needs four or more positions and must be closed",),
    "hint-short-multilinestring": ("MultiLineString part", "coordinates[1]", "two or more"),
    "hint-stringcoord": ('"39.36827914916011"', "must be a number"),
    "hint-unknowntype": ("unknown type 'FooBar'",),
    "jz-geometrycollection-bad-member": ("geometries[1]", "LinearRing not closed"),
    "jz-infinity-coordinate": ("non-finite number (Infinity)",),
    "jz-multipoint-mixed-dims": ("coordinates[0]", "at least 2 elements"),
    "jz-multipoint-not-sequence": ("must be an array of positions",),
    "jz-multipolygon-unclosed": ("coordinates[0][0]", "LinearRing not closed"),
    "jz-nan-coordinate": ("non-finite number (NaN)", "not valid JSON"),
    "jz-neg-infinity-coordinate": ("non-finite number (-Infinity)",),
    "jz-point-two-positions": ("Point coordinates must be a single position",),
    "jz-polygon-3-positions": ("four or more positions and must be closed",),
    "jz-polygon-almost-closed": ("LinearRing not closed", "first != last"),
    "jz-position-question-mark": ('"?"', "must be a number"),
}

XFAIL: dict[str, str] = {
    "antimeridian-both-poles": (
        "the reference output encloses both poles, which antimeridian only produces with "
        "force_north_pole/force_south_pole; nothing in the ring says so, and we do not guess"
    ),
}


def _sidecar(case: str) -> dict[str, str]:
    fields: dict[str, str] = {}
    for line in (FIXTURES / f"{case}.expect.txt").read_text().splitlines():
        key, sep, value = line.partition(": ")
        if sep and key.islower():
            fields[key] = value
    return fields


def _expected_geometry(case: str) -> shapely.Geometry | None:
    found = sorted((FIXTURES / "_expected").glob(f"{case}.*.geojson"))
    if not found:
        return None
    value = json.loads(found[0].read_text())
    if value["type"] == "FeatureCollection":
        value = value["features"][0]["geometry"]
    elif value["type"] == "Feature":
        value = value["geometry"]
    return shape(value)


def _params() -> list[object]:
    return [
        pytest.param(c, marks=pytest.mark.xfail(strict=True, reason=XFAIL[c])) if c in XFAIL else c
        for c in CASES
    ]


def test_the_suite_is_complete() -> None:
    assert len(CASES) == 72
    rejects = {c for c in CASES if _sidecar(c)["verdict"] == "REJECT"}
    assert rejects == set(FRAGMENTS)


@pytest.mark.parametrize("case", _params())
def test_case(case: str) -> None:
    verdict = _sidecar(case)["verdict"]
    path = FIXTURES / f"{case}.geojson"
    if verdict == "REJECT":
        with pytest.raises(IntakeError) as caught:
            load(path)
        for fragment in FRAGMENTS[case]:
            assert fragment in str(caught.value)
        return
    layer = load(path)
    report = layer.report
    if verdict == "ACCEPT":
        assert report.clean, report.warnings
    elif verdict == "ACCEPT_WARN":
        assert report.warnings
    else:
        assert report.repairs
    expected = _expected_geometry(case)
    if expected is not None and verdict != "REJECT":
        got = shape(layer.data["features"][0]["geometry"])
        assert shapely.normalize(got).equals_exact(shapely.normalize(expected), tolerance=1e-9), (
            got.wkt,
            expected.wkt,
        )
