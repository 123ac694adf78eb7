"""The last confinement layer: a classic-BPF seccomp filter, built with ctypes.

Threat model: the code this child runs was written by a model and must be treated
as hostile. By the time this filter goes on, the child already sits in its own
namespaces, under rlimits, as a uid of its own and (usually) under Landlock. What is
left is the kernel's syscall surface itself, which those layers do not narrow:
the filter closes the calls that let code leave the process (fork, exec, new
sockets), reach other processes (ptrace, process_vm_*, signals to anyone but
itself, pidfds, another process's rlimits, priority or scheduling), change the
machine or its namespaces and mounts (mount API, unshare/setns, modules, kexec,
reboot), climb back up the uid ladder, or poke at the kernel's riskiest
subsystems (bpf, perf, io_uring, userfaultfd, keyrings, SysV IPC). Everything
else stays allowed: this is a deny list on top of the other layers, chosen so
that CPython, numpy and pandas -- including their threads -- keep working.

Design points:

* A syscall from a foreign ABI (i386 ``int 0x80`` on x86_64, AArch32 on aarch64,
  x32 numbers with bit 30 set) kills the whole process: the deny list below is
  written in native numbers and would be meaningless in another table.
* ``clone3`` answers ENOSYS, not EPERM, because its flags live in memory that BPF
  cannot read; glibc then falls back to ``clone``, whose flags are a register.
  ``clone`` is only allowed for threads (``CLONE_THREAD``) and never with a
  ``CLONE_NEW*`` namespace flag.
* The filter is installed with ``SECCOMP_FILTER_FLAG_TSYNC`` so threads that
  already exist are covered, not only the caller and its future children.
* The policy is data (the tables below); the code only compiles it to BPF.
"""

from __future__ import annotations

import ctypes
import errno
import functools
import os
import sys
from collections.abc import Iterable, Mapping

__all__ = ["CompiledFilter", "compiled_filter", "install_seccomp_filter", "seccomp_available"]

# --- Policy -------------------------------------------------------------------

#: Syscalls answered with EPERM. Names missing from an arch's table (fork, vfork,
#: mknod, ... on aarch64) simply do not exist there and are skipped.
DENY_EPERM: tuple[str, ...] = (
    # leaving the process
    "execve", "execveat", "fork", "vfork",
    # networking and local IPC endpoints
    "socket", "socketpair",
    # reaching into other processes
    "ptrace", "process_vm_readv", "process_vm_writev", "kcmp",
    "pidfd_open", "pidfd_getfd", "pidfd_send_signal", "process_madvise", "process_mrelease",
    # mounts, roots and namespaces
    "mount", "umount2", "pivot_root", "chroot", "unshare", "setns",
    "move_mount", "open_tree", "open_tree_attr", "fsopen", "fsmount", "fsconfig", "fspick",
    "mount_setattr", "open_by_handle_at", "name_to_handle_at",
    # risky kernel subsystems
    "bpf", "perf_event_open", "userfaultfd", "keyctl", "add_key", "request_key",
    "io_uring_setup", "io_uring_enter", "io_uring_register", "fanotify_init",
    "msgget", "semget", "shmget", "mq_open", "personality", "modify_ldt",
    # SysV IPC objects that already exist are reachable by id without the *get calls:
    # restricted mode shares the host's IPC namespace
    "shmat", "shmctl", "semop", "semtimedop", "semctl", "msgsnd", "msgrcv", "msgctl",
    # the machine itself
    "kexec_load", "kexec_file_load", "init_module", "finit_module", "delete_module",
    "acct", "swapon", "swapoff", "reboot", "sethostname", "setdomainname",
    "iopl", "ioperm", "syslog", "quotactl", "quotactl_fd", "vhangup", "uselib",
    # device nodes
    "mknod", "mknodat",
    # memory the address-space limit does not count: a memfd's pages belong to the file,
    # not to the mapping, so a child with a 256 MB budget held 3.8 GB through them
    "memfd_create", "memfd_secret",
    # pipe pages the address-space limit does not count either: vmsplice hands a pipe the
    # pages of a mapping, which stay alive after munmap (2 MB huge pages through 1 MB
    # pipes let a 256 MB child hold 3.1 GB); splice and tee move pages between pipes
    "vmsplice", "splice", "tee",
    # watching files: Landlock does not mediate inotify, which would tell the names of
    # files the host creates and deletes beneath a read path
    "inotify_init", "inotify_init1", "inotify_add_watch", "fanotify_mark",
    # extended attributes: Landlock does not mediate them, so they would let code write
    # data into any host file its uid may write (a channel that outlives the call)
    "setxattr", "lsetxattr", "fsetxattr", "removexattr", "lremovexattr", "fremovexattr",
    "setxattrat", "removexattrat",
    # file metadata, which Landlock does not mediate either: without the uid drop (a
    # worker that is not root) these would reach every file the host's user owns
    "chmod", "fchmod", "fchmodat", "fchmodat2", "chown", "fchown", "lchown", "fchownat",
    "utime", "utimes", "futimesat", "utimensat",
    # other processes of the same uid (the host itself, for a restricted child of a worker
    # that is not root): renice a whole user or process group, or set another process's
    # I/O priority
    "setpriority", "ioprio_set",
    # identity: the uid drop happened earlier, make climbing back impossible
    "setuid", "setgid", "setreuid", "setregid", "setresuid", "setresgid",
    "setgroups", "setfsuid", "setfsgid", "capset",
    # Landlock was applied before us; no further nesting is needed
    "landlock_create_ruleset", "landlock_add_rule", "landlock_restrict_self",
)  # fmt: skip

