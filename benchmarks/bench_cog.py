"""A 1 km² window of a 1 GB Cloud-Optimised GeoTIFF, read end to end through the STAC connector.

Run: ``.venv/bin/python -m benchmarks.bench_cog [--reads 20] [--size 16000]``.

The file is 16,000 x 16,000 float32 cells of 10 m in EPSG:3067 (160 km a side around
Helsinki), deflate-compressed in 512-cell tiles with overviews, values random so that it
weighs about 1 GB; it is written once to the temporary folder and reused. A
:class:`geomint.testing.RecordedServer` on 127.0.0.1 serves it with Range support, beside
a STAC collection and a search answering one item whose asset is that file.

Each read is ``StacConnector().fetch`` of a 1 km² bbox (100 x 100 cells at 10 m, about
106 x 106 once the bbox is drawn in degrees and put back in the file's CRS) at a random
place: the collection and the search (two requests), the file's first block (kept for
five minutes after the first read), the window's tiles by Range, and the decode in a
confined child forked from the raster reader's template, which has no network and asks
this process for each range. Reported: the cold first read (the template starts), the
first read of the file with the template up (its first block fetched), and the median
and p90 of ``--reads`` reads after one warm-up; and the same reads decoded in process
(no confinement), to show what confinement costs. Prints JSON.
"""

from __future__ import annotations

import argparse
import json
import math
import statistics
import struct
import tempfile
import time
from importlib import resources
from pathlib import Path
from typing import Any

import numpy as np

from geomint.http import RequestPolicy
from geomint.sources.connectors import _cog_child, _confined_cog
from geomint.sources.connectors.base import Grid, Request
from geomint.sources.connectors.stac import StacConnector
from geomint.sources.model import Source
from geomint.testing import RecordedServer

_NAME = "geomint-bench-cog-{size}.tif"
_ORIGIN = (300_000.0, 6_760_000.0)  # EPSG:3067: west of Helsinki, north of it
_CELL = 10.0


def _make(path: Path, size: int) -> None:
    """Write the COG: a tiled GeoTIFF block by block, then copied to the COG layout."""
    import rasterio
    from affine import Affine
    from rasterio.shutil import copy as gdal_copy
    from rasterio.windows import Window

    staging = path.with_suffix(".staging.tif")
    profile = {
        "driver": "GTiff",
        "width": size,
        "height": size,
        "count": 1,
        "dtype": "float32",
        "crs": "EPSG:3067",
        "transform": Affine(_CELL, 0, _ORIGIN[0], 0, -_CELL, _ORIGIN[1]),
        "nodata": -9999.0,
        "tiled": True,
        "blockxsize": 512,
        "blockysize": 512,
        "compress": "deflate",
        "zlevel": 1,
        "bigtiff": "YES",
    }
    rng = np.random.default_rng(21)
    with rasterio.open(staging, "w", **profile) as dataset:
        for row in range(0, size, 2048):
            rows = min(2048, size - row)
            band = (rng.random((rows, size), dtype=np.float32) * 300).astype("float32")
            dataset.write(band, 1, window=Window(0, row, size, rows))
    gdal_copy(
        staging,
        path,
        driver="COG",
        compress="DEFLATE",
        level=1,
        blocksize=512,
        overview_resampling="average",
        bigtiff="YES",
        num_threads="ALL_CPUS",
    )
    staging.unlink()


def _cog(size: int) -> Path:
    path = Path(tempfile.gettempdir()) / _NAME.format(size=size)
    if not path.exists():
        print(f"writing {path} (once; it is reused)...", flush=True)
        started = time.perf_counter()
        _make(path, size)
        print(f"  {path.stat().st_size / 1e9:.2f} GB in {time.perf_counter() - started:.0f} s")
    return path


def _source(base_url: str) -> Source:
    rows = json.loads(
        (resources.files("geomint.sources") / "catalogue" / "live.json").read_text("utf-8")
    )
    row = next(r for r in rows if r["id"] == "copernicus-dem-glo-30")
    row["config"] = {**row["config"], "api_url": base_url, "collection": "bench"}
    return Source.model_validate(row)


