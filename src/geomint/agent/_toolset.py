"""Turning this turn's ToolEntries into pydantic-ai tools, with the loop's rules.

- Arguments are validated against the entry's own schema here, so a bad call comes back as
  a structured error the model can read (``{"error", "hint"}``), never an exception.
- Every result is cut to a size budget for the model; the full data rides along as the
  return's metadata for the UI.
- After two failures of the same tool with the same arguments, the result tells the
  model to stop calling it and explain; a third identical call is not run at all.
- Calls that change the chat run one at a time (entry ids and the ledger are handed out
  in order), while the model may still ask for several in one step.
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
import json
import logging
import secrets
from collections.abc import Awaitable, Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Final

from pydantic import BaseModel, ValidationError
from pydantic_ai import RunContext, Tool, ToolReturn

from geomint import audit
from geomint.agent.events import MapEvent
from geomint.errors import ModelFacingError, UsageError
from geomint.state import ApprovalAsked, ApprovalGiven, ApprovalRefused, Entry, ToolFailed
from geomint.tools import ToolBuilder, ToolContext, ToolEntry, ToolError, ToolResult
from geomint.tools._digest import cut_to_budget
from geomint.tools.effects import EFFECTS, Effect, EffectRefusedError, effects_of
from geomint.tools.registry import ToolSpec
from geomint.tools.results import plain_json

__all__ = [
    "STOP_MESSAGE",
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


#: Asks a person about a tool call and returns ``(approved, reason)``.
Approve = Callable[[ApprovalRequest], Awaitable[tuple[bool, str]]]


@dataclass(frozen=True)
class ApprovalPolicy:
    """What needs a person's approval.

    Attributes:
        effects: Effects asked for wherever they happen.
        tools: Tools asked for before every call (those naming no effects).
    """

    effects: frozenset[Effect] = frozenset()
    tools: frozenset[str] = frozenset()


def approval_policy(names: Iterable[str], registry: Mapping[str, ToolSpec]) -> ApprovalPolicy:
    """The policy ``require_approval`` names: effects, or tools standing for theirs.

    A tool that declares no effects still needs approval before each call when named,
    so naming it never silently asks nothing.

    Raises:
        UsageError: A name is neither an effect nor a tool of ``registry``.
    """
    declared = {name: _entry(spec).effects for name, spec in registry.items()}
    names = tuple(names)
    try:
        effects = effects_of(names, declared)
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    tools = frozenset(n for n in names if n in declared and n not in EFFECTS and not declared[n])
    return ApprovalPolicy(effects=effects, tools=tools)


def _entry(spec: ToolSpec) -> ToolEntry:
    return spec.entry() if isinstance(spec, ToolBuilder) else spec


@dataclass
class TurnTools:
    """Bookkeeping shared by every tool call of one run."""

    context: ToolContext
    budget: int
    on_tool_execute: Callable[[str, dict[str, Any], dict[str, Any]], Any] | None = None
    approve: Approve | None = None
    policy: ApprovalPolicy = field(default_factory=ApprovalPolicy)
    failures: dict[tuple[str, str], int] = field(default_factory=dict)
    lock: asyncio.Lock = field(default_factory=asyncio.Lock)
    calls: list[dict[str, Any]] = field(default_factory=list)


def build_tools(
    active: Mapping[str, ToolEntry],
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
    name: str, entry: ToolEntry, turn: TurnTools, scope: Any
) -> Callable[..., Awaitable[ToolReturn]]:
    async def run(run_ctx: RunContext[Any], **arguments: Any) -> ToolReturn:
        key = (name, json.dumps(arguments, sort_keys=True, default=str))
        if turn.failures.get(key, 0) >= _MAX_FAILURES:
            model = {"error": STOP_MESSAGE.format(tool=name), "not_run": True}
            return _finish(turn, name, arguments, model, None, failed=True)

        async def emit(kind: str, payload: dict[str, Any]) -> None:
            await run_ctx.emit(MapEvent(kind=kind, payload=payload))

        async with turn.lock:
            ctx = turn.context
            ctx.emit = emit
            ctx.scope = scope.model_dump() if isinstance(scope, BaseModel) else scope
            guard = _EffectGuard(turn, name, entry, arguments)
            ctx.authorize = guard.authorize
            try:
                refusal = None
                if entry.requires_approval or name in turn.policy.tools:
                    refusal = await _ask(turn, name, arguments, ())
                    guard.approved |= entry.effects
                if refusal is not None:
                    model, ui, failed = refusal.as_result(), None, True
                else:
                    model, ui, failed = await _execute(name, entry, arguments, ctx)
            finally:
                ctx.authorize = None
        if failed:
            turn.failures[key] = turn.failures.get(key, 0) + 1
            _record_failure(turn.context, name, arguments, model)
            if turn.failures[key] >= _MAX_FAILURES:
                model = {**model, "stop": STOP_MESSAGE.format(tool=name)}
        return _finish(turn, name, arguments, cut_to_budget(model, turn.budget), ui, failed=failed)

    return run


@dataclass
class _EffectGuard:
    """One call's ``ToolContext.authorize``: asks for required effects where they happen."""

    turn: TurnTools
    name: str
    entry: ToolEntry
    arguments: dict[str, Any]
    approved: set[Effect] = field(default_factory=set)

    async def authorize(self, effect: Effect, about: dict[str, Any]) -> None:
        required = self.turn.policy.effects
        if effect not in required:
            return
        rerun = self.turn.context.rerunning
        if effect in self.approved and not rerun:
            return
        # A re-run is its own effect: what the call was approved for does not cover it.
        wanted = (effect,) if rerun else tuple(sorted({effect} | (self.entry.effects & required)))
        refusal = await _ask(self.turn, self.name, self.arguments, wanted, about, rerun=rerun)
        if refusal is not None:
            raise refusal
        if not rerun:
            self.approved.update(wanted)