#: Syscalls answered with ENOSYS, so libc falls back to an older, filterable call.
DENY_ENOSYS: tuple[str, ...] = ("clone3",)

#: Signal-sending syscalls whose first argument (pid / tgid / tid) must be the
#: calling process itself; any other target gets EPERM.
SELF_TARGET_ONLY: tuple[str, ...] = (
    "kill", "tkill", "tgkill", "rt_sigqueueinfo", "rt_tgsigqueueinfo",
)  # fmt: skip

#: Syscalls that change the process named by their first argument (a pid): only 0 (the
#: caller) or the caller's own pid is allowed. The kernel lets any process of the same uid
#: lower another's limits (RLIMIT_CPU=0 kills it) or its scheduling, so without this one
#: sandbox child could kill or starve another tenant's child.
SELF_OR_ZERO_ONLY: tuple[str, ...] = (
    "prlimit64", "sched_setaffinity", "sched_setscheduler", "sched_setparam", "sched_setattr",
)  # fmt: skip

CLONE_THREAD = 0x0001_0000
#: CLONE_NEWNS | NEWCGROUP | NEWUTS | NEWIPC | NEWUSER | NEWPID | NEWNET. (CLONE_NEWTIME,
#: 0x80, only exists for clone3 and unshare; in clone's flags 0x80 is the exit signal.)
CLONE_NEW_NAMESPACES = 0x0002_0000 | 0x7E00_0000
#: ioctl requests refused on any fd: pushing input into a terminal we share; changing a
#: file's attribute flags (chattr), which works on a descriptor opened read-only.
DENIED_IOCTLS: tuple[int, ...] = (
    0x5412, 0x541C,  # TIOCSTI, TIOCLINUX
    0x40086602, 0x40046602, 0x401C5820,  # FS_IOC_SETFLAGS, FS_IOC32_SETFLAGS, FS_IOC_FSSETXATTR
    0x8901, 0x8902,  # FIOSETOWN, SIOCSPGRP: choose who gets SIGIO (see DENIED_FCNTLS)
)  # fmt: skip
#: fcntl commands refused: naming another process as the owner of a descriptor makes the
#: kernel signal it on I/O (with F_SETSIG, any signal, SIGKILL included) -- a way around
#: the kill rule above that only Landlock's signal scope (ABI 6) would otherwise stop.
#: F_SETPIPE_SZ is refused too: a pipe keeps its default 64 KB, so what a child can park in
#: pipes is bounded by its 64 descriptors.
DENIED_FCNTLS: tuple[int, ...] = (8, 15, 1031)  # F_SETOWN, F_SETOWN_EX, F_SETPIPE_SZ
#: prctl options refused: clearing the parent-death signal would let a child outlive its
#: worker (and a dead host), since nothing else ends a child that sleeps.
DENIED_PRCTLS: tuple[int, ...] = (1,)  # PR_SET_PDEATHSIG

