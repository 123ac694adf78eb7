"""Every format intake reads, made here from one small layer, plus CRS handling.

The files are written at test time with geopandas/pyogrio so no binary fixture lives in
the repository. Each binary format goes through the confined child process.
"""

from __future__ import annotations

import json
import warnings
import zipfile
from pathlib import Path

import geopandas as gpd
import pandas as pd
import pytest
import shapely

from geomint.intake import IntakeError, load

NAMES = ["Amsterdam", "Utrecht", "Zoë's café"]
POINTS = [(4.9, 52.37), (5.12, 52.09), (-0.1, 51.5)]


@pytest.fixture(scope="module")
def frame() -> gpd.GeoDataFrame:
    return gpd.GeoDataFrame(
        {
            "name": NAMES,
            "count": [1, 2, None],
            "opened": pd.to_datetime(["2024-01-01", "2024-02-01", None]),
        },
        geometry=[shapely.Point(xy) for xy in POINTS],
        crs=4326,
    )


@pytest.fixture(scope="module")
def files(tmp_path_factory: pytest.TempPathFactory, frame: gpd.GeoDataFrame) -> Path:
    folder = tmp_path_factory.mktemp("formats")
    frame.to_crs(27700).to_file(folder / "british.gpkg", layer="towns")
    frame.to_file(folder / "towns.fgb", SPATIAL_INDEX=False)  # keep the row order
    frame.to_parquet(folder / "towns.parquet")
    frame.to_crs(3857).to_parquet(folder / "mercator.parquet")
    frame[["name", "geometry"]].to_file(folder / "towns.kml", driver="LIBKML")
    shp = folder / "shp"
    shp.mkdir()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # Shapefile has no datetime type
        frame.to_crs(3857).to_file(shp / "towns.shp")
    with zipfile.ZipFile(folder / "towns.zip", "w") as archive:
        for part in sorted(shp.iterdir()):
            archive.write(part, f"towns/{part.name}")
    with zipfile.ZipFile(folder / "towns.kmz", "w") as archive:
        archive.write(folder / "towns.kml", "doc.kml")
    two = folder / "two.gpkg"
    frame.to_file(two, layer="towns")
    frame.iloc[:1].to_file(two, layer="capital")
    return folder


def _names_and_points(data: dict[str, object]) -> list[tuple[str, tuple[float, float]]]:
    out = []
    for feature in data["features"]:  # type: ignore[attr-defined]
        props = feature["properties"]
        x, y = feature["geometry"]["coordinates"]
        out.append((props.get("name", props.get("Name")), (round(x, 6), round(y, 6))))
    return out


EXPECTED = [(n, (round(x, 6), round(y, 6))) for n, (x, y) in zip(NAMES, POINTS, strict=True)]


@pytest.mark.parametrize(
    ("file", "crs"),
    [
        ("british.gpkg", "EPSG:27700"),
        ("towns.fgb", "EPSG:4326"),
        ("towns.parquet", "EPSG:4326"),
        ("mercator.parquet", "EPSG:3857"),
        ("towns.zip", "EPSG:3857"),
        ("towns.kml", "EPSG:4326"),
        ("towns.kmz", "EPSG:4326"),
    ],
)
def test_each_binary_format_loads_in_wgs84(files: Path, file: str, crs: str) -> None:
    layer = load(files / file)
    assert _names_and_points(layer.data) == EXPECTED
    assert layer.report.source_crs == crs
    reprojected = [w for w in layer.report.warnings if w.startswith("reprojected")]
    expected = f"reprojected from {crs} to WGS84 (EPSG:4326)"
    assert reprojected == ([] if crs == "EPSG:4326" else [expected])


def test_properties_keep_their_types(files: Path) -> None:
    props = [f["properties"] for f in load(files / "towns.fgb").data["features"]]
    assert props[0] == {"name": "Amsterdam", "count": 1.0, "opened": "2024-01-01T00:00:00.000"}
    assert props[2] == {"name": "Zoë's café", "count": None, "opened": None}


def test_bytes_are_sniffed_without_a_name(files: Path) -> None:
    layer = load((files / "british.gpkg").read_bytes())
    assert layer.report.format == "gpkg"
    assert _names_and_points(layer.data) == EXPECTED


