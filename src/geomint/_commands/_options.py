"""Options several commands share, spelled once."""

from __future__ import annotations

from typing import Annotated

import typer

__all__ = ["AgentMode", "StoreUrl"]

#: ``--store``: where chats are kept.
StoreUrl = Annotated[
    str | None,
    typer.Option("--store", help="Store URL or path (default: the SQLite default path)."),
]
#: ``--mode``: the sandbox for a command that runs model-written code (never in-process).
AgentMode = Annotated[str, typer.Option("--mode", help="Sandbox mode: auto, isolated, restricted.")]
