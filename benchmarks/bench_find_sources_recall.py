"""How well ``find_sources`` ranks: recall@5 and MRR of BM25, the dense arm and their fusion.

Run: ``.venv/bin/python -m benchmarks.bench_find_sources_recall [--n 10000] [--seed 20]``.

Over the labelled queries (``tests/sources/ranking_queries.json``) it ranks the shipped
catalogue (:func:`geomint.sources.bundled_sources`) alone, then with ``n`` synthesised
distractors mixed in (:func:`benchmarks.sources_registry.synthesise`), by:

- *BM25*: the shipped :class:`geomint.sources.Ranker` with no dense arm (the default);
- *dense*: the cosine of the MiniLM vectors alone (:func:`geomint.sources.dense.load_minilm`),
  for comparison: no shipped configuration ranks by it alone;
- *fused*: the shipped :class:`~geomint.sources.Ranker` with the MiniLM arm, reciprocal
  rank fusion (k = 60).

recall@5 is the share of a query's labelled sources in the top five (of at most five), and
MRR the mean of 1 / the rank of the first labelled source (0 when none is in the top 100),
both averaged over the queries; "ms" is a ranking's median time per query. It also reports
the embedding speed: one query's (median of 50) and documents per second when embedding
the whole registry, whose vectors are then cached under the temporary directory, keyed by
the texts, for the next run (delete ``geomint-bench-dense`` there to measure it again).

:func:`measure` takes any ranking function (a query to source ids, best first), so the
registry's own ``find_sources`` can be measured the same way.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import statistics
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from benchmarks.sources_registry import synthesise

from geomint.sources import Ranker as Shipped
from geomint.sources import bundled_sources
from geomint.sources.dense import dense_unavailable, load_minilm
from geomint.sources.model import Source
from geomint.sources.ranking import DenseArm

HERE = Path(__file__).resolve().parent
QUERIES = HERE.parent / "tests" / "sources" / "ranking_queries.json"
DEPTH = 100
CUTOFF = 5
CACHE = Path(tempfile.gettempdir()) / "geomint-bench-dense"

Ranker = Callable[[str], Sequence[str]]
"""A query to source ids, best first."""


@dataclass(frozen=True, kw_only=True)
class Query:
    """One labelled query."""

    query: str
    relevant: frozenset[str]
    kind: str


@dataclass(frozen=True, kw_only=True)
class Scores:
    """recall@5 and MRR over a query set, overall and by kind of query."""

    recall: float
    mrr: float
    by_kind: dict[str, tuple[float, float]]


def load_registry() -> list[Source]:
    """The shipped catalogue's sources, the ones the queries are labelled against."""
    return list(bundled_sources())


def load_queries(path: Path = QUERIES) -> list[Query]:
    """The labelled queries."""
    return [
        Query(query=q["query"], relevant=frozenset(q["relevant"]), kind=q["kind"])
        for q in json.loads(path.read_text("utf-8"))["queries"]
    ]


def shipped(sources: Sequence[Source], dense: DenseArm | None) -> Ranker:
    """The registry's own ranking over ``sources`` (BM25, fused with ``dense`` if given)."""
    ranker = Shipped(dense)
    ranker.index_for((0, len(sources)), sources)
    ids = [s.id for s in sources]
    return lambda query: [hit.source.id for hit in ranker.rank(query, ids, top=DEPTH)]


class _Remembered:
    """A dense arm that answers texts it has embedded before from a dictionary, so the
    shipped ranking reuses the vectors the benchmark cached on disk."""

    def __init__(self, arm: DenseArm, texts: list[str], vectors: np.ndarray) -> None:
        self.arm = arm
        self.known = dict(zip(texts, vectors, strict=True))

    @property
    def name(self) -> str:
        return self.arm.name

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        if all(t in self.known for t in texts):
            return np.stack([self.known[t] for t in texts])
        return self.arm.embed(texts)  # a query: embedded every time, as in use


class Dense:
    """The dense arm over the sources: cosine of the query's vector with each source's."""

    def __init__(self, arm: DenseArm, sources: Sequence[Source], cache: Path | None = None) -> None:
        self.ids = [s.id for s in sources]
        self.arm = arm
        self.vectors, self.docs_per_s = _vectors(arm, [s.search_text() for s in sources], cache)

    def rank(self, query: str) -> list[str]:
        """Every source, most similar first (at most :data:`DEPTH`)."""
        scores = self.vectors @ self.arm.embed([query])[0]
        return [self.ids[i] for i in np.argsort(-scores, kind="stable")[:DEPTH]]


