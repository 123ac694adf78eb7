"""The STAC connector, against Earth Search-shaped answers and COGs generated here, served
on 127.0.0.1 with Range support: a search lists items (following its next link), a read
returns exactly the window's cells from a few byte ranges of the file, and a file that is
crafted, damaged or served without ranges is a fetch error a model can act on."""

from __future__ import annotations

import json
import math
import struct
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import rasterio
from affine import Affine
from rasterio.io import MemoryFile
from rasterio.windows import Window
from tests.sources.connectors.support import (
    EARTH_SEARCH,
    HELSINKI,
    RECORDED,
    cog_in_process,
    fast,
    live_source,
)

import geomint
from geomint.sources.connectors import _cog_child, _confined_cog
from geomint.sources.connectors.base import Grid, Listing, Request, SourceFetchError, Unit
from geomint.sources.connectors.stac import StacConnector
from geomint.sources.model import Source
from geomint.testing import RecordedReply, RecordedRoute, RecordedServer

RECORDINGS = "stac"
DEM_HOST = "https://copernicus-dem-30m.s3.amazonaws.com"
S2_HOST = "https://sentinel-cogs.s3.us-west-2.amazonaws.com"
DEM_COLLECTION = (EARTH_SEARCH / "cop_dem_collection.json").read_bytes()
TILE = "Copernicus_DSM_COG_10_N60_00_E024_00_DEM"
#: About 1 km² in central Helsinki.
KM2 = "24.930,60.165,24.948,60.174"
#: The generated tile's grid: 1/900 degree of longitude by 1/1800 of latitude.
GRID = Affine(1 / 900, 0, 24.0, 0, -1 / 1800, 61.0)


def _dem_cog(**options: Any) -> bytes:
    """The N60 E024 tile's shape at a third of its cells: 900 x 1800, float32, 256-cell
    tiles, overviews; values random, so tiles do not compress and bytes tell."""
    cells = (np.random.default_rng(21).random((1800, 900)) * 200).astype("float32")
    settings = {
        "driver": "COG",
        "width": 900,
        "height": 1800,
        "count": 1,
        "dtype": "float32",
        "crs": "EPSG:4326",
        "transform": GRID,
        "nodata": -32767.0,
        "blocksize": 256,
        **options,
    }
    with MemoryFile() as memory:
        with memory.open(**settings) as dataset:
            dataset.write(cells, 1)
        return bytes(memory.read())


@pytest.fixture(scope="module")
def dem() -> bytes:
    return _dem_cog()


def _serve(server: RecordedServer, cog: bytes, *, ranges: bool = True) -> RecordedRoute:
    search = (EARTH_SEARCH / "cop_dem_search.json").read_text("utf-8")
    server.add(
        "POST",
        "/search",
        body=search.replace(DEM_HOST, f"{server.base_url}/cog"),
        content_type="application/geo+json",
    )
    server.add(
        "GET",
        "/collections/cop-dem-glo-30",
        body=(EARTH_SEARCH / "cop_dem_collection.json").read_bytes(),
    )
    return server.add("GET", "/cog/.+\\.tif", body=cog, content_type="image/tiff", ranges=ranges)


def _read(server: RecordedServer, **options: str) -> Grid:
    source = live_source("copernicus-dem-glo-30", api_url=server.base_url)
    answer = StacConnector(reader=cog_in_process).fetch(
        Request(source=source, options=options, policy=fast())
    )
    assert isinstance(answer, Grid)
    return answer


def _refused(
    server: RecordedServer,
    connector: StacConnector | None = None,
    units: tuple[Unit, ...] = (),
    source: Source | None = None,
    **options: str,
) -> SourceFetchError:
    source = source or live_source("copernicus-dem-glo-30", api_url=server.base_url)
    with pytest.raises(SourceFetchError) as caught:
        (connector or StacConnector(reader=cog_in_process)).fetch(
            Request(source=source, units=units, options=options, policy=fast())
        )
    return caught.value


@pytest.fixture(autouse=True)
def _fresh_heads(monkeypatch: pytest.MonkeyPatch) -> None:
    """Each test starts without first blocks kept from another's server."""
    monkeypatch.setattr(_confined_cog, "_HEADS", _confined_cog._Heads())


# --- search -------------------------------------------------------------------------------


def _sentinel(server: RecordedServer) -> Source:
    dem = live_source("copernicus-dem-glo-30")
    return Source.model_validate(
        {
            **dem.model_dump(),
            "id": "sentinel-2-l2a",
            "title": "Sentinel-2 Level-2A",
            "config": {
                "api_url": server.base_url,
                "collection": "sentinel-2-l2a",
                "asset": "red",
                "cloud_cover": True,
            },
        }
    )