# --- Syscall tables (only the names the policy mentions) ----------------------

#: x86_64, from arch/x86/entry/syscalls/syscall_64.tbl (asm/unistd_64.h).
SYSCALLS_X86_64: dict[str, int] = {
    "ioctl": 16, "shmget": 29, "shmat": 30, "shmctl": 31, "socket": 41, "socketpair": 53,
    "clone": 56, "fork": 57, "vfork": 58, "execve": 59, "kill": 62, "semget": 64, "semop": 65,
    "semctl": 66, "msgget": 68, "msgsnd": 69, "msgrcv": 70, "msgctl": 71, "fcntl": 72,
    "ptrace": 101, "chmod": 90, "fchmod": 91, "chown": 92, "fchown": 93, "lchown": 94, "utime": 132,
    "syslog": 103, "setuid": 105, "setgid": 106, "setreuid": 113, "setregid": 114,
    "setgroups": 116, "setresuid": 117, "setresgid": 119, "setfsuid": 122, "setfsgid": 123,
    "capset": 126, "rt_sigqueueinfo": 129, "mknod": 133, "uselib": 134, "personality": 135,
    "setpriority": 141, "sched_setparam": 142, "sched_setscheduler": 144, "setxattr": 188,
    "lsetxattr": 189, "fsetxattr": 190, "removexattr": 197, "lremovexattr": 198,
    "fremovexattr": 199, "sched_setaffinity": 203, "ioprio_set": 251, "prlimit64": 302,
    "sched_setattr": 314,
    "vhangup": 153, "modify_ldt": 154, "pivot_root": 155, "prctl": 157, "chroot": 161, "acct": 163,
    "mount": 165, "umount2": 166, "swapon": 167, "swapoff": 168, "reboot": 169,
    "sethostname": 170, "setdomainname": 171, "iopl": 172, "ioperm": 173, "init_module": 175,
    "delete_module": 176, "quotactl": 179, "tkill": 200, "semtimedop": 220, "tgkill": 234,
    "utimes": 235, "mq_open": 240,
    "kexec_load": 246, "add_key": 248, "request_key": 249, "keyctl": 250, "mknodat": 259,
    "fchownat": 260, "futimesat": 261, "fchmodat": 268, "utimensat": 280,
    "unshare": 272, "rt_tgsigqueueinfo": 297, "perf_event_open": 298, "fanotify_init": 300,
    "name_to_handle_at": 303, "open_by_handle_at": 304, "setns": 308, "process_vm_readv": 310,
    "process_vm_writev": 311, "kcmp": 312, "finit_module": 313, "seccomp": 317,
    "kexec_file_load": 320, "bpf": 321, "execveat": 322, "userfaultfd": 323,
    "pidfd_send_signal": 424, "io_uring_setup": 425, "io_uring_enter": 426,
    "io_uring_register": 427, "open_tree": 428, "move_mount": 429, "fsopen": 430,
    "fsconfig": 431, "fsmount": 432, "fspick": 433, "pidfd_open": 434, "clone3": 435,
    "pidfd_getfd": 438, "process_madvise": 440, "mount_setattr": 442, "quotactl_fd": 443,
    "landlock_create_ruleset": 444, "landlock_add_rule": 445, "landlock_restrict_self": 446,
    "process_mrelease": 448, "fchmodat2": 452, "setxattrat": 463, "removexattrat": 466,
    "open_tree_attr": 467, "memfd_create": 319, "memfd_secret": 447, "inotify_init": 253,
    "inotify_add_watch": 254, "inotify_init1": 294, "fanotify_mark": 301,
    "splice": 275, "tee": 276, "vmsplice": 278,
}  # fmt: skip

