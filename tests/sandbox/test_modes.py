"""Execution modes: reporting, starting ahead, restarting, timeouts, unavailability, fallback."""

from __future__ import annotations

import asyncio
import logging
import os
import time
from collections.abc import Iterator
from typing import Any

import pytest

from geomint import confine
from geomint.errors import SandboxUnavailableError, UsageError
from geomint.sandbox import Sandbox, _sandbox

LOOP_FOREVER = "i = 0\nwhile i >= 0:\n    i += 1\nreturn i"  # Gate 1 cannot see it never ends


@pytest.fixture(scope="module")
def short(isolated: Sandbox) -> Iterator[Sandbox]:
    """An isolated sandbox of its own with a 1 s budget (it gets killed and restarted)."""
    sandbox = Sandbox(mode="isolated", timeout_s=1, memory_mb=512)
    assert sandbox.run("return 1").ok
    yield sandbox
    sandbox.close()


@pytest.fixture
def no_worker(monkeypatch: pytest.MonkeyPatch) -> list[dict[str, Any]]:
    """Make every worker start fail, as on a machine without the facilities; count tries."""
    calls: list[dict[str, Any]] = []

    class Unstartable:
        def __init__(self, **options: Any) -> None:
            calls.append(options)
            raise confine.WorkerStartError("no worker on this machine (test)")

    monkeypatch.setattr(confine, "WorkerProcess", Unstartable)
    monkeypatch.setattr(_sandbox, "_warned", set())  # each test sees its own first warning
    return calls


# -- reporting -------------------------------------------------------------------------------


@pytest.mark.parametrize("mode", ["auto", "isolated", "restricted", "in-process"])
def test_not_started_before_first_use(mode: Any) -> None:
    with Sandbox(mode=mode) as sandbox:
        assert sandbox.mode == "not-started"
        assert sandbox._state.worker is None


@pytest.mark.parametrize(
    ("fixture", "mode"),
    [("in_process", "in-process"), ("isolated", "isolated"), ("restricted", "restricted")],
)
def test_mode_after_a_run(request: pytest.FixtureRequest, fixture: str, mode: str) -> None:
    sandbox: Sandbox = request.getfixturevalue(fixture)
    result = sandbox.run("return 1")
    assert result.ok
    assert sandbox.mode == mode
    assert result.mode == mode


@pytest.mark.parametrize(
    "options",
    [
        pytest.param({"mode": "sandboxed"}, id="mode"),
        pytest.param({"mode": "unavailable"}, id="mode-unavailable"),
        pytest.param({"minimum_mode": "none"}, id="minimum-mode"),
        pytest.param({"timeout_s": 0}, id="timeout-zero"),
        pytest.param({"timeout_s": 10_000}, id="timeout-huge"),
        pytest.param({"memory_mb": 1}, id="memory"),
    ],
)
def test_bad_options_are_a_usage_error(options: dict[str, Any]) -> None:
    with pytest.raises(UsageError):
        Sandbox(**options)


def test_a_closed_sandbox_refuses_to_run() -> None:
    sandbox = Sandbox(mode="in-process")
    assert sandbox.run("return 1").ok
    sandbox.close()
    sandbox.close()  # twice is fine
    with pytest.raises(UsageError, match="closed"):
        sandbox.run("return 1")


# -- starting ahead, restarting, timeouts --------------------------------------------------


def test_start_ahead_makes_the_first_run_fast(isolated: Sandbox) -> None:
    with Sandbox(mode="isolated", timeout_s=5, memory_mb=512) as sandbox:
        before = time.perf_counter()
        sandbox.start()
        sandbox.start()  # a second start while the first is under way is a no-op
        assert time.perf_counter() - before < 0.2, "start() must not block"
        starter = sandbox._state.starter
        assert starter is not None
        starter.join(timeout=30)
        assert sandbox.mode == "isolated"
        result = sandbox.run("return sum(range(10))")
        assert result.value == 45
        assert result.duration_ms < 500, "the worker and a spare child were ready"


def test_restart_after_the_worker_was_killed(short: Sandbox) -> None:
    assert short.run("return 1").ok
    worker = short._state.worker
    assert worker is not None
    old_pid = worker.process.pid
    base = worker.hello["base"]
    assert os.path.isdir(base)
    worker.process.kill()
    worker.process.wait(timeout=5)
    result = short.run("return 'alive again'")
    assert not os.path.exists(base), "a killed worker's directory was left behind"
    assert result.ok, result.error
    assert result.value == "alive again"
    assert short.mode == "isolated"
    assert short._state.worker is not None
    assert short._state.worker.process.pid != old_pid
    assert short.run("return 2").value == 2


