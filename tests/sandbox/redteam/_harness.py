"""Host-side instruments for the red-team suite: listeners, canaries, process checks.

Every assertion here is made from the host, about things the host can see for itself:
files that appeared, connections that arrived, processes that remain, text that came
back. Nothing a payload reports about itself is taken as proof of containment; its
report only proves that it really reached the capability it then failed to use.
"""

from __future__ import annotations

import contextlib
import ctypes
import dataclasses
import errno
import os
import selectors
import shutil
import socket
import stat
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from geomint.confine._layers import CHILD_ID_BASE
from geomint.sandbox import Sandbox, SandboxResult

NOBODY = 65534  # what tests drop to; children run as CHILD_ID_BASE + their pid
SECRET_ENV = "FAKE_API_KEY"
#: The sandbox children's budget beyond which "killed within timeout" would be violated.
KILL_SLACK_S = 0.5
#: Payloads that got past Gate 1 although they reach what it means to refuse (Gate 2
#: contained them); listed at the end of the run.
GATE1_BYPASSES: list[str] = []


# -- listeners -------------------------------------------------------------------------------


class Listeners:
    """TCP, UDP, UNIX-path and abstract UNIX listeners on this host, counting arrivals.

    A thread accepts every connection (and reads every datagram) and counts it, so a
    payload that reached any of them shows up as a non-zero count however it got there.
    """

    def __init__(self, directory: str) -> None:
        self.counts = {"tcp": 0, "udp": 0, "unix": 0, "abstract": 0}
        self._lock = threading.Lock()
        self._selector = selectors.DefaultSelector()
        self._stop_r, self._stop_w = os.pipe()
        self.tcp = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.tcp.bind(("127.0.0.1", 0))
        self.tcp.listen(64)
        self.udp = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self.udp.bind(("127.0.0.1", 0))
        self.unix_path = os.path.join(directory, "listener.sock")
        self.unix = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.unix.bind(self.unix_path)
        os.chmod(self.unix_path, 0o777)  # only the sandbox's layers, not file modes, may stop it
        self.unix.listen(64)
        self.abstract_name = f"geomint-redteam-{os.getpid()}-{id(self):x}"
        self.abstract = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.abstract.bind("\0" + self.abstract_name)
        self.abstract.listen(64)
        for kind, sock in (("tcp", self.tcp), ("unix", self.unix), ("abstract", self.abstract)):
            sock.setblocking(False)
            self._selector.register(sock, selectors.EVENT_READ, ("accept", kind))
        self.udp.setblocking(False)
        self._selector.register(self.udp, selectors.EVENT_READ, ("datagram", "udp"))
        self._selector.register(self._stop_r, selectors.EVENT_READ, ("stop", ""))
        self._thread = threading.Thread(target=self._serve, name="redteam-listeners", daemon=True)
        self._thread.start()

    @property
    def tcp_port(self) -> int:
        return int(self.tcp.getsockname()[1])

    @property
    def udp_port(self) -> int:
        return int(self.udp.getsockname()[1])

    def addresses(self) -> dict[str, Any]:
        """What a payload needs to aim at every listener."""
        return {
            "tcp_port": self.tcp_port,
            "udp_port": self.udp_port,
            "unix_path": self.unix_path,
            "abstract": self.abstract_name,
        }

    def _serve(self) -> None:
        while True:
            for key, _ in self._selector.select():
                action, kind = key.data
                if action == "stop":
                    return
                with contextlib.suppress(OSError):
                    if action == "accept":
                        conn, _ = key.fileobj.accept()  # type: ignore[union-attr]
                        conn.close()
                    else:
                        key.fileobj.recvfrom(65536)  # type: ignore[union-attr]
                    with self._lock:
                        self.counts[kind] += 1

    def total(self) -> int:
        with self._lock:
            return sum(self.counts.values())

    def wait_for(self, kind: str, at_least: int = 1, timeout_s: float = 5.0) -> int:
        """Wait until ``kind`` has counted ``at_least`` arrivals (for positive controls)."""
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            with self._lock:
                if self.counts[kind] >= at_least:
                    return self.counts[kind]
            time.sleep(0.01)
        with self._lock:
            return self.counts[kind]

    def close(self) -> None:
        os.write(self._stop_w, b"x")
        self._thread.join(timeout=5)
        for sock in (self.tcp, self.udp, self.unix, self.abstract):
            sock.close()
        os.close(self._stop_r)
        os.close(self._stop_w)
        self._selector.close()
        with contextlib.suppress(FileNotFoundError):
            os.unlink(self.unix_path)


# -- canaries --------------------------------------------------------------------------------


