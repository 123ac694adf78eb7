"""Helpers for the web app's in-process tests: an agent on the demo model, a request over
ASGI, and a question in the AI SDK's shape."""

from __future__ import annotations

from typing import Any

import httpx

from geomint.agent import MapAgent
from geomint.models.demo import DemoModel
from geomint.providers import bundled, default_providers
from geomint.sandbox import Sandbox
from geomint.store import Chats, MemoryStore
from geomint.tools import DEFAULT_TOOLS, ToolSettings

#: The upload limit of these tests' agents (small, so the refusals are quick to reach).
UPLOAD_LIMIT = 200_000


def make_agent(
    sandbox: Sandbox, model: Any = None, *, store: Any = None, **options: Any
) -> MapAgent:
    """A MapAgent on the demo model (or ``model``), a memory store (or ``store``), the
    offline provider, code-made layers needing approval, and a 200 kB upload limit."""
    return MapAgent(
        model=model or DemoModel(),
        registry=DEFAULT_TOOLS,
        chats=Chats(store or MemoryStore()),
        sandbox=sandbox,
        settings=ToolSettings(byod_dirs=(bundled.DATA_DIR,), max_upload_bytes=UPLOAD_LIMIT),
        providers=default_providers({}),
        require_approval=options.pop("require_approval", ["code_entry"]),
        owns_store=False,
        **options,
    )


async def call(app: Any, method: str, url: str, **kwargs: Any) -> httpx.Response:
    """One request to ``app`` in-process; server errors come back as 500s, as a browser
    sees them, not as exceptions here."""
    transport = httpx.ASGITransport(app=app, raise_app_exceptions=False)
    async with httpx.AsyncClient(transport=transport, base_url="http://geomint.test") as client:
        return await client.request(method, url, **kwargs)


def ask(text: str, chat_id: str) -> dict[str, Any]:
    """The AI SDK's sendMessage body: the chat's id and its newest message."""
    return {
        "id": chat_id,
        "messages": [{"id": "m", "role": "user", "parts": [{"type": "text", "text": text}]}],
    }
