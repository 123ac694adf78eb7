"""Chats as notebooks that recompute their figures.

:func:`export_chat` writes a stored chat as a Jupyter notebook (or a Python script): a
markdown cell per question and answer, a ``%%replay`` cell per analysis with its exact
code, and beside it a folder with the exact bytes of every entry version the analyses
read. :func:`open_replay` is what the notebook runs: it checks each saved input against
the sha256 the chat recorded before anything runs, then re-runs each analysis in
geomint's sandbox (never in the notebook's kernel) and reports, cell by cell, every
figure equal to the chat's or both values side by side. See ``docs/chats.md``.

Not to be confused with :mod:`geomint.sources.replay` (recorded catalogue answers).
"""

from __future__ import annotations

from pathlib import Path

from geomint.replay._bundle import Bundle, read_chat
from geomint.replay._runtime import (
    CellReport,
    FigureCheck,
    InputChangedError,
    LayerCheck,
    Replay,
    ReplayError,
    open_replay,
)
from geomint.replay._write import (
    ExportFormat,
    data_folder,
    escape_markdown,
    notebook_text,
    script_text,
    write_export,
    zip_export,
)
from geomint.store import Chats

__all__ = [
    "Bundle",
    "CellReport",
    "ExportFormat",
    "FigureCheck",
    "InputChangedError",
    "LayerCheck",
    "Replay",
    "ReplayError",
    "data_folder",
    "escape_markdown",
    "export_chat",
    "export_zip",
    "notebook_text",
    "open_replay",
    "read_chat",
    "script_text",
]


def export_chat(chats: Chats, chat_id: str, output: Path, format: ExportFormat) -> Path:
    """Write a stored chat as a notebook or script at ``output``, its inputs beside it.

    Returns:
        The folder the inputs went to (``output`` with the suffix ``.replay``).

    Raises:
        NoSuchChatError: The store has no such chat.
    """
    return write_export(read_chat(chats, chat_id), output, format)


def export_zip(chats: Chats, chat_id: str, name: str, format: ExportFormat) -> bytes:
    """A stored chat's notebook (or script) named ``name`` and its inputs, as a zip."""
    return zip_export(read_chat(chats, chat_id), name, format)
