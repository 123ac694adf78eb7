"""Turning this turn's ToolEntries into pydantic-ai tools, with the loop's rules.

- Arguments are validated against the entry's own schema here, so a bad call comes back as
  a structured error the model can read (``{"error", "hint"}``), never an exception.
- Every call, and how it ended, is appended to the chat's log (``ToolCalled``, then
  ``ToolReturned`` or ``ToolFailed``): the person is shown them from there. The result is
  cut to a size budget for the model once, here.
- After two failures of the same tool with the same arguments, the result tells the
  model to stop calling it and explain; a third identical call is not run at all.
- A call to a tool the model was not shown at that step (:mod:`geomint.agent._surface`)
  is not run: it is kept, with a result that says the tool is active now and to call it
  again. It does not count as a failure.
- Each call gets a context of its own. Calls that change the chat run one at a time
  (entry ids and the ledger are handed out in order); calls that only read it
  (``ToolEntry.changes_chat`` false) run beside them.
- Approvals guard effects (:mod:`geomint.tools.effects`): an effect the application
  requires approval for is asked for where it happens (``ToolContext.require``), whichever
  tool or monitor re-run reaches it. The first ask in a call covers every required effect
  the tool declares, so a person is asked once per call. A tool with
  ``requires_approval``, or named in ``require_approval`` while declaring no effects, is
  asked before each call. With no ``approve`` callback the answer is no (fail closed), and
  a run stopped while waiting refuses it. Both answers are in the log.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import secrets
from collections.abc import Awaitable, Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Final

from pydantic import BaseModel, ValidationError
from pydantic_ai import RunContext, Tool

from geomint import audit
from geomint.agent._surface import ToolSurface
from geomint.errors import ModelFacingError, UsageError
from geomint.state import (
    ApprovalAsked,
    ApprovalGiven,
    ApprovalRefused,
    EventBody,
    ToolCalled,
    ToolFailed,
    ToolReturned,
)
from geomint.tools import ToolContext, ToolEntry, ToolResult
from geomint.tools._digest import cut_to_budget
from geomint.tools.effects import EFFECTS, Effect, EffectRefusedError, effects_of
from geomint.tools.results import plain_json
from geomint.ui import approval_preview

__all__ = [
    "STOP_MESSAGE",
    "ApprovalAnswer",
    "ApprovalPolicy",
    "ApprovalRequest",
    "Approve",
    "TurnTools",
    "approval_policy",
    "build_tools",
]

_log = logging.getLogger(__name__)

STOP_MESSAGE: Final = (
    "This call has now failed twice with the same arguments. Stop calling {tool} with "
    "them: explain to the person what went wrong and what could be tried instead."
)
_MAX_FAILURES: Final = 2


@dataclass(frozen=True)
class ApprovalRequest:
    """A tool call waiting for a person, with what it would do.

    Attributes:
        approval_id: Unique in the chat; the answer names it.
        chat_id: The chat the run belongs to.
        run_id: The run that asked.
        tool: The tool's name.
        args: The call's arguments as plain JSON.
        preview: What can be known beforehand: the code a code tool would run, the
            entries it reads, what it would add to the map, and the effects asked for
            (``effects``: each with what it means).
        effects: The effects this answer covers (empty: the whole call, for a tool
            that asks before every call).
    """

    approval_id: str
    chat_id: str
    run_id: str
    tool: str
    args: dict[str, Any]
    preview: dict[str, Any]
    effects: tuple[Effect, ...] = ()


#: What an approver answers: ``(approved, reason)``, or ``(approved, reason, reply)`` where
#: the request asked the person's page for something (``effects`` holding ``location``:
#: ``{"lon", "lat", "accuracy_m"}`` read from the device).
ApprovalAnswer = tuple[bool, str] | tuple[bool, str, Mapping[str, Any]]
#: Asks a person about a tool call and returns an :data:`ApprovalAnswer`.
Approve = Callable[[ApprovalRequest], Awaitable[ApprovalAnswer]]


@dataclass(frozen=True)
class ApprovalPolicy:
    """What needs a person's approval.

    Attributes:
        effects: Effects asked for wherever they happen.
        tools: Tools asked for before every call (those naming no effects).
    """

    effects: frozenset[Effect] = frozenset()
    tools: frozenset[str] = frozenset()


def approval_policy(names: Iterable[str], registry: Mapping[str, ToolEntry[Any]]) -> ApprovalPolicy:
    """The policy ``require_approval`` names: effects, or tools standing for theirs.

    A tool that declares no effects still needs approval before each call when named,
    so naming it never silently asks nothing.

    Raises:
        UsageError: A name is neither an effect nor a tool of ``registry``.
    """
    declared = {name: spec.effects for name, spec in registry.items()}
    names = tuple(names)
    try:
        effects = effects_of(names, declared)
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    tools = frozenset(n for n in names if n in declared and n not in EFFECTS and not declared[n])
    return ApprovalPolicy(effects=effects, tools=tools)


@dataclass
class TurnTools:
    """Bookkeeping shared by every tool call of one run.

    Attributes:
        context: The run's context; each call gets its own copy (:meth:`ToolContext.for_call`).
        budget: The size budget of a result the model reads.
        before_call: Called before a call is recorded (the answer's text so far is kept
            first, so the log has text and tool calls in the order they came).
        lock: Held by calls that change the chat, one at a time; reads run beside them.
        surface: Which tools the model is shown at each step; a call to one it was not
            shown is answered from here, not run. None: every tool is shown.
    """

    context: ToolContext
    budget: int
    on_tool_execute: Callable[[str, dict[str, Any], dict[str, Any]], Any] | None = None
    approve: Approve | None = None
    policy: ApprovalPolicy = field(default_factory=ApprovalPolicy)
    before_call: Callable[[], None] | None = None
    failures: dict[tuple[str, str], int] = field(default_factory=dict)
    lock: asyncio.Lock = field(default_factory=asyncio.Lock)
    surface: ToolSurface | None = None


def build_tools(
    active: Mapping[str, ToolEntry[Any]],
    turn: TurnTools,
    scopes: Mapping[str, Any],
) -> list[Tool[Any]]:
    """One pydantic-ai tool per active entry, its schema taken from the entry."""
    return [
        Tool.from_schema(
            function=_runner(name, entry, turn, scopes.get(name)),
            name=name,
            description=entry.description,
            json_schema=entry.input_schema.model_json_schema(),
            takes_ctx=True,
        )
        for name, entry in active.items()
    ]


def _runner(
    name: str, entry: ToolEntry[Any], turn: TurnTools, scope: Any
) -> Callable[..., Awaitable[str]]:
    async def run(run_ctx: RunContext[Any], **arguments: Any) -> str:
        call_id = run_ctx.tool_call_id or f"call-{secrets.token_urlsafe(6)}"
        return await run_tool_call(name, entry, turn, scope, call_id, arguments)

    return run


async def run_tool_call(
    name: str,
    entry: ToolEntry[Any],
    turn: TurnTools,
    scope: Any,
    call_id: str,
    arguments: dict[str, Any],
) -> str:
    """One tool call as the agent makes it: recorded, approved where the policy asks,
    run, and ended in the log; returns what the model reads (JSON text).

    The model's tool loop calls it through :func:`build_tools`; an MCP client's call
    comes here too (:meth:`geomint.agent.MapAgent.call_tool`), so both are one path.
    """
    scope_data = scope.model_dump() if isinstance(scope, BaseModel) else scope
    ctx = turn.context.for_call(scope=scope_data, call_id=call_id)
    if turn.before_call is not None:
        turn.before_call()
    safe = plain_json(arguments)
    ctx.append([ToolCalled(call_id=call_id, tool=name, arguments=safe)])
    if turn.surface is not None and not turn.surface.was_shown(name):
        return _finish(turn, ctx, name, arguments, turn.surface.not_shown(name), failed=True)
    key = (name, json.dumps(arguments, sort_keys=True, default=str))
    if turn.failures.get(key, 0) >= _MAX_FAILURES:
        model: dict[str, Any] = {"error": STOP_MESSAGE.format(tool=name), "not_run": True}
        return _finish(turn, ctx, name, arguments, model, failed=True)
    lock = turn.lock if entry.changes_chat else contextlib.nullcontext()
    async with lock:
        if entry.changes_chat:
            # Read the chat afresh once it is this call's turn: a call made beside it in
            # the same step may have written an entry or minted a figure meanwhile, and
            # ids are handed out from what the context last read.
            ctx.refresh()
        guard = _EffectGuard(turn, ctx, name, entry, arguments)
        ctx.authorize = guard.authorize
        refusal = None
        if entry.requires_approval or name in turn.policy.tools:
            refusal, _ = await _ask(turn, ctx, name, arguments, ())
            guard.approved |= entry.effects
        if refusal is not None:
            model, failed = refusal.as_result(), True
        else:
            model, failed = await _execute(name, entry, arguments, ctx)
    if failed:
        turn.failures[key] = turn.failures.get(key, 0) + 1
        if turn.failures[key] >= _MAX_FAILURES:
            model = {**model, "stop": STOP_MESSAGE.format(tool=name)}
    budget = max(turn.budget, entry.result_chars or 0)
    return _finish(turn, ctx, name, arguments, cut_to_budget(model, budget), failed=failed)


@dataclass
class _EffectGuard:
    """One call's ``ToolContext.authorize``: asks for required effects where they happen."""

    turn: TurnTools
    ctx: ToolContext
    name: str
    entry: ToolEntry[Any]
    arguments: dict[str, Any]
    approved: set[Effect] = field(default_factory=set)

    async def authorize(
        self, effect: Effect, about: dict[str, Any], *, always: bool = False, again: bool = False
    ) -> Mapping[str, Any] | None:
        required = self.turn.policy.effects
        if effect not in required and not always:
            return None
        rerun = self.ctx.rerunning
        # ``again``: a second look at what an approved call turned into (map code: the
        # diff, after its intent): a yes to the intent is no yes to a diff nobody has seen.
        if effect in self.approved and not rerun and not again:
            return None
        # A re-run is its own effect: what the call was approved for does not cover it.
        wanted = (effect,) if rerun else tuple(sorted({effect} | (self.entry.effects & required)))
        refusal, reply = await _ask(
            self.turn, self.ctx, self.name, self.arguments, wanted, about, rerun=rerun
        )
        if refusal is not None:
            raise refusal
        if not rerun:
            self.approved.update(wanted)
        return reply


