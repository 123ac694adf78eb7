"""Shared fixtures: sandboxes in each mode this machine supports, started once per session."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from geomint.errors import SandboxUnavailableError
from geomint.sandbox import Sandbox


def _started(mode: str, **options: object) -> Iterator[Sandbox]:
    sandbox = Sandbox(mode=mode, timeout_s=5, memory_mb=512, **options)  # type: ignore[arg-type]
    try:
        sandbox.run("return 1")
    except SandboxUnavailableError as exc:
        sandbox.close()
        pytest.skip(f"the {mode} sandbox is not available on this machine: {exc}")
    yield sandbox
    sandbox.close()


@pytest.fixture(scope="session")
def in_process() -> Iterator[Sandbox]:
    """A sandbox that runs code in the test process (no boundary)."""
    yield from _started("in-process")


@pytest.fixture(scope="session")
def isolated() -> Iterator[Sandbox]:
    """A sandbox with every Gate 2 layer (skipped where the kernel lacks one)."""
    yield from _started("isolated")


@pytest.fixture(scope="session")
def restricted() -> Iterator[Sandbox]:
    """A sandbox with a process boundary and limits but no namespaces."""
    yield from _started("restricted")


@pytest.fixture(scope="session", params=["in-process", "isolated", "restricted"])
def any_mode(request: pytest.FixtureRequest) -> Iterator[Sandbox]:
    """Each mode in turn, for behaviour that must not depend on the mode."""
    yield from _started(request.param)


@pytest.fixture(autouse=True)
def _no_real_home(
    tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Keep every test out of the user's real geomint folder and store."""
    monkeypatch.setenv("GEOMINT_HOME", str(tmp_path_factory.mktemp("geomint-home")))
    monkeypatch.delenv("GEOMINT_STORE", raising=False)
    # A developer's keys must not send a test to a real model or provider: tests choose
    # their model and provider explicitly (scripted, recorded, offline).
    for name in (
        "GEOMINT_MODEL",
        "GEOMINT_PROVIDER",
        "TOMTOM_API_KEY",
        "OPENAI_API_KEY",
        "ANTHROPIC_API_KEY",
        "OPENAI_BASE_URL",
        "ANTHROPIC_BASE_URL",
    ):
        monkeypatch.delenv(name, raising=False)
