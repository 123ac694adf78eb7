"""Restricted mode under a worker that is not root: the child keeps the host's uid.

That is the deployment restricted mode exists for (an unprivileged container), and there
no uid drop separates the child from the host's own files and processes: file modes
allow everything, so only Landlock and seccomp stand in the way. A forked child takes a
test uid (standing for the host's user), confines itself exactly as a sandbox child does,
and attacks files and a bystander process of that same uid. The same body run without
confinement is the positive control. The ``no-scope`` variant confines with Landlock's
signal scope switched off, as on kernels before Landlock ABI 6, to show seccomp alone
keeps SIGIO from reaching another process.
"""

from __future__ import annotations

import fcntl
import json
import os
import resource
import shutil
import signal
import struct
import subprocess
import sys
import tempfile
import time
import warnings
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from geomint.confine import _landlock, _layers
from geomint.confine._layers import ConfineConfig, confine, default_read_paths
from geomint.confine._seccomp import seccomp_available

from ._harness import scheduling_of

pytestmark = [
    pytest.mark.redteam,
    pytest.mark.isolation,
    pytest.mark.skipif(os.geteuid() != 0, reason="taking another uid needs root"),
    pytest.mark.skipif(not seccomp_available(), reason="the kernel lacks seccomp filters"),
    pytest.mark.skipif(_landlock.landlock_abi() < 1, reason="the kernel lacks Landlock"),
]

HOST_UID = 54321  # stands for the unprivileged user the host runs as
_GETFLAGS, _SETFLAGS = 0x80086601, 0x40086602
_SYNC_NOATIME = 0x8 | 0x80


@dataclass
class HostUser:
    inside: str  # a 0600 file of the host's user inside a read path (an app checkout)
    outside: str  # a 0600 file of the host's user outside every read path (a database)
    scratch: str
    bystander: subprocess.Popen[bytes]  # a process of the host's user (the host itself)

    def state(self) -> dict[str, Any]:
        return {
            path: (os.stat(path).st_mode, os.stat(path).st_mtime_ns, _flags(path),
                   os.listxattr(path))
            for path in (self.inside, self.outside)
        } | {"bystander": scheduling_of(self.bystander.pid)}  # fmt: skip


def _flags(path: str) -> int:
    fd = os.open(path, os.O_RDONLY)
    try:
        return int(struct.unpack("l", fcntl.ioctl(fd, _GETFLAGS, b"\0" * 8))[0])
    finally:
        os.close(fd)


def _own(path: str, mode: int) -> None:
    os.chown(path, HOST_UID, HOST_UID)
    os.chmod(path, mode)


@pytest.fixture
def host_user() -> Iterator[HostUser]:
    made = [
        tempfile.mkdtemp(prefix="redteam-hostuser-", dir=sys.prefix),
        tempfile.mkdtemp(prefix="redteam-hostuser-", dir="/tmp"),
    ]
    inside, outside = os.path.join(made[0], "settings.env"), os.path.join(made[1], "app.db")
    for path in (inside, outside):
        Path(path).write_text("KEY=value\n")
        _own(path, 0o600)
    _own(made[0], 0o755)
    _own(made[1], 0o700)
    scratch = tempfile.mkdtemp(dir=made[1])
    _own(scratch, 0o700)
    bystander = subprocess.Popen(
        ["/bin/cat"], stdin=subprocess.PIPE, stdout=subprocess.DEVNULL,
        user=HOST_UID, group=HOST_UID, extra_groups=[],
    )  # fmt: skip
    try:
        yield HostUser(inside, outside, scratch, bystander)
    finally:
        if bystander.poll() is None:
            bystander.kill()
        bystander.wait(timeout=5)
        assert bystander.stdin is not None
        bystander.stdin.close()
        for path in made:
            shutil.rmtree(path, ignore_errors=True)


