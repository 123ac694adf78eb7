"""What an export holds: the chat's words only as escaped markdown and string literals,
the exact code of each analysis, and a replay that reports a differing figure with both
values and refuses to run unconfined; every fixture chat an earlier geomint wrote with
analyses in it replays its figures."""

from __future__ import annotations

import ast
import gzip
import json
import re
from pathlib import Path

import nbformat
import pytest
from markdown_it import MarkdownIt

from geomint.errors import UsageError
from geomint.replay import (
    InputChangedError,
    ReplayError,
    escape_markdown,
    export_chat,
    open_replay,
    read_chat,
)
from geomint.store import Chats, MemoryStore

from .conftest import HOSTILE


def test_chat_text_reaches_a_notebook_as_inert_markdown(
    demo_chat: tuple[Chats, str], tmp_path: Path
) -> None:
    chats, chat_id = demo_chat
    export_chat(chats, chat_id, tmp_path / "chat.ipynb", "notebook")
    notebook = nbformat.read(tmp_path / "chat.ipynb", as_version=4)

    # The code cells are ours: the set-up, one %%replay cell per analysis, the summary.
    code = [c.source for c in notebook.cells if c.cell_type == "code"]
    assert code[0].startswith("from geomint.replay import open_replay")
    assert all(s.startswith("%%replay a") for s in code[1:-1])
    assert code[-1] == "print(replay.summary())"
    assert not any("alert" in s or "javascript" in s for s in code)
    # In markdown, no chat text becomes HTML, a link, an image, emphasis, math or code.
    html = MarkdownIt("commonmark").render(
        "\n\n".join(c.source for c in notebook.cells if c.cell_type == "markdown")
    )
    assert not re.search(r"<(img|script|a|b|pre)\b", html)
    # no dollar sign: only its character reference in a code element, which MathJax skips
    assert "$" not in "\n".join(c.source for c in notebook.cells)
    assert "&lt;img src=x onerror=&quot;alert(1)&quot;&gt;" in html
    assert "[a](javascript:b)" in html and "%%bash" in html
    assert "&lt;b&gt;x&lt;/b&gt; [a](javascript:b)" in html  # the title


def test_a_folder_named_after_any_title_is_opened_by_its_exact_name(
    demo_chat: tuple[Chats, str], tmp_path: Path
) -> None:
    chats, chat_id = demo_chat
    name = 'Kahvilat 🙂 "quoted" \' \\.ipynb'
    folder = export_chat(chats, chat_id, tmp_path / name, "notebook")
    notebook = nbformat.read(tmp_path / name, as_version=4)
    setup = ast.parse(notebook.cells[1].source).body[-1]
    assert isinstance(setup, ast.Assign) and isinstance(setup.value, ast.Call)
    assert (
        ast.literal_eval(setup.value.args[0])
        == folder.name
        == name.removesuffix(".ipynb") + ".replay"
    )


def test_chat_text_reaches_a_script_only_as_string_literals(
    demo_chat: tuple[Chats, str], tmp_path: Path
) -> None:
    chats, chat_id = demo_chat
    export_chat(chats, chat_id, tmp_path / "chat.py", "script")
    tree = ast.parse((tmp_path / "chat.py").read_text(encoding="utf-8"))

    strings = [n.value for n in ast.walk(tree) if isinstance(n, ast.Constant)]
    assert HOSTILE.strip() in strings
    names = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name)}
    assert names == {"Path", "__file__", "open_replay", "print", "replay"}
    calls = {
        n.func.attr for n in ast.walk(tree) if isinstance(n, ast.Call) and
        isinstance(n.func, ast.Attribute)
    }  # fmt: skip
    assert calls == {"run", "text", "join", "summary", "close"}


def test_figures_cited_in_an_answer_read_as_values(demo_chat: tuple[Chats, str]) -> None:
    chats, chat_id = demo_chat
    bundle = read_chat(chats, chat_id)

    answers = [c for c in bundle.cells if getattr(c, "role", None) == "assistant"]
    cited = [text for c in answers for text, is_cited in c.segments if is_cited]
    assert "1,346 places" in cited
    assert not any("{v" in text for c in answers for text, _ in c.segments)


def test_escape_markdown_keeps_the_text_and_line_breaks() -> None:
    escaped = escape_markdown("a <b> & c\r\nd\x00e")
    assert escaped == "a \\<b\\> \\& c  \nde"
    # Spaces of every width stay; what reorders the text around it goes.
    assert (
        escape_markdown("the\u00a0twelve\u202flargest\u202e!") == "the\u00a0twelve\u202flargest\\!"
    )
    assert MarkdownIt("commonmark").render(escaped) == "<p>a &lt;b&gt; &amp; c<br />\nde</p>\n"


