# ruff: noqa: E501 - the bodies are written as a model writes them, long lines included
"""Legitimate analysis bodies, as a model writes them, with the value each must return.

Every body must pass Gate 1 unchanged. ``expected`` is compared with floats approximately;
when the value depends on a library's arithmetic, it is computed here on the host by an
independent route (a geodesic instead of a projection, h3 called directly) or checked by
``check``, which gets the whole :class:`~geomint.sandbox.SandboxResult`.
"""

from __future__ import annotations

import json
import math
import textwrap
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import h3
import pyproj
import shapely
from shapely.geometry import shape

from geomint.sandbox import SandboxResult

from .inputs import CAFES, DISTRICTS, ROUTE_A, SCHOOLS, make_inputs

GEOD = pyproj.Geod(ellps="WGS84")
_UNSET: Any = object()


@dataclass(frozen=True)
class Case:
    """One body and what it must produce."""

    name: str
    code: str
    expected: Any = _UNSET
    check: Callable[[SandboxResult], None] | None = None


def _metres(a: list[float], b: list[float]) -> float:
    return float(GEOD.inv(a[0], a[1], b[0], b[1])[2])


def _coords(feature: dict[str, Any]) -> list[float]:
    coordinates: list[float] = feature["geometry"]["coordinates"]
    return coordinates


def _km2(box: dict[str, Any]) -> float:
    area, _ = GEOD.geometry_area_perimeter(shape(box))
    return abs(float(area)) / 1e6


def _nearest_schools() -> dict[str, Any]:
    result = {}
    for cafe in CAFES:
        name, dist = min(
            ((s["properties"]["name"], _metres(_coords(cafe), _coords(s))) for s in SCHOOLS),
            key=lambda item: item[1],
        )
        result[cafe["properties"]["name"]] = {"school": name, "metres": round(dist)}
    return result


def _within(school: dict[str, Any], metres: float) -> list[str]:
    names = [
        c["properties"]["name"] for c in CAFES if _metres(_coords(school), _coords(c)) <= metres
    ]
    # The body measures in UTM; keep the fixture away from the 0.1 % where the two differ.
    assert all(abs(_metres(_coords(school), _coords(c)) - metres) > 5 for c in CAFES)
    return sorted(names)


def _h3_summary() -> dict[str, Any]:
    cells: dict[str, int] = {}
    for cafe in CAFES:
        lng, lat = _coords(cafe)
        cell = h3.latlng_to_cell(lat, lng, 8)
        cells[cell] = cells.get(cell, 0) + 1
    busiest = max(cells, key=lambda c: cells[c])  # first of the largest, as Counter does
    return {
        "cells": len(cells),
        "busiest": busiest,
        "count": cells[busiest],
        "ring": 7,
        "vertices": len(h3.cell_to_boundary(busiest)),
    }


def _check_hex_layer(result: SandboxResult) -> None:
    assert result.value == len(CAFES)
    (layer,) = result.layers
    assert layer.label == "Cafés by H3 cell"
    features = layer.data["features"]
    assert len(features) == len(CAFES)
    for feature, cafe in zip(features, CAFES, strict=True):
        hexagon = shape(feature["geometry"])
        assert hexagon.contains(shape(cafe["geometry"])), "lng/lat order of the hexagon"
        assert feature["properties"]["name"] == cafe["properties"]["name"]
    assert layer.line == 10


def _check_figures(result: SandboxResult) -> None:
    ratings = [c["properties"]["rating"] for c in CAFES if c["properties"]["rating"]]
    mean = round(sum(ratings) / len(ratings), 2)
    assert result.value == {"stats": {"mean_rating": mean}}
    figures = [(f.label, f.value, f.unit, f.sources, f.line) for f in result.figures]
    assert figures == [
        ("cafés in the search", 4, "places", ["places-1"], 2),
        ("mean rating", mean, "stars", None, 9),
        ("schools", 3, None, None, 11),
    ]