def _attack(user: HostUser) -> dict[str, str]:
    """Everything a same-uid child could do to the host's files and processes."""

    def attempt(action: Any) -> str:
        try:
            action()
        except OSError as exc:
            return os.strerror(exc.errno or 0)
        return "ok"

    def chattr() -> None:
        fd = os.open(user.inside, os.O_RDONLY)
        fcntl.ioctl(fd, _SETFLAGS, struct.pack("l", _SYNC_NOATIME))

    def sigio_kill() -> None:
        r, w = os.pipe()
        fcntl.fcntl(r, fcntl.F_SETOWN, user.bystander.pid)
        fcntl.fcntl(r, 10, signal.SIGKILL)  # F_SETSIG
        fcntl.fcntl(r, fcntl.F_SETFL, fcntl.fcntl(r, fcntl.F_GETFL) | os.O_ASYNC)
        os.write(w, b"x")
        time.sleep(0.05)

    pid = user.bystander.pid
    return {
        "write_outside": attempt(lambda: os.open(user.outside, os.O_WRONLY)),
        "read_outside": attempt(lambda: os.open(user.outside, os.O_RDONLY)),
        "setxattr_outside": attempt(lambda: os.setxattr(user.outside, "user.x", b"planted")),
        "utime_outside": attempt(lambda: os.utime(user.outside, (0, 0))),
        "chattr_readonly_fd": attempt(chattr),
        "chmod_inside": attempt(lambda: os.chmod(user.inside, 0o666)),
        "fchmod_readonly_fd": attempt(lambda: os.fchmod(os.open(user.inside, os.O_RDONLY), 0o644)),
        "chmod_outside": attempt(lambda: os.chmod(user.outside, 0o000)),
        "prlimit_host": attempt(lambda: resource.prlimit(pid, resource.RLIMIT_NOFILE, (3, 3))),
        "affinity_host": attempt(lambda: os.sched_setaffinity(pid, {0})),
        "sigio_kill_host": attempt(sigio_kill),
        "kill_host": attempt(lambda: os.kill(pid, signal.SIGKILL)),
    }


def _run(user: HostUser, *, confined: bool, scope: bool = True) -> dict[str, str]:
    reader, writer = os.pipe()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)  # fork with threads: see below
        pid = os.fork()
    if pid == 0:  # the child only confines, attacks, reports and leaves with os._exit
        code = 0
        try:
            os.close(reader)
            os.setgroups([])
            os.setresgid(HOST_UID, HOST_UID, HOST_UID)
            os.setresuid(HOST_UID, HOST_UID, HOST_UID)
            if confined:
                original = _landlock.apply_landlock
                _layers._landlock.apply_landlock = (  # type: ignore[attr-defined]
                    lambda **kw: original(**{**kw, "scope": scope})
                )
                config = ConfineConfig(
                    level="restricted", memory_mb=512, cpu_s=10,
                    scratch_dir=user.scratch, read_paths=default_read_paths(),
                )  # fmt: skip
                report = confine(writer, config)
                assert not report["uid_drop"]  # the point: the child keeps the host's uid
            payload = json.dumps(_attack(user)).encode()
        except BaseException as exc:
            payload, code = json.dumps({"error": repr(exc)}).encode(), 3
        os.write(writer, payload)
        os._exit(code)
    os.close(writer)
    with os.fdopen(reader, "rb") as handle:
        data = handle.read()
    os.waitpid(pid, 0)
    return dict(json.loads(data))


@pytest.mark.parametrize("scope", [True, False], ids=["landlock-scope", "no-scope"])
def test_a_same_uid_child_cannot_touch_the_hosts_files_or_processes(
    host_user: HostUser, scope: bool
) -> None:
    before = host_user.state()
    outcomes = _run(host_user, confined=True, scope=scope)
    assert "error" not in outcomes, outcomes
    refused = {"Operation not permitted", "Permission denied"}
    assert {k for k, v in outcomes.items() if v not in refused} == set(), outcomes
    time.sleep(0.1)
    assert host_user.bystander.poll() is None, "the host's process was killed"
    assert host_user.state() == before, "the host's files or process changed"


def test_positive_control_without_confinement(host_user: HostUser) -> None:
    outcomes = _run(host_user, confined=False)
    assert "error" not in outcomes, outcomes
    assert outcomes["write_outside"] == "ok" and outcomes["read_outside"] == "ok"
    for key in ("chmod_inside", "chmod_outside", "fchmod_readonly_fd", "utime_outside",
                "chattr_readonly_fd", "setxattr_outside", "prlimit_host", "affinity_host",
                "sigio_kill_host"):  # fmt: skip
        assert outcomes[key] == "ok", (key, outcomes)
    host_user.bystander.wait(timeout=5)
    assert host_user.bystander.returncode == -signal.SIGKILL  # SIGIO alone killed it
    assert os.stat(host_user.outside).st_mode & 0o777 == 0
    assert os.stat(host_user.inside).st_mode & 0o777 == 0o644
    assert _flags(host_user.inside) & _SYNC_NOATIME == _SYNC_NOATIME
    assert os.listxattr(host_user.outside) == ["user.x"]
