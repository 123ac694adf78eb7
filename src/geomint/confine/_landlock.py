"""The filesystem (and TCP, and signal) confinement layer: Landlock via ctypes.

Threat model: the child runs model-written code that must be treated as
hostile. Namespaces and the uid drop decide *who* the child is; Landlock decides
*what it may touch*, independently of file modes and of any mount the namespace
setup may have missed. After :func:`apply_landlock` the process (and everything
it could still create) can only read and execute beneath ``read_paths`` and
read, write, create and delete beneath ``write_paths``; every other path is
denied by the kernel, whatever its permissions say. On ABI 4+ TCP ``bind`` and
``connect`` are denied outright, and on ABI 6+ the process can neither signal
nor reach abstract UNIX sockets of processes outside its Landlock domain.

Landlock is unprivileged and stackable: it only ever removes rights, and a
process cannot undo it. It is applied before seccomp, because the seccomp
filter denies the Landlock syscalls.

Threads: ``landlock_restrict_self`` restricts the calling thread only, unless
the kernel offers ``LANDLOCK_RESTRICT_SELF_TSYNC`` (ABI 8, Linux 7.0), which
this module uses when available. On older kernels :func:`apply_landlock` must be
called while the process is single-threaded -- true right after ``fork`` -- and
refuses to run when it can see (via ``/proc/self/task``) other threads.

Files opened before the call keep the rights they were opened with.
"""

from __future__ import annotations

import contextlib
import ctypes
import errno
import functools
import os
import stat
from collections.abc import Sequence

__all__ = ["apply_landlock", "landlock_abi"]

# Syscall numbers: the same on x86_64 and aarch64 (both tables use the unified
# numbering for syscalls added after 5.0).
_NR_CREATE_RULESET = 444
_NR_ADD_RULE = 445
_NR_RESTRICT_SELF = 446

_CREATE_RULESET_VERSION = 1 << 0
_RULE_PATH_BENEATH = 1
_RESTRICT_SELF_TSYNC = 1 << 3  # ABI 8
_PR_SET_NO_NEW_PRIVS = 38

# Filesystem access rights (linux/landlock.h) and the ABI that introduced them.
FS_EXECUTE = 1 << 0
FS_WRITE_FILE = 1 << 1
FS_READ_FILE = 1 << 2
FS_READ_DIR = 1 << 3
FS_REMOVE_DIR = 1 << 4
FS_REMOVE_FILE = 1 << 5
FS_MAKE_CHAR = 1 << 6
FS_MAKE_DIR = 1 << 7
FS_MAKE_REG = 1 << 8
FS_MAKE_SOCK = 1 << 9
FS_MAKE_FIFO = 1 << 10
FS_MAKE_BLOCK = 1 << 11
FS_MAKE_SYM = 1 << 12
FS_REFER = 1 << 13  # ABI 2
FS_TRUNCATE = 1 << 14  # ABI 3
FS_IOCTL_DEV = 1 << 15  # ABI 5

_FS_ABI1 = (1 << 13) - 1  # EXECUTE .. MAKE_SYM
#: ABI version -> every filesystem right that version knows.
_FS_BY_ABI: dict[int, int] = {
    1: _FS_ABI1,
    2: _FS_ABI1 | FS_REFER,
    3: _FS_ABI1 | FS_REFER | FS_TRUNCATE,
    4: _FS_ABI1 | FS_REFER | FS_TRUNCATE,
    5: _FS_ABI1 | FS_REFER | FS_TRUNCATE | FS_IOCTL_DEV,
}

#: The only rights a rule on a non-directory may carry.
FS_FILE_RIGHTS = FS_EXECUTE | FS_WRITE_FILE | FS_READ_FILE | FS_TRUNCATE | FS_IOCTL_DEV
#: Granted beneath read_paths.
FS_READ_RIGHTS = FS_EXECUTE | FS_READ_FILE | FS_READ_DIR
#: Granted beneath write_paths: everything but execution and device nodes (W^X;
#: a path listed in both read_paths and write_paths gets the union).
FS_WRITE_RIGHTS = (_FS_BY_ABI[5] | FS_READ_FILE | FS_READ_DIR) & ~(
    FS_EXECUTE | FS_MAKE_CHAR | FS_MAKE_BLOCK
)

NET_BIND_TCP = 1 << 0  # ABI 4
NET_CONNECT_TCP = 1 << 1  # ABI 4
SCOPE_ABSTRACT_UNIX_SOCKET = 1 << 0  # ABI 6
SCOPE_SIGNAL = 1 << 1  # ABI 6


class _RulesetAttr(ctypes.Structure):
    """``struct landlock_ruleset_attr``; the size passed grows with the ABI."""

    _fields_ = (
        ("handled_access_fs", ctypes.c_uint64),
        ("handled_access_net", ctypes.c_uint64),  # ABI 4
        ("scoped", ctypes.c_uint64),  # ABI 6
    )


class _PathBeneathAttr(ctypes.Structure):
    """``struct landlock_path_beneath_attr``, packed to 12 bytes."""

    _pack_ = 1
    _fields_ = (("allowed_access", ctypes.c_uint64), ("parent_fd", ctypes.c_int32))


_libc = ctypes.CDLL(None, use_errno=True)
_libc.syscall.restype = ctypes.c_long
_libc.prctl.restype = ctypes.c_int


