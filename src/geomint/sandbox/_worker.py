"""The sandbox's handler in a confinement template: import the libraries, run one body.

The template (:mod:`geomint.confine._template`) is exec'd with an allow-listed
environment (no API keys, single-threaded BLAS), calls :func:`prepare` once, and forks a
child per spawn message. Each child confines itself and only then calls :func:`serve`,
which reads its one request (with the entry descriptors it may map), runs it, replies
and returns. Nothing the template does depends on what a child says.
"""

from __future__ import annotations

import gc
import json
import os
import select
import socket
from typing import Any, Final

from geomint.confine import _wire
from geomint.sandbox import _entries, _guards, _runtime
from geomint.sandbox._entries import LazyFeatureCollection, Raster, open_entry, resolve_entries
from geomint.sandbox.results import encode_json

__all__ = ["prepare", "serve"]

_MAX_REQUEST: Final = 1 << 31
_WARM_BODY: Final = (
    "df = pd.DataFrame({'a': [1, 2, 2]})\n"
    "g = gpd.GeoDataFrame(df, geometry=gpd.points_from_xy([0, 1, 2], [0, 1, 2]), crs=4326)\n"
    "c = h3.latlng_to_cell(52.5, 13.4, 9)\n"
    "d = pyproj.Geod(ellps='WGS84').inv(0, 0, 1, 1)\n"
    "t = shapely.STRtree(list(g.geometry))\n"
    "mint.value(len(df), 'rows')\n"
    "return {'n': df.groupby('a').size().to_dict(), 'g': g.head(1), 'cell': c, 'd': d[2]}\n"
)


def prepare(settings: dict[str, Any]) -> dict[str, Any]:
    """Import the libraries and run a representative body once, before any fork."""
    libraries = _runtime.load_libraries()
    _guards.install(_runtime.BUILTINS)
    reply = _runtime.execute(_WARM_BODY, {}, libraries=libraries)
    if not reply["ok"]:
        raise RuntimeError(f"warm-up failed: {reply['error']}")
    encode_json(reply)
    return libraries


def serve(sock: socket.socket, libraries: dict[str, Any], _report: dict[str, Any]) -> None:
    """Read requests until the call arrives (building ahead before it), run it, reply."""
    _entries.freeze_built = True
    opened: dict[tuple[str, int], LazyFeatureCollection | Raster] = {}
    while True:
        fds = _wire.receive_descriptors(sock)
        gc.disable()  # decoding a large request builds many objects; nothing to collect yet
        request = json.loads(_wire.read_frame(sock, limit=_MAX_REQUEST))
        gc.enable()
        keys = [(str(key[0]), int(key[1])) for key in request["entries"]]
        for key, fd in zip(keys, fds, strict=True):
            if key in opened:
                os.close(fd)
            else:
                opened[key] = open_entry(fd)
        if request["op"] == "call":
            break
        _build_ahead(sock, [opened[k] for k in keys], request)
    collections = [opened[k] for k in keys]
    inputs = resolve_entries(request["inputs"], collections.__getitem__)
    _guards.enabled = bool(request.get("checks", True))
    reply = _runtime.execute(
        request["source"],
        inputs,
        libraries=libraries,
        dropped=request["dropped"],
        stdout_limit=request["stdout_limit"],
        mapview=request.get("mapview"),
    )
    if _guards.refusals:  # a guard refused text, whatever the body did after
        message, line = _guards.refusals[0]
        reply = {**reply, "ok": False, "value": None, "figures": [], "layers": [],
                 "returned_none": False, "map_ops": [], "error": {"type": "GateRefused",
                 "message": message[:2000], "line": line, "code_line": None,
                 "phase": "run"}}  # fmt: skip
    # A raster is mapped as it is: nothing of it to build ahead for the next call.
    reply["used_features"] = [i for i, c in enumerate(collections) if _used(c, "used_features")]
    reply["used_frames"] = [i for i, c in enumerate(collections) if _used(c, "used_frame")]
    try:
        payload = encode_json(reply)
    except (TypeError, ValueError) as exc:  # the body tampered with what it returned
        payload = encode_json({**reply, "ok": False, "value": None, "figures": [],
                               "layers": [], "error": {"type": type(exc).__name__,
                               "message": f"the result could not be encoded: {exc}"[:2000],
                               "line": 0, "code_line": None, "phase": "result"}})  # fmt: skip
    _wire.write_frame(sock, payload)
    sock.shutdown(socket.SHUT_WR)


def _used(opened: LazyFeatureCollection | Raster, what: str) -> bool:
    return isinstance(opened, LazyFeatureCollection) and bool(getattr(opened, what))


def _build_ahead(
    sock: socket.socket, collections: list[LazyFeatureCollection | Raster], request: dict[str, Any]
) -> None:
    """Build what the last call read while no request waits; stop as soon as one does."""

    def waiting() -> bool:
        return bool(select.select([sock], [], [], 0)[0])

    for index in request.get("frames", []):
        if waiting():
            return
        opened = collections[index]
        if isinstance(opened, LazyFeatureCollection):
            opened.prepare_frame()
    for index in request.get("features", []):
        opened = collections[index]
        if isinstance(opened, LazyFeatureCollection) and not opened.build(stop=waiting):
            return
