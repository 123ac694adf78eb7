"""Downloads from the web app: each export read back and compared with what the chat holds,
CSV cells that cannot run as formulas, and file names that survive hostile labels."""

from __future__ import annotations

import ast
import csv
import io
import json
from asyncio import run
from collections.abc import Iterator
from email.message import Message
from pathlib import Path
from typing import Any
from urllib.parse import unquote

import geopandas
import httpx
import pandas
import pyarrow.parquet as pq
import pytest
import shapely
from shapely.geometry import shape
from tests.server.web import ask, call, make_agent
from typer.testing import CliRunner

from geomint.agent import MapAgent
from geomint.sandbox import Sandbox
from geomint.server import create_app
from geomint.server.exports import content_disposition, safe_filename
from geomint.store import SQLiteStore

_HOSTILE = {
    "formula": '=HYPERLINK("http://evil.test","click")',
    "plus": "+1+2",
    "minus": "-2-3",
    "at": "@SUM(A1)",
    "tab": "\t=1",
    "cr": "\r=1",
}
_MIXED = {
    "type": "FeatureCollection",
    "features": [
        {
            "type": "Feature",
            "properties": {
                "name": 'Café "Ursula", Ehrensvärdintie',
                "rank": -3,
                "score": 4.5,
                "open": True,
                "tags": {"cuisine": ["coffee", "cake"]},
                **_HOSTILE,
            },
            "geometry": {"type": "Point", "coordinates": [24.9561, 60.1571]},
        },
        {
            "type": "Feature",
            "properties": {"name": "harbour walk", "rank": 7, "score": None, "open": False},
            "geometry": {
                "type": "LineString",
                "coordinates": [[24.95, 60.16], [24.96, 60.165], [24.97, 60.17]],
            },
        },
        {
            "type": "Feature",
            "properties": {"name": "Tervasaari", "rank": None, "tags": ["island"]},
            "geometry": {
                "type": "Polygon",
                "coordinates": [[[24.96, 60.17], [24.97, 60.17], [24.97, 60.175], [24.96, 60.17]]],
            },
        },
    ],
}


@pytest.fixture
def agent(in_process: Sandbox) -> Iterator[MapAgent]:
    yield make_agent(in_process)


def _upload(app: Any, chat_id: str, name: str, collection: dict[str, Any]) -> dict[str, Any]:
    response = run(
        call(
            app,
            "POST",
            f"/api/chats/{chat_id}/uploads",
            params={"name": name},
            content=json.dumps(collection).encode(),
        )
    )
    assert response.status_code == 200, response.text
    added: dict[str, Any] = response.json()
    return added


def _stored(app: Any, chat_id: str, entry_id: str) -> dict[str, Any]:
    response = run(call(app, "GET", f"/api/chats/{chat_id}/entries/{entry_id}"))
    assert response.status_code == 200
    stored: dict[str, Any] = response.json()
    return stored


def _export(app: Any, url: str, **kwargs: Any) -> httpx.Response:
    response = run(call(app, "GET", url, **kwargs))
    assert response.status_code == 200, response.text
    return response


def _filename(response: httpx.Response) -> tuple[str, str]:
    """The ASCII ``filename`` and the decoded ``filename*`` of an attachment."""
    message = Message()
    message["content-disposition"] = response.headers["content-disposition"]
    assert message.get_content_disposition() == "attachment"
    plain = message.get_param("filename", header="content-disposition")
    extended = response.headers["content-disposition"].split("filename*=UTF-8''")[1]
    assert isinstance(plain, str)
    return plain, unquote(extended)


def _csv_rows(response: httpx.Response) -> list[dict[str, str]]:
    assert response.headers["content-type"] == "text/csv; charset=utf-8"
    text = response.content.decode("utf-8-sig")
    return list(csv.DictReader(io.StringIO(text, newline="")))


