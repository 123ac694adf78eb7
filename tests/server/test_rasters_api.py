"""Raster entries through the web app: drawn as a PNG the map places by its corners (cells
with no data transparent), described for the legend, downloaded as a GeoTIFF, and never
served or inlined as GeoJSON; a features entry is not drawn as a raster."""

from __future__ import annotations

import json
import struct
import zlib
from asyncio import run
from collections.abc import AsyncIterator, Iterator
from typing import Any

import numpy as np
import pytest
from rasterio.io import MemoryFile
from rasterio.transform import from_origin
from tests.server.web import call, make_agent

from geomint.agent import MapAgent
from geomint.geo.raster import Raster
from geomint.providers import bundled
from geomint.sandbox import Sandbox
from geomint.server import create_app
from geomint.server.stream import encode_sse, ui_chunks
from geomint.server.thread import entry_geojson
from geomint.ui import Part, chat_parts

CHAT = "grid-chat"


@pytest.fixture
def agent(in_process: Sandbox) -> Iterator[MapAgent]:
    yield make_agent(in_process)


def _grid() -> Raster:
    """4 x 5 cells of 100 m in EPSG:3067 over central Helsinki; the top-left cell has no
    data, the values rise by row."""
    values = np.arange(20, dtype="float32").reshape(4, 5)
    values[0, 0] = -9999
    transform = (100.0, 0.0, 385_000.0, 0.0, -100.0, 6_673_000.0)
    return Raster(values, transform, "EPSG:3067", nodata=-9999, label="people per cell")


def _seed(agent: MapAgent, raster: Raster | None = None) -> None:
    agent.open_chat(CHAT)
    context = agent.context(CHAT, "seed")
    run(context.write_entry(kind="rasters", data=raster or _grid(), label="Population grid"))
    run(context.write_entry(kind="places", data=bundled.demo_places(), label="Places"))


def _png_pixels(data: bytes) -> np.ndarray:
    """An 8-bit RGBA PNG's pixels (the only kind geomint writes), checked chunk by chunk."""
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    at, compressed, size = 8, b"", (0, 0)
    while at < len(data):
        (length,) = struct.unpack(">I", data[at : at + 4])
        kind, body = data[at + 4 : at + 8], data[at + 8 : at + 8 + length]
        (crc,) = struct.unpack(">I", data[at + 8 + length : at + 12 + length])
        assert zlib.crc32(kind + body) & 0xFFFFFFFF == crc, kind
        if kind == b"IHDR":
            width, height, depth, colour = struct.unpack(">IIBB", body[:10])
            assert (depth, colour) == (8, 6)
            size = (height, width)
        elif kind == b"IDAT":
            compressed += body
        at += 12 + length
    rows = np.frombuffer(zlib.decompress(compressed), dtype="uint8").reshape(size[0], -1)
    assert not rows[:, 0].any()  # no row filters
    return rows[:, 1:].reshape(size[0], size[1], 4)


def _get(app: Any, url: str, **kwargs: Any) -> Any:
    return run(call(app, "GET", url, **kwargs))


