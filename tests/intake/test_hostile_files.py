"""Hostile and broken files in the binary formats and CSV: exact verdicts and messages."""

from __future__ import annotations

import gzip
import io
import json
import os
import time
import zipfile
from pathlib import Path

import geopandas as gpd
import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
import shapely

from geomint.intake import IntakeError, _confined, confinement_level, load
from geomint.intake._confined import _answer
from geomint.intake.tabular import _wkt_depths, read_csv

DAMAGED = "it is damaged, incomplete or not what its name says: export it again"


@pytest.fixture(scope="module")
def gpkg(tmp_path_factory: pytest.TempPathFactory) -> bytes:
    path = tmp_path_factory.mktemp("gpkg") / "towns.gpkg"
    gpd.GeoDataFrame({"n": [1]}, geometry=[shapely.Point(4.9, 52.4)], crs=4326).to_file(path)
    return path.read_bytes()


def _zip(members: dict[str, bytes], method: int = zipfile.ZIP_DEFLATED) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", method) as archive:
        for name, data in members.items():
            archive.writestr(name, data)
    return buffer.getvalue()


def _refusal(tmp_path: Path, name: str, data: bytes, **kwargs: object) -> str:
    path = tmp_path / name
    path.write_bytes(data)
    with pytest.raises(IntakeError) as caught:
        load(path, **kwargs)  # type: ignore[arg-type]
    message = str(caught.value)
    prefix = f"Cannot load {path}: "
    assert message.startswith(prefix)
    return message[len(prefix) :]


_XXE = (
    b'<?xml version="1.0"?><!DOCTYPE kml [<!ENTITY xxe SYSTEM "file:///etc/passwd">]>'
    b'<kml xmlns="http://www.opengis.net/kml/2.2"><Document><Placemark><name>&xxe;</name>'
    b"<Point><coordinates>1,2</coordinates></Point></Placemark></Document></kml>"
)
_LAUGHS = (
    b'<?xml version="1.0"?><!DOCTYPE kml [<!ENTITY a "aaaaaaaaaa">'
    + b"".join(
        b'<!ENTITY %s "%s">' % (chr(98 + i).encode(), (b"&" + chr(97 + i).encode() + b";") * 10)
        for i in range(9)
    )
    + b']><kml xmlns="http://www.opengis.net/kml/2.2"><Document><Placemark><name>&j;</name>'
    b"<Point><coordinates>1,2</coordinates></Point></Placemark></Document></kml>"
)