def test_a_layer_exports_as_its_stored_geojson_named_after_its_label(agent: MapAgent) -> None:
    app = create_app(agent)
    added = _upload(app, "ex", "harbour cafés.geojson", _MIXED)
    stored = _stored(app, "ex", added["entry_id"])
    response = _export(app, f"/api/chats/ex/entries/{added['entry_id']}/export?format=geojson")
    assert response.headers["content-type"] == "application/geo+json"
    assert response.json() == stored
    assert int(response.headers["content-length"]) == len(response.content)
    assert _filename(response) == ("harbour cafes.geojson", "harbour cafés.geojson")
    assert response.headers["x-content-type-options"] == "nosniff"


def test_a_new_chats_layer_exports_before_the_chat_is_stored(agent: MapAgent) -> None:
    app = create_app(agent)
    shown = run(call(app, "GET", "/api/new-chat/entries/places-1")).json()
    response = _export(app, "/api/chats/unsaved/entries/places-1/export?format=csv")
    rows = list(csv.DictReader(io.StringIO(response.text)))
    names = [f["properties"].get("name") or "" for f in shown["features"]]
    # Cells a spreadsheet would run ("@ Metallitalo") are quoted, as in every CSV export.
    assert [row["name"].removeprefix("'") for row in rows] == names
    assert _filename(response)[1] == "places in central Helsinki.csv"
    assert agent.chats.store.chat_ids() == []  # reading stores nothing
    missing = run(call(app, "GET", "/api/chats/unsaved/entries/byod-1/export"))
    assert missing.status_code == 404


def test_a_layer_exports_as_csv_with_wkt_lon_lat_and_json_for_nested_values(
    agent: MapAgent,
) -> None:
    app = create_app(agent)
    added = _upload(app, "ex", "cafes.geojson", _MIXED)
    stored = _stored(app, "ex", added["entry_id"])
    rows = _csv_rows(_export(app, f"/api/chats/ex/entries/{added['entry_id']}/export?format=csv"))
    names = list(dict.fromkeys(k for f in stored["features"] for k in f["properties"]))
    assert list(rows[0]) == [*names, "wkt", "lon", "lat"]
    assert len(rows) == len(stored["features"]) == 3
    for row, feature in zip(rows, stored["features"], strict=True):
        assert shapely.equals(shapely.from_wkt(row["wkt"]), shape(feature["geometry"]))
    point, line, polygon = rows
    assert (float(point["lon"]), float(point["lat"])) == (24.9561, 60.1571)
    assert line["lon"] == line["lat"] == polygon["lon"] == ""
    assert point["name"] == 'Café "Ursula", Ehrensvärdintie'
    assert (point["rank"], point["score"], point["open"]) == ("-3", "4.5", "true")
    assert json.loads(point["tags"]) == {"cuisine": ["coffee", "cake"]}
    assert json.loads(polygon["tags"]) == ["island"]
    assert (line["score"], line["open"], polygon["rank"]) == ("", "false", "")


def test_csv_cells_that_a_spreadsheet_would_run_are_neutralised(agent: MapAgent) -> None:
    app = create_app(agent)
    added = _upload(app, "inj", "=cmd|' /C calc'!A0.geojson", _MIXED)
    url = f"/api/chats/inj/entries/{added['entry_id']}/export?format=csv"
    (row, *_) = _csv_rows(_export(app, url))
    for key, value in _HOSTILE.items():
        assert row[key] == f"'{value}", key
    # A number stays a number: -3 is not a formula.
    assert row["rank"] == "-3"
    # Nothing in the file starts a cell with a formula character.
    text = _export(app, url).content.decode("utf-8-sig")
    for cells in csv.reader(io.StringIO(text, newline="")):
        for cell in cells:
            assert not cell.startswith(("=", "+", "@", "\t", "\r")), cell
            assert not cell.startswith("-") or cell == "-3", cell
    # Property names are cells too.
    hostile_key = {
        "type": "FeatureCollection",
        "features": [{"type": "Feature", "properties": {"=1+1": "x"}, "geometry": None}],
    }
    added = _upload(app, "inj", "keys.geojson", hostile_key)
    rows = _csv_rows(_export(app, f"/api/chats/inj/entries/{added['entry_id']}/export?format=csv"))
    assert next(iter(rows[0])) == "'=1+1"