async def _ask(
    turn: TurnTools,
    ctx: ToolContext,
    name: str,
    arguments: dict[str, Any],
    effects: tuple[Effect, ...],
    about: Mapping[str, Any] | None = None,
    *,
    rerun: bool = False,
) -> tuple[EffectRefusedError | None, Mapping[str, Any] | None]:
    """Ask for approval; return the refusal the model reads (None to go ahead), and what
    the person's page sent back with a yes, if anything."""
    # Unguessable: whoever can name a waiting approval can answer it.
    approval_id = f"{ctx.run_id}-{secrets.token_urlsafe(9)}"
    safe = plain_json(arguments)
    detail = plain_json({**(about or {}), **({"rerun": True} if rerun else {})})
    preview = approval_preview(name, safe, ctx.workspace.entries, effects=effects, about=detail)
    request = ApprovalRequest(
        approval_id=approval_id,
        chat_id=ctx.chat_id,
        run_id=ctx.run_id,
        tool=name,
        args=safe,
        preview=preview,
        effects=effects,
    )
    ctx.append(
        [
            ApprovalAsked(
                approval_id=approval_id, tool=name, arguments=safe, effects=effects, about=detail
            )
        ]
    )
    reply: Mapping[str, Any] | None = None
    if turn.approve is None:
        approved, reason = (
            False,
            (
                "no web page is open to read the device's location from (a terminal chat or "
                "a program)"
                if "location" in effects
                else "no one can approve tool calls in this session"
            ),
        )
    else:
        try:
            answer = await turn.approve(request)
            if len(answer) == 3:
                approved, reason, reply = answer
            else:
                approved, reason = answer
        except asyncio.CancelledError:
            # The run was stopped while a person was deciding: the call never ran.
            ctx.append([ApprovalRefused(approval_id=approval_id, reason="the run was stopped")])
            raise
        except Exception as exc:  # a failing approver is a refusal
            approved, reason = False, f"the approval could not be asked ({type(exc).__name__})"
    if approved:
        ctx.append([ApprovalGiven(approval_id=approval_id)])
        return None, reply
    ctx.append([ApprovalRefused(approval_id=approval_id, reason=reason[:1_000])])
    audit.record("approval_refused", tool=name, effects=",".join(effects) or "the call")
    because = f", because it {' and '.join(EFFECTS[e] for e in effects)}," if effects else ""
    return EffectRefusedError(
        f"{name} needs a person's approval{because} and was refused: {reason}",
        hint="tell the person what you wanted to do and why; do not retry it unasked, "
        "through this tool or another",
    ), None