def _syscall(nr: int, *args: int | ctypes.c_void_p | None) -> int:
    """Call a raw syscall; every integer goes in as a full ``long`` register."""
    cargs = [ctypes.c_long(a) if isinstance(a, int) else a for a in args]
    return int(_libc.syscall(ctypes.c_long(nr), *cargs))


def _fail(what: str) -> OSError:
    err = ctypes.get_errno()
    return OSError(err, f"Landlock: {what} refused by the kernel: {os.strerror(err)}")


def _addr(obj: ctypes.Structure) -> ctypes.c_void_p:
    return ctypes.c_void_p(ctypes.addressof(obj))


@functools.cache
def landlock_abi() -> int:
    """Return the Landlock ABI version the running kernel offers.

    Asks the kernel directly (``landlock_create_ruleset(NULL, 0, VERSION)``), so it
    works without securityfs.

    Returns:
        The ABI version (1, 2, ...), or 0 when Landlock is not built in, not
        enabled at boot, or the syscall is filtered away.
    """
    ret = _syscall(_NR_CREATE_RULESET, None, 0, _CREATE_RULESET_VERSION)
    return max(ret, 0)


def _attr_size(abi: int) -> int:
    """How much of ``struct landlock_ruleset_attr`` the given ABI understands."""
    if abi >= 6:
        return 24
    if abi >= 4:
        return 16
    return 8


def _other_threads_visible() -> bool:
    try:
        return len(os.listdir("/proc/self/task")) > 1
    except OSError:  # no /proc in this namespace: rely on the documented precondition
        return False


def _add_path_rules(ruleset_fd: int, paths: Sequence[str], rights: int) -> None:
    for path in paths:
        try:
            fd = os.open(path, os.O_PATH | os.O_CLOEXEC)
        except (FileNotFoundError, NotADirectoryError):
            continue  # skipped by design: nothing there to grant
        try:
            allowed = rights
            if not stat.S_ISDIR(os.fstat(fd).st_mode):
                allowed &= FS_FILE_RIGHTS
            rule = _PathBeneathAttr(allowed, fd)
            if _syscall(_NR_ADD_RULE, ruleset_fd, _RULE_PATH_BENEATH, _addr(rule), 0) != 0:
                raise _fail(f"landlock_add_rule({path!r})")
        finally:
            os.close(fd)


def apply_landlock(
    *,
    read_paths: Sequence[str],
    write_paths: Sequence[str],
    deny_tcp: bool = True,
    scope: bool = True,
) -> int:
    """Confine the calling process to the given paths, irrevocably.

    Every filesystem right the running ABI knows is handled (up to IOCTL_DEV,
    the last one added, in ABI 5), so anything not granted here is denied. Paths
    that do not exist are skipped; a path that is a file (not a directory) gets
    only the file rights of its list. Sets ``PR_SET_NO_NEW_PRIVS`` as Landlock
    requires.

    Before ABI 8 this restricts only the calling thread and its future
    descendants: call it while single-threaded (e.g. right after ``fork``).

    Args:
        read_paths: Hierarchies the process may read, list and execute.
        write_paths: Hierarchies the process may read, list, write, truncate,
            create in and delete from (but not execute from).
        deny_tcp: On ABI 4+, deny every TCP ``bind`` and ``connect``.
        scope: On ABI 6+, deny signals and abstract UNIX socket connections to
            processes outside this Landlock domain.

    Returns:
        The Landlock ABI version that was applied.

    Raises:
        OSError: If Landlock is unavailable (``ENOSYS``/``EOPNOTSUPP``), if other
            threads are visible and the kernel lacks TSYNC (``EBUSY``), or if the
            kernel refuses the ruleset, a rule or the restriction.
    """
    abi = landlock_abi()
    if abi < 1:
        err = ctypes.get_errno() or errno.ENOSYS
        raise OSError(err, f"Landlock is not available on this kernel: {os.strerror(err)}")
    restrict_flags = _RESTRICT_SELF_TSYNC if abi >= 8 else 0
    if not restrict_flags and _other_threads_visible():
        raise OSError(
            errno.EBUSY,
            f"Landlock ABI {abi} has no TSYNC: apply_landlock must run single-threaded",
        )
    handled_fs = _FS_BY_ABI[min(abi, 5)]
    attr = _RulesetAttr(handled_fs, 0, 0)
    if deny_tcp and abi >= 4:
        attr.handled_access_net = NET_BIND_TCP | NET_CONNECT_TCP  # and no rules: all denied
    if scope and abi >= 6:
        attr.scoped = SCOPE_ABSTRACT_UNIX_SOCKET | SCOPE_SIGNAL
    ruleset_fd = _syscall(_NR_CREATE_RULESET, _addr(attr), _attr_size(abi), 0)
    if ruleset_fd < 0:
        raise _fail("landlock_create_ruleset")
    try:
        _add_path_rules(ruleset_fd, read_paths, FS_READ_RIGHTS & handled_fs)
        _add_path_rules(ruleset_fd, write_paths, FS_WRITE_RIGHTS & handled_fs)
        one, zero = ctypes.c_ulong(1), ctypes.c_ulong(0)
        if _libc.prctl(ctypes.c_int(_PR_SET_NO_NEW_PRIVS), one, zero, zero, zero) != 0:
            raise _fail("prctl(PR_SET_NO_NEW_PRIVS)")
        if _syscall(_NR_RESTRICT_SELF, ruleset_fd, restrict_flags) != 0:
            raise _fail("landlock_restrict_self")
    finally:
        with contextlib.suppress(OSError):
            os.close(ruleset_fd)
    return abi
