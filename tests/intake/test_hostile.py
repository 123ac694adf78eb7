"""Hostile and awkward inputs of our own: each gets an exact verdict and message."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from geomint.intake import IntakeError, load


def _fc(*geometries: object, props: dict[str, object] | None = None) -> dict[str, object]:
    return {
        "type": "FeatureCollection",
        "features": [
            {"type": "Feature", "properties": props or {}, "geometry": g} for g in geometries
        ],
    }


def _bytes(value: object) -> bytes:
    return json.dumps(value).encode()


def _nested(depth: int) -> list[object]:
    value: list[object] = []
    for _ in range(depth - 1):
        value = [value]
    return value


POINT = {"type": "Point", "coordinates": [1.5, 2.5]}


@pytest.mark.parametrize(
    ("raw", "fragment"),
    [
        (b"", "the input is empty (0 bytes)"),
        (b"   \n", "the input is empty"),
        (b'{"type": "Point", "coordinates": [1, \xe9]}', "byte offset 37"),
        (
            b"\xff\xfe{}",
            "starts with a UTF-16LE byte-order mark, but read as UTF-16LE it is not JSON",
        ),
        (b"[" * 100_000 + b"]" * 100_000, "nesting is deeper than 64 levels"),
        (
            _bytes({"type": "Feature", "properties": {"a": _nested(70)}, "geometry": None}),
            "nesting is deeper",
        ),
        (b'{"type": "Point", "coordinates": [NaN, 1]}', "non-finite number (NaN)"),
        (_bytes({"type": "Point", "coordinates": [200, 95]}), "coordinate out of range"),
        (
            _bytes({"type": "Point", "coordinates": [52.52, 173.4]}),
            "it looks like [lat, lng] order: GeoJSON positions are [lng, lat], so write "
            "[173.4, 52.52]",
        ),
        (_bytes({"type": "Point", "coordinates": [True, 1]}), "found true"),
        (_bytes({"type": "Topology", "objects": {}}), "this is TopoJSON"),
        (
            _bytes({"geometryType": "esriGeometryPoint", "features": []}),
            "this is Esri JSON",
        ),
        (_bytes({"type": "Point", "coordinates": {"x": 1}}), "found an object"),
        (b'{"a": 1, "a": 2}', "duplicate member 'a'"),
        (b"[]", "root must be a GeoJSON object (found an array)"),
        (_bytes({"type": "Feature", "properties": {}}), "'geometry' member required"),
        (
            _bytes(
                {
                    "type": "Point",
                    "coordinates": [1, 2],
                    "crs": {"type": "name", "properties": {"name": "EPSG:99999999"}},
                }
            ),
            "not a recognised CRS",
        ),
    ],
)
def test_refused(raw: bytes, fragment: str) -> None:
    with pytest.raises(IntakeError) as caught:
        load(raw)
    assert fragment in str(caught.value)
    assert isinstance(caught.value, ValueError)


def test_bom_is_stripped_and_reported() -> None:
    layer = load(b"\xef\xbb\xbf" + _bytes(POINT))
    assert layer.report.repair("bom_stripped") is not None
    assert layer.data["features"][0]["geometry"]["coordinates"] == [1.5, 2.5]


def test_null_and_empty_geometries_load_as_null() -> None:
    layer = load(_fc(None, {"type": "Polygon", "coordinates": []}))
    assert [f["geometry"] for f in layer.data["features"]] == [None, None]
    assert layer.report.geometry_types == {"null": 2}
    empty = layer.report.repair("empty_geometry")
    assert empty is not None
    assert (empty.count, empty.feature_indices) == (1, (1,))
    assert layer.report.bbox is None


@pytest.mark.parametrize("position", [[1.5, 2.5, 10.0], [1.5, 2.5, 10.0, 7.0]])
def test_extra_dimensions_are_dropped(position: list[float]) -> None:
    layer = load({"type": "Point", "coordinates": position})
    assert layer.data["features"][0]["geometry"]["coordinates"] == [1.5, 2.5]
    repair = layer.report.repair("dropped_dimensions")
    assert repair is not None
    assert repair.feature_indices == (0,)


def test_nan_in_a_dict_is_refused() -> None:
    with pytest.raises(IntakeError, match=r"coordinates\[1\]: non-finite number \(NaN\)"):
        load({"type": "Point", "coordinates": [1.0, float("nan")]})


def test_a_large_property_string_loads_and_the_profile_cuts_it() -> None:
    big = "x" * 1_000_000
    layer = load(_bytes(_fc(POINT, props={"text": big, "n": 3})))
    profile = layer.profile()
    assert profile["sample_rows"][0]["text"] == "x" * 79 + "…"
    assert profile["properties"]["n"] == {"types": ["number"], "min": 3, "max": 3}
    assert big not in json.dumps(profile)


def test_twenty_thousand_features() -> None:
    points = [
        {"type": "Point", "coordinates": [i % 360 - 180, (i % 180) - 90]} for i in range(20_000)
    ]
    layer = load(_bytes(_fc(*points)))
    assert layer.report.feature_count == 20_000
    assert layer.report.clean
    assert layer.report.bbox == (-180, -90, 179, 89)


def test_many_problems_are_summarised() -> None:
    bad = [{"type": "Point", "coordinates": ["a", 1]}] * 30
    with pytest.raises(IntakeError) as caught:
        load(_fc(*bad))
    message = str(caught.value)
    assert "30 problems found; nothing was loaded." in message
    assert "features[29]" not in message
    assert "and 20 more" in message


def test_over_max_bytes_is_refused() -> None:
    with pytest.raises(IntakeError, match="over the 10-byte limit"):
        load(_bytes(POINT), max_bytes=10)


def test_files_by_suffix(tmp_path: Path) -> None:
    lines = tmp_path / "points.ndjson"
    lines.write_text(json.dumps(POINT) + "\n\n" + json.dumps(POINT) + "\n")
    assert load(lines).report.feature_count == 2
    other = tmp_path / "points.docx"
    other.write_text("x")
    with pytest.raises(IntakeError, match=r"cannot tell what format this is \(first bytes b'x'\)"):
        load(other)
    with pytest.raises(IntakeError, match="cannot read the file"):
        load(tmp_path / "missing.geojson")


def test_legacy_crs_wgs84_warns_and_projected_crs_is_reprojected() -> None:
    crs84 = {"type": "name", "properties": {"name": "urn:ogc:def:crs:OGC:1.3:CRS84"}}
    layer = load({**POINT, "crs": crs84})
    assert any("legacy 'crs' member" in w for w in layer.report.warnings)
    mercator = {"type": "name", "properties": {"name": "EPSG:3857"}}
    layer = load({"type": "Point", "coordinates": [111319.49079327357, 0.0], "crs": mercator})
    lon, lat = layer.data["features"][0]["geometry"]["coordinates"]
    assert lon == pytest.approx(1.0)
    assert lat == pytest.approx(0.0)
    assert layer.report.repair("reprojected") is not None


def test_geo_interface_and_geodataframe() -> None:
    import geopandas
    from shapely.geometry import Point

    assert load(Point(1, 2)).data["features"][0]["geometry"]["coordinates"] == [1.0, 2.0]
    frame = geopandas.GeoDataFrame({"a": [1]}, geometry=[Point(111319.49079327357, 0)], crs=3857)
    lon, _ = load(frame).data["features"][0]["geometry"]["coordinates"]
    assert lon == pytest.approx(1.0)
    with pytest.raises(IntakeError, match="cannot load a int"):
        load(5)
