"""A template process: imports a handler's libraries once, then forks confined children.

Started by :class:`geomint.confine.WorkerProcess` as
``python -I -m geomint.confine._template FD HANDLER SETTINGS`` with an allow-listed
environment. ``HANDLER`` names a module with two functions:

- ``prepare(settings) -> state``: import and warm what the children need, once;
- ``serve(sock, state, report)``: run in each child once it is confined, with the
  socket to the host as its only open descriptor and the layers it reached.

The template never sees a request, an input or a reply. For each spawn message it
forks a child, hands the host one end of a fresh socket pair plus a pidfd for the child,
and forgets both. The child confines itself (:func:`geomint.confine.confine`), says it is
ready (or why it refused), and only then calls the handler. Where the machine allows, the
template first moves into a minimal root (:func:`enter_minimal_root`) that every child
inherits, so that work is done once, not per child.
"""

from __future__ import annotations

import contextlib
import gc
import importlib
import json
import os
import select
import signal
import socket
import sys
import tempfile
from dataclasses import replace
from typing import Any, Final

from geomint.confine import _landlock, _seccomp, _wire
from geomint.confine._layers import (
    BASE,
    SCRATCH,
    ConfineConfig,
    ConfinementError,
    collapse_to_huge_pages,
    confine,
    default_read_paths,
    enter_minimal_root,
    memory_cgroup,
    own_address_space,
    prefer_as_oom_victim,
)

__all__ = ["main"]

_SPAWN: Final = {b"Si": "isolated", b"Sr": "restricted"}


#: A template's own directory is this prefix, its pid and a random part.
_BASE_PREFIX: Final = "geomint-confine-"


def _serve(sock: socket.socket, handler: Any, state: Any, config: ConfineConfig) -> None:
    try:
        report = confine(sock.fileno(), config)
    except (ConfinementError, OSError) as exc:
        sock.sendall(_wire.REFUSED)
        _wire.write_frame(sock, str(exc).encode()[:1000])
        return
    tempfile.tempdir = os.getcwd()  # its scratch: /tmp may be a read-only folder here
    sock.sendall(_wire.READY)
    handler.serve(sock, state, report)


def _spawn(ctrl: socket.socket, handler: Any, state: Any, config: ConfineConfig) -> int:
    host_end, child_end = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
    pid = os.fork()
    if pid == 0:  # the child: never returns
        code = 0
        try:
            ctrl.close()
            host_end.close()
            _serve(child_end, handler, state, config)
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


def _probe(config: ConfineConfig) -> dict[str, Any]:
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


def _remove_tree(path: str) -> None:
    """Delete a tree iteratively: no recursion limit, links never followed."""
    stack = [path]
    dirs: list[str] = []
    while stack:
        current = stack.pop()
        dirs.append(current)
        with contextlib.suppress(OSError), os.scandir(current) as entries:
            for entry in entries:
                if entry.is_dir(follow_symlinks=False):
                    stack.append(entry.path)
                else:
                    with contextlib.suppress(OSError):
                        os.unlink(entry.path)
    for directory in reversed(dirs):
        with contextlib.suppress(OSError):
            os.rmdir(directory)


def _discard(path: str) -> None:
    """Delete a dead child's scratch tree beside the template, never blocking it.

    The tree is the child's own work: it may nest thousands of directories or hold a
    great many files. A forked helper walks it without recursion while the template
    goes on forking.
    """
    pid = os.fork()
    if pid == 0:
        try:
            _remove_tree(path)
        finally:
            os._exit(0)


def _sweep_stale_bases() -> None:
    """Delete the directories of templates that died without removing them.

    A template's directory is ``geomint-confine-<pid>-...`` in the temporary folder; its
    host removes it on close, but a host killed with SIGKILL cannot. Only directories of
    this uid whose template is gone are deleted (what a dead template leaves is empty or
    nearly: the children's scratch was a tmpfs of their own).
    """
    folder = tempfile.gettempdir()
    with contextlib.suppress(OSError), os.scandir(folder) as entries:
        for entry in entries:
            parts = entry.name.split("-")
            if len(parts) < 4 or not entry.name.startswith(_BASE_PREFIX):
                continue
            try:
                pid = int(parts[2])
                owner = entry.stat(follow_symlinks=False).st_uid
                if not entry.is_dir(follow_symlinks=False) or owner != os.getuid():
                    continue
                os.kill(pid, 0)
            except ProcessLookupError:
                _remove_tree(entry.path)  # its template is gone; what is left is small
            except (ValueError, OSError):
                continue


