"""Every payload, in every configuration this machine supports, judged from the host.

For each run the host checks, whatever the payload said about itself:

* the expected refusal or failure (Gate 1's refusal, the kernel's errno, the wall clock,
  a memory or schema limit), and -- with Gate 1 off -- that the payload really reached
  the capability it then failed to use;
* killed or finished within the wall clock plus 0.5 s;
* nothing appeared or changed in the canary directories, the victim file, the host's
  ``/tmp`` or the file planted beside the restricted children's scratch;
* the listeners counted no connection and no datagram;
* neither the fake API key nor the planted text appears anywhere in the result;
* no process of the sandbox's uid remains under the worker beyond the spare the host
  asked for;
* the worker is the same process and alive, and the next call on the same sandbox works;
* payload-specific checks (below), and for planted state, that the next call sees none.
"""

from __future__ import annotations

import copy
import os
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import pytest

from geomint.confine import worker_environment
from geomint.sandbox._entries import Entry

from ._harness import (
    GATE1_BYPASSES,
    KILL_SLACK_S,
    SECRET_ENV,
    Canaries,
    Listeners,
    Run,
    normalise,
    scheduling_of,
    spare_pids,
    strays,
    timed,
    worker_of,
)
from .conftest import CONFIGS, Config
from .payloads import PAYLOADS, Payload

pytestmark = [pytest.mark.redteam, pytest.mark.isolation]

LAYER = {
    "type": "FeatureCollection",
    "features": [
        {"type": "Feature", "geometry": {"type": "Point", "coordinates": [float(i), 2.0 * i]},
         "properties": {"n": i, "name": f"p{i}"}}
        for i in range(50)
    ],
}  # fmt: skip
INPUT_DATA: dict[str, Any] = {
    "name": "host data",
    "features": [{"type": "Feature", "geometry": None, "properties": {"n": i}} for i in range(3)],
    "nested": {"a": [1, 2, 3], "b": {"deep": True}},
}


class DocumentedLimitError(AssertionError):
    """A check that fails for a documented limit of a mode (the only failure xfail hides)."""


@dataclass
class Attack:
    config: Config
    payload: Payload
    canaries: Canaries
    listeners: Listeners
    secret: str
    ctx: dict[str, Any]
    inputs: dict[str, Any]
    before: dict[str, Any] = field(default_factory=dict)
    run: Run | None = None

    @property
    def result(self) -> Any:
        assert self.run is not None
        return self.run.result

    @property
    def value(self) -> dict[str, Any]:
        value = self.result.value
        assert isinstance(value, dict), self.run.describe() if self.run else ""
        return value

    @property
    def refused(self) -> bool:
        return self.result.error is not None and self.result.error.type == "GateRefused"


# -- payload-specific checks ---------------------------------------------------------------


def _environ_allowlisted(attack: Attack) -> None:
    allowed = set(worker_environment())
    for key in ("env", "posix_env"):
        if key in attack.value:
            assert set(attack.value[key]) <= allowed, attack.value[key]
    assert SECRET_ENV not in attack.value["reached"]


def _scanned_memory(attack: Attack) -> None:
    assert attack.value["found"] == []
    assert int(attack.value["reached"].split()[0]) > 10_000  # it really walked the heap


def _thread_bomb(attack: Attack) -> None:
    assert attack.value["outcomes"]["bomb"] == "RuntimeError", attack.value
    assert attack.value["started"] < 64, "RLIMIT_NPROC (64 per uid) did not stop the bomb"


def _scratch_bytes_capped(attack: Attack) -> None:
    cap = attack.config.sandbox.scratch_mb << 20
    value = attack.value
    if value["written"] > cap or value["stopped"] in ("cap", "time"):
        # only the payload's own budget (or the clock) stopped it, not the sandbox
        raise DocumentedLimitError(f"wrote {value['written']:,} bytes; scratch is {cap:,}")
    assert normalise(value["stopped"]) in {"ENOSPC", "EFBIG"}, value


def _scratch_inodes_capped(attack: Attack) -> None:
    value = attack.value
    if value["made"] > 4096 or value["stopped"] in ("cap", "time"):
        raise DocumentedLimitError(f"made {value['made']:,} files; scratch allows 4,096")
    assert normalise(value["stopped"]) == "ENOSPC", value


