"""The seccomp layer, probed from throwaway forked children.

Every probe runs twice: once under the filter and once without it (the positive
control), so an operation that fails for an unrelated reason -- a typo, a missing
binary -- cannot pass as containment.
"""

from __future__ import annotations

import ctypes
import errno
import json
import os
import signal
import socket
import struct
import subprocess
import sys
import threading
import warnings
from collections.abc import Callable

import pytest

from geomint.confine import _seccomp
from geomint.confine._seccomp import install_seccomp_filter, seccomp_available

pytestmark = pytest.mark.isolation
needs_seccomp = pytest.mark.skipif(
    not seccomp_available(), reason="kernel or architecture lacks seccomp filter mode"
)

Outcomes = dict[str, str]


def run_in_child(body: Callable[[], Outcomes]) -> tuple[Outcomes, int]:
    """Fork, run *body* in the child, return its outcomes and the wait status."""
    r, w = os.pipe()
    with warnings.catch_warnings():
        # Python 3.12+ warns about fork() in a multi-threaded process. The child
        # only runs *body* and leaves with os._exit, so that hazard does not apply.
        warnings.simplefilter("ignore", DeprecationWarning)
        pid = os.fork()
    if pid == 0:  # child: never return into pytest
        code = 0
        try:
            os.close(r)
            payload = json.dumps(body()).encode()
        except BaseException as exc:
            payload, code = json.dumps({"__error__": repr(exc)}).encode(), 3
        try:
            while payload:
                payload = payload[os.write(w, payload) :]
        finally:
            os._exit(code)
    os.close(w)
    chunks = []
    with os.fdopen(r, "rb") as reader:
        chunks.append(reader.read())
    _, status = os.waitpid(pid, 0)
    data = b"".join(chunks)
    return (json.loads(data) if data else {}), status


def attempt(fn: Callable[[], object]) -> str:
    """'ok', or the errno name (or exception type) of the failure."""
    try:
        fn()
    except OSError as exc:
        return errno.errorcode.get(exc.errno or 0, type(exc).__name__)
    except Exception as exc:
        return type(exc).__name__
    return "ok"


def _fork_and_reap() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)  # see run_in_child
        pid = os.fork()
    if pid == 0:
        os._exit(0)
    os.waitpid(pid, 0)


def _open_close(family: int, kind: int = socket.SOCK_STREAM, proto: int = 0) -> None:
    socket.socket(family, kind, proto).close()


def _socketpair() -> None:
    a, b = socket.socketpair()
    a.close()
    b.close()


def _thread_runs() -> None:
    ran: list[bool] = []
    t = threading.Thread(target=lambda: ran.append(True))
    t.start()
    t.join()
    assert ran == [True]


def _numpy_matmul() -> None:
    import numpy as np

    a = np.arange(300 * 300, dtype=np.float64).reshape(300, 300) / 1e4
    b = a @ a.T
    assert b.shape == (300, 300)
    assert float(b[0, 0]) == pytest.approx(float((a[0] ** 2).sum()))


def _raw_clone3() -> None:
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.syscall(ctypes.c_long(435), None, ctypes.c_long(0)) == -1:
        err = ctypes.get_errno()
        raise OSError(err, os.strerror(err))


def probe(*, filtered: bool) -> Outcomes:
    """Body run in the child: optionally install the filter, then try everything."""
    # A thread that exists *before* the filter: TSYNC must cover it too.
    go, done = threading.Event(), threading.Event()
    early: Outcomes = {}

    def early_thread() -> None:
        go.wait()
        early["early_thread_socket"] = attempt(lambda: _open_close(socket.AF_INET))
        done.set()

    threading.Thread(target=early_thread, daemon=True).start()
    if filtered:
        install_seccomp_filter()
    go.set()
    out: Outcomes = {
        "fork": attempt(_fork_and_reap),
        "subprocess": attempt(lambda: subprocess.run([sys.executable, "-c", "pass"], check=True)),
        "socket_inet": attempt(lambda: _open_close(socket.AF_INET)),
        "socket_unix": attempt(lambda: _open_close(socket.AF_UNIX)),
        "socket_netlink": attempt(lambda: _open_close(socket.AF_NETLINK, socket.SOCK_RAW, 0)),
        "socketpair": attempt(_socketpair),
        "kill_parent": attempt(lambda: os.kill(os.getppid(), 0)),
        "kill_self": attempt(lambda: os.kill(os.getpid(), 0)),
        "tgkill_self": attempt(lambda: signal.pthread_kill(threading.get_ident(), 0)),
        "setuid_same": attempt(lambda: os.setuid(os.getuid())),
        "clone3": attempt(_raw_clone3),
        "thread": attempt(_thread_runs),
        "numpy": attempt(_numpy_matmul),
    }
    done.wait(10)
    return out | early