CASES = [
    (
        "page.gpkg",
        b"<!DOCTYPE html><html><body>Not found</body></html>",
        "this is an HTML page, not KML or any geodata geomint reads; check the link or file",
    ),
    (
        "bare.shp",
        b"\x00\x00'\n" + bytes(96),
        "this is a bare .shp file, not geodata geomint reads; zip it with its .shx, .dbf and .prj",
    ),
    (
        "data.geojson",
        gzip.compress(b"{}"),
        "this is a gzip archive, not geodata geomint reads; unpack it first",
    ),
    (
        "map.png",
        b"\x89PNG\r\n\x1a\n" + bytes(32),
        "this is a PNG image, not geodata geomint reads; raster images are not vector layers",
    ),
    (
        "empty.zip",
        b"PK\x05\x06" + bytes(18),
        "this is an empty zip archive, not geodata geomint reads; add the layer's files to it",
    ),
    (
        "odd.fgb",
        b"fgb\x03" + bytes(4) + bytes(range(256)) * 40,
        f"the FlatGeobuf file holds no layers; {DAMAGED}",
    ),
    (
        "readme.zip",
        _zip({"readme.txt": b"hello"}),
        "the zip archive holds no .shp file (it holds readme.txt); a zipped Shapefile needs "
        "at least the .shp, .shx and .dbf of one layer",
    ),
    (
        "entity.kml",
        _XXE,
        "this XML document declares its own DTD (<!DOCTYPE ... [ ... ]>), which KML never "
        "needs and geomint does not read; remove the DOCTYPE",
    ),
    (
        "laughs.kml",
        _LAUGHS,
        "this XML document declares its own DTD (<!DOCTYPE ... [ ... ]>), which KML never "
        "needs and geomint does not read; remove the DOCTYPE",
    ),
    (
        "broken.parquet",
        b"PAR1" + b"\x01" * 1000 + b"PAR1",
        "the file cannot be read as a GeoParquet file (Could not open Parquet input source",
    ),
    ("points.csv", b"", "the CSV is empty: it has no header line"),
    (
        "points.csv",
        b"name,lon,lat\n\xe9,1,2\n",
        "the CSV is not UTF-8 text: byte 0xe9 at byte offset 13 (line 2); re-save it as UTF-8",
    ),
    (
        "points.csv",
        b"lon,lat,lon\n1,2,3\n",
        "the CSV header names column 'lon' twice; rename one of them",
    ),
    (
        "points.csv",
        b"a,b\n1,2\n",
        "no coordinate columns among 'a', 'b'; name them lon and lat (or longitude and "
        "latitude), or give WKT in a column named wkt or geometry",
    ),
    (
        "points.csv",
        b"a,lon,lat\n1,2,3,4\n",
        "the CSV rows do not line up with its header: line 2 has 4 fields, the header 3; "
        "fix that line",
    ),
    (
        "points.csv",
        b"a,lon,lat\n1,2,3\n1,2,3,4\n",
        "the CSV rows do not line up with its header: line 3 has 4 fields, the header 3; "
        "fix that line",
    ),
    (
        "points.csv",
        b"name,lon,lat\nA,,\nB,abc,3\nC,1,north\n",
        "'lon'/'lat' are not numbers on lines 3, 4; use decimal degrees such as 4.8952, or "
        "leave both empty for no location",
    ),
    (
        "points.csv",
        b"id,x,y\n1,530000,180000\n",
        "'x'/'y' reach 530,000, which is not degrees; CSV coordinates must be WGS84 "
        "longitude/latitude: convert them, or send a GeoPackage or Shapefile that names its CRS",
    ),
    (
        "points.csv",
        b"id,wkt\n1,POINT (1 2\n",
        "'wkt' is not valid WKT on line 2; e.g. POINT (4.89 52.37)",
    ),
    (
        "points.csv",
        b"id,wkt\n1,POINT (1 2)\n2,CIRCLE (1 2 3)\n",
        "'wkt' is not valid WKT on line 3; e.g. POINT (4.89 52.37)",
    ),
    (
        "notes.docx",
        b"x",
        "cannot tell what format this is (first bytes b'x'); geomint reads",
    ),
]


@pytest.mark.parametrize(("name", "data", "message"), CASES, ids=[c[0] for c in CASES])
def test_refused(tmp_path: Path, name: str, data: bytes, message: str) -> None:
    assert _refusal(tmp_path, name, data).startswith(message)


def test_zip_bomb_is_refused_before_unpacking(tmp_path: Path) -> None:
    bomb = _zip({"a.shp": bytes(30_000_000)})
    assert len(bomb) < 100_000
    assert _refusal(tmp_path, "bomb.zip", bomb, max_bytes=1_000_000) == (
        "the zip archive unpacks to 30,000,000 bytes, over the 1,000,000-byte limit; "
        "pass a larger max_bytes if that is expected"
    )


def test_zip_member_names_cannot_leave_the_scratch_folder(tmp_path: Path) -> None:
    inner = tmp_path / "inner"
    inner.mkdir()
    archive = _zip({"../../escaped.shp": b"\x00\x00'\n" + bytes(96), "/abs.dbf": b"x"})
    _refusal(inner, "evil.zip", archive)
    assert not list(tmp_path.rglob("escaped.shp"))
    assert not Path("/abs.dbf").exists()


def test_a_geopackage_named_kml_is_refused(tmp_path: Path, gpkg: bytes) -> None:
    assert _refusal(tmp_path, "towns.kml", gpkg) == (
        "named as KML but the content is GeoPackage; rename the file to match what it holds"
    )