def _nested(attack: Attack) -> None:
    assert attack.value["depth"] == 3000  # the worker's survival is the real check


def _stdout_capped(attack: Attack) -> None:
    result = attack.result
    assert result.ok, attack.run.describe() if attack.run else ""
    assert result.stdout_truncated
    assert len(result.stdout) <= attack.config.sandbox.stdout_limit


def _worker_log_quiet(attack: Attack) -> None:
    log = worker_of(attack.config.sandbox)._log
    assert os.fstat(log.fileno()).st_size == attack.before["log_size"], "child wrote to the log"


def _sigio(attack: Attack) -> None:
    outcomes = {normalise(o) for o in attack.value["outcomes"].values()}
    assert outcomes <= {"ok", "EPERM"}, outcomes  # arming may work; delivery must not


def _value_is_42(attack: Attack) -> None:
    assert attack.result.ok and attack.result.value == 42, attack.run.describe()  # type: ignore[union-attr]


def _forged_value_only(attack: Attack) -> None:
    result = attack.result
    # The child always controls its own reply; forging one buys nothing more: the mode,
    # the timing and the schema are the host's.
    assert result.ok and result.value == "forged", attack.run.describe()  # type: ignore[union-attr]
    assert result.mode == attack.config.mode
    assert result.figures == () and result.layers == ()


def _inputs_unchanged(attack: Attack) -> None:
    assert attack.result.ok, attack.run.describe()  # type: ignore[union-attr]
    assert attack.inputs["data"] == INPUT_DATA


def _entry_intact(attack: Attack) -> None:
    # The host's file behind the descriptor is checked by the follow-up call, which maps
    # the same (id, version) again; here: no attempt to write through it worked.
    assert attack.value["reached"] != "0 regular descriptors", attack.value


def _sibling_intact(attack: Attack) -> None:
    sibling = attack.config.sibling
    assert sibling is not None
    for pid, before in attack.before["siblings"].items():
        assert os.path.exists(f"/proc/{pid}"), f"sibling child {pid} was killed"
        assert scheduling_of(pid) == before, f"sibling child {pid} was changed"
    assert sibling.run("return 1").value == 1


EXTRA_CHECKS: dict[str, Callable[[Attack], None]] = {
    "environ_allowlisted": _environ_allowlisted,
    "scanned_memory": _scanned_memory,
    "thread_bomb": _thread_bomb,
    "scratch_bytes_capped": _scratch_bytes_capped,
    "scratch_inodes_capped": _scratch_inodes_capped,
    "nested": _nested,
    "stdout_capped": _stdout_capped,
    "worker_log_quiet": _worker_log_quiet,
    "sigio": _sigio,
    "value_is_42": _value_is_42,
    "forged_value_only": _forged_value_only,
    "inputs_unchanged": _inputs_unchanged,
    "sibling_intact": _sibling_intact,
    "entry_intact": _entry_intact,
}


# -- the checks every payload gets -----------------------------------------------------------


def _expected_outcome(attack: Attack) -> None:
    payload, run = attack.payload, attack.run
    assert run is not None
    result = run.result
    if attack.config.gate1:
        if payload.gate1 == "refused":
            assert attack.refused, f"Gate 1 let it through: {run.describe()}"
            return
        if payload.gate1 == "bypass":
            if attack.refused:
                return
            GATE1_BYPASSES.append(payload.name)
        assert not attack.refused, f"Gate 1 refused legitimate-looking code: {run.describe()}"
    if payload.expect == "timeout":
        assert result.error is not None and result.error.type == "Timeout", run.describe()
    elif payload.expect == "error":
        assert result.error is not None and result.error.type in payload.allowed, run.describe()
    else:
        assert result.ok, run.describe()
        if payload.reaches and not (attack.config.gate1 and payload.gate1 == "contained"):
            # With Gate 1 off the payload must really have reached the capability, so
            # that the failure that follows is the kernel's, not a typo's.
            assert payload.reaches in str(attack.value["reached"]), run.describe()
        if payload.expect == "denied":
            outcomes = {k: normalise(v) for k, v in attack.value["outcomes"].items()}
            assert outcomes, run.describe()
            escaped = {k: v for k, v in outcomes.items() if v not in payload.allowed}
            assert not escaped, f"not refused by the kernel: {escaped}; {run.describe()}"
    if payload.check:
        EXTRA_CHECKS[payload.check](attack)


