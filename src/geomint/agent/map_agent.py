"""``create_map_agent`` and :class:`MapAgent`: the classifier, the tool loop and the chat's
log, put together.

One turn: the question is saved, the classifier picks the tools and scopes, the tool loop
runs (pydantic-ai underneath) until the model answers or ``max_steps`` model steps are
used, and the answer is saved, whether the run finished, failed or was stopped. Every
tool call's full data streams to the caller as :class:`AgentEvent` s; the model reads
handles and digests.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import secrets
from collections.abc import AsyncIterator, Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

from pydantic_ai import (
    Agent,
    AgentRunResultEvent,
    FunctionToolCallEvent,
    FunctionToolResultEvent,
    PartDeltaEvent,
    PartStartEvent,
    UsageLimitExceeded,
    UsageLimits,
)
from pydantic_ai.messages import (
    ModelMessage,
    ModelRequest,
    ModelResponse,
    TextPart,
    TextPartDelta,
    UserPromptPart,
)
from pydantic_ai.models import Model

from geomint.agent._prompt import INSTRUCTIONS, state_note
from geomint.agent._toolset import (
    ApprovalRequest,
    Approve,
    TurnTools,
    approval_policy,
    build_tools,
)
from geomint.agent.classifier import Classification, classify
from geomint.agent.events import AgentEvent, MapEvent
from geomint.errors import UsageError
from geomint.models import ModelSpec, describe_model, resolve_model
from geomint.providers import Providers, bundled, default_providers
from geomint.sandbox import Sandbox
from geomint.state import MessageAdded
from geomint.store import Chats, NoSuchChatError, open_store
from geomint.tools import (
    DEFAULT_TOOLS,
    EntryCache,
    ToolBuilder,
    ToolContext,
    ToolEntry,
    ToolError,
    ToolSettings,
    ToolSpec,
    help_entries,
    rerun_watchers,
    resolve_tools,
)
from geomint.tools.byod import upload_layer
from geomint.tools.results import plain_json

__all__ = ["ApprovalRequest", "MapAgent", "RunResult", "create_map_agent"]

_log = logging.getLogger(__name__)
_HISTORY_MESSAGES: Final = 40
_SANDBOX_KEYS: Final = frozenset(
    {"timeout_s", "memory_mb", "mode", "allow_fallback", "minimum_mode", "scratch_mb"}
)


@dataclass
class RunResult:
    """What one turn produced.

    Attributes:
        chat_id: The chat.
        run_id: This turn.
        text: The answer as the model wrote it (possibly partial when ``stopped``).
        tool_calls: Each call: name, args, ok, and the result the model read.
        entries: Entry ids written this turn.
        figures: Figure cards presented this turn (minted values with their sources).
        charts: Chart configs produced this turn.
        errors: Why the run ended early, if it did.
        classification: What the classifier chose.
        steps: Model steps used (parallel tool calls share one).
        stopped: True when the run ended before the model answered.
        events: Every event streamed.
    """

    chat_id: str
    run_id: str
    text: str = ""
    tool_calls: list[dict[str, Any]] = field(default_factory=list)
    entries: list[str] = field(default_factory=list)
    figures: list[dict[str, Any]] = field(default_factory=list)
    charts: list[dict[str, Any]] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    classification: dict[str, Any] | None = None
    steps: int = 0
    stopped: bool = False
    events: list[AgentEvent] = field(default_factory=list)

    def add(self, event: AgentEvent) -> None:
        """Fold one streamed event into the result."""
        self.events.append(event)
        data = event.data
        if event.type == "text":
            self.text += str(data.get("delta", ""))
        elif event.type == "tool_result":
            self.tool_calls.append({k: data.get(k) for k in ("name", "args", "ok", "result")})
        elif event.type == "entry":
            self.entries.append(str(data["entry_id"]))
        elif event.type == "figure":
            self.figures.extend(data.get("figures", []))
        elif event.type == "chart":
            self.charts.append(data.get("config", {}))
        elif event.type == "error":
            self.errors.append(str(data.get("message", "")))
        elif event.type == "classified":
            self.classification = dict(data)
        elif event.type == "done":
            self.text = str(data.get("text", self.text))
            self.steps = int(data.get("steps", 0))
            self.stopped = bool(data.get("stopped", False))


class MapAgent:
    """A map agent over one store and one sandbox. Build it with :func:`create_map_agent`."""

    def __init__(
        self,
        *,
        model: Model,
        registry: Mapping[str, ToolSpec],
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
    ) -> None:
        if max_steps < 1:
            raise UsageError(f"max_steps must be at least 1; got {max_steps}")
        self.model = model
        self.registry = dict(registry)
        self.chats = chats
        self.sandbox = sandbox
        self.classifier = classifier
        self.max_steps = max_steps
        self.settings = settings or ToolSettings()
        self.on_classify = on_classify
        self.on_tool_execute = on_tool_execute
        self.approve = approve
        self.require_approval = frozenset(require_approval)
        self.approval_policy = approval_policy(self.require_approval, self.registry)
        self.providers = providers
        self._owns_store = owns_store
        self._cache = EntryCache()
        self._chat_locks: dict[str, asyncio.Lock] = {}

    # -- what it is ----------------------------------------------------------------------

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

    def tools_for(self, classification: Classification | None) -> dict[str, ToolEntry]:
        """The entries active for a turn, scoped where the classifier gave a scope."""
        active: dict[str, ToolEntry] = {}
        names = classification.active if classification else tuple(self.registry)
        for name in names:
            spec = self.registry[name]
            if isinstance(spec, ToolBuilder):
                scope = classification.scopes.get(name) if classification else None
                active[name] = spec.entry(scope)
            else:
                active[name] = spec
        return active

    # -- running ---------------------------------------------------------------------------

    async def run(
        self, prompt: str, *, chat_id: str | None = None, approve: Approve | None = None
    ) -> RunResult:
        """Answer one message in a chat (created when ``chat_id`` is new or None)."""
        result: RunResult | None = None
        async for event in self.run_stream(prompt, chat_id=chat_id, approve=approve):
            if result is None:
                result = RunResult(chat_id=event.data["chat_id"], run_id=event.data["run_id"])
            result.add(event)
        assert result is not None
        return result

    async def run_stream(
        self, prompt: str, *, chat_id: str | None = None, approve: Approve | None = None
    ) -> AsyncIterator[AgentEvent]:
        """Answer one message, streaming events as they happen (see :mod:`.events`).

        The answer is saved when the stream ends, finished or not; closing the stream early
        stops the run and keeps what was said so far. ``approve`` answers this run's
        approval requests instead of the agent's own callback (a web app asks the person
        in the browser that sent the message).
        """
        if not isinstance(prompt, str) or not prompt.strip():
            raise UsageError("the message is empty; ask a question")
        prompt = _valid_text(prompt)
        chat_id = self.open_chat(chat_id)
        run_id = "r-" + secrets.token_urlsafe(9)
        lock = self._chat_locks.setdefault(chat_id, asyncio.Lock())
        async with lock:
            async for event in self._turn(prompt, chat_id, run_id, approve or self.approve):
                yield event

    async def _turn(
        self, prompt: str, chat_id: str, run_id: str, approve: Approve | None
    ) -> AsyncIterator[AgentEvent]:
        history = self._history(chat_id)
        self.chats.append(
            chat_id,
            run_id,
            [
                MessageAdded(
                    message_id=f"{run_id}-q", role="user", parts=({"kind": "text", "text": prompt},)
                )
            ],
        )
        yield AgentEvent("run_started", {"chat_id": chat_id, "run_id": run_id})
        classification: Classification | None = None
        if self.classifier:
            classification = await classify(self.model, self.registry, history, prompt)
            yield AgentEvent("classified", classification.as_dict())
            if self.on_classify is not None:
                try:
                    self.on_classify(classification.as_dict())
                except Exception:
                    _log.exception("on_classify raised")
        context = self.context(chat_id, run_id)
        turn = TurnTools(
            context=context,
            budget=self.settings.digest_chars,
            on_tool_execute=self.on_tool_execute,
            approve=approve,
            policy=self.approval_policy,
        )
        scopes = classification.scopes if classification else {}
        agent: Agent[None, str] = Agent(
            self.model,
            instructions=INSTRUCTIONS + "\n\n" + state_note(context.workspace),
            tools=build_tools(self.tools_for(classification), turn, scopes),
            name="geomint",
        )
        text_parts: list[str] = []
        stopped, steps = True, 0
        try:
            async with agent.run_stream_events(
                prompt,
                message_history=_model_messages(history),
                usage_limits=UsageLimits(request_limit=self.max_steps),
            ) as stream:
                async for raw in stream:
                    for event in _translate(raw, text_parts):
                        yield event
                    if isinstance(raw, AgentRunResultEvent):
                        stopped = False
                        steps = raw.result.usage.requests
                        final = raw.result.output
                        if isinstance(final, str) and final and not "".join(text_parts):
                            text_parts.append(final)
                            yield AgentEvent("text", {"delta": final})
        except UsageLimitExceeded:
            steps = self.max_steps
            yield AgentEvent(
                "error",
                {
                    "message": (
                        f"stopped after {self.max_steps} model steps (max_steps) before an answer; "
                        "ask again to continue, or raise max_steps"
                    )
                },
            )
        except (asyncio.CancelledError, GeneratorExit):
            self._save_answer(chat_id, run_id, "".join(text_parts), turn, stopped=True)
            raise
        except Exception as exc:
            _log.exception("the run failed")
            yield AgentEvent(
                "error", {"message": f"the model failed: {type(exc).__name__}: {exc}"[:1000]}
            )
        text = "".join(text_parts)
        self._save_answer(chat_id, run_id, text, turn, stopped=stopped)
        yield AgentEvent(
            "done",
            {
                "text": text,
                "steps": steps,
                "stopped": stopped,
                "chat_id": chat_id,
                "run_id": run_id,
            },
        )

    async def upload(self, data: bytes, name: str, *, chat_id: str) -> dict[str, Any]:
        """Add a file the person dropped into the chat as a byod entry (through intake).

        The upload is a message of the chat (so a reopened chat shows it) and its layer is
        an entry the model can read on the next turn.

        Returns:
            ``name``, ``entry_id``, ``label``, ``format``, ``features``, ``warnings`` and
            ``geojson``.

        Raises:
            UsageError: The file was refused; the reason says why, and nothing was stored.
        """
        chat_id = self.open_chat(chat_id)
        run_id = "u-" + secrets.token_urlsafe(9)
        sent: dict[str, Any] = {}

        async def keep(kind: str, payload: dict[str, Any]) -> None:
            if kind == "entry":
                sent.update(payload)

        context = self.context(chat_id, run_id, emit=keep)
        async with self._chat_locks.setdefault(chat_id, asyncio.Lock()):
            try:
                added = await upload_layer(context, data, name)
            except ToolError as exc:
                raise UsageError(exc.message) from None
            part = {"kind": "upload", **added}
            self.chats.append(
                chat_id,
                run_id,
                [MessageAdded(message_id=f"{run_id}-q", role="user", parts=(plain_json(part),))],
            )
        return {**added, "geojson": sent.get("geojson")}

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
            **options,
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
        """The chat's earlier messages as ``(role, text)``, oldest first."""
        messages: list[tuple[str, str]] = [
            (str(e.body.role), e.body.text())
            for e in self.chats.trace(chat_id)
            if isinstance(e.body, MessageAdded) and e.body.role in ("user", "assistant")
        ]
        return messages[-_HISTORY_MESSAGES:]

    def _save_answer(
        self, chat_id: str, run_id: str, text: str, turn: TurnTools, *, stopped: bool
    ) -> None:
        parts: list[dict[str, Any]] = [{"kind": "text", "text": text}]
        for call in turn.calls:
            parts.append(
                {
                    "kind": "tool",
                    "name": call["name"],
                    "ok": call["ok"],
                    "args": plain_json(call["args"]),
                }
            )
        if stopped:
            parts.append({"kind": "stopped"})
        # A lone surrogate from the model would make the store refuse the whole answer.
        safe = json.dumps(parts, ensure_ascii=False, default=str).encode("utf-8", "replace")
        parts = json.loads(safe)
        with contextlib.suppress(Exception):
            self.chats.append(
                chat_id,
                run_id,
                [MessageAdded(message_id=f"{run_id}-a", role="assistant", parts=tuple(parts))],
            )

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
            messages.append(ModelResponse(parts=[TextPart(content=text)]))
    return messages