def test_a_search_lists_items_newest_first_across_pages(server: RecordedServer) -> None:
    server.add("GET", "/collections/sentinel-2-l2a", file="s2_l2a_collection.json")
    page1 = (RECORDED / RECORDINGS / "s2_l2a_search_page1.json").read_text("utf-8")
    page2 = (RECORDED / RECORDINGS / "s2_l2a_search_page2.json").read_bytes()
    here = page1.replace("https://earth-search.aws.element84.com/v1", server.base_url)
    server.add("POST", "/search", replies=[_reply(here.encode()), _reply(page2)])

    listing = StacConnector().fetch(
        Request(
            source=_sentinel(server),
            options={
                "list": "yes",
                "bbox": "24.78,60.13,25.25,60.3",
                "datetime": "2024-07-01/2024-07-31",
                "max_cloud_cover": "20",
                "limit": "5",
            },
            policy=fast(),
        )
    )

    assert isinstance(listing, Listing)
    assert [d.name for d in listing.datasets] == [
        "S2B_35VLG_20240724_0_L2A",
        "S2A_35VLG_20240709_0_L2A",
        "S2B_35VLG_20240704_0_L2A",
    ]
    assert listing.count == 3
    first = listing.datasets[0]
    assert first.title == "S2B_35VLG_20240724_0_L2A (2024-07-24, cloud cover 12.7%)"
    assert [r.id for r in first.resources] == ["red", "green", "blue", "nir", "scl", "visual"]
    assert first.resources[0].url is not None and first.resources[0].url.startswith(S2_HOST)
    assert first.licence_id == (
        "proprietary (https://sentinel.esa.int/documents/247904/690755/Sentinel_Data_Legal_Notice)"
    )
    assert first.organisation == "ESA"
    sent = [s.json() for s in server.sent("/search")]
    assert sent[0] == {
        "collections": ["sentinel-2-l2a"],
        "bbox": [24.78, 60.13, 25.25, 60.3],
        "limit": 5,
        "datetime": "2024-07-01T00:00:00Z/2024-07-31T23:59:59Z",
        "query": {"eo:cloud_cover": {"lte": 20.0}},
    }
    # The next link's body replaces the first (merge is false): it carries the token.
    assert sent[1]["next"] == "2024-07-09T09:50:31.018000Z,S2A_35VLG_20240709_0_L2A,sentinel-2-l2a"


def _reply(body: bytes) -> RecordedReply:
    return RecordedReply(body=body, content_type="application/geo+json")


def test_a_next_link_to_another_site_is_not_followed(server: RecordedServer) -> None:
    server.add("GET", "/collections/sentinel-2-l2a", file="s2_l2a_collection.json")
    server.add("POST", "/search", file="s2_l2a_search_page1.json")

    listing = StacConnector().fetch(
        Request(
            source=_sentinel(server),
            options={"list": "yes", "bbox": "24.78,60.13,25.25,60.3", "limit": "5"},
            policy=fast(),
        )
    )

    assert isinstance(listing, Listing)
    assert len(listing.datasets) == 2
    assert "the catalogue's next page is on another site; not followed" in listing.notes
    assert len(server.sent("/search")) == 1


def test_cloud_cover_is_refused_for_a_collection_without_it(server: RecordedServer) -> None:
    error = _refused(server, bbox=KM2, max_cloud_cover="10")

    assert error.code == "refused_filter"
    assert error.key == "max_cloud_cover"
    assert "carry no cloud cover" in str(error)
    assert server.requests == []


@pytest.mark.parametrize(
    ("options", "key", "said"),
    [
        ({"bbox": "25,60,24,61"}, "bbox", "is not an area"),
        ({"bbox": "Helsinki"}, "bbox", "west,south,east,north in degrees"),
        ({"bbox": KM2, "datetime": "last summer"}, "datetime", "is a date or an interval"),
        ({"bbox": KM2, "band": "0"}, "band", "band takes a whole number"),
        ({"bbox": KM2, "list": "maybe"}, "list", "list takes yes or no"),
        ({}, "bbox", "a raster read needs a place"),
    ],
)
def test_a_filter_it_cannot_take_is_refused_before_any_request(
    server: RecordedServer, options: dict[str, str], key: str, said: str
) -> None:
    error = _refused(server, **options)

    assert error.code == "refused_filter"
    assert error.key == key
    assert said in str(error)
    assert server.requests == []


