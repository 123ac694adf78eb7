"""Every docstring example in geomint runs.

Each module under ``src/geomint`` whose source holds a ``>>>`` is one case, found by
walking the files (not by a list here), so a new module's examples run from the day it
is written. Only those modules are imported.
"""

from __future__ import annotations

import doctest
import importlib
import io
from pathlib import Path

import pytest

import geomint

PACKAGE = Path(geomint.__file__).parent


def _modules_with_examples() -> list[str]:
    names = []
    for path in sorted(PACKAGE.rglob("*.py")):
        if ">>>" in path.read_text(encoding="utf-8"):
            parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
            names.append(".".join(parts[:-1] if parts[-1] == "__init__" else parts))
    return names


MODULES = _modules_with_examples()


def test_the_walk_finds_the_examples() -> None:
    # Modules whose examples no test ran before the walk: a sample, so a broken walk shows.
    assert {
        "geomint._commands._render",
        "geomint.agent.map_agent",
        "geomint.models",
        "geomint.sandbox._sandbox",
        "geomint.store.postgres",
        "geomint.testing",
        "geomint.tools._digest",
    } <= set(MODULES)


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples_run(name: str) -> None:
    module = importlib.import_module(name)
    report = io.StringIO()
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS)
    for test in doctest.DocTestFinder().find(module, name):
        runner.run(test, out=report.write)
    result = runner.summarize(verbose=False)
    assert result.attempted > 0, f"{name} has a `>>>` that is not in a docstring example"
    assert result.failed == 0, report.getvalue()