def test_timeout_in_isolated_mode(short: Sandbox) -> None:
    before = time.monotonic()
    result = short.run(LOOP_FOREVER)
    elapsed = time.monotonic() - before
    assert not result.ok
    assert result.error is not None
    assert result.error.type == "Timeout"
    assert "1 s" in result.error.message
    assert elapsed < short.timeout_s + 0.5
    assert result.mode == "isolated"
    after = short.run("return 'next'")
    assert after.value == "next"
    assert after.duration_ms < 500, "the worker lived on; a spare child was ready"


def test_arun_under_asyncio_run(in_process: Sandbox, isolated: Sandbox) -> None:
    async def main() -> list[Any]:
        results = await asyncio.gather(
            in_process.arun("return x * 2", {"x": 21}),
            isolated.arun("return x * 3", {"x": 14}),
            isolated.arun("return x + 1", {"x": 41}),
        )
        return [r.value for r in results]

    assert asyncio.run(main()) == [42, 42, 42]


def test_arun_reports_errors_like_run(isolated: Sandbox) -> None:
    result = asyncio.run(isolated.arun("return {}['k']"))
    assert result.error is not None
    assert (result.error.type, result.error.line) == ("KeyError", 1)


# -- unavailable, retry, fallback -----------------------------------------------------------


def test_unavailable_raises_and_does_not_retry_at_once(no_worker: list[dict[str, Any]]) -> None:
    with Sandbox(mode="isolated") as sandbox:
        with pytest.raises(SandboxUnavailableError, match="no worker on this machine"):
            sandbox.run("return 1")
        assert sandbox.mode == "unavailable"
        assert len(no_worker) == 1
        with pytest.raises(SandboxUnavailableError):
            sandbox.run("return 1")
        assert len(no_worker) == 1, "a second run within 30 s must not try to start again"
        assert sandbox.mode == "unavailable"


def test_unavailable_is_retried_after_the_pause(
    no_worker: list[dict[str, Any]], monkeypatch: pytest.MonkeyPatch
) -> None:
    with Sandbox(mode="restricted") as sandbox:
        with pytest.raises(SandboxUnavailableError):
            sandbox.run("return 1")
        monkeypatch.setattr(_sandbox, "_RETRY_AFTER_S", 0.0)
        with pytest.raises(SandboxUnavailableError):
            sandbox.run("return 1")
        assert len(no_worker) == 2


def test_gate_1_still_answers_when_unavailable(no_worker: list[dict[str, Any]]) -> None:
    with Sandbox(mode="isolated") as sandbox:
        result = sandbox.run("import os\nreturn 1")
        assert result.violations and result.violations[0].line == 1
        assert no_worker == [], "refused code needs no worker"


@pytest.mark.parametrize("mode", ["auto", "isolated", "restricted"])
def test_fallback_to_in_process_warns_once(
    no_worker: list[dict[str, Any]], caplog: pytest.LogCaptureFixture, mode: Any
) -> None:
    caplog.set_level(logging.WARNING, logger="geomint.sandbox")
    with Sandbox(mode=mode, allow_fallback=True, minimum_mode="in-process") as sandbox:
        first = sandbox.run("return 1")
        second = sandbox.run("return 2")
    assert (first.value, second.value) == (1, 2)
    assert first.mode == second.mode == "in-process"
    assert sandbox.mode == "in-process"
    fallbacks = [r for r in caplog.records if "falling back to in-process" in r.getMessage()]
    assert len(fallbacks) == 1
    assert fallbacks[0].levelno == logging.WARNING
    assert "no worker on this machine" in fallbacks[0].getMessage()
    assert not any("falling back to restricted" in r.getMessage() for r in caplog.records)


def test_fallback_never_goes_below_the_minimum(no_worker: list[dict[str, Any]]) -> None:
    with Sandbox(mode="isolated", allow_fallback=True, minimum_mode="restricted") as sandbox:
        with pytest.raises(SandboxUnavailableError):
            sandbox.run("return 1")
        assert sandbox.mode == "unavailable"


def test_no_fallback_without_permission(no_worker: list[dict[str, Any]]) -> None:
    with Sandbox(mode="auto") as sandbox, pytest.raises(SandboxUnavailableError):
        sandbox.run("return 1")


def test_layers_report_what_confines_the_calls(isolated: Sandbox, in_process: Sandbox) -> None:
    layers = isolated.layers
    assert layers["netns"] is True and layers["mountns"] is True and layers["seccomp"] is True
    assert layers["rlimits"] is True
    assert isinstance(layers["landlock"], int)  # the ABI version; 0 where the kernel lacks it
    assert in_process.layers == {}


def test_restricted_has_no_namespaces(restricted: Sandbox) -> None:
    layers = restricted.layers
    assert layers["netns"] is False and layers["mountns"] is False
    assert layers["seccomp"] is True
