"""Approvals over HTTP: a run waits for the browser's answer to its approval request.

The run streams an ``approval`` event and waits in :meth:`Approvals.ask`; the browser shows
the request and posts the answer to ``/api/chats/<chat>/approvals/<id>``, which
:meth:`Approvals.answer` hands to the waiting run. No answer within ``timeout_s`` is a
refusal, and a run stopped while waiting (Stop, a closed tab) records a refusal too (the
agent does that), so a call never runs without a person's yes.

An approval that asks the page for something (the device's position, for the
``location`` effect) is answered with it: the yes carries a ``reply`` the run receives.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Final

from geomint.agent import ApprovalRequest

__all__ = ["Approvals"]

#: ``(approved, reason)``, or ``(approved, reason, reply)`` with what the page sent back.
ApprovalAnswer = tuple[bool, str] | tuple[bool, str, Mapping[str, Any]]

_REASON_CHARS: Final = 500


@dataclass
class Approvals:
    """The approval requests waiting for an answer, by ``(chat_id, approval_id)``."""

    timeout_s: float = 600.0
    _waiting: dict[tuple[str, str], asyncio.Future[ApprovalAnswer]] = field(default_factory=dict)

    async def ask(self, request: ApprovalRequest) -> ApprovalAnswer:
        """Wait for the person's answer to ``request``: ``(approved, reason)``, or
        ``(approved, reason, reply)`` when the page sent something back with it."""
        key = (request.chat_id, request.approval_id)
        future: asyncio.Future[ApprovalAnswer] = asyncio.get_running_loop().create_future()
        self._waiting[key] = future
        try:
            return await asyncio.wait_for(future, self.timeout_s)
        except TimeoutError:
            return False, f"no answer within {round(self.timeout_s)} s"
        finally:
            self._waiting.pop(key, None)

    def answer(
        self,
        chat_id: str,
        approval_id: str,
        *,
        approved: bool,
        reason: str = "",
        reply: Mapping[str, Any] | None = None,
    ) -> bool:
        """Give the answer (with what the page sent back, if anything); False when nothing
        is waiting under that id (already answered, timed out, or never asked)."""
        future = self._waiting.get((chat_id, approval_id))
        if future is None or future.done():
            return False
        reason = reason.strip()[:_REASON_CHARS]
        reason = reason or ("approved" if approved else "refused by the person")
        future.set_result((approved, reason) if reply is None else (approved, reason, reply))
        return True

    def waiting(self, chat_id: str) -> list[str]:
        """The approval ids waiting in a chat."""
        return [a for (c, a), f in self._waiting.items() if c == chat_id and not f.done()]