#: aarch64, from include/uapi/asm-generic/unistd.h. No fork, vfork, mknod, iopl,
#: ioperm, modify_ldt or uselib here: the generic table never had them.
SYSCALLS_AARCH64: dict[str, int] = {
    "setxattr": 5, "lsetxattr": 6, "fsetxattr": 7, "removexattr": 14, "lremovexattr": 15,
    "fremovexattr": 16, "fcntl": 25, "ioctl": 29, "ioprio_set": 30, "mknodat": 33, "umount2": 39,
    "mount": 40, "pivot_root": 41, "chroot": 51,
    "fchmod": 52, "fchmodat": 53, "fchownat": 54, "fchown": 55, "vhangup": 58, "quotactl": 60,
    "utimensat": 88, "acct": 89, "capset": 91, "personality": 92, "unshare": 97,
    "kexec_load": 104, "init_module": 105, "delete_module": 106, "syslog": 116, "ptrace": 117,
    "sched_setparam": 118, "sched_setscheduler": 119, "sched_setaffinity": 122,
    "setpriority": 140, "prlimit64": 261, "sched_setattr": 274,
    "kill": 129, "tkill": 130, "tgkill": 131, "rt_sigqueueinfo": 138, "reboot": 142, "prctl": 167,
    "setregid": 143, "setgid": 144, "setreuid": 145, "setuid": 146, "setresuid": 147,
    "setresgid": 149, "setfsuid": 151, "setfsgid": 152, "setgroups": 159, "sethostname": 161,
    "setdomainname": 162, "mq_open": 180, "msgget": 186, "msgctl": 187, "msgrcv": 188,
    "msgsnd": 189, "semget": 190, "semctl": 191, "semtimedop": 192, "semop": 193, "shmget": 194,
    "shmctl": 195, "shmat": 196,
    "socket": 198, "socketpair": 199, "add_key": 217, "request_key": 218, "keyctl": 219,
    "clone": 220, "execve": 221, "swapon": 224, "swapoff": 225, "rt_tgsigqueueinfo": 240,
    "perf_event_open": 241, "fanotify_init": 262, "name_to_handle_at": 264,
    "open_by_handle_at": 265, "setns": 268, "process_vm_readv": 270, "process_vm_writev": 271,
    "kcmp": 272, "finit_module": 273, "seccomp": 277, "bpf": 280, "execveat": 281,
    "userfaultfd": 282, "kexec_file_load": 294, "pidfd_send_signal": 424, "io_uring_setup": 425,
    "io_uring_enter": 426, "io_uring_register": 427, "open_tree": 428, "move_mount": 429,
    "fsopen": 430, "fsconfig": 431, "fsmount": 432, "fspick": 433, "pidfd_open": 434,
    "clone3": 435, "pidfd_getfd": 438, "process_madvise": 440, "mount_setattr": 442,
    "quotactl_fd": 443, "landlock_create_ruleset": 444, "landlock_add_rule": 445,
    "landlock_restrict_self": 446, "process_mrelease": 448, "fchmodat2": 452, "setxattrat": 463,
    "removexattrat": 466, "open_tree_attr": 467, "memfd_create": 279, "memfd_secret": 447,
    "inotify_init1": 26, "inotify_add_watch": 27, "fanotify_mark": 263, "vmsplice": 75,
    "splice": 76, "tee": 77,
}  # fmt: skip

AUDIT_ARCH_X86_64 = 0xC000_003E
AUDIT_ARCH_AARCH64 = 0xC000_00B7
X32_SYSCALL_BIT = 0x4000_0000

#: machine name -> (AUDIT_ARCH value, syscall table, reject x32 numbers?)
_ARCHES: dict[str, tuple[int, Mapping[str, int], bool]] = {
    "x86_64": (AUDIT_ARCH_X86_64, SYSCALLS_X86_64, True),
    "aarch64": (AUDIT_ARCH_AARCH64, SYSCALLS_AARCH64, False),
    "arm64": (AUDIT_ARCH_AARCH64, SYSCALLS_AARCH64, False),
}

# --- Kernel ABI constants -----------------------------------------------------

