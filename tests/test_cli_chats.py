"""``geomint chats``: list, show, export and import through the command line."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from geomint.cli import app
from geomint.state import EntryWritten, FetchMissed, MessageAdded
from geomint.store import Chats, SQLiteStore

runner = CliRunner()


@pytest.fixture
def db(tmp_path: Path) -> str:
    path = tmp_path / "chats.db"
    store = SQLiteStore(path)
    chats = Chats(store)
    chats.create("schools")
    ref = store.put_blob(
        "schools", b'{"type":"FeatureCollection","features":[]}', "application/geo+json"
    )
    question = MessageAdded(
        message_id="m1", role="user", parts=({"kind": "text", "text": "Schools far from a stop?"},)
    )
    entry = EntryWritten(entry_id="places-1", kind="places", version=1, label="schools", blob=ref)
    chats.append("schools", "run-1", [question, entry])
    chats.append(
        "schools", "run-2", [FetchMissed(tool="search", provider="offline", reason="no stops")]
    )
    store.close()
    return str(path)


def test_list_and_show(db: str) -> None:
    listed = runner.invoke(app, ["chats", "list", "--store", db])
    assert listed.exit_code == 0, listed.output
    assert "schools" in listed.stdout and "Schools far from a stop?" in listed.stdout
    shown = runner.invoke(app, ["chats", "show", "schools", "--store", db])
    assert shown.exit_code == 0, shown.output
    lines = shown.stdout.splitlines()
    assert len(lines) == 4
    assert "message_added" in lines[1] and "user: Schools far from a stop?" in lines[1]
    assert "places-1 v1 'schools' (42 bytes)" in lines[2]
    assert lines[3].endswith("search via offline: no stops")
    one_run = runner.invoke(app, ["chats", "show", "schools", "--run", "run-2", "--store", db])
    assert len(one_run.stdout.splitlines()) == 1


def test_export_then_import_restores_the_chat(db: str, tmp_path: Path) -> None:
    out = tmp_path / "schools.json"
    exported = runner.invoke(app, ["chats", "export", "schools", "-o", str(out), "--store", db])
    assert exported.exit_code == 0, exported.output
    assert json.loads(out.read_text())["format"] == "geomint-chat"
    other = str(tmp_path / "other.db")
    imported = runner.invoke(app, ["chats", "import", str(out), "--store", other])
    assert imported.exit_code == 0, imported.output
    first, second = Chats(SQLiteStore(db)), Chats(SQLiteStore(other))
    assert first.open("schools") == second.open("schools")
    again = runner.invoke(app, ["chats", "import", str(out), "--store", other])
    assert again.exit_code == 2
    assert "chat 'schools' already exists" in again.stderr


@pytest.mark.parametrize(("format_", "name"), [("notebook", "schools.ipynb"), ("script", "s.py")])
def test_export_as_a_notebook_or_script_writes_its_inputs_beside_it(
    db: str, tmp_path: Path, format_: str, name: str
) -> None:
    out = tmp_path / name
    result = runner.invoke(
        app, ["chats", "export", "schools", "--format", format_, "-o", str(out), "--store", db]
    )
    assert result.exit_code == 0, result.output
    folder = out.with_suffix(".replay")
    assert f"exported schools as a {format_} to {out}, its inputs to {folder}/" in result.stdout
    assert "Schools far from a stop" in out.read_text(encoding="utf-8")
    assert json.loads((folder / "chat.json").read_text())["format"] == "geomint-replay"


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["chats", "show", "nope"], "no chat 'nope' in this store"),
        (["chats", "export", "nope", "-o", "x.json"], "no chat 'nope' in this store"),
        (
            ["chats", "export", "nope", "--format", "notebook", "-o", "x.ipynb"],
            "no chat 'nope' in this store",
        ),
    ],
)
def test_usage_errors_exit_2(db: str, args: list[str], message: str) -> None:
    result = runner.invoke(app, [*args, "--store", db])
    assert result.exit_code == 2
    assert message in result.stderr


def test_a_corrupt_database_is_reported_not_harmed(tmp_path: Path) -> None:
    bad = tmp_path / "bad.db"
    bad.write_bytes(b"this is not a database" * 100)
    result = runner.invoke(app, ["chats", "list", "--store", str(bad)])
    assert result.exit_code == 2
    assert "cannot be opened as a geomint store" in result.stderr
    assert bad.read_bytes() == b"this is not a database" * 100


def test_delete_then_purge(db: str) -> None:
    deleted = runner.invoke(app, ["chats", "delete", "schools", "--store", db])
    assert deleted.exit_code == 0, deleted.output
    assert "no chats" in runner.invoke(app, ["chats", "list", "--store", db]).stdout
    assert "schools" in runner.invoke(app, ["chats", "list", "--all", "--store", db]).stdout
    purged = runner.invoke(app, ["chats", "purge", "--store", db])
    assert purged.stdout.splitlines() == ["purged 1 deleted chat", "  schools"]
    assert SQLiteStore(db).chat_ids() == []
    missing = runner.invoke(app, ["chats", "delete", "schools", "--store", db])
    assert missing.exit_code == 2
    assert "no chat 'schools' in this store" in missing.stderr
