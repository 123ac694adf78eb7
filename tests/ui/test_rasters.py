"""A raster entry projected for the page: its part names its picture, where the picture's
corners go and what the raster is, never GeoJSON; a features entry's part is as it was;
map code's image of a raster entry is routed to that entry's picture."""

from __future__ import annotations

import json
from typing import Any

import numpy as np
import pytest

from geomint.geo.raster import Raster, image_corners
from geomint.providers import bundled
from geomint.sandbox import RASTER_MEDIA_TYPE, raster_bytes
from geomint.state import EntryWritten
from geomint.store import Chats, MemoryStore
from geomint.tools._digest import entry_digest, raster_digest
from geomint.ui import EntryPart, chat_parts, raster_url
from geomint.ui.project import routed_diff

CHAT = "c1"


def _grid() -> Raster:
    values = np.arange(20, dtype="float32").reshape(4, 5)
    transform = (100.0, 0.0, 385_000.0, 0.0, -100.0, 6_673_000.0)
    return Raster(values, transform, "EPSG:3067", nodata=-1, label="people per cell")


def _chat(*written: tuple[str, Any]) -> Chats:
    chats = Chats(MemoryStore())
    chats.create(CHAT)
    bodies = []
    for entry_id, data in written:
        raster = isinstance(data, Raster)
        encoded = raster_bytes(data) if raster else json.dumps(data).encode()
        media_type = RASTER_MEDIA_TYPE if raster else "application/geo+json"
        blob = chats.store.put_blob(CHAT, encoded, media_type)
        digest = raster_digest(data) if raster else entry_digest(data)
        kind = entry_id.rsplit("-", 1)[0]
        bodies.append(EntryWritten(entry_id=entry_id, kind=kind, version=1, label=entry_id,
                                   blob=blob, digest=digest))  # fmt: skip
    chats.append(CHAT, "r1", bodies)
    return chats


def _entries(chats: Chats) -> dict[str, EntryPart]:
    return {p.entry_id: p for p in chat_parts(chats, CHAT) if isinstance(p, EntryPart)}


def test_a_raster_entry_part_names_its_picture_its_corners_and_its_grid() -> None:
    grid = _grid()
    part = _entries(_chat(("rasters-1", grid)))["rasters-1"]
    digest = raster_digest(grid)
    assert part.geojson_url is None
    assert part.features is None
    assert part.bbox == tuple(digest["bbox"])
    assert part.raster is not None
    assert part.raster.image_url == f"/api/chats/{CHAT}/entries/rasters-1/raster.png?version=1"
    assert part.raster.legend_url == f"/api/chats/{CHAT}/entries/rasters-1/raster.json?version=1"
    # The corners are the ones the picture is drawn for: the digest's lon/lat bbox.
    assert part.raster.coordinates == image_corners(digest["bbox"])
    (west, north), _, (east, south), _ = part.raster.coordinates
    assert west < east and south < north
    assert part.raster.summary["shape"] == [4, 5]
    assert part.raster.summary["label"] == "people per cell"
    dumped = part.model_dump(mode="json")
    assert dumped["raster"]["coordinates"][0] == [west, north]


def test_a_features_entry_part_reads_back_as_it_always_did() -> None:
    places = bundled.demo_places()
    part = _entries(_chat(("places-1", places)))["places-1"]
    dumped = part.model_dump(mode="json")
    assert "raster" not in dumped  # stored chats' parts are unchanged
    assert dumped["geojson_url"] == f"/api/chats/{CHAT}/entries/places-1?version=1"


def test_a_raster_with_no_lon_lat_extent_has_no_corners() -> None:
    local = 'LOCAL_CS["site grid",UNIT["metre",1],AXIS["X",EAST],AXIS["Y",NORTH]]'
    part = _entries(_chat(("rasters-1", Raster(np.ones((2, 2)), (1, 0, 0, 0, -1, 2), local))))
    raster = part["rasters-1"].raster
    assert raster is not None and raster.coordinates is None


def test_map_codes_image_of_a_raster_entry_is_routed_to_its_picture() -> None:
    chats = _chat(("rasters-1", _grid()), ("places-1", bundled.demo_places()))
    corners = [[24.9, 60.2], [25.0, 60.2], [25.0, 60.1], [24.9, 60.1]]
    stored = {"added": {"sources": {
        "grid": {"type": "image", "raster": {"entry": "rasters-1"}, "coordinates": corners},
        "not-a-raster": {"type": "image", "raster": {"entry": "places-1"}, "coordinates": corners},
    }, "layers": []}}  # fmt: skip
    routed = routed_diff(CHAT, stored, chats.open(CHAT).entries)["added"]["sources"]
    assert routed["grid"] == {
        "type": "image", "coordinates": corners, "url": raster_url(CHAT, "rasters-1", 1)
    }  # fmt: skip
    # Not a raster: no URL, so the page refuses it instead of asking for it.
    assert "url" not in routed["not-a-raster"] and "raster" not in routed["not-a-raster"]
    assert stored["added"]["sources"]["grid"]["raster"] == {"entry": "rasters-1"}  # a copy


@pytest.mark.parametrize(
    ("bbox", "top_left", "bottom_right"),
    [
        ((24.9, 60.1, 25.0, 60.2), (24.9, 60.2), (25.0, 60.1)),
        # Web Mercator ends short of the poles: the picture ends there too.
        ((-10, -89, 10, 89), (-10.0, 85.0511287798), (10.0, -85.0511287798)),
    ],
)
def test_image_corners_run_clockwise_from_the_top_left(
    bbox: tuple[float, ...], top_left: tuple[float, float], bottom_right: tuple[float, float]
) -> None:
    corners = image_corners(bbox)
    assert corners[0] == top_left and corners[2] == bottom_right
    assert corners[1] == (bottom_right[0], top_left[1])
    assert corners[3] == (top_left[0], bottom_right[1])