def _restricted(config: ConfineConfig, base: str) -> ConfineConfig:
    """The same limits with a fresh scratch directory of its own (no mount namespace)."""
    return replace(config, scratch_dir=tempfile.mkdtemp(dir=base))


def _fail(ctrl: socket.socket, exc: BaseException) -> int:
    ctrl.send(json.dumps({"ok": False, "reason": f"{type(exc).__name__}: {exc}"}).encode())
    return 1


def main(argv: list[str]) -> int:
    """Run the template: prepare, move into the minimal root, probe, fork per message."""
    ctrl = socket.socket(fileno=int(argv[1]))
    ctrl.set_inheritable(False)
    settings = json.loads(argv[3])
    _sweep_stale_bases()
    host_base = tempfile.mkdtemp(prefix=f"{_BASE_PREFIX}{os.getpid()}-")
    os.chmod(host_base, 0o711)  # noqa: S103 - children (uids of their own) reach their own subdirectory only
    read_paths = tuple(settings.get("read_paths") or default_read_paths())
    oom = prefer_as_oom_victim()
    cgroup = memory_cgroup()
    try:
        handler = importlib.import_module(argv[2])
        state = handler.prepare(settings)
    except Exception as exc:
        return _fail(ctrl, exc)
    # Work every child would repeat, done once: the children inherit the answers.
    _landlock.landlock_abi()
    if _seccomp.seccomp_available():
        _seccomp.compiled_filter()
    huge_mb = collapse_to_huge_pages()
    own_size = own_address_space()
    base, scratch, root_reason = host_base, "", ""
    try:
        enter_minimal_root(read_paths, host_base)
        base, scratch = BASE, SCRATCH
    except (ConfinementError, OSError) as exc:
        root_reason = str(exc)
    configs = {
        level: ConfineConfig(
            level=level, memory_mb=settings["memory_mb"], cpu_s=settings["cpu_s"],
            scratch_mb=settings["scratch_mb"], read_paths=read_paths, own_size=own_size,
            scratch_dir=scratch if level == "isolated" else "", minimal_root=bool(scratch),
        )
        for level in ("isolated", "restricted")
    }  # fmt: skip
    probes = {
        "isolated": _probe(configs["isolated"]),
        "restricted": _probe(_restricted(configs["restricted"], base)),
    }
    if root_reason and not probes["isolated"]["ok"]:
        probes["isolated"]["reason"] = f"no minimal root: {root_reason}"
    for probe in probes.values():
        probe["oom_victim"] = oom
        probe["memory_cgroup"] = cgroup
    signal.signal(signal.SIGCHLD, signal.SIG_IGN)  # the kernel reaps children for us
    gc.collect()
    gc.freeze()  # children then leave the template's objects' pages untouched
    hello = {"ok": True, "pid": os.getpid(), "probes": probes, "base": host_base,
             "huge_pages_mb": huge_mb}  # fmt: skip
    ctrl.send(json.dumps(hello).encode())

    scratch_dirs: dict[int, str] = {}  # pidfd -> per-child scratch (restricted mode only)
    try:
        while True:
            watched: list[int] = [ctrl.fileno(), *scratch_dirs]
            readable, _, _ = select.select(watched, [], [])
            for fd in [f for f in readable if f in scratch_dirs]:
                _discard(scratch_dirs.pop(fd))
                os.close(fd)
            if ctrl.fileno() not in readable:
                continue
            message = ctrl.recv(1024)
            if not message:
                return 0
            if message[:2] not in _SPAWN:
                return 2  # the host speaks this protocol only; anything else is a bug
            config = configs[_SPAWN[message[:2]]]
            if len(message) > 2:  # this child's own limits (intake sizes them per file)
                limits = json.loads(message[2:])
                config = replace(
                    config,
                    memory_mb=int(limits.get("memory_mb", config.memory_mb)),
                    cpu_s=int(limits.get("cpu_s", config.cpu_s)),
                    scratch_mb=int(limits.get("scratch_mb", config.scratch_mb)),
                )
            child_dir = ""
            if config.level == "restricted":
                config = _restricted(config, base)
                child_dir = config.scratch_dir
            pidfd = _spawn(ctrl, handler, state, config)
            if child_dir:
                scratch_dirs[pidfd] = child_dir
            else:
                os.close(pidfd)
    finally:
        _remove_tree(base)  # its contents; the host removes the directory itself


if __name__ == "__main__":
    sys.exit(main(sys.argv))
