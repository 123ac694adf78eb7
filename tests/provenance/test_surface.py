"""The public surface of geomint.provenance is declared and documented, with examples
(tests/test_docstring_examples.py runs them)."""

from __future__ import annotations

import doctest
import importlib
import re
from pathlib import Path
from types import ModuleType

import pytest
from pydantic import BaseModel

from geomint import provenance

MODULES = ["", ".records", ".merge", ".ledger", ".conflicts", ".figures", ".errors", "._ids"]


def _module(suffix: str) -> ModuleType:
    return importlib.import_module(f"geomint.provenance{suffix}")


def test_exports() -> None:
    assert sorted(provenance.__all__) == sorted([
        "EVIDENCE_TYPES", "LICENCE_NOT_STATED", "PERIOD_NOT_STATED", "Conflict",
        "ConflictRefusedError",
        "EntryVersion", "Evidence", "FigureRefusedError", "Layer", "Ledger", "MintedRecord",
        "Provenance", "ReusedIdError", "UnknownLayerError", "UnknownValueError", "Value",
        "check_figure_ids", "cited_value", "conflicts", "errors", "evidence_types", "figures",
        "hash_code", "ledger", "licences", "merge", "publishers", "record_conflict", "records",
        "refuse_typed_number", "union", "union_inputs",
    ])  # fmt: skip
    for name in provenance.__all__:
        assert getattr(provenance, name) is not None


@pytest.mark.parametrize("suffix", MODULES)
def test_every_module_is_documented_and_declares_all(suffix: str) -> None:
    module = _module(suffix)
    assert module.__doc__
    assert all(hasattr(module, name) for name in module.__all__)


def test_the_package_examples_exist() -> None:
    attempted = sum(
        doctest.testmod(_module(s), optionflags=doctest.ELLIPSIS).attempted for s in MODULES
    )
    assert attempted >= 20


@pytest.mark.parametrize(
    "record", [provenance.Provenance, provenance.EntryVersion, provenance.Value, provenance.Layer]
)
def test_every_field_is_documented(record: type[BaseModel]) -> None:
    documented = set(re.findall(r"^ {8}(\w+):", record.__doc__ or "", re.MULTILINE))
    assert set(record.model_fields) == documented


def test_records_refuse_unknown_fields_and_are_frozen() -> None:
    for record in (provenance.Provenance, provenance.EntryVersion, provenance.Value,
                   provenance.Layer, provenance.Conflict):  # fmt: skip
        assert record.model_config.get("extra") == "forbid"
        assert record.model_config.get("frozen") is True


def test_the_package_imports_only_geo_and_errors_of_ours() -> None:
    allowed = re.compile(r"geomint\.(provenance|geo|errors)\b")
    for suffix in MODULES:
        text = Path(_module(suffix).__file__ or "").read_text(encoding="utf-8")
        imported = re.findall(r"^\s*(?:from|import) (geomint[\w.]*)", text, re.MULTILINE)
        assert all(allowed.match(name) for name in imported), (suffix, imported)