def test_a_differing_figure_is_reported_with_both_values(
    demo_chat: tuple[Chats, str], tmp_path: Path
) -> None:
    chats, chat_id = demo_chat
    folder = export_chat(chats, chat_id, tmp_path / "chat.ipynb", "notebook")
    replay = open_replay(folder, magic=False)
    try:
        record = replay.analysis("a1")
        edited = record["code"].replace("len(places", "1 + len(places")
        assert edited != record["code"]

        report = replay.run("a1", edited)
    finally:
        replay.close()

    assert not report.reproduced and not report.code_as_recorded
    first = report.figures[0]
    assert (first.status, first.replayed) == ("differs", first.recorded + 1)
    text = report.text()
    assert "a1: NOT reproduced" in text and "the code was edited" in text
    assert (
        f"v1 'places counted': DIFFERS: the chat has {first.recorded} places, "
        f"the replay {first.recorded + 1} places"
    ) in text


def test_an_input_changed_after_opening_stops_its_analysis_before_it_runs(
    demo_chat: tuple[Chats, str], tmp_path: Path
) -> None:
    chats, chat_id = demo_chat
    folder = export_chat(chats, chat_id, tmp_path / "chat.ipynb", "notebook")
    replay = open_replay(folder, magic=False)
    try:
        sha = replay.analysis("a1")["inputs"][0]["sha256"]
        (folder / "blobs" / sha).write_bytes(b"{}")
        with pytest.raises(InputChangedError, match=f"{sha}: its sha256 is"):
            replay.run("a1")
        assert replay.reports == {} and replay._sandbox is None
    finally:
        replay.close()


def test_a_replay_never_runs_in_process(demo_chat: tuple[Chats, str], tmp_path: Path) -> None:
    chats, chat_id = demo_chat
    folder = export_chat(chats, chat_id, tmp_path / "chat.ipynb", "notebook")
    with pytest.raises(UsageError, match="never runs unconfined"):
        open_replay(folder, mode="in-process")


def test_a_manifest_cannot_point_the_replay_outside_its_blobs(
    demo_chat: tuple[Chats, str], tmp_path: Path
) -> None:
    chats, chat_id = demo_chat
    folder = export_chat(chats, chat_id, tmp_path / "chat.ipynb", "notebook")
    manifest = json.loads((folder / "chat.json").read_text(encoding="utf-8"))
    manifest["blobs"]["../../chat.ipynb"] = {"size": 1, "media_type": "application/geo+json"}
    (folder / "chat.json").write_text(json.dumps(manifest), encoding="utf-8")
    with pytest.raises(ReplayError, match=r"'\.\./\.\./chat\.ipynb' in chat\.json is not a sha256"):
        open_replay(folder, magic=False)


def test_figures_a_tool_minted_without_code_are_named_as_not_recomputed(tmp_path: Path) -> None:
    chats, chat_id = _imported("s16-population-of-helsinki-against-espoo")
    folder = export_chat(chats, chat_id, tmp_path / "chat.ipynb", "notebook")
    replay = open_replay(folder, magic=False)

    assert replay.summary().splitlines() == [
        "minted by tools, not by code here, so not recomputed: v1, v2",
        "0 of 0 analyses reproduced",
    ]


FIXTURES = Path(__file__).parents[1] / "fixtures" / "chats"


def _imported(name: str) -> tuple[Chats, str]:
    """A fixture chat (written by an earlier geomint), imported into a store in memory."""
    data = json.loads(gzip.decompress((FIXTURES / f"{name}.json.gz").read_bytes()))
    chats = Chats(MemoryStore())
    return chats, chats.import_(data["export"])


def _with_analyses() -> list[str]:
    names = []
    for path in sorted(FIXTURES.glob("*.json.gz")):
        events = json.loads(gzip.decompress(path.read_bytes()))["export"]["events"]
        if any(e["body"]["type"] == "analysis_recorded" for e in events):
            names.append(path.name.removesuffix(".json.gz"))
    return names


@pytest.mark.slow
@pytest.mark.parametrize("name", _with_analyses())
def test_every_fixture_chat_with_analyses_replays_its_figures(name: str, tmp_path: Path) -> None:
    chats, chat_id = _imported(name)
    folder = export_chat(chats, chat_id, tmp_path / "chat.py", "script")
    replay = open_replay(folder, magic=False)
    try:
        reports = [replay.run(analysis_id) for analysis_id in replay.manifest["analyses"]]
    finally:
        replay.close()

    assert reports
    for report in reports:
        assert report.reproduced, report.text()
        assert report.code_as_recorded