def test_a_multi_layer_geopackage_asks_which_layer(files: Path) -> None:
    with pytest.raises(IntakeError) as caught:
        load(files / "two.gpkg")
    assert str(caught.value) == (
        f"Cannot load {files / 'two.gpkg'}: the GeoPackage holds 2 layers "
        "('towns', 'capital'); pass layer= to choose one"
    )
    assert load(files / "two.gpkg", layer="capital").report.feature_count == 1
    with pytest.raises(IntakeError, match="no layer named 'roads'; the layers are 'towns'"):
        load(files / "two.gpkg", layer="roads")


def test_geodataframe_in_another_crs(frame: gpd.GeoDataFrame) -> None:
    layer = load(frame.to_crs(3857))
    assert _names_and_points(layer.data) == EXPECTED


CSV_CASES = [
    (b"name,lon,lat\nA,4.9,52.3\n", {"name": "A"}, [4.9, 52.3]),
    (b"\xef\xbb\xbfname,Longitude,Latitude\nA,4.9,52.3\n", {"name": "A"}, [4.9, 52.3]),
    (b"id;lng;lat\n7;4,9;52,3\n", {"id": 7}, [4.9, 52.3]),
    (b"id\tx\ty\n7\t4.9\t52.3\n", {"id": 7}, [4.9, 52.3]),
    (b'id,wkt\n7,"POINT (4.9 52.3)"\n', {"id": 7}, [4.9, 52.3]),
    (b"id,geometry\n7,POINT (4.9 52.3)\n", {"id": 7}, [4.9, 52.3]),
]


@pytest.mark.parametrize(("raw", "props", "xy"), CSV_CASES)
def test_csv_variants(raw: bytes, props: dict[str, object], xy: list[float]) -> None:
    (feature,) = load(raw, label="points.csv").data["features"]
    assert feature["properties"] == props
    assert feature["geometry"] == {"type": "Point", "coordinates": xy}


def test_csv_with_empty_coordinates_is_a_feature_without_location() -> None:
    data = load(b"name,lon,lat\nA,,\nB,1,2\n", label="p.csv").data
    assert [f["geometry"] for f in data["features"]] == [
        None,
        {"type": "Point", "coordinates": [1.0, 2.0]},
    ]


def test_csv_file_on_disk(tmp_path: Path) -> None:
    path = tmp_path / "stops.csv"
    path.write_text("stop,lat,lon\nCentraal,52.378,4.900\n", encoding="utf-8")
    layer = load(path)
    assert layer.report.format == "csv"
    assert layer.data["features"][0]["geometry"]["coordinates"] == [4.9, 52.378]


def test_report_names_format_and_crs_in_json(files: Path) -> None:
    report = load(files / "towns.zip").report
    assert (report.format, report.source_crs) == ("shapefile", "EPSG:3857")
    assert json.loads(json.dumps(report.as_dict()))["source_crs"] == "EPSG:3857"


def test_utf16_bytes_without_a_name_are_read_as_json() -> None:
    raw = json.dumps({"type": "Point", "coordinates": [1, 2]}).encode("utf-16")
    layer = load(raw)
    assert layer.data["features"][0]["geometry"]["coordinates"] == [1, 2]
    assert [r.kind for r in layer.report.repairs] == ["decoded_to_utf8"]


def test_property_numbers_keep_fifteen_significant_digits(tmp_path: Path) -> None:
    frame = gpd.GeoDataFrame(
        {"x": [1234.56789012345, 0.000123456789012345]},
        geometry=[shapely.Point(1, 2), shapely.Point(3, 4)],
        crs=4326,
    )
    frame.to_file(tmp_path / "precise.gpkg")
    for source in (frame, tmp_path / "precise.gpkg"):
        got = [f["properties"]["x"] for f in load(source).data["features"]]
        assert got == [1234.56789012345, 0.000123456789012345]


def test_csv_with_old_mac_line_endings_loads() -> None:
    data = load(b'name,lat,lon\r"a",52.1,4.9\r"b",52.2,5.0\r', label="mac.csv").data
    assert [f["properties"] for f in data["features"]] == [{"name": "a"}, {"name": "b"}]
    assert data["features"][1]["geometry"]["coordinates"] == [5.0, 52.2]