_PR_SET_NO_NEW_PRIVS = 38
_PR_GET_SECCOMP = 21
_SECCOMP_SET_MODE_FILTER = 1
_SECCOMP_GET_ACTION_AVAIL = 2
_SECCOMP_FILTER_FLAG_TSYNC = 1

_RET_KILL_PROCESS = 0x8000_0000
_RET_ERRNO = 0x0005_0000
_RET_ALLOW = 0x7FFF_0000

# classic BPF opcodes (linux/bpf_common.h)
_LD_W_ABS = 0x00 | 0x00 | 0x20  # BPF_LD | BPF_W | BPF_ABS
_JEQ_K = 0x05 | 0x10 | 0x00  # BPF_JMP | BPF_JEQ | BPF_K
_JSET_K = 0x05 | 0x40 | 0x00  # BPF_JMP | BPF_JSET | BPF_K
_RET_K = 0x06 | 0x00  # BPF_RET | BPF_K

# struct seccomp_data offsets (little-endian: low word of each u64 arg first)
_OFF_NR = 0
_OFF_ARCH = 4


def _arg_lo(i: int) -> int:
    return 16 + 8 * i


def _arg_hi(i: int) -> int:
    return 20 + 8 * i


class _SockFilter(ctypes.Structure):
    _fields_ = (
        ("code", ctypes.c_uint16),
        ("jt", ctypes.c_uint8),
        ("jf", ctypes.c_uint8),
        ("k", ctypes.c_uint32),
    )


class _SockFprog(ctypes.Structure):
    _fields_ = (("len", ctypes.c_uint16), ("filter", ctypes.POINTER(_SockFilter)))


# --- BPF assembly helpers -----------------------------------------------------

_Insn = tuple[int, int, int, int]  # (code, jt, jf, k)


def _stmt(code: int, k: int) -> _Insn:
    return (code, 0, 0, k)


def _jump(code: int, k: int, jt: int, jf: int) -> _Insn:
    return (code, jt, jf, k)


def _load(offset: int) -> _Insn:
    return _stmt(_LD_W_ABS, offset)


def _ret(action: int) -> _Insn:
    return _stmt(_RET_K, action)


def _errno(err: int) -> int:
    return _RET_ERRNO | (err & 0xFFFF)


def _if_nr(nr: int, block: list[_Insn]) -> list[_Insn]:
    """``if A == nr: <block>`` where *block* always ends in a RET on every path."""
    return [_jump(_JEQ_K, nr, 0, len(block)), *block]


def _self_target_block(pid: int) -> list[_Insn]:
    """Allow only when args[0] == *pid* (high word 0, low word pid)."""
    return [
        _load(_arg_hi(0)),
        _jump(_JEQ_K, 0, 0, 3),  # high word != 0 -> EPERM
        _load(_arg_lo(0)),
        _jump(_JEQ_K, pid, 0, 1),  # low word != pid -> EPERM
        _ret(_RET_ALLOW),
        _ret(_errno(errno.EPERM)),
    ]


def _self_or_zero_block(pid: int) -> list[_Insn]:
    """Allow only when args[0] is 0 (the caller) or *pid* (high word 0)."""
    return [
        _load(_arg_hi(0)),
        _jump(_JEQ_K, 0, 0, 3),  # high word != 0 -> EPERM
        _load(_arg_lo(0)),
        _jump(_JEQ_K, 0, 2, 0),  # 0: the caller -> ALLOW
        _jump(_JEQ_K, pid, 1, 0),  # its own pid -> ALLOW
        _ret(_errno(errno.EPERM)),
        _ret(_RET_ALLOW),
    ]


def _clone_block() -> list[_Insn]:
    """Allow clone only for threads without namespace flags (flags is arg0 on both arches)."""
    return [
        _load(_arg_lo(0)),  # the kernel uses only the low 32 bits of clone flags
        _jump(_JSET_K, CLONE_NEW_NAMESPACES, 2, 0),  # any CLONE_NEW* -> EPERM
        _jump(_JSET_K, CLONE_THREAD, 0, 1),  # not a thread -> EPERM
        _ret(_RET_ALLOW),
        _ret(_errno(errno.EPERM)),
    ]


