"""Intake's handler in a confinement template: import the readers once, judge one source.

The template (:mod:`geomint.confine._template`) calls :func:`prepare` once, with GDAL
told to skip every network driver and every driver but the few intake reads
deregistered; each child it forks confines itself and then calls :func:`serve`, which
reads the source from the one descriptor the host sent, runs the whole pipeline
(:func:`geomint.intake._pipeline.judge`) and answers with one JSON frame.
"""

from __future__ import annotations

import gc
import json
import os
import socket
from pathlib import Path
from typing import Any, Final

from geomint.confine import _wire

__all__ = ["prepare", "serve"]

_MAX_REQUEST: Final = 1 << 16
_WARM: Final = (
    (b'{"type":"FeatureCollection","features":[{"type":"Feature","properties":{"a":1},'
     b'"geometry":{"type":"Polygon","coordinates":[[[0,0],[1,0],[1,1],[0,1],[0,0]]]}}]}',
     "geojson"),
    (b"name,wkt\na,POINT (1 2)\n", "csv"),
    (b"name,lon,lat\na,1,2\n", "csv"),
)  # fmt: skip


def prepare(settings: dict[str, Any]) -> None:
    """Import the readers and run the pipeline once on tiny inputs, before any fork."""
    from geomint.intake._convert import NETWORK_DRIVERS  # noqa: PLC0415

    os.environ["GDAL_SKIP"] = NETWORK_DRIVERS
    os.environ["GDAL_HTTP_TIMEOUT"] = "1"
    import geopandas  # noqa: F401, PLC0415 - loaded once here, inherited by every child
    import pyarrow.dataset  # noqa: PLC0415 - what geopandas reads GeoParquet with
    import pyarrow.parquet  # noqa: F401, PLC0415
    import pyogrio  # noqa: F401, PLC0415
    import rasterio  # noqa: PLC0415 - GeoTIFF (its own GDAL, the same drivers skipped)
    import rasterio.io  # noqa: PLC0415

    from geomint.intake import _convert, _pipeline  # noqa: PLC0415

    _convert.restrict_drivers()
    for raw, fmt in _WARM:
        _pipeline.judge(raw, fmt, "warm-up", max_bytes=1 << 20, layer=None, scratch=Path("."))
    _warm_raster(rasterio)


def _warm_raster(rasterio: Any) -> None:
    """Write and read a tiny GeoTIFF, so GTiff's code and PROJ's tables load before forks."""
    import numpy as np  # noqa: PLC0415

    from geomint.intake._raster import read_geotiff  # noqa: PLC0415

    origin = rasterio.transform.from_origin(0, 2, 1, 1)
    profile = {"driver": "GTiff", "width": 2, "height": 2, "count": 1, "dtype": "uint8",
               "crs": "EPSG:4326", "transform": origin}  # fmt: skip
    with rasterio.io.MemoryFile() as memory:
        with memory.open(**profile) as dataset:
            dataset.write(np.zeros((1, 2, 2), dtype="uint8"))
        read_geotiff(memory.read(), "warm-up")


def serve(sock: socket.socket, _state: None, report: dict[str, Any]) -> None:
    """Read the request and the source, judge it, answer; a refusal is an answer too."""
    from geomint.intake import _pipeline  # noqa: PLC0415 - imported by prepare already
    from geomint.intake.errors import IntakeError  # noqa: PLC0415

    # A child lives for one source and exits without tearing down: the cyclic collector
    # would only rescan the millions of containers the parse and the walk keep alive.
    gc.disable()
    fds = _wire.receive_descriptors(sock, limit=1)
    request = json.loads(_wire.read_frame(sock, limit=_MAX_REQUEST))
    max_bytes = int(request["max_bytes"])
    raw = _read_all(fds[0], max_bytes)
    name = str(request["name"])
    if raw is None:
        answer = {"ok": False, "problems": [f"the source grew past the {max_bytes:,}-byte limit"]}
        _wire.write_frame(sock, json.dumps(answer).encode())
        return
    if request["format"] == "geotiff":
        _wire.write_frame(sock, _raster_answer(raw, name))
        sock.shutdown(socket.SHUT_WR)
        return
    try:
        judged = _pipeline.judge(
            raw,
            str(request["format"]),
            name,
            max_bytes=max_bytes,
            layer=request.get("layer"),
            scratch=Path(os.getcwd()),
            format_name=request.get("format_name"),
            source_crs=request.get("source_crs", "EPSG:4326"),
        )
    except IntakeError as exc:
        payload = json.dumps({"ok": False, "problems": list(exc.problems)}).encode()
    except MemoryError:
        payload = json.dumps({"ok": False, "memory": True}).encode()
    else:
        del raw
        payload = _pipeline.encode(judged)
    _wire.write_frame(sock, payload)
    sock.shutdown(socket.SHUT_WR)


def _raster_answer(raw: bytes, name: str) -> bytes:
    from geomint.intake._raster import RasterRefusedError, read_geotiff  # noqa: PLC0415

    try:
        return read_geotiff(raw, name)
    except RasterRefusedError as exc:
        return json.dumps({"ok": False, "problems": [str(exc)]}).encode()
    except MemoryError:
        return json.dumps({"ok": False, "memory": True}).encode()


def _read_all(fd: int, max_bytes: int) -> bytes | None:
    """The whole source from its descriptor; None when it holds more than ``max_bytes``."""
    chunks: list[bytes] = []
    size = 0
    with os.fdopen(fd, "rb", buffering=0) as source:
        while chunk := source.read(min(1 << 22, max_bytes + 1 - size) or 1):
            chunks.append(chunk)
            size += len(chunk)
            if size > max_bytes:
                return None
    return b"".join(chunks)
