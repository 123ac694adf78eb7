"""The `geomint` command line: run-code's output, JSON mode and exit codes."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from geomint import confine
from geomint.cli import app

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"
runner = CliRunner()


def _write(tmp_path: Path, name: str, text: str) -> str:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return str(path)


def test_the_bundled_example_runs_isolated() -> None:
    result = runner.invoke(app, [
        "run-code", str(EXAMPLES / "places_by_category.py"),
        "--inputs", str(EXAMPLES / "places_by_category.inputs.json"), "--json",
    ])  # fmt: skip
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert data["ok"] is True
    assert data["value"]["type"] == "bar"
    assert data["value"]["data"]["labels"][0] == "museum"
    assert data["figures"][0]["label"] == "places counted"
    assert data["mode"] in {"isolated", "restricted"}


def test_human_output_shows_figures_and_result(tmp_path: Path) -> None:
    code = _write(tmp_path, "body.py", "mint.value(3, 'schools', unit='schools')\nreturn 3\n")
    result = runner.invoke(app, ["run-code", code, "--mode", "in-process"])
    assert result.exit_code == 0, result.output
    assert "figure: schools = 3 schools" in result.stdout
    assert "--- result ---\n3" in result.stdout


def test_refused_code_still_exits_zero(tmp_path: Path) -> None:
    code = _write(tmp_path, "body.py", "import os\nreturn os.getcwd()\n")
    result = runner.invoke(app, ["run-code", code, "--json", "--mode", "in-process"])
    assert result.exit_code == 0
    data = json.loads(result.stdout)
    assert data["ok"] is False
    assert data["violations"][0]["line"] == 1
    assert "import of `os` is not allowed" in data["violations"][0]["reason"]


def test_inputs_become_names(tmp_path: Path) -> None:
    code = _write(tmp_path, "body.py", "threshold * 2")
    inputs = _write(tmp_path, "in.json", '{"threshold": 21}')
    result = runner.invoke(app, ["run-code", code, "--inputs", inputs, "--json",
                                 "--mode", "in-process"])  # fmt: skip
    assert json.loads(result.stdout)["value"] == 42


@pytest.mark.parametrize(("text", "message"), [
    ("[1, 2]", "must be a JSON object"),
    ("{nope", "not readable JSON"),
    ('{"not-a-name": 1}', "not a Python identifier"),
])  # fmt: skip
def test_bad_inputs_are_a_usage_error(tmp_path: Path, text: str, message: str) -> None:
    code = _write(tmp_path, "body.py", "return 1")
    inputs = _write(tmp_path, "in.json", text)
    result = runner.invoke(app, ["run-code", code, "--inputs", inputs, "--mode", "in-process"])
    assert result.exit_code == 2
    assert message in result.stderr


def test_a_sandbox_that_cannot_start_exits_3(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def refuse(**_: object) -> None:
        raise confine.WorkerStartError("no worker on this machine")

    monkeypatch.setattr(confine, "WorkerProcess", refuse)
    code = _write(tmp_path, "body.py", "return 1")
    result = runner.invoke(app, ["run-code", code, "--mode", "isolated"])
    assert result.exit_code == 3
    assert "could not start" in result.stderr
    assert "no worker on this machine" in result.stderr


def test_ingest_reports_an_accepted_file(tmp_path: Path) -> None:
    fc = {"type": "FeatureCollection", "features": [
        {"type": "Feature", "geometry": {"type": "Point", "coordinates": [13.4, 52.5]},
         "properties": {"name": "Mitte", "rating": 4.5}},
    ]}  # fmt: skip
    path = _write(tmp_path, "places.geojson", json.dumps(fc))
    result = runner.invoke(app, ["ingest", path, "--json"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert data["accepted"] is True
    assert data["report"]["feature_count"] == 1
    assert data["profile"]["geometry_types"] == {"Point": 1}
    assert data["profile"]["bbox"] == [13.4, 52.5, 13.4, 52.5]


def test_ingest_refusal_is_a_judgement_not_a_failure(tmp_path: Path) -> None:
    path = _write(tmp_path, "swapped.geojson", '{"type": "Point", "coordinates": [52.5, 173.4]}')
    result = runner.invoke(app, ["ingest", path, "--json"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert data["accepted"] is False
    assert "[lng, lat], so write [173.4, 52.5]" in data["error"]
    human = runner.invoke(app, ["ingest", path])
    assert human.exit_code == 0
    assert human.stdout.startswith("refused: Cannot load")


def test_ingest_usage_errors_exit_2(tmp_path: Path) -> None:
    result = runner.invoke(app, ["ingest", str(tmp_path / "missing.geojson")])
    assert result.exit_code == 2
    assert "no such file" in result.stderr


def test_ingest_a_csv_says_format_and_crs(tmp_path: Path) -> None:
    path = _write(tmp_path, "stops.csv", "name,lat,lon\nCentraal,52.378,4.9\n")
    result = runner.invoke(app, ["ingest", path])
    assert result.exit_code == 0, result.output
    assert result.stdout.startswith(f"accepted: 1 features from {path} (csv, EPSG:4326)")


def test_ingest_refuses_a_private_url_as_a_judgement() -> None:
    result = runner.invoke(app, ["ingest", "http://127.0.0.1:9/a.geojson", "--json"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert data["accepted"] is False
    assert "127.0.0.1 is" in data["error"]
