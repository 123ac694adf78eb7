"""Ranking the sources a filter kept: BM25 beside an optional dense arm, fused by rank.

BM25 (``bm25s``) catches the proper nouns and codes a person types ("Eurostat", "ODbL",
"SP.POP.TOTL") that a sentence vector blurs; a dense arm catches the paraphrase
("how many people live in" for population). Each ranks the survivors of the registry's
SQL filter on its own, and reciprocal rank fusion (``1 / (k + rank)``, summed over the
arms that ranked a source) orders the union. Every hit says which arms ranked it, and
at what rank, so a result ranked by BM25 alone says so.

The indexes are built once per registry revision, over every source, and a query
scores the whole corpus in one vectorised pass before the filter's mask is applied:
cheaper than building an index for each filtered subset.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Final, Protocol, runtime_checkable

import numpy as np
from numpy.typing import NDArray

from geomint.sources.model import Source
from geomint.store.catalogue import Revision

__all__ = ["MIN_SIMILARITY", "RRF_K", "DenseArm", "Hit", "Ranker", "words"]

#: The constant of reciprocal rank fusion: large enough that a first place in one arm
#: does not drown agreement between both.
RRF_K: Final = 60
#: The cosine below which the dense arm does not rank a source at all.
MIN_SIMILARITY: Final = 0.25
# Words are folded to a crude stem (a plural "s" off) so "populations" finds "population";
# a real stemmer would need PyStemmer, a C extension, for little gain over titles.
_WORD: Final = re.compile(r"(?u)\b\w[\w.]*\w\b|\b\w\b")
_STOPWORD_TEXT: Final = (
    "a an and are as at be by for from how in into is it of on or per the to was "
    "what which with many much there their this that these those does do show me "
    "give"
)
_STOPWORDS: Final = frozenset(_STOPWORD_TEXT.split())


# Source vectors by arm and text, shared by every Ranker of the process: agents (and a
# test suite's many) embed the shipped sources once, not once each.
_SHARED_VECTORS: dict[str, dict[str, NDArray[np.float32]]] = {}


def words(text: str) -> list[str]:
    """The words of ``text`` a search ranks by: lower case, stopwords out, a plural "s" off."""
    found = []
    for raw in _WORD.findall(text.lower()):
        word = raw.strip(".")
        if not word or word in _STOPWORDS:
            continue
        if len(word) > 4 and word.endswith("s") and not word.endswith("ss"):
            word = word[:-1]
        found.append(word)
    return found


@runtime_checkable
class DenseArm(Protocol):
    """A sentence embedder an application plugs in as the dense arm.

    ``embed`` returns one L2-normalised row per text, so a dot product is a cosine.
    """

    @property
    def name(self) -> str:
        """What hits call the arm (``"minilm"``)."""
        ...

    def embed(self, texts: Sequence[str]) -> NDArray[np.float32]:
        """Embed ``texts`` as unit-length rows."""
        ...


@dataclass(frozen=True, kw_only=True)
class Hit:
    """One ranked source.

    Attributes:
        source: The source.
        score: Its fused score (higher is better).
        ranks: Which arms ranked it, and at what rank (1 is first).
    """

    source: Source
    score: float
    ranks: dict[str, int]


class _Index:
    """The arms' indexes over one revision of the registry."""

    def __init__(
        self,
        sources: Sequence[Source],
        dense: DenseArm | None,
        vectors: dict[str, NDArray[np.float32]],
    ) -> None:
        import bm25s  # type: ignore[import-untyped]  # noqa: PLC0415 - paid on first search

        self.sources = list(sources)
        self.position = {s.id: i for i, s in enumerate(self.sources)}
        corpus = [words(s.search_text()) or ["_"] for s in self.sources]
        self.bm25 = bm25s.BM25()
        self.bm25.index(corpus, show_progress=False)
        self.vocabulary = {word for words in corpus for word in words}
        self.vectors: NDArray[np.float32] | None = None
        if dense is not None and self.sources:
            # Embedding is the slow part (milliseconds a source): a source whose text did
            # not change keeps its vector from the revision before.
            texts = [s.search_text() for s in self.sources]
            missing = list(dict.fromkeys(t for t in texts if t not in vectors))
            for start in range(0, len(missing), 256):
                batch = missing[start : start + 256]
                vectors.update(zip(batch, np.asarray(dense.embed(batch)), strict=True))
            self.vectors = np.stack([vectors[t] for t in texts])


