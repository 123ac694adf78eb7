"""Shared fixtures: the suite stays offline, and sandboxes in each mode this machine
supports are started once per session."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from geomint.errors import SandboxUnavailableError
from geomint.sandbox import Sandbox
from geomint.testing import NetworkGuard, offline

# The `serial` marker: under xdist, a test marked with it runs while the other workers wait.
pytest_plugins = ["tests.serial"]


@pytest.fixture(scope="session", autouse=True)
def _offline_session() -> Iterator[NetworkGuard]:
    """No test reaches beyond loopback or sends a request to a real model class.

    :func:`geomint.testing.offline` patches this process's sockets (connect, connect_ex
    and getaddrinfo) and sets pydantic-ai's ``ALLOW_MODEL_REQUESTS`` to False for the
    whole session. It covers the test process only: the subprocesses tests start
    (sandbox workers, intake children, ``geomint serve``, Chromium) and C libraries with
    sockets of their own (libpq) are outside it. Tests that drive a real model class
    against the stub server allow requests for their duration (``tests/models``).
    """
    with offline() as guard:
        yield guard


@pytest.fixture(autouse=True)
def network(
    _offline_session: NetworkGuard, request: pytest.FixtureRequest
) -> Iterator[NetworkGuard]:
    """This test's record of connections tried and refused; fails a test that was refused.

    The refusal is an ``OSError`` that the code under test may catch (a provider turns it
    into "unavailable"), so the record, not the error, decides. A test that means to be
    refused asks for :func:`refused`.
    """
    _offline_session.forget()
    yield _offline_session
    if _offline_session.refused and "refused" not in request.fixturenames:
        pytest.fail(
            f"the test tried to reach {sorted(set(_offline_session.refused))} beyond loopback; "
            "answer it with a double from geomint.testing (or, if the refusal is the point, "
            "ask for the `refused` fixture)",
            pytrace=False,
        )


@pytest.fixture
def refused(network: NetworkGuard) -> list[str]:
    """The hosts the guard refused during this test (asking for it says refusals are expected)."""
    return network.refused


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
        "GEOMINT_HAPI_APP_IDENTIFIER",
        "OPENAI_API_KEY",
        "ANTHROPIC_API_KEY",
        "OPENAI_BASE_URL",
        "ANTHROPIC_BASE_URL",
    ):
        monkeypatch.delenv(name, raising=False)
