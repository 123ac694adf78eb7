"""Requests to a STAC API, and discovery's search of its collections.

:class:`StacApi` is what every request of the STAC connector goes through: JSON answers
fetched with :mod:`geomint.http` under the caller's policy (the API's own address
trusted, answers capped at 8 MB, since they are parsed in this process), and the errors
an answer means. :func:`search_collections` is the connector's
:class:`~geomint.sources.discovery.CatalogueSearcher` side: it reads the API's
``/collections`` and ranks them by the words asked.

Why collections are ranked here: STAC's collection-search extension (``q`` on
``/collections``) is a draft few APIs answer (Earth Search does not), while every API
lists its collections, and an API holds tens to a few hundred of them. The list is read
(up to :data:`MAX_COLLECTION_PAGES` pages) and ranked with the registry's own BM25 words
(:func:`geomint.sources.ranking.words`), over each collection's id, title, keywords and
description; one whose spatial extent misses the place asked is left out, and said so.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final
from urllib.parse import quote, urlsplit

from geomint.http import FetchError, RequestPolicy, request
from geomint.sources.connectors._common import (
    DenseAnswerError,
    capped,
    clipped,
    config_text,
    fetch_error,
    head_of,
    json_answer,
    short_text,
    trusting,
)
from geomint.sources.connectors.base import SourceFetchError
from geomint.sources.discovery import Candidate, CatalogueQuery, CatalogueResults
from geomint.sources.model import Source
from geomint.sources.ranking import words

__all__ = [
    "MAX_ANSWER_BYTES",
    "MAX_COLLECTION_PAGES",
    "StacApi",
    "collection_licence",
    "publisher",
    "search_collections",
]

#: Most bytes of one answer of the API (parsed in this process).
MAX_ANSWER_BYTES: Final = 8_000_000
#: Most pages of ``/collections`` one discovery search reads.
MAX_COLLECTION_PAGES: Final = 5
_NOT_A_LICENCE: Final = frozenset({"proprietary", "various", "other"})
_MAX_DESCRIPTION: Final = 600
_KEPT_FIELDS: Final = (
    "id", "title", "description", "keywords", "license", "links", "providers", "extent",
    "item_assets", "updated",
)  # fmt: skip


class StacApi:
    """One conversation with a STAC API: its address, policy, last URL and messages."""

    def __init__(self, source: Source, policy: RequestPolicy) -> None:
        self.source = source
        self.title = source.title
        self.api = config_text(source, "api_url").rstrip("/")
        self.policy: RequestPolicy = trusting(policy, self.api)
        self.api_policy = capped(self.policy, MAX_ANSWER_BYTES)
        self.last_url = self.api

    def json(
        self, method: str, url: str, body: dict[str, Any] | None, *, key: str, value: str
    ) -> Any:
        """The JSON answer of one request; ``key`` and ``value`` name what a 404 lacks.

        Raises:
            SourceFetchError: ``not_found`` (404), ``refused_filter`` (400), ``malformed``
                (not JSON), or what the HTTP failure means.
        """
        try:
            fetched = request(
                "POST" if method == "POST" else "GET",
                url,
                json=body if method == "POST" else None,
                headers={"Accept": "application/geo+json, application/json"},
                policy=self.api_policy,
            )
        except FetchError as error:
            if error.code == "status" and error.status == 404:
                raise SourceFetchError(
                    "not_found",
                    f"{self.title} has no {key} {value!r} at {self.api}; check the id",
                    url=error.url,
                ) from None
            if error.code == "status" and error.status == 400:
                said = f" ({error.detail[:200]})" if error.detail else ""
                raise SourceFetchError(
                    "refused_filter",
                    f"{self.title} refused the search{said}; check the area, dates and "
                    "cloud cover asked",
                    url=error.url,
                ) from None
            raise fetch_error(error, f"{self.title}'s STAC API") from None
        self.last_url = fetched.url
        try:
            return json_answer(fetched.body)
        except DenseAnswerError as exc:
            raise self.malformed(str(exc)) from None
        except ValueError:
            raise self.malformed(f"it is not JSON; {head_of(fetched.body)}") from None
        except RecursionError:
            raise self.malformed("it nests deeper than geomint reads") from None

    def malformed(self, why: str) -> SourceFetchError:
        """An answer geomint cannot read."""
        return SourceFetchError(
            "malformed",
            f"{self.title}'s STAC API sent an answer geomint cannot read: {why}",
            url=self.last_url,
        )

    def changed(self, what: str) -> SourceFetchError:
        """An answer of another shape than this connector reads."""
        return SourceFetchError(
            "changed",
            f"{self.title}'s STAC API answered in a shape this connector does not read: "
            f"{what}; nothing was read. Report it",
            url=self.last_url,
        )


def collection_licence(licence: Any, link: Mapping[str, Any] | None) -> str | None:
    """The collection's licence as provenance carries it: an SPDX id, or what its licence
    link names when the collection says only "proprietary" or "various"."""
    text = short_text(licence, 200)
    if text is None or text.lower() not in _NOT_A_LICENCE:
        return text
    if link is None:
        return text
    title = short_text(link.get("title"), 120)
    href = short_text(link.get("href"), 300)
    named = ", ".join(part for part in (title, href) if part)
    return f"{text} ({named})"[:200] if named else text


def is_licence(text: str) -> bool:
    """Whether an item's ``license`` names one (not "proprietary", "various", "other")."""
    return text.lower() not in _NOT_A_LICENCE