def _translate(raw: Any, text_parts: list[str]) -> list[AgentEvent]:
    if isinstance(raw, PartStartEvent) and isinstance(raw.part, TextPart):
        if raw.part.content:
            text_parts.append(raw.part.content)
            return [AgentEvent("text", {"delta": raw.part.content})]
    elif isinstance(raw, PartDeltaEvent) and isinstance(raw.delta, TextPartDelta):
        text_parts.append(raw.delta.content_delta)
        return [AgentEvent("text", {"delta": raw.delta.content_delta})]
    elif isinstance(raw, FunctionToolCallEvent):
        return [
            AgentEvent(
                "tool_call",
                {
                    "id": raw.part.tool_call_id,
                    "name": raw.part.tool_name,
                    "args": raw.part.args_as_dict(),
                },
            )
        ]
    elif isinstance(raw, FunctionToolResultEvent):
        part = raw.part
        meta = part.metadata if isinstance(part.metadata, dict) else {}
        return [
            AgentEvent(
                "tool_result",
                {
                    "id": part.tool_call_id,
                    "name": part.tool_name,
                    "ok": bool(meta.get("ok", True)),
                    "result": meta.get("model"),
                    "ui": meta.get("ui"),
                },
            )
        ]
    elif isinstance(raw, MapEvent):
        return [AgentEvent(raw.kind, raw.payload)]
    return []


def create_map_agent(
    model: ModelSpec = None,
    *,
    tools: Mapping[str, ToolSpec | bool] | None = None,
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
        tools: Per name: ``False`` removes a default, a ``ToolEntry`` or ``ToolBuilder``
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
    resolved_model = resolve_model(model)
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
    sandbox.start()
    folders = (bundled.DATA_DIR,) if byod_dirs is None else tuple(Path(d) for d in byod_dirs)
    return MapAgent(
        model=resolved_model,
        registry=registry,
        chats=chats,
        sandbox=sandbox,
        classifier=classifier,
        max_steps=max_steps,
        settings=ToolSettings(byod_dirs=folders, allowed_networks=tuple(allowed_networks)),
        on_classify=on_classify,
        on_tool_execute=on_tool_execute,
        approve=approve,
        require_approval=require_approval,
        providers=providers if providers is not None else default_providers(),
        owns_store=owns,
    )