def test_a_layer_exports_as_geoparquet_in_wgs84_equal_to_its_features(agent: MapAgent) -> None:
    app = create_app(agent)
    added = _upload(app, "pq", "cafes.geojson", _MIXED)
    stored = _stored(app, "pq", added["entry_id"])
    response = _export(app, f"/api/chats/pq/entries/{added['entry_id']}/export?format=parquet")
    assert response.headers["content-type"] == "application/vnd.apache.parquet"
    assert _filename(response)[1] == "cafes.parquet"
    metadata = json.loads(pq.read_metadata(io.BytesIO(response.content)).metadata[b"geo"])
    crs = metadata["columns"]["geometry"]["crs"]
    assert crs["id"] == {"authority": "EPSG", "code": 4326}
    frame = geopandas.read_parquet(io.BytesIO(response.content))
    assert frame.crs.to_epsg() == 4326
    assert len(frame) == len(stored["features"])
    for (_, row), feature in zip(frame.iterrows(), stored["features"], strict=True):
        assert shapely.equals(row.geometry, shape(feature["geometry"]))
        for key, value in feature["properties"].items():
            got = row[key]
            if isinstance(value, dict | list):
                assert json.loads(got) == value
            elif value is None:
                assert pandas.isna(got), key
            else:
                assert got == value, key
    assert str(frame["rank"].dtype) == "Int64"  # whole numbers with a gap stay whole


def test_an_older_version_is_exported_and_cached_as_that_version(agent: MapAgent) -> None:
    app = create_app(agent)
    run(call(app, "POST", "/api/chats/ver"))
    url = "/api/chats/ver/entries/places-1/export"
    named = _export(app, f"{url}?format=csv&version=1")
    assert named.headers["cache-control"] == "private, max-age=31536000, immutable"
    latest = _export(app, f"{url}?format=csv")
    assert latest.headers["cache-control"] == "private, no-cache"
    assert latest.headers["etag"] == named.headers["etag"]
    again = run(
        call(app, "GET", f"{url}?format=csv", headers={"if-none-match": latest.headers["etag"]})
    )
    assert again.status_code == 304 and not again.content
    other = _export(app, f"{url}?format=geojson")
    assert other.headers["etag"] != latest.headers["etag"]
    assert len(_csv_rows(latest)) == 1346
    assert run(call(app, "GET", f"{url}?version=9")).status_code == 404
    assert run(call(app, "GET", f"{url}?format=xlsx")).status_code == 422
    assert run(call(app, "GET", "/api/chats/ver/entries/places-9/export")).status_code == 404
    assert run(call(app, "GET", "/api/chats/nowhere/entries/byod-1/export")).status_code == 404


def test_a_chart_exports_its_data_and_a_figure_its_provenance(agent: MapAgent) -> None:
    app = create_app(agent)
    run(call(app, "POST", "/api/chats/ch"))
    text = "Bar chart of these places by category"
    assert run(call(app, "POST", "/api/chat", json=ask(text, "ch"))).status_code == 200
    parts = run(call(app, "GET", "/api/chats/ch/parts")).json()["parts"]
    (chart,) = [p for p in parts if p["type"] == "chart"]
    response = _export(app, f"/api/chats/ch/analyses/{chart['analysis_id']}/chart.csv")
    rows = _csv_rows(response)
    data = chart["config"]["data"]
    (dataset,) = data["datasets"]
    assert list(rows[0]) == ["label", dataset.get("label") or "dataset 1"]
    assert [r["label"] for r in rows] == data["labels"]
    assert [float(r[list(r)[1]]) for r in rows] == [float(v) for v in dataset["data"]]
    assert _filename(response)[1].endswith(".csv")

    (figure_part,) = [p for p in parts if p["type"] == "figure"]
    card = figure_part["figures"][0]
    response = _export(app, f"/api/chats/ch/figures/{card['id']}/export")
    figure = response.json()
    assert figure["figure"]["id"] == card["id"] and figure["figure"]["value"] == card["value"]
    assert figure["figure"]["sources"] == card["sources"]
    assert figure["figure"]["sources"][0]["publisher"] == "OpenStreetMap contributors"
    assert figure["figure"]["inputs"] == [{"entry_id": "places-1", "version": 1}]
    assert figure["analysis"]["analysis_id"] == card["minted_by"]
    assert figure["analysis"]["code_hash"] == figure["figure"]["code_hash"]
    assert figure["analysis"]["code"]
    assert _filename(response)[1] == f"{safe_filename(card['label'], 'json')}"
    assert run(call(app, "GET", "/api/chats/ch/figures/v99/export")).status_code == 404
    assert run(call(app, "GET", "/api/chats/ch/analyses/a99/chart.csv")).status_code == 404


