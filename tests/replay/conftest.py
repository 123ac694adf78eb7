"""One chat with every scripted demo prompt in it: charts, figures, layers, a monitor's
re-run and rasters, all analyses of one chat, as the notebook tests export it."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from typing import Any

import pytest

from geomint.agent import ApprovalRequest
from geomint.state import MessageAdded
from geomint.store import Chats

#: Markup of every kind a notebook renderer reads: HTML, a script, a link, math, code.
HOSTILE = (
    '<img src=x onerror="alert(1)"><script>alert(2)</script> [a](javascript:b) $c$ '
    "**d** `e` ![f](g)\n```python\nimport os\n```\n%%bash\n"
)


async def _yes(request: ApprovalRequest) -> tuple[bool, str]:
    return True, "fine"


async def _demo_chat() -> Any:
    from geomint import create_map_agent
    from geomint.agent.demo import seed_demo_chat
    from geomint.models.demo import DEMO_PROMPTS

    agent = create_map_agent("demo", store="memory:", approve=_yes)
    chat_id = await seed_demo_chat(agent, "every-prompt")
    for prompt in DEMO_PROMPTS:
        if not prompt.needs_page:
            await agent.run(prompt.text, chat_id=chat_id)
    agent.chats.rename(chat_id, "<b>x</b> [a](javascript:b) $c$ `d`")
    message = MessageAdded(message_id="hostile", role="user", parts=({"kind": "text",
                           "text": HOSTILE},))  # fmt: skip
    agent.chats.append(chat_id, "hostile", [message])
    return agent, chat_id


@pytest.fixture(scope="session")
def demo_chat() -> Iterator[tuple[Chats, str]]:
    """The store's chats and the id of the chat that ran every demo prompt; its title and
    last message are markup of every kind a notebook renderer reads."""
    agent, chat_id = asyncio.run(_demo_chat())
    try:
        yield agent.chats, chat_id
    finally:
        agent.close()
