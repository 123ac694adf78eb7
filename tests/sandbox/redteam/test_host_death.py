"""When the host dies in the middle of a call, no sandbox process may outlive it.

A throwaway host process starts sandboxes (isolated and restricted, Gate 1 off) and runs
a body in each that sleeps for an hour -- one that clears its own parent-death signal
first, one that does not. The test then SIGKILLs the host: the worker sees its control
socket close and exits, and every child of the sandbox uid under it must die with it,
instead of being reparented to init and living on.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time

import pytest

from ._harness import confined_descendants, poll

pytestmark = [pytest.mark.redteam, pytest.mark.isolation]

HOST = textwrap.dedent(
    """
    import sys, threading, time
    sys.path.insert(0, {tests!r})
    from redteam.payloads import RECOVER
    from geomint.errors import SandboxUnavailableError
    from geomint.sandbox import Sandbox

    SLEEP = RECOVER + '''
    if clear:
        ctypes = sys.modules['ctypes']
        ctypes.CDLL(None).prctl(1, 0, 0, 0, 0)  # PR_SET_PDEATHSIG: none
    sys.modules['time'].sleep(3600)
    '''
    workers = []
    for mode in ('isolated', 'restricted'):
        for clear in (True, False):
            sandbox = Sandbox(mode=mode, timeout_s=600, memory_mb=512, static_checks=False)
            try:
                sandbox.run('return 1')
            except SandboxUnavailableError:
                continue
            workers.append(sandbox._state.worker.process.pid)
            threading.Thread(target=sandbox.run, args=(SLEEP, {{'clear': clear}}),
                             daemon=True).start()
    print(' '.join(map(str, workers)), flush=True)
    time.sleep(3600)
    """
)


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as handle:
            return handle.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def test_no_sandbox_process_outlives_a_killed_host() -> None:
    tests = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    host = subprocess.Popen(
        [sys.executable, "-c", HOST.format(tests=tests)],
        stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
    )  # fmt: skip
    try:
        assert host.stdout is not None
        workers = [int(pid) for pid in host.stdout.readline().split()]
        if not workers:
            pytest.skip("neither sandbox mode is available on this machine")
        # each worker holds a child of the sandbox uid running the sleeping body (the next
        # spare is only asked for when the call ends)
        assert poll(lambda: all(confined_descendants(w) for w in workers), 10)
        children = [pid for w in workers for pid in confined_descendants(w)]
        time.sleep(0.3)  # let the bodies reach their prctl and sleep
    finally:
        host.send_signal(signal.SIGKILL)
        host.wait(timeout=10)
        if host.stdout is not None:
            host.stdout.close()
    assert poll(lambda: not any(_alive(w) for w in workers), 10), "a worker outlived its host"
    assert poll(lambda: not any(_alive(c) for c in children), 5), [c for c in children if _alive(c)]
