"""An exported notebook, run as a person would run it (nbclient and ipykernel, the kernel
in a fresh virtual environment made by the test): every figure recomputed in the sandbox
and checked against the chat's ledger, a changed input refused before anything runs."""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys
import sysconfig
from pathlib import Path
from typing import Any

import nbformat
import pytest
from nbclient import NotebookClient
from nbclient.exceptions import CellExecutionError

from geomint.provenance import hash_code
from geomint.replay import export_chat
from geomint.state import AnalysisRecorded, EntryWritten, LayerMinted
from geomint.store import Chats

pytestmark = pytest.mark.slow


#: The kernel the notebooks run on, named so that no kernel a developer installed elsewhere
#: (``~/.local/share/jupyter``) is picked instead.
KERNEL = "geomint-replay-test"


@pytest.fixture(scope="session")
def fresh_python(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A new virtual environment, made here with ``venv`` (no pip, no network), in which
    geomint and ipykernel are installed by linking this environment's packages into it
    (a ``.pth`` line that adds them as a site directory, editable install included): the
    kernel is its own interpreter and prefix, sharing nothing with this process but the
    packages' files."""
    root = tmp_path_factory.mktemp("fresh-venv")
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(root)], check=True)
    python = root / "bin" / "python"
    purelib = subprocess.run(
        [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        check=True, capture_output=True, text=True,
    ).stdout.strip()  # fmt: skip
    ours = sysconfig.get_paths()["purelib"]
    (Path(purelib) / "geomint-test.pth").write_text(
        f"import site; site.addsitedir({ours!r})\n", encoding="utf-8"
    )
    return python


@pytest.fixture(autouse=True)
def _kernel(
    tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch, fresh_python: Path
) -> None:
    root = tmp_path_factory.mktemp("jupyter")
    spec = root / "kernels" / KERNEL
    spec.mkdir(parents=True)
    argv = [str(fresh_python), "-m", "ipykernel_launcher", "-f", "{connection_file}"]
    kernel = {"argv": argv, "display_name": KERNEL, "language": "python"}
    (spec / "kernel.json").write_text(json.dumps(kernel), encoding="utf-8")
    monkeypatch.setenv("JUPYTER_PATH", str(root))


def test_the_kernel_is_a_fresh_environment(fresh_python: Path) -> None:
    said = subprocess.run(
        [str(fresh_python), "-c", "import sys, geomint, ipykernel; print(sys.prefix)"],
        check=True, capture_output=True, text=True,
    ).stdout.strip()  # fmt: skip
    assert said == str(fresh_python.parent.parent) != sys.prefix


def _run(path: Path) -> Any:
    notebook = nbformat.read(path, as_version=4)
    client = NotebookClient(
        notebook, timeout=300, kernel_name=KERNEL, resources={"metadata": {"path": path.parent}}
    )
    try:
        client.execute()
    finally:
        nbformat.write(notebook, path)
    return notebook


def _text(cell: Any) -> str:
    return "".join(o.get("text", "") for o in cell.get("outputs", []))


def test_the_notebook_recomputes_every_figure_of_the_chat(
    demo_chat: tuple[Chats, str], tmp_path: Path
) -> None:
    chats, chat_id = demo_chat
    records = [e.body for e in chats.trace(chat_id) if isinstance(e.body, AnalysisRecorded)]
    assert len(records) >= 10 and any(r.output_format == "chart" for r in records)
    assert any(r.trigger is not None for r in records)  # a monitor's re-run
    export_chat(chats, chat_id, tmp_path / "chat.ipynb", "notebook")

    notebook = _run(tmp_path / "chat.ipynb")

    cells = [c for c in notebook.cells if c.cell_type == "code" and "geomint" in c.metadata]
    assert [c.metadata["geomint"]["analysis_id"] for c in cells] == [r.analysis_id for r in records]
    for cell, record in zip(cells, records, strict=True):
        head, _, code = cell.source.partition("\n")
        assert (head, code) == (f"%%replay {record.analysis_id}", record.code)
        report = _text(cell)
        assert report.startswith(f"{record.analysis_id}: reproduced (ran in geomint's sandbox, "), (
            report
        )
        assert "edited" not in report and "DIFFERS" not in report
        figures = [line for line in report.splitlines() if line.startswith("  v")]
        assert len(figures) == len(record.values), report
        assert all(line.endswith(": equal to the chat's") for line in figures), report
    # A raster layer minted by code is compared cell for cell with the one the store kept.
    layered = [(c, r) for c, r in zip(cells, records, strict=True) if r.layers]
    assert layered
    for cell, record in layered:
        assert f"layer {record.layers[0]} " in _text(cell)
        assert "cells, every one equal" in _text(cell)
    minted = sum(len(r.values) for r in records)
    assert minted >= 30
    assert (
        _text(notebook.cells[-1])
        .strip()
        .endswith(f"{len(records)} of {len(records)} analyses reproduced")
    )


def test_a_changed_input_is_reported_by_its_hash_before_anything_runs(
    demo_chat: tuple[Chats, str], tmp_path: Path
) -> None:
    chats, chat_id = demo_chat
    folder = export_chat(chats, chat_id, tmp_path / "chat.ipynb", "notebook")
    blob = sorted((folder / "blobs").iterdir())[0]
    data = bytearray(blob.read_bytes())
    data[len(data) // 2] ^= 1
    blob.write_bytes(bytes(data))

    with pytest.raises(CellExecutionError) as raised:
        _run(tmp_path / "chat.ipynb")

    assert "InputChangedError" in str(raised.value)
    assert f"{blob.name}: its sha256 is {hashlib.sha256(data).hexdigest()}" in str(raised.value)
    notebook = nbformat.read(tmp_path / "chat.ipynb", as_version=4)
    analyses = [c for c in notebook.cells if c.cell_type == "code" and "geomint" in c.metadata]
    assert analyses and all(not c.get("outputs") for c in analyses)


def test_the_saved_inputs_are_the_blobs_the_store_holds(
    demo_chat: tuple[Chats, str], tmp_path: Path
) -> None:
    chats, chat_id = demo_chat
    folder = export_chat(chats, chat_id, tmp_path / "chat.ipynb", "notebook")
    events = [e.body for e in chats.trace(chat_id)]
    written = {(b.entry_id, b.version): b.blob for b in events if isinstance(b, EntryWritten)}
    read = {
        written[(i.entry_id, i.version)].sha256
        for b in events
        if isinstance(b, AnalysisRecorded)
        for i in b.inputs
    }
    saved = {p.name: p.read_bytes() for p in (folder / "blobs").iterdir()}
    layers = {
        written[(b.layer.entry.entry_id, b.layer.entry.version)].sha256
        for b in events
        if isinstance(b, LayerMinted) and b.layer.minted_by.startswith("a")
    }
    assert set(saved) == read | layers
    for sha, data in saved.items():
        assert hashlib.sha256(data).hexdigest() == sha
        ref = next(r for r in written.values() if r.sha256 == sha)
        assert data == chats.read_blob(chat_id, ref)
    manifest = json.loads((folder / "chat.json").read_text(encoding="utf-8"))
    assert manifest["chat_id"] == chat_id


def test_the_script_recomputes_every_figure(demo_chat: tuple[Chats, str], tmp_path: Path) -> None:
    chats, chat_id = demo_chat
    export_chat(chats, chat_id, tmp_path / "chat.py", "script")

    done = subprocess.run(
        [sys.executable, str(tmp_path / "chat.py")],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
        cwd=tmp_path,
    )

    assert done.returncode == 0, done.stderr
    analyses = sum(isinstance(e.body, AnalysisRecorded) for e in chats.trace(chat_id))
    assert done.stdout.rstrip().endswith(f"{analyses} of {analyses} analyses reproduced")
    assert "NOT reproduced" not in done.stdout


def test_code_ipython_would_read_as_prompts_still_runs_as_recorded(
    demo_chat: tuple[Chats, str], tmp_path: Path
) -> None:
    chats, chat_id = demo_chat
    folder = export_chat(chats, chat_id, tmp_path / "chat.ipynb", "notebook")
    # Code whose first line IPython would take for a doctest prompt, and strip from every
    # line of the cell: the recorded code must run, not IPython's reading of it.
    manifest = json.loads((folder / "chat.json").read_text(encoding="utf-8"))
    code = '...\ndoc = """\n>>> kept\n"""\n' + manifest["analyses"]["a1"]["code"]
    manifest["analyses"]["a1"].update(code=code, code_hash=hash_code(code))
    (folder / "chat.json").write_text(json.dumps(manifest), encoding="utf-8")
    notebook = nbformat.read(tmp_path / "chat.ipynb", as_version=4)
    first = next(c for c in notebook.cells if c.metadata.get("geomint"))
    first.source = f"%%replay a1\n{code}"
    notebook.cells = [notebook.cells[1], first]
    nbformat.write(notebook, tmp_path / "chat.ipynb")

    report = _text(_run(tmp_path / "chat.ipynb").cells[1])

    assert report.startswith("a1: reproduced"), report
    assert "edited" not in report