def test_the_chat_exports_exactly_what_the_command_line_writes(
    in_process: Sandbox, tmp_path: Path
) -> None:
    from geomint.cli import app as cli

    path = tmp_path / "chats.db"
    store = SQLiteStore(path)
    agent = make_agent(in_process, store=store)
    app = create_app(agent)
    run(call(app, "POST", "/api/chats/whole"))
    question = "Bar chart of these places by category"
    assert run(call(app, "POST", "/api/chat", json=ask(question, "whole"))).status_code == 200
    response = _export(app, "/api/chats/whole/export")
    written = tmp_path / "whole.json"
    result = CliRunner().invoke(
        cli, ["chats", "export", "whole", "-o", str(written), "--store", str(path)]
    )
    assert result.exit_code == 0, result.output
    assert response.content == written.read_bytes()
    assert response.json()["format"] == "geomint-chat"
    assert _filename(response)[1] == f"{question}.json"
    assert run(call(app, "GET", "/api/chats/none-such/export")).status_code == 404
    store.close()


def test_the_chat_downloads_as_a_notebook_with_its_inputs_zipped(
    in_process: Sandbox, tmp_path: Path
) -> None:
    import zipfile

    agent = make_agent(in_process, store=SQLiteStore(tmp_path / "chats.db"))
    app = create_app(agent)
    run(call(app, "POST", "/api/chats/nb"))
    question = "Bar chart of these places by category"
    assert run(call(app, "POST", "/api/chat", json=ask(question, "nb"))).status_code == 200

    response = _export(app, "/api/chats/nb/export.zip")

    assert response.headers["content-type"] == "application/zip"
    assert _filename(response)[1] == f"{question}.zip"
    archive = zipfile.ZipFile(io.BytesIO(response.content))
    names = set(archive.namelist())
    assert {f"{question}.ipynb", f"{question}.replay/chat.json"} <= names
    blobs = [n for n in names if n.startswith(f"{question}.replay/blobs/")]
    assert blobs
    notebook = json.loads(archive.read(f"{question}.ipynb"))
    setup = ast.parse("".join(notebook["cells"][1]["source"])).body[-1]
    assert isinstance(setup, ast.Assign) and isinstance(setup.value, ast.Call)
    assert ast.literal_eval(setup.value.args[0]) == f"{question}.replay"
    script = _export(app, "/api/chats/nb/export.zip?format=script")
    assert f"{question}.py" in zipfile.ZipFile(io.BytesIO(script.content)).namelist()
    assert run(call(app, "GET", "/api/chats/none-such/export.zip")).status_code == 404
    assert run(call(app, "GET", "/api/chats/nb/export.zip?format=exe")).status_code == 422