class Ranker:
    """Ranks a registry's sources for a query, keeping its indexes per revision.

    Args:
        dense: The dense arm, or None for BM25 alone.
        top: How many hits to return by default.
    """

    def __init__(self, dense: DenseArm | None = None) -> None:
        self._dense = dense
        self._lock = threading.Lock()
        self._index: _Index | None = None
        self._revision: Revision | None = None
        self._vectors = _SHARED_VECTORS.setdefault(dense.name if dense else "", {})

    @property
    def arms(self) -> tuple[str, ...]:
        """The arms that rank: ``("bm25",)`` or ``("bm25", <dense name>)``."""
        return ("bm25",) if self._dense is None else ("bm25", self._dense.name)

    def index_for(self, revision: Revision, sources: Sequence[Source]) -> None:
        """Build the indexes for ``sources`` unless those of ``revision`` are built."""
        with self._lock:
            if self._index is None or revision != self._revision:
                self._index = _Index(sources, self._dense, self._vectors)
                self._revision = revision

    @property
    def revision(self) -> Revision | None:
        """The registry revision the indexes were built for, or None before any."""
        return self._revision

    def rank(self, query: str, allowed: Sequence[str], *, top: int = 5) -> list[Hit]:
        """The ``top`` sources among ``allowed`` ids for ``query``, best first.

        A source no arm scores above zero is not a hit: a query that shares nothing
        with the registry gets no results rather than the first few.
        """
        index = self._index
        if index is None or not allowed or top < 1:
            return []
        mask = np.zeros(len(index.sources), dtype=bool)
        for source_id in allowed:
            position = index.position.get(source_id)
            if position is not None:
                mask[position] = True
        ranks: dict[str, dict[int, int]] = {}
        known = [w for w in words(query) if w in index.vocabulary]
        if known:
            scores = np.asarray(index.bm25.get_scores(known), dtype=np.float64)
            ranks["bm25"] = _ranked(scores, mask, depth=max(top * 4, 20))
        if index.vectors is not None and self._dense is not None:
            query_vector = np.asarray(self._dense.embed([query]))[0]
            similarity = (index.vectors @ query_vector).astype(np.float64)
            # Unrelated sentences still score above zero: below this, a source is no match.
            similarity[similarity < MIN_SIMILARITY] = 0.0
            ranks[self._dense.name] = _ranked(similarity, mask, depth=max(top * 4, 20))
        fused: dict[int, float] = {}
        for arm_ranks in ranks.values():
            for position, rank in arm_ranks.items():
                fused[position] = fused.get(position, 0.0) + 1.0 / (RRF_K + rank)
        best = sorted(fused, key=lambda p: (-fused[p], index.sources[p].id))[:top]
        return [
            Hit(
                source=index.sources[p],
                score=round(fused[p], 6),
                ranks={arm: r[p] for arm, r in ranks.items() if p in r},
            )
            for p in best
        ]


def _ranked(scores: NDArray[np.float64], mask: NDArray[np.bool_], *, depth: int) -> dict[int, int]:
    """Rank (from 1) of the ``depth`` best positions the mask allows and that score > 0."""
    kept = np.where(mask & (scores > 0), scores, -np.inf)
    count = int(np.count_nonzero(np.isfinite(kept)))
    if count == 0:
        return {}
    depth = min(depth, count)
    best = np.argpartition(-kept, depth - 1)[:depth]
    ordered: list[Any] = sorted(best.tolist(), key=lambda p: (-kept[p], p))
    return {int(p): rank for rank, p in enumerate(ordered, start=1)}
