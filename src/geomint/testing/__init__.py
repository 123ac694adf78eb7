"""Test doubles for an application's tests, and a switch that keeps those tests offline.

geomint's own suite runs on these, and an application built on geomint can too:

* a model: :class:`Script` (the classifier's picks, then the tool loop's steps) or any
  function of the messages through :func:`scripted_model`; :class:`DemoModel`, the
  scripted demo over the bundled data;
* a real model class's wire: :class:`StubLLMServer`, the OpenAI and Anthropic HTTP APIs
  on 127.0.0.1, answering from a script of :class:`StubReply` values;
* an HTTP service: :class:`ScriptedTransport` (no socket: pass it as a fetch's or a
  :class:`~geomint.http.RequestPolicy`'s ``transport``) or :class:`RecordedServer`
  (recorded responses on 127.0.0.1, for code given only a URL);
* a store: :class:`MemoryStore` (or ``store="memory:"``);
* a sandbox: :func:`in_process_sandbox` (or ``code_execution={"mode": "in-process"}``);
* the switch: :func:`offline` refuses every connection beyond loopback and every request
  of a real model class, and records what it refused.

Nothing in geomint imports this package (an import-linter contract says so), and its
names load on first use, so importing it costs nothing until a double is used.

Example:
    >>> import asyncio
    >>> from geomint import create_map_agent
    >>> from geomint.testing import Script, offline
    >>> script = Script(picks=[{"tools": [], "scopes": {}}], steps=["Hello from a script."])
    >>> with offline() as guard:
    ...     agent = create_map_agent(
    ...         script.model(), store="memory:", code_execution={"mode": "in-process"}
    ...     )
    ...     asyncio.run(agent.run("Hi")).text
    ...     agent.close()
    'Hello from a script.'
    >>> guard.refused
    []

More in ``docs/testing.md``.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from geomint.http import ScriptedTransport
    from geomint.models.demo import DemoModel, scripted_model
    from geomint.store import MemoryStore
    from geomint.testing._llm_stub import StubLLMServer, StubReply, StubRequest, StubToolCall
    from geomint.testing._offline import NetworkGuard, OfflineError, offline
    from geomint.testing._recorded import (
        RecordedReply,
        RecordedRequest,
        RecordedRoute,
        RecordedServer,
    )
    from geomint.testing._sandbox import in_process_sandbox
    from geomint.testing._script import Script, Step, tool_returns

_LAZY = {
    "DemoModel": "geomint.models.demo",
    "MemoryStore": "geomint.store",
    "NetworkGuard": "geomint.testing._offline",
    "OfflineError": "geomint.testing._offline",
    "RecordedReply": "geomint.testing._recorded",
    "RecordedRequest": "geomint.testing._recorded",
    "RecordedRoute": "geomint.testing._recorded",
    "RecordedServer": "geomint.testing._recorded",
    "Script": "geomint.testing._script",
    "ScriptedTransport": "geomint.http",
    "Step": "geomint.testing._script",
    "StubLLMServer": "geomint.testing._llm_stub",
    "StubReply": "geomint.testing._llm_stub",
    "StubRequest": "geomint.testing._llm_stub",
    "StubToolCall": "geomint.testing._llm_stub",
    "in_process_sandbox": "geomint.testing._sandbox",
    "offline": "geomint.testing._offline",
    "scripted_model": "geomint.models.demo",
    "tool_returns": "geomint.testing._script",
}

__all__ = [
    "DemoModel",
    "MemoryStore",
    "NetworkGuard",
    "OfflineError",
    "RecordedReply",
    "RecordedRequest",
    "RecordedRoute",
    "RecordedServer",
    "Script",
    "ScriptedTransport",
    "Step",
    "StubLLMServer",
    "StubReply",
    "StubRequest",
    "StubToolCall",
    "in_process_sandbox",
    "offline",
    "scripted_model",
    "tool_returns",
]


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'geomint.testing' has no attribute {name!r}")
    value = getattr(import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted([*globals(), *__all__])