def test_a_raster_is_drawn_as_a_png_its_nodata_transparent(agent: MapAgent) -> None:
    _seed(agent)
    app = create_app(agent)
    response = _get(app, f"/api/chats/{CHAT}/entries/rasters-1/raster.png?version=1")
    assert response.status_code == 200, response.text
    assert response.headers["content-type"] == "image/png"
    assert "immutable" in response.headers["cache-control"]
    pixels = _png_pixels(response.content)
    height, width, _ = pixels.shape
    assert max(height, width) == 512  # a coarse grid is drawn finer than its cells
    legend = _get(app, f"/api/chats/{CHAT}/entries/rasters-1/raster.json?version=1").json()
    assert (legend["width"], legend["height"]) == (width, height)
    # The corners are the entry's lon/lat bbox, as the entry's part gives them.
    part = next(p for p in _parts(app) if p.get("entry_id") == "rasters-1")
    assert legend["coordinates"] == part["raster"]["coordinates"]
    (west, north), _, (east, south), _ = legend["coordinates"]
    assert 24.9 < west < east < 25.0 and 60.1 < south < north < 60.2
    # The cell with no data, at the top left of a grid rotated a little against Web
    # Mercator: transparent near the picture's top-left corner, and so is everything
    # outside the grid; the cells with data are opaque.
    alpha = pixels[..., 3]
    assert set(np.unique(alpha)) == {0, 255}
    assert alpha[height // 10, width // 10] == 0
    assert alpha[height // 2, width // 2] == 255
    assert alpha[height - height // 10, width - width // 10] == 255
    # The ramp's ends are the 2nd and 98th percentiles of what is drawn: with so few
    # cells, each many pixels, the least and greatest values with data.
    assert legend["range"] == [1.0, 19.0]
    # The values rise by row: the bottom is drawn in the ramp's high colours (viridis runs
    # from purple to yellow), the top in its low ones.
    bottom = pixels[height - height // 10, width // 2, :3].astype(int)
    top = pixels[height // 10 + 5, width // 2, :3].astype(int)
    assert bottom[1] > top[1] + 100  # yellow-green against purple


def test_the_picture_is_drawn_once_per_entry_version(
    agent: MapAgent, monkeypatch: pytest.MonkeyPatch
) -> None:
    import geomint.server.routes.rasters as routes

    drawn = []
    original = routes.render

    def counted(*args: Any, **kwargs: Any) -> Any:
        drawn.append(args)
        return original(*args, **kwargs)

    monkeypatch.setattr(routes, "render", counted)
    _seed(agent)
    app = create_app(agent)
    first = _get(app, f"/api/chats/{CHAT}/entries/rasters-1/raster.png")
    again = _get(app, f"/api/chats/{CHAT}/entries/rasters-1/raster.json?version=1")
    assert first.status_code == again.status_code == 200
    assert first.headers["cache-control"] == "private, no-cache"  # the latest: revalidated
    assert len(drawn) == 1
    unchanged = _get(
        app,
        f"/api/chats/{CHAT}/entries/rasters-1/raster.png",
        headers={"if-none-match": first.headers["etag"]},
    )
    assert unchanged.status_code == 304 and len(drawn) == 1


@pytest.mark.parametrize("what", ["raster.png", "raster.json"])
def test_unknown_entries_versions_and_chats_are_404(agent: MapAgent, what: str) -> None:
    _seed(agent)
    app = create_app(agent)
    for url in (
        f"/api/chats/{CHAT}/entries/rasters-9/{what}",
        f"/api/chats/{CHAT}/entries/rasters-1/{what}?version=2",
        f"/api/chats/no-such-chat/entries/rasters-1/{what}",
    ):
        response = _get(app, url)
        assert response.status_code == 404, url
        assert "no entry" in response.json()["detail"]
    assert _get(app, f"/api/chats/bad%20id/entries/rasters-1/{what}").status_code == 422


def test_a_features_entry_asked_for_as_a_raster_is_409(agent: MapAgent) -> None:
    _seed(agent)
    response = _get(create_app(agent), f"/api/chats/{CHAT}/entries/places-1/raster.png")
    assert response.status_code == 409
    assert response.json()["detail"] == (
        f"places-1 holds features, not a raster; its GeoJSON is at "
        f"/api/chats/{CHAT}/entries/places-1?version=1"
    )


def test_a_raster_asked_for_as_geojson_is_409_naming_its_picture(agent: MapAgent) -> None:
    _seed(agent)
    app = create_app(agent)
    response = _get(app, f"/api/chats/{CHAT}/entries/rasters-1?version=1")
    assert response.status_code == 409
    error = response.json()["detail"]
    assert error.startswith("rasters-1 is a raster, not GeoJSON")
    assert f"/api/chats/{CHAT}/entries/rasters-1/raster.png?version=1" in error
    as_csv = _get(app, f"/api/chats/{CHAT}/entries/rasters-1/export?format=csv")
    assert as_csv.status_code == 409
    assert "downloads as a GeoTIFF" in as_csv.json()["detail"]
    places_tiff = _get(app, f"/api/chats/{CHAT}/entries/places-1/export?format=geotiff")
    assert places_tiff.status_code == 409


def test_a_raster_downloads_as_a_geotiff_with_its_grid(agent: MapAgent) -> None:
    _seed(agent)
    response = _get(create_app(agent), f"/api/chats/{CHAT}/entries/rasters-1/export")
    assert response.status_code == 200, response.text
    assert response.headers["content-type"].startswith("image/tiff")
    assert 'filename="Population grid.tif"' in response.headers["content-disposition"]
    with MemoryFile(response.content) as memory, memory.open() as dataset:
        assert dataset.crs.to_epsg() == 3067
        assert dataset.transform == from_origin(385_000, 6_673_000, 100, 100)
        assert dataset.nodata == -9999
        assert dataset.read(1).tolist() == _grid().array.tolist()
        assert dataset.tags()["values"] == "people per cell"


def _parts(app: Any) -> list[dict[str, Any]]:
    response = _get(app, f"/api/chats/{CHAT}/parts")
    assert response.status_code == 200, response.text
    parts: list[dict[str, Any]] = response.json()["parts"]
    return parts


def test_a_chat_read_back_names_the_picture_and_inlines_no_grid(agent: MapAgent) -> None:
    _seed(agent)
    app = create_app(agent)
    by_id = {p["entry_id"]: p for p in _parts(app) if p["type"] == "entry"}
    raster, places = by_id["rasters-1"], by_id["places-1"]
    assert "geojson" not in raster and raster["geojson_url"] is None
    picture = f"/api/chats/{CHAT}/entries/rasters-1/raster.png?version=1"
    assert raster["raster"]["image_url"] == picture
    assert raster["raster"]["summary"]["label"] == "people per cell"
    assert places["geojson"]["type"] == "FeatureCollection"  # features still inline
    view = _get(app, f"/api/chats/{CHAT}").json()
    listed = {e["entry_id"]: e for e in view["entries"]}
    assert listed["rasters-1"]["geojson_url"] is None
    assert listed["rasters-1"]["raster_url"].endswith("/rasters-1/raster.png?version=1")


def test_the_stream_sends_a_rasters_part_without_its_bytes(agent: MapAgent) -> None:
    """The stream splices a small entry's stored bytes into its part: never a grid's."""
    _seed(agent)

    async def parts() -> AsyncIterator[Part]:
        for part in chat_parts(agent.chats, CHAT):
            yield part

    def read(entry_id: str, version: int) -> bytes | None:
        return entry_geojson(agent.chats, CHAT, entry_id, version)

    async def lines() -> list[bytes]:
        return [line async for line in encode_sse(ui_chunks(parts()), read)]

    streamed = [json.loads(line[6:]) for line in run(lines()) if line.startswith(b"data: {")]
    entries = {c["data"]["entry_id"]: c["data"] for c in streamed if c["type"] == "data-entry"}
    assert "geojson" not in entries["rasters-1"] and "raster" in entries["rasters-1"]
    assert "geojson" in entries["places-1"]


def test_a_geotiff_dropped_in_the_chat_is_a_raster_the_map_can_draw(agent: MapAgent) -> None:
    values = np.arange(12, dtype="int16").reshape(3, 4)
    with MemoryFile() as memory:
        with memory.open(
            driver="GTiff", width=4, height=3, count=1, dtype="int16", crs="EPSG:3067",
            transform=from_origin(385_000, 6_673_000, 100, 100), nodata=-1,
        ) as dataset:  # fmt: skip
            dataset.write(values[np.newaxis])
        data = bytes(memory.read())
    app = create_app(agent)
    response = run(
        call(app, "POST", f"/api/chats/{CHAT}/uploads", params={"name": "grid.tif"}, content=data)
    )
    assert response.status_code == 200, response.text
    added = response.json()
    assert added["entry_id"] == "rasters-1" and added["kind"] == "rasters"
    assert "geojson" not in added
    assert added["raster"]["image_url"].endswith("/rasters-1/raster.png?version=1")
    assert added["raster"]["coordinates"][0][1] == pytest.approx(60.17775, abs=1e-3)
    picture = _get(app, added["raster"]["image_url"])
    assert picture.status_code == 200 and picture.content[:4] == b"\x89PNG"


def test_a_raster_with_no_lon_lat_extent_is_422(agent: MapAgent) -> None:
    # An engineering CRS: no transformation to longitude and latitude.
    local = 'LOCAL_CS["site grid",UNIT["metre",1],AXIS["X",EAST],AXIS["Y",NORTH]]'
    grid = Raster(np.ones((2, 2)), (1, 0, 0, 0, -1, 2), local)
    _seed(agent, grid)
    response = _get(create_app(agent), f"/api/chats/{CHAT}/entries/rasters-1/raster.png")
    assert response.status_code == 422
    assert "cannot be drawn on the map" in response.json()["detail"]