def test_a_truncated_geopackage(tmp_path: Path, gpkg: bytes) -> None:
    assert _refusal(tmp_path, "cut.gpkg", gpkg[:3000]) == (
        "the file cannot be read as a GeoPackage (database disk image is malformed; "
        f"database disk image is malformed); {DAMAGED}"
    )


def test_a_slow_read_is_stopped(tmp_path: Path) -> None:
    # Enough rows that reading them takes well over the 50 ms floor a child is given (the
    # one-row file reads in about 46 ms on a 2-core machine, so it cannot show a timeout).
    towns = gpd.GeoDataFrame(
        {"n": range(50_000)}, geometry=gpd.points_from_xy([4.9] * 50_000, [52.4] * 50_000)
    )
    big = tmp_path / "big.gpkg"
    towns.set_crs(4326).to_file(big)
    assert _refusal(tmp_path, "slow.gpkg", big.read_bytes(), timeout_s=0.05) == (
        "reading the file took longer than 0.05 s and was stopped; pass a larger timeout_s "
        "for a large file"
    )


def test_plain_parquet_is_named_as_such(tmp_path: Path) -> None:
    pq.write_table(pa.table({"lon": [1.0], "lat": [2.0]}), tmp_path / "plain.parquet")
    with pytest.raises(IntakeError, match="it is plain Parquet, not GeoParquet"):
        load(tmp_path / "plain.parquet")


def test_shapefile_without_prj(tmp_path: Path) -> None:
    def zipped(frame: gpd.GeoDataFrame, name: str) -> Path:
        folder = tmp_path / name
        folder.mkdir()
        frame.to_file(folder / "layer.shp")
        (folder / "layer.prj").unlink()
        path = tmp_path / f"{name}.zip"
        path.write_bytes(_zip({p.name: p.read_bytes() for p in folder.iterdir()}))
        return path

    degrees = gpd.GeoDataFrame({"n": [1]}, geometry=[shapely.Point(4.9, 52.4)], crs=4326)
    layer = load(zipped(degrees, "degrees"))
    assert layer.report.source_crs is None
    assert "the file names no CRS; its coordinates are degrees, read as WGS84" in (
        layer.report.warnings
    )
    with pytest.raises(IntakeError) as caught:
        load(zipped(degrees.to_crs(27700), "metres"))
    assert "the file names no coordinate reference system and its coordinates (x 869119" in str(
        caught.value
    )
    assert "are not degrees; add the CRS (for a Shapefile, its .prj file)" in str(caught.value)


@pytest.mark.parametrize(
    ("reply", "message"),
    [
        ("died", "the reader stopped while parsing the file (it crashed, or went past its 1,024"),
        ("timeout", "reading the file took longer than 3 s and was stopped; pass a larger"),
        ("overflow", "the reader's answer was larger than the layer may be; the file is refused"),
        (b"[[[", "the reader's answer was malformed; the file is refused"),
        (b"[" * 100_000 + b"]" * 100_000, "the reader's answer was malformed"),
        (b'{"ok": false, "problems": [1]}', "the reader's answer was malformed"),
        (b'{"ok": false, "memory": true}', "reading the file needed more than 1,024 MB"),
        (b'{"ok": true, "data": {"type": "FeatureCollection", "features": []}, "report": {}}',
         "the reader's answer was malformed"),
    ],
)  # fmt: skip
def test_a_reader_that_crashed_or_lied_becomes_a_refusal(reply: bytes | str, message: str) -> None:
    with pytest.raises(IntakeError) as caught:
        _answer(reply, "towns.gpkg", 1024, 3)
    assert str(caught.value).startswith(f"Cannot load towns.gpkg: {message}")


