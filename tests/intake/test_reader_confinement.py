"""The reader child opens a user's file only with the driver its format names."""

from __future__ import annotations

import io
import zipfile
from pathlib import Path

import pytest

from geomint.intake import IntakeError, load


def _vrt(secret: Path) -> bytes:
    # A GDAL virtual layer that reads a local CSV file, with '<kml>' in a comment so that
    # anything looking for the string would take it for KML.
    return f"""<OGRVRTDataSource><!-- <kml> -->
  <OGRVRTLayer name="leak">
    <SrcDataSource>CSV:{secret}</SrcDataSource>
    <SrcSQL dialect="SQLITE">SELECT *, 'POINT (4.9 52.1)' AS wkt FROM "secret"</SrcSQL>
    <GeometryType>wkbPoint</GeometryType>
    <LayerSRS>EPSG:4326</LayerSRS>
    <GeometryField encoding="WKT" field="wkt"/>
  </OGRVRTLayer>
</OGRVRTDataSource>""".encode()


@pytest.fixture
def secret(tmp_path: Path) -> Path:
    path = tmp_path / "secret.csv"
    path.write_text("name,value\nAPI_KEY,hunter2\n")
    return path


@pytest.mark.parametrize("label", ["upload.kml", None])
def test_a_vrt_posing_as_kml_reads_nothing(secret: Path, label: str | None) -> None:
    with pytest.raises(IntakeError) as caught:
        load(_vrt(secret), label=label)
    assert "hunter2" not in str(caught.value)


def test_a_vrt_inside_a_kmz_reads_nothing(secret: Path) -> None:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr("doc.kml", _vrt(secret))
    with pytest.raises(IntakeError) as caught:
        load(buffer.getvalue(), label="upload.kmz")
    assert "hunter2" not in str(caught.value)


def test_only_the_intake_drivers_are_registered_in_the_child() -> None:
    import subprocess
    import sys

    from geomint.confine import worker_environment
    from geomint.intake._confined import _ENVIRONMENT

    probe = "from geomint.intake._convert import restrict_drivers; print(restrict_drivers())"
    env = {**worker_environment(), **_ENVIRONMENT}
    done = subprocess.run(
        [sys.executable, "-I", "-c", probe], env=env, capture_output=True, check=True
    )
    assert done.stdout.decode().strip() == (
        "drivers: ESRI Shapefile, FlatGeobuf, GPKG, KML, LIBKML"
    )


def test_a_pipe_is_refused_not_read_without_bound(tmp_path: Path) -> None:
    import os

    fifo = tmp_path / "feed.geojson"
    os.mkfifo(fifo)
    with pytest.raises(IntakeError, match="not a regular file"):
        load(fifo, max_bytes=1000)
    with pytest.raises(IntakeError, match="not a regular file"):
        load(tmp_path, max_bytes=1000)


def test_waiting_for_a_busy_reader_counts_against_timeout_s(tmp_path: Path) -> None:
    import time

    import geopandas as gpd
    import shapely

    from geomint.intake import _confined

    path = tmp_path / "towns.gpkg"
    gpd.GeoDataFrame({"n": [1]}, geometry=[shapely.Point(4.9, 52.4)], crs=4326).to_file(path)
    for _ in range(_confined.MAX_CHILDREN):  # other files are being read
        _confined._READER.turn(1)
    try:
        started = time.perf_counter()
        with pytest.raises(IntakeError, match="the reader was busy with other files"):
            load(path, timeout_s=0.5)
        assert time.perf_counter() - started < 2
    finally:
        for _ in range(_confined.MAX_CHILDREN):
            _confined._READER.done()
    assert load(path).report.feature_count == 1


def test_a_zip_of_thousands_of_files_is_refused(tmp_path: Path) -> None:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for i in range(1_001):
            archive.writestr(f"part{i}.dbf", b"")
    with pytest.raises(IntakeError, match="holds 1,001 files, more than the 1,000"):
        load(buffer.getvalue(), label="many.zip")