def test_a_city_is_a_point_and_needs_a_bbox(server: RecordedServer) -> None:
    error = _refused(server, units=(HELSINKI,))

    assert error.code == "refused_filter"
    assert "city:658225 (Helsinki) is a point on the place spine" in str(error)


def test_a_units_bounding_box_is_the_area_searched(server: RecordedServer, dem: bytes) -> None:
    _serve(server, dem)
    uusimaa = Unit(
        id="admin1:FI-18", name="Uusimaa", level="admin1", bbox=(24.9, 60.15, 24.95, 60.2)
    )
    source = live_source("copernicus-dem-glo-30", api_url=server.base_url)

    grid = StacConnector(reader=cog_in_process).fetch(
        Request(source=source, units=(uusimaa,), policy=fast())
    )

    assert isinstance(grid, Grid)
    assert server.sent("/search")[0].json()["bbox"] == [24.9, 60.15, 24.95, 60.2]


@pytest.mark.parametrize(
    ("body", "code", "said"),
    [
        ("<html>down for maintenance</html>", "malformed", "it is not JSON"),
        ('{"type": "FeatureCollection", "items": []}', "changed", "without features"),
        ('{"type": "FeatureCollection", "features": [{"id": 1}]}', "malformed", "parse as STAC"),
    ],
)
def test_a_search_answer_of_another_shape_is_a_fetch_error(
    server: RecordedServer, body: str, code: str, said: str
) -> None:
    server.add(
        "GET",
        "/collections/cop-dem-glo-30",
        body=(EARTH_SEARCH / "cop_dem_collection.json").read_bytes(),
    )
    server.add("POST", "/search", body=body)

    error = _refused(server, bbox=KM2)

    assert error.code == code
    assert said in str(error)


def test_an_unknown_collection_is_not_found(server: RecordedServer) -> None:
    server.add("GET", "/collections/cop-dem-glo-31", status=404, body='{"code": "NotFound"}')

    error = _refused(server, bbox=KM2, collection="cop-dem-glo-31")

    assert error.code == "not_found"
    assert "has no collection 'cop-dem-glo-31'" in str(error)


# --- reading a window ---------------------------------------------------------------------


def test_a_read_returns_exactly_the_windows_cells(server: RecordedServer, dem: bytes) -> None:
    _serve(server, dem)

    grid = _read(server, bbox=KM2)

    raster = grid.raster
    assert raster.crs == "EPSG:4326"
    assert raster.nodata == -32767.0
    a, _, c, _, e, f = raster.transform
    col, row = (math.floor(v) for v in ~GRID @ (c + a / 2, f + e / 2))
    with MemoryFile(dem) as memory, memory.open() as whole:
        expected = whole.read(1, window=Window(col, row, raster.shape[1], raster.shape[0]))
        everything = whole.read(1)
    assert np.array_equal(raster.array, expected)
    assert np.array_equal(
        raster.array, everything[row : row + raster.shape[0], col : col + raster.shape[1]]
    )
    west, south, east, north = raster.bounds
    assert west <= 24.930 and east >= 24.948 and south <= 60.165 and north >= 60.174
    assert raster.shape == (17, 17)  # columns 837-853, rows 1486-1502 of the tile
    assert grid.period == "2021-04-22"
    assert grid.unit == "meter"
    assert grid.publisher == "European Space Agency, Sinergise"
    assert grid.licence is not None and grid.licence.startswith(
        "proprietary (Copernicus DEM License"
    )
    assert grid.url == f"{server.base_url}/cog/{TILE}/{TILE}.tif"
    assert (
        "read item Copernicus_DSM_COG_10_N60_00_E024_00_DEM (2021-04-22), asset data, band 1"
        in grid.notes
    )
    assert any(note.startswith("a window of 17 x 17 cells") for note in grid.notes)


def test_a_read_fetches_only_a_part_of_the_file_by_range(
    server: RecordedServer, dem: bytes
) -> None:
    route = _serve(server, dem)

    _read(server, bbox=KM2)

    ranges = [s.headers.get("range") for s in server.sent("/cog/.+")]
    assert all(r is not None and r.startswith("bytes=") for r in ranges)
    assert len(ranges) == 2  # the first block, then the window's tiles
    assert route.bytes_sent < len(dem) / 10
    assert route.bytes_sent <= _confined_cog.HEAD_BYTES + 4 * 256 * 256 * 4


