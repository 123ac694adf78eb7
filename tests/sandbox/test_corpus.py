"""Legitimate bodies a model writes: each passes Gate 1 unchanged and returns its value.

A body refused here is a Gate 1 false positive: fix the policy, not the body.
"""

from __future__ import annotations

import math
from typing import Any

import pytest
from corpus.bodies import _UNSET, CASES, Case
from corpus.inputs import make_inputs

from geomint.sandbox import Sandbox
from geomint.sandbox._runtime import LIBRARY_NAMES
from geomint.sandbox.prepare import prepare

PARAMS = [pytest.param(case, id=case.name) for case in CASES]


def _same(actual: Any, expected: Any, where: str = "value") -> None:
    """Compare JSON values, floats approximately, with the path of the first difference."""
    if isinstance(expected, float) or (isinstance(actual, float) and isinstance(expected, int)):
        assert isinstance(actual, int | float) and not isinstance(actual, bool), where
        assert math.isclose(actual, expected, rel_tol=1e-6, abs_tol=1e-9), (
            f"{where}: {actual!r} != {expected!r}"
        )
    elif isinstance(expected, dict):
        assert isinstance(actual, dict), f"{where}: {actual!r} is not a dict"
        assert set(actual) == set(expected), f"{where}: keys {sorted(actual)} != {sorted(expected)}"
        for key in expected:
            _same(actual[key], expected[key], f"{where}[{key!r}]")
    elif isinstance(expected, list | tuple):
        assert isinstance(actual, list), f"{where}: {actual!r} is not a list"
        assert len(actual) == len(expected), f"{where}: {actual!r} != {expected!r}"
        for i, (a, e) in enumerate(zip(actual, expected, strict=True)):
            _same(a, e, f"{where}[{i}]")
    else:
        assert actual == expected, f"{where}: {actual!r} != {expected!r}"
        assert type(actual) is type(expected), f"{where}: {type(actual)} != {type(expected)}"


def test_the_corpus_is_large_enough() -> None:
    assert len(CASES) >= 35
    assert len({case.name for case in CASES}) == len(CASES)
    assert all((case.expected is not _UNSET) or case.check for case in CASES)


@pytest.mark.parametrize("case", PARAMS)
def test_passes_gate_1_unchanged(case: Case) -> None:
    prepared = prepare(case.code, [*LIBRARY_NAMES, *make_inputs()])
    assert prepared.violations == ()
    assert prepared.dropped == ()
    assert prepared.source == case.code
    assert prepared.defines_only is None


# shapely 2.2 deprecates shapely.ops.transform, which models write all the time. The
# in-process mode runs under the host's warning filters (pytest's "error"), so the
# warning would become an exception there only; the worker children keep the defaults.
@pytest.mark.filterwarnings(
    r"ignore:The 'shapely\.ops\.transform\(\)' function is deprecated:DeprecationWarning"
)
@pytest.mark.parametrize("case", PARAMS)
def test_returns_the_expected_value(any_mode: Sandbox, case: Case) -> None:
    inputs = make_inputs()
    result = any_mode.run(case.code, inputs)
    assert result.ok, f"{result.error}\nhint: {result.hint}\nstdout: {result.stdout}"
    assert result.error is None
    if case.check is not None:
        case.check(result)
    if case.expected is not _UNSET:
        _same(result.value, case.expected)
    assert inputs == make_inputs(), "the caller's inputs changed"
