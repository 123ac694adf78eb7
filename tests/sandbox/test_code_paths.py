"""Every way the allowed libraries turn a string into code is known and answered for.

Gate 1 refuses ``eval`` in the body, but a library the body may call can evaluate text
itself (``DataFrame.query``, a string annotation, a module imported by name). These tests
walk what a body can reach -- the modules ``import`` allows, and every module reachable
from them through attribute names Gate 1 lets through -- and scan their source for calls
that run or import text: ``eval``, ``exec``, ``compile``, ``__import__``,
``import_module``, ``getattr`` with a name that comes from the caller, ``attrgetter`` /
``methodcaller`` with a computed name, ``format_map`` and ``vformat``. The result must
equal the checked-in list in ``code_paths.py``, where every site says whether it is
guarded, unreachable or harmless, and why; a library upgrade that adds one fails here.
"""

from __future__ import annotations

import ast
import json
import subprocess
import sys
import types
from collections.abc import Iterator
from functools import cache
from pathlib import Path

import pytest
from tests.sandbox.code_paths import CALL_SITES, REACHABLE_OUTSIDE, STATUSES

from geomint.sandbox import _policy as policy
from geomint.sandbox import _worker

_ROOT = Path(__file__).resolve().parents[2]
_RUNS_TEXT = frozenset({"eval", "exec", "compile", "__import__"})
_WORDS = ("eval(", "exec(", "compile(", "__import__(", "import_module(", "getattr(",
          "attrgetter(", "methodcaller(", "format_map(", "vformat(")  # fmt: skip


def _allowed(name: str) -> bool:
    parts = name.split(".")
    return any(".".join(parts[: i + 1]) in policy.ALLOWED_MODULES for i in range(len(parts)))


def _passes_gate1(attribute: str, base: str) -> bool:
    """Whether Gate 1 lets ``base.attribute`` through (the rules of ``_check_attribute``)."""
    if attribute.startswith("_") or attribute in policy.INTERNAL_ATTRIBUTES:
        return False
    if attribute in policy.DENIED_ATTRIBUTES:
        return base in policy.DENIED_ATTRIBUTE_EXCEPTIONS.get(attribute, ())
    return True


@cache
def _reachable() -> dict[str, str | None]:
    """Modules a body can import or reach through public attributes: name -> source file.

    Walked in a fresh interpreter prepared as the sandbox's worker is, so what this test
    process happened to import first (intake loads pyogrio, which geopandas then holds as
    an attribute) neither adds to the walk nor hides from it.
    """
    code = "from tests.sandbox.test_code_paths import print_reachable; print_reachable()"
    done = subprocess.run(
        [sys.executable, "-I", "-c", f"import sys; sys.path.insert(0, {str(_ROOT)!r}); {code}"],
        capture_output=True, text=True, check=True, timeout=120,
    )  # fmt: skip
    found: dict[str, str | None] = json.loads(done.stdout.strip().splitlines()[-1])
    return found


def print_reachable() -> None:
    """Prepare this interpreter as the worker does, then print what a body can reach."""
    _worker.prepare({})
    stack = [
        module
        for name, module in list(sys.modules.items())
        if _allowed(name) and not any(p.startswith("_") for p in name.split("."))
    ]
    seen: dict[str, types.ModuleType] = {}
    while stack:
        module = stack.pop()
        if module.__name__ in seen:
            continue
        seen[module.__name__] = module
        base = module.__name__.rsplit(".", maxsplit=1)[-1]
        for attribute, value in list(vars(module).items()):
            if isinstance(value, types.ModuleType) and _passes_gate1(attribute, base):
                stack.append(value)
    print(json.dumps({name: getattr(m, "__file__", None) for name, m in seen.items()}))


def _kind(call: ast.Call, parameters: frozenset[str]) -> str | None:
    func = call.func
    name = func.id if isinstance(func, ast.Name) else getattr(func, "attr", None)
    if isinstance(func, ast.Name) and name in _RUNS_TEXT:
        literal = call.args and isinstance(call.args[0], ast.Constant)
        return None if name == "compile" and literal else name
    if name in {"import_module", "format_map", "vformat"}:
        return name
    if name in {"attrgetter", "methodcaller"}:
        return name if not all(isinstance(a, ast.Constant) for a in call.args) else None
    if isinstance(func, ast.Name) and name == "getattr" and len(call.args) > 1:
        key = call.args[1]
        used = {n.id for n in ast.walk(key) if isinstance(n, ast.Name)}
        # a name from the caller; one from the library's own tables is not a path
        return "getattr" if not isinstance(key, ast.Constant) and used & parameters else None
    return None


def _sites_in(tree: ast.AST, module: str) -> Iterator[str]:
    stack: list[tuple[ast.AST, str, frozenset[str]]] = [(tree, "", frozenset())]
    while stack:
        node, scope, parameters = stack.pop()
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda):
                a = child.args
                names = {x.arg for x in (*a.posonlyargs, *a.args, *a.kwonlyargs)}
                names |= {x.arg for x in (a.vararg, a.kwarg) if x is not None}
                inner = getattr(child, "name", "<lambda>")
                stack.append((child, f"{scope}.{inner}" if scope else inner, parameters | names))
            elif isinstance(child, ast.ClassDef):
                stack.append((child, f"{scope}.{child.name}" if scope else child.name, parameters))
            else:
                if isinstance(child, ast.Call):
                    kind = _kind(child, parameters)
                    if kind:
                        yield f"{module}:{scope or '<module>'}:{kind}"
                stack.append((child, scope, parameters))


@cache
def _call_sites() -> frozenset[str]:
    sites: set[str] = set()
    for name, path in _reachable().items():
        if not path or not path.endswith(".py"):
            continue  # compiled: its calls are reviewed through the Python that wraps it
        source = Path(path).read_text(encoding="utf-8")
        if any(word in source for word in _WORDS):
            sites.update(_sites_in(ast.parse(source), name))
    return frozenset(sites)


def test_modules_reachable_outside_the_allowlist_are_known() -> None:
    outside = {name for name in _reachable() if not _allowed(name)}
    assert outside == set(REACHABLE_OUTSIDE), (
        f"new: {sorted(outside - set(REACHABLE_OUTSIDE))}; "
        f"gone: {sorted(set(REACHABLE_OUTSIDE) - outside)}. Deny the attribute name in "
        "_policy.DENIED_ATTRIBUTES if the module reads files, imports or runs code; "
        "otherwise list it in code_paths.REACHABLE_OUTSIDE with why it is harmless"
    )


def test_string_to_code_call_sites_are_known() -> None:
    found = _call_sites()
    new, gone = sorted(found - set(CALL_SITES)), sorted(set(CALL_SITES) - found)
    assert not new and not gone, (
        f"new call sites: {new}; gone: {gone}. Review each new one: guard it in "
        "sandbox/_guards.py or deny its name in _policy.py, then record it in code_paths.py"
    )


@pytest.mark.parametrize("site", sorted(CALL_SITES))
def test_each_site_says_why(site: str) -> None:
    status, reason = CALL_SITES[site]
    assert status in STATUSES
    assert len(reason) > 20, "say why, in a sentence"