def _check_school_zones(result: SandboxResult) -> None:
    assert result.value == {"zones": 3, "crs": 32631}
    (layer,) = result.layers
    assert layer.label == "500 m around schools"
    features = layer.data["features"]
    assert [f["geometry"]["type"] for f in features] == ["Polygon"] * 3
    for feature, school in zip(features, SCHOOLS, strict=True):
        zone = shape(feature["geometry"])
        assert zone.contains(shape(school["geometry"]))
        west, _, east, _ = zone.bounds  # 1 km across, in degrees of longitude at 52.4° N
        assert math.isclose(
            (east - west) * 111_320 * math.cos(math.radians(52.37)), 1000, rel_tol=0.02
        )


def _route_lengths() -> list[dict[str, Any]]:
    out = []
    for route in make_inputs()["routes_by_entry"]["routes-1"]["features"]:
        lons, lats = zip(*route["geometry"]["coordinates"], strict=True)
        out.append(
            {
                "index": route["properties"]["routeIndex"],
                "geodesic_m": round(GEOD.line_length(lons, lats), 1),
                "reported_m": route["properties"]["lengthInMeters"],
            }
        )
    return out


def _haversine_check(result: SandboxResult) -> None:
    value = result.value
    assert isinstance(value, dict)
    legs = [_metres(ROUTE_A[i], ROUTE_A[i + 1]) for i in range(len(ROUTE_A) - 1)]
    assert value["legs"] == 3
    assert math.isclose(value["total_m"], sum(legs), rel_tol=0.005)  # sphere vs ellipsoid
    assert value["longest_leg"] == legs.index(max(legs))


def _covering_radius() -> int:
    origin = _coords(CAFES[0])
    radius = 250
    while sum(1 for s in SCHOOLS if _metres(origin, _coords(s)) <= radius) < 2:
        radius *= 2
    return radius


def _check_overlay_areas(result: SandboxResult) -> None:
    west = [[4.87, 52.36], [4.88, 52.36], [4.88, 52.38], [4.87, 52.38], [4.87, 52.36]]
    geodesic = {
        "Centrum": _km2(DISTRICTS["district:centrum"][0]["geometry"]),
        "West": _km2({"type": "Polygon", "coordinates": [west]}),
    }
    value = result.value
    assert isinstance(value, dict)
    assert set(value) == set(geodesic)
    for name, km2 in geodesic.items():
        # UTM zone 31 shrinks areas at 4.9° E by about 0.04 %; rounding adds 0.001 km²
        assert math.isclose(value[name], km2, rel_tol=1e-3, abs_tol=1e-3), (name, value)


def _school_json() -> dict[str, Any]:
    payload = {s["properties"]["name"]: _coords(s) for s in SCHOOLS}
    return {"chars": len(json.dumps(payload, sort_keys=True)), "roundtrip": True}


def _multipoint_centroid() -> list[float]:
    centroid = shapely.MultiPoint([_coords(c) for c in CAFES]).centroid
    return [centroid.x, centroid.y]


def _pair_km() -> float:
    pts = [_coords(s) for s in SCHOOLS]
    total = sum(_metres(pts[i], pts[j]) for i in range(3) for j in range(i + 1, 3))
    return round(total / 1000, 2)


def _case(name: str, code: str, expected: Any = _UNSET, check: Any = None) -> Case:
    return Case(name=name, code=textwrap.dedent(code).strip("\n"), expected=expected, check=check)


