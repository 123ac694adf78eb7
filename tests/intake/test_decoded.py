"""A source that is small as sent but large as GeoJSON is refused whole, with the sizes.

``max_bytes`` bounds what is sent; the decoded GeoJSON may be 20 times that
(:mod:`geomint.intake._decoded`). Each format that compresses inside itself is measured:
GeoParquet from its footer and from what its reader writes, a GDAL format from what its
reader writes, a CSV before a feature is built, and the reader's answer again in the
application before it is parsed.
"""

from __future__ import annotations

import io
from pathlib import Path

import geopandas as gpd
import numpy as np
import pytest
import shapely

from geomint.intake import IntakeError, _pipeline, load
from geomint.intake._decoded import EXPANSION, table_bytes
from geomint.intake._pipeline import Converted

ADVICE = "pass a larger max_bytes if that is expected, or send fewer rows or columns"


def _parquet(frame: gpd.GeoDataFrame) -> bytes:
    buffer = io.BytesIO()
    frame.to_parquet(buffer, compression="zstd")
    return buffer.getvalue()


def _refusal(source: bytes | Path, label: str, max_bytes: int) -> str:
    with pytest.raises(IntakeError) as caught:
        load(source, label=label, max_bytes=max_bytes)
    (problem,) = caught.value.problems
    assert str(caught.value) == f"Cannot load {label}: {problem}"
    return problem


def _limit(max_bytes: int) -> str:
    return f"over the {EXPANSION * max_bytes:,}-byte limit for decoded data (20 x max_bytes); "


def test_a_parquet_dictionary_that_decodes_past_the_limit_is_refused() -> None:
    """One 20,000-character value shared by 200 rows: a few kB sent, 4 MB as GeoJSON.

    The footer counts the shared value once, so this is caught in what the reader writes.
    """
    frame = gpd.GeoDataFrame(
        {"note": ["x" * 20_000] * 200}, geometry=[shapely.Point(24.94, 60.17)] * 200, crs=4326
    )
    data = _parquet(frame)
    assert len(data) < 10_000
    problem = _refusal(data, "notes.parquet", max_bytes=200_000)
    assert problem == (
        "the GeoParquet file (200 features) decodes to about 4,021,804 bytes of GeoJSON, "
        + _limit(200_000)
        + ADVICE
    )


def test_a_parquet_of_millions_of_empty_rows_is_refused_from_its_footer() -> None:
    rows = 500_000
    frame = gpd.GeoDataFrame({"k": np.zeros(rows, dtype="int8")}, geometry=[None] * rows, crs=4326)
    data = _parquet(frame)
    problem = _refusal(data, "rows.parquet", max_bytes=len(data))
    assert problem.startswith("the GeoParquet file (500,000 rows, ")
    assert "bytes uncompressed) decodes to at least 25," in problem
    assert problem.endswith(_limit(len(data)) + ADVICE)


def test_a_parquet_page_that_decompresses_past_the_limit_is_refused_from_its_footer() -> None:
    frame = gpd.GeoDataFrame({"text": ["y" * 5_000_000]}, geometry=[shapely.Point(0, 0)], crs=4326)
    problem = _refusal(_parquet(frame), "page.parquet", max_bytes=50_000)
    assert problem.startswith("the GeoParquet file (1 row, 5,000,")
    assert _limit(50_000) in problem


def test_a_modest_compressed_parquet_is_accepted_at_its_own_size() -> None:
    """10,000 points with four columns, sent with max_bytes no larger than the file."""
    rng = np.random.default_rng(3)
    count = 10_000
    kinds = np.array(["cafe", "school", "park", "stop"])
    frame = gpd.GeoDataFrame(
        {
            "name": [f"place {i}" for i in range(count)],
            "kind": kinds[rng.integers(0, kinds.size, count)],
            "rating": rng.uniform(1, 5, count).round(1),
            "open": rng.integers(0, 2, count).astype(bool),
        },
        geometry=shapely.points(rng.uniform(13, 14, count), rng.uniform(52, 53, count)),
        crs=4326,
    )
    data = _parquet(frame)
    assert load(data, label="places.parquet").report.feature_count == count
    layer = load(data, label="places.parquet", max_bytes=len(data))
    assert layer.report.feature_count == count
    assert layer.data["features"][7]["properties"]["name"] == "place 7"