async def _ask(
    turn: TurnTools,
    name: str,
    arguments: dict[str, Any],
    effects: tuple[Effect, ...],
    about: Mapping[str, Any] | None = None,
    *,
    rerun: bool = False,
) -> EffectRefusedError | None:
    """Ask for approval; return the refusal the model reads, or None to go ahead."""
    ctx = turn.context
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
    await ctx.emit(
        "approval",
        {"approval_id": approval_id, "tool": name, "args": safe, "preview": request.preview},
    )
    if turn.approve is None:
        approved, reason = False, "no one can approve tool calls in this session"
    else:
        try:
            approved, reason = await turn.approve(request)
        except asyncio.CancelledError:
            # The run was stopped while a person was deciding: the call never ran.
            ctx.append([ApprovalRefused(approval_id=approval_id, reason="the run was stopped")])
            raise
        except Exception as exc:  # a failing approver is a refusal
            approved, reason = False, f"the approval could not be asked ({type(exc).__name__})"
    if approved:
        ctx.append([ApprovalGiven(approval_id=approval_id)])
        await ctx.emit("approval_answered", {"approval_id": approval_id, "approved": True})
        return None
    ctx.append([ApprovalRefused(approval_id=approval_id, reason=reason[:1_000])])
    await ctx.emit(
        "approval_answered", {"approval_id": approval_id, "approved": False, "reason": reason}
    )
    audit.record("approval_refused", tool=name, effects=",".join(effects) or "the call")
    because = f", because it {' and '.join(EFFECTS[e] for e in effects)}," if effects else ""
    return EffectRefusedError(
        f"{name} needs a person's approval{because} and was refused: {reason}",
        hint="tell the person what you wanted to do and why; do not retry it unasked, "
        "through this tool or another",
    )


def approval_preview(
    name: str,
    args: Mapping[str, Any],
    entries: Mapping[str, Entry],
    *,
    effects: Iterable[str] = (),
    about: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """What a call would do, as far as it can be known before it runs.

    For a code tool: the code, the entries it would read (with their labels), and what it
    would add to the map (a new entry, or a new version of the one it replaces). Any other
    tool shows its arguments only. ``entries`` are the chat's, for the labels. The
    ``effects`` asked for come each with what it means; ``about`` is what the effect would
    do (``{"label", "features"}`` of a layer, ``rerun`` for a monitor's re-run).
    """
    out: dict[str, Any] = {}
    shown = [{"effect": e, "means": EFFECTS[e]} for e in effects if e in EFFECTS]  # type: ignore[index]
    if shown:
        out["effects"] = shown
    if about:
        out["about"] = dict(about)
    code = args.get("code")
    if isinstance(code, str):
        out["code"] = code
    reads = [
        {"entry_id": e, "label": entries[e].latest.label}
        for key, ids in args.items()
        if key.endswith("_entry_ids") and isinstance(ids, list)
        for e in ids
        if isinstance(e, str) and e in entries
    ]
    if reads:
        out["reads"] = reads
    if name == "process_data":
        replaces = args.get("replace")
        label = args.get("label")
        out["adds"] = (
            f"a new version of {replaces}"
            if isinstance(replaces, str)
            else f"new map layers{f' labelled {label!r}' if isinstance(label, str) else ''}"
        )
    return out


async def _execute(
    name: str, entry: ToolEntry, arguments: dict[str, Any], ctx: ToolContext
) -> tuple[dict[str, Any], dict[str, Any] | None, bool]:
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
            None,
            True,
        )
    try:
        result = await entry.execute(parsed, ctx)
    except ToolError as exc:
        return exc.as_result(), None, True
    except ModelFacingError as exc:
        return {"error": str(exc)}, None, True
    except Exception as exc:
        _log.exception("tool %s failed", name)
        return (
            {
                "error": f"{name} failed unexpectedly ({type(exc).__name__}: {str(exc)[:300]})",
                "hint": "this is a fault in the tool, not in your call; try another way",
            },
            None,
            True,
        )
    if isinstance(result, ToolResult):
        return result.model, result.ui, result.failed
    if isinstance(result, dict):
        return result, None, "error" in result
    return {"result": result}, None, False


def _record_failure(ctx: ToolContext, name: str, arguments: dict[str, Any], model: Any) -> None:
    try:
        safe = plain_json(arguments)
        ctx.append(
            [ToolFailed(tool=name, error=str(model.get("error", ""))[:2_000], arguments=safe)]
        )
    except Exception:
        _log.exception("could not record the failure of %s", name)


def _finish(
    turn: TurnTools,
    name: str,
    arguments: dict[str, Any],
    model: Any,
    ui: dict[str, Any] | None,
    *,
    failed: bool,
) -> ToolReturn:
    turn.calls.append({"name": name, "args": arguments, "ok": not failed, "result": model})
    if turn.on_tool_execute is not None:
        try:
            turn.on_tool_execute(name, arguments, model)
        except Exception:
            _log.exception("on_tool_execute raised")
    text = json.dumps(model, ensure_ascii=False, separators=(",", ":"), default=str)
    return ToolReturn(return_value=text, metadata={"ok": not failed, "ui": ui, "model": model})