def publisher(providers: Any) -> str | None:
    """The licensors and producers a collection's ``providers`` name, or None."""
    if not isinstance(providers, list):
        return None
    names = [
        name
        for provider in providers
        if isinstance(provider, dict)
        and (name := clipped(provider.get("name"), 120)) is not None
        and {"licensor", "producer"} & set(provider.get("roles") or ())
    ]
    return ", ".join(dict.fromkeys(names))[:200] or None


def licence_link(links: Any) -> Mapping[str, Any] | None:
    """The ``license`` link of a collection's ``links``, when it has one."""
    if not isinstance(links, list):
        return None
    return next((x for x in links if isinstance(x, dict) and x.get("rel") == "license"), None)


# --- discovery ----------------------------------------------------------------------------


def search_collections(query: CatalogueQuery) -> CatalogueResults:
    """The API's collections that match ``query``'s words, best first.

    Raises:
        SourceFetchError: As a fetch does for a request that fails, or ``changed`` when
            ``/collections`` answers without a ``collections`` list.
    """
    api = StacApi(query.catalogue, query.policy)
    listed, notes = _collections(api)
    wanted = words(query.query)
    texts = {c_id: words(_text(c)) for c_id, c in listed.items()}
    scores = _bm25(wanted, texts)
    outside = [c_id for c_id in scores if query.bbox and not _meets(listed[c_id], query.bbox)]
    if outside:
        notes.append(
            f"{len(outside)} matching collections do not cover the place asked and were "
            f"left out ({', '.join(sorted(outside)[:5])}{', ...' if len(outside) > 5 else ''})"
        )
    ranked = sorted((c for c in scores if c not in outside), key=lambda c: (-scores[c], c))
    if not ranked:
        notes.append(
            f"none of the API's {len(listed)} collections has these words in its id, title, "
            "keywords or description"
        )
    candidates = tuple(
        _candidate(api, query.catalogue.id, c_id, listed[c_id]) for c_id in ranked[: query.limit]
    )
    return CatalogueResults(candidates=candidates, matched=len(ranked), notes=tuple(notes))


