"""Approvals through an MCP client: the person is asked by elicitation, and only their
answer to the question the server asked, about the very call being made, counts.

Two ways to ask, by what the connection can do:

- **Mid-call** (a connection that can send the client a request: stdio and HTTP
  sessions of the handshake era): ``elicitation/create``, answered within
  :data:`ANSWER_TIMEOUT_S` or refused.
- **Per request** (the 2026-07-28 era has no back channel): the call stops before the
  effect, is recorded as not run, and returns an ``input_required`` result with the
  question. The client's retry carries the answer under the question's key.

The client is not trusted to say what was approved. Each question is a nonce the server
keeps (:class:`Questions`) with a digest of what it asks about: the chat, the tool, its
arguments, the effects and whether it is a re-run. An answer counts only under a nonce the
server issued, within its lifetime, for a request of the same digest, and once: changed
code is asked again, ``request_state`` is only the list of this call's nonces, and a
client that cannot elicit is refused outright. (A hostile client can still answer yes
for the person; that is what delegating the question to the client means.)
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import secrets
import threading
import time
from dataclasses import dataclass, field
from typing import Any, Final

import mcp_types as types
from mcp.server.context import ServerRequestContext

from geomint.agent import ApprovalRequest

__all__ = ["ANSWER_TIMEOUT_S", "Asking", "Questions"]

#: Seconds a person has to answer a mid-call question, or a question lives for a retry.
ANSWER_TIMEOUT_S: Final = 300.0
#: The most characters of a question: past it the call is refused, never shown cut.
MAX_QUESTION_CHARS: Final = 60_000
_MAX_PENDING: Final = 10_000
_ALLOW_SCHEMA: Final = {
    "type": "object",
    "properties": {"allow": {"type": "boolean", "title": "Allow this call"}},
    "required": ["allow"],
}


@dataclass
class _Question:
    digest: str
    asked_at: float
    answer: bool | None = None


class Questions:
    """The questions the server asked and has not yet seen used, by nonce."""

    def __init__(self) -> None:
        self._kept: dict[str, _Question] = {}
        self._lock = threading.Lock()

    def ask(self, digest: str) -> str:
        """A new question's nonce."""
        nonce = "approval-" + secrets.token_urlsafe(18)
        with self._lock:
            self._prune()
            if len(self._kept) >= _MAX_PENDING:
                oldest = min(self._kept, key=lambda n: self._kept[n].asked_at)
                del self._kept[oldest]
            self._kept[nonce] = _Question(digest=digest, asked_at=time.monotonic())
        return nonce

    def answered(self, nonce: str, yes: bool) -> None:
        """Keep the person's answer to a question the server asked (others are ignored)."""
        with self._lock:
            found = self._kept.get(nonce)
            if found is not None and found.answer is None:
                found.answer = yes

    def take(self, nonces: list[str], digest: str) -> bool | None:
        """The answer to a question about ``digest`` among ``nonces``, used up; None when
        none was asked and answered."""
        with self._lock:
            self._prune()
            for nonce in nonces:
                found = self._kept.get(nonce)
                if found is not None and found.digest == digest and found.answer is not None:
                    del self._kept[nonce]
                    return found.answer
        return None

    def _prune(self) -> None:
        now = time.monotonic()
        for nonce in [n for n, q in self._kept.items() if now - q.asked_at > ANSWER_TIMEOUT_S]:
            del self._kept[nonce]


@dataclass
class Asking:
    """One tool call's approvals (its ``approve``), over either way of asking."""

    ctx: ServerRequestContext[Any, Any]
    questions: Questions
    chat_id: str
    nonces: list[str]
    asked: dict[str, str] = field(default_factory=dict)

    @classmethod
    def of(
        cls, ctx: ServerRequestContext[Any, Any], params: Any, questions: Questions, chat_id: str
    ) -> Asking:
        """The approvals of a call, with the answers its retry carries to questions the
        server asked (``request_state`` names this call's questions; nothing more)."""
        nonces: list[str] = []
        try:
            earlier = json.loads(params.request_state or "[]")
        except ValueError:
            earlier = []
        if isinstance(earlier, list):
            nonces.extend(str(n)[:100] for n in earlier[:20])
        for key, answer in (params.input_responses or {}).items():
            if isinstance(answer, types.ElicitResult):
                questions.answered(key, _allowed(answer))
                nonces.append(key)
        return cls(ctx=ctx, questions=questions, chat_id=chat_id, nonces=nonces)

    def state(self) -> str:
        """``request_state``: this call's questions, for its retry to name."""
        return json.dumps([*self.nonces, *self.asked])

    def requests(self) -> dict[str, Any]:
        """The questions to put to the person, by nonce."""
        return {
            nonce: types.ElicitRequest(
                params=types.ElicitRequestFormParams(
                    message=message, requested_schema=_ALLOW_SCHEMA
                )
            )
            for nonce, message in self.asked.items()
        }

    async def approve(self, request: ApprovalRequest) -> tuple[bool, str]:
        """Asked by the agent's call path where an effect needs approval."""
        capabilities = self.ctx.session.client_capabilities
        if capabilities is None or capabilities.elicitation is None:
            return False, (
                "this MCP client cannot ask the person (it does not support elicitation), "
                "and the call needs their approval"
            )
        message = _question(request)
        if len(message) > MAX_QUESTION_CHARS:
            return False, (
                f"what the call would do is {len(message):,} characters, more than the "
                f"{MAX_QUESTION_CHARS:,} a question shows in full; not asked, not run"
            )
        digest = _digest(self.chat_id, request)
        if not self.ctx.session.can_send_request:
            given = self.questions.take(self.nonces, digest)
            if given is not None:
                return given, ("approved" if given else "refused") + " by the person (MCP client)"
            self.asked[self.questions.ask(digest)] = message
            return False, "asked the person through the MCP client; not run until they answer"
        try:
            answer = await asyncio.wait_for(
                self.ctx.session.elicit_form(message, _ALLOW_SCHEMA, self.ctx.request_id),
                ANSWER_TIMEOUT_S,
            )
        except TimeoutError:
            return False, f"no answer through the MCP client within {ANSWER_TIMEOUT_S:.0f} s"
        except Exception as exc:
            return False, f"the approval could not be asked ({type(exc).__name__})"
        yes = _allowed(answer)
        return yes, ("approved" if yes else f"answered {answer.action}") + " (MCP client)"


def _question(request: ApprovalRequest) -> str:
    """The question in full: the tool, the effects, the code as text, what it reads."""
    preview = dict(request.preview)
    code = preview.pop("code", None)
    effects = ", ".join(request.effects) or "the call"
    said = [f"geomint wants to run {request.tool} ({effects}). Allow it?"]
    if isinstance(code, str):
        said.append(f"The code:\n{code}")
    said.append("Details: " + json.dumps(preview, ensure_ascii=False, default=str))
    return "\n\n".join(said)


def _digest(chat_id: str, request: ApprovalRequest) -> str:
    """What a question is about: a yes to it is a yes to exactly this."""
    about = {
        "chat": chat_id,
        "tool": request.tool,
        "arguments": request.args,
        "effects": list(request.effects),
        "preview": request.preview,
    }
    text = json.dumps(about, sort_keys=True, ensure_ascii=False, default=str)
    return hashlib.sha256(text.encode()).hexdigest()


def _allowed(answer: types.ElicitResult) -> bool:
    return answer.action == "accept" and (answer.content or {}).get("allow") is True
