"""A new chat: what it holds before anything is stored, and storing it when the first
message or file arrives.

The page makes up a chat's id (``/`` and "New chat" pick a fresh one) and stores nothing
for it until the person sends a message or a file: opening the page must not fill the
store with empty chats. Until then the chat reads as :meth:`NewChat.parts` says, with the
demo model the Helsinki places and park boundaries every new chat starts with. They are
written once into a chat held in memory by the same code that seeds a stored chat, so what
the page shows is what the chat will hold, down to the entry ids.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
from typing import Any, Final
from urllib.parse import quote

from geomint.agent import MapAgent
from geomint.agent.demo import seed_demo_data
from geomint.server.thread import entry_geojson
from geomint.store import Chats, MemoryStore, NoSuchChatError, RefusedEventError
from geomint.tools import EntryCache
from geomint.ui import EntryPart, chat_parts

__all__ = ["NewChat", "new_entry_url"]

#: The id of the template chat in its own memory store.
_TEMPLATE: Final = "new-chat"


def new_entry_url(entry_id: str, version: int) -> str:
    """Where the GeoJSON of an entry every new chat starts with is served."""
    return f"/api/new-chat/entries/{quote(entry_id, safe='')}?version={version}"


class NewChat:
    """What a new chat of ``agent`` starts with, and starting one."""

    def __init__(self, agent: MapAgent) -> None:
        self._agent = agent
        self._template: Chats | None = None
        self._building = asyncio.Lock()
        #: The chats being stored now, each by the one task storing it.
        self._starting: dict[str, asyncio.Future[None]] = {}

    async def _chats(self) -> Chats:
        """The template chat's store, seeded on first use (the demo data takes a moment)."""
        async with self._building:
            if self._template is None:
                chats = Chats(MemoryStore())
                chats.create(_TEMPLATE)
                if self._agent.model_info["demo"]:
                    context = self._agent.context(_TEMPLATE, "demo-seed")
                    # Its own cache too: the agent's is keyed by chat id, and a stored
                    # chat may be called _TEMPLATE.
                    template = dataclasses.replace(context, chats=chats, cache=EntryCache())
                    await seed_demo_data(template)
                self._template = chats
            return self._template

    async def parts(self) -> list[dict[str, Any]]:
        """The parts a new chat starts with, as a stored chat's parts read back; each
        entry's GeoJSON is served by :func:`new_entry_url`, not under a chat."""
        chats = await self._chats()
        parts = await asyncio.to_thread(chat_parts, chats, _TEMPLATE)
        return [
            (
                p.model_copy(update={"geojson_url": new_entry_url(p.entry_id, p.version)})
                if isinstance(p, EntryPart)
                else p
            ).model_dump(mode="json")
            for p in parts
        ]

    async def entry(self, entry_id: str, version: int | None = None) -> bytes | None:
        """The GeoJSON of an entry a new chat starts with (None when there is no such)."""
        chats = await self._chats()
        return await asyncio.to_thread(entry_geojson, chats, _TEMPLATE, entry_id, version)

    async def holder(self, chat_id: str) -> tuple[Chats, str]:
        """Where the chat's entries are read from: the agent's store when the chat is
        stored, else the template every new chat starts with (so a new chat's layers can
        be exported before anything is stored)."""
        try:
            await asyncio.to_thread(self._agent.chats.open, chat_id)
        except NoSuchChatError:
            return await self._chats(), _TEMPLATE
        return self._agent.chats, chat_id

    async def settled(self, chat_id: str) -> None:
        """Wait for the chat to be whole when it is being stored: a request that finds it
        created but not yet seeded would not find the entries the page showed."""
        starting = self._starting.get(chat_id)
        if starting is not None:
            await asyncio.shield(starting)

    async def start(self, chat_id: str) -> None:
        """Open the chat, storing it when new with what a new chat starts with.

        A stored demo chat without entries (one made before this was how chats began)
        is given the demo data too. Requests starting the same chat at once share one
        start, and each returns when the chat is whole.
        """
        starting = self._starting.get(chat_id)
        if starting is None:
            starting = asyncio.ensure_future(self._start(chat_id))
            self._starting[chat_id] = starting
            starting.add_done_callback(lambda _: self._starting.pop(chat_id, None))
        await asyncio.shield(starting)

    async def _start(self, chat_id: str) -> None:
        try:
            workspace = await asyncio.to_thread(self._agent.chats.open, chat_id)
        except NoSuchChatError:
            self._agent.open_chat(chat_id)  # on the event loop: two cannot both create it
        else:
            if workspace.entries:
                return
        if self._agent.model_info["demo"]:
            # Another tab starting the same new chat at once may have seeded it first.
            with contextlib.suppress(RefusedEventError):
                await seed_demo_data(self._agent.context(chat_id, "demo-seed"))