@needs_seccomp
def test_control_without_filter_everything_works() -> None:
    out, status = run_in_child(lambda: probe(filtered=False))
    assert os.waitstatus_to_exitcode(status) == 0, out
    expected = dict.fromkeys(out, "ok") | {"clone3": "EINVAL"}  # NULL args, size 0
    assert out == expected


@needs_seccomp
def test_filter_denies_escapes_and_keeps_threads_working() -> None:
    out, status = run_in_child(lambda: probe(filtered=True))
    assert os.waitstatus_to_exitcode(status) == 0, out
    assert out == {
        "fork": "EPERM",
        "subprocess": "EPERM",
        "socket_inet": "EPERM",
        "socket_unix": "EPERM",
        "socket_netlink": "EPERM",
        "socketpair": "EPERM",
        "kill_parent": "EPERM",
        "kill_self": "ok",
        "tgkill_self": "ok",
        "setuid_same": "EPERM",
        "clone3": "ENOSYS",
        "thread": "ok",
        "numpy": "ok",
        "early_thread_socket": "EPERM",
    }


@needs_seccomp
def test_exec_is_denied() -> None:
    def body() -> Outcomes:
        install_seccomp_filter()
        # Had exec worked, the child would be /bin/true: no payload, exit 0.
        return {"execv": attempt(lambda: os.execv("/bin/true", ["true"]))}

    out, status = run_in_child(body)
    assert out == {"execv": "EPERM"}
    assert os.waitstatus_to_exitcode(status) == 0


@needs_seccomp
@pytest.mark.skipif(os.uname().machine != "x86_64", reason="x32 is an x86_64 ABI")
def test_x32_syscall_kills_the_process() -> None:
    def body() -> Outcomes:
        install_seccomp_filter()
        libc = ctypes.CDLL(None, use_errno=True)
        libc.syscall(ctypes.c_long(0x4000_0000 | 39))  # x32 getpid
        return {"survived": "yes"}

    out, status = run_in_child(body)
    assert out == {}
    assert os.WIFSIGNALED(status)
    assert os.WTERMSIG(status) == signal.SIGSYS


# --- The compiled program, checked in a tiny classic-BPF interpreter ------------
# This runs on any host, so the aarch64 program is exercised on x86_64 too.

ALLOW, KILL = 0x7FFF_0000, 0x8000_0000
EPERM, ENOSYS = 0x0005_0000 | errno.EPERM, 0x0005_0000 | errno.ENOSYS
ARCHES = {
    "x86_64": (0xC000_003E, _seccomp.SYSCALLS_X86_64),
    "aarch64": (0xC000_00B7, _seccomp.SYSCALLS_AARCH64),
}
PID = 4242
PTHREAD_CLONE_FLAGS = 0x003D_0F00  # what glibc's pthread_create passes


def run_bpf(prog: list[tuple[int, int, int, int]], nr: int, arch: int, *args: int) -> int:
    """Run a seccomp program over one ``struct seccomp_data`` and return its action."""
    argv = [*args, *[0] * (6 - len(args))]
    data = struct.pack("<IIQ6Q", nr & 0xFFFF_FFFF, arch, 0, *argv)
    pc, acc = 0, 0
    while True:
        code, jt, jf, k = prog[pc]
        assert 0 <= jt < 256 and 0 <= jf < 256
        if code == 0x20:  # LD W ABS
            (acc,) = struct.unpack_from("<I", data, k)
            pc += 1
        elif code == 0x15:  # JEQ K
            pc += 1 + (jt if acc == k else jf)
        elif code == 0x45:  # JSET K
            pc += 1 + (jt if acc & k else jf)
        elif code == 0x06:  # RET K
            return k
        else:
            raise AssertionError(f"unexpected opcode {code:#x}")


