"""Generated layers for the end-to-end tests and the web benchmark."""

from __future__ import annotations

import json

__all__ = ["point_grid"]


def point_grid(count: int) -> bytes:
    """A GeoJSON FeatureCollection of ``count`` points on a grid over Helsinki, as bytes.

    Feature ``i`` has the properties ``n`` (``i``), ``name`` (``"point <i>"``) and ``value``
    (a number from 0 to 99.9 that jumps about, so a sort by it reorders the rows), and sits
    in row ``i // 400`` and column ``i % 400`` of the grid, 0.0003° by 0.0007° apart.
    """
    features = [
        {
            "type": "Feature",
            "properties": {"n": i, "name": f"point {i}", "value": (i * 7919) % 1000 / 10},
            "geometry": {"type": "Point", "coordinates": [round(lon, 6), round(lat, 6)]},
        }
        for i in range(count)
        for lon, lat in [(24.80 + i % 400 * 0.0007, 60.12 + i // 400 * 0.0003)]
    ]
    collection = {"type": "FeatureCollection", "features": features}
    return json.dumps(collection, separators=(",", ":")).encode()
