"""Agents over a shared real sandbox and a fresh memory store each."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import pytest

from geomint.agent import MapAgent
from geomint.providers import default_providers
from geomint.sandbox import Sandbox
from geomint.store import Chats, MemoryStore
from geomint.testing import Script
from geomint.tools import DEFAULT_TOOLS, ToolSettings, resolve_tools


@pytest.fixture(scope="module")
def shared_sandbox() -> Iterator[Sandbox]:
    """One real sandbox (the strongest mode here) for the module's agents."""
    sandbox = Sandbox(mode="auto", timeout_s=10, memory_mb=1024)
    sandbox.start()
    yield sandbox
    sandbox.close()


@pytest.fixture
def make_agent(shared_sandbox: Sandbox) -> Iterator[Callable[..., MapAgent]]:
    """Build an agent on a script (or any model) over a fresh memory store."""
    made: list[MapAgent] = []

    def make(model: Any, **options: Any) -> MapAgent:
        if isinstance(model, Script):
            model = model.model()
        tools = options.pop("tools", None)
        agent = MapAgent(
            model=model,
            registry=resolve_tools(DEFAULT_TOOLS, tools),
            chats=options.pop("chats", None) or Chats(MemoryStore()),
            sandbox=shared_sandbox,
            settings=options.pop("settings", None) or ToolSettings(),
            providers=options.pop("providers", None) or default_providers({}),
            owns_store=False,
            **options,
        )
        made.append(agent)
        return agent

    yield make
