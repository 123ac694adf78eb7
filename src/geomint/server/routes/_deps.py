"""What the routes share: the app's :class:`Served` state and the dependencies that read it.

:func:`geomint.server.create_app` puts one :class:`Served` on ``app.state.served``; a route
asks for what it needs by type (``agent: Agent``, ``chat_id: ChatId``) or lists a check
among its ``dependencies`` (``Depends(RateLimit("turns"))``). The dependencies are
``async`` so that they run on the event loop, one at a time, as the checks always have:
the limiter's buckets are not shared with a thread pool.
"""

from __future__ import annotations

import asyncio
import math
from dataclasses import dataclass, field
from typing import Annotated

from fastapi import Depends, HTTPException, Request

from geomint import audit
from geomint.agent import MapAgent
from geomint.server.approvals import Approvals
from geomint.server.limits import TurnLimiter, client_key
from geomint.server.new_chat import NewChat
from geomint.server.rasters import RasterImages
from geomint.state.events import is_chat_id
from geomint.store import NoSuchChatError

__all__ = [
    "Agent",
    "ChatId",
    "Fresh",
    "IdleChatId",
    "Pictures",
    "RateLimit",
    "Served",
    "Waiting",
    "ensure_idle",
    "served",
    "store_new_chat",
    "take_turn",
    "valid_chat_id",
]


@dataclass(frozen=True, kw_only=True)
class Served:
    """What every route of one app works with, set once by ``create_app``."""

    #: The agent every chat runs on (one store, one sandbox, one set of providers).
    agent: MapAgent
    #: Where runs wait for a person's answer to an approval request.
    approvals: Approvals
    #: Turns, uploads and new chats per client.
    limiter: TurnLimiter
    #: The access token the page's ``?token=`` link must carry; None when there is none.
    token: str | None
    #: The upload route's body cap, fixed when the app was made (``/api/health`` says it).
    max_upload_bytes: int
    #: What a chat holds before it is stored, and storing it with its first message or file.
    new_chat: NewChat
    #: Raster entries drawn for the map, kept by entry version.
    pictures: RasterImages = field(default_factory=RasterImages)


def served(request: Request) -> Served:
    """The :class:`Served` state of the app answering ``request``."""
    state: Served = request.app.state.served
    return state


async def _agent(request: Request) -> MapAgent:
    return served(request).agent


async def _approvals(request: Request) -> Approvals:
    return served(request).approvals


async def _new_chat(request: Request) -> NewChat:
    return served(request).new_chat


async def _pictures(request: Request) -> RasterImages:
    return served(request).pictures


def valid_chat_id(chat_id: str) -> str:
    """``chat_id`` when it is one (1-64 letters, digits, ``-`` or ``_``), else 422."""
    if not is_chat_id(chat_id):
        raise HTTPException(422, "a chat id is 1-64 letters, digits, '-' or '_'")
    return chat_id


def ensure_idle(agent: MapAgent, chat_id: str) -> None:
    """Answer 409 at once when the chat is still answering (perhaps waiting for an approval
    in another tab), rather than leave the request waiting for the chat's lock."""
    if agent.is_busy(chat_id):
        raise HTTPException(
            409,
            "this chat is still answering (perhaps in another tab, or waiting for an "
            "approval there); wait for that answer or stop it, then try again",
        )


def take_turn(request: Request, limit: str) -> None:
    """Take one of the client's turns, or answer 429 and record a ``rate_limited`` event.

    Args:
        request: The request; its client is the socket peer (see :mod:`.serving`).
        limit: What is limited, as the security event names it ("turns", "uploads").
    """
    client = client_key(request.client.host if request.client else "unknown")
    wait = served(request).limiter.wait(client)
    if wait > 0:
        audit.record("rate_limited", client=client, limit=limit)
        raise HTTPException(
            429,
            f"too many requests at once; try again in {math.ceil(wait)} s",
            headers={"retry-after": str(math.ceil(wait))},
        )


async def store_new_chat(request: Request, chat_id: str) -> bool:
    """Store the chat when it is new, as its first message or file would (a person's change
    to a new chat's map is the first thing it holds); a new chat is limited like a turn.

    Returns:
        Whether the chat was new.
    """
    state = served(request)
    await state.new_chat.settled(chat_id)
    try:
        await asyncio.to_thread(state.agent.chats.open, chat_id)
    except NoSuchChatError:
        take_turn(request, "new chats")  # making a chat writes data: limited like a turn
        await state.new_chat.start(chat_id)
        return True
    return False


class RateLimit:
    """A route dependency that takes one of the client's turns (:func:`take_turn`)."""

    def __init__(self, limit: str) -> None:
        self.limit = limit

    async def __call__(self, request: Request) -> None:
        take_turn(request, self.limit)


async def _chat_id(chat_id: str) -> str:
    return valid_chat_id(chat_id)


#: The app's agent.
Agent = Annotated[MapAgent, Depends(_agent)]
#: The app's approval requests waiting for an answer.
Waiting = Annotated[Approvals, Depends(_approvals)]
#: What a new chat starts with (see :mod:`geomint.server.new_chat`).
Fresh = Annotated[NewChat, Depends(_new_chat)]
#: Raster entries drawn for the map (see :mod:`geomint.server.rasters`).
Pictures = Annotated[RasterImages, Depends(_pictures)]
#: The ``{chat_id}`` path parameter, checked to be a chat id (422 when it is not).
ChatId = Annotated[str, Depends(_chat_id)]


async def _idle_chat_id(chat_id: ChatId, agent: Agent) -> str:
    ensure_idle(agent, chat_id)
    return chat_id


#: A valid ``{chat_id}`` whose chat is not answering (409 when it is).
IdleChatId = Annotated[str, Depends(_idle_chat_id)]
