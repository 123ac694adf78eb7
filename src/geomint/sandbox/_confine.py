"""Gate 2, inside the child: confine a freshly forked process before any request exists.

The order matters and is the point of this module:

1. new session, parent-death signal, every descriptor closed but the call's socket;
2. namespaces (network, mount, IPC, UTS) — no interface, so no egress; a private tmpfs
   as scratch and as ``/tmp``; ``/proc`` and ``/dev/shm`` covered by empty read-only
   mounts so no other process's environment or memory can be read;
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

from geomint.sandbox import _landlock, _seccomp

__all__ = ["ConfineConfig", "ConfinementError", "confine", "default_read_paths"]

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
_NOBODY: Final = 65534

_libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
_libc.mount.argtypes = [ctypes.c_char_p, ctypes.c_char_p, ctypes.c_char_p, ctypes.c_ulong,
                        ctypes.c_char_p]  # fmt: skip
_libc.unshare.argtypes = [ctypes.c_int]
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
        memory_mb: Address-space budget on top of the worker's own size.
        cpu_s: CPU seconds before SIGXCPU (the host's wall clock normally acts first).
        scratch_mb: Size of the private scratch tmpfs (and the largest file).
        scratch_dir: Restricted mode: a fresh directory of this child's to work in.
            Isolated mode: where to mount the private scratch tmpfs when ``/tmp`` itself
            cannot be covered (it holds the interpreter); otherwise ``/tmp`` is used.
        read_paths: Directories the child may read (interpreter, libraries, data).
        nofile: Open descriptors allowed.
        nproc: Threads allowed (counted per uid after the drop).
    """

    level: str
    memory_mb: int
    cpu_s: int
    scratch_mb: int = 64
    scratch_dir: str = ""
    read_paths: tuple[str, ...] = field(default_factory=tuple)
    nofile: int = 64
    nproc: int = 64


def default_read_paths() -> tuple[str, ...]:
    """Directories holding the interpreter, the libraries and their data files."""
    import geomint  # noqa: PLC0415 - only to locate our own sources

    candidates = {
        sys.prefix, sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix,
        os.path.dirname(os.path.dirname(os.path.abspath(geomint.__file__))),
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
    parent = os.getppid()
    os.setsid()
    _prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)
    if os.getppid() != parent:  # the worker died between fork and prctl
        os._exit(1)
    _prctl(_PR_SET_DUMPABLE, 0)  # no ptrace or /proc/<pid>/mem access by same-uid peers
    _close_descriptors(keep_fd)
    own_size = _own_address_space()

    report["netns"] = report["mountns"] = False
    if isolated:
        _unshare(_CLONE_NEWNET | _CLONE_NEWNS | _CLONE_NEWIPC | _CLONE_NEWUTS)
        report["netns"] = True
        scratch = _private_mounts(config)
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
            os.chown(config.scratch_dir, _NOBODY, _NOBODY)
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
        os.setresgid(_NOBODY, _NOBODY, _NOBODY)
        os.setresuid(_NOBODY, _NOBODY, _NOBODY)
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


_HIDDEN: Final = ("/tmp", "/proc", "/dev/shm", "/run", "/var/tmp", "/root", "/home")  # noqa: S108


def _private_mounts(config: ConfineConfig) -> str:
    """Scratch on a private size-capped tmpfs; shared and per-user places out of reach.

    A place that holds a read path (a checkout under ``/tmp`` or ``/home``) stays visible,
    since hiding it would hide the interpreter; Landlock still keeps the child out of the
    rest of it. Returns the scratch directory.
    """
    _mount("none", "/", None, _MS_REC | _MS_PRIVATE)
    needed = [os.path.realpath(p) for p in config.read_paths]

    def holds_read_path(place: str) -> bool:
        return any(p == place or p.startswith(place.rstrip("/") + "/") for p in needed)

    hidden = _MS_RDONLY | _MS_NOSUID | _MS_NODEV | _MS_NOEXEC
    scratch = config.scratch_dir
    for path in _HIDDEN:
        if not os.path.isdir(path) or holds_read_path(path):
            continue
        if path == "/tmp":  # noqa: S108 - the private tmpfs below becomes the child's /tmp
            scratch = path
            continue
        _mount("geomint-hidden", path, "tmpfs", hidden, "size=4k,nr_inodes=16,mode=0555")
    if not scratch:
        raise ConfinementError(errno.EINVAL, "no place for scratch: /tmp holds the "
                               "interpreter and no scratch directory was given")  # fmt: skip
    opts = f"size={config.scratch_mb}m,nr_inodes=4096,mode=0700,uid={_NOBODY},gid={_NOBODY}"
    _mount("geomint-scratch", scratch, "tmpfs", _MS_NOSUID | _MS_NODEV | _MS_NOEXEC, opts)
    return scratch


def _close_descriptors(keep_fd: int) -> None:
    null = os.open(os.devnull, os.O_RDWR)
    for target in (0, 1, 2):
        if null != target:
            os.dup2(null, target)
    if null > 2 and null != keep_fd:
        os.close(null)
    os.closerange(3, keep_fd)
    os.closerange(keep_fd + 1, 65536)


def _own_address_space() -> int:
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
