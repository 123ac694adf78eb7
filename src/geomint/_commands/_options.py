"""Options several commands share, spelled once."""

from __future__ import annotations

from typing import Annotated

import typer

__all__ = ["AgentMode", "ApproveEffects", "StoreUrl"]

#: ``--store``: where chats are kept.
StoreUrl = Annotated[
    str | None,
    typer.Option("--store", help="Store URL or path (default: the SQLite default path)."),
]
#: ``--mode``: the sandbox for a command that runs model-written code (never in-process).
AgentMode = Annotated[str, typer.Option("--mode", help="Sandbox mode: auto, isolated, restricted.")]
#: ``--approve``: effects (or tools) that wait for the person's yes, wherever the person is
#: asked (the page for ``serve``, the client for ``mcp``).
ApproveEffects = Annotated[
    list[str] | None,
    typer.Option(
        "--approve",
        help="An effect that needs the person's approval wherever it happens (repeatable): "
        "runs_code, code_entry, fetched_entry, display, network; or a tool name for its "
        "effects. E.g. --approve code_entry.",
    ),
]