@pytest.mark.parametrize(
    ("column", "values", "expected"),
    [
        ("ints", ["7", "-12", "0"], [7, -12, 0]),
        ("floats", ["0.5", "-0.25", "1e-05"], [0.5, -0.25, 1e-05]),
        ("ints with a gap", ["7", "", "9"], [7, None, 9]),
        ("a double's 17 digits", ["0.30000000000000004", "1"], [0.30000000000000004, 1]),
        ("leading zeros", ["007", "01234", "5"], ["007", "01234", "5"]),
        ("plus sign", ["+5", "6"], ["+5", "6"]),
        ("spaces", [" 5", "6"], [" 5", "6"]),
        ("minus zero", ["-0", "6"], ["-0", "6"]),
        ("bare point", [".5", "6"], [".5", "6"]),
        ("beyond a double", ["1e999", "6"], ["1e999", "6"]),
        ("beyond 64 bits", ["12345678901234567890", "6"], ["12345678901234567890", "6"]),
        ("more digits than a double", ["0.1000000000000000055511", "6"], None),
        ("words", ["True", "6"], ["True", "6"]),
    ],
)
def test_csv_columns_become_numbers_only_when_nothing_changes(
    column: str, values: list[str], expected: list[object] | None
) -> None:
    rows = "".join(f"{v},{i},{i}\n" for i, v in enumerate(values))
    layer = load(f"value,lon,lat\n{rows}".encode(), label=f"{column}.csv")
    got = [f["properties"]["value"] for f in layer.data["features"]]
    assert got == (expected if expected is not None else values)
    assert [type(v) for v in got] == [type(v) for v in (expected or values)]


def test_csv_with_excel_trailing_unnamed_columns_loads() -> None:
    layer = load(b"name,lat,lon,,\na,52.1,4.9,,\nb,52.2,5.0,,\n", label="excel.csv")
    assert [f["properties"] for f in layer.data["features"]] == [{"name": "a"}, {"name": "b"}]


def test_geoparquet_bytes_become_base64_and_a_second_geometry_wkt(tmp_path: Path) -> None:
    frame = gpd.GeoDataFrame(
        {"blob": [b"\x00\xffabc", None], "other": gpd.GeoSeries([shapely.Point(1, 2), None])},
        geometry=[shapely.Point(4.9, 52.1), shapely.Point(5, 52)],
        crs=4326,
    )
    frame.to_parquet(tmp_path / "blobs.parquet")
    for source in (tmp_path / "blobs.parquet", frame):
        props = [f["properties"] for f in load(source).data["features"]]
        assert props == [
            {"blob": "AP9hYmM=", "other": "POINT (1 2)"},
            {"blob": None, "other": None},
        ]


@pytest.mark.parametrize("labels", [["a", "a"], [0, "0"]], ids=["repeated", "int-and-str"])
def test_columns_that_share_a_name_are_refused(labels: list[object]) -> None:
    from geomint.intake._table_json import table_json

    frame = pd.DataFrame([[1, 2.5]], columns=labels)
    name = str(labels[0])
    with pytest.raises(ValueError, match=f"more than one column named '{name}'; rename the"):
        table_json(frame)
    layer = gpd.GeoDataFrame(frame, geometry=[shapely.Point(1, 2)], crs=4326)
    with pytest.raises(IntakeError, match=f"more than one column named '{name}'"):
        load(layer)


def test_kml_with_a_long_preamble_loads(files: Path) -> None:
    kml = (files / "towns.kml").read_bytes()
    body = kml[kml.index(b"<kml") :]
    preamble = b'<?xml version="1.0"?>\n<!--' + b"x" * 2000 + b"-->\n<?style x?>\n"
    layer = load(preamble + body, label="long.kml")
    assert _names_and_points(layer.data) == EXPECTED


@pytest.mark.parametrize("raw", [b"name,lat,lon", b"name,lat,lon\n", b"name,lat,lon\r"])
def test_csv_with_a_header_only_is_an_empty_layer(raw: bytes) -> None:
    assert load(raw, label="empty.csv").data["features"] == []
