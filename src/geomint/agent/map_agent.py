"""``create_map_agent`` and :class:`MapAgent`: the classifier, the tool loop and the chat's
log, put together.

One turn: the question is saved, the classifier picks the tools and scopes, the tool loop
runs (pydantic-ai underneath) until the model answers or ``max_steps`` model steps are
used, and the answer is kept block by block, whether the run finished, failed or was
stopped. What the run shows streams to the caller as typed parts (:mod:`geomint.ui`),
projected from what it stored; the model reads handles and digests.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
import secrets
from collections.abc import (
    AsyncIterable,
    AsyncIterator,
    Awaitable,
    Callable,
    Iterable,
    Mapping,
)
from dataclasses import dataclass, field, replace
from functools import cached_property
from pathlib import Path
from typing import Any, Final, Literal

from pydantic import JsonValue
from pydantic_ai import (
    Agent,
    AgentStreamEvent,
    FunctionToolCallEvent,
    FunctionToolResultEvent,
    PartDeltaEvent,
    PartStartEvent,
    RunContext,
    UsageLimitExceeded,
    UsageLimits,
)
from pydantic_ai.messages import (
    ModelMessage,
    ModelRequest,
    ModelResponse,
    TextPartDelta,
    ToolReturnPart,
    UserPromptPart,
)
from pydantic_ai.messages import TextPart as ModelText
from pydantic_ai.models import Model
from pydantic_ai.usage import RunUsage

from geomint.agent._prompt import INSTRUCTIONS, state_note
from geomint.agent._surface import USE_TOOLS, ShowSurface, ToolSurface
from geomint.agent._toolset import (
    ApprovalRequest,
    Approve,
    TurnTools,
    approval_policy,
    build_tools,
    run_tool_call,
)
from geomint.agent.classifier import Classification, classify
from geomint.errors import UsageError
from geomint.models import (
    ARGUMENT_RETRIES,
    ModelSpec,
    TurnBudget,
    describe_model,
    model_failure,
    refusal_message,
    resolve_model,
)
from geomint.provenance.citations import check_text, numbers_in
from geomint.providers import Providers, bundled, default_providers
from geomint.sandbox import RASTER_MEDIA_TYPE, Sandbox
from geomint.sources import SourceRegistry, Sources
from geomint.sources.dense import shared_minilm
from geomint.sources.replay import demo_connectors
from geomint.sources.service import LIVE_ENV
from geomint.state import (
    EventBody,
    MessageAdded,
    RunEnded,
    ToolCalled,
    ToolFailed,
    Workspace,
)
from geomint.store import Appended, Chats, NoSuchChatError, open_store
from geomint.tools import (
    DEFAULT_TOOLS,
    EntryCache,
    ToolContext,
    ToolEntry,
    ToolError,
    ToolSettings,
    help_entries,
    rerun_watchers,
    resolve_tools,
)
from geomint.tools.basemaps import MapStyle, style_catalogue
from geomint.tools.byod import upload_layer
from geomint.tools.results import plain_json
from geomint.ui import (
    ChartPart,
    ClassifiedPart,
    EntryPart,
    FigureCard,
    FigurePart,
    Part,
    ProgressPart,
    Projector,
    QuestionPart,
    RunEndedPart,
    RunStartedPart,
    TextDeltaPart,
    TextPart,
    ToolCallPart,
    ToolResultPart,
)

__all__ = ["ApprovalRequest", "MapAgent", "RunResult", "create_map_agent"]

_log = logging.getLogger(__name__)
_HISTORY_MESSAGES: Final = 40
_SANDBOX_KEYS: Final = frozenset(
    {"timeout_s", "memory_mb", "mode", "allow_fallback", "minimum_mode", "scratch_mb"}
)


@dataclass
class RunResult:
    """What one turn produced, folded from its parts.

    Attributes:
        chat_id: The chat.
        run_id: This turn.
        text: The answer as the model wrote it, figures cited by id (``{v3}``); possibly
            partial when ``stopped``.
        rendered: The answer as a person reads it: each cited figure as its value and
            unit, an unknown id marked (:attr:`text` until a block of it is kept).
        cited: Minted figures the answer cited.
        matched: Numbers the model typed that match a minted value as displayed.
        unminted: Numbers the model typed that match no minted value.
        tool_calls: Each call: ``name``, ``args``, ``ok``, and the ``result`` the model read.
        entries: Entry ids written this turn.
        figures: Figure cards presented this turn (minted values with their sources).
        charts: Chart configs produced this turn.
        errors: Why the run ended early, if it did.
        classification: What the classifier chose.
        steps: Model steps used (parallel tool calls share one).
        stopped: True when the run ended before the model answered.
        parts: Every part streamed, in order (:mod:`geomint.ui.parts`).
        requests: Requests to the chat's model that it answered (classifier and loop).
        input_tokens: Tokens they sent, as the model server reported them.
        output_tokens: Tokens of its answers, as it reported them.
    """

    chat_id: str
    run_id: str
    text: str = ""
    tool_calls: list[dict[str, Any]] = field(default_factory=list)
    entries: list[str] = field(default_factory=list)
    figures: list[FigureCard] = field(default_factory=list)
    charts: list[dict[str, Any]] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    classification: dict[str, Any] | None = None
    steps: int = 0
    stopped: bool = False
    parts: list[Part] = field(default_factory=list)
    rendered: str = ""
    cited: int = 0
    matched: int = 0
    unminted: int = 0
    requests: int = 0
    input_tokens: int = 0
    output_tokens: int = 0

    def add(self, part: Part) -> None:
        """Fold one streamed part into the result."""
        self.parts.append(part)
        match part:
            case TextDeltaPart():
                self.text += part.delta
            case TextPart():
                self.rendered += part.rendered
            case ToolCallPart():
                call = {"name": part.tool, "args": part.args, "ok": None, "result": None}
                self.tool_calls.append({"call_id": part.call_id, **call})
            case ToolResultPart():
                for call in reversed(self.tool_calls):
                    if call["call_id"] == part.call_id and call["ok"] is None:
                        call.update(ok=part.ok, result=part.result)
                        break
            case EntryPart():
                self.entries.append(part.entry_id)
            case FigurePart():
                self.figures.extend(part.figures)
            case ChartPart():
                self.charts.append(dict(part.config))
            case ClassifiedPart():
                self.classification = part.model_dump(mode="json", exclude={"type"})
            case RunEndedPart():
                self.steps = part.steps or 0
                self.stopped = part.stopped
                self.cited, self.matched = part.cited or 0, part.matched or 0
                self.unminted = part.unminted or 0
                self.requests = part.requests or 0
                self.input_tokens = part.input_tokens or 0
                self.output_tokens = part.output_tokens or 0
                if part.error:
                    self.errors.append(part.error)


class _RunStream:
    """One run's parts in the order they happened.

    Durable parts are projected from each append (the tools' and the agent's own);
    transient ones (text deltas, progress) are put in as they come. The answer's text is
    kept block by block: a block ends when a tool is called or the run ends, and is then
    appended as a message, so the log holds text and tool calls in the order they came.
    Each block is kept with its check against the chat's ledger (figures cited by id,
    numbers typed), which counts numbers the question or a call's arguments gave as
    quoted and numbers a tool's result gave as stated.
    """

    def __init__(self, chats: Chats, chat_id: str, run_id: str, start: Workspace) -> None:
        self.chats, self.chat_id, self.run_id = chats, chat_id, run_id
        self.queue: asyncio.Queue[Part | None] = asyncio.Queue()
        self.answer: list[str] = []
        self._projector = Projector(chats, start)
        self._workspace = start
        self._block: list[str] = []
        self._blocks = 0
        self._quoted: set[float] = set()
        self._stated: set[float] = set()
        self.cited = self.matched = self.unminted = 0
        #: What the turn's requests to the chat's model cost: the classifier's run and the
        #: tool loop's count into their own (pydantic-ai fills each in place, also when the
        #: run fails), so the loop's step limit counts its own steps only.
        self.classifier_usage = RunUsage()
        self.loop_usage = RunUsage()
        self.model_name: str | None = None
        #: False for the demo model: it spends no tokens, and the counts pydantic-ai
        #: estimates for a scripted model would read as a cost.
        self.counts_tokens = True
        #: Calls the model wrote that have no result yet, by id, with the tool's name and
        #: the arguments as written; and the ids of calls the log holds.
        self._written: dict[str, tuple[str, str | dict[str, Any] | None]] = {}
        self._logged: set[str] = set()
        #: The names of the turn's tools (set once the toolset is built).
        self.tools: frozenset[str] = frozenset()

    @property
    def workspace(self) -> Workspace:
        """The chat's state after the run's latest append."""
        return self._workspace

    def send(self, part: Part | None) -> None:
        self.queue.put_nowait(part)

    def append(self, bodies: list[EventBody]) -> None:
        self.on_append(self.chats.append_traced(self.chat_id, self.run_id, bodies))

    def on_append(self, appended: Appended) -> None:
        self._workspace = appended.workspace
        for part in self._projector.appended(appended):
            match part:
                case QuestionPart():
                    self._quoted |= numbers_in(part.text)
                case ToolCallPart():
                    self._quoted |= numbers_in(part.args)
                    if part.call_id is not None:
                        self._logged.add(part.call_id)
                case ToolResultPart():
                    self._stated |= numbers_in(part.result)
            self.send(part)

    def on_progress(
        self, tool: str, name: str | None, state: Literal["running", "done"], ms: int | None
    ) -> None:
        self.send(ProgressPart(tool=tool, name=name, state=state, ms=ms))

    def delta(self, text: str) -> None:
        if text:
            self._block.append(text)
            self.answer.append(text)
            self.send(TextDeltaPart(delta=text))

    def flush_text(self) -> None:
        """Keep the answer's block written so far (a no-op when there is none)."""
        block = _valid_text("".join(self._block))
        self._block = []
        if not block:
            return
        self._blocks += 1
        values = {v.id: v for v in self._workspace.values}
        checked = check_text(block, values, quoted=self._quoted, stated=self._stated)
        self.cited += checked.cited
        self.matched += checked.matched
        self.unminted += checked.unminted
        message = MessageAdded(
            message_id=f"{self.run_id}-t{self._blocks}",
            role="assistant",
            parts=(
                {"kind": "text", "text": block},
                {"kind": "checked", **checked.model_dump(mode="json")},
            ),
        )
        try:
            self.append([message])
        except Exception:
            _log.exception("could not keep the answer's text")

    def end(self, *, steps: int, stopped: bool, error: str | None) -> None:
        self.flush_text()
        # A call the model wrote that the run ended on before any tool ran (the unreadable
        # call past ARGUMENT_RETRIES, or a stop) is kept too, so the log shows every call.
        for call_id, (tool, written) in list(self._written.items()):
            self._keep_unrun(call_id, tool, written, "not run: the turn ended before it could be")
        self._written.clear()
        try:
            usage = self.classifier_usage + self.loop_usage
            ended = RunEnded(
                steps=steps,
                stopped=stopped,
                error=error,
                cited=self.cited,
                matched=self.matched,
                unminted=self.unminted,
                requests=usage.requests,
                input_tokens=usage.input_tokens if self.counts_tokens else None,
                output_tokens=usage.output_tokens if self.counts_tokens else None,
                model=self.model_name,
            )
            self.append([ended])
        except Exception:
            _log.exception("could not keep how the run ended")

    async def handle(self, _: RunContext[Any], events: AsyncIterable[AgentStreamEvent]) -> None:
        """pydantic-ai's event stream handler: the answer's text, as the model writes it,
        and the calls that never reached a tool."""
        async for event in events:
            if isinstance(event, PartStartEvent) and isinstance(event.part, ModelText):
                self.delta(event.part.content)
            elif isinstance(event, PartDeltaEvent) and isinstance(event.delta, TextPartDelta):
                self.delta(event.delta.content_delta)
            elif isinstance(event, FunctionToolCallEvent):
                call = event.part
                self._written[call.tool_call_id] = (call.tool_name, call.args)
            elif isinstance(event, FunctionToolResultEvent):
                part = event.part
                retry = part.retry if isinstance(part, ToolReturnPart) else None
                if retry is not None and retry.cause == "validation_error":
                    self.unrun(part)
                self._written.pop(part.tool_call_id, None)

    def unrun(self, told: ToolReturnPart) -> None:
        """Keep a call of one of the turn's tools that pydantic-ai sent back before the
        tool ran, because its arguments could not be read (not JSON; geomint's own tools
        check the rest and answer a bad call themselves). The person sees it as a failed
        call, with what the model was told; the model may write it again
        (``ARGUMENT_RETRIES`` times in a row). A call naming no tool is answered by
        pydantic-ai and not kept: its name could be anything the model wrote."""
        call_id = told.tool_call_id
        _, written = self._written.pop(call_id, (told.tool_name, None))
        problems = told.content if isinstance(told.content, list) else []
        said = "; ".join(str(p.get("msg", "")) for p in problems if isinstance(p, dict))
        error = (
            f"the arguments could not be read ({said or 'not a JSON object'}); "
            "the model was asked to write the call again"
        )
        self._keep_unrun(call_id, told.tool_name, written, error)

    def _keep_unrun(
        self, call_id: str, tool: str, written: str | dict[str, Any] | None, error: str
    ) -> None:
        if call_id in self._logged or tool not in self.tools:
            return
        self.flush_text()
        arguments = plain_json(_readable(written))
        try:
            self.append(
                [
                    ToolCalled(call_id=call_id, tool=tool, arguments=arguments),
                    ToolFailed(
                        call_id=call_id,
                        tool=tool,
                        error=error[:2_000],
                        arguments=arguments,
                        result=plain_json({"error": error}),
                    ),
                ]
            )
        except Exception:
            _log.exception("could not keep a call that reached no tool")