def _host_side_containment(attack: Attack) -> None:
    run, config = attack.run, attack.config
    assert run is not None
    sandbox = config.sandbox
    assert run.seconds <= config.timeout_s + KILL_SLACK_S, f"took {run.seconds:.2f} s"
    text = run.text
    assert attack.secret not in text, "the fake API key reached the result"
    if attack.canaries.planted_text:
        assert attack.canaries.planted_text not in text, "another child's scratch was read"
    left = strays(sandbox, set() if attack.refused else attack.before["spare"])
    assert not left, f"processes of the sandbox uid outlived the call: {left}"
    assert attack.listeners.total() == 0, f"a listener was reached: {attack.listeners.counts}"
    assert attack.canaries.snapshot() == attack.canaries.baseline, "a host file changed"
    worker = worker_of(sandbox)
    assert worker.process.pid == attack.before["worker_pid"], "the worker was replaced"
    assert worker.alive(), "the worker died"
    follow = timed(sandbox, "return 1")
    assert follow.result.value == 1, f"the next call failed: {follow.describe()}"


def _followup(attack: Attack) -> None:
    if not attack.payload.followup or attack.refused:
        return
    run = timed(attack.config.sandbox, attack.payload.followup, attack.inputs)
    assert run.result.ok, run.describe()
    assert run.result.value == [], f"state from the previous call is visible: {run.describe()}"


# -- parametrisation -------------------------------------------------------------------------


#: Families whose payloads run until the wall clock or the memory limit stops them: each
#: must be killed within the wall clock plus KILL_SLACK_S, so it runs while no other
#: test loads the machine (a memory bomb that a busy machine slows meets the clock first).
_RACES = frozenset({"wall clock", "memory bombs"})


def _params() -> list[Any]:
    params = []
    for payload in PAYLOADS:
        for name in CONFIGS:
            if name.endswith("gate1-on") and payload.gate1 == "off-only":
                continue
            marks = []
            if payload.family in _RACES:
                marks.append(pytest.mark.serial)
            mode = name.split("-")[0]
            if mode in payload.xfail:
                marks.append(pytest.mark.xfail(
                    strict=True, raises=DocumentedLimitError, reason=payload.xfail[mode]
                ))  # fmt: skip
            params.append(pytest.param(name, payload, id=f"{name}:{payload.name}", marks=marks))
    return params


@pytest.mark.parametrize(("config_name", "payload"), _params())
def test_payload_is_contained(
    config_name: str,
    payload: Payload,
    config: Config,
    listeners: Listeners,
    planted: Canaries,
    decoy: int,
    fake_api_key: str,
) -> None:
    sandbox = config.sandbox
    worker = worker_of(sandbox)
    ctx = {
        **listeners.addresses(),
        **planted.context(),
        "decoy_pid": decoy,
        "host_pid": os.getpid(),
        "worker_pid": worker.process.pid,
        "siblings": [],
    }
    attack = Attack(config, payload, planted, listeners, fake_api_key, ctx, {"ctx": ctx})
    attack.before = {
        "worker_pid": worker.process.pid,
        "log_size": os.fstat(worker._log.fileno()).st_size,
        "spare": set(spare_pids(sandbox)),  # the child this call will run in
    }
    assert attack.before["spare"], "no spare child before the call"
    if payload.check == "sibling_intact":
        assert config.sibling is not None
        siblings = spare_pids(config.sibling)
        assert siblings, "the sibling sandbox has no spare child to aim at"
        ctx["siblings"] = siblings
        attack.before["siblings"] = {pid: scheduling_of(pid) for pid in siblings}
    if payload.check == "inputs_unchanged":
        attack.inputs["data"] = copy.deepcopy(INPUT_DATA)
    if payload.check == "entry_intact":
        attack.inputs["layer"] = Entry("places-1", 1, LAYER)
    assert planted.snapshot() == planted.baseline, "a host file changed before this test"

    attack.run = timed(sandbox, payload.code(), attack.inputs)

    _host_side_containment(attack)
    _expected_outcome(attack)
    _followup(attack)