async def _execute(
    name: str, entry: ToolEntry[Any], arguments: dict[str, Any], ctx: ToolContext
) -> tuple[dict[str, Any], bool]:
    try:
        parsed = entry.input_schema.model_validate(arguments)
    except ValidationError as exc:
        problems = "; ".join(
            f"{'.'.join(map(str, e['loc'])) or 'arguments'}: {e['msg']}" for e in exc.errors()
        )
        return (
            {
                "error": f"invalid arguments for {name}: {problems}"[:2_000],
                "hint": "fix the arguments to match the tool's schema and call it again",
            },
            True,
        )
    try:
        result = await entry.execute(parsed, ctx)
    except ModelFacingError as exc:  # a ToolError among them, with its hint
        return exc.as_result(), True
    except Exception as exc:
        _log.exception("tool %s failed", name)
        return (
            {
                "error": f"{name} failed unexpectedly ({type(exc).__name__}: {str(exc)[:300]})",
                "hint": "this is a fault in the tool, not in your call; try another way",
            },
            True,
        )
    if isinstance(result, ToolResult):
        return result.model, result.failed
    if isinstance(result, dict):
        return result, "error" in result
    return {"result": result}, False


def _finish(
    turn: TurnTools,
    ctx: ToolContext,
    name: str,
    arguments: dict[str, Any],
    model: dict[str, Any],
    *,
    failed: bool,
) -> str:
    """Keep how the call ended (the person is shown it from the log) and return what the
    model reads."""
    call_id = ctx.call_id or ""
    try:
        result = plain_json(model)
        if failed:
            error = str(model.get("error", ""))[:2_000]
            safe = plain_json(arguments)
            ended: EventBody = ToolFailed(
                tool=name, error=error, arguments=safe, call_id=call_id, result=result
            )
        else:
            ended = ToolReturned(call_id=call_id, tool=name, result=result)
        ctx.append([ended])
    except Exception:
        _log.exception("could not record how %s ended", name)
    if turn.on_tool_execute is not None:
        try:
            turn.on_tool_execute(name, arguments, model)
        except Exception:
            _log.exception("on_tool_execute raised")
    return json.dumps(model, ensure_ascii=False, separators=(",", ":"), default=str)