def test_a_geopackage_of_empty_columns_that_decodes_past_the_limit_is_refused(
    tmp_path: Path,
) -> None:
    """SQLite stores a null in a byte; GeoJSON writes the column's name for each one."""
    names = [f"a_rather_long_and_descriptive_column_name_{i:03d}" for i in range(200)]
    frame = gpd.GeoDataFrame(
        {name: [None] * 1_000 for name in names},
        geometry=[shapely.Point(4.9, 52.4)] * 1_000,
        crs=4326,
    ).astype({name: "string" for name in names})
    path = tmp_path / "wide.gpkg"
    frame.to_file(path)
    size = path.stat().st_size
    problem = _refusal(path, "wide.gpkg", max_bytes=size)
    assert problem.startswith("the GeoPackage (1,000 features) decodes to about 10,")
    assert problem.endswith(_limit(size) + ADVICE)


def test_a_wide_csv_that_decodes_past_the_limit_is_refused() -> None:
    """A CSV names its columns once; GeoJSON names them in every feature."""
    names = [f"a_rather_long_and_descriptive_column_name_{i:03d}" for i in range(100)]
    header = ",".join(["lon", "lat", *names])
    data = (header + "\n").encode() + ("4.9,52.4" + "," * 100 + "\n").encode() * 300
    problem = _refusal(data, "wide.csv", max_bytes=len(data))
    assert problem.startswith("the CSV (300 rows) decodes to about 1,")
    assert problem.endswith(_limit(len(data)) + ADVICE)


def test_an_ordinary_csv_is_accepted_at_its_own_size() -> None:
    rows = "".join(f"{i},place {i},52.{i},4.{i}\n" for i in range(5_000))
    data = ("id,name,lat,lon\n" + rows).encode()
    assert load(data, label="places.csv", max_bytes=len(data)).report.feature_count == 5_000


def test_a_wide_wkt_csv_that_decodes_past_the_limit_is_refused() -> None:
    names = [f"a_rather_long_and_descriptive_column_name_{i:03d}" for i in range(100)]
    row = ('"LINESTRING (4.9 52.4, 5.1 52.1)"' + "," * 100 + "\n").encode()
    data = (",".join(["wkt", *names]) + "\n").encode() + row * 300
    problem = _refusal(data, "wide.csv", max_bytes=len(data))
    assert problem.startswith("the CSV (300 rows) decodes to about 1,")
    assert problem.endswith(_limit(len(data)) + ADVICE)


def test_the_readers_answer_is_measured_again_before_it_is_parsed(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """The binary reader's parts are measured before they are parsed (in the child)."""
    answer = Converted(
        columns=["note"],
        float_columns=[],
        rows=b'[["' + b"x" * 3_000_000 + b'"]]',
        floats=b"[]",
        geometries=b"[null]",
        crs=None,
        layers=(),
        notes=(),
    )
    monkeypatch.setattr(_pipeline, "_convert", lambda *args: answer)
    with pytest.raises(IntakeError) as caught:
        _pipeline.judge(
            b"PAR1" + bytes(100), "geoparquet", "a.parquet", max_bytes=100_000, layer=None,
            scratch=tmp_path,
        )  # fmt: skip
    (problem,) = caught.value.problems
    assert problem == (
        "the GeoParquet layer decodes to about 3,000,014 bytes of GeoJSON, "
        + _limit(100_000)
        + ADVICE
    )


def test_table_bytes_counts_each_key_once_per_feature() -> None:
    # '{"type":"Feature","properties":{},"geometry":null},' is 51 bytes; '"a":' and ',' 5.
    assert table_bytes(100, 10, ["a"]) == 100 + 10 * (51 + 5)
    assert table_bytes(0, 3, []) == 3 * 51