@pytest.mark.isolation
@pytest.mark.skipif(os.geteuid() != 0, reason="the isolated level needs root")
def test_the_reader_children_are_isolated() -> None:
    assert confinement_level() == "isolated"
    worker = _confined._READER._worker
    assert worker is not None
    probe = worker.probe("isolated")
    assert probe["netns"] and probe["mountns"] and probe["seccomp"] and probe["uid_drop"]
    assert probe["landlock"] > 0 and probe["oom_victim"]


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (
            b"name,lat,lon\na,52.1,4.9\nb\n",
            "the CSV rows do not line up with its header: line 3 has 1 field, the header 3; "
            "fix that line",
        ),
        (
            b"name,lat,lon\ra,52.1,4.9\r\rb,52.2\r",
            "the CSV rows do not line up with its header: line 4 has 2 fields, the header 3; "
            "fix that line",
        ),
        (
            b'name,lat,lon\n"a\nb",52.1,4.9\nc,1\n',
            "the CSV rows do not line up with its header: line 4 has 2 fields, the header 3; "
            "fix that line",
        ),
        (
            b"name,lat,lon,\na,52.1,4.9,x\n",
            "column 4 has no name in the CSV header but holds values (line 2); name it in the "
            "header",
        ),
    ],
    ids=["short-row", "short-row-cr-only", "short-row-after-quoted-newline", "unnamed"],
)
def test_csv_refused(tmp_path: Path, data: bytes, message: str) -> None:
    assert _refusal(tmp_path, "points.csv", data).startswith(message)


def test_a_csv_of_100k_rows_stays_fast() -> None:
    rows = "".join(
        f"{i},place {i},0{i % 9000 + 1000},52.{i},4.{i},{i / 7}\n" for i in range(100_000)
    )
    raw = ("id,name,postcode,lat,lon,value\n" + rows).encode()
    started = time.perf_counter()
    layer = load(raw, label="big.csv")
    assert time.perf_counter() - started < 10  # ~1.5 s; generous for a loaded machine
    assert layer.data["features"][1]["properties"] == {
        "id": 1,
        "name": "place 1",
        "postcode": "01001",
        "value": 1 / 7,
    }


def _nested_wkt(parentheses: int) -> str:
    """A point inside GEOMETRYCOLLECTIONs, its parentheses nested that many deep."""
    collections = parentheses - 1
    return "GEOMETRYCOLLECTION (" * collections + "POINT (1 2)" + ")" * collections


def _deep_message(parentheses: int, where: str = "line 2") -> str:
    return (
        f"'wkt' holds WKT nested {parentheses:,} parentheses deep on {where}, past the limit "
        "of 64; no real geometry nests that deep, so the CSV is refused as hostile or corrupt"
    )


@pytest.mark.parametrize("parentheses", [2_001, 30_001])
def test_deeply_nested_wkt_is_refused_before_geos_reads_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, parentheses: int
) -> None:
    # Unchecked, GEOS's recursive WKT reader crashes the process at 30,000 levels, and
    # at 2,000 to_geojson takes seconds before json.loads raises RecursionError.
    load(b"id,wkt\n1,POINT (1 2)\n", label="warm.csv")  # imports pandas, Arrow's CSV

    def from_wkt(*args: object, **kwargs: object) -> None:
        raise AssertionError("shapely.from_wkt was called on the hostile WKT")

    monkeypatch.setattr(shapely, "from_wkt", from_wkt)
    raw = f'id,wkt\n1,"POINT (4.9 52.3)"\n2,"{_nested_wkt(parentheses)}"\n'.encode()
    started = time.perf_counter()
    message = _refusal(tmp_path, "deep.csv", raw)
    assert time.perf_counter() - started < 1
    assert message == _deep_message(parentheses, "line 3")


def test_wkt_nested_64_deep_is_read_and_65_deep_refused() -> None:
    notes: list[str] = []
    layer = read_csv(f'id,wkt\n1,"{_nested_wkt(64)}"\n'.encode(), "a.csv", notes)
    geometry = layer["features"][0]["geometry"]
    for _ in range(63):
        assert geometry["type"] == "GeometryCollection"
        (geometry,) = geometry["geometries"]
    assert geometry == {"type": "Point", "coordinates": [1.0, 2.0]}
    with pytest.raises(IntakeError) as caught:
        read_csv(f'id,wkt\n1,"{_nested_wkt(65)}"\n'.encode(), "a.csv", notes)
    assert str(caught.value) == f"Cannot load a.csv: {_deep_message(65)}"
    rows = "".join(f'{i},"{_nested_wkt(65 + i)}"\n' for i in range(7))
    with pytest.raises(IntakeError) as caught:
        read_csv(f"id,wkt\n{rows}".encode(), "a.csv", notes)
    assert str(caught.value).endswith(
        "nested up to 71 parentheses deep on lines 2, 3, 4, 5, 6 and 2 more, past the limit "
        "of 64; no real geometry nests that deep, so the CSV is refused as hostile or corrupt"
    )


