"""What an outsider tried against the raster paths (issue 21's review), kept as tests.

A raster's CRS text is the attacker's when model code mints it: PROJ opens the files a CRS
names in whichever process uses it, so a CRS naming a grid made the application open any
path while drawing the map picture (a FIFO there blocked the server, holding the GIL).
The hostile sandbox is played here: the minted record is built as the sandbox sends it and
decoded as the host does.
"""

from __future__ import annotations

import base64
import json
import os
import subprocess
import zlib
from asyncio import run
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest
from pydantic import ValidationError
from tests.server.web import call, make_agent

from geomint.agent import MapAgent
from geomint.geo.raster import Raster
from geomint.sandbox import Sandbox
from geomint.sandbox._protocol import MAX_RASTER_CELLS, MintedRaster, Reply
from geomint.server import create_app

CHAT = "attack-chat"
PICTURE = f"/api/chats/{CHAT}/entries/rasters-1/raster.png"


@pytest.fixture
def agent(in_process: Sandbox) -> Iterator[MapAgent]:
    yield make_agent(in_process)


def _record(crs: str, shape: tuple[int, int] = (10, 10)) -> dict[str, object]:
    """A minted raster as the sandbox sends it, with any CRS text (as hostile code can)."""
    cells = np.ones(shape, "float32").tobytes()
    return {
        "shape": list(shape),
        "dtype": "float32",
        "transform": [0.1, 0.0, 24.0, 0.0, -0.1, 61.0],
        "crs": crs,
        "nodata": None,
        "cells": base64.b64encode(zlib.compress(cells)).decode("ascii"),
    }


def _store(agent: MapAgent, raster: Raster) -> object:
    agent.open_chat(CHAT)
    run(agent.context(CHAT, "seed").write_entry(kind="rasters", data=raster, label="hostile"))
    return create_app(agent)


def test_a_minted_crs_naming_a_grid_cannot_make_the_host_open_it(
    agent: MapAgent, tmp_path: Path
) -> None:
    fifo = tmp_path / "grid.gsb"
    os.mkfifo(fifo)
    opened = tmp_path / "opened"
    opened.write_text("0")
    # Each open by a reader lets one write through; a stuck open would hang, so a writer
    # keeps the other end, and counts.
    loop = f'n=0; while true; do echo x > "{fifo}"; n=$((n+1)); echo $n > "{opened}"; done'
    writer = subprocess.Popen(["sh", "-c", loop])
    try:
        hostile = f"+proj=longlat +datum=WGS84 +nadgrids={fifo} +type=crs"
        raster = MintedRaster.model_validate_json(json.dumps(_record(hostile))).to_raster()
        assert "nadgrids" not in raster.crs and str(fifo) not in raster.crs
        app = _store(agent, raster)
        response = run(call(app, "GET", PICTURE))
        exported = run(call(app, "GET", PICTURE.replace("raster.png", "export?format=geotiff")))
        assert (response.status_code, exported.status_code) == (200, 200)
        assert int(opened.read_text() or 0) == 0
    finally:
        writer.kill()
        writer.wait()


def test_a_crs_naming_an_init_file_is_refused_before_it_is_parsed() -> None:
    with pytest.raises(ValueError, match="may not name a file"):
        MintedRaster.model_validate_json(json.dumps(_record("+init=/etc/passwd:x"))).to_raster()


@pytest.mark.parametrize("what", ["raster.png", "export?format=geotiff"])
def test_a_crs_by_name_is_kept_as_its_code_and_drawn(agent: MapAgent, what: str) -> None:
    # "WGS 84" is a name pyproj finds and GDAL does not: kept as EPSG:4326, no server error.
    raster = Raster(np.ones((10, 10), "float32"), (0.1, 0.0, 24.0, 0.0, -0.1, 61.0), "WGS 84")
    assert raster.crs == "EPSG:4326"
    response = run(call(_store(agent, raster), "GET", PICTURE.replace("raster.png", what)))
    assert response.status_code == 200


def test_a_picture_that_cannot_be_placed_is_refused_without_reading_the_grid(
    agent: MapAgent, monkeypatch: pytest.MonkeyPatch
) -> None:
    import geomint.server.routes.rasters as routes

    decoded: list[int] = []
    original = routes.bytes_raster
    monkeypatch.setattr(routes, "bytes_raster", lambda data: decoded.append(1) or original(data))
    # entirely north of where Web Mercator ends (85.05°)
    polar = Raster(np.ones((20, 20)), (0.01, 0.0, 10.0, 0.0, -0.01, 89.0), "EPSG:4326")
    app = _store(agent, polar)
    for _ in range(3):
        assert run(call(app, "GET", PICTURE)).status_code == 422
    assert decoded == []


def test_one_reply_may_not_declare_more_raster_cells_than_one_raster_may() -> None:
    side = int(MAX_RASTER_CELLS**0.5)
    layers = [{"label": f"l{i}", "raster": _record("EPSG:4326", (side, side)), "line": 1}
              for i in range(2)]  # fmt: skip
    reply = {
        "ok": True, "value": None, "error": None, "figures": [], "layers": layers,
        "stdout": "", "stdout_truncated": False, "returned_none": False,
    }  # fmt: skip
    with pytest.raises(ValidationError, match="cells, over"):
        Reply.parse(json.dumps(reply).encode())
    layers.pop()
    assert Reply.parse(json.dumps(reply).encode()).layers[0].raster is not None


def test_the_sandbox_says_so_before_minting_too_many_cells() -> None:
    from geomint.sandbox._mint import MAX_LAYER_CELLS, Mint

    mint = Mint()
    side = int(MAX_LAYER_CELLS**0.5)
    grid = Raster(np.zeros((side, side), "uint8"), (1, 0, 0, 0, -1, 0), "EPSG:3067")
    mint.layer(grid, "first")
    with pytest.raises(ValueError, match="cells in all"):
        mint.layer(grid, "second")
