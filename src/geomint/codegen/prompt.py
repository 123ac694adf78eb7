"""The generation prompt for map code: the API card, the skills, the map, the entries.

Everything here is text for a model. The API card is made from ``MapView``'s own
signatures and docstrings, so it cannot drift from what the sandbox accepts. Entries are
described by handle and digest (id, kind, label, count, properties, extent), never by
their bytes.
"""

from __future__ import annotations

import inspect
import json
from collections.abc import Mapping, Sequence
from typing import Any, Final

from geomint.codegen.skills import Skill
from geomint.models import CODEGEN_MARKER
from geomint.sandbox import MapView

__all__ = ["CODEGEN_MARKER", "api_card", "build_prompt", "style_summary"]

_RULES: Final = f"""{CODEGEN_MARKER} The code is the body of a Python function that changes a
MapLibre map through `mapview`, an object that stands for MapLibre's `map` (named so it does
not shadow Python's builtin `map`). `mapview` records each change; nothing is drawn until
the change is checked against the MapLibre style specification and approved.

Rules:
- Write only the body: no `def` wrapper, no imports of anything but the standard library
  modules math, json, collections, itertools, colorsys; `np`, `shapely`, `h3`, `pd`, `gpd`,
  `pyproj` and `geo` are already there. A `return` is optional.
- The chat's entries are in `<kind>_by_entry` dicts by id (e.g. `places_by_entry["places-1"]`)
  and as `<kind>` for the only (or merged) entry of a kind: GeoJSON FeatureCollections (a
  `rasters` entry is a `Raster`: `.values()`, `.bounds`, `.crs`).
- A source is an entry id (`{{"type": "geojson", "data": "places-1"}}`; a raster entry is
  an image, `{{"type": "image", "data": "rasters-1"}}`), GeoJSON the code built, or an
  image the code rendered. Never a URL: a URL is refused.
- Layer ids are new, short and readable (`cafe-heat`). geomint's own layers (marked
  `"geomint": True` below) may be restyled but not removed.
- Answer with the code only, in one ```python block."""


def api_card() -> str:
    """``mapview``'s methods, each with its signature and its docstring."""
    lines = ["`mapview` methods:"]
    for name, member in inspect.getmembers(MapView, inspect.isfunction):
        if name.startswith("_") or name == "diff":
            continue
        signature = str(inspect.signature(member)).replace("'", "")
        signature = signature.replace("(self, ", "(").replace("(self)", "()")
        doc = " ".join((inspect.getdoc(member) or "").replace("``", "`").split())
        lines.append(f"- mapview.{name}{signature}: {doc}")
    return "\n".join(lines)


def style_summary(style: Mapping[str, Any]) -> str:
    """The map's sources and layers in a few lines: ids, types, and whose they are."""
    lines = ["Sources:"]
    for source_id, source in (style.get("sources") or {}).items():
        whose = " (geomint: an entry)" if source.get("geomint") else ""
        lines.append(f"- {source_id}: {source.get('type')}{whose}")
    lines.append("Layers, bottom to top:")
    for layer in style.get("layers") or []:
        whose = " (geomint)" if layer.get("geomint") else ""
        source = f" from {layer['source']}" if layer.get("source") else ""
        lines.append(f"- {layer.get('id')}: {layer.get('type')}{source}{whose}")
    return "\n".join(lines)


def build_prompt(
    *,
    intent: str,
    skills: Sequence[Skill],
    style: Mapping[str, Any],
    entries: Sequence[Mapping[str, Any]],
    previous: Sequence[tuple[str, str]] = (),
) -> tuple[str, str]:
    """The system and user prompts of one generation call.

    Args:
        intent: What should change, in the person's terms.
        skills: The matched skills, best first.
        style: The map as :meth:`MapView.get_style` shows it.
        entries: Digests of the entries the intent concerns.
        previous: Earlier attempts as ``(code, what was wrong)``, oldest first.
    """
    system = f"{_RULES}\n\n{api_card()}"
    parts = [f"Intent: {intent}"]
    if skills:
        parts.append("Skills:\n\n" + "\n\n".join(skill.body for skill in skills))
    parts.append("The map now:\n" + style_summary(style))
    if entries:
        described = "\n".join(json.dumps(e, ensure_ascii=False) for e in entries)
        parts.append(f"Entries the intent concerns:\n{described}")
    for number, (code, problem) in enumerate(previous, start=1):
        parts.append(
            f"Attempt {number} was refused:\n```python\n{code}\n```\nWhat was wrong:\n{problem}\n"
            "Write the whole body again with every problem fixed."
        )
    return system, "\n\n".join(parts)
