"""The sandbox worker: a template process that imports the libraries once and forks.

Started by the host as ``python -I -m geomint.sandbox._worker FD`` with an allow-listed
environment (no API keys, single-threaded BLAS). The template never sees a request, an
input or a reply: for each ``spawn`` message it forks a child, hands the host one end of a
fresh socket pair plus a pidfd for the child, and forgets both. The child confines itself
(:mod:`geomint.sandbox._confine`), says it is ready, and only then reads its one request,
runs it, replies and exits. Nothing the template does depends on what a child says.
"""

from __future__ import annotations

import contextlib
import gc
import json
import os
import select
import shutil
import signal
import socket
import sys
import tempfile
from dataclasses import replace
from typing import Any, Final

from geomint.sandbox import _entries, _protocol, _runtime
from geomint.sandbox._confine import ConfineConfig, ConfinementError, confine, default_read_paths
from geomint.sandbox._entries import LazyFeatureCollection, open_entry, resolve_entries
from geomint.sandbox.results import encode_json

__all__ = ["main"]

_MAX_REQUEST: Final = 1 << 31
_RM: Final = "/bin/rm"
_SPAWN: Final = {b"Si": "isolated", b"Sr": "restricted"}
_WARM_BODY: Final = (
    "df = pd.DataFrame({'a': [1, 2, 2]})\n"
    "g = gpd.GeoDataFrame(df, geometry=gpd.points_from_xy([0, 1, 2], [0, 1, 2]), crs=4326)\n"
    "c = h3.latlng_to_cell(52.5, 13.4, 9)\n"
    "d = pyproj.Geod(ellps='WGS84').inv(0, 0, 1, 1)\n"
    "t = shapely.STRtree(list(g.geometry))\n"
    "mint.value(len(df), 'rows')\n"
    "return {'n': df.groupby('a').size().to_dict(), 'g': g.head(1), 'cell': c, 'd': d[2]}\n"
)


def _warm(libraries: dict[str, Any]) -> None:
    """Run a representative body once so its code paths are loaded before forking."""
    reply = _runtime.execute(_WARM_BODY, {}, libraries=libraries)
    if not reply["ok"]:
        raise RuntimeError(f"warm-up failed: {reply['error']}")
    encode_json(reply)


def _serve(sock: socket.socket, libraries: dict[str, Any], config: ConfineConfig) -> None:
    try:
        confine(sock.fileno(), config)
    except (ConfinementError, OSError) as exc:
        sock.sendall(_protocol.REFUSED)
        _protocol.write_frame(sock, str(exc).encode()[:1000])
        return
    _entries.freeze_built = True
    sock.sendall(_protocol.READY)
    opened: dict[tuple[str, int], LazyFeatureCollection] = {}
    while True:
        fds = _protocol.receive_descriptors(sock)
        gc.disable()  # decoding a large request builds many objects; nothing to collect yet
        request = json.loads(_protocol.read_frame(sock, limit=_MAX_REQUEST))
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
    reply = _runtime.execute(
        request["source"],
        inputs,
        libraries=libraries,
        dropped=request["dropped"],
        stdout_limit=request["stdout_limit"],
    )
    reply["used_features"] = [i for i, c in enumerate(collections) if c.used_features]
    reply["used_frames"] = [i for i, c in enumerate(collections) if c.used_frame]
    try:
        payload = encode_json(reply)
    except (TypeError, ValueError) as exc:  # the body tampered with what it returned
        payload = encode_json({**reply, "ok": False, "value": None, "figures": [],
                               "layers": [], "error": {"type": type(exc).__name__,
                               "message": f"the result could not be encoded: {exc}"[:2000],
                               "line": 0, "code_line": None, "phase": "result"}})  # fmt: skip
    _protocol.write_frame(sock, payload)
    sock.shutdown(socket.SHUT_WR)


def _build_ahead(
    sock: socket.socket, collections: list[LazyFeatureCollection], request: dict[str, Any]
) -> None:
    """Build what the last call read while no request waits; stop as soon as one does."""

    def waiting() -> bool:
        return bool(select.select([sock], [], [], 0)[0])

    for index in request.get("frames", []):
        if waiting():
            return
        collections[index].prepare_frame()
    for index in request.get("features", []):
        if not collections[index].build(stop=waiting):
            return


def _spawn(ctrl: socket.socket, libraries: dict[str, Any], config: ConfineConfig) -> int:
    host_end, child_end = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
    pid = os.fork()
    if pid == 0:  # the child: never returns
        code = 0
        try:
            ctrl.close()
            host_end.close()
            _serve(child_end, libraries, config)
        except BaseException:
            code = 1
        finally:
            os._exit(code)
    child_end.close()
    pidfd = os.pidfd_open(pid)
    try:
        message = json.dumps({"pid": pid}).encode()
        socket.send_fds(ctrl, [message], [host_end.fileno(), pidfd])
    finally:
        host_end.close()
    return pidfd


