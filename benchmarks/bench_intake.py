"""Measure geomint.intake.load on every format, on the same layer.

Run: ``.venv/bin/python benchmarks/bench_intake.py [--features 100000]``. Writes the layer
(points over Berlin with four properties, plus 2,000 polygons of 24 vertices) in each
format under a temporary folder, loads each file three times and prints the best time.
Also times a local HTTP download and the fixed cost of the confined reader (a one-feature
GeoPackage). Prints a Markdown table for docs/performance.md.
"""

from __future__ import annotations

import argparse
import gc
import json
import platform
import tempfile
import threading
import time
import zipfile
from functools import partial
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import geopandas as gpd
import numpy as np
import pandas as pd
import shapely

from geomint.intake import load

rows: list[tuple[str, str, str]] = []


def _row(what: str, value: str, note: str = "") -> None:
    rows.append((what, value, note))
    print(f"{what:<52} {value:>22}  {note}", flush=True)


def make_frame(n: int) -> gpd.GeoDataFrame:
    rng = np.random.default_rng(5)
    xy = np.column_stack([rng.uniform(13.0, 13.8, n), rng.uniform(52.3, 52.7, n)])
    kinds = np.array(["cafe", "school", "park", "stop", "shop"])
    return gpd.GeoDataFrame(
        {
            "name": [f"place {i}" for i in range(n)],
            "kind": kinds[rng.integers(0, kinds.size, n)],
            "rating": rng.uniform(1, 5, n).round(2),
            "visits": rng.integers(0, 10_000, n),
        },
        geometry=shapely.points(xy),
        crs=4326,
    )


def make_polygons(n: int) -> gpd.GeoDataFrame:
    rng = np.random.default_rng(6)
    angles = np.linspace(0, 2 * np.pi, 24, endpoint=False)
    shapes = []
    for x, y in zip(rng.uniform(13.0, 13.8, n), rng.uniform(52.3, 52.7, n), strict=True):
        r = rng.uniform(0.002, 0.006, angles.size)
        ring = np.column_stack([x + r * np.cos(angles), y + r * np.sin(angles)])
        shapes.append(shapely.Polygon(ring))
    return gpd.GeoDataFrame({"zone": np.arange(n)}, geometry=shapes, crs=4326)


def write_all(frame: gpd.GeoDataFrame, folder: Path) -> dict[str, Path]:
    files = {
        "GeoJSON": folder / "layer.geojson",
        "GeoJSON lines": folder / "layer.geojsonl",
        "CSV (lon/lat)": folder / "layer.csv",
        "GeoParquet": folder / "layer.parquet",
        "GeoPackage": folder / "layer.gpkg",
        "GeoPackage (EPSG:3857, reprojected)": folder / "mercator.gpkg",
        "FlatGeobuf": folder / "layer.fgb",
        "zipped Shapefile": folder / "layer.zip",
        "KML": folder / "layer.kml",
    }
    files["GeoJSON"].write_text(frame.to_json(), encoding="utf-8")
    with files["GeoJSON lines"].open("w", encoding="utf-8") as handle:
        for feature in json.loads(frame.to_json())["features"]:
            handle.write(json.dumps(feature) + "\n")
    table = pd.DataFrame(frame.drop(columns="geometry"))
    table["lon"], table["lat"] = frame.geometry.x, frame.geometry.y
    table.to_csv(files["CSV (lon/lat)"], index=False)
    frame.to_parquet(files["GeoParquet"])
    frame.to_file(files["GeoPackage"])
    frame.to_crs(3857).to_file(files["GeoPackage (EPSG:3857, reprojected)"])
    frame.to_file(files["FlatGeobuf"])
    shp = folder / "shp"
    shp.mkdir()
    frame.to_file(shp / "layer.shp")
    with zipfile.ZipFile(files["zipped Shapefile"], "w", zipfile.ZIP_DEFLATED) as archive:
        for part in shp.iterdir():
            archive.write(part, part.name)
    frame[["name", "geometry"]].to_file(files["KML"], driver="LIBKML")
    return files


def timed(source: Any, runs: int = 3, **kwargs: Any) -> tuple[float, int]:
    best, count = float("inf"), 0
    for _ in range(runs):
        gc.collect()
        started = time.perf_counter()
        layer = load(source, max_bytes=500_000_000, timeout_s=120, **kwargs)
        best = min(best, time.perf_counter() - started)
        count = layer.report.feature_count
        del layer
    return best * 1000, count


def serve(folder: Path) -> tuple[ThreadingHTTPServer, str]:
    handler = partial(SimpleHTTPRequestHandler, directory=str(folder))
    handler.log_message = lambda *a: None  # type: ignore[attr-defined, method-assign]
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    return httpd, f"http://127.0.0.1:{httpd.server_address[1]}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--features", type=int, default=100_000)
    args = parser.parse_args()
    print(f"# {platform.platform()}, Python {platform.python_version()}")
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        frame = make_frame(args.features)
        files = write_all(frame, folder)
        tiny = folder / "tiny.gpkg"
        frame.iloc[:1].to_file(tiny)
        _row("confined reader fixed cost (1-feature GeoPackage)", f"{timed(tiny)[0]:,.0f} ms")
        for name, path in files.items():
            ms, count = timed(path)
            _row(
                f"{name}, {count:,} points", f"{ms:,.0f} ms", f"{path.stat().st_size / 1e6:,.1f} MB"
            )
        polygons = folder / "polygons.gpkg"
        make_polygons(2_000).to_file(polygons)
        _row("GeoPackage, 2,000 polygons of 24 vertices", f"{timed(polygons)[0]:,.0f} ms")
        _row(f"GeoDataFrame in memory, {len(frame):,} points", f"{timed(frame)[0]:,.0f} ms")
        httpd, base = serve(folder)
        try:
            ms, count = timed(f"{base}/layer.geojson", allowed_networks=("127.0.0.1/32",))
            _row(f"GeoJSON over loopback HTTP, {count:,} points", f"{ms:,.0f} ms")
        finally:
            httpd.shutdown()
            httpd.server_close()
    print("\n| What | Measured | Note |\n|---|---|---|")
    for what, value, note in rows:
        print(f"| {what} | {value} | {note} |")


if __name__ == "__main__":
    main()