@dataclass(frozen=True, kw_only=True)
class ToolCallOutcome:
    """How :meth:`MapAgent.call_tool` went.

    Attributes:
        result: What the model would have read (the tool's digest, or its error).
        failed: The call failed or was refused (``result`` has an ``error``).
        run_id: The run it was recorded under in the chat's log.
        entries: Entries it wrote (a new entry or a new version).
        figures: Ids of the figures it minted.
    """

    result: Any
    failed: bool
    run_id: str
    entries: tuple[str, ...] = ()
    figures: tuple[str, ...] = ()


class MapAgent:
    """A map agent over one store and one sandbox. Build it with :func:`create_map_agent`."""

    def __init__(
        self,
        *,
        model: Model,
        registry: Mapping[str, ToolEntry[Any]],
        chats: Chats,
        sandbox: Sandbox,
        classifier: bool = True,
        max_steps: int = 20,
        settings: ToolSettings | None = None,
        on_classify: Callable[[dict[str, Any]], Any] | None = None,
        on_tool_execute: Callable[[str, dict[str, Any], dict[str, Any]], Any] | None = None,
        approve: Approve | None = None,
        require_approval: Iterable[str] = (),
        providers: Providers | None = None,
        owns_store: bool = True,
        codegen_model: Model | None = None,
        turn_budget: Mapping[str, int] | None = None,
        sources: Sources | None = None,
        discovery_model: Model | None = None,
    ) -> None:
        if max_steps < 1:
            raise UsageError(f"max_steps must be at least 1; got {max_steps}")
        if USE_TOOLS in registry:
            raise UsageError(
                f"{USE_TOOLS!r} is the agent's own tool (it activates tools the classifier "
                "did not pick); give your tool another name"
            )
        self.model = model
        #: The model that writes map code (``execute_map_code``): the chat's by default.
        self.codegen_model = codegen_model or model
        #: The model that shortlists a live catalogue search (``find_sources``): the chat's
        #: by default.
        self.discovery_model = discovery_model or model
        self.turn_budget = _turn_budget(turn_budget)
        served = providers or Providers()
        #: Tools of ``registry`` not offered, each with the capabilities no provider serves.
        self.not_offered: dict[str, list[str]] = {
            name: missing
            for name, entry in registry.items()
            if (missing := sorted(c for c in entry.needs if not served.serves(c)))
        }
        self.registry = {n: e for n, e in registry.items() if n not in self.not_offered}
        self.chats = chats
        self.sandbox = sandbox
        self.classifier = classifier
        self.max_steps = max_steps
        self.settings = settings or ToolSettings()
        self.on_classify = on_classify
        self.on_tool_execute = on_tool_execute
        self.approve = approve
        self.require_approval = frozenset(require_approval)
        self.approval_policy = approval_policy(self.require_approval, registry)
        self.providers = providers
        #: The open-data registry, spine and connectors (``find_sources``, ``fetch``).
        self.sources = sources
        self._owns_store = owns_store
        self._cache = EntryCache()
        self._chat_locks: dict[str, asyncio.Lock] = {}

    # -- what it is ----------------------------------------------------------------------

    @cached_property
    def loadable_files(self) -> tuple[tuple[str, str], ...]:
        """The bundled data files the model may load (when their folder is allowed), each
        with what it holds, so the model is told they exist rather than finding out."""
        allowed = {Path(d).resolve() for d in self.settings.byod_dirs}
        if bundled.DATA_DIR.resolve() not in allowed:
            return ()
        return tuple(
            (path.name, str(bundled.source(name)["title"]))
            for name, path in bundled.files().items()
            if path.suffix in (".geojson", ".csv")
        )

    @property
    def code_execution_mode(self) -> str:
        """The sandbox's mode: ``isolated``, ``restricted``, ``in-process`` (or
        ``not-started`` / ``unavailable``)."""
        return str(self.sandbox.mode)

    def ready(self, timeout_s: float = 60.0) -> str:
        """Wait until the sandbox has started (it starts in the background) and return its
        mode, so a banner can say which isolation the session has."""
        return str(self.sandbox.wait_started(timeout_s))

    @property
    def model_info(self) -> dict[str, Any]:
        """The model's name and provider, and whether it is the scripted demo model."""
        return dict(describe_model(self.model))

    def tools_for(self, classification: Classification | None) -> dict[str, ToolEntry[Any]]:
        """The entries the model is shown at a turn's first step: the picked tools, scoped
        where the classifier gave a scope, and ``use_tools`` (which activates the others)
        when the classifier left any out."""
        return self._surface(classification).shown_entries()

    def _surface(self, classification: Classification | None) -> ToolSurface:
        """Every tool offered, built for the turn (a tool the classifier did not pick is
        terse and unscoped, as without a classifier), and which of them are picked."""
        entries: dict[str, ToolEntry[Any]] = {}
        for name, entry in self.registry.items():
            scope = classification.scopes.get(name) if classification else None
            entries[name] = self._with_coverage(entry.for_scope(scope))
        picked = classification.active if classification else tuple(self.registry)
        return ToolSurface(entries=entries, picked=picked, not_offered=self.not_offered)

    def _with_coverage(self, entry: ToolEntry[Any]) -> ToolEntry[Any]:
        """A provider tool's entry with what its providers cover, so the model knows the
        limits before it asks rather than learning them from misses."""
        if not entry.needs or self.providers is None:
            return entry
        said = []
        for capability in sorted(entry.needs):
            field = "traffic" if capability == "traffic_analytics" else capability
            provider = getattr(self.providers, field, None)
            coverage = getattr(provider, "coverage", None)
            if isinstance(coverage, str) and coverage:
                said.append(f"{getattr(provider, 'name', 'the provider')}: {coverage}")
        if not said:
            return entry
        return replace(entry, description=f"{entry.description}\nCoverage: {'; '.join(said)}.")

    # -- running ---------------------------------------------------------------------------

    async def run(
        self, prompt: str, *, chat_id: str | None = None, approve: Approve | None = None
    ) -> RunResult:
        """Answer one message in a chat (created when ``chat_id`` is new or None)."""
        result: RunResult | None = None
        async for part in self.run_stream(prompt, chat_id=chat_id, approve=approve):
            if result is None:
                assert isinstance(part, RunStartedPart)
                result = RunResult(chat_id=part.chat_id, run_id=part.run_id)
            result.add(part)
        assert result is not None
        return result

    async def run_stream(
        self, prompt: str, *, chat_id: str | None = None, approve: Approve | None = None
    ) -> AsyncIterator[Part]:
        """Answer one message, streaming its parts as they happen (:mod:`geomint.ui.parts`).

        The first part is :class:`~geomint.ui.RunStartedPart`, the last a
        :class:`~geomint.ui.RunEndedPart`. Every part but text deltas, progress, the start
        and the classification is projected from an event the run stored, and reads back
        the same (:func:`geomint.ui.chat_parts`). Closing the stream early stops the run
        and keeps what was said so far. ``approve`` answers this run's approval requests
        instead of the agent's own callback (a web app asks the person in the browser
        that sent the message).
        """
        if not isinstance(prompt, str) or not prompt.strip():
            raise UsageError("the message is empty; ask a question")
        prompt = _valid_text(prompt)
        chat_id = self.open_chat(chat_id)
        run_id = "r-" + secrets.token_urlsafe(9)
        lock = self._chat_locks.setdefault(chat_id, asyncio.Lock())
        async with lock:
            async for part in self._turn(prompt, chat_id, run_id, approve or self.approve):
                yield part

    async def _turn(
        self, prompt: str, chat_id: str, run_id: str, approve: Approve | None
    ) -> AsyncIterator[Part]:
        history = self._history(chat_id)
        run = _RunStream(self.chats, chat_id, run_id, self.chats.open(chat_id))
        run.model_name = self.model.model_name
        run.counts_tokens = not describe_model(self.model)["demo"]
        yield RunStartedPart(chat_id=chat_id, run_id=run_id)
        question: dict[str, JsonValue] = {"kind": "text", "text": prompt}
        run.append([MessageAdded(message_id=f"{run_id}-q", role="user", parts=(question,))])
        classification: Classification | None = None
        try:
            while not run.queue.empty():
                part = run.queue.get_nowait()
                if part is not None:
                    yield part
            if self.classifier:
                classification = await classify(
                    self.model, self.registry, history, prompt, usage=run.classifier_usage
                )
                chosen = classification.as_dict()
                yield ClassifiedPart.model_validate(chosen)
                if self.on_classify is not None:
                    try:
                        self.on_classify(chosen)
                    except Exception:
                        _log.exception("on_classify raised")
        except (asyncio.CancelledError, GeneratorExit):
            # Stopped before the tool loop began (while the classifier chose): the log
            # still says the run ended, stopped, as it does for a run stopped later.
            run.end(steps=0, stopped=True, error=None)
            raise
        context = self.context(
            chat_id, run_id, on_append=run.on_append, on_progress=run.on_progress
        )
        surface = self._surface(classification)
        run.tools = frozenset(surface.all_entries())
        turn = self._turn_tools(context, approve, before_call=run.flush_text, surface=surface)
        scopes = classification.scopes if classification else {}
        agent: Agent[None, str] = Agent(
            self.model,
            # The note on what the chat holds is written for each model request, so it is
            # current at every step of the turn (a fetch in step one is listed in step two).
            instructions=[INSTRUCTIONS, lambda: state_note(run.workspace, self.loadable_files)],
            # Every tool can be called; each step shows the model the picked ones and those
            # it activated (a tool the classifier left out stays within reach).
            tools=build_tools(surface.all_entries(), turn, scopes),
            capabilities=[ShowSurface(surface)],
            # A call whose arguments cannot be read (not JSON) is sent back to the model
            # with the parse error; this many in a row, and the turn ends saying so.
            retries={"tools": ARGUMENT_RETRIES},
            name="geomint",
        )
        task = asyncio.create_task(self._drive(agent, prompt, history, run))
        try:
            while (part := await run.queue.get()) is not None:
                yield part
            await task
        finally:
            if not task.done():
                # The stream was closed early: stop the run; it keeps what it said.
                task.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await task

    async def _drive(
        self,
        agent: Agent[None, str],
        prompt: str,
        history: list[tuple[str, str]],
        run: _RunStream,
    ) -> None:
        """Run the tool loop to its end, keeping how it ended; the stream then closes."""
        try:
            steps, stopped, error = await self._loop(agent, prompt, history, run)
            run.end(steps=steps, stopped=stopped, error=error)
        except asyncio.CancelledError:
            run.end(steps=0, stopped=True, error=None)
            raise
        finally:
            run.send(None)

    async def _loop(
        self,
        agent: Agent[None, str],
        prompt: str,
        history: list[tuple[str, str]],
        run: _RunStream,
    ) -> tuple[int, bool, str | None]:
        """``(steps, stopped, error)``: how the tool loop ended."""
        try:
            result = await agent.run(
                prompt,
                message_history=_model_messages(history),
                usage_limits=UsageLimits(request_limit=self.max_steps),
                event_stream_handler=run.handle,
                usage=run.loop_usage,
            )
        except UsageLimitExceeded:
            return (
                self.max_steps,
                True,
                f"stopped after {self.max_steps} model steps (max_steps) before an answer; "
                "ask again to continue, or raise max_steps",
            )
        except Exception as exc:
            _log.exception("the run failed")
            return run.loop_usage.requests, True, model_failure(exc)
        final = result.output
        if isinstance(final, str) and final and not run.answer:
            run.delta(final)
        response = result.response
        if response.finish_reason == "content_filter":
            # A refusal after some text (Anthropic may begin an answer, then refuse): the
            # text is kept, and the turn says that it was refused rather than answered.
            details = response.provider_details or {}
            refusal = details.get("refusal")
            said = refusal if isinstance(refusal, str) else None
            return result.usage.requests, True, refusal_message(said)
        return result.usage.requests, False, None

    async def upload(
        self,
        data: bytes,
        name: str,
        *,
        chat_id: str,
        start_chat: Callable[[str], Awaitable[None]] | None = None,
    ) -> dict[str, Any]:
        """Add a file the person dropped into the chat as a byod entry (through intake), or
        a GeoTIFF as a rasters entry.

        The upload is a message of the chat (so a reopened chat shows it) and its layer is
        an entry the model can read on the next turn. The chat is stored, when new, only
        once the file has been read: by ``start_chat(chat_id)`` when given (the web app
        stores it with what a new chat starts with), else empty.

        Returns:
            ``name``, ``entry_id``, ``kind``, ``version``, ``label``, ``format``,
            ``features``, ``warnings`` and, for features, ``geojson`` (a raster has none).

        Raises:
            UsageError: The file was refused; the reason says why, and nothing was stored.
        """
        run_id = "u-" + secrets.token_urlsafe(9)
        # The context opens the chat's state when it first writes, after start().
        context = self.context(chat_id, run_id)

        async def start() -> None:
            if start_chat is None:
                self.open_chat(chat_id)
            else:
                await start_chat(chat_id)

        async with self._chat_locks.setdefault(chat_id, asyncio.Lock()):
            try:
                added = await upload_layer(context, data, name, before_write=start)
            except ToolError as exc:
                raise UsageError(exc.message) from None
            part = {"kind": "upload", **added}
            self.chats.append(
                chat_id,
                run_id,
                [MessageAdded(message_id=f"{run_id}-q", role="user", parts=(plain_json(part),))],
            )
        written = context.entry_version(str(added["entry_id"]))
        added = {**added, "kind": written.kind, "version": written.version}
        if written.blob.media_type == RASTER_MEDIA_TYPE:
            return added  # a grid, not GeoJSON: the page draws its picture
        return {**added, "geojson": context.entry_data(written.entry_id)}

    async def call_tool(
        self,
        chat_id: str,
        name: str,
        arguments: dict[str, Any],
        *,
        approve: Approve | None = None,
    ) -> ToolCallOutcome:
        """Call one tool in a chat as the model would, without a model: for a client that
        chooses tools itself (an MCP client, a program).

        The call is the agent's own path (:func:`geomint.agent._toolset.run_tool_call`):
        recorded in the chat's log as a run of one call, refused unless ``approve`` says
        yes where the approval policy asks, its arguments checked against the tool's
        schema, and what it returns is the digest the model would read.

        Raises:
            UsageError: No tool of that name.
        """
        entry = self.registry.get(name)
        if entry is None:
            raise UsageError(f"no tool {name!r}; the tools are {', '.join(sorted(self.registry))}")
        run_id = "c-" + secrets.token_urlsafe(9)
        call_id = f"{run_id}-1"
        async with self._chat_locks.setdefault(chat_id, asyncio.Lock()):
            try:
                before = self.chats.open(chat_id)
            except NoSuchChatError:
                before = self.chats.create(chat_id)
            context = self.context(chat_id, run_id)
            turn = self._turn_tools(context, approve)
            text = await run_tool_call(
                name, self._with_coverage(entry), turn, None, call_id, dict(arguments)
            )
            after = self.chats.append(chat_id, run_id, [RunEnded(steps=1)])
        result = json.loads(text)
        known = {v.id for v in before.values}
        return ToolCallOutcome(
            result=result,
            failed=isinstance(result, dict) and "error" in result,
            run_id=run_id,
            entries=tuple(
                entry_id
                for entry_id, written in after.entries.items()
                if entry_id not in before.entries
                or before.entries[entry_id].latest.version != written.latest.version
            ),
            figures=tuple(v.id for v in after.values if v.id not in known),
        )

    def tool_entries(self) -> dict[str, ToolEntry[Any]]:
        """Every tool as the model is offered it (a provider tool's coverage added)."""
        return {name: self._with_coverage(entry) for name, entry in self.registry.items()}

    # -- the chat ------------------------------------------------------------------------

    def is_busy(self, chat_id: str) -> bool:
        """Whether a run or an upload is under way in the chat (one at a time per chat)."""
        lock = self._chat_locks.get(chat_id)
        return lock is not None and lock.locked()

    def context(self, chat_id: str, run_id: str, **options: Any) -> ToolContext:
        """What tools work with in one chat and run: the store, the sandbox, the
        providers, the settings (``options`` set other ToolContext fields, e.g. ``emit``)."""
        return ToolContext(
            chats=self.chats,
            chat_id=chat_id,
            run_id=run_id,
            sandbox=self.sandbox,
            settings=self.settings,
            cache=self._cache,
            registry_help=self._help,
            after_entry_written=_after_write,
            providers=self.providers,
            sources=self.sources,
            codegen_model=self.codegen_model,
            discovery_model=self.discovery_model,
            # A budget of its own per run: the cap is per turn. Without caps it still
            # counts what second model calls (map code, discovery) spent in the turn.
            budget=TurnBudget(
                max_tokens=(self.turn_budget or {}).get("max_tokens"),
                max_requests=(self.turn_budget or {}).get("max_requests"),
            ),
            **options,
        )

    def _turn_tools(
        self,
        context: ToolContext,
        approve: Approve | None,
        *,
        before_call: Callable[[], None] | None = None,
        surface: ToolSurface | None = None,
    ) -> TurnTools:
        """How one turn's (or one direct call's) tools run: this agent's result budget,
        hook and approval policy, with `approve` asking the person."""
        return TurnTools(
            context=context,
            budget=self.settings.digest_chars,
            on_tool_execute=self.on_tool_execute,
            approve=approve,
            policy=self.approval_policy,
            before_call=before_call,
            surface=surface,
        )

    def open_chat(self, chat_id: str | None) -> str:
        """Return the chat's id, creating the chat when it is new (or ``chat_id`` is None)."""
        if chat_id is None:
            return self.chats.create().chat_id
        try:
            self.chats.open(chat_id)
        except NoSuchChatError:
            self.chats.create(chat_id)
        return chat_id

    def _history(self, chat_id: str) -> list[tuple[str, str]]:
        """The chat's earlier messages as ``(role, text)``, oldest first (an answer kept
        block by block is one message again)."""
        messages: list[tuple[str, str]] = []
        last_run = None
        for event in self.chats.trace(chat_id):
            body = event.body
            if not isinstance(body, MessageAdded) or body.role not in ("user", "assistant"):
                continue
            text = body.text()
            if body.role == "assistant" and messages and last_run == event.run_id:
                role, before = messages[-1]
                if role == "assistant":
                    messages[-1] = (role, f"{before}\n\n{text}" if before else text)
                    continue
            messages.append((body.role, text))
            last_run = event.run_id
        return messages[-_HISTORY_MESSAGES:]

    def _help(self, tag: str | None) -> list[dict[str, Any]]:
        return help_entries(self.registry, tag)

    def close(self) -> None:
        """Stop the sandbox and close the store (when the agent opened it)."""
        self.sandbox.close()
        if self._owns_store:
            self.chats.store.close()

    async def __aenter__(self) -> MapAgent:
        return self

    async def __aexit__(self, *_: object) -> None:
        self.close()