@pytest.mark.parametrize(
    ("label", "plain", "full"),
    [
        ('say "hi"', "say _hi.csv", "say _hi.csv"),
        ("two\r\nlines", "two__lines.csv", "two__lines.csv"),
        ("../../etc/passwd", "etc_passwd.csv", "etc_passwd.csv"),
        ("C:\\Windows\\win.ini", "C__Windows_win.ini.csv", "C__Windows_win.ini.csv"),
        ("Kahvilat – Töölö", "Kahvilat - Toolo.csv", "Kahvilat – Töölö.csv"),
        ("東京の駅", "export.csv", "東京の駅.csv"),
        ("evil\u202egpj.exe", "evil_gpj.exe.csv", "evil_gpj.exe.csv"),
        ("a;b=c; filename=x.exe", "a_b_c_ filename_x.exe.csv", "a;b=c; filename=x.exe.csv"),
        ("...", "export.csv", "export.csv"),
        ("x" * 300, "x" * 80 + ".csv", "x" * 80 + ".csv"),
    ],
)
def test_hostile_labels_make_safe_file_names(label: str, plain: str, full: str) -> None:
    header = content_disposition(label, "csv")
    assert "\r" not in header and "\n" not in header
    message = Message()
    message["content-disposition"] = header
    assert message.get_param("filename", header="content-disposition") == plain
    assert unquote(header.split("filename*=UTF-8''")[1]) == full
    assert header.encode("ascii")  # a header value must be ASCII
    assert "/" not in full and "\\" not in full


def test_a_hostile_upload_name_is_a_safe_download_name(agent: MapAgent) -> None:
    app = create_app(agent)
    added = _upload(app, "names", 'q"u\\o/te\n\u202eü.geojson', _MIXED)
    for kind in ("geojson", "csv", "parquet"):
        response = _export(
            app, f"/api/chats/names/entries/{added['entry_id']}/export?format={kind}"
        )
        plain, full = _filename(response)
        for name in (plain, full):
            assert not set(name) & set('"\\/\n\r\u202e'), name
            assert name.endswith(f".{kind}")
        assert plain.isascii()


def test_exports_need_the_token_and_an_allowed_host(agent: MapAgent) -> None:
    app = create_app(agent, token="s3cret", allowed_hosts=["geomint.test"])
    bearer = {"authorization": "Bearer s3cret"}
    assert run(call(app, "POST", "/api/chats/g", headers=bearer)).status_code == 200
    urls = [
        "/api/chats/g/entries/places-1/export?format=csv",
        "/api/chats/g/export",
        "/api/chats/g/export.zip?format=notebook",
        "/api/chats/g/figures/v1/export",
        "/api/chats/g/analyses/a1/chart.csv",
    ]
    for url in urls:
        assert run(call(app, "GET", url)).status_code == 401
        wrong_host = {**bearer, "host": "evil.test"}
        assert run(call(app, "GET", url, headers=wrong_host)).status_code == 421
    assert run(call(app, "GET", urls[0], headers=bearer)).status_code == 200


def test_a_property_named_like_a_geometry_column_keeps_its_values(agent: MapAgent) -> None:
    app = create_app(agent)
    clash = {
        "type": "FeatureCollection",
        "features": [
            {
                "type": "Feature",
                "properties": {"geometry": "a text", "wkt": "also text", "lon": 1},
                "geometry": {"type": "Point", "coordinates": [24.95, 60.17]},
            }
        ],
    }
    added = _upload(app, "clash", "clash.geojson", clash)
    base = f"/api/chats/clash/entries/{added['entry_id']}/export"
    (row,) = _csv_rows(_export(app, f"{base}?format=csv"))
    assert (row["geometry"], row["wkt"], row["lon"]) == ("a text", "also text", "1")
    assert (row["_wkt"], row["_lon"], row["_lat"]) == ("POINT (24.95 60.17)", "24.95", "60.17")
    frame = geopandas.read_parquet(io.BytesIO(_export(app, f"{base}?format=parquet").content))
    assert frame.geometry.name == "_geometry" and frame.crs.to_epsg() == 4326
    assert frame["geometry"].tolist() == ["a text"]
    assert frame.geometry.iloc[0].equals(shape(clash["features"][0]["geometry"]))
