"""Hostile inputs more than one test folder needs."""

from __future__ import annotations

import json
import math


def star_geojson(center: tuple[float, float] = (13.4, 52.5), n: int = 301) -> bytes:
    """A {n/(n/2-1)} star polygon as a FeatureCollection: every edge crosses nearly every
    other, so ``make_valid`` runs for minutes over 12 KB of GeoJSON."""
    step = n // 2 - 1
    ring = [
        [center[0] + 0.01 * math.cos(2 * math.pi * (i * step % n) / n),
         center[1] + 0.01 * math.sin(2 * math.pi * (i * step % n) / n)]
        for i in range(n)
    ]  # fmt: skip
    ring.append(ring[0])
    geometry = {"type": "Polygon", "coordinates": [ring]}
    feature = {"type": "Feature", "properties": {}, "geometry": geometry}
    return json.dumps({"type": "FeatureCollection", "features": [feature]}).encode()