@dataclasses.dataclass
class Canaries:
    """Host places a payload must not change, writable by file modes for anyone.

    ``dirs`` are empty world-writable directories: one under ``/tmp`` (outside every path
    the child may read) and one inside the virtualenv (a path the child *may* read, so
    only Landlock's read-only rule stands between it and a write). ``victim`` is a
    world-writable file with known content, mode, times and no extended attributes, in a
    directory the child may read. ``tmp_target`` is a path in the host's ``/tmp`` that
    must never exist. ``planted`` is a file beside the restricted children's scratch
    directories (another child's scratch, as far as file modes go).
    """

    dirs: tuple[str, ...]
    victim: str
    tmp_target: str
    planted: str = ""
    planted_text: str = ""
    sysv: SysVObjects | None = None
    baseline: dict[str, Any] = dataclasses.field(default_factory=dict)

    def snapshot(self) -> dict[str, Any]:
        info = os.lstat(self.victim)
        return {
            "dirs": {d: sorted(os.listdir(d)) for d in self.dirs},
            "victim": (Path(self.victim).read_text(), stat.S_IMODE(info.st_mode),
                       info.st_uid, info.st_gid, info.st_mtime_ns, _xattrs(self.victim)),
            "victim_dir": sorted(os.listdir(os.path.dirname(self.victim))),
            "tmp_target": os.path.lexists(self.tmp_target),
            "planted": Path(self.planted).read_text() if self.planted else "",
            "sysv": self.sysv.snapshot() if self.sysv else None,
        }  # fmt: skip

    def context(self) -> dict[str, Any]:
        """What a payload needs to aim at the canaries."""
        return {
            "canary_dirs": list(self.dirs),
            "targets": [os.path.join(d, "escaped") for d in self.dirs],
            "victim": self.victim,
            "tmp_target": self.tmp_target,
            "planted": self.planted or "/nonexistent/planted",
            "shmid": self.sysv.shmid if self.sysv else -1,
            "semid": self.sysv.semid if self.sysv else -1,
        }


def _xattrs(path: str) -> list[str]:
    with contextlib.suppress(OSError):
        return sorted(os.listxattr(path, follow_symlinks=False))
    return []


@contextlib.contextmanager
def make_canaries(base_dirs: tuple[str, ...]) -> Iterator[Canaries]:
    """Canary directories under each of ``base_dirs``; the victim under the last one."""
    made: list[str] = []
    try:
        for base in base_dirs:
            path = tempfile.mkdtemp(prefix="redteam-canary-", dir=base)
            os.chmod(path, 0o777)
            made.append(path)
        victim_dir = tempfile.mkdtemp(prefix="redteam-victim-", dir=base_dirs[-1])
        os.chmod(victim_dir, 0o777)
        made.append(victim_dir)
        victim = os.path.join(victim_dir, "victim.txt")
        Path(victim).write_text("untouched\n")
        os.chmod(victim, 0o666)
        tmp_target = os.path.join(base_dirs[0], f"redteam-escape-{os.getpid()}-{id(made):x}")
        canaries = Canaries(dirs=tuple(made[:-1]), victim=victim, tmp_target=tmp_target)
        with contextlib.suppress(OSError):
            canaries.sysv = SysVObjects()
        canaries.baseline = canaries.snapshot()
        yield canaries
    finally:
        for path in made:
            shutil.rmtree(path, ignore_errors=True)
        with contextlib.suppress(NameError):
            if canaries.sysv is not None:
                canaries.sysv.close()


class SysVObjects:
    """A SysV shared memory segment and a semaphore on the host, mode 0666.

    Restricted mode shares the host's IPC namespace: only seccomp keeps a child from
    objects that already exist, by id, without the ``*get`` calls.
    """

    TEXT = b"HOST-SHARED-MEMORY"

    def __init__(self) -> None:
        self._libc = ctypes.CDLL(None, use_errno=True)
        self._libc.shmat.restype = ctypes.c_void_p
        self.shmid = self._libc.shmget(0, 4096, 0o1666)  # IPC_PRIVATE, IPC_CREAT | 0666
        self.semid = self._libc.semget(0, 1, 0o1666)
        if self.shmid < 0 or self.semid < 0:
            raise OSError(ctypes.get_errno(), "SysV IPC is not available")
        self._address = self._libc.shmat(self.shmid, None, 0)
        ctypes.memmove(self._address, self.TEXT, len(self.TEXT))
        self._libc.semctl(self.semid, 0, 16, 3)  # SETVAL 3

    def snapshot(self) -> tuple[bytes, int]:
        return ctypes.string_at(self._address, 32), self._libc.semctl(self.semid, 0, 12)  # GETVAL

    def close(self) -> None:
        self._libc.shmdt(ctypes.c_void_p(self._address))
        self._libc.shmctl(self.shmid, 0, None)  # IPC_RMID
        self._libc.semctl(self.semid, 0, 0)  # IPC_RMID


# -- processes -------------------------------------------------------------------------------


def as_nobody() -> dict[str, Any]:
    """``subprocess`` options that run a process as the sandbox's uid and gid only."""
    if os.geteuid() != 0:
        return {}
    return {"user": NOBODY, "group": NOBODY, "extra_groups": []}


def _status(pid: int) -> dict[str, str]:
    fields: dict[str, str] = {}
    with contextlib.suppress(OSError), open(f"/proc/{pid}/status") as handle:
        for line in handle:
            key, _, value = line.partition(":")
            fields[key] = value.strip()
    return fields