def _collections(api: StacApi) -> tuple[dict[str, dict[str, Any]], list[str]]:
    """The API's collections by id (pages followed on its own site), and notes."""
    found: dict[str, dict[str, Any]] = {}
    notes: list[str] = []
    url: str | None = f"{api.api}/collections"
    for page in range(MAX_COLLECTION_PAGES):
        if url is None:
            break
        answer = api.json("GET", url, None, key="collections", value="list")
        listed = answer.get("collections") if isinstance(answer, dict) else None
        if not isinstance(listed, list):
            raise api.changed("/collections answered without a collections list")
        for raw in listed:
            if isinstance(raw, dict) and isinstance(raw.get("id"), str) and raw["id"]:
                # only what ranking and a candidate read: a page's other fields go now
                found.setdefault(raw["id"][:200], {k: raw.get(k) for k in _KEPT_FIELDS})
        url = _next(answer, api.api)
        if url is not None and page == MAX_COLLECTION_PAGES - 1:
            notes.append(f"read the first {MAX_COLLECTION_PAGES} pages of collections only")
    return found, notes


def _next(answer: dict[str, Any], api: str) -> str | None:
    links = answer.get("links")
    if not isinstance(links, list):
        return None
    link = next((x for x in links if isinstance(x, dict) and x.get("rel") == "next"), None)
    href = link.get("href") if link is not None else None
    if not isinstance(href, str) or urlsplit(href)[:2] != urlsplit(api)[:2]:
        return None
    return href


def _text(collection: Mapping[str, Any]) -> str:
    keywords = collection.get("keywords")
    parts = [
        str(collection.get("id") or ""),
        clipped(collection.get("title"), 300) or "",
        " ".join(k for k in keywords if isinstance(k, str))[:1000]
        if isinstance(keywords, list)
        else "",
        clipped(collection.get("description"), 4000) or "",
    ]
    return " ".join(parts)


def _bm25(wanted: list[str], texts: Mapping[str, list[str]]) -> dict[str, float]:
    """Each collection's BM25 score for the words, those above zero only."""
    ids = list(texts)
    vocabulary = {w for t in texts.values() for w in t}
    known = [w for w in wanted if w in vocabulary]
    if not ids or not known:
        return {}
    import bm25s  # type: ignore[import-untyped]  # noqa: PLC0415 - paid on first search

    index = bm25s.BM25()
    index.index([texts[c] or ["_"] for c in ids], show_progress=False)
    scores = index.get_scores(known)
    return {c: float(s) for c, s in zip(ids, scores, strict=True) if s > 0}


def _meets(collection: Mapping[str, Any], bbox: tuple[float, float, float, float]) -> bool:
    """Whether the collection's spatial extent meets ``bbox`` (True when it states none)."""
    extent = collection.get("extent")
    spatial = extent.get("spatial") if isinstance(extent, dict) else None
    boxes = spatial.get("bbox") if isinstance(spatial, dict) else None
    if not isinstance(boxes, list) or not boxes or not isinstance(boxes[0], list):
        return True
    box = [float(v) for v in boxes[0] if isinstance(v, int | float)]
    if len(box) != len(boxes[0]) or len(box) not in (4, 6):
        return True
    west, south, east, north = (box[0], box[1], box[3], box[4]) if len(box) == 6 else box
    w, s, e, n = bbox
    if south > n or north < s:
        return False
    if west > east:  # crosses the antimeridian
        return e >= west or w <= east
    return not (west > e or east < w)


def _candidate(api: StacApi, catalogue: str, c_id: str, raw: Mapping[str, Any]) -> Candidate:
    assets = raw.get("item_assets")
    kinds = (
        [a.get("type") for a in assets.values() if isinstance(a, dict)]
        if isinstance(assets, dict)
        else []
    )
    return Candidate(
        id=c_id,
        title=clipped(raw.get("title"), 300) or c_id,
        kind="collection",
        catalogue=catalogue,
        fetch={"source_id": catalogue, "filters": {"collection": c_id, "list": "yes"}},
        description=clipped(raw.get("description"), _MAX_DESCRIPTION),
        publisher=publisher(raw.get("providers")),
        licence=collection_licence(raw.get("license"), licence_link(raw.get("links"))),
        url=f"{api.api}/collections/{quote(c_id)}",
        formats=tuple(dict.fromkeys(k[:100] for k in kinds if isinstance(k, str)))[:10],
        modified=short_text(raw.get("updated"), 40),
    )
