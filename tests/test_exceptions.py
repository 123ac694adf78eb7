"""Every error geomint exports sits under one root, in the family of the one who reads it.

The walk finds the exceptions itself, so an error added outside the root fails here
without anyone remembering to list it.
"""

from __future__ import annotations

import importlib
import pkgutil
from types import ModuleType

import pytest

import geomint
from geomint import geo
from geomint.errors import GeomintError, ModelFacingError, OperatorError, UsageError
from geomint.provenance import Ledger, check_figure_ids
from geomint.sandbox.prepare import GateRefused
from geomint.sandbox.results import ChartError, ResultError, ResultTypeError
from geomint.state import CorruptLogError
from geomint.tools import ToolError
from geomint.tools.effects import EffectRefusedError

#: Exported errors left outside the root on purpose (a module, or one class), with why.
OUTSIDE_THE_ROOT = {
    "geomint.confine": (
        "confine imports nothing of ours, geomint.errors included (an import-linter "
        "contract); sandbox and intake catch each of its errors and raise their own "
        "(SandboxUnavailableError, a CodeError for the model, an IntakeError)"
    ),
}


def _public_modules() -> list[ModuleType]:
    """geomint and every module of it whose dotted name has no ``_`` part."""
    found = [geomint]
    for info in pkgutil.walk_packages(geomint.__path__, "geomint."):
        if not any(part.startswith("_") for part in info.name.split(".")):
            found.append(importlib.import_module(info.name))
    return found


def _exported_errors() -> dict[str, type[BaseException]]:
    """Every exception class a public module names in ``__all__``, by where it is exported."""
    errors: dict[str, type[BaseException]] = {}
    for module in _public_modules():
        for name in getattr(module, "__all__", ()):
            value = getattr(module, name)
            if isinstance(value, type) and issubclass(value, BaseException):
                errors[f"{module.__name__}.{name}"] = value
    return errors


def _exempt(where: str) -> bool:
    return any(where == name or where.startswith(f"{name}.") for name in OUTSIDE_THE_ROOT)


def test_every_exported_error_is_a_geomint_error() -> None:
    errors = _exported_errors()
    # The walk reaches the packages' exports and their public modules' alike.
    assert errors["geomint.tools.ToolError"] is ToolError
    assert errors["geomint.state.workspace.CorruptLogError"] is CorruptLogError
    assert errors["geomint.sandbox.prepare.GateRefused"] is GateRefused
    outside = sorted(
        where
        for where, error in errors.items()
        if not issubclass(error, GeomintError) and not _exempt(where)
    )
    assert outside == [], f"derive these from a geomint.errors class: {outside}"


@pytest.mark.parametrize(
    ("error", "family", "builtin"),
    [
        (ToolError, ModelFacingError, None),
        (EffectRefusedError, ModelFacingError, None),
        (ResultError, ModelFacingError, ValueError),
        (ResultTypeError, ModelFacingError, TypeError),
        (ChartError, ModelFacingError, ValueError),
        (GateRefused, ModelFacingError, ValueError),
        (geo.GeoInputError, ModelFacingError, ValueError),
        (CorruptLogError, OperatorError, ValueError),
    ],
)
def test_an_error_is_in_its_readers_family_and_keeps_its_builtin_base(
    error: type[Exception], family: type[GeomintError], builtin: type[Exception] | None
) -> None:
    assert issubclass(error, family)
    other_families = {ModelFacingError, OperatorError, UsageError} - {family}
    assert not any(issubclass(error, other) for other in other_families)
    if builtin is not None:  # code that caught the builtin before still catches it
        assert issubclass(error, builtin)


def test_a_tool_error_reads_as_its_message_and_hint() -> None:
    refusal = ToolError(
        "no places entry 'places-9' in this chat",
        hint="the places entries are places-1 and places-2; pass one of those",
    )
    assert refusal.as_result() == {
        "error": "no places entry 'places-9' in this chat",
        "hint": "the places entries are places-1 and places-2; pass one of those",
    }
    assert ToolError("help is not available here").as_result() == {
        "error": "help is not available here"
    }


def test_any_model_facing_error_reads_as_its_message() -> None:
    with pytest.raises(ModelFacingError) as caught:
        check_figure_ids(Ledger(), ["v9"])
    assert caught.value.as_result() == {
        "error": "v9 was never minted in this chat; no values have been minted in this chat "
        "yet; mint one with mint.value(...)"
    }
