"""The confinement template: what its children inherit and what it reports."""

from __future__ import annotations

import os
import subprocess
import tempfile
from pathlib import Path

import pytest

from geomint.confine._layers import memory_cgroup
from geomint.sandbox import Sandbox

pytestmark = pytest.mark.isolation


@pytest.mark.skipif(os.geteuid() != 0, reason="isolated mode needs root")
def test_children_are_the_oom_killers_first_choice_not_the_host() -> None:
    with Sandbox(mode="isolated") as sandbox:
        assert sandbox.run("return 1").ok
        worker = sandbox._state.worker
        assert worker is not None
        sandbox._await_handoff()
        spare = sandbox._state.spare or worker.take_spare("isolated")
        sandbox._state.spare = spare  # the sandbox's next call uses it as usual
        assert Path(f"/proc/{spare.pid}/oom_score_adj").read_text().strip() == "1000"
        assert Path(f"/proc/{worker.process.pid}/oom_score_adj").read_text().strip() == "1000"
        assert worker.probe("isolated")["oom_victim"] is True
        assert sandbox.run("return 2").value == 2
    assert Path("/proc/self/oom_score_adj").read_text().strip() != "1000"


def test_the_memory_cgroup_is_reported_not_assumed() -> None:
    found = memory_cgroup()
    assert found.startswith(("unavailable: ", "possible ", "unknown: "))
    with open("/proc/self/cgroup", encoding="ascii") as handle:
        v1_memory = any(line.split(":")[1] == "memory" for line in handle if line.count(":") >= 2)
    if v1_memory:
        assert found == "unavailable: the memory controller is on cgroup v1 here"


_RECOVER = (
    "subclasses = ().__class__.__base__.__subclasses__()\n"
    "wrap_close = [c for c in subclasses if c.__name__ == '_wrap_close'][0]\n"
    "modules = wrap_close.__init__.__globals__['sys'].modules\n"
)
_HOG = _RECOVER + (
    "threading, time = modules['threading'], modules['time']\n"
    "threading.stack_size(1 << 16)\n"
    "release = threading.Event()\n"
    "started = 0\n"
    "for _ in range(200):\n"
    "    try:\n"
    "        threading.Thread(target=release.wait, args=(6,), daemon=True).start()\n"
    "    except RuntimeError:\n"
    "        break\n"
    "    started += 1\n"
    "time.sleep(6)\n"
    "return started\n"
)
_THREADS = _RECOVER + (
    "threading = modules['threading']\n"
    "workers = [threading.Thread(target=lambda: None) for _ in range(3)]\n"
    "for worker in workers:\n"
    "    worker.start()\n"
    "return modules['os'].getuid()\n"
)


@pytest.mark.skipif(os.geteuid() != 0, reason="a uid of their own needs root")
def test_one_childs_threads_do_not_starve_another_child() -> None:
    """RLIMIT_NPROC counts per uid: when every child was uid 65534, one child holding 63
    threads left none for any other child (another tenant's call, or intake's reader)."""
    import threading

    from geomint.confine._layers import CHILD_ID_BASE

    with (
        Sandbox(mode="isolated", static_checks=False, timeout_s=15) as hog,
        Sandbox(mode="isolated", static_checks=False, timeout_s=15) as other,
    ):
        hog.run("return 1")
        other.run("return 1")
        held: list[object] = []
        holder = threading.Thread(target=lambda: held.append(hog.run(_HOG).value))
        holder.start()
        import time

        time.sleep(2)  # the hog holds its threads
        result = other.run(_THREADS)
        holder.join(20)
    assert result.ok, result.error
    assert result.value >= CHILD_ID_BASE
    assert held and held[0] is not None and int(held[0]) >= 50  # type: ignore[call-overload]


def test_a_dead_templates_directory_is_swept_by_the_next_one() -> None:
    # A host killed with SIGKILL cannot remove its template's directory; the next one does.
    dead = subprocess.Popen(["/bin/true"])  # a pid that is surely gone once it is waited for
    dead.wait()
    stale = Path(tempfile.gettempdir()) / f"geomint-confine-{dead.pid}-stale"
    (stale / "child").mkdir(parents=True)
    (stale / "child" / "left.txt").write_text("x")
    alive = Path(tempfile.gettempdir()) / f"geomint-confine-{os.getpid()}-alive"
    alive.mkdir()
    try:
        with Sandbox(mode="restricted") as sandbox:
            assert sandbox.run("return 1").ok
        assert not stale.exists()
        assert alive.exists(), "a live process's directory was swept"
    finally:
        alive.rmdir()
