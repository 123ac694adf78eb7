"""``geomint chats``: list, show, export and import the chats in a store."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Annotated, Any, Literal, NoReturn

import typer

from geomint.state import (
    AnalysisRecorded,
    ApprovalAsked,
    ApprovalGiven,
    ApprovalRefused,
    EntryDisplayChanged,
    EntryWritten,
    Event,
    EventBody,
    FetchMade,
    FetchMissed,
    LayerMinted,
    MessageAdded,
    ObservationRecorded,
    ToolFailed,
    ValueMinted,
)
from geomint.store import Chats, StoreError, export_text, open_store

__all__ = ["app"]

app = typer.Typer(
    help="The chats in a store: list, show, export, import, delete, purge.",
    no_args_is_help=True,
)

StoreOption = Annotated[
    str | None,
    typer.Option(
        "--store",
        help="A SQLite path, sqlite:///path, memory: or a postgresql:// URL "
        "(default: $GEOMINT_STORE, else the default SQLite file).",
    ),
]


@contextmanager
def _chats(store: str | None) -> Iterator[Chats]:
    """Open the store for one command; a store error ends it with exit 2; always close."""
    try:
        chats = Chats(open_store(store or os.environ.get("GEOMINT_STORE") or None))
    except StoreError as exc:
        _fail(str(exc))
    try:
        yield chats
    except StoreError as exc:
        _fail(str(exc))
    finally:
        chats.store.close()


def _fail(message: str) -> NoReturn:
    typer.echo(f"geomint: {message}", err=True)
    raise typer.Exit(2)


@app.command("list")
def list_chats(
    store: StoreOption = None,
    all_: Annotated[bool, typer.Option("--all", help="Include deleted chats.")] = False,
) -> None:
    """List chats, newest message first."""
    with _chats(store) as chats:
        rows = chats.list_chats(include_deleted=all_)
    if not rows:
        typer.echo("no chats")
    for row in rows:
        when = row.last_message_at or row.created_at
        stamp = when.strftime("%Y-%m-%d %H:%M") if when else "-"
        typer.echo(f"{row.chat_id}  {stamp}  {row.message_count:>3} messages  {row.title or ''}")


@app.command("show")
def show(
    chat_id: Annotated[str, typer.Argument(help="The chat to show.")],
    store: StoreOption = None,
    run: Annotated[str | None, typer.Option("--run", help="Only this run's events.")] = None,
) -> None:
    """Print a chat's trace: its events in order, one readable line each."""
    with _chats(store) as chats:
        events = chats.trace(chat_id, run)
    if not events:
        _fail(f"no chat {chat_id!r} in this store")
    for event in events:
        typer.echo(describe(event))


@app.command("export")
def export(
    chat_id: Annotated[str, typer.Argument(help="The chat to export.")],
    output: Annotated[Path, typer.Option("--output", "-o", help="The file to write.")],
    store: StoreOption = None,
    format_: Annotated[
        Literal["json", "notebook", "script"],
        typer.Option(
            "--format",
            help="json: the chat's events and data, for `chats import`; notebook: a Jupyter "
            "notebook that re-runs every analysis in the sandbox and checks its figures; "
            "script: the same as a Python script. Their inputs go to a folder beside them.",
        ),
    ] = "json",
) -> None:
    """Write a chat to a file: JSON that `chats import` restores, or a notebook or script
    that recomputes its figures."""
    with _chats(store) as chats:
        if format_ == "json":
            data = chats.export(chat_id)
            output.write_text(export_text(data), encoding="utf-8")
            typer.echo(f"exported {len(data['events'])} events of {chat_id} to {output}")
            return
        from geomint.replay import export_chat  # noqa: PLC0415 - nbformat only when asked

        folder = export_chat(chats, chat_id, output, format_)
    typer.echo(f"exported {chat_id} as a {format_} to {output}, its inputs to {folder}/")


@app.command("import")
def import_(
    file: Annotated[Path, typer.Argument(help="A file written by `chats export`.")],
    store: StoreOption = None,
    as_id: Annotated[str | None, typer.Option("--as", help="Store it under this id.")] = None,
) -> None:
    """Restore an exported chat exactly, under its own id or --as another."""
    with _chats(store) as chats:
        try:
            data: Any = json.loads(file.read_text(encoding="utf-8"))
            chat_id = chats.import_(data, chat_id=as_id)
        except (OSError, ValueError) as exc:
            _fail(f"{file}: {exc}")
    typer.echo(f"imported {chat_id}")


@app.command("delete")
def delete(
    chat_id: Annotated[str, typer.Argument(help="The chat to delete.")],
    store: StoreOption = None,
) -> None:
    """Delete a chat: it leaves listings at once; its data goes at the next `chats purge`."""
    with _chats(store) as chats:
        chats.delete(chat_id)
    typer.echo(f"deleted {chat_id}; run `geomint chats purge` to remove its data")


@app.command("purge")
def purge(store: StoreOption = None) -> None:
    """Retention: remove every deleted chat's events, data and snapshot for good."""
    with _chats(store) as chats:
        purged = chats.purge_deleted()
    typer.echo(f"purged {len(purged)} deleted chat{'s' if len(purged) != 1 else ''}")
    for chat_id in purged:
        typer.echo(f"  {chat_id}")


def describe(event: Event) -> str:
    """One readable line for an event of a trace."""
    body = event.body
    head = f"{event.seq:>5}  {event.at:%Y-%m-%d %H:%M:%S}  {event.run_id:<12}  {body.type:<22}"
    return head + _detail(body)


def _detail(body: EventBody) -> str:
    match body:
        case MessageAdded():
            return f"{body.role}: {_cut(body.text())}"
        case EntryWritten():
            return f"{body.entry_id} v{body.version} {body.label!r} ({body.blob.size:,} bytes)"
        case EntryDisplayChanged():
            removed = "" if body.removed is None else f" removed={body.removed}"
            return f"{body.entry_id} visible={body.visible}{removed}"
        case FetchMade():
            return f"{body.tool} via {body.provider} -> {body.entry_id or 'nothing stored'}"
        case FetchMissed():
            return f"{body.tool} via {body.provider}: {_cut(body.reason)}"
        case AnalysisRecorded():
            read = ", ".join(f"{i.entry_id}@{i.version}" for i in body.inputs) or "nothing"
            minted = ", ".join(body.values + body.layers) or "nothing"
            failed = f"; failed: {_cut(body.error)}" if body.error else ""
            return f"{body.analysis_id} read {read}, minted {minted}{failed}"
        case ValueMinted():
            unit = f" {body.value.unit}" if body.value.unit else ""
            return f"{body.value.id} {body.value.label!r} = {body.value.value}{unit}"
        case LayerMinted():
            layer = body.layer
            return f"{layer.id} {layer.label!r} ({layer.feature_count} features)"
        case ObservationRecorded():
            conflict = body.conflict
            return f"{conflict.a.id} vs {conflict.b.id}: {_cut(conflict.reason)}"
        case ApprovalAsked():
            return f"{body.approval_id} for {body.tool}"
        case ApprovalGiven():
            return body.approval_id
        case ApprovalRefused():
            return f"{body.approval_id}: {_cut(body.reason)}"
        case ToolFailed():
            return f"{body.tool}: {_cut(body.error)}"
    return ""


def _cut(text: str, width: int = 70) -> str:
    text = " ".join(text.split())
    return text if len(text) <= width else text[: width - 1] + "…"