def _ioctl_block(requests: Iterable[int], arg: int = 1) -> list[_Insn]:
    """EPERM when the given argument (an int) is one of ``requests``, allow the rest."""
    reqs = list(requests)
    block = [_load(_arg_lo(arg))]
    for i, req in enumerate(reqs):
        block.append(_jump(_JEQ_K, req, len(reqs) - i, 0))  # match -> EPERM
    return [*block, _ret(_RET_ALLOW), _ret(_errno(errno.EPERM))]


def build_filter(machine: str, pid: int) -> list[_Insn]:
    """Compile the policy tables into a classic BPF program for one architecture.

    Args:
        machine: ``os.uname().machine`` of the target (``x86_64`` or ``aarch64``).
        pid: The only process signal syscalls may target (the caller's pid).

    Returns:
        The program as ``(code, jt, jf, k)`` tuples.

    Raises:
        OSError: If the architecture is not supported.
    """
    if machine not in _ARCHES:
        raise OSError(errno.ENOTSUP, f"seccomp filter: unsupported architecture {machine!r}")
    audit_arch, table, reject_x32 = _ARCHES[machine]
    prog: list[_Insn] = [
        _load(_OFF_ARCH),
        _jump(_JEQ_K, audit_arch, 1, 0),
        _ret(_RET_KILL_PROCESS),  # foreign syscall ABI
        _load(_OFF_NR),
    ]
    if reject_x32:
        prog += [_jump(_JSET_K, X32_SYSCALL_BIT, 0, 1), _ret(_RET_KILL_PROCESS)]
    for names, action in ((DENY_EPERM, errno.EPERM), (DENY_ENOSYS, errno.ENOSYS)):
        for name in names:
            if name in table:
                prog += _if_nr(table[name], [_ret(_errno(action))])
    for name in SELF_TARGET_ONLY:
        prog += _if_nr(table[name], _self_target_block(pid))
    for name in SELF_OR_ZERO_ONLY:
        prog += _if_nr(table[name], _self_or_zero_block(pid))
    prog += _if_nr(table["clone"], _clone_block())
    prog += _if_nr(table["ioctl"], _ioctl_block(DENIED_IOCTLS))
    prog += _if_nr(table["fcntl"], _ioctl_block(DENIED_FCNTLS))
    prog += _if_nr(table["prctl"], _ioctl_block(DENIED_PRCTLS, arg=0))
    prog.append(_ret(_RET_ALLOW))
    return prog


# --- Installation -------------------------------------------------------------

_libc = ctypes.CDLL(None, use_errno=True)
_libc.syscall.restype = ctypes.c_long
_libc.prctl.restype = ctypes.c_int


def _native_machine() -> str:
    machine = os.uname().machine
    if ctypes.sizeof(ctypes.c_void_p) != 8 or sys.byteorder != "little":
        # A 32-bit or big-endian userland on a 64-bit kernel: another syscall ABI.
        raise OSError(errno.ENOTSUP, f"seccomp filter: unsupported process ABI on {machine}")
    return machine


def _seccomp(op: int, flags: int, arg: ctypes.c_void_p | None) -> int:
    table = _ARCHES[_native_machine()][1]
    ret = _libc.syscall(
        ctypes.c_long(table["seccomp"]), ctypes.c_long(op), ctypes.c_long(flags), arg
    )
    return int(ret)


@functools.cache
def seccomp_available() -> bool:
    """Whether this kernel and process can take a seccomp filter.

    Returns:
        True when ``prctl(PR_GET_SECCOMP)`` works, the architecture is supported and
        the kernel offers the ``KILL_PROCESS``, ``ERRNO`` and ``ALLOW`` actions. Asked
        once per process (a template asks before it forks, and its children inherit it).
    """
    try:
        machine = _native_machine()
    except OSError:
        return False
    if machine not in _ARCHES or _libc.prctl(ctypes.c_int(_PR_GET_SECCOMP)) < 0:
        return False
    for action in (_RET_KILL_PROCESS, _RET_ERRNO, _RET_ALLOW):
        value = ctypes.c_uint32(action)
        ptr = ctypes.cast(ctypes.pointer(value), ctypes.c_void_p)
        if _seccomp(_SECCOMP_GET_ACTION_AVAIL, 0, ptr) != 0:
            return False
    return True