def test_a_files_first_block_is_kept_for_the_next_read(server: RecordedServer, dem: bytes) -> None:
    route = _serve(server, dem)

    _read(server, bbox=KM2)
    _read(server, bbox="24.5,60.5,24.51,60.51")

    assert route.hits == 3


def test_an_area_past_one_read_is_read_from_an_overview_and_said(
    server: RecordedServer, dem: bytes
) -> None:
    _serve(server, dem)
    source = live_source("copernicus-dem-glo-30", api_url=server.base_url)

    grid = StacConnector(reader=cog_in_process, max_cells=200_000).fetch(
        Request(source=source, options={"bbox": "24.0,60.0,25.0,61.0"}, policy=fast())
    )

    assert isinstance(grid, Grid)
    assert grid.raster.shape == (450, 225)  # 1/4 of 1800 x 900
    assert grid.raster.res == pytest.approx((4 / 900, 4 / 1800))
    assert any(
        "the area is 900 x 1,800 cells at the file's full resolution" in note
        and "read its overview 2 (1/4 of the resolution)" in note
        for note in grid.notes
    )


def test_an_area_too_large_even_for_the_coarsest_overview_is_refused(
    server: RecordedServer, dem: bytes
) -> None:
    _serve(server, dem)

    error = _refused(
        server, StacConnector(reader=cog_in_process, max_cells=1_000), bbox="24.0,60.0,25.0,61.0"
    )

    assert error.code == "refused_filter"
    assert error.key == "bbox"
    assert "ask for a smaller area" in str(error)


def test_an_area_outside_the_items_file_is_not_covered(server: RecordedServer, dem: bytes) -> None:
    _serve(server, dem)
    search = json.loads((EARTH_SEARCH / "cop_dem_search.json").read_text())
    item = json.dumps(search["features"][1]).replace(DEM_HOST, f"{server.base_url}/cog")
    server.add(
        "GET",
        "/collections/cop-dem-glo-30/items/Copernicus_DSM_COG_10_N60_00_E025_00_DEM",
        body=item,
        content_type="application/geo+json",
    )

    # The E025 item's href is served the E024 file here: its grid does not reach 25.5.
    error = _refused(
        server, bbox="25.5,60.5,25.51,60.51", item="Copernicus_DSM_COG_10_N60_00_E025_00_DEM"
    )

    assert error.code == "not_covered"
    assert "does not cover the area asked" in str(error)


def test_an_asset_the_item_lacks_is_refused_with_its_assets(
    server: RecordedServer, dem: bytes
) -> None:
    _serve(server, dem)

    error = _refused(server, bbox=KM2, asset="hillshade")

    assert error.code == "refused_filter"
    assert error.key == "asset"
    assert error.options == ("data",)
    assert "has no GeoTIFF asset 'hillshade'; its GeoTIFF assets are data" in str(error)


# --- hostile files ------------------------------------------------------------------------


def _patched(data: bytes, tags: dict[int, int]) -> bytes:
    """A little-endian TIFF with some of its first directory's tags set to ``LONG`` values."""
    out = bytearray(data)
    (ifd,) = struct.unpack_from("<I", out, 4)
    (count,) = struct.unpack_from("<H", out, ifd)
    for index in range(count):
        at = ifd + 2 + 12 * index
        (tag,) = struct.unpack_from("<H", out, at)
        if tag in tags:
            struct.pack_into("<HHII", out, at, tag, 4, 1, tags[tag])
    return bytes(out)


def _tiny_tiff() -> bytes:
    with MemoryFile() as memory:
        with memory.open(
            driver="GTiff",
            width=256,
            height=256,
            count=1,
            dtype="float32",
            crs="EPSG:4326",
            transform=Affine(1 / 256, 0, 24.0, 0, -1 / 256, 61.0),
            tiled=True,
            blockxsize=256,
            blockysize=256,
            compress="deflate",
        ) as dataset:
            dataset.write(np.ones((256, 256), "float32"), 1)
        return bytes(memory.read())


@pytest.mark.parametrize(
    ("tags", "said"),
    [
        ({256: 4_000_000, 257: 4_000_000}, "it declares 64,000,000,000,000 bytes of cells"),
        ({322: 1 << 20, 323: 1 << 20}, "its tiles are 1,048,576 x 1,048,576 cells"),
        ({256: 100_000, 257: 100_000}, "it declares 152,881 tiles"),
    ],
    ids=["huge-grid", "huge-tiles", "more-tiles-than-the-file-holds"],
)
def test_a_file_declaring_more_than_it_holds_is_refused_before_decoding(
    server: RecordedServer, tags: dict[int, int], said: str
) -> None:
    crafted = _patched(_tiny_tiff(), tags)
    assert len(crafted) < 1_000
    route = _serve(server, crafted)

    error = _refused(server, bbox="24.01,60.9,24.02,60.95")

    assert error.code == "malformed"
    assert said in str(error)
    assert "try another item or asset" in str(error)
    assert route.hits == 1  # the first block: no tile was asked for