def _serve(server: RecordedServer, path: Path, size: int) -> None:
    import pyproj

    to_degrees = pyproj.Transformer.from_crs("EPSG:3067", "EPSG:4326", always_xy=True)
    extent = (_ORIGIN[0], _ORIGIN[1] - size * _CELL, _ORIGIN[0] + size * _CELL, _ORIGIN[1])
    bbox = list(to_degrees.transform_bounds(*extent))
    item = {
        "type": "Feature",
        "stac_version": "1.0.0",
        "id": "bench-item",
        "collection": "bench",
        "bbox": bbox,
        "geometry": {
            "type": "Polygon",
            "coordinates": [
                [
                    [bbox[0], bbox[1]],
                    [bbox[2], bbox[1]],
                    [bbox[2], bbox[3]],
                    [bbox[0], bbox[3]],
                    [bbox[0], bbox[1]],
                ]
            ],
        },
        "properties": {"datetime": "2026-01-01T00:00:00Z", "proj:epsg": 3067},
        "links": [],
        "assets": {
            "data": {
                "href": f"{server.base_url}/files/{path.name}",
                "type": "image/tiff; application=geotiff; profile=cloud-optimized",
                "roles": ["data"],
            }
        },
    }
    search = {"type": "FeatureCollection", "features": [item], "links": [], "numberMatched": 1}
    collection = {
        "type": "Collection",
        "id": "bench",
        "license": "CC-BY-4.0",
        "providers": [{"name": "geomint", "roles": ["producer"]}],
    }
    server.add("GET", "/collections/bench", body=json.dumps(collection))
    server.add("POST", "/search", body=json.dumps(search), content_type="application/geo+json")
    server.add("GET", f"/files/{path.name}", file=path.name, content_type="image/tiff", ranges=True)


def _bboxes(count: int, size: int) -> list[str]:
    """1 km² squares at random places well inside the file, as bbox filters in degrees."""
    import pyproj

    to_degrees = pyproj.Transformer.from_crs("EPSG:3067", "EPSG:4326", always_xy=True)
    rng = np.random.default_rng(5)
    span = size * _CELL
    boxes = []
    for _ in range(count):
        x = _ORIGIN[0] + rng.uniform(0.1, 0.9) * span
        y = _ORIGIN[1] - rng.uniform(0.1, 0.9) * span
        lon, lat = to_degrees.transform(x, y)
        # 1 km in degrees at this latitude: the square's centre is (lon, lat)
        half_lat = 500 / 111_320
        half_lon = 500 / (111_320 * math.cos(math.radians(lat)))
        boxes.append(f"{lon - half_lon},{lat - half_lat},{lon + half_lon},{lat + half_lat}")
    return boxes


def _in_process(payload: bytes, answer: Any, timeout_s: float) -> bytes:
    """The child's read run in this process, over the same questions (no confinement)."""
    (length,) = struct.unpack_from("<I", payload)
    request = json.loads(payload[4 : 4 + length])

    def ask(ranges: Any) -> list[bytes]:
        reply = answer(b"".join(struct.pack("<QQ", offset, size) for offset, size in ranges))
        parts, at = [], 0
        for _, size in ranges:
            parts.append(reply[at : at + size])
            at += size
        return parts

    return _cog_child.answer(request, payload[4 + length :], ask)


def _read(connector: StacConnector, source: Source, bbox: str) -> tuple[float, Grid]:
    policy = RequestPolicy(timeout_s=30.0, max_attempts=1)
    started = time.perf_counter()
    grid = connector.fetch(Request(source=source, options={"bbox": bbox}, policy=policy))
    elapsed = (time.perf_counter() - started) * 1000
    assert isinstance(grid, Grid)
    return elapsed, grid


def _summary(times: list[float]) -> dict[str, float]:
    ordered = sorted(times)
    return {
        "median_ms": round(statistics.median(ordered), 1),
        "p90_ms": round(ordered[max(0, math.ceil(len(ordered) * 0.9) - 1)], 1),
        "min_ms": round(ordered[0], 1),
        "max_ms": round(ordered[-1], 1),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--reads", type=int, default=20)
    parser.add_argument("--size", type=int, default=16_000)
    args = parser.parse_args()
    path = _cog(args.size)
    boxes = _bboxes(args.reads + 3, args.size)
    out: dict[str, Any] = {"file_bytes": path.stat().st_size, "cells": f"{args.size}²"}
    with RecordedServer(path.parent) as server:
        _serve(server, path, args.size)
        source = _source(server.base_url)
        confined = StacConnector()
        cold, grid = _read(confined, source, boxes[0])
        out["cold_first_read_ms (template starts)"] = round(cold, 1)
        _confined_cog._HEADS.drop(grid.url)
        first, grid = _read(confined, source, boxes[1])
        out["first_read_of_the_file_ms (template up, first block fetched)"] = round(first, 1)
        out["window"] = list(grid.raster.shape)
        out["notes"] = list(grid.notes)
        _read(confined, source, boxes[2])  # warm-up
        times = [_read(confined, source, bbox)[0] for bbox in boxes[3:]]
        out["confined"] = _summary(times)
        in_process = StacConnector(reader=_in_process)
        _read(in_process, source, boxes[2])
        out["in_process (no confinement, for comparison)"] = _summary(
            [_read(in_process, source, bbox)[0] for bbox in boxes[3:]]
        )
    print(json.dumps(out, indent=2))


if __name__ == "__main__":
    main()
