"""geomint.testing is light to import, lazy, and kept out of the library.

Its ``__all__`` is pinned in ``tests/test_public_api.py``; its examples run in
``tests/test_docstring_examples.py``.
"""

from __future__ import annotations

import importlib
import json
import os
import pkgutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

import geomint
import geomint.testing

ROOT = Path(__file__).resolve().parents[2]


def test_importing_it_loads_no_double_and_no_dependency() -> None:
    code = (
        "import json, sys, geomint.testing; "
        "print(json.dumps(sorted(m for m in sys.modules if m.split('.')[0] in "
        "('geomint', 'pydantic', 'pydantic_ai', 'httpx', 'numpy', 'shapely', 'pytest'))))"
    )
    source = str(Path(geomint.__file__).parents[1])
    loaded = subprocess.run(
        [sys.executable, "-c", code],
        env={**os.environ, "PYTHONPATH": source},
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert json.loads(loaded) == ["geomint", "geomint.errors", "geomint.testing"]


def test_each_name_loads_on_first_use_and_is_listed() -> None:
    for name in geomint.testing.__all__:
        assert getattr(geomint.testing, name) is not None
        assert name in dir(geomint.testing)
    with pytest.raises(AttributeError, match="no attribute 'Scripted'"):
        _ = geomint.testing.Scripted  # type: ignore[attr-defined]


def test_its_modules_are_private_and_declare_what_they_export() -> None:
    for info in pkgutil.iter_modules(geomint.testing.__path__):
        assert info.name.startswith("_"), info.name
        module = importlib.import_module(f"geomint.testing.{info.name}")
        assert set(module.__all__) <= set(geomint.testing.__all__), info.name


def test_the_import_contract_names_every_module_but_testing() -> None:
    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    (contract,) = [
        c
        for c in config["tool"]["importlinter"]["contracts"]
        if c.get("forbidden_modules") == ["geomint.testing"]
    ]
    ours = {f"geomint.{info.name}" for info in pkgutil.iter_modules(geomint.__path__)}
    assert set(contract["source_modules"]) == ours - {"geomint.testing"}
    # The package root is no source module of a contract; it must not import the doubles.
    assert "geomint.testing" not in Path(geomint.__file__).read_text(encoding="utf-8")
