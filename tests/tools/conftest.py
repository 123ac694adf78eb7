"""A chat to run tools in: an in-memory store, the in-process sandbox, and what the person is
shown (the parts projected from each append, as the agent's stream projects them)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from geomint.sandbox import Sandbox
from geomint.state import EntryWritten, Workspace
from geomint.store import Appended, Chats, MemoryStore
from geomint.tools import ToolContext, ToolSettings, rerun_watchers
from geomint.ui import DurablePart, Projector

#: What the person was shown, in order: the parts of every append.
UiLog = list[DurablePart]
MakeCtx = Callable[..., ToolContext]


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture
def ui() -> UiLog:
    return []


@pytest.fixture
def make_ctx(in_process: Sandbox, ui: UiLog, tmp_path: Path) -> MakeCtx:
    """Build a context on a fresh chat ``c1``; keyword arguments override its fields."""

    async def after_entry_written(ctx: ToolContext, written: EntryWritten) -> None:
        await rerun_watchers(ctx, written)

    def build(**overrides: Any) -> ToolContext:
        chats = Chats(MemoryStore())
        chats.create("c1")
        projector = Projector(chats, Workspace(chat_id="c1"))

        def on_append(appended: Appended) -> None:
            ui.extend(projector.appended(appended))

        fields: dict[str, Any] = {
            "chats": chats,
            "chat_id": "c1",
            "run_id": "r1",
            "sandbox": in_process,
            "settings": ToolSettings(byod_dirs=(tmp_path,)),
            "on_append": on_append,
            "after_entry_written": after_entry_written,
        }
        return ToolContext(**(fields | overrides))

    return build


@pytest.fixture
def ctx(make_ctx: MakeCtx) -> ToolContext:
    return make_ctx()
