"""``geomint chat``: talk to a map agent in the terminal.

One agent serves the whole session (one store, one sandbox); each line typed is a turn.
While a turn runs, the answer streams as it is written, tool calls show as they happen, a
spinner runs while code runs, and charts, figure cards and map entries print when they
arrive (see :mod:`._render`). ``--once`` asks one question and exits, for scripts.

Exit codes: 0 done; 1 when a ``--once`` turn ended with an error; 2 for a usage error
(an unknown model, a missing API key, a bad store); 3 for another setup failure the
operator must fix; 130 when a ``--once`` turn is interrupted.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Final, Literal, NoReturn

import typer
from rich.console import Console, RenderableType
from rich.markup import escape
from rich.panel import Panel
from rich.status import Status
from rich.text import Text
from rich.traceback import Traceback

from geomint._commands._render import CitedStream, render_check, render_event
from geomint.errors import GeomintError, UsageError
from geomint.provenance.citations import format_figure, format_shown
from geomint.store import StoreError
from geomint.ui import (
    AnalysisPart,
    FigurePart,
    Part,
    ProgressPart,
    QuestionPart,
    RunEndedPart,
    RunStartedPart,
    TextDeltaPart,
    TextPart,
    ToolCallPart,
    ToolResultPart,
)

if TYPE_CHECKING:
    from geomint.agent import MapAgent

__all__ = ["app"]

# One command: the callback is it (so `geomint chat` runs it); no subcommands to list.
app = typer.Typer(add_completion=False, invoke_without_command=True, subcommand_metavar="")

_COMMANDS: Final = (
    ("/help", "list these commands"),
    ("/new", "start a new chat"),
    ("/export [FILE]", "write this chat as a notebook that recomputes its figures (.py: a script)"),
    ("/quit, /exit", "leave (Ctrl-D and Ctrl-C too)"),
)
_SANDBOX_WARNINGS: Final = {
    "restricted": "a process boundary and limits, but no namespaces: model-written code "
    "is not fully isolated on this machine",
    "in-process": "model-written code runs inside this process, with no isolation",
    "unavailable": "no sandbox could start, so code tools will fail",
    "not-started": "the sandbox has not started",
}


@app.callback(invoke_without_command=True)
def chat(
    model: Annotated[
        str | None,
        typer.Option(
            "--model",
            help="A model such as openai:gpt-4.1 (default: $GEOMINT_MODEL, else the scripted "
            "demo model).",
        ),
    ] = None,
    store: Annotated[
        str | None,
        typer.Option(
            "--store",
            help="A SQLite path, sqlite:///path, memory: or a postgresql:// URL "
            "(default: $GEOMINT_STORE, else the default SQLite file).",
        ),
    ] = None,
    chat_id: Annotated[
        str | None, typer.Option("--chat", help="Resume this chat (its id).")
    ] = None,
    new: Annotated[
        bool, typer.Option("--new", help="Start a new chat instead of the most recent one.")
    ] = False,
    verbose: Annotated[
        bool,
        typer.Option(
            "--verbose", "-v", help="Show the code the model runs and every event's detail."
        ),
    ] = False,
    once: Annotated[
        str | None,
        typer.Option("--once", help="Ask this one question, print the answer and exit."),
    ] = None,
) -> None:
    """Chat with a map agent: answers stream, charts and figure cards print as they arrive.

    Without --chat or --new it continues the most recent chat in the store. With the
    scripted demo model a chat gets the bundled Helsinki places and parks to ask about.
    """
    if chat_id is not None and new:
        _fail("choose --chat ID to resume a chat or --new to start one, not both")
    if once is not None and not once.strip():
        _fail("--once needs a question")
    console = Console(highlight=False)
    session = _Session(console=console, verbose=verbose)
    code = session.main(
        model=model,
        store=store or os.environ.get("GEOMINT_STORE") or None,
        chat_id=chat_id,
        new=new,
        once=once,
    )
    raise typer.Exit(code)


def _fail(message: str, code: int = 2) -> NoReturn:
    typer.echo(f"geomint: {message}", err=True)
    raise typer.Exit(code)


@dataclass
class _Session:
    """One ``geomint chat`` run: the agent, the chat in use and the loop turns run on."""

    console: Console
    verbose: bool = False
    agent: MapAgent | None = None
    chat_id: str = ""
    runner: asyncio.Runner = field(default_factory=asyncio.Runner)

    def main(
        self,
        *,
        model: str | None,
        store: str | None,
        chat_id: str | None,
        new: bool,
        once: str | None,
    ) -> int:
        # One loop for the session (asyncio.Runner) rather than asyncio.run around the
        # prompt loop: input() blocks, and Ctrl-C must stop a turn without ending the chat.
        log = _ConsoleLog(self.console, self.verbose)
        try:
            with self.runner:
                try:
                    self._start(model, store, compact=once is not None)
                    self._pick_chat(chat_id, new=new)
                except (UsageError, StoreError) as exc:
                    _fail(str(exc))
                except GeomintError as exc:
                    _fail(str(exc), 3)
                if once is not None:
                    return self._once(once)
                return self._loop()
        finally:
            if self.agent is not None:
                self.agent.close()
            log.remove()

    # -- setting up ------------------------------------------------------------------------

    def _start(self, model: str | None, store: str | None, *, compact: bool) -> None:
        import pydantic_ai  # noqa: PLC0415 - keep `--help` fast

        from geomint.agent import create_map_agent  # noqa: PLC0415

        # pydantic-ai's first-run banner would land in the middle of the chat; this program
        # owns its terminal (the switch pydantic-ai documents for that).
        pydantic_ai.BANNER_ENABLED = False

        with self.console.status("starting the agent and its sandbox…"):
            self.agent = create_map_agent(model, store=store)
            # The sandbox starts in the background; wait for it, so the header can say
            # which mode code will really run in.
            self.agent.ready()
        self._header(compact=compact)

    def _header(self, *, compact: bool) -> None:
        agent = self._agent
        info = agent.model_info
        mode = agent.code_execution_mode
        line = Text("geomint chat", style="bold")
        line.append(f"  model {info.get('name')}", style="cyan")
        if info.get("provider") and info["provider"] != info.get("name"):
            line.append(f" ({info['provider']})", style="dim")
        line.append("  sandbox ", style="dim")
        line.append(mode, style="green" if mode == "isolated" else "bold yellow")
        self.console.print(line)
        if info.get("demo"):
            self.console.print(_demo_banner(compact=compact))
        if mode != "isolated":
            warning = _SANDBOX_WARNINGS.get(mode, "code runs without full isolation")
            self.console.print(f"[bold yellow]⚠ sandbox {mode}:[/] [yellow]{warning}[/]")

    def _pick_chat(self, chat_id: str | None, *, new: bool) -> None:
        from geomint.store import NoSuchChatError  # noqa: PLC0415

        chats = self._agent.chats
        if chat_id is not None:
            try:
                workspace = chats.open(chat_id)
            except NoSuchChatError:
                self.console.print(f"[dim]chat {escape(chat_id)} is new; it starts now[/]")
                self._use(chats.create(chat_id).chat_id, fresh=True)
                return
            self._use(chat_id, fresh=False, messages=workspace.message_count)
            return
        latest = None if new else next(iter(chats.list_chats()), None)
        if latest is None:
            self._use(chats.create().chat_id, fresh=True)
        else:
            self._use(latest.chat_id, fresh=False, messages=latest.message_count)

    def _use(self, chat_id: str, *, fresh: bool, messages: int = 0) -> None:
        self.chat_id = chat_id
        seeded = ""
        if self._agent.model_info.get("demo"):
            from geomint.agent.demo import seed_demo_chat  # noqa: PLC0415

            self.runner.run(seed_demo_chat(self._agent, chat_id))
            seeded = ", with the Helsinki demo places and parks" if fresh else ""
        state = f"new{seeded}" if fresh else f"resumed, {messages} messages; --new starts afresh"
        self.console.print(f"[dim]chat[/] [cyan]{escape(chat_id)}[/] [dim]({state})[/]")

    @property
    def _agent(self) -> MapAgent:
        assert self.agent is not None, "the agent starts first"
        return self.agent

    # -- running -----------------------------------------------------------------------------

    def _once(self, question: str) -> int:
        self.console.print(Text(f"you › {question}", style="bold green"))
        try:
            errors = self.runner.run(self._turn(question, once=True))
        except KeyboardInterrupt:
            self.console.print("\n[yellow]interrupted[/]")
            return 130
        return 1 if errors else 0

    def _loop(self) -> int:
        self.console.print("[dim]/help lists commands; Ctrl-D leaves.[/]")
        while True:
            try:
                line = self.console.input("\n[bold green]you ›[/] ").strip()
            except (EOFError, KeyboardInterrupt):
                self.console.print()
                return 0
            if not line:
                continue
            if line.startswith("/"):
                if self._command(line):
                    return 0
                continue
            line = self._demo_shortcut(line)
            try:
                self.runner.run(self._turn(line))
            except KeyboardInterrupt:
                self.console.print(
                    "\n[yellow]stopped; what was said so far is saved. Ctrl-D leaves.[/]"
                )

    def _command(self, line: str) -> bool:
        """Run a slash command; True when the session should end."""
        word = line.split(maxsplit=1)[0].lower()
        if word in ("/quit", "/exit", "/q"):
            return True
        if word == "/new":
            self._use(self._agent.chats.create().chat_id, fresh=True)
        elif word == "/export":
            self._export(line.split(maxsplit=1)[1].strip() if " " in line.strip() else None)
        elif word in ("/help", "/?"):
            for name, does in _COMMANDS:
                self.console.print(f"  [bold]{name:<15}[/] {does}")
            if self._agent.model_info.get("demo"):
                self.console.print(_demo_banner())
        else:
            self.console.print(f"[yellow]unknown command {escape(word)}; /help lists them[/]")
        return False

    def _export(self, name: str | None) -> None:
        """Write the chat as a notebook (or, for a ``.py`` file, a script) and its inputs."""
        from geomint.replay import export_chat  # noqa: PLC0415 - nbformat only when asked

        output = Path(name or f"geomint-{self.chat_id}.ipynb")
        format_: Literal["notebook", "script"] = "script" if output.suffix == ".py" else "notebook"
        try:
            folder = export_chat(self._agent.chats, self.chat_id, output, format_)
        except OSError as exc:
            self.console.print(f"[yellow]could not export: {escape(str(exc))}[/]")
            return
        self.console.print(
            f"[dim]wrote[/] {escape(str(output))} [dim]and its inputs to[/] "
            f"{escape(str(folder))}/ [dim](a {format_} that re-runs each analysis in the "
            "sandbox and checks its figures)[/]"
        )

    def _demo_shortcut(self, line: str) -> str:
        """With the demo model, a number asks that demo prompt."""
        if not (self._agent.model_info.get("demo") and line.isdigit()):
            return line
        from geomint.models.demo import DEMO_PROMPTS  # noqa: PLC0415

        index = int(line) - 1
        if 0 <= index < len(DEMO_PROMPTS):
            text = DEMO_PROMPTS[index].text
            self.console.print(Text(f"you › {text}", style="green"))
            return text
        return line

    async def _turn(self, prompt: str, *, once: bool = False) -> list[str]:
        """Run one turn, printing as it goes; return the errors it ended with."""
        view = _TurnView(self.console, verbose=self.verbose, once=once)
        if self.chat_id is not None:
            with contextlib.suppress(StoreError):
                for value in self._agent.chats.open(self.chat_id).values:
                    view.cited.shown[value.id] = format_figure(value)
        try:
            async for part in self._agent.run_stream(prompt, chat_id=self.chat_id):
                view.show(part)
        finally:
            view.close()
        return view.errors


@dataclass
class _TurnView:
    """What one turn prints: streamed text, tool lines, blocks, and a spinner while waiting.

    Blocks (charts, figures, entries) that arrive during a tool call are held until its
    result line, so each call reads as call, result, then what it made.
    """

    console: Console
    verbose: bool = False
    once: bool = False
    errors: list[str] = field(default_factory=list)
    chat_id: str = ""
    _status: Status | None = None
    _open: set[str] = field(default_factory=set)
    _held: list[RenderableType] = field(default_factory=list)
    _mid_line: bool = False
    _last: str = ""
    #: The answer's text as it streams, cited figures shown as their values.
    cited: CitedStream = field(default_factory=lambda: CitedStream({}))

    def show(self, part: Part) -> None:
        match part:
            case RunStartedPart():
                self.chat_id = part.chat_id
                self._wait("thinking…")
            case TextDeltaPart():
                self._text(self.cited.feed(part.delta))
            case TextPart():
                # The block was printed as it came; what it typed unminted is said under it.
                self._text(self.cited.flush())
                self._print(render_check(part))
            case QuestionPart():
                pass  # the question was typed
            case ProgressPart():
                self._progress(part)
            case AnalysisPart() | FigurePart():
                for card in part.figures:
                    self.cited.shown[card.id] = format_shown(card.value, card.unit)
                self._show(part)
            case ToolCallPart():
                self._print(render_event(part, verbose=self.verbose))
                self._open.add(str(part.call_id))
                self._wait(f"{part.tool}…")
            case ToolResultPart():
                self._print(render_event(part, verbose=self.verbose))
                self._open.discard(str(part.call_id))
                if not self._open:
                    held, self._held = self._held, []
                    for block in held:
                        self._print(block)
                    self._wait("thinking…")
            case RunEndedPart():
                if part.error:
                    self.errors.append(part.error)
                    self._print(render_event(part))
                self._done(part)
            case _:
                self._show(part)

    def _show(self, part: Part) -> None:
        shown = render_event(part, verbose=self.verbose)
        if shown is not None and self._open:
            self._held.append(shown)
        else:
            self._print(shown)

    def _text(self, delta: str) -> None:
        if not delta:
            return
        self._stop()
        if self._last == "block":
            self.console.print()
        self._last = "text"
        self.console.print(delta, end="", markup=False, highlight=False, soft_wrap=True)
        self._mid_line = not delta.endswith("\n")

    def _progress(self, part: ProgressPart) -> None:
        what = part.name or part.tool
        if part.state == "running":
            self._wait(f"running code: {what}…")
        else:
            if self.verbose and part.ms is not None:
                self._print(Text(f"    code {what} ran in {part.ms} ms", style="dim"))
            self._wait(f"{part.tool}…" if self._open else "thinking…")

    def _done(self, part: RunEndedPart) -> None:
        self._stop()
        for block in self._held:
            self._print(block)
        self._held = []
        self._end_line()
        steps = part.steps or 0
        stopped = " · stopped early" if part.stopped else ""
        where = (
            f"resume: geomint chat --chat {self.chat_id}" if self.once else f"chat {self.chat_id}"
        )
        tokens = (part.input_tokens or 0) + (part.output_tokens or 0)
        cost = f" · {tokens:,} tokens" if tokens else ""
        footer = f"{steps} step{'s' if steps != 1 else ''}{stopped}{cost} · {where}"
        self.console.print(Text(footer, style="dim"), justify="right")

    def _print(self, block: RenderableType | None) -> None:
        if block is None:
            return
        self._end_line()
        self._last = "block"
        self.console.print(block)

    def _end_line(self) -> None:
        if self._mid_line:
            self.console.print()
            self._mid_line = False

    def _wait(self, message: str) -> None:
        if self._status is None:
            self._status = self.console.status(message, spinner="dots")
            self._status.start()
        else:
            self._status.update(message)

    def _stop(self) -> None:
        if self._status is not None:
            self._status.stop()
            self._status = None

    def close(self) -> None:
        self._stop()
        self._end_line()


def _demo_banner(*, compact: bool = False) -> RenderableType:
    from geomint.models.demo import DEMO_PROMPTS  # noqa: PLC0415

    if compact:
        line = Text("⚠ scripted demo model: ", style="bold yellow")
        line.append(
            f"no language model is configured; it knows {len(DEMO_PROMPTS)} example prompts "
            "(`geomint chat` lists them; --model openai:gpt-4.1 for a real model)",
            style="yellow",
        )
        return line
    lines = Text()
    lines.append("No language model is configured, so a scripted demo model answers.\n")
    lines.append("It knows these prompts (type one, or its number):\n")
    for number, prompt in enumerate(DEMO_PROMPTS, 1):
        lines.append(f"  {number}. ", style="dim")
        lines.append(f"{prompt.text}\n")
    lines.append("For a real model: ", style="dim")
    lines.append("--model openai:gpt-4.1", style="bold")
    lines.append(" with OPENAI_API_KEY set, or set GEOMINT_MODEL.", style="dim")
    return Panel(
        lines,
        title="[bold]scripted demo model[/]",
        title_align="left",
        border_style="yellow",
        expand=False,
    )


class _ConsoleLog(logging.Handler):
    """geomint's log warnings (a sandbox fallback, say) as console lines.

    Errors and their tracebacks only with ``--verbose``: a failed run already says why in
    its last part. The handler is removed when the session ends.
    """

    def __init__(self, console: Console, verbose: bool) -> None:
        super().__init__(logging.WARNING)
        self.console = console
        self.verbose = verbose
        self.logger = logging.getLogger("geomint")
        self._propagate = self.logger.propagate
        self.logger.addHandler(self)
        self.logger.propagate = False

    def emit(self, record: logging.LogRecord) -> None:
        if record.levelno >= logging.ERROR and not self.verbose:
            return  # a failed run also ends with an error event, which the turn prints
        level = record.levelname.lower()
        self.console.print(Text(f"{level}: {record.getMessage()}", style="yellow"))
        if self.verbose and record.exc_info and record.exc_info[1] is not None:
            kind, error, trace = record.exc_info
            self.console.print(Traceback.from_exception(kind or type(error), error, trace))

    def remove(self) -> None:
        self.logger.removeHandler(self)
        self.logger.propagate = self._propagate
