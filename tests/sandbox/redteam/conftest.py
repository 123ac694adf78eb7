"""Containment fixtures for the red-team suite: sandboxes per configuration, listeners,
canaries, a secret in the host's environment and a decoy process that holds it.

Configurations (every payload runs in each one that this machine supports):

* ``isolated-gate1-on``: the session ``isolated`` sandbox, Gate 1 on, as deployed.
* ``isolated-gate1-off``: every kernel layer with Gate 1 switched off, so Gate 2 alone
  must contain payloads that really reach ``os``, ``socket`` and ``ctypes``.
* ``restricted-gate1-off``: no namespaces, Gate 1 off: seccomp, Landlock, rlimits and
  the uid drop alone.

The two Gate-1-off sandboxes are started *after* the fake API key is in this process's
environment, and get a 2 s wall clock so that the wall-clock payloads stay cheap.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from geomint.confine._layers import BASE
from geomint.errors import SandboxUnavailableError
from geomint.sandbox import Sandbox

from ._harness import (
    GATE1_BYPASSES,
    NOBODY,
    SECRET_ENV,
    Canaries,
    Listeners,
    make_canaries,
    spare_pids,
    timed,
    worker_of,
)
from ._harness import (
    as_nobody as _as_nobody,
)
from .payloads import RECOVER

CONFIGS = ("isolated-gate1-on", "isolated-gate1-off", "restricted-gate1-off")
GATE_OFF_TIMEOUT_S = 2.0


@dataclass
class Config:
    """One sandbox under attack, with what the checks need to know about it."""

    name: str
    sandbox: Sandbox
    mode: str
    gate1: bool
    sibling: Sandbox | None = None  # another tenant's sandbox, for cross-child payloads
    notes: dict[str, Any] = field(default_factory=dict)

    @property
    def timeout_s(self) -> float:
        return self.sandbox.timeout_s


@pytest.fixture(scope="session")
def fake_api_key() -> Iterator[str]:
    """``FAKE_API_KEY=sk-test-<random>`` in this process's environment for the session."""
    key = f"sk-test-{secrets.token_hex(16)}"
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv(SECRET_ENV, key)
        yield key


@pytest.fixture(scope="session")
def decoy(fake_api_key: str) -> Iterator[int]:
    """A process running as the sandbox's uid with the key in its exec-time environment.

    It stands for any process that holds a secret in ``/proc/<pid>/environ`` -- a host
    started with the key -- and runs as uid 65534 so that file modes alone would let a
    sandbox child read it: only the mount namespace and Landlock stand in the way.
    """
    process = subprocess.Popen(
        ["/bin/cat"],  # holds the key in its environment until its stdin closes
        stdin=subprocess.PIPE,
        stdout=subprocess.DEVNULL,
        env={"PATH": "/usr/bin:/bin", SECRET_ENV: fake_api_key},
        **_as_nobody(),
    )
    yield process.pid
    assert process.stdin is not None
    process.stdin.close()
    process.wait(timeout=5)


@pytest.fixture(scope="session")
def listeners() -> Iterator[Listeners]:
    """Listeners every payload of the session aims at; they must count nothing, ever."""
    directory = tempfile.mkdtemp(prefix="redteam-listen-")
    os.chmod(directory, 0o777)
    found = Listeners(directory)
    yield found
    found.close()
    os.rmdir(directory)


@pytest.fixture(scope="session")
def canaries() -> Iterator[Canaries]:
    with make_canaries(("/tmp", sys.prefix)) as made:
        yield made


def _start(mode: str, **options: Any) -> Sandbox:
    sandbox = Sandbox(mode=mode, memory_mb=512, **options)  # type: ignore[arg-type]
    try:
        sandbox.run("return 1")
    except SandboxUnavailableError as exc:
        sandbox.close()
        pytest.skip(f"the {mode} sandbox is not available on this machine: {exc}")
    return sandbox


@pytest.fixture(scope="session")
def isolated_gate_off(fake_api_key: str) -> Iterator[Sandbox]:
    sandbox = _start("isolated", static_checks=False, timeout_s=GATE_OFF_TIMEOUT_S)
    yield sandbox
    sandbox.close()


