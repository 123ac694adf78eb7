"""Confine a freshly forked process before it reads anything hostile.

Two steps, in two processes. :func:`enter_minimal_root` runs once in a template process
(:mod:`geomint.confine._template`): it enters a mount namespace of its own and pivots into
a root that holds only read-only bind mounts of the interpreter and the libraries, an
empty mount point for scratch and the null and random devices. There is no ``/proc``,
``/sys``, ``/dev/shm``, ``/tmp`` of the host or home directory to see, so not even file
names and sizes of the host's files (which Landlock does not mediate) reach a child.
Every child forked from that template starts in that view, and :func:`confine` does the
rest, in an order that is the point of this module:

1. new session, parent-death signal, every descriptor closed but the call's socket;
2. namespaces (network, mount, IPC, UTS) — no interface, so no egress; a private
   size-capped tmpfs as scratch;
3. resource limits (address space = own size + budget, CPU seconds, file size, open
   files, processes, no core files);
4. ``no_new_privs``, Landlock (read-only interpreter and libraries, read-write scratch,
   no TCP, signals scoped), then the drop to an unprivileged uid when we are root;
5. the seccomp filter last, because it forbids the syscalls the steps above need.

Each step either succeeds or raises :class:`ConfinementError`; the caller decides whether
a missing layer lowers the mode or stops the worker. Nothing here reads the request.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import errno
import os
import resource
import signal
import sys
from dataclasses import dataclass, field
from typing import Final

from geomint.confine import _landlock, _seccomp

__all__ = [
    "CHILD_ID_BASE",
    "ConfineConfig",
    "ConfinementError",
    "child_id",
    "collapse_to_huge_pages",
    "confine",
    "default_read_paths",
    "enter_minimal_root",
    "memory_cgroup",
    "own_address_space",
    "prefer_as_oom_victim",
]

_CLONE_NEWNS: Final = 0x00020000
_CLONE_NEWUTS: Final = 0x04000000
_CLONE_NEWIPC: Final = 0x08000000
_CLONE_NEWNET: Final = 0x40000000
_MS_RDONLY: Final = 1
_MS_NOSUID: Final = 2
_MS_NODEV: Final = 4
_MS_NOEXEC: Final = 8
_MS_REC: Final = 0x4000
_MS_PRIVATE: Final = 1 << 18
_PR_SET_PDEATHSIG: Final = 1
_PR_SET_DUMPABLE: Final = 4
#: Children take the uid and gid ``CHILD_ID_BASE + pid``: one of their own each. The
#: kernel counts RLIMIT_NPROC (and pipe buffers) per uid, so with one shared uid a single
#: child holding 63 threads stopped every other child from starting one. Pids are unique
#: among live processes and at most 2**22, so these ids name no user of the machine's
#: usual ranges (below 65536, or subordinate ranges from 100000 upwards in steps of 65536
#: for a few hundred users) and never two live children.
CHILD_ID_BASE: Final = 1 << 30


def child_id(pid: int) -> int:
    """The uid and gid a child with this pid runs as (when the template is root)."""
    return CHILD_ID_BASE + pid


_libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
_libc.mount.argtypes = [ctypes.c_char_p, ctypes.c_char_p, ctypes.c_char_p, ctypes.c_ulong,
                        ctypes.c_char_p]  # fmt: skip
_libc.unshare.argtypes = [ctypes.c_int]
_libc.umount2.argtypes = [ctypes.c_char_p, ctypes.c_int]
_libc.syscall.restype = ctypes.c_long
_libc.prctl.argtypes = [ctypes.c_int, ctypes.c_ulong, ctypes.c_ulong, ctypes.c_ulong,
                        ctypes.c_ulong]  # fmt: skip


class ConfinementError(OSError):
    """A confinement layer could not be applied."""


@dataclass(frozen=True, kw_only=True, slots=True)
class ConfineConfig:
    """What one child is allowed.

    Attributes:
        level: ``"isolated"`` applies every layer and fails if a required one is
            missing; ``"restricted"`` applies what the platform allows.
        memory_mb: Address-space budget on top of the process's own size.
        cpu_s: CPU seconds before SIGXCPU (the host's wall clock normally acts first).
        scratch_mb: Size of the private scratch tmpfs (and the largest file).
        scratch_dir: Isolated mode: the mount point of the private scratch tmpfs inside
            the minimal root. Restricted mode: a fresh directory of this child's.
        read_paths: Directories the child may read (interpreter, libraries, data).
        nofile: Open descriptors allowed.
        nproc: Threads allowed (counted per uid after the drop).
        own_size: The process's address space when it was forked, in bytes; 0 reads it
            from ``/proc`` (which a minimal root does not have: the template measures it).
        minimal_root: The template pivoted into a minimal root (required for isolated).
    """

    level: str
    memory_mb: int
    cpu_s: int
    scratch_mb: int = 64
    scratch_dir: str = ""
    read_paths: tuple[str, ...] = field(default_factory=tuple)
    nofile: int = 64
    nproc: int = 64
    own_size: int = 0
    minimal_root: bool = False


def default_read_paths() -> tuple[str, ...]:
    """Directories holding the interpreter, the libraries and their data files."""
    candidates = {
        sys.prefix, sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix,
        # the folder holding the geomint package (src/ of a checkout, or site-packages)
        os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))),
        "/usr/lib", "/usr/lib64", "/lib", "/lib64", "/usr/share/zoneinfo",
        "/usr/share/proj", "/etc/localtime", "/dev/null", "/dev/urandom",
    }  # fmt: skip
    candidates.update(p for p in sys.path if p and os.path.isdir(p))
    return tuple(sorted(p for p in candidates if os.path.exists(p)))


def confine(keep_fd: int, config: ConfineConfig) -> dict[str, bool | int]:
    """Confine the calling (freshly forked, single-threaded) process.

    Args:
        keep_fd: The call's socket: the only descriptor that stays open.
        config: Limits and paths.

    Returns:
        Which layers were applied (``netns``, ``mountns``, ``landlock`` ABI, ``seccomp``,
        ``uid_drop``, ``rlimits``).

    Raises:
        ConfinementError: In ``isolated`` mode when a required layer is missing, or in
            any mode when a layer half-applied.
    """
    isolated = config.level == "isolated"
    report: dict[str, bool | int] = {}
    ident = child_id(os.getpid())
    parent = os.getppid()
    os.setsid()
    _prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)
    if os.getppid() != parent:  # the worker died between fork and prctl
        os._exit(1)
    _prctl(_PR_SET_DUMPABLE, 0)  # no ptrace or /proc/<pid>/mem access by same-uid peers
    _close_descriptors(keep_fd)
    own_size = config.own_size or own_address_space()

    report["netns"] = report["mountns"] = False
    if isolated:
        if not (config.minimal_root and config.scratch_dir):
            raise ConfinementError(
                errno.EPERM, "isolated mode needs the template's minimal root, which it lacks"
            )
        _unshare(_CLONE_NEWNET | _CLONE_NEWNS | _CLONE_NEWIPC | _CLONE_NEWUTS)
        report["netns"] = True
        scratch = config.scratch_dir
        opts = f"size={config.scratch_mb}m,nr_inodes=4096,mode=0700,uid={ident},gid={ident}"
        _mount("geomint-scratch", scratch, "tmpfs", _MS_NOSUID | _MS_NODEV | _MS_NOEXEC, opts)
        report["mountns"] = True
    else:
        # Restricted mode is for platforms without namespaces: a fresh directory the
        # worker made for this child, never a shared one.
        if not config.scratch_dir or os.listdir(config.scratch_dir):
            raise ConfinementError(
                errno.EINVAL,
                "restricted mode needs a fresh, empty "
                f"scratch directory, got {config.scratch_dir!r}",
            )
        if os.geteuid() == 0:
            os.chown(config.scratch_dir, ident, ident)
        scratch = config.scratch_dir
    os.chdir(scratch)

    _set_limits(own_size, config)
    report["rlimits"] = True
    _prctl(38, 1)  # PR_SET_NO_NEW_PRIVS: required by Landlock and seccomp, and right anyway

    report["landlock"] = 0
    if _landlock.landlock_abi() > 0:
        report["landlock"] = _landlock.apply_landlock(
            read_paths=config.read_paths, write_paths=(scratch,)
        )

    report["uid_drop"] = False
    if os.geteuid() == 0:
        os.setgroups([])
        os.setresgid(ident, ident, ident)
        os.setresuid(ident, ident, ident)
        report["uid_drop"] = True
        # Changing credentials clears the parent-death signal and resets dumpable: without
        # this a child outlived a dead worker (and host), reparented to init.
        _prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)
        _prctl(_PR_SET_DUMPABLE, 0)
        if os.getppid() != parent:  # the worker died meanwhile
            os._exit(1)
    # NPROC counts per uid, so it only bites after the drop (it is ignored for root).
    resource.setrlimit(resource.RLIMIT_NPROC, (config.nproc, config.nproc))

    report["seccomp"] = False
    if _seccomp.seccomp_available():
        _seccomp.install_seccomp_filter()
        report["seccomp"] = True
    elif isolated:
        raise ConfinementError(errno.ENOSYS, "seccomp is not available on this kernel")
    return report


def _prctl(option: int, value: int) -> None:
    if _libc.prctl(option, value, 0, 0, 0) != 0:
        err = ctypes.get_errno()
        raise ConfinementError(err, f"prctl({option}) failed: {os.strerror(err)}")


def _unshare(flags: int) -> None:
    if _libc.unshare(flags) != 0:
        err = ctypes.get_errno()
        raise ConfinementError(err, f"unshare failed: {os.strerror(err)}")


def _mount(source: str, target: str, fstype: str | None, flags: int, data: str = "") -> None:
    result = _libc.mount(
        source.encode(),
        target.encode(),
        fstype.encode() if fstype else None,
        flags,
        data.encode() if data else None,
    )
    if result != 0:
        err = ctypes.get_errno()
        raise ConfinementError(err, f"mount {target} failed: {os.strerror(err)}")


_MS_BIND: Final = 0x1000
_MS_REMOUNT: Final = 0x20
_MNT_DETACH: Final = 2
_SYS_PIVOT_ROOT: Final = {"x86_64": 155, "aarch64": 41, "arm64": 41}
#: Where each child mounts its scratch tmpfs inside the minimal root.
SCRATCH: Final = "/scratch"
#: Where the template's own directory (restricted children's scratch) appears in it.
BASE: Final = "/geomint-base"
_DEVICES: Final = ("/dev/null", "/dev/urandom")


def enter_minimal_root(read_paths: tuple[str, ...], base: str) -> None:
    """Move the calling process into its own mount namespace rooted in a minimal tree.

    The new root is a small tmpfs holding read-only bind mounts of ``read_paths`` (each at
    its own path, so the interpreter finds its libraries where it left them), the null
    and random devices, an empty ``/scratch`` for the children's private tmpfs, and
    ``base`` read-write at ``/geomint-base``. ``/tmp`` is a link to ``/scratch`` unless a
    read path lies beneath it (a checkout under ``/tmp``). Call it in a single-threaded
    template that has imported everything it will need; afterwards it sees no ``/proc``.

    Raises:
        ConfinementError: A namespace, mount or the pivot was refused; the process is
            then in an unspecified mount state and should not fork isolated children.
    """
    _unshare(_CLONE_NEWNS)
    _mount("none", "/", None, _MS_REC | _MS_PRIVATE)
    root = os.path.join(base, "root")
    os.makedirs(root, exist_ok=True)
    _mount("geomint-root", root, "tmpfs", _MS_NOSUID, "size=1m,nr_inodes=4096,mode=0755")
    bound: list[str] = []
    for path in sorted({os.path.realpath(p) for p in read_paths} - set(_DEVICES), key=len):
        if not os.path.exists(path) or any(path.startswith(b.rstrip("/") + "/") for b in bound):
            continue
        _bind(path, root + path, read_only=True)
        bound.append(path)
    for link in read_paths:  # /lib -> usr/lib and the like: the same link inside
        target = root + link
        if os.path.islink(link) and not os.path.lexists(target):
            os.makedirs(os.path.dirname(target), exist_ok=True)
            os.symlink(os.readlink(link), target)
    for device in _DEVICES:
        _bind(device, root + device, read_only=False)
    os.mkdir(root + SCRATCH, 0o755)
    tmp = root + "/tmp"  # noqa: S108 - inside the new root: the children's scratch
    if not os.path.lexists(tmp):
        os.symlink(SCRATCH.lstrip("/"), tmp)
    _bind(base, root + BASE, read_only=False, recursive=False)
    old = os.path.join(root, "old-root")
    os.mkdir(old, 0o700)
    if _libc.syscall(_SYS_PIVOT_ROOT[os.uname().machine], root.encode(), old.encode()) != 0:
        err = ctypes.get_errno()
        raise ConfinementError(err, f"pivot_root failed: {os.strerror(err)}")
    os.chdir("/")
    if _libc.umount2(b"/old-root", _MNT_DETACH) != 0:
        err = ctypes.get_errno()
        raise ConfinementError(err, f"detaching the old root failed: {os.strerror(err)}")
    os.rmdir("/old-root")
    _mount("none", "/", None, _MS_REMOUNT | _MS_RDONLY | _MS_NOSUID)


def _bind(source: str, target: str, *, read_only: bool, recursive: bool = True) -> None:
    if os.path.isdir(source):
        os.makedirs(target, exist_ok=True)
    else:
        os.makedirs(os.path.dirname(target), exist_ok=True)
        with open(target, "ab"):
            pass
    _mount(source, target, None, _MS_BIND | (_MS_REC if recursive else 0))
    flags = _MS_REMOUNT | _MS_BIND | _MS_NOSUID
    if read_only:
        flags |= _MS_RDONLY | _MS_NODEV
    _mount("none", target, None, flags)


def _close_descriptors(keep_fd: int) -> None:
    null = os.open(os.devnull, os.O_RDWR)
    for target in (0, 1, 2):
        if null != target:
            os.dup2(null, target)
    if null > 2 and null != keep_fd:
        os.close(null)
    os.closerange(3, keep_fd)
    os.closerange(keep_fd + 1, 65536)


def prefer_as_oom_victim() -> bool:
    """Make the calling process (and what it forks) the kernel's first choice to kill.

    The children hold hostile workloads; when memory runs out the host should outlive
    them. Raising one's own ``oom_score_adj`` needs no privilege.
    """
    try:
        with open("/proc/self/oom_score_adj", "w", encoding="ascii") as handle:
            handle.write("1000")
    except OSError:
        return False
    return True


def memory_cgroup() -> str:
    """Say whether a per-child memory cgroup could be had here, and why not if not.

    Only reads: a per-child cgroup needs cgroup v2 with the memory controller delegated
    to this process's own cgroup, and geomint never writes into a cgroup it did not make.
    Nothing creates one yet; the answer is reported so an operator knows which bound holds
    (``RLIMIT_AS`` and the scratch tmpfs always do).
    """
    try:
        with open("/proc/self/cgroup", encoding="ascii") as handle:
            lines = handle.read().splitlines()
    except OSError:
        return "unknown: /proc/self/cgroup cannot be read"
    unified = next((line[3:] for line in lines if line.startswith("0::")), None)
    if any(line.split(":")[1] == "memory" for line in lines if line.count(":") >= 2):
        return "unavailable: the memory controller is on cgroup v1 here"
    if unified is None:
        return "unavailable: no cgroup v2 hierarchy"
    controllers = os.path.join("/sys/fs/cgroup", unified.lstrip("/"), "cgroup.controllers")
    try:
        with open(controllers, encoding="ascii") as handle:
            if "memory" not in handle.read().split():
                return "unavailable: the memory controller is not delegated to this cgroup"
    except OSError:
        return "unavailable: cgroup v2 is not mounted at /sys/fs/cgroup"
    return "possible (cgroup v2 memory controller delegated) but not used yet"


_MADV_HUGEPAGE: Final = 14
_MADV_COLLAPSE: Final = 25  # Linux 6.1
_HUGE_PAGE: Final = 1 << 21


def collapse_to_huge_pages() -> int:
    """Back a template's densely used anonymous memory with 2 MiB pages, where possible.

    ``fork`` copies one page-table entry per 4 KiB page (and the child's exit frees them),
    while a 2 MiB page is one entry: this took 0.7-0.9 ms off each fork of the sandbox's
    template here. Only regions already at least 90 % resident are collapsed, so the
    template grows by a few MiB at most. Best effort: an older kernel, or transparent huge
    pages set to ``never``, leaves everything as it was. Needs ``/proc``, so it runs before
    the minimal root.

    Returns:
        The MiB collapsed.
    """
    _libc.madvise.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int]
    try:
        with open("/proc/self/smaps", encoding="ascii", errors="replace") as handle:
            lines = handle.read().splitlines()
    except OSError:
        return 0
    collapsed = 0
    region: tuple[int, int] | None = None
    for line in lines:
        fields = line.split()
        if len(fields) >= 5 and "-" in fields[0] and ":" in fields[3]:  # a mapping's header
            start, end = (int(x, 16) for x in fields[0].split("-"))
            name = fields[5] if len(fields) >= 6 else ""
            region = (start, end) if fields[1] == "rw-p" and name in ("", "[heap]") else None
        elif region is not None and fields[:1] == ["Anonymous:"]:
            start, end = region
            low, high = (start + _HUGE_PAGE - 1) & ~(_HUGE_PAGE - 1), end & ~(_HUGE_PAGE - 1)
            if high - low >= _HUGE_PAGE and int(fields[1]) * 1024 >= 0.9 * (end - start):
                _libc.madvise(low, high - low, _MADV_HUGEPAGE)
                for chunk in range(low, high, _HUGE_PAGE):  # one at a time: a busy one fails alone
                    if _libc.madvise(chunk, _HUGE_PAGE, _MADV_COLLAPSE) == 0:
                        collapsed += 2
    return collapsed


def own_address_space() -> int:
    """The calling process's virtual size in bytes (1 GiB when it cannot be read)."""
    try:
        with open("/proc/self/statm", "rb") as handle:
            pages = int(handle.read().split()[0])
        return pages * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError):
        return 1 << 30


def _set_limits(own_size: int, config: ConfineConfig) -> None:
    address_space = own_size + config.memory_mb * 1024 * 1024
    limits = (
        (resource.RLIMIT_AS, address_space),
        (resource.RLIMIT_CPU, config.cpu_s),
        (resource.RLIMIT_FSIZE, config.scratch_mb * 1024 * 1024),
        (resource.RLIMIT_NOFILE, config.nofile),
        (resource.RLIMIT_CORE, 0),
        (resource.RLIMIT_MEMLOCK, 0),
        (resource.RLIMIT_MSGQUEUE, 0),
    )
    for which, value in limits:
        hard = value + 1 if which == resource.RLIMIT_CPU else value
        resource.setrlimit(which, (value, hard))