def _probe(libraries: dict[str, Any], config: ConfineConfig) -> dict[str, Any]:
    """Fork once and confine, to learn which layers this machine allows."""
    reader, writer = os.pipe()
    pid = os.fork()
    if pid == 0:
        try:
            os.close(reader)
            report: dict[str, Any] = confine(writer, config)
            report["ok"] = True
        except BaseException as exc:
            report = {"ok": False, "reason": f"{type(exc).__name__}: {exc}"}
        os.write(writer, json.dumps(report).encode())
        os._exit(0)
    os.close(writer)
    chunks = []
    while chunk := os.read(reader, 65536):
        chunks.append(chunk)
    os.close(reader)
    os.waitpid(pid, 0)
    try:
        result: dict[str, Any] = json.loads(b"".join(chunks) or b"{}")
    except ValueError:
        result = {"ok": False, "reason": "the probe child died"}
    return result


def _discard(path: str) -> None:
    """Delete a dead child's scratch tree without recursing or blocking in the worker.

    The tree is the child's own work: it may nest thousands of directories (which made
    ``shutil.rmtree`` raise RecursionError and end the worker) or hold a great many
    files. ``rm`` walks any depth, never follows a link, and runs beside the worker.
    """
    try:
        os.posix_spawn(_RM, [_RM, "-rf", "--one-file-system", "--", path], {})
    except OSError:  # no rm here: delete in-process, keeping the worker alive
        with contextlib.suppress(RecursionError):
            shutil.rmtree(path, ignore_errors=True)


def _restricted(config: ConfineConfig, base: str) -> ConfineConfig:
    """The same limits with a fresh scratch directory of its own (no mount namespace)."""
    return replace(config, scratch_dir=tempfile.mkdtemp(dir=base))


def main(argv: list[str]) -> int:
    """Run the template: import, warm, probe, then fork a child per spawn message."""
    ctrl = socket.socket(fileno=int(argv[1]))
    ctrl.set_inheritable(False)  # not for the helpers _discard starts
    settings = json.loads(argv[2])
    base = tempfile.mkdtemp(prefix="geomint-sandbox-")
    os.chmod(base, 0o711)  # noqa: S103 - children (uid 65534) reach their own subdirectory only
    read_paths = tuple(settings.get("read_paths") or default_read_paths())
    mount_point = os.path.join(base, "scratch")
    os.mkdir(mount_point, 0o755)  # isolated children mount their own tmpfs here if needed
    configs = {
        level: ConfineConfig(
            level=level, memory_mb=settings["memory_mb"], cpu_s=settings["cpu_s"],
            scratch_mb=settings["scratch_mb"], read_paths=read_paths, scratch_dir=mount_point,
        )
        for level in ("isolated", "restricted")
    }  # fmt: skip
    try:
        libraries = _runtime.load_libraries()
        _warm(libraries)
        probes = {
            "isolated": _probe(libraries, configs["isolated"]),
            "restricted": _probe(libraries, _restricted(configs["restricted"], base)),
        }
    except Exception as exc:
        ctrl.send(json.dumps({"ok": False, "reason": f"{type(exc).__name__}: {exc}"}).encode())
        return 1
    signal.signal(signal.SIGCHLD, signal.SIG_IGN)  # the kernel reaps children for us
    gc.collect()
    gc.freeze()  # children then leave the template's objects' pages untouched
    hello = {"ok": True, "pid": os.getpid(), "probes": probes, "base": base}
    ctrl.send(json.dumps(hello).encode())

    scratch: dict[int, str] = {}  # pidfd -> per-child scratch (restricted mode only)
    try:
        while True:
            watched: list[int] = [ctrl.fileno(), *scratch]
            readable, _, _ = select.select(watched, [], [])
            for fd in [f for f in readable if f in scratch]:
                _discard(scratch.pop(fd))
                os.close(fd)
            if ctrl.fileno() not in readable:
                continue
            message = ctrl.recv(64)
            if not message:
                return 0
            if message not in _SPAWN:
                return 2  # the host speaks this protocol only; anything else is a bug
            config = configs[_SPAWN[message]]
            child_dir = ""
            if config.level == "restricted":
                config = _restricted(config, base)
                child_dir = config.scratch_dir
            pidfd = _spawn(ctrl, libraries, config)
            if child_dir:
                scratch[pidfd] = child_dir
            else:
                os.close(pidfd)
    finally:
        _discard(base)


if __name__ == "__main__":
    sys.exit(main(sys.argv))