@pytest.fixture(scope="session")
def restricted_gate_off(fake_api_key: str) -> Iterator[Sandbox]:
    sandbox = _start("restricted", static_checks=False, timeout_s=GATE_OFF_TIMEOUT_S)
    yield sandbox
    sandbox.close()


def _plant_in_restricted_scratch(sandbox: Sandbox) -> tuple[str, str]:
    """A file in a directory beside the restricted children's scratch directories, owned
    by the sandbox uid, as another child's scratch would be: only Landlock keeps a child
    out of it."""
    run = timed(sandbox, RECOVER + "return os.getcwd()")
    assert run.result.ok, run.describe()
    base = os.path.dirname(str(run.result.value))
    if base == BASE:  # the child sees the template's directory through the minimal root
        assert sandbox._state.worker is not None
        base = sandbox._state.worker.hello["base"]
    directory = tempfile.mkdtemp(prefix="tmp-other-child-", dir=base)
    text = f"PLANTED-{secrets.token_hex(8)}"
    path = os.path.join(directory, "data.pkl")
    Path(path).write_text(text)
    if os.geteuid() == 0:
        os.chown(directory, NOBODY, NOBODY)
        os.chown(path, NOBODY, NOBODY)
    return path, text


@pytest.fixture(scope="session")
def configs(
    request: pytest.FixtureRequest, canaries: Canaries, fake_api_key: str
) -> dict[str, Config]:
    """Every configuration this machine supports, started lazily by name."""
    return _ConfigCache(request, canaries)  # type: ignore[return-value]


class _ConfigCache(dict[str, Config]):
    def __init__(self, request: pytest.FixtureRequest, canaries: Canaries) -> None:
        super().__init__()
        self._request = request
        self._canaries = canaries

    def __missing__(self, name: str) -> Config:
        get = self._request.getfixturevalue
        if name == "isolated-gate1-on":
            config = Config(name, get("isolated"), "isolated", True)
            config.sibling = get("isolated_gate_off")
        elif name == "isolated-gate1-off":
            config = Config(name, get("isolated_gate_off"), "isolated", False)
            config.sibling = get("restricted_gate_off")
        elif name == "restricted-gate1-off":
            config = Config(name, get("restricted_gate_off"), "restricted", False)
            config.sibling = get("isolated_gate_off")
            if not self._canaries.planted:
                path, text = _plant_in_restricted_scratch(config.sandbox)
                self._canaries.planted, self._canaries.planted_text = path, text
                self._canaries.baseline = self._canaries.snapshot()
        else:
            raise KeyError(name)
        config.notes["worker_pid"] = worker_of(config.sandbox).process.pid
        self[name] = config
        return config


@pytest.fixture
def config(request: pytest.FixtureRequest, configs: dict[str, Config]) -> Config:
    """The configuration named by the test's ``config_name`` parameter."""
    name = request.node.callspec.params["config_name"]
    found = configs[name]
    assert found.sandbox.static_checks is found.gate1, f"{name}: Gate 1 is not as named"
    assert found.sandbox.mode == found.mode, f"{name}: runs in {found.sandbox.mode}"
    return found


@pytest.fixture(scope="session")
def planted(configs: dict[str, Config], canaries: Canaries) -> Canaries:
    """Make sure the restricted sandbox planted its neighbour file (when it exists)."""
    with contextlib.suppress(pytest.skip.Exception):
        configs["restricted-gate1-off"]
    return canaries


def settle(sandbox: Sandbox) -> list[int]:
    """Wait for the sandbox's spare to be confined, and return its pid(s)."""
    pids = spare_pids(sandbox)
    time.sleep(0.02)
    return pids


def pytest_terminal_summary(terminalreporter: Any) -> None:
    if GATE1_BYPASSES:
        terminalreporter.write_sep("-", "red team: payloads that got past Gate 1 (Gate 2 held)")
        for name in sorted(set(GATE1_BYPASSES)):
            terminalreporter.write_line(f"  {name}")
