"""GeoTIFF through intake: read in the confined child, the declared size held to the
limits before a cell is decoded, damaged files refused with a reason."""

from __future__ import annotations

import math
import time

import numpy as np
import pytest
from rasterio.io import MemoryFile
from rasterio.transform import from_origin

from geomint.intake import IntakeError, is_tiff, load, load_raster
from geomint.intake._raster import MAX_CELLS


def geotiff(array: np.ndarray, **profile: object) -> bytes:
    bands = 1 if array.ndim == 2 else array.shape[0]
    options: dict[str, object] = {
        "driver": "GTiff", "width": array.shape[-1], "height": array.shape[-2],
        "count": bands, "dtype": array.dtype.name, "crs": "EPSG:3067",
        "transform": from_origin(385_000, 6_673_000, 100, 100), "nodata": -1, **profile,
    }  # fmt: skip
    with MemoryFile() as memory:
        with memory.open(**options) as dataset:
            dataset.write(array if array.ndim == 3 else array[np.newaxis])
        return bytes(memory.read())


def test_cells_grid_and_nodata_come_back_as_written() -> None:
    array = np.arange(12, dtype="int16").reshape(3, 4)
    array[1, 1] = -1
    loaded = load_raster(geotiff(array), label="small.tif")
    raster = loaded.raster
    assert raster.array.tolist() == array.tolist()
    assert raster.transform == (100.0, 0.0, 385_000.0, 0.0, -100.0, 6_673_000.0)
    assert raster.crs == "EPSG:3067"
    assert raster.nodata == -1
    assert loaded.file["bands_in_file"] == 1


def test_a_tiled_deflated_multiband_float_raster_with_nan_nodata() -> None:
    array = np.random.default_rng(1).random((3, 300, 260)).astype("float32")
    array[0, :10, :10] = np.nan
    data = geotiff(array, nodata=math.nan, tiled=True, blockxsize=256, blockysize=256,
                   compress="deflate")  # fmt: skip
    raster = load_raster(data, label="bands.tif").raster
    assert raster.bands == 3 and raster.shape == (300, 260)
    assert raster.nodata is not None and math.isnan(raster.nodata)
    np.testing.assert_array_equal(raster.array, array)


def test_a_small_file_declaring_a_huge_raster_is_refused_before_decoding() -> None:
    # A compressed bomb: 200,000 x 200,000 deflated empty tiles is about a megabyte.
    with MemoryFile() as memory:
        with memory.open(driver="GTiff", width=200_000, height=200_000, count=1,
                         dtype="float32", crs="EPSG:4326", tiled=True, compress="deflate",
                         sparse_ok=True, transform=from_origin(0, 10, 1e-4, 1e-4)):  # fmt: skip
            pass
        bomb = bytes(memory.read())
    assert len(bomb) < 10_000_000
    started = time.monotonic()
    with pytest.raises(IntakeError) as refused:
        load_raster(bomb, label="bomb.tif")
    assert time.monotonic() - started < 20
    (problem,) = refused.value.problems
    assert "200,000 x 200,000" in problem and f"{MAX_CELLS:,} cells" in problem


def test_a_corrupt_tile_is_refused_with_what_gdal_said() -> None:
    array = np.random.default_rng(2).random((512, 512)).astype("float32")
    data = bytearray(geotiff(array, tiled=True, blockxsize=256, blockysize=256,
                             compress="deflate"))  # fmt: skip
    middle = len(data) // 2  # inside the tiles' deflated bytes; the header is at the start
    data[middle : middle + 4096] = b"\xff" * 4096
    with pytest.raises(IntakeError) as refused:
        load_raster(bytes(data), label="broken.tif")
    assert "broken.tif could not be read as a GeoTIFF" in refused.value.problems[0]
    assert "/vsimem/" not in refused.value.problems[0]


def test_garbage_after_the_magic_and_a_raster_without_crs_are_refused() -> None:
    with pytest.raises(IntakeError, match="could not be read as a GeoTIFF"):
        load_raster(b"II*\x00" + b"\x07" * 400, label="g.tif")
    with pytest.raises(IntakeError, match="no coordinate reference system"):
        load_raster(geotiff(np.ones((2, 2), "uint8"), crs=None, nodata=None), label="n.tif")


def test_not_a_tiff_and_the_vector_path_point_to_each_other() -> None:
    assert is_tiff(b"MM\x00*rest") and not is_tiff(b"PK\x03\x04")
    with pytest.raises(IntakeError, match="not a GeoTIFF"):
        load_raster(b'{"type": "FeatureCollection"}', label="x.tif")
    with pytest.raises(IntakeError, match="read as a raster"):
        load(geotiff(np.ones((2, 2), "uint8"), nodata=0), label="x.tif")


def test_a_child_answer_nesting_too_deep_is_malformed_not_a_crash() -> None:
    import struct

    from geomint.intake._raster import decode_answer

    deep = b"[" * 200_000
    with pytest.raises(ValueError, match="nests too deep"):
        decode_answer(b"GMR1" + struct.pack("<I", len(deep)) + deep)