@pytest.mark.parametrize("machine", sorted(ARCHES))
def test_compiled_policy(machine: str) -> None:
    audit_arch, table = ARCHES[machine]
    prog = _seccomp.build_filter(machine, PID)
    assert len(prog) < 4096
    assert len(set(table.values())) == len(table), "two names share a number"

    def verdict(name: str, *args: int) -> int:
        return run_bpf(prog, table[name], audit_arch, *args)

    other_arch = ARCHES["aarch64" if machine == "x86_64" else "x86_64"][0]
    assert run_bpf(prog, table["kill"], other_arch, PID) == KILL
    assert run_bpf(prog, 0x4000_0000 | 39, audit_arch) == (KILL if machine == "x86_64" else ALLOW)
    for name in _seccomp.DENY_EPERM:
        if name in table:
            assert verdict(name) == EPERM, name
    assert verdict("clone3") == ENOSYS
    assert verdict("clone", PTHREAD_CLONE_FLAGS) == ALLOW
    assert verdict("clone", PTHREAD_CLONE_FLAGS | (1 << 40)) == ALLOW  # high bits ignored
    assert verdict("clone", 0x0120_0011) == EPERM  # glibc fork(): SIGCHLD | CHILD_*TID
    assert verdict("clone", 0x0000_4111) == EPERM  # posix_spawn: CLONE_VM | CLONE_VFORK
    assert verdict("clone", PTHREAD_CLONE_FLAGS | 0x4000_0000) == EPERM  # + CLONE_NEWNET
    for name in _seccomp.SELF_TARGET_ONLY:
        assert verdict(name, PID) == ALLOW, name
        assert verdict(name, PID + 1) == EPERM, name
        assert verdict(name, PID | (1 << 32)) == EPERM, name
        assert verdict(name, 0) == EPERM, name
        assert verdict(name, 0xFFFF_FFFF_FFFF_FFFF) == EPERM, name  # -1: everyone
    for name in _seccomp.SELF_OR_ZERO_ONLY:  # another same-uid process's limits, scheduling
        assert verdict(name, 0) == ALLOW, name
        assert verdict(name, PID) == ALLOW, name
        assert verdict(name, PID + 1) == EPERM, name
        assert verdict(name, PID | (1 << 32)) == EPERM, name
        assert verdict(name, 0xFFFF_FFFF_FFFF_FFFF) == EPERM, name
    assert verdict("ioctl", 0, 0x5412) == EPERM  # TIOCSTI
    assert verdict("ioctl", 0, 0x541C) == EPERM  # TIOCLINUX
    assert verdict("ioctl", 0, 0x5401) == ALLOW  # TCGETS
    assert verdict("ioctl", 0, 0x40086602) == EPERM  # FS_IOC_SETFLAGS (chattr)
    assert verdict("ioctl", 0, 0x8901) == EPERM  # FIOSETOWN
    assert verdict("fcntl", 0, 8) == EPERM  # F_SETOWN: SIGIO to another process
    assert verdict("fcntl", 0, 15) == EPERM  # F_SETOWN_EX
    assert verdict("fcntl", 0, 1) == ALLOW  # F_GETFD
    assert verdict("fcntl", 0, 4) == ALLOW  # F_SETFL
    for nr in range(600):  # everything not named in the policy is allowed
        if nr not in table.values():
            assert run_bpf(prog, nr, audit_arch) == ALLOW, nr


def test_unknown_architecture_is_refused() -> None:
    with pytest.raises(OSError, match="unsupported architecture"):
        _seccomp.build_filter("riscv64", PID)


@pytest.mark.parametrize("machine", ["x86_64", "aarch64"])
@pytest.mark.parametrize("pid", [1, 4242, 65_535, 4_194_304])
def test_the_filter_compiled_once_is_the_filter_built_per_pid(machine: str, pid: int) -> None:
    compiled = _seccomp.CompiledFilter(machine)
    assert compiled.program(pid) == _seccomp.build_filter(machine, pid)
    # One comparison with the caller's pid per signal-sending and per self-or-zero syscall.
    assert len(compiled.pid_slots) == len(_seccomp.SELF_TARGET_ONLY) + len(
        _seccomp.SELF_OR_ZERO_ONLY
    )
