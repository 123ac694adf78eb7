"""Measure geomint.geo against its targets, and against Turf.js on the same data.

Run: ``.venv/bin/python benchmarks/bench_geo.py [--points 1000000] [--polygons 1000]``.
The Turf.js side needs ``npm ci --prefix benchmarks/turf`` once (Node.js 20 or newer);
without it that row says how to get it. Prints a Markdown table for docs/performance.md.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np
import shapely

from geomint import geo

TURF_DIR = Path(__file__).parent / "turf"
rows: list[tuple[str, str, str]] = []


def _row(what: str, value: str, note: str = "") -> None:
    rows.append((what, value, note))
    print(f"{what:<62} {value:>16}  {note}", flush=True)


def make_data(n_points: int, n_polygons: int) -> tuple[np.ndarray, list[Any]]:
    """Points over Berlin and irregular 24-gons (about 1 km across) scattered among them."""
    rng = np.random.default_rng(11)
    points = np.column_stack([rng.uniform(13.0, 13.8, n_points), rng.uniform(52.3, 52.7, n_points)])
    centres = np.column_stack(
        [rng.uniform(13.0, 13.8, n_polygons), rng.uniform(52.3, 52.7, n_polygons)]
    )
    angles = np.linspace(0, 2 * np.pi, 24, endpoint=False)
    polygons = []
    for x, y in centres:
        radius = rng.uniform(0.003, 0.01, angles.size)
        ring = np.column_stack([x + radius * np.cos(angles) * 1.6, y + radius * np.sin(angles)])
        polygons.append(shapely.Polygon(ring))
    return points, polygons


def best_of(runs: int, fn: Any) -> tuple[float, Any]:
    best, result = float("inf"), None
    for _ in range(runs):
        started = time.perf_counter()
        result = fn()
        best = min(best, time.perf_counter() - started)
    return best * 1000, result


def turf_points_within(points: np.ndarray, polygons: list[Any]) -> tuple[float, int] | None:
    node = shutil.which("node")
    if node is None or not (TURF_DIR / "node_modules" / "@turf" / "turf").is_dir():
        return None
    data = {
        "points": points.tolist(),
        "polygons": [shapely.geometry.mapping(p)["coordinates"] for p in polygons],
    }
    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as handle:
        json.dump(data, handle)
    try:
        out = subprocess.run(
            [node, "--max-old-space-size=8192", str(TURF_DIR / "points_within.mjs"), handle.name],
            check=True, capture_output=True, text=True, cwd=TURF_DIR,
        )  # fmt: skip
    finally:
        os.unlink(handle.name)
    result = json.loads(out.stdout)
    return float(result["ms"]), int(result["count"])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--points", type=int, default=1_000_000)
    parser.add_argument("--polygons", type=int, default=1_000)
    args = parser.parse_args()
    print(
        f"# {platform.machine()} {os.cpu_count()} cores, Python {platform.python_version()}, "
        f"{time.strftime('%Y-%m-%d')}"
    )
    points, polygons = make_data(args.points, args.polygons)
    label = f"{args.points:,} points in {args.polygons:,} polygons"

    ms, matches = best_of(3, lambda: geo.points_within(points, polygons))
    inside = np.unique(matches.points).size  # Turf returns each point once
    _row(f"`geo.points_within`, {label}", f"{ms:,.0f} ms", f"{inside:,} points")
    turf = turf_points_within(points, polygons)
    if turf is None:
        _row("Turf.js `pointsWithinPolygon`", "not run", "npm ci --prefix benchmarks/turf")
    else:
        turf_ms, turf_count = turf
        _row(
            f"Turf.js 7 `pointsWithinPolygon`, {label}",
            f"{turf_ms:,.0f} ms",
            f"{turf_count:,} points; geo is {turf_ms / ms:,.1f}x faster",
        )

    centres = points[:1000]
    ms, merged = best_of(
        3, lambda: geo.union(*[geo.buffer_m(shapely.Point(p), 200) for p in centres])
    )
    _row("`geo.buffer_m` (200 m) + `geo.union` of 1,000 points", f"{ms:,.0f} ms", merged.geom_type)

    print("\n| What | Measured | Note |\n|---|---|---|")
    for what, value, note in rows:
        print(f"| {what} | {value} | {note} |")


if __name__ == "__main__":
    main()
