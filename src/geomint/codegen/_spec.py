"""The vendored MapLibre style specification, loaded once, and the tables derived from it."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from functools import cache
from importlib import resources
from typing import Any

_SPEC_FILE = "maplibre-style-spec.json"


@dataclass(frozen=True, kw_only=True)
class Arity:
    """How many arguments one overload of an expression operator takes.

    Attributes:
        fixed: Arguments outside the repeated group.
        group: The size of the repeated group (``0`` when nothing repeats).
        optional: Optional arguments (``name?`` in the spec), counted outside ``fixed``.
        signature: The overload as the spec writes it, for messages.
    """

    fixed: int
    group: int
    optional: int
    signature: str

    def accepts(self, count: int) -> bool:
        """Whether ``count`` arguments fit this overload."""
        if self.group == 0:
            return self.fixed <= count <= self.fixed + self.optional
        rest = count - self.fixed
        if rest < self.group:
            return False
        return self.optional > 0 or rest % self.group == 0


@dataclass(frozen=True, kw_only=True)
class Spec:
    """The parts of the spec the validator reads, indexed for lookups.

    Attributes:
        version: The vendored package's version.
        root: The whole reference document.
        layer_types: The layer types (``layer.type.values``).
        paint: Paint properties by layer type.
        layout: Layout properties by layer type.
        operators: Expression operators and their spec entries.
        arities: Each operator's overloads.
        output_types: Each operator's possible output types (``any`` when unknown).
        source_types: The source types and their property tables.
    """

    version: str
    root: dict[str, Any]
    layer_types: frozenset[str]
    paint: dict[str, dict[str, dict[str, Any]]]
    layout: dict[str, dict[str, dict[str, Any]]]
    operators: dict[str, dict[str, Any]]
    arities: dict[str, tuple[Arity, ...]]
    output_types: dict[str, frozenset[str]]
    source_types: dict[str, dict[str, dict[str, Any]]]


def _arity(parameters: list[str], name: str) -> Arity:
    signature = "[" + ", ".join([f'"{name}"', *parameters]) + "]"
    if "..." not in parameters:
        optional = sum(p.endswith("?") for p in parameters)
        return Arity(
            fixed=len(parameters) - optional, group=0, optional=optional, signature=signature
        )
    # "a_1, b_1, ..., a_n, b_n, fallback": the names ending in _n repeat.
    cut = parameters.index("...")
    after = parameters[cut + 1 :]
    repeated = [p for p in after if re.search(r"_n\??$", p)]
    group_optional = sum(p.endswith("?") for p in repeated)
    group = len(repeated) - group_optional
    fixed = len(parameters) - 1 - 2 * len(repeated)
    return Arity(fixed=fixed, group=max(group, 1), optional=group_optional, signature=signature)


def _outputs(entry: dict[str, Any]) -> frozenset[str]:
    found: set[str] = set()
    for overload in entry.get("syntax", {}).get("overloads", []):
        output = overload.get("output-type", "any")
        found.update(output if isinstance(output, list) else [output])
    return frozenset(found or {"any"})


@cache
def load() -> Spec:
    """Read the vendored spec and its version (once per process)."""
    folder = resources.files("geomint.codegen").joinpath("spec")
    root = json.loads(folder.joinpath(_SPEC_FILE).read_text(encoding="utf-8"))
    vendor = json.loads(folder.joinpath("VENDOR.json").read_text(encoding="utf-8"))
    layer_types = frozenset(root["layer"]["type"]["values"])
    operators: dict[str, dict[str, Any]] = root["expression_name"]["values"]
    arities = {
        name: tuple(
            _arity(list(overload["parameters"]), name)
            for overload in entry.get("syntax", {}).get("overloads", [])
        )
        for name, entry in operators.items()
    }
    # "source": ["source_vector", ...]; each table's "type" enum names its one type.
    sources = {next(iter(root[key]["type"]["values"])): root[key] for key in root["source"]}
    return Spec(
        version=str(vendor["version"]),
        root=root,
        layer_types=layer_types,
        paint={t: root.get(f"paint_{t}", {}) for t in layer_types},
        layout={t: root.get(f"layout_{t}", {}) for t in layer_types},
        operators=operators,
        arities=arities,
        output_types={name: _outputs(entry) for name, entry in operators.items()},
        source_types=sources,
    )
