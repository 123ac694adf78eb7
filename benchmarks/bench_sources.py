"""How fast the open-data side answers: find_sources over 10,000 sources, resolve_place,
and a cell read beyond its request.

Run: ``.venv/bin/python -m benchmarks.bench_sources [--sources 10000] [--dense]``.

* ``find_sources``: the shipped rows plus synthesised ones (:mod:`benchmarks.sources_registry`)
  in a SQLite store, queried with and without filters; the indexes are built on the first
  query of a revision and that build is reported on its own.
* ``resolve_place``: names in several languages and levels, on the bundled spine (built
  once per process, reported on its own).
* a cell read: ``fetch(cell=True)`` of a World Bank source answered by a recorded response
  in process (so the request costs next to nothing and what is timed is ours: filters,
  spine, parse, narrowing, provenance), and of a bundled table.

Prints medians and p90 in milliseconds, as JSON.
"""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
from benchmarks.sources_registry import synthesise

from geomint.http import RequestPolicy, ScriptedTransport
from geomint.sources import SourceRegistry, Sources, bundled_sources, spine
from geomint.store import MemoryStore, SQLiteStore

QUERIES = (
    ("population by country and year", {}),
    ("population", {"country": "FIN"}),
    ("GDP per capita", {"period": "2000"}),
    ("life expectancy at birth", {"country": "SWE", "period": "1990/2000"}),
    ("passenger cars per inhabitant", {}),
    ("Eurostat population on 1 January", {"country": "DEU"}),
    ("city populations GeoNames", {}),
    ("unemployment rate ILO", {"modality": "table"}),
    ("open data catalogue Helsinki", {}),
    ("how many people live there", {}),
)
NAMES = ("Helsinki", "Helsingfors", "Espoo", "Finland", "Uusimaa", "Nyland", "Georgia",
         "São Paulo", "Esplanadinpuisto", "München", "Lapland", "Nowhere at all")  # fmt: skip

_WB_BODY = [
    {"page": 1, "pages": 1, "per_page": 1000, "total": 3, "lastupdated": "2026-07-01"},
    [
        {
            "indicator": {"id": "SP.POP.TOTL", "value": "Population, total"},
            "country": {"id": "FI", "value": "Finland"},
            "countryiso3code": "FIN",
            "date": str(year),
            "value": 5_500_000 + year,
            "unit": "",
            "obs_status": "",
            "decimal": 0,
        }
        for year in (2021, 2022, 2023)
    ],
]


def _timed(fn: Callable[[], Any], runs: int) -> dict[str, float]:
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        fn()
        times.append((time.perf_counter() - start) * 1000)
    times.sort()
    return {
        "median_ms": round(statistics.median(times), 3),
        "p90_ms": round(times[int(len(times) * 0.9) - 1], 3),
        "runs": runs,
    }


def bench_find(count: int, dense: bool) -> dict[str, Any]:
    real = list(bundled_sources())
    synthetic = synthesise(real, count - len(real), seed=20)
    with tempfile.TemporaryDirectory() as folder:
        store = SQLiteStore(Path(folder) / "chats.db")
        registry = SourceRegistry(store)
        started = time.perf_counter()
        registry.put(synthetic)
        put_s = time.perf_counter() - started
        arm = None
        if dense:
            from geomint.sources.dense import load_minilm

            arm = load_minilm()
        sources = Sources(registry, dense=arm, live=True)
        started = time.perf_counter()
        sources.find("population")
        first_ms = (time.perf_counter() - started) * 1000
        per_query = {}
        for query, filters in QUERIES:
            per_query[query] = _timed(lambda q=query, f=filters: sources.find(q, **f), 20)
        every = [v["median_ms"] for v in per_query.values()]
        store.close()
    return {
        "sources": len(real) + len(synthetic),
        "arms": list(sources.ranker.arms),
        "put_s": round(put_s, 2),
        "first_query_with_index_build_ms": round(first_ms, 1),
        "median_of_query_medians_ms": round(statistics.median(every), 3),
        "worst_query_median_ms": max(every),
        "per_query": per_query,
    }


def bench_resolve() -> dict[str, Any]:
    spine.cache_clear()  # find_sources built it already: time a build of its own
    started = time.perf_counter()
    places = spine()
    built_s = time.perf_counter() - started
    sources = Sources(SourceRegistry(MemoryStore()), place_spine=places)
    per_name = {name: _timed(lambda n=name: sources.resolve(n), 200) for name in NAMES}
    every = [v["median_ms"] for v in per_name.values()]
    return {
        "spine_units": len(places),
        "spine_build_s": round(built_s, 2),
        "median_of_name_medians_ms": round(statistics.median(every), 4),
        "worst_name_median_ms": max(every),
        "per_name": per_name,
    }


def bench_cell() -> dict[str, Any]:
    def answer(request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, json=_WB_BODY)

    policy = RequestPolicy(transport=ScriptedTransport(answer), max_attempts=1)
    sources = Sources(SourceRegistry(MemoryStore()), policy=policy, live=True)
    sources.spine  # noqa: B018 - built before timing

    def wb() -> None:
        cell = sources.read(
            "worldbank-population", {"unit": "country:FIN", "period": "latest"}, cell=True
        )
        assert getattr(cell, "value", None) == 5_502_023, cell

    def bundled() -> None:
        cell = sources.read(
            "un-wpp-2024-population", {"unit": "country:FIN", "period": 2020}, cell=True
        )
        assert getattr(cell, "value", None) == 5_529_614, cell

    bundled()  # the CSV is read once per process
    return {
        "worldbank_recorded_ms": _timed(wb, 200),
        "bundled_ms": _timed(bundled, 200),
    }


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--sources", type=int, default=10_000)
    parser.add_argument("--dense", action="store_true", help="rank with the dense arm too")
    args = parser.parse_args()
    out = {
        "find_sources": bench_find(args.sources, args.dense),
        "resolve_place": bench_resolve(),
        "cell_read": bench_cell(),
    }
    print(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