def test_a_realistic_nested_wkt_loads() -> None:
    squares = "((0 0, 1 0, 1 1, 0 1, 0 0)), ((2 0, 3 0, 3 1, 2 1, 2 0))"
    wkt = f"GEOMETRYCOLLECTION (GEOMETRYCOLLECTION (MULTIPOLYGON ({squares})), POINT (4 5))"
    (feature,) = load(f'id,wkt\n1,"{wkt}"\n'.encode(), label="a.csv").data["features"]
    polygons, point = feature["geometry"]["geometries"]  # the inner collection flattened
    assert len(polygons["coordinates"]) == 2
    assert point == {"type": "Point", "coordinates": [4.0, 5.0]}


def test_an_unbalanced_wkt_value_does_not_deepen_the_next() -> None:
    values = ["((((", "POINT (1 2)", "))))", "POLYGON ((0 0, 1 0, 0 1, 0 0))", "", "é(é(", "x"]
    assert _wkt_depths(np.array(values, dtype=object)).tolist() == [4, 1, 0, 2, 0, 2, 0]
    # Counted across rows, line 3 would be 40 + 31 = 71 deep and refused as too deep.
    raw = f'id,wkt\n1,"{"GEOMETRYCOLLECTION (" * 40}"\n2,"{_nested_wkt(31)}"\n'.encode()
    with pytest.raises(IntakeError) as caught:
        read_csv(raw, "a.csv", [])
    assert str(caught.value) == (
        "Cannot load a.csv: 'wkt' is not valid WKT on line 2; e.g. POINT (4.89 52.37)"
    )
    raw = f'id,wkt\n1,"))))"\n2,"{_nested_wkt(65)}"\n'.encode()
    with pytest.raises(IntakeError) as caught:
        read_csv(raw, "a.csv", [])
    assert str(caught.value) == f"Cannot load a.csv: {_deep_message(65, 'line 3')}"


@pytest.mark.parametrize(
    ("name", "data", "what"),
    [
        (
            "data.gpkg",
            b"PK\x03\x04" + bytes(30),
            "named as GeoPackage but the content is a zip archive",
        ),
        ("data.kml", b"PK\x03\x04" + bytes(30), "named as KML but the content is a zip archive"),
        (
            "data.fgb",
            b"PK\x03\x04" + bytes(30),
            "named as FlatGeobuf but the content is a zip archive",
        ),
        ("data.gpkg", b'{"error": "not found"}', "named as GeoPackage but the content is JSON"),
        ("data.parquet", b'{"error": "not found"}', "named as GeoParquet but the content is JSON"),
        ("data.csv", b'{"type": "FeatureCollection"}', "named as CSV but the content is JSON"),
        ("data.csv", b"PAR1" + bytes(30), "named as CSV but the content is GeoParquet"),
        (
            "data.csv",
            b"SQLite format 3\x00" + bytes(30),
            "named as CSV but the content is GeoPackage",
        ),
    ],
)
def test_sniff_names_both_when_name_and_content_disagree(name: str, data: bytes, what: str) -> None:
    from geomint.intake.formats import sniff

    with pytest.raises(IntakeError) as caught:
        sniff(data, name=name)
    assert caught.value.problems == (f"{what}; rename the file to match what it holds",)


