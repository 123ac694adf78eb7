"""``geomint demo``: every scripted prompt, end to end, on the embedded defaults.

The scripted demo model chooses; everything after its choice is real: the classifier
path, the tools, the sandbox, the store and the figures. ``--json`` prints the transcript
(per prompt: tools called, entries written, figures with provenance, chart configs,
errors) for scripts and tests.
"""

from __future__ import annotations

import asyncio
import json
import time
from typing import Annotated, Any

import typer

from geomint._commands._options import AgentMode, StoreUrl
from geomint.errors import UsageError

__all__ = ["demo"]


def demo(
    as_json: Annotated[
        bool, typer.Option("--json", help="Print the whole transcript as one JSON object.")
    ] = False,
    store: StoreUrl = None,
    mode: AgentMode = "auto",
) -> None:
    """Run every scripted demo prompt over the bundled Helsinki data and show what happened.

    Exits 0 when every prompt ran without an error, 1 when one failed, 2 for a usage error.
    """
    if mode == "in-process":
        _fail("the demo runs model-written code: use auto, isolated or restricted", 2)
    try:
        transcript = asyncio.run(_run(store, mode))
    except UsageError as exc:
        _fail(str(exc), 2)
    if as_json:
        typer.echo(json.dumps(transcript, ensure_ascii=False, indent=1, default=str))
    else:
        _print(transcript)
    failed = [
        p for p in transcript["prompts"] if p["errors"] or any(not t["ok"] for t in p["tools"])
    ]
    raise typer.Exit(1 if failed else 0)


async def _run(store: str | None, mode: str) -> dict[str, Any]:
    import pydantic_ai  # noqa: PLC0415

    from geomint.agent import create_map_agent  # noqa: PLC0415 - keep `geomint --help` fast
    from geomint.agent.demo import DEMO_PROMPTS, seed_demo_chat, transcript  # noqa: PLC0415

    pydantic_ai.BANNER_ENABLED = False  # its first-run banner would land inside the output
    agent = create_map_agent("demo", store=store, code_execution={"mode": mode})
    try:
        chat_id = await seed_demo_chat(agent)
        prompts = []
        for prompt in DEMO_PROMPTS:
            if prompt.needs_page:
                continue  # it asks the person's browser (their location): none here
            started = time.perf_counter()
            parts = [part async for part in agent.run_stream(prompt.text, chat_id=chat_id)]
            row = transcript(prompt.text, parts)
            row["seconds"] = round(time.perf_counter() - started, 3)
            prompts.append(row)
        return {
            "chat_id": chat_id,
            "model": agent.model_info,
            "sandbox": agent.code_execution_mode,
            "prompts": prompts,
        }
    finally:
        agent.close()


def _print(transcript: dict[str, Any]) -> None:
    from rich.console import Console  # noqa: PLC0415
    from rich.markup import escape  # noqa: PLC0415
    from rich.table import Table  # noqa: PLC0415

    from geomint._commands._render import render_map_change  # noqa: PLC0415

    console = Console()
    console.print(
        f"[bold]geomint demo[/bold] (scripted demo model, sandbox: {transcript['sandbox']}), "
        f"chat {transcript['chat_id']}"
    )
    for row in transcript["prompts"]:
        console.rule(f"[bold]{row['prompt']}")
        for tool in row["tools"]:
            mark = "[green]✓[/green]" if tool["ok"] else "[red]✗[/red]"
            error = f"  [red]{tool.get('error', '')}[/red]" if not tool["ok"] else ""
            console.print(f"  {mark} {tool['name']}{error}")
        for entry in row["entries"]:
            console.print(
                f"  [cyan]{entry['entry_id']}[/cyan] v{entry['version']} {entry['label']} "
                f"({entry['features']} features)"
            )
        for chart in row["charts"]:
            labels = chart.get("data", {}).get("labels", [])
            console.print(f"  chart ({chart.get('type')}): {', '.join(map(str, labels[:6]))} ...")
        if row["figures"]:
            table = Table(show_header=True, header_style="bold", box=None, padding=(0, 1))
            for column in ("id", "figure", "label", "sources"):
                table.add_column(column)
            for figure in row["figures"]:
                unit = f" {figure['unit']}" if figure.get("unit") else ""
                sources = "; ".join(
                    f"{s['title']} ({s['licence']})" for s in figure.get("sources", [])
                )
                table.add_row(figure["id"], f"{figure['value']:,}{unit}", figure["label"], sources)
            console.print(table)
        for change in row["map_changes"]:
            console.print(render_map_change(change))
        for monitor in row["monitors"]:
            console.print(
                f"  monitor {monitor['name']} re-ran: {'ok' if monitor['ok'] else 'failed'}"
            )
        for error in row["errors"]:
            console.print(f"  [red]{error}[/red]")
        checked = f"{row['cited']} cited, {row['unminted']} unminted"
        answer = escape(row["rendered"] or row["text"])
        console.print(
            f"  [dim]{answer}  ({row['steps']} steps, {checked}, {row['seconds']} s)[/dim]"
        )


def _fail(message: str, code: int) -> None:
    typer.echo(f"error: {message}", err=True)
    raise typer.Exit(code)
