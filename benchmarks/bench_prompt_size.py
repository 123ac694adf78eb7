"""Measure what the tools cost in a prompt: the data tools scoped vs unscoped, ``use_tools``
(the tools the classifier left out, one line each), and a whole turn's tool surface with
and without the classifier.

A tool costs its description plus its input JSON schema, sent with every model step of a
turn. Sizes are characters of the compact JSON a provider receives (name, description,
parameters); tokens are estimated at 4 characters each (no tokenizer file is needed, and
none can be downloaded here). Also measured: the classifier's own prompt.

Run: ``.venv/bin/python benchmarks/bench_prompt_size.py``. Prints a Markdown table for
docs/performance.md.
"""

from __future__ import annotations

import json

from geomint.agent._surface import USE_TOOLS, ToolSurface
from geomint.agent.classifier import classifier_prompt
from geomint.state import ENTRY_KINDS
from geomint.tools import DEFAULT_TOOLS, ToolEntry
from geomint.tools._kinds import DataScope


def _size(name: str, entry: ToolEntry) -> int:
    definition = {
        "name": name,
        "description": entry.description,
        "parameters": entry.input_schema.model_json_schema(),
    }
    return len(json.dumps(definition, separators=(",", ":"), ensure_ascii=False))


def _row(what: str, chars: int, note: str = "") -> str:
    return f"| {what} | {chars:,} | ~{round(chars / 4):,} | {note} |"


def main() -> None:
    print("| Tool surface | Characters | Tokens (chars/4) | Note |")
    print("|---|---:|---:|---|")
    for name in ("analyse_data", "process_data"):
        tool = DEFAULT_TOOLS[name]
        terse = _size(name, tool)
        one = _size(name, tool.for_scope(DataScope(kinds=["places"])))
        two = _size(name, tool.for_scope(DataScope(kinds=["places", "byod"])))
        full = _size(name, tool.for_scope(DataScope(kinds=list(ENTRY_KINDS))))
        print(_row(f"`{name}` scoped to places", one))
        print(_row(f"`{name}` scoped to places + byod", two))
        print(_row(f"`{name}` scoped to all 7 kinds", full, "what one unscoped full surface costs"))
        print(_row(f"`{name}` unscoped (terse fallback)", terse, "classifier off or scope missing"))
    everything = sum(_size(n, s) for n, s in DEFAULT_TOOLS.items())
    seed = _size(
        "analyse_data", DEFAULT_TOOLS["analyse_data"].for_scope(DataScope(kinds=["places"]))
    )
    seed += _size("present_figure", DEFAULT_TOOLS["present_figure"])
    picked = ("analyse_data", "present_figure")
    surface = ToolSurface(entries=dict(DEFAULT_TOOLS), picked=picked)
    use = _size(USE_TOOLS, surface.use_tools())
    left_out = len(surface.left_out)
    print(
        _row(f"`{USE_TOOLS}` listing the seed turn's {left_out} other tools", use, "one line each")
    )
    print(
        _row(
            "seed example turn, classifier on",
            seed + use,
            "analyse_data (places) + present_figure + use_tools",
        )
    )
    print(_row(f"every default tool, classifier off ({len(DEFAULT_TOOLS)})", everything, "terse"))
    print(
        _row(
            "classifier prompt (instructions)",
            len(classifier_prompt(DEFAULT_TOOLS)),
            "one call per turn, before the first step",
        )
    )


if __name__ == "__main__":
    main()