@pytest.mark.parametrize(
    ("name", "data", "fmt"),
    [
        ("a.zip", b"PK\x03\x04", "shapefile"),
        ("a.shz", b"PK\x03\x04", "shapefile"),
        ("a.shp.zip", b"PK\x03\x04", "shapefile"),
        ("a.kmz", b"PK\x03\x04", "kmz"),
        ("a.json", b"{}", "geojson"),
        ("a.geojsonl", b"{}", "geojsonseq"),
        ("", b"{}", "geojson"),
        ("a.kml", b'<?xml version="1.0"?><!-- a --><!DOCTYPE kml><kml xmlns="x"/>', "kml"),
        ("a.kml", b'<kml:kml xmlns:kml="http://www.opengis.net/kml/2.2">', "kml"),
    ],
)
def test_sniff_keeps_what_agrees(name: str, data: bytes, fmt: str) -> None:
    from geomint.intake.formats import sniff

    assert sniff(data, name=name) == fmt


_VRT = (
    b'<?xml version="1.0"?>\n<!-- <kml> -->\n<OGRVRTDataSource><OGRVRTLayer name="x">'
    b"<SrcDataSource>/etc/passwd</SrcDataSource></OGRVRTLayer></OGRVRTDataSource>"
)


@pytest.mark.parametrize(
    "data",
    [
        _VRT,
        b"<OGRVRTDataSource><!-- <kml> --></OGRVRTDataSource>",
        b'<?xml version="1.0"?><kmlx/><kml/>',
        b"<?xml version='1.0'?><!-- <kml> unterminated comment",
    ],
    ids=["comment-in-prolog", "comment-in-body", "kmlx-root", "unterminated-comment"],
)
def test_only_a_kml_root_element_makes_kml(tmp_path: Path, data: bytes) -> None:
    assert _refusal(tmp_path, "trap.kml", data) == (
        "this is an XML document, not KML or any geodata geomint reads; check the link or file"
    )


def _answer_lines(*features: object, report: dict[str, object] | None = None) -> bytes:
    first = {
        "ok": True,
        "data": {"type": "FeatureCollection"},
        "lines": 1,
        "report": report
        or {
            "source": "s", "format": "geojson", "source_crs": "EPSG:4326",
            "feature_count": len(features), "geometry_types": {}, "repairs": [],
            "warnings": [], "bbox": None,
        },
    }  # fmt: skip
    return json.dumps(first).encode() + b"\n" + json.dumps(list(features)).encode()


_POINT = {"type": "Feature", "properties": {}, "geometry": {"type": "Point", "coordinates": [1]}}


@pytest.mark.parametrize(
    "reply",
    [
        _answer_lines(1, "x", None),
        _answer_lines({"type": "Feature", "properties": [1], "geometry": None}),
        _answer_lines({"type": "Feature", "properties": {}, "geometry": {"type": 7}}),
        _answer_lines(_POINT, report={"feature_count": 1, "bbox": None, "geometry_types": {},
                                      "repairs": [{"kind": "r", "count": float("inf"),
                                                   "feature_indices": []}]}),
        b"[]," * 2_000_000,
        _answer_lines(_POINT)[:-1] + b"," + b"[]," * 30_000 + b"[]]",
    ],
    ids=["not-dicts", "properties-list", "geometry-type", "infinite-count", "empty-lists",
         "empty-lists-in-line"],
)  # fmt: skip
def test_a_compromised_readers_answer_is_refused_not_trusted(reply: bytes) -> None:
    """What a reader taken over through a parser bug could send: features later code
    cannot handle, numbers that overflow, or text that decodes to gigabytes."""
    with pytest.raises(IntakeError) as caught:
        _answer(reply, "x.geojson", 1024, 3)
    assert (
        str(caught.value)
        == "Cannot load x.geojson: the reader's answer was malformed; the file is refused"
    )


def test_an_honest_answer_is_accepted() -> None:
    data, report = _answer(_answer_lines(_POINT, _POINT), "x.geojson", 1024, 3)
    assert data["features"] == [_POINT, _POINT] and report.feature_count == 2


def test_a_fifo_swapped_in_after_sizing_is_refused_without_blocking(tmp_path: Path) -> None:
    from geomint.intake._confined import _descriptor

    fifo = tmp_path / "swapped.geojson"
    os.mkfifo(fifo)
    with pytest.raises(IntakeError, match="not a regular file"):
        _descriptor(fifo)  # opened O_NONBLOCK: returns at once instead of waiting for a writer
