"""The confinement template: what its children inherit and what it reports."""

from __future__ import annotations

import os
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