def process_table() -> dict[int, tuple[int, int]]:
    """``pid -> (ppid, real uid)`` for every process on the machine."""
    table: dict[int, tuple[int, int]] = {}
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        status = _status(int(name))
        if "PPid" in status and "Uid" in status:
            table[int(name)] = (int(status["PPid"]), int(status["Uid"].split()[0]))
    return table


def _confined_uid(uid: int) -> bool:
    return uid == NOBODY or uid >= CHILD_ID_BASE


def confined_descendants(root: int) -> list[int]:
    """Processes running as a sandbox child's uid whose ancestry reaches ``root``."""
    table = process_table()
    found = []
    for pid, (_, uid) in table.items():
        if not _confined_uid(uid):
            continue
        ancestor, hops = pid, 0
        while ancestor in table and ancestor not in (0, 1) and hops < 64:
            ancestor, hops = table[ancestor][0], hops + 1
            if ancestor == root:
                found.append(pid)
                break
    return sorted(found)


def worker_of(sandbox: Sandbox) -> Any:
    worker = sandbox._state.worker
    assert worker is not None, "the sandbox has no worker"
    return worker


def spare_pids(sandbox: Sandbox, timeout_s: float = 5.0) -> list[int]:
    """The confined children a sandbox's worker holds ready (waiting until one exists)."""
    worker = worker_of(sandbox)
    deadline = time.monotonic() + timeout_s

    def children() -> set[int]:
        table = process_table()
        return {p for p in confined_descendants(worker.process.pid)
                if table.get(p, (0, 0))[0] == worker.process.pid and not _dying(p)}  # fmt: skip

    while True:
        pids = {p for p in children() if os.access(f"/proc/{p}/limits", os.R_OK)}
        if pids or time.monotonic() > deadline:
            return sorted(pids)
        time.sleep(0.01)


def _dying(pid: int) -> bool:
    """A zombie, or killed and not yet gone (the last call's child, just after its reply).

    Once the kill is taken off the pending set, a child with a large heap can spend
    milliseconds tearing it down with its state still "running": only the kernel's
    PF_EXITING flag shows that (a busy CI run once counted such a child as a spare).
    """
    status = _status(pid)
    pending = int(status.get("ShdPnd", "0"), 16) | int(status.get("SigPnd", "0"), 16)
    return (
        not status
        or status.get("State", "Z")[0] in "ZX"
        or bool(pending & (1 << 8))
        or _exiting(pid)
    )


_PF_EXITING = 0x4


def _exiting(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as handle:
            after_name = handle.read().rpartition(")")[2].split()
    except OSError:
        return True
    return len(after_name) > 6 and bool(int(after_name[6]) & _PF_EXITING)


def strays(sandbox: Sandbox, used: set[int], grace_s: float = 1.5) -> list[int]:
    """Confined processes that outlived their call, after a grace period.

    ``used`` holds the child(ren) the call ran in (the spare that existed before it): each
    must be gone. Beyond them, no more confined processes may exist than the spares the
    host asked for.
    """
    worker = worker_of(sandbox)
    deadline = time.monotonic() + grace_s
    while True:
        current = set(confined_descendants(worker.process.pid))
        expected = worker.pending + (1 if sandbox._state.spare is not None else 0)
        left = (current & used) | (current if len(current) > expected else set())
        if not left or time.monotonic() > deadline:
            return sorted(left)
        time.sleep(0.01)


def scheduling_of(pid: int) -> dict[str, Any]:
    """What another child could have changed about a process: limits and scheduling."""
    with open(f"/proc/{pid}/limits") as handle:
        limits = handle.read()
    return {
        "limits": limits,
        "policy": os.sched_getscheduler(pid),
        "affinity": sorted(os.sched_getaffinity(pid)),
        "nice": os.getpriority(os.PRIO_PROCESS, pid),
    }


# -- outcomes --------------------------------------------------------------------------------


def normalise(outcome: object) -> str:
    """``"PermissionError:13"`` -> ``"EACCES"``; other outcomes are kept as they are."""
    text = str(outcome)
    name, _, number = text.partition(":")
    if number.lstrip("-").isdigit():
        return errno.errorcode.get(int(number), name)
    return name if number == "None" else text


@dataclasses.dataclass
class Run:
    result: SandboxResult
    seconds: float

    @property
    def text(self) -> str:
        return repr(self.result.to_dict())

    def describe(self) -> str:
        r = self.result
        refused = [str(v) for v in r.violations][:3]
        value = str(r.value)[:600]
        took = f"{self.seconds:.2f}s"
        return f"ok={r.ok} value={value} error={r.error} violations={refused} in {took}"


def timed(sandbox: Sandbox, code: str, inputs: dict[str, Any] | None = None) -> Run:
    started = time.perf_counter()
    result = sandbox.run(code, inputs)
    return Run(result=result, seconds=time.perf_counter() - started)


def poll(predicate: Callable[[], bool], timeout_s: float) -> bool:
    deadline = time.monotonic() + timeout_s
    while not predicate():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.01)
    return True
