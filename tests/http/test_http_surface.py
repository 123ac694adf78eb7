"""The package's modules declare what they export and share only that.

The public surface itself, ``geomint.http.__all__``, is pinned in ``tests/test_public_api.py``;
that nothing outside the package imports one of its modules is an import-linter contract.
"""

from __future__ import annotations

import ast
import importlib
import pkgutil
from pathlib import Path
from types import ModuleType

import pytest

import geomint.http

MODULES = sorted(info.name for info in pkgutil.iter_modules(geomint.http.__path__))


def _module(name: str) -> ModuleType:
    return importlib.import_module(f"geomint.http.{name}")


def test_every_module_is_private() -> None:
    assert MODULES and all(name.startswith("_") for name in MODULES)


@pytest.mark.parametrize("name", MODULES)
def test_every_module_declares_what_it_exports(name: str) -> None:
    module = _module(name)
    assert module.__all__, f"{module.__name__} has no __all__"
    for exported in module.__all__:
        assert hasattr(module, exported), f"{module.__name__}.__all__ names {exported!r}"


@pytest.mark.parametrize("name", MODULES)
def test_modules_share_only_what_they_export(name: str) -> None:
    module = _module(name)
    assert module.__file__ is not None
    tree = ast.parse(Path(module.__file__).read_text())
    for node in ast.walk(tree):
        source = node.module or "" if isinstance(node, ast.ImportFrom) else ""
        if isinstance(node, ast.ImportFrom) and source.startswith("geomint.http."):
            exported = set(_module(source.removeprefix("geomint.http.")).__all__)
            taken = {alias.name for alias in node.names}
            assert taken <= exported, f"{name} takes {sorted(taken - exported)} from {source}"


def test_the_package_exports_exist() -> None:
    for exported in geomint.http.__all__:
        assert getattr(geomint.http, exported) is not None