def _vectors(
    arm: DenseArm, texts: list[str], cache: Path | None
) -> tuple[np.ndarray, float | None]:
    """The texts' vectors (from ``cache``, a directory, when it has them), and documents
    per second when they had to be computed."""
    key = hashlib.sha256("\x00".join([arm.name, *texts]).encode()).hexdigest()[:24]
    kept = cache / f"{key}.npy" if cache else None
    if kept and kept.is_file():
        return np.load(kept), None
    started = time.perf_counter()
    vectors = arm.embed(texts)
    rate = len(texts) / (time.perf_counter() - started)
    if kept:
        kept.parent.mkdir(parents=True, exist_ok=True)
        np.save(kept, vectors)
    return vectors, rate


def measure(rank: Ranker, queries: Sequence[Query]) -> Scores:
    """recall@5 and MRR of ``rank`` over ``queries``."""
    per_query = [_score(list(rank(q.query)), q.relevant) for q in queries]
    kinds = sorted({q.kind for q in queries})
    return Scores(
        recall=statistics.fmean(r for r, _ in per_query),
        mrr=statistics.fmean(m for _, m in per_query),
        by_kind={
            kind: (
                statistics.fmean(
                    r for (r, _), q in zip(per_query, queries, strict=True) if q.kind == kind
                ),
                statistics.fmean(
                    m for (_, m), q in zip(per_query, queries, strict=True) if q.kind == kind
                ),
            )
            for kind in kinds
        },
    )


def _score(ranked: list[str], relevant: frozenset[str]) -> tuple[float, float]:
    found = len(relevant.intersection(ranked[:CUTOFF]))
    recall = found / min(len(relevant), CUTOFF)
    first = next((i for i, s in enumerate(ranked[:DEPTH], start=1) if s in relevant), None)
    return recall, 1.0 / first if first else 0.0


def arms(
    sources: Sequence[Source], dense: DenseArm, cache: Path | None = None
) -> tuple[Dense, dict[str, Ranker]]:
    """BM25 (shipped), dense alone and fused (shipped) rankers over ``sources`` (source
    vectors kept in ``cache``)."""
    semantic = Dense(dense, sources, cache)
    texts = [s.search_text() for s in sources]
    remembered = _Remembered(dense, texts, semantic.vectors)
    return (
        semantic,
        {
            "BM25": shipped(sources, None),
            "dense": semantic.rank,
            "fused": shipped(sources, remembered),
        },
    )


def _median_ms(rank: Ranker, queries: Sequence[Query], runs: int = 50) -> float:
    times = []
    for i in range(runs):
        query = queries[i % len(queries)].query
        started = time.perf_counter()
        rank(query)
        times.append((time.perf_counter() - started) * 1000)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--n", type=int, default=10_000, help="synthesised distractors")
    parser.add_argument("--seed", type=int, default=20)
    args = parser.parse_args()
    dense = load_minilm()
    if dense is None:
        raise SystemExit(f"no dense arm: {dense_unavailable()}")
    dense.embed(["warm up"])  # the first call pays for page faults and BLAS threads
    queries = load_queries()
    real = load_registry()
    print(f"{len(queries)} queries; dense arm {dense.name}")
    print(f"\n{'registry':<24}{'ranking':<8}{'recall@5':>10}{'MRR':>8}{'ms':>7}   by kind")
    for label, sources in (
        (f"catalogue ({len(real)})", real),
        (f"+ {args.n:,} synthesised", [*real, *synthesise(real, args.n, args.seed)]),
    ):
        semantic, rankers = arms(sources, dense, CACHE)
        for name, rank in rankers.items():
            scores = measure(rank, queries)
            kinds = "  ".join(f"{k} {r:.2f}/{m:.2f}" for k, (r, m) in scores.by_kind.items())
            ms = _median_ms(rank, queries)
            print(
                f"{label:<24}{name:<8}{scores.recall:>10.3f}{scores.mrr:>8.3f}{ms:>7.1f}   {kinds}"
            )
        if semantic.docs_per_s is not None:
            print(f"{'':<24}(embedded {len(sources):,} sources at {semantic.docs_per_s:.0f}/s)")
    embed_ms = _median_ms(lambda q: dense.embed([q]), queries)
    print(f"\ndense query embedding: {embed_ms:.1f} ms median of 50")


if __name__ == "__main__":
    main()