CASES: list[Case] = [
    _case(
        "counter-by-category",
        """
        from collections import Counter

        counts = Counter()
        for entry_id, fc in places_by_entry.items():
            for feature in fc["features"]:
                counts[feature["properties"]["category"]] += 1
        return dict(counts.most_common())
        """,
        {"cafe": 4, "school": 3, "bar": 2, "restaurant": 2},
    ),
    _case(
        "top-rated-lambda-sort",
        """
        cafes = places_by_entry["places-1"]["features"]
        rated = [f for f in cafes if f["properties"].get("rating") is not None]
        rated.sort(key=lambda f: f["properties"]["rating"], reverse=True)
        return [f["properties"]["name"] for f in rated[:3]]
        """,
        ["Vinkeles", "Lot Sixty One", "Koffie Academie"],
    ),
    _case(
        "statistics-defaultdict",
        """
        import statistics
        from collections import defaultdict

        ratings = defaultdict(list)
        for feature in places_by_entry["places-1"]["features"]:
            props = feature["properties"]
            if props.get("rating") is not None:
                ratings[props["category"]].append(props["rating"])
        return {cat: round(statistics.mean(vals), 2) for cat, vals in sorted(ratings.items())}
        """,
        {"bar": 4.45, "cafe": 4.67, "restaurant": 4.75},
    ),
    _case(
        "nearest-school-geod-inv",
        """
        from pyproj import Geod

        geod = Geod(ellps="WGS84")
        schools = places_by_entry["places-2"]["features"]
        result = {}
        for cafe in places_by_entry["places-1"]["features"]:
            lon, lat = cafe["geometry"]["coordinates"]
            best = None
            for school in schools:
                slon, slat = school["geometry"]["coordinates"]
                _, _, dist = geod.inv(lon, lat, slon, slat)
                if best is None or dist < best[1]:
                    best = (school["properties"]["name"], dist)
            result[cafe["properties"]["name"]] = {"school": best[0], "metres": round(best[1])}
        return result
        """,
        _nearest_schools(),
    ),
    _case(
        "fstring-format-specs",
        """
        lines = []
        for feature in routes_by_entry["routes-1"]["features"]:
            s = feature["properties"]
            km = s["lengthInMeters"] / 1000
            minutes = s["travelTimeInSeconds"] / 60
            delay = s["trafficDelayInSeconds"]
            lines.append(f"Route {s['routeIndex']}: {km:.1f} km, {minutes:.0f} min, delay {delay:>3d} s")
        return "\\n".join(lines)
        """,
        "Route 0: 2.6 km, 9 min, delay  60 s\nRoute 1: 2.9 km, 10 min, delay   0 s",
    ),
    _case(
        "geod-line-length",
        """
        import pyproj

        geod = pyproj.Geod(ellps="WGS84")
        out = []
        for f in routes_by_entry["routes-1"]["features"]:
            lons, lats = zip(*f["geometry"]["coordinates"])
            out.append({
                "index": f["properties"]["routeIndex"],
                "geodesic_m": round(geod.line_length(lons, lats), 1),
                "reported_m": f["properties"]["lengthInMeters"],
            })
        return out
        """,
        _route_lengths(),
    ),
    _case(
        "datetime-arrivals",
        """
        from datetime import datetime, timedelta

        arrivals = []
        for f in routes_by_entry["routes-1"]["features"]:
            p = f["properties"]
            departure = datetime.fromisoformat(p["departureTime"])
            arrival = departure + timedelta(seconds=p["travelTimeInSeconds"])
            arrivals.append(arrival.strftime("%H:%M"))
        return arrivals
        """,
        ["08:09", "08:10"],
    ),
    _case(
        "incidents-mixed-geometry",
        """
        from collections import Counter

        feats = [f for fs in incidents_by_entry.values() for f in fs]
        by_geom = Counter(f["geometry"]["type"] for f in feats)
        total_delay = sum(f["properties"].get("delay", 0) for f in feats)
        worst = max(feats, key=lambda f: f["properties"]["magnitudeOfDelay"])
        return {
            "by_geometry": dict(by_geom),
            "total_delay_min": total_delay / 60,
            "worst": worst["properties"]["id"],
        }
        """,
        {"by_geometry": {"Point": 2, "LineString": 2}, "total_delay_min": 15.0, "worst": "i3"},
    ),
    _case(
        "incidents-along-route-transformer",
        """
        from pyproj import Transformer
        from shapely.geometry import shape
        from shapely.ops import transform

        to_m = Transformer.from_crs("EPSG:4326", "EPSG:32631", always_xy=True).transform
        route = transform(to_m, shape(routes_by_entry["routes-1"]["features"][0]["geometry"]))
        corridor = route.buffer(150)
        near = []
        for f in incidents_by_entry["incidents-1"]:
            if transform(to_m, shape(f["geometry"])).intersects(corridor):
                near.append(f["properties"]["id"])
        return sorted(near)
        """,
        ["i1", "i2", "i4"],
    ),
    _case(
        "geopandas-sjoin-within",
        """
        import geopandas as gpd

        places = gpd.GeoDataFrame.from_features(places_by_entry["places-1"]["features"], crs="EPSG:4326")
        features = [f for fs in geometries_by_entry.values() for f in fs]
        districts = gpd.GeoDataFrame.from_features(features, crs="EPSG:4326")
        districts = districts[["name", "geometry"]].rename(columns={"name": "district"})
        joined = gpd.sjoin(places, districts, predicate="within", how="left")
        counts = joined.groupby("district").size().to_dict()
        return {k: int(v) for k, v in counts.items()}
        """,
        {"Centrum": 6, "West": 1},
    ),
    _case(
        "geopandas-overlay-utm-area",
        """
        ranges = gpd.GeoDataFrame.from_features(ranges_by_entry["ranges-1"]["features"], crs="EPSG:4326")
        districts = gpd.GeoDataFrame.from_features(
            [f for fs in geometries_by_entry.values() for f in fs], crs="EPSG:4326"
        )[["name", "geometry"]]
        inter = gpd.overlay(districts, ranges[["geometry"]], how="intersection")
        inter = inter.to_crs(inter.estimate_utm_crs())
        inter["km2"] = (inter.area / 1e6).round(3)
        return dict(zip(inter["name"], inter["km2"]))
        """,
        check=_check_overlay_areas,
    ),
    _case(
        "geopandas-buffer-dissolve",
        """
        gdf = gpd.GeoDataFrame.from_features(places_by_entry["places-1"]["features"], crs="EPSG:4326")
        gdf = gdf.to_crs(gdf.estimate_utm_crs())
        gdf["geometry"] = gdf.buffer(300)
        dissolved = gdf.dissolve(by="category", aggfunc={"rating": "max", "name": "count"})
        out = {}
        for category, row in dissolved.iterrows():
            parts = getattr(row.geometry, "geoms", [row.geometry])
            out[category] = {"max_rating": row["rating"], "places": int(row["name"]), "parts": len(parts)}
        return out
        """,
        {
            "bar": {"max_rating": 4.6, "places": 2, "parts": 2},
            "cafe": {"max_rating": 4.8, "places": 4, "parts": 4},
            "restaurant": {"max_rating": 4.9, "places": 2, "parts": 2},
        },
    ),
    _case(
        "shapely-strtree-query",
        """
        from pyproj import Transformer
        from shapely import STRtree
        from shapely.geometry import shape
        from shapely.ops import transform

        project = Transformer.from_crs(4326, 32631, always_xy=True).transform
        cafes = places_by_entry["places-1"]["features"]
        tree = STRtree([transform(project, shape(f["geometry"])) for f in cafes])
        out = {}
        for school in places_by_entry["places-2"]["features"]:
            point = transform(project, shape(school["geometry"]))
            hits = tree.query(point.buffer(1200), predicate="intersects")
            out[school["properties"]["name"]] = sorted(cafes[i]["properties"]["name"] for i in hits)
        return out
        """,
        {s["properties"]["name"]: _within(s, 1200) for s in SCHOOLS},
    ),
    _case(
        "h3-v4-buckets",
        """
        import h3
        from collections import Counter

        cells = Counter()
        for f in places_by_entry["places-1"]["features"]:
            lng, lat = f["geometry"]["coordinates"]
            cells[h3.latlng_to_cell(lat, lng, 8)] += 1
        cell, n = cells.most_common(1)[0]
        return {
            "cells": len(cells),
            "busiest": cell,
            "count": n,
            "ring": len(h3.grid_disk(cell, 1)),
            "vertices": len(h3.cell_to_boundary(cell)),
        }
        """,
        _h3_summary(),
    ),
    _case(
        "h3-hexagon-layer",
        """
        features = []
        for f in places_by_entry["places-1"]["features"]:
            lng, lat = f["geometry"]["coordinates"]
            cell = h3.latlng_to_cell(lat, lng, 9)
            ring = [[x, y] for y, x in h3.cell_to_boundary(cell)]
            ring.append(ring[0])
            props = {"cell": cell, "name": f["properties"]["name"]}
            features.append({"type": "Feature", "properties": props, "geometry": {"type": "Polygon", "coordinates": [ring]}})
        hexes = {"type": "FeatureCollection", "features": features}
        mint.layer(hexes, "Cafés by H3 cell")
        return len(features)
        """,
        check=_check_hex_layer,
    ),
    _case(
        "pandas-groupby-agg",
        """
        rows = [
            {"name": f["properties"]["name"], "category": f["properties"]["category"],
             "rating": f["properties"].get("rating")}
            for f in places_by_entry["places-1"]["features"]
        ]
        df = pd.DataFrame(rows)
        summary = (
            df.groupby("category")
            .agg(n=("name", "count"), mean_rating=("rating", "mean"), best=("rating", "max"))
            .round(2)
            .reset_index()
        )
        return summary.to_dict(orient="records")
        """,
        [
            {"category": "bar", "n": 2, "mean_rating": 4.45, "best": 4.6},
            {"category": "cafe", "n": 4, "mean_rating": 4.67, "best": 4.8},
            {"category": "restaurant", "n": 2, "mean_rating": 4.75, "best": 4.9},
        ],
    ),
    _case(
        "pandas-merge-pivot",
        """
        incidents = pd.DataFrame([f["properties"] for f in incidents_by_entry["incidents-1"]])
        severity = pd.DataFrame({"magnitudeOfDelay": [1, 2, 3], "severity": ["minor", "moderate", "major"]})
        merged = incidents.merge(severity, on="magnitudeOfDelay", how="left")
        pivot = merged.pivot_table(
            index="iconCategory", columns="severity", values="delay", aggfunc="sum", fill_value=0
        )
        return {kind: {col: int(v) for col, v in row.items()} for kind, row in pivot.iterrows()}
        """,
        {
            "Accident": {"major": 420, "minor": 0, "moderate": 0},
            "Jam": {"major": 0, "minor": 0, "moderate": 420},
            "RoadWorks": {"major": 0, "minor": 60, "moderate": 0},
        },
    ),
    _case(
        "class-with-private-cache",
        """
        class DistanceCache:
            \"\"\"Geodesic distances, each pair computed once.\"\"\"

            def __init__(self, geod):
                self.geod = geod
                self._cache = {}
                self.misses = 0

            def metres(self, a, b):
                key = (tuple(a), tuple(b))
                if key not in self._cache:
                    self.misses += 1
                    self._cache[key] = self.geod.inv(a[0], a[1], b[0], b[1])[2]
                return self._cache[key]

            def __repr__(self):
                return f"DistanceCache({len(self._cache)} pairs)"

        cache = DistanceCache(pyproj.Geod(ellps="WGS84"))
        pts = [f["geometry"]["coordinates"] for f in places_by_entry["places-2"]["features"]]
        total = 0.0
        for _ in range(3):
            for i in range(len(pts)):
                for j in range(i + 1, len(pts)):
                    total += cache.metres(pts[i], pts[j])
        return {"misses": cache.misses, "pairs_km": round(total / 3 / 1000, 2), "repr": repr(cache)}
        """,
        {"misses": 3, "pairs_km": _pair_km(), "repr": "DistanceCache(3 pairs)"},
    ),
    _case(
        "try-except-bad-features",
        """
        from shapely.geometry import shape

        good, bad = 0, []
        features = byod_by_entry["byod-0"]["features"] if byod_by_entry else []
        for f in features:
            try:
                g = shape(f["geometry"])
                if not g.is_valid:
                    raise ValueError(f"feature {f['id']} is not a valid {g.geom_type}")
                good += 1
            except (KeyError, ValueError) as exc:
                bad.append(f"{f.get('id', '?')}: {type(exc).__name__}")
            finally:
                pass
        return {"good": good, "bad": bad}
        """,
        {"good": 1, "bad": ["b: ValueError", "c: KeyError"]},
    ),
    _case(
        "make-valid-union-all",
        """
        from shapely import make_valid, union_all
        from shapely.geometry import mapping, shape

        geoms = [make_valid(shape(f["geometry"])) for f in byod_by_entry["byod-0"]["features"] if f.get("geometry")]
        merged = union_all(geoms)
        return {
            "type": merged.geom_type,
            "valid": merged.is_valid,
            "parts": len(merged.geoms),
            "bounds": [round(b, 4) for b in merged.bounds],
            "geojson_type": mapping(merged)["type"],
        }
        """,
        {
            "type": "MultiPolygon",
            "valid": True,
            "parts": 3,
            "bounds": [4.88, 52.36, 4.91, 52.38],
            "geojson_type": "MultiPolygon",
        },
    ),
    _case(
        "mint-value-local-and-nested",
        """
        cafes = places_by_entry["places-1"]["features"]
        n_cafes = mint.value(
            sum(1 for f in cafes if f["properties"]["category"] == "cafe"),
            "cafés in the search",
            unit="places",
            sources=["places-1"],
        )
        ratings = np.array([f["properties"]["rating"] or np.nan for f in cafes], dtype=float)
        summary = {"stats": {"mean_rating": mint.value(round(float(np.nanmean(ratings)), 2), "mean rating", unit="stars")}}
        n_schools = len(places_by_entry["places-2"]["features"])
        mint.value(n_schools, "schools")
        return summary
        """,
        check=_check_figures,
    ),
    _case(
        "chartjs-config",
        """
        from collections import Counter

        counts = Counter(f["properties"]["category"] for f in places_by_entry["places-1"]["features"])
        labels = sorted(counts)
        return {
            "type": "bar",
            "data": {"labels": labels, "datasets": [{"label": "Places", "data": [counts[k] for k in labels]}]},
            "options": {"plugins": {"title": {"display": True, "text": "Places by category"}}},
        }
        """,
        {
            "type": "bar",
            "data": {
                "labels": ["bar", "cafe", "restaurant"],
                "datasets": [{"label": "Places", "data": [2, 4, 2]}],
            },
            "options": {"plugins": {"title": {"display": True, "text": "Places by category"}}},
        },
    ),
    _case(
        "json-dumps-loads",
        """
        import json

        payload = {f["properties"]["name"]: f["geometry"]["coordinates"] for f in places_by_entry["places-2"]["features"]}
        text = json.dumps(payload, sort_keys=True)
        return {"chars": len(text), "roundtrip": json.loads(text) == payload}
        """,
        _school_json(),
    ),
    _case(
        "namedtuple-asdict",
        """
        from collections import namedtuple

        Stop = namedtuple("Stop", ["name", "lon", "lat"])
        stops = [Stop(f["properties"]["name"], *f["geometry"]["coordinates"]) for f in places_by_entry["places-2"]["features"]]
        westmost = min(stops, key=lambda s: s.lon)
        return westmost._asdict()
        """,
        {"name": "Montessori Lyceum", "lon": 4.87, "lat": 52.348},
    ),
    _case(
        "mutate-injected-inputs",
        """
        features = places_by_entry["places-1"]["features"]
        features.sort(key=lambda f: f["properties"]["name"])
        del places_by_entry["places-2"]
        for f in features:
            f["properties"]["name"] = f["properties"]["name"].upper()
        places_by_entry["places-1"]["features"] = features[:2]
        return {"first": features[0]["properties"]["name"], "entries": list(places_by_entry)}
        """,
        {"first": "BROUWERIJ 'T IJ", "entries": ["places-1"]},
    ),
    _case(
        "regex-postcodes",
        """
        import re

        pattern = re.compile(r"\\b(\\d{4})\\s?([A-Z]{2})\\b")
        by_area = {}
        for f in places_by_entry["places-1"]["features"]:
            match = pattern.search(f["properties"].get("address", ""))
            if match:
                by_area.setdefault(match.group(1), []).append(f["properties"]["name"])
        return dict(sorted(by_area.items()))
        """,
        {
            "1011": ["Restaurant Greetje"],
            "1012": ["Café de Jaren", "Café Hoppe", "De Koffieschenkerij"],
            "1013": ["Koffie Academie"],
            "1018": ["Brouwerij 't IJ"],
            "1053": ["Lot Sixty One"],
        },
    ),
    _case(
        "math-haversine",
        """
        import math

        def haversine(a, b):
            lon1, lat1, lon2, lat2 = map(math.radians, (*a, *b))
            dlon, dlat = lon2 - lon1, lat2 - lat1
            h = math.sin(dlat / 2) ** 2 + math.cos(lat1) * math.cos(lat2) * math.sin(dlon / 2) ** 2
            return 2 * 6371008.8 * math.asin(math.sqrt(h))

        coords = routes_by_entry["routes-1"]["features"][0]["geometry"]["coordinates"]
        legs = [haversine(coords[i], coords[i + 1]) for i in range(len(coords) - 1)]
        return {"legs": len(legs), "total_m": round(sum(legs)), "longest_leg": max(range(len(legs)), key=lambda i: legs[i])}
        """,
        check=_haversine_check,
    ),
    _case(
        "statistics-datetime-ages",
        """
        import statistics
        from datetime import datetime, timezone

        feats = incidents_by_entry["incidents-1"]
        delays = [f["properties"]["delay"] for f in feats]
        now = datetime(2024, 5, 14, 8, 10, tzinfo=timezone.utc)
        ages = sorted(
            round((now - datetime.fromisoformat(f["properties"]["startTime"].replace("Z", "+00:00"))).total_seconds() / 60)
            for f in feats
        )
        return {"median_delay": statistics.median(delays), "stdev": round(statistics.stdev(delays), 1), "ages_min": ages}
        """,
        {"median_delay": 210.0, "stdev": 150.0, "ages_min": [5, 15, 30, 610]},
    ),
    _case(
        "generator-helper-itertools",
        """
        import itertools

        def pairs(features):
            for a, b in itertools.combinations(features, 2):
                yield a["properties"]["name"], b["properties"]["name"]

        return sum(1 for _ in pairs(places_by_entry["places-2"]["features"]))
        """,
        3,
    ),
    _case(
        "await-async-helper",
        """
        async def count(fc):
            return len(fc["features"])

        total = 0
        for fc in places_by_entry.values():
            total += await count(fc)
        return total
        """,
        len(CAFES) + len(SCHOOLS),
    ),
    _case(
        "import-aliases",
        """
        import numpy as numpy_
        import geopandas as geopandas_
        from shapely.geometry import shape as S, mapping as M

        pts = [S(f["geometry"]) for f in places_by_entry["places-1"]["features"]]
        xs = numpy_.array([p.x for p in pts])
        centroid = S({"type": "MultiPoint", "coordinates": [[p.x, p.y] for p in pts]}).centroid
        return {"mean_lon": round(float(xs.mean()), 3), "centroid": M(centroid)["coordinates"], "n": len(geopandas_.GeoSeries(pts))}
        """,
        {"mean_lon": 4.894, "centroid": _multipoint_centroid(), "n": 8},
    ),
    _case(
        "mint-layer-geodataframe-local",
        """
        schools = gpd.GeoDataFrame.from_features(places_by_entry["places-2"]["features"], crs=4326)
        utm = schools.estimate_utm_crs()
        zones = schools.to_crs(utm)
        zones["geometry"] = zones.buffer(500)
        layer = mint.layer(zones.to_crs(4326), "500 m around schools")
        return {"zones": len(layer), "crs": utm.to_epsg()}
        """,
        check=_check_school_zones,
    ),
    _case(
        "pandas-route-comparison",
        """
        df = pd.DataFrame([f["properties"] for f in routes_by_entry["routes-1"]["features"]])
        df["speed_kmh"] = df["lengthInMeters"] / df["travelTimeInSeconds"] * 3.6
        fastest = df.loc[df["travelTimeInSeconds"].idxmin()]
        return {
            "fastest": int(fastest["routeIndex"]),
            "speeds": df["speed_kmh"].round(1).tolist(),
            "delay_share": round(df["trafficDelayInSeconds"].sum() / df["travelTimeInSeconds"].sum(), 3),
        }
        """,
        {"fastest": 0, "speeds": [17.6, 17.4], "delay_share": 0.053},
    ),
    _case(
        "none-record-guard",
        """
        if traffic_area_analytics_by_entry is None:
            tiles = []
        else:
            tiles = [f for fc in traffic_area_analytics_by_entry.values() for f in fc["features"]]
        if not tiles:
            return {"tiles": 0, "note": "no traffic analytics requested"}
        return {"tiles": len(tiles)}
        """,
        {"tiles": 0, "note": "no traffic analytics requested"},
    ),
    _case(
        "shapely-contains-project",
        """
        from shapely.geometry import shape

        area = shape(ranges_by_entry["ranges-1"]["features"][0]["geometry"])
        route = shape(routes_by_entry["routes-1"]["features"][0]["geometry"])
        inside = []
        for f in incidents_by_entry["incidents-1"]:
            g = shape(f["geometry"])
            if area.contains(g):
                inside.append((f["properties"]["id"], round(route.project(g.centroid, normalized=True), 2)))
        return sorted(inside, key=lambda item: item[1])
        """,
        [["i1", 0.18]],
    ),
    _case(
        "geopandas-sjoin-intersects-mixed",
        """
        incidents = gpd.GeoDataFrame.from_features(incidents_by_entry["incidents-1"], crs="EPSG:4326")
        districts = gpd.GeoDataFrame.from_features(
            [f for fs in geometries_by_entry.values() for f in fs], crs="EPSG:4326"
        )
        districts = districts[["name", "geometry"]].rename(columns={"name": "district"})
        hits = incidents.sjoin(districts, predicate="intersects")
        return {k: sorted(v) for k, v in hits.groupby("district")["id"]}
        """,
        {"Centrum": ["i1", "i2"]},
    ),
    _case(
        "geo-interface",
        """
        gdf = gpd.GeoDataFrame.from_features(places_by_entry["places-2"]["features"], crs="EPSG:4326")
        fc = gdf.__geo_interface__
        hull = shapely.MultiPoint([shapely.geometry.shape(f["geometry"]) for f in fc["features"]]).convex_hull
        return {"features": len(fc["features"]), "hull": hull.geom_type}
        """,
        {"features": 3, "hull": "Polygon"},
    ),
    _case(
        "while-true-with-break",
        """
        from pyproj import Transformer
        from shapely.geometry import shape
        from shapely.ops import transform

        fwd = Transformer.from_crs("EPSG:4326", "EPSG:32631", always_xy=True).transform
        origin = transform(fwd, shape(places_by_entry["places-1"]["features"][0]["geometry"]))
        schools = [transform(fwd, shape(f["geometry"])) for f in places_by_entry["places-2"]["features"]]
        radius = 250
        while True:
            covered = sum(1 for s in schools if origin.distance(s) <= radius)
            if covered >= 2 or radius > 20_000:
                break
            radius *= 2
        return radius
        """,
        _covering_radius(),
    ),
    _case(
        "to-csv-text",
        """
        rows = [
            {"name": f["properties"]["name"], "lon": f["geometry"]["coordinates"][0]}
            for f in places_by_entry["places-2"]["features"]
        ]
        return pd.DataFrame(rows).to_csv(index=False)
        """,
        "name,lon\nBarlaeus Gymnasium,4.883\nHet 4e Gymnasium,4.872\nMontessori Lyceum,4.87\n",
    ),
    _case(
        "final-expression-dict-merge",
        """
        ids = {entry: len(fc["features"]) for entry, fc in places_by_entry.items()}
        ids | {"routes": sum(len(fc["features"]) for fc in routes_by_entry.values())}
        """,
        {"places-1": 8, "places-2": 3, "routes": 2},
    ),
    _case(
        "geometries-source-kind",
        """
        summary = []
        for key, features in sorted(geometries_by_entry.items()):
            for feature in features:
                source = feature["properties"]["_source"]
                area = shapely.geometry.shape(feature["geometry"]).area * 1e4
                summary.append(f"{source['kind']}/{source['id']}: {feature['properties']['population']:,} people, {area:.2f} x 1e-4 deg²")
        return summary
        """,
        [
            "district/centrum: 87,000 people, 4.50 x 1e-4 deg²",
            "district/west: 145,000 people, 6.00 x 1e-4 deg²",
        ],
    ),
]
