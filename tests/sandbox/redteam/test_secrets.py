"""A fake API key in the host's environment never reaches the worker, a child, or a result.

The key is set in this process's environment *before* the sandbox under test starts
(the session key before the Gate-1-off sandboxes; a fresh key before a dedicated Gate-1-on
sandbox here). The host reads the worker's and the spare child's ``/proc/<pid>/environ``
itself, and every probe's whole result -- value, error, stdout -- is searched for the key.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import time

import pytest

from geomint.confine import worker_environment
from geomint.errors import SandboxUnavailableError
from geomint.sandbox import Sandbox

from ._harness import SECRET_ENV, spare_pids, timed, worker_of
from .conftest import Config
from .payloads import PAYLOADS, RECOVER, TRY

pytestmark = [pytest.mark.redteam, pytest.mark.isolation]

#: Probes that print or return every environment the child can name, through routes
#: Gate 1 lets through (``pandas.io.common.os``) and routes it refuses.
PROBES = {
    "environ_via_pandas_module": (
        "import pandas.io.common as common\n"
        "print(dict(common.os.environ))\n"
        "return sorted(common.os.environ.items())"
    ),
    "environ_via_format": "return '{0.__globals__[os].environ}'.format(np.load)",
    "proc_environ": RECOVER
    + TRY
    + (
        "return {p: _try(lambda: open(p).read()) for p in "
        "['/proc/self/environ', '/proc/%d/environ' % os.getppid(), "
        "'/proc/%d/environ' % decoy_pid]}"
    ),
}


def _environ(pid: int) -> bytes:
    with open(f"/proc/{pid}/environ", "rb") as handle:
        return handle.read()


def _assert_clean(sandbox: Sandbox, key: str) -> None:
    worker = worker_of(sandbox)
    environs = {worker.process.pid: _environ(worker.process.pid)}
    for _ in range(100):
        for pid in spare_pids(sandbox):
            with contextlib.suppress(OSError):  # the last call's child may be exiting
                environs[pid] = _environ(pid)
        if len(environs) >= 2:
            break
        time.sleep(0.02)
    assert len(environs) >= 2, "no spare child to inspect"
    for pid, environ in environs.items():
        assert key.encode() not in environ, f"the key is in /proc/{pid}/environ"
        names = {item.split(b"=", 1)[0].decode() for item in environ.split(b"\0") if item}
        assert names <= set(worker_environment()), names


@pytest.mark.parametrize("config_name", ["isolated-gate1-off", "restricted-gate1-off"])
def test_gate1_off_workers_never_got_the_session_key(
    config_name: str, config: Config, fake_api_key: str
) -> None:
    assert os.environ[SECRET_ENV] == fake_api_key  # it was there when the worker started
    _assert_clean(config.sandbox, fake_api_key)


def test_a_sandbox_started_after_setenv_never_sees_the_key(
    monkeypatch: pytest.MonkeyPatch, decoy: int
) -> None:
    key = f"sk-test-{secrets.token_hex(16)}"
    monkeypatch.setenv(SECRET_ENV, key)
    sandbox = Sandbox(mode="isolated", timeout_s=2, memory_mb=512)  # Gate 1 on, as deployed
    try:
        try:
            assert sandbox.run("return 1").value == 1
        except SandboxUnavailableError as exc:
            pytest.skip(f"the isolated sandbox is not available on this machine: {exc}")
        _assert_clean(sandbox, key)
        probes = dict(PROBES)
        probes.update({p.name: p.code() for p in PAYLOADS if p.family == "secrets"})
        for name, code in probes.items():
            run = timed(sandbox, code, {"decoy_pid": decoy, "ctx": {"decoy_pid": decoy}})
            assert key not in run.text, f"{name} returned the key"
            assert SECRET_ENV not in run.text, f"{name} saw the variable's name"
    finally:
        sandbox.close()
    # Gate 1 now refuses every route above; with it off, the same route really runs and
    # really reads the environment, so the absence of the key is not a probe that failed.
    bare = Sandbox(mode="isolated", timeout_s=2, memory_mb=512, static_checks=False)
    try:
        read = timed(bare, PROBES["environ_via_pandas_module"])
        assert read.result.ok and "PATH" in str(read.result.value), read.describe()
        assert "PATH" in read.result.stdout
        assert key not in read.text
        assert SECRET_ENV not in read.text
    finally:
        bare.close()
