"""Zonal statistics of a 10,000 x 10,000 raster over 1,000 polygons, beside rasterstats.

Run: ``.venv/bin/python -m benchmarks.bench_rasters [--size 10000] [--zones 1000]``.

Both read the same float32 array (with a block of nodata) and the same polygons: circles
of 20 to 150 cells' radius scattered over the grid, in a metric CRS. geomint's
``zonal_stats`` (exactextract) weights each cell by the fraction of it a polygon covers;
rasterstats counts the cells whose centres fall inside. Times are the median of three runs
after one warm-up, wall clock, in this process (the sandbox adds only the call's own
overhead, the raster being mapped without a copy). The sums are compared to say how far
the two methods' answers are apart, not which is right: the coverage-weighted one is.
"""

from __future__ import annotations

import argparse
import statistics
import time
from typing import Any

import numpy as np


def _polygons(size: int, count: int) -> list[Any]:
    import shapely

    rng = np.random.default_rng(1)
    margin = 200
    xs = rng.uniform(margin, size - margin, count)
    ys = rng.uniform(margin, size - margin, count)
    radii = rng.uniform(20, 150, count)
    return [shapely.Point(x, y).buffer(r) for x, y, r in zip(xs, ys, radii, strict=True)]


def _timed(function: Any, runs: int = 3) -> tuple[float, Any]:
    function()
    times, result = [], None
    for _ in range(runs):
        started = time.perf_counter()
        result = function()
        times.append(time.perf_counter() - started)
    return statistics.median(times), result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--size", type=int, default=10_000)
    parser.add_argument("--zones", type=int, default=1_000)
    args = parser.parse_args()
    import geopandas as gpd
    from affine import Affine
    from rasterstats import zonal_stats as rs_zonal_stats

    from geomint.geo.raster import Raster, zonal_stats

    size = args.size
    array = np.random.default_rng(0).random((size, size), dtype=np.float32)
    array[:500, :500] = -9999
    raster = Raster(array, (1, 0, 0, 0, -1, size), "EPSG:3067", nodata=-9999)
    polygons = _polygons(size, args.zones)
    zones = gpd.GeoDataFrame(geometry=polygons, crs=3067)
    stats = ["sum", "mean", "count", "min", "max"]
    ours, rows = _timed(lambda: zonal_stats(raster, zones, stats))
    theirs, reference = _timed(
        lambda: rs_zonal_stats(
            polygons, array, affine=Affine(1, 0, 0, 0, -1, size), nodata=-9999, stats=stats
        )
    )
    ours_sum = sum(r["sum"] or 0 for r in rows)
    their_sum = sum(r["sum"] or 0 for r in reference)
    print(f"raster {size:,} x {size:,} float32, {args.zones:,} polygons, stats {stats}")
    print(f"geomint zonal_stats (exactextract, coverage-weighted): {ours:.2f} s")
    print(f"rasterstats (cell centres):                          {theirs:.2f} s")
    print(f"sum over all zones: {ours_sum:,.1f} vs {their_sum:,.1f} "
          f"({(ours_sum - their_sum) / their_sum:+.3%})")  # fmt: skip


if __name__ == "__main__":
    main()
