"""Writing a chat as a notebook or a script, with its inputs in a folder beside it.

The chat's words (questions, answers, labels, the title) reach a notebook only as
markdown in which every ASCII punctuation character is escaped, so no text can become
HTML, a link, an image or math; and a script only as string literals written by
:func:`repr`. An analysis's code is the body of a ``%%replay`` cell, which the kernel
hands to geomint's sandbox as text, or in a script a list of ``repr`` lines.
"""

from __future__ import annotations

import io
import json
import string
import unicodedata
import zipfile
from pathlib import Path
from typing import Any, Final, Literal

import nbformat

from geomint.replay._bundle import Bundle, MessageCell

__all__ = [
    "ExportFormat",
    "data_folder",
    "escape_markdown",
    "notebook_text",
    "script_text",
    "write_export",
    "zip_export",
]

ExportFormat = Literal["notebook", "script"]
_PUNCTUATION: Final = frozenset(string.punctuation)
# MathJax's delimiters as code elements, their text as character references (a code span
# would merge with its neighbour: `$``\` is one span, not two).
_MATH: Final = {"$": "<code>&#36;</code>", "\\": "<code>&#92;</code>"}
_BIDI_CONTROLS: Final = frozenset(
    "\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069"
)
_SPEAKERS: Final = {"user": "You", "assistant": "geomint"}
#: nbformat has no type hints: its calls are typed where they are used.
_nb: Any = nbformat


def escape_markdown(text: str) -> str:
    r"""Text as markdown that shows exactly it: no HTML, links, emphasis or math.

    Every ASCII punctuation character is backslash-escaped (CommonMark shows an escaped
    one as itself), control and text-direction characters are dropped, and each line
    break is kept as a hard break.

    A dollar sign and a backslash become code elements: markdown would give them back as
    themselves, and the notebook's MathJax, which reads the rendered text, would take
    ``$...$`` or ``\\(...\\)`` as math (links and styled text among them); it skips code.

    >>> escape_markdown("<b>5</b> [x](javascript:y) $a$")
    '\\<b\\>5\\<\\/b\\> \\[x\\]\\(javascript\\:y\\) <code>&#36;</code>a<code>&#36;</code>'
    """
    lines = []
    for line in text.splitlines():
        kept = "".join(_escaped(c) for c in line.strip() if not _dropped(c))
        lines.append(kept)
    return "  \n".join(lines)


def _escaped(char: str) -> str:
    if char in _MATH:
        return _MATH[char]
    return "\\" + char if char in _PUNCTUATION else char


def plain(text: str) -> str:
    """``text`` without control and text-direction characters: safe to print to a
    terminal (no escape sequence can retitle it, move its cursor or write the clipboard)."""
    return "".join(c for c in text if c in "\n\t" or not _dropped(c))


def _dropped(char: str) -> bool:
    """Control characters, and those that reorder the text around them (which could show
    it as something else than it is); spaces of every width are kept."""
    return char != "\t" and (unicodedata.category(char) == "Cc" or char in _BIDI_CONTROLS)


def _message_markdown(cell: MessageCell) -> str:
    body = "".join(
        f"**{escape_markdown(text)}**" if cited and text.strip() else escape_markdown(text)
        for text, cited in cell.segments
    )
    return f"**{_SPEAKERS[cell.role]}:** {body}"


def data_folder(output: Path) -> Path:
    """The folder an export's inputs go to: ``cafes.ipynb`` -> ``cafes.replay``."""
    return output.with_suffix(".replay")


def _title(bundle: Bundle) -> str:
    return escape_markdown(bundle.title or f"chat {bundle.chat_id}")


