"""Generated layers for the end-to-end tests and the web benchmark."""

from __future__ import annotations

import json

import httpx

__all__ = ["point_grid", "upload_point_grid"]


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


def upload_point_grid(url: str, chat_id: str, count: int, *, timeout: float = 300) -> str:
    """Store chat ``chat_id`` on the server at ``url`` with :func:`point_grid` of ``count``
    points uploaded to it as ``grid.geojson``; return the entry's id."""
    with httpx.Client(base_url=url, timeout=timeout) as client:
        client.post(f"/api/chats/{chat_id}").raise_for_status()
        added = client.post(
            f"/api/chats/{chat_id}/uploads?name=grid.geojson",
            content=point_grid(count),
            headers={"content-type": "application/octet-stream"},
        )
        added.raise_for_status()
    entry_id: str = added.json()["entry_id"]
    return entry_id