#: Stands for the caller's pid while the program is compiled; never a pid (pid_max is at
#: most 2**22) nor any other operand of the policy.
_PID_PLACEHOLDER = 0x7FFF_FFF1


class CompiledFilter:
    """The filter as a ready ctypes program, compiled once and installed per child.

    Building the program and its ctypes array costs about 1.2 ms of Python; only the pid
    that signal syscalls may target differs between children. So a template compiles it
    once with a placeholder pid and each child writes its own pid into the instructions
    that compare against it (``pid_slots``) before installing it: the result is exactly
    ``build_filter(machine, pid)``.
    """

    def __init__(self, machine: str) -> None:
        program = build_filter(machine, _PID_PLACEHOLDER)
        self.pid_slots = tuple(i for i, insn in enumerate(program) if insn[3] == _PID_PLACEHOLDER)
        if not self.pid_slots:
            raise OSError(errno.EINVAL, "seccomp filter: no signal-target operands to pin")
        self.insns = (_SockFilter * len(program))(*(_SockFilter(*insn[:3], insn[3]) for insn in
                                                     program))  # fmt: skip
        self.fprog = _SockFprog(len(program), ctypes.cast(self.insns, ctypes.POINTER(_SockFilter)))

    def program(self, pid: int) -> list[tuple[int, int, int, int]]:
        """The program with ``pid`` pinned, as ``(code, jt, jf, k)`` tuples (for tests)."""
        self._pin(pid)
        return [(i.code, i.jt, i.jf, i.k) for i in self.insns]

    def _pin(self, pid: int) -> None:
        if not 0 < pid < _PID_PLACEHOLDER:
            raise OSError(errno.EINVAL, f"seccomp filter: {pid} is not a pid")
        for slot in self.pid_slots:
            self.insns[slot].k = pid

    def install(self, pid: int) -> None:
        """Pin signal targets to ``pid`` and install on the whole calling process.

        Raises:
            OSError: As :func:`install_seccomp_filter`.
        """
        self._pin(pid)
        one, zero = ctypes.c_ulong(1), ctypes.c_ulong(0)
        if _libc.prctl(ctypes.c_int(_PR_SET_NO_NEW_PRIVS), one, zero, zero, zero) != 0:
            err = ctypes.get_errno()
            raise OSError(err, f"prctl(PR_SET_NO_NEW_PRIVS) failed: {os.strerror(err)}")
        ptr = ctypes.cast(ctypes.pointer(self.fprog), ctypes.c_void_p)
        ret = _seccomp(_SECCOMP_SET_MODE_FILTER, _SECCOMP_FILTER_FLAG_TSYNC, ptr)
        if ret < 0:
            err = ctypes.get_errno()
            raise OSError(err, f"seccomp(SECCOMP_SET_MODE_FILTER) refused: {os.strerror(err)}")
        if ret > 0:
            raise OSError(errno.EBUSY, f"seccomp TSYNC: thread {ret} could not be synchronised")


@functools.cache
def compiled_filter() -> CompiledFilter:
    """This process's architecture's filter, compiled once (see :class:`CompiledFilter`)."""
    return CompiledFilter(_native_machine())


def install_seccomp_filter() -> None:
    """Install the deny-list filter on the whole calling process, irrevocably.

    Sets ``PR_SET_NO_NEW_PRIVS`` and loads the filter with ``seccomp(2)`` and
    ``SECCOMP_FILTER_FLAG_TSYNC``, so every existing thread of the process is
    covered as well as the caller and anything it creates later. Signal targets
    are pinned to ``os.getpid()`` at the time of the call. Call it last, after
    Landlock: the filter itself denies the Landlock syscalls.

    Raises:
        OSError: If the architecture is unsupported or the kernel refuses the
            filter (including a thread that could not be synchronised).
    """
    compiled_filter().install(os.getpid())