def notebook_text(bundle: Bundle, folder_name: str) -> str:
    """The chat as a Jupyter notebook (nbformat 4), reading its inputs from ``folder_name``."""
    notebook = _nb.v4.new_notebook()
    notebook.metadata["geomint"] = {"chat_id": bundle.chat_id, "inputs": folder_name}
    notebook.metadata["kernelspec"] = {
        "name": "python3",
        "display_name": "Python 3",
        "language": "python",
    }
    cells = [
        _nb.v4.new_markdown_cell(
            f"# {_title(bundle)}\n\n"
            "A geomint chat, exported so that its figures can be recomputed. Each analysis "
            "cell below runs its code in geomint's sandbox (never in this kernel) over the "
            "exact inputs the chat read, saved in "
            f"{escape_markdown(folder_name + '/')}, and checks every figure it mints against "
            "the value the chat recorded."
        ),
        _nb.v4.new_code_cell(
            "from geomint.replay import open_replay\n\n"
            "# Checks every saved input against the sha256 the chat recorded before anything "
            "runs,\n# and registers the %%replay cell magic.\n"
            f"replay = open_replay({folder_name!r})"
        ),
    ]
    for cell in bundle.cells:
        if isinstance(cell, MessageCell):
            cells.append(_nb.v4.new_markdown_cell(_message_markdown(cell)))
        else:
            cells.append(_nb.v4.new_markdown_cell(f"*{escape_markdown(cell.heading)}*"))
            code = _nb.v4.new_code_cell(f"%%replay {cell.analysis_id}\n{cell.code}")
            code.metadata["geomint"] = {"analysis_id": cell.analysis_id}
            cells.append(code)
    cells.append(_nb.v4.new_code_cell("print(replay.summary())"))
    notebook.cells = cells
    _nb.validate(notebook)
    return str(_nb.writes(notebook))


def script_text(bundle: Bundle, folder_name: str) -> str:
    """The chat as a Python script: messages and code as string literals, never as code."""
    out = [
        '"""A geomint chat, exported so that its figures can be recomputed.',
        "",
        "Each analysis runs in geomint's sandbox over the inputs saved beside this file; the",
        "chat's words are printed, and its code is handed to the sandbox as text.",
        '"""',
        "",
        "from pathlib import Path",
        "",
        "from geomint.replay import open_replay",
        "",
        f"replay = open_replay(Path(__file__).parent / {folder_name!r})",
        "",
        f"print({plain(bundle.title or f'chat {bundle.chat_id}')!r})",
    ]
    for cell in bundle.cells:
        out.append("")
        if isinstance(cell, MessageCell):
            text = "".join(t for t, _ in cell.segments)
            out.append(f"print({_SPEAKERS[cell.role] + ': '!r} + {plain(text)!r})")
        else:
            out.append(f"# {cell.analysis_id}")
            out.append(f"print({plain(cell.heading)!r})")
            lines = "".join(f"\n        {line!r}," for line in cell.code.split("\n"))
            out.append(
                f"print(replay.run({cell.analysis_id!r}, code='\\n'.join([{lines}\n    ])).text())"
            )
    out += ["", "print(replay.summary())", "replay.close()", ""]
    return "\n".join(out)


def _files(bundle: Bundle, output: Path, format: ExportFormat) -> dict[str, bytes]:
    """Every file of an export, by its path relative to ``output``'s folder."""
    folder = data_folder(output).name
    text = notebook_text(bundle, folder) if format == "notebook" else script_text(bundle, folder)
    files = {
        output.name: text.encode("utf-8"),
        f"{folder}/chat.json": json.dumps(bundle.manifest, ensure_ascii=False, indent=1).encode(),
    }
    for sha, data in bundle.blobs.items():
        files[f"{folder}/blobs/{sha}"] = data
    return files


def write_export(bundle: Bundle, output: Path, format: ExportFormat) -> Path:
    """Write the notebook (or script) to ``output`` and its inputs beside it.

    Returns:
        The inputs' folder.
    """
    for name, data in _files(bundle, output, format).items():
        path = output.parent / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
    return data_folder(output)


def zip_export(bundle: Bundle, name: str, format: ExportFormat) -> bytes:
    """The notebook (or script) named ``name`` and its inputs' folder, as one zip."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for path, data in _files(bundle, Path(name), format).items():
            archive.writestr(path, data)
    return buffer.getvalue()
