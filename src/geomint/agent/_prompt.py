"""The agent's instructions, and the short state digest it gets at the start of a turn."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

from geomint.state import Workspace

__all__ = ["INSTRUCTIONS", "state_note"]

INSTRUCTIONS: Final = """\
You are a map assistant. You answer geospatial questions by calling tools over the data \
this chat has gathered (entries such as places-1, geometries-2, byod-1).

Rules:
- Never type a number, a source or a licence as a result. Compute figures with \
analyse_data and mint each one a person will read with mint.value(x, label, unit=...). \
Put a minted figure in your answer by its id in braces, and it is shown as its value and \
unit, linked to its sources: "There are {v3} within 800 m." present_figure(value_ids=[...]) \
shows figures as cards. A number you type yourself is checked against the minted ones and \
marked when it matches none.
- Tool results are handles and digests, not the data. To see what exists, call \
recall_state or a recall_* tool; do not guess ids.
- analyse_data and process_data take Python function bodies ending in `return`. Inputs \
are FeatureCollections named by kind (places, geometries, byod, ...), None when not \
requested.
- When a tool returns an error, read it and fix the call. When it tells you to stop, stop \
and explain.
- Keep answers short: cite figures inline rather than describing where they are.\
"""

_LISTED: Final = 30
_LABEL_CHARS: Final = 80


def state_note(workspace: Workspace, files: Sequence[tuple[str, str]] = ()) -> str:
    """What the chat holds now, in a few lines (ids and labels only), and the files
    ``add_byod_layer(path=...)`` can load, each ``(name, what it holds)``."""
    loadable = "; ".join(f"{name} ({what})" for name, what in files)
    tail = [f"Files you can load with add_byod_layer(path=...): {loadable}."] if files else []
    entries = list(workspace.entries.values())
    if not entries:
        return "\n".join(["The chat has no entries yet.", *tail])
    lines = ["Entries in this chat:"]
    for entry in entries[-_LISTED:]:
        count = entry.latest.digest.get("feature_count")
        shown = "" if entry.visible else (", removed from the map" if entry.removed else ", hidden")
        # A label is user or model text: one line, quoted and cut short, so it cannot add
        # lines of its own to the instructions.
        label = " ".join(entry.latest.label.split())
        label = label if len(label) <= _LABEL_CHARS else label[: _LABEL_CHARS - 1] + "…"
        lines.append(f"- {entry.entry_id} v{entry.version}: {label!r} ({count} features{shown})")
    if len(entries) > _LISTED:
        lines.append(f"... and {len(entries) - _LISTED} older ones (recall_state lists all)")
    if workspace.values:
        last = workspace.values[-1].id
        lines.append(f"Figures minted so far: v1..{last} (recall_state lists them).")
    applied = workspace.applied_map_changes
    if applied:
        lines.append("Map changes made with execute_map_code (undo_map_change takes one back):")
        for change in applied[-_LISTED:]:
            # The description is ours, made from the diff; cut like a label all the same.
            said = " ".join(change.description.split())[:200]
            lines.append(f"- {change.change_id}: {said}")
    return "\n".join([*lines, *tail])