def test_a_damaged_tile_is_a_clean_fetch_error(server: RecordedServer, dem: bytes) -> None:
    with MemoryFile(dem) as memory, memory.open() as dataset:
        col, row = (int(v) for v in ~dataset.transform @ (24.939, 60.17))
        offset = int(
            dataset.get_tag_item(f"BLOCK_OFFSET_{col // 256}_{row // 256}", "TIFF", bidx=1)
        )
    damaged = bytearray(dem)
    damaged[offset : offset + 4096] = b"\xff" * 4096
    _serve(server, bytes(damaged))

    error = _refused(server, bbox=KM2)

    assert error.code == "malformed"
    assert "cannot be read: GDAL could not read it" in str(error)
    assert "try another item or asset" in str(error)


def test_a_server_that_ignores_range_is_cut_off(server: RecordedServer, dem: bytes) -> None:
    route = _serve(server, dem, ranges=False)

    error = _refused(server, bbox=KM2)

    assert error.code == "unavailable"
    assert "does not answer byte ranges" in str(error)
    assert route.hits == 1


def test_a_read_past_its_byte_budget_is_stopped(
    server: RecordedServer, dem: bytes, monkeypatch: pytest.MonkeyPatch
) -> None:
    _serve(server, dem)
    monkeypatch.setattr(_confined_cog, "MAX_READ_BYTES", 100_000)

    error = _refused(server, bbox=KM2)

    assert error.code == "unavailable"
    assert "past what one read takes (100,000 bytes in 64 requests)" in str(error)


def test_a_question_for_bytes_past_the_file_is_refused(server: RecordedServer, dem: bytes) -> None:
    _serve(server, dem)
    fetcher = _confined_cog.RangeFetcher(
        f"{server.base_url}/cog/{TILE}/{TILE}.tif",
        fast(allowed_networks=("127.0.0.0/8",)),
        deadline=time.monotonic() + 10,
        what="the file",
    )
    fetcher.head()

    with pytest.raises(SourceFetchError) as caught:
        fetcher.answer(struct.pack("<QQ", len(dem) - 10, 100))

    assert caught.value.code == "malformed"
    assert "asked for a byte range the file does not have" in str(caught.value)


def _window_reply(**changes: Any) -> bytes:
    fields: dict[str, Any] = {
        "code": _cog_child.DTYPES.index("float32"),
        "band": 1,
        "rows": 2,
        "cols": 2,
        "transform": (0.01, 0.0, 24.93, 0.0, -0.01, 60.17),
        "level": -1,
        "factor": 1,
        "crs": b"EPSG:4326",
        "cells": np.ones(4, "<f4").tobytes(),
    }
    fields.update(changes)
    header = _cog_child.HEADER.pack(
        fields["code"],
        fields["band"],
        fields["rows"],
        fields["cols"],
        len(fields["crs"]),
        0,
        *fields["transform"],
        0.0,
        fields["level"],
        fields["factor"],
        0,
        0,
        2,
        2,
        900,
        1800,
    )
    return _cog_child.WINDOW + header + fields["crs"] + fields["cells"]


@pytest.mark.parametrize(
    "reply",
    [
        _window_reply(band=2),
        _window_reply(rows=5000, cols=5000),
        _window_reply(cells=b"\x00" * 12),
        _window_reply(code=200),
        _window_reply(transform=(0.01, 0.5, 24.93, 0.0, -0.01, 60.17)),
        _window_reply(transform=(0.01, 0.0, 120.0, 0.0, -0.01, -30.0)),
        _window_reply(crs=b"EPSG:\x00"),
        b"GMW1" + b"\x00" * 10,
        b"nonsense",
        _cog_child.PROBLEM + b'{"kind": "owned", "problem": "x"}',
    ],
    ids=["band", "cells", "size", "dtype", "rotated", "elsewhere", "crs", "short", "magic", "kind"],
)
def test_the_childs_answer_is_checked_against_what_was_asked(reply: bytes) -> None:
    bbox = (24.93, 60.15, 24.95, 60.17)

    with pytest.raises(SourceFetchError) as caught:
        _confined_cog.decode(reply, bbox=bbox, band=1, max_cells=10_000, what="the file")

    assert caught.value.code == "malformed"
    assert "was not the window asked" in str(caught.value)


