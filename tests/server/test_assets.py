"""The web app's vendored front-end files and offline basemap are complete and self-contained.

They are written by ``scripts/build_web_assets.py``; these tests read what it left behind.
"""

from __future__ import annotations

import hashlib
import json
import struct
from pathlib import Path
from typing import Any

import pytest

import geomint.server

STATIC = Path(geomint.server.__file__).parent / "static"
VENDOR = STATIC / "vendor"
BASEMAP = STATIC / "basemap"
BUDGET_BYTES = 4 * 1024 * 1024
STATIC_URL = "/static"  # where the server mounts STATIC


def _manifest() -> list[dict[str, Any]]:
    packages: list[dict[str, Any]] = json.loads((VENDOR / "VENDOR.json").read_text())["packages"]
    return packages


def _style() -> dict[str, Any]:
    style: dict[str, Any] = json.loads((BASEMAP / "style.json").read_text())
    return style


def _strings(value: object) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [s for item in value.values() for s in _strings(item)]
    if isinstance(value, list):
        return [s for item in value for s in _strings(item)]
    return []


def test_vendor_manifest_matches_the_files() -> None:
    listed = set()
    for package in _manifest():
        for entry in package["files"]:
            path = VENDOR / entry["path"]
            assert hashlib.sha256(path.read_bytes()).hexdigest() == entry["sha256"], path
            assert path.stat().st_size == entry["bytes"], path
            listed.add(path)
    on_disk = {p for p in VENDOR.rglob("*") if p.is_file() and p.parent.name != "licences"} - {
        VENDOR / "VENDOR.json"
    }
    assert on_disk == listed


def test_the_app_gets_the_packages_it_was_designed_for() -> None:
    versions = {p["name"]: p["version"] for p in _manifest()}
    assert versions.keys() == {"maplibre-gl", "chart.js", "pmtiles", "@fontsource/noto-sans"}
    assert versions["maplibre-gl"].startswith("6.")
    assert versions["chart.js"].startswith("4.")
    assert versions["pmtiles"].startswith("4.")
    # maplibre-gl 6 fetches its worker from beside itself.
    assert (VENDOR / "maplibre-gl" / "maplibre-gl-worker.mjs").is_file()


@pytest.mark.parametrize("package", _manifest(), ids=lambda p: p["name"])
def test_every_vendored_package_carries_its_licence(package: dict[str, Any]) -> None:
    licence = VENDOR / package["licence_file"]
    assert licence.parent == VENDOR / "licences"
    assert package["licence"]
    assert "copyright" in licence.read_text(encoding="utf-8").lower()


def test_basemap_is_a_pmtiles_v3_archive_from_zoom_0() -> None:
    header = (BASEMAP / "world.pmtiles").read_bytes()[:127]
    assert header[:7] == b"PMTiles"
    assert header[7] == 3
    min_zoom, max_zoom = struct.unpack_from("<BB", header, 100)
    assert min_zoom == 0
    assert max_zoom >= 5


def test_style_draws_countries_from_the_bundled_tiles() -> None:
    style = _style()
    assert style["version"] == 8
    assert style["sources"] == {
        "world": {
            "type": "vector",
            "url": f"pmtiles://{STATIC_URL}/basemap/world.pmtiles",
            "attribution": "Natural Earth",
        }
    }
    layers = {layer["id"]: layer for layer in style["layers"]}
    assert layers["background"]["type"] == "background"
    assert layers["countries-fill"]["type"] == "fill"
    assert layers["countries-outline"]["type"] == "line"
    for layer in style["layers"]:
        if "source" in layer:
            assert layer["source"] in style["sources"]
            assert layer["source-layer"] == "countries"


def test_style_needs_nothing_from_the_internet() -> None:
    style = _style()
    remote = [s for s in _strings(style) if "//" in s.removeprefix("pmtiles://")]
    assert not remote, "the style points off the package"
    urls = [
        url
        for source in style["sources"].values()
        for url in [source.get("url"), source.get("data"), *source.get("tiles", [])]
        if isinstance(url, str)
    ]
    urls += _strings(style.get("font-faces", {}))
    assert urls, "the style should name its bundled tiles"
    for url in urls:
        path = url.removeprefix("pmtiles://")
        assert path.startswith(f"{STATIC_URL}/"), url
        assert (STATIC / path.removeprefix(f"{STATIC_URL}/")).is_file(), url
    # Glyph and sprite servers are on the internet; labels must use font-faces instead.
    assert "glyphs" not in style
    assert "sprite" not in style


def test_front_end_assets_fit_the_size_budget() -> None:
    total = sum(p.stat().st_size for d in (VENDOR, BASEMAP) for p in d.rglob("*") if p.is_file())
    assert total < BUDGET_BYTES
