"""Chat text an outside review got past the notebook's escaping (issue 22), kept as tests:
MathJax reads the rendered page, so a dollar sign escaped for markdown came back as math;
a title-derived folder name reached the first cell unescaped; and the script printed the
chat's words with their terminal escape sequences. Plus the saved inputs a received
archive may hold: links and special files are refused, not followed or read."""

from __future__ import annotations

import ast
import html
import io
import json
import os
import re
import zipfile
from pathlib import Path

import pytest
from markdown_it import MarkdownIt

from geomint.replay import Bundle, escape_markdown, script_text, zip_export
from geomint.replay._bundle import MessageCell
from geomint.server.exports import safe_filename


def _dom_text(markdown: str) -> str:
    """The text MathJax scans once CommonMark has rendered ``markdown``: every text node
    but those inside code elements, which it skips."""
    rendered = MarkdownIt("commonmark").render(markdown)
    rendered = re.sub(r"<code>.*?</code>", " ", rendered, flags=re.S)
    return html.unescape(re.sub(r"<[^>]+>", "", rendered))


def test_escaped_dollars_do_not_reach_mathjax_as_delimiters() -> None:
    # JupyterLab typesets the rendered DOM text with $..$ delimiters (mathjax-extension,
    # AllPackages, processEscapes): backslash-escaping `$` in markdown leaves a bare `$`.
    md = escape_markdown(r"$\href{https://evil.example}{verified}$")
    text = _dom_text(md)
    assert not re.search(r"\$[^$]+\$", text), f"MathJax would typeset: {text!r}"


def test_title_derived_folder_name_is_not_markdown() -> None:
    title = "x` ![](https&#58;&#47;&#47;ev.il&#47;p) [Verify](https&#58;&#47;&#47;ev.il) `"
    name = safe_filename(title, "ipynb")  # as routes/exports.py names the web export
    bundle = Bundle(
        chat_id="c1",
        title=title,
        cells=(),
        blobs={},
        manifest={"format": "geomint-replay", "version": 1, "analyses": {}, "blobs": {}},
    )
    archive = zipfile.ZipFile(io.BytesIO(zip_export(bundle, name, "notebook")))
    first = "".join(json.loads(archive.read(name))["cells"][0]["source"])
    html = MarkdownIt("commonmark").render(first)
    assert "<img" not in html and "<a " not in html, html


def test_script_prints_no_terminal_control_sequences() -> None:
    evil = "ok \x1b]52;c;ZWNobyBwd25lZA==\x07\x1b[1A\x1b[2K\x1b[32mreproduced\x1b[0m"
    bundle = Bundle(
        chat_id="c1",
        title=None,
        blobs={},
        cells=(MessageCell(role="assistant", segments=((evil, False),)),),
        manifest={"format": "geomint-replay", "version": 1, "analyses": {}, "blobs": {}},
    )
    line = next(x for x in script_text(bundle, "c.replay").splitlines() if "geomint: " in x)
    literal = line.removeprefix("print(").removesuffix(")")
    printed = "".join(ast.literal_eval(part) for part in literal.split(" + "))
    assert "\x1b" not in printed and "\x07" not in printed, repr(printed)
    assert printed.endswith("reproduced[0m")  # the words kept, only the controls gone


@pytest.mark.parametrize("kind", ["link", "fifo", "device"])
def test_a_saved_input_that_is_not_a_plain_file_is_refused(tmp_path: Path, kind: str) -> None:
    from geomint.replay._runtime import read_blob

    blob = tmp_path / ("0" * 64)
    if kind == "link":
        secret = tmp_path / "secret"
        secret.write_text("the recipient's own file")
        blob.symlink_to(secret)
    elif kind == "fifo":
        os.mkfifo(blob)  # a read would hang the kernel
    else:
        blob.symlink_to("/dev/zero")
    with pytest.raises(OSError) as refused:
        read_blob(blob)
    assert refused.value.strerror in ("a link, not a file", "not a regular file")