def test_a_well_formed_answer_becomes_the_raster_asked() -> None:
    window = _confined_cog.decode(
        _window_reply(), bbox=(24.93, 60.15, 24.95, 60.17), band=1, max_cells=4, what="f"
    )

    assert window.raster.shape == (2, 2)
    assert window.raster.transform == (0.01, 0.0, 24.93, 0.0, -0.01, 60.17)
    assert window.level is None


def test_the_reader_leaves_gdal_one_driver_and_no_network_one() -> None:
    script = (
        "import rasterio\n"
        "from geomint.sources.connectors import _cog_child\n"
        "_cog_child.prepare({})\n"
        "with rasterio.Env() as env:\n"
        "    print(sorted(env.drivers()))\n"
    )
    src = str(Path(geomint.__file__).resolve().parent.parent)
    found = subprocess.run(
        [sys.executable, "-c", script],
        capture_output=True,
        text=True,
        check=True,
        env={"PYTHONPATH": src, "PATH": "/usr/bin:/bin"},
    )

    assert found.stdout.strip() == "['GTiff']"


# --- the confined child, end to end --------------------------------------------------------


def _installed_is_this_tree() -> bool:
    """Whether a confined child (``python -I``) imports this tree's geomint."""
    found = subprocess.run(
        [sys.executable, "-I", "-c", "import geomint; print(geomint.__file__)"],
        capture_output=True,
        text=True,
        check=False,
    )
    return Path(found.stdout.strip()).resolve() == Path(geomint.__file__).resolve()


confined = pytest.mark.skipif(
    not _installed_is_this_tree(),
    reason="a confined child imports the installed geomint, which is not this tree",
)


@pytest.mark.isolation
@confined
def test_a_confined_child_reads_the_window_through_the_host(
    server: RecordedServer, dem: bytes
) -> None:
    route = _serve(server, dem)
    source = live_source("copernicus-dem-glo-30", api_url=server.base_url)

    grid = StacConnector().fetch(
        Request(source=source, options={"bbox": KM2}, policy=fast(timeout_s=30.0))
    )

    assert isinstance(grid, Grid)
    expected = _read(server, bbox=KM2).raster
    assert np.array_equal(grid.raster.array, expected.array)
    assert grid.raster.transform == expected.transform
    assert route.bytes_sent < len(dem) / 10


@pytest.mark.isolation
@confined
def test_a_damaged_file_is_refused_by_the_confined_child(server: RecordedServer) -> None:
    _serve(server, _patched(_tiny_tiff(), {322: 1 << 20, 323: 1 << 20}))
    source = live_source("copernicus-dem-glo-30", api_url=server.base_url)

    with pytest.raises(SourceFetchError) as caught:
        StacConnector().fetch(
            Request(
                source=source,
                options={"bbox": "24.01,60.9,24.02,60.95"},
                policy=fast(timeout_s=30.0),
            )
        )

    assert caught.value.code == "malformed"
    assert "its tiles are 1,048,576 x 1,048,576 cells" in str(caught.value)


def test_without_a_confined_reader_nothing_is_decoded(
    server: RecordedServer, dem: bytes, monkeypatch: pytest.MonkeyPatch
) -> None:
    from geomint import confine

    pool = confine.Pool(
        handler="geomint.no_such_handler", children=1, memory_mb=256, cpu_s=5, scratch_mb=1
    )
    monkeypatch.setattr(_confined_cog, "_POOL", pool)
    _serve(server, dem)

    error = _refused(server, StacConnector(), bbox=KM2)

    assert error.code == "unavailable"
    assert "the confined raster reader cannot start on this machine" in str(error)
    assert "geomint decodes no remote raster outside it" in str(error)
    pool.close()


def test_the_local_file_reads_as_the_recorded_tile(dem: bytes) -> None:
    """The generated file has the shape the recorded item promises (its grid and CRS)."""
    item = json.loads((EARTH_SEARCH / "cop_dem_search.json").read_text())["features"][0]
    with MemoryFile(dem) as memory, memory.open() as dataset:
        assert dataset.crs == rasterio.crs.CRS.from_epsg(item["properties"]["proj:epsg"])
        assert dataset.overviews(1) == [2, 4, 8]
