"""Positive controls: the payloads' dangerous actions, run with no sandbox at all.

Each action runs in a throwaway ``python -c`` process -- as the sandbox's uid where file
modes matter, so that "refused" in the sandbox can only mean a sandbox layer refused it --
and must visibly *succeed* from the host's point of view: the file appears, the listener
counts the connection, the key is read, the fork returns, the other process changes. A
typo in a payload, or a target the kernel would refuse anyway, cannot then pass for
containment.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import tempfile
import textwrap
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from ._harness import Canaries, Listeners, SysVObjects, make_canaries, scheduling_of
from ._harness import as_nobody as _as_nobody

pytestmark = pytest.mark.redteam

as_root = pytest.mark.skipif(os.geteuid() != 0, reason="dropping to uid 65534 needs root")

#: Imports done before the drop: the interpreter's own files are under /root here, out of
#: reach of uid 65534 afterwards.
_PRELUDE = """\
import ctypes, errno, json, os, pickle, resource, shutil, signal, socket, sys
"""
_DROP = """\
os.setgroups([])
os.setresgid(65534, 65534, 65534)
os.setresuid(65534, 65534, 65534)
"""


def control(body: str, *, nobody: bool = False, timeout_s: float = 30.0, **ctx: Any) -> Any:
    """Run ``body`` (which sets ``result``) in a fresh interpreter; return ``result``."""
    source = (
        _PRELUDE
        + f"ctx = json.loads({json.dumps(json.dumps(ctx))})\n"
        + (_DROP if nobody else "")
        + textwrap.dedent(body)
        + "\nprint(json.dumps(result))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", source],
        capture_output=True, text=True, timeout=timeout_s, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


@pytest.fixture
def fresh_canaries() -> Iterator[Canaries]:
    with make_canaries(("/tmp", sys.prefix)) as made:
        yield made


@pytest.fixture
def fresh_listeners() -> Iterator[Listeners]:
    directory = tempfile.mkdtemp(prefix="redteam-control-")
    os.chmod(directory, 0o777)
    found = Listeners(directory)
    yield found
    found.close()
    os.rmdir(directory)


@pytest.fixture
def nobody_process() -> Iterator[subprocess.Popen[bytes]]:
    """A bystander process of the sandbox's uid (as another tenant's child would be)."""
    process = subprocess.Popen(
        ["/bin/cat"], stdin=subprocess.PIPE, stdout=subprocess.DEVNULL,
        **_as_nobody(),
    )  # fmt: skip
    yield process
    assert process.stdin is not None
    process.stdin.close()
    if process.poll() is None:
        process.kill()
    process.wait(timeout=5)


@as_root
def test_files_appear_where_the_sandbox_refused_them(fresh_canaries: Canaries) -> None:
    targets = fresh_canaries.context()["targets"]
    result = control("""
        for t in ctx['targets']:
            with open(t, 'w') as handle:
                handle.write('escaped')
        result = 'written'
    """, nobody=True, targets=targets)  # fmt: skip
    assert result == "written"
    assert all(Path(t).read_text() == "escaped" for t in targets)


@as_root
def test_pickle_and_system_run_commands(fresh_canaries: Canaries) -> None:
    target = fresh_canaries.context()["targets"][1]
    control("""
        data = b"cposix\\nsystem\\n(S'touch " + ctx['t'].encode() + b"'\\ntR."
        result = pickle.loads(data)
    """, nobody=True, t=target)  # fmt: skip
    assert os.path.exists(target)


@as_root
def test_extended_attributes_and_victim_are_writable(fresh_canaries: Canaries) -> None:
    victim = fresh_canaries.victim
    control("""
        os.setxattr(ctx['victim'], 'user.planted', b'by-control')
        with open(ctx['victim'], 'a') as handle:
            handle.write('x')
        result = 1
    """, nobody=True, victim=victim)  # fmt: skip
    assert os.getxattr(victim, "user.planted") == b"by-control"
    assert Path(victim).read_text() == "untouched\nx"


def test_listeners_count_every_family(fresh_listeners: Listeners) -> None:
    control("""
        s = socket.socket(); s.connect(('127.0.0.1', ctx['tcp_port'])); s.close()
        u = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        u.sendto(b'x', ('127.0.0.1', ctx['udp_port']))
        p = socket.socket(socket.AF_UNIX); p.connect(ctx['unix_path']); p.close()
        a = socket.socket(socket.AF_UNIX); a.connect('\\0' + ctx['abstract']); a.close()
        result = 1
    """, **fresh_listeners.addresses())  # fmt: skip
    for kind in ("tcp", "udp", "unix", "abstract"):
        assert fresh_listeners.wait_for(kind) >= 1, fresh_listeners.counts


@as_root
def test_unix_listener_is_reachable_by_the_sandbox_uid(fresh_listeners: Listeners) -> None:
    control("""
        p = socket.socket(socket.AF_UNIX); p.connect(ctx['unix_path']); p.close()
        a = socket.socket(socket.AF_UNIX); a.connect('\\0' + ctx['abstract']); a.close()
        result = 1
    """, nobody=True, **fresh_listeners.addresses())  # fmt: skip
    assert fresh_listeners.wait_for("unix") >= 1
    assert fresh_listeners.wait_for("abstract") >= 1


@as_root
def test_the_decoys_environment_holds_the_key(decoy: int, fake_api_key: str) -> None:
    result = control("""
        with open('/proc/%d/environ' % ctx['pid'], 'rb') as handle:
            result = handle.read().decode()
    """, nobody=True, pid=decoy)  # fmt: skip
    assert fake_api_key in result


def test_the_key_is_in_the_hosts_environment(fake_api_key: str) -> None:
    # What a child would see if the worker inherited the host's environment.
    assert os.environ["FAKE_API_KEY"] == fake_api_key
    assert control("result = os.environ.get('FAKE_API_KEY')") == fake_api_key


def test_host_files_and_proc_are_readable_without_the_sandbox(decoy: int) -> None:
    result = control("""
        import numpy as np, pandas as pd
        result = {
            'passwd': len(pd.read_csv('/etc/passwd', sep=':', header=None)),
            'fromfile': int(np.fromfile('/etc/passwd', dtype=np.uint8).size),
            'other_root': os.path.exists('/proc/%d/root/etc/passwd' % ctx['pid']),
        }
    """, pid=decoy)  # fmt: skip
    assert result["passwd"] > 0 and result["fromfile"] > 0 and result["other_root"]


@as_root
def test_the_sandbox_uid_may_read_what_landlock_hides() -> None:
    result = control("""
        result = {'passwd': len(open('/etc/passwd').read()), 'etc': len(os.listdir('/etc'))}
    """, nobody=True)  # fmt: skip
    assert result["passwd"] > 0 and result["etc"] > 0


def test_fork_exec_and_raw_syscalls_work() -> None:
    result = control("""
        pid = os.fork()
        if pid == 0:
            os._exit(7)
        _, status = os.waitpid(pid, 0)
        libc = ctypes.CDLL(None, use_errno=True)
        raw = libc.syscall(41, 2, 1, 0)  # socket(AF_INET, SOCK_STREAM)
        pair = socket.socketpair()
        import subprocess
        result = {'fork': os.waitstatus_to_exitcode(status),
                  'raw_socket': raw >= 0,
                  'socketpair': len(pair),
                  'exec': subprocess.run(['/bin/true']).returncode}
    """)  # fmt: skip
    assert result == {"fork": 7, "raw_socket": True, "socketpair": 2, "exec": 0}


@as_root
def test_same_uid_processes_can_change_and_kill_each_other(
    nobody_process: subprocess.Popen[bytes],
) -> None:
    pid = nobody_process.pid
    before = scheduling_of(pid)
    control("""
        pid = ctx['pid']
        os.sched_setaffinity(pid, {0})
        os.setpriority(os.PRIO_PROCESS, pid, 10)
        resource.prlimit(pid, resource.RLIMIT_NOFILE, (16, 16))
        result = 1
    """, nobody=True, pid=pid)  # fmt: skip
    after = scheduling_of(pid)
    assert after["affinity"] == [0]
    assert after["nice"] == 10
    assert after["limits"] != before["limits"]
    control("os.kill(ctx['pid'], signal.SIGKILL); result = 1", nobody=True, pid=pid)
    assert nobody_process.wait(timeout=5) == -signal.SIGKILL


def test_deep_trees_broke_a_recursive_delete(tmp_path: Path) -> None:
    result = control("""
        os.chdir(ctx['base'])
        for _ in range(3000):
            os.mkdir('d'); os.chdir('d')
        try:
            shutil.rmtree(ctx['base'] + '/d')
            result = 'deleted'
        except RecursionError:
            result = 'RecursionError'
    """, base=str(tmp_path))  # fmt: skip
    assert result == "RecursionError"  # what used to end the worker
    subprocess.run(["/bin/rm", "-rf", str(tmp_path / "d")], check=True)


def test_catastrophic_regex_does_not_end_by_itself() -> None:
    with pytest.raises(subprocess.TimeoutExpired):
        control("import re; result = bool(re.match('(a+)+$', 'a' * 40 + 'b'))", timeout_s=1.5)


def test_signals_reach_the_parent_without_the_sandbox() -> None:
    result = control("""
        r, w = os.pipe()
        pid = os.fork()
        if pid == 0:
            os.close(w); os.read(r, 1); os._exit(0)
        os.kill(pid, signal.SIGKILL)
        _, status = os.waitpid(pid, 0)
        result = os.WTERMSIG(status)
    """)  # fmt: skip
    assert result == signal.SIGKILL


@as_root
def test_host_sysv_objects_are_reachable_by_id() -> None:
    objects = SysVObjects()
    try:
        control("""
            libc = ctypes.CDLL(None, use_errno=True)
            libc.shmat.restype = ctypes.c_void_p
            address = libc.shmat(ctx['shmid'], None, 0)
            ctypes.memmove(address, b'CONTROL', 7)
            result = libc.semctl(ctx['semid'], 0, 16, 9)
        """, nobody=True, shmid=objects.shmid, semid=objects.semid)  # fmt: skip
        text, value = objects.snapshot()
        assert text.startswith(b"CONTROL") and value == 9
    finally:
        objects.close()