def _readable(written: str | dict[str, Any] | None) -> dict[str, Any]:
    """A call's arguments as the log keeps them: the object when they are one, else the
    text as the model wrote it (cut), under ``as_written``."""
    if isinstance(written, dict):
        return written
    if not written:
        return {}
    try:
        parsed = json.loads(written)
    except ValueError:
        parsed = None
    return parsed if isinstance(parsed, dict) else {"as_written": written[:2_000]}


def _valid_text(text: str) -> str:
    """Text as it can be stored: a lone surrogate (from a model or a client) becomes '?'."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return text.encode("utf-8", "replace").decode("utf-8")
    return text


async def _after_write(ctx: ToolContext, written: Any) -> None:
    await rerun_watchers(ctx, written)


def _model_messages(history: list[tuple[str, str]]) -> list[ModelMessage]:
    """Earlier turns as the model sees them: questions and answers, no tool results (the
    recall tools read those back)."""
    messages: list[ModelMessage] = []
    for role, text in history:
        if not text.strip():
            continue
        if role == "user":
            messages.append(ModelRequest(parts=[UserPromptPart(content=text)]))
        else:
            messages.append(ModelResponse(parts=[ModelText(content=text)]))
    return messages


def create_map_agent(
    model: ModelSpec = None,
    *,
    tools: Mapping[str, ToolEntry[Any] | bool] | None = None,
    include_default_tools: bool = True,
    classifier: bool = True,
    store: str | Path | Chats | None = None,
    code_execution: Mapping[str, Any] | None = None,
    max_steps: int = 20,
    byod_dirs: tuple[str | Path, ...] | None = None,
    allowed_networks: tuple[str, ...] = (),
    on_classify: Callable[[dict[str, Any]], Any] | None = None,
    on_tool_execute: Callable[[str, dict[str, Any], dict[str, Any]], Any] | None = None,
    approve: Approve | None = None,
    require_approval: Iterable[str] = (),
    providers: Providers | None = None,
    map_styles: Iterable[MapStyle] = (),
    codegen_model: ModelSpec = None,
    turn_budget: Mapping[str, int] | None = None,
    sources: Sources | None = None,
    discovery_model: ModelSpec = None,
) -> MapAgent:
    """Build a map agent.

    Example:
        >>> agent = create_map_agent("demo", store="memory:",
        ...                          code_execution={"mode": "in-process"})
        >>> agent.model_info["demo"], "analyse_data" in agent.registry
        (True, True)
        >>> agent.close()

    Args:
        model: A pydantic-ai model string (``"openai:gpt-4.1"``), a Model object, ``"demo"``
            for the scripted demo model, or None for ``GEOMINT_MODEL`` (the demo model
            when that is unset).
        tools: Per name: ``False`` removes a default, a ``ToolEntry``
            adds or replaces one.
        include_default_tools: Start from ``DEFAULT_TOOLS`` (True) or from nothing.
        classifier: Pick tools and scopes per turn (True), or keep every tool, terse.
        store: A store URL or path (``sqlite:///...``, ``postgresql://...``, ``memory:``),
            a :class:`~geomint.store.Chats`, or None for the default SQLite file.
        code_execution: Sandbox settings: ``timeout_s``, ``memory_mb``, ``mode``,
            ``allow_fallback``, ``minimum_mode``, ``scratch_mb``.
        max_steps: Model steps per turn (parallel tool calls share a step).
        byod_dirs: Folders ``add_byod_layer(path=...)`` may read; None allows only the
            bundled demo data.
        allowed_networks: Private networks ``add_byod_layer(url=...)`` may reach (CIDR).
        on_classify: Called with each turn's classification.
        on_tool_execute: Called with ``(name, args, result)`` after each tool call.
        approve: ``async (request: ApprovalRequest) -> (approved, reason)``, asked before
            each call of a tool that needs approval; without it such calls are refused.
        require_approval: Effects that need a person's approval wherever they happen
            (``["code_entry"]``: before any code-made layer is added to the map; the
            effects are in :data:`geomint.tools.effects.EFFECTS`), or tool names
            standing for their effects (``["process_data"]`` is ``runs_code``,
            ``code_entry`` and ``display``); a tool that declares no effects is asked
            before each call.
        providers: Who answers place, route and traffic questions; the offline provider
            (bundled data, no network) by default.
        map_styles: Basemap styles the application adds to the built-in ``light`` and
            ``dark`` (:class:`~geomint.tools.basemaps.MapStyle`; one named ``light``
            or ``dark`` replaces that one). ``set_map_style`` and the page's switcher
            offer them; one served from another origin must list it in ``origins``.
        codegen_model: The model that writes map code for ``execute_map_code`` (a cheaper
            or stronger one than the chat's); None uses the chat's model.
        turn_budget: Caps on second model calls per turn, map code's generation and
            discovery's shortlist together: ``{"max_tokens": 20000, "max_requests": 4}``.
            A call over a cap is not made, and the tool says why.
        sources: The open-data side (:class:`~geomint.sources.Sources`): its registry,
            connectors, dense arm and whether live sources are offered. None keeps the
            registry in the chat store's database, seeded with the bundled sources, ranks
            with the MiniLM dense arm beside BM25 when the ``dense`` extra and its model
            are installed (BM25 alone otherwise, and results say so), and offers the live
            sources only when ``GEOMINT_SOURCES_LIVE=1``.
        discovery_model: The model that reads a live catalogue search and shortlists it
            for ``find_sources`` (a sub-agent with no tools); None uses the chat's model.

    Raises:
        UsageError: An unknown tool name, store URL or sandbox setting; a model string
            with no key configured.
    """
    registry = resolve_tools(DEFAULT_TOOLS, tools, include_default_tools=include_default_tools)
    require_approval = tuple(require_approval)
    approval_policy(require_approval, registry)  # refuse a bad name before a store is opened
    settings_in = dict(code_execution or {})
    unknown = sorted(set(settings_in) - _SANDBOX_KEYS)
    if unknown:
        raise UsageError(
            f"unknown code_execution settings {unknown}; known: {', '.join(sorted(_SANDBOX_KEYS))}"
        )
    styles = style_catalogue(map_styles)  # a bad style is refused before a store is opened
    resolved_model = resolve_model(model)
    resolved_codegen = resolve_model(codegen_model) if codegen_model is not None else None
    resolved_discovery = resolve_model(discovery_model) if discovery_model is not None else None
    _turn_budget(turn_budget)  # refused before a store is opened
    if isinstance(store, Chats):
        chats, owns = store, False
    else:
        chats, owns = Chats(open_store(store)), True
    try:
        sandbox = Sandbox(**settings_in)
    except BaseException:
        if owns:
            chats.store.close()
        raise
    try:
        opendata = (
            sources
            if sources is not None
            else Sources(
                SourceRegistry(chats.store),
                dense=shared_minilm(),
                # The demo model's agent, where live sources are off (`geomint demo`, `geomint
                # mcp` offline), answers STAC searches from recordings, and says so.
                connectors=(
                    demo_connectors()
                    if describe_model(resolved_model)["demo"] and os.environ.get(LIVE_ENV) != "1"
                    else None
                ),
            )
        )
    except BaseException:
        if owns:
            chats.store.close()
        raise
    sandbox.start()
    folders = (bundled.DATA_DIR,) if byod_dirs is None else tuple(Path(d) for d in byod_dirs)
    return MapAgent(
        model=resolved_model,
        registry=registry,
        chats=chats,
        sandbox=sandbox,
        classifier=classifier,
        max_steps=max_steps,
        settings=ToolSettings(
            byod_dirs=folders, allowed_networks=tuple(allowed_networks), map_styles=styles
        ),
        on_classify=on_classify,
        on_tool_execute=on_tool_execute,
        approve=approve,
        require_approval=require_approval,
        providers=providers if providers is not None else default_providers(),
        owns_store=owns,
        codegen_model=resolved_codegen,
        turn_budget=turn_budget,
        sources=opendata,
        discovery_model=resolved_discovery,
    )


def _turn_budget(given: Mapping[str, int] | None) -> dict[str, int] | None:
    if given is None:
        return None
    known = {"max_tokens", "max_requests"}
    unknown = sorted(set(given) - known)
    if unknown:
        raise UsageError(f"turn_budget has {unknown}; it takes max_tokens and max_requests")
    for key, value in given.items():
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise UsageError(f"turn_budget {key} must be a positive whole number, got {value!r}")
    return dict(given)
