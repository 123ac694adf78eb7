"""Connectors answered from recordings shipped with geomint, never the network.

The demo (``create_map_agent("demo")``) runs on a laptop with no network, yet one of its
prompts searches a STAC catalogue. Rather than leave catalogue search out of the demo or
fake its result, the STAC connector runs unchanged with its HTTP requests answered from
answers geomint ships (``sources/recorded/earth_search``): the same parsing, caps,
ranking and messages as a live search. What it cannot honestly answer it refuses: a
request no recording covers (a COG's bytes, another collection) is ``unavailable``,
saying what the recordings hold.

Every result says where it came from: a note that it was replayed, that the recordings
were written by hand in the API's shape (not captured from it), and that their ids,
dates and extents are illustrative. A listing is a menu, not data: nothing replayed is
minted as a figure.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable, Mapping
from importlib import resources
from typing import Any, Final, TypeVar
from urllib.parse import parse_qs, urlsplit

import httpx

from geomint.http import ScriptedTransport
from geomint.sources.connectors.base import Connector, Request, SourceFetchError
from geomint.sources.connectors.stac import StacConnector
from geomint.sources.discovery import CatalogueQuery, CatalogueResults, CatalogueSearcher
from geomint.sources.model import Source
from geomint.sources.service import default_connectors

__all__ = [
    "EARTH_SEARCH_API",
    "Recordings",
    "Replayed",
    "ReplayedSearcher",
    "demo_connectors",
    "earth_search",
]

#: The STAC API the shipped recordings imitate.
EARTH_SEARCH_API: Final = "https://earth-search.aws.element84.com/v1"
_FOLDER: Final = "earth_search"
_T = TypeVar("_T")


@dataclasses.dataclass(frozen=True, kw_only=True)
class Recordings:
    """Answers to requests, by request, and what they cover in words.

    Attributes:
        answer: Returns the answer to a request, or None when no recording covers it.
        holds: What the recordings cover (said when a request is not covered).
        note: The note every result carries.
    """

    answer: Callable[[httpx.Request], httpx.Response | None]
    holds: str
    note: str


class Replayed:
    """A connector whose requests are answered from :class:`Recordings`.

    It has the wrapped connector's name and vocabulary and needs no network; a fetch
    runs the wrapped connector with a transport that answers from the recordings, and
    its result carries the recordings' note.
    """

    def __init__(self, inner: Connector, recordings: Recordings) -> None:
        self._inner = inner
        self._recordings = recordings

    @property
    def name(self) -> str:
        """The wrapped connector's name: rows naming it are read by this one."""
        return self._inner.name

    @property
    def needs_network(self) -> bool:
        """False: nothing is sent over the network."""
        return False

    @property
    def vocabulary(self) -> Mapping[str, str]:
        """The wrapped connector's filters."""
        return self._inner.vocabulary

    def fetch(self, request: Request) -> Any:
        """The wrapped connector's fetch, answered from the recordings.

        Raises:
            SourceFetchError: What the wrapped connector raises; ``unavailable`` naming
                what the recordings hold when one of its requests has no recording.
        """
        missed: list[str] = []
        replayed = dataclasses.replace(
            request, policy=dataclasses.replace(request.policy, transport=self._transport(missed))
        )
        found = self._run(lambda: self._inner.fetch(replayed), missed)
        return _noted(found, self._recordings.note)

    def _transport(self, missed: list[str]) -> ScriptedTransport:
        def handle(asked: httpx.Request) -> httpx.Response:
            answer = self._recordings.answer(asked)
            if answer is None:
                missed.append(f"{asked.method} {asked.url}")
                return httpx.Response(503, text="no recording of this request")
            return answer

        return ScriptedTransport(handle)

    def _run(self, call: Callable[[], _T], missed: list[str]) -> _T:
        try:
            return call()
        except SourceFetchError as error:
            if not missed:
                raise
            raise SourceFetchError(
                "unavailable",
                f"this installation answers {self.name} from recordings (the demo has no "
                f"network), and none covers {missed[0][:200]}; they hold "
                f"{self._recordings.holds}. With a network, GEOMINT_SOURCES_LIVE=1 and a "
                "model, the live API answers",
                url=error.url,
            ) from None


class ReplayedSearcher(Replayed):
    """A :class:`Replayed` catalogue searcher: discovery's searches are replayed too."""

    def __init__(self, inner: Connector, recordings: Recordings) -> None:
        if not isinstance(inner, CatalogueSearcher):
            raise TypeError(f"{type(inner).__name__} is a connector but not a searcher")
        super().__init__(inner, recordings)
        self._searcher = inner

    def is_catalogue(self, source: Source) -> bool:
        """As the wrapped searcher says."""
        return self._searcher.is_catalogue(source)

    def search(self, query: CatalogueQuery) -> CatalogueResults:
        """The wrapped searcher's search, answered from the recordings.

        Raises:
            SourceFetchError: As :meth:`Replayed.fetch` does.
        """
        missed: list[str] = []
        replayed = dataclasses.replace(
            query, policy=dataclasses.replace(query.policy, transport=self._transport(missed))
        )
        found = self._run(lambda: self._searcher.search(replayed), missed)
        return dataclasses.replace(found, notes=(*found.notes, self._recordings.note))


def _noted(found: _T, note: str) -> _T:
    notes = getattr(found, "notes", None)
    if isinstance(notes, tuple) and dataclasses.is_dataclass(found):
        return dataclasses.replace(found, notes=(*notes, note))  # type: ignore[type-var]
    return found


def demo_connectors() -> dict[str, Connector]:
    """The shipped connectors, with STAC answered from the Earth Search recordings."""
    return {**default_connectors(), "stac": ReplayedSearcher(StacConnector(), earth_search())}


# --- the Earth Search recordings ----------------------------------------------------------


def earth_search() -> Recordings:
    """Earth Search's collections list (two pages), the ``cop-dem-glo-30`` collection, and
    item searches of it, answered from the recorded items over the area asked."""
    folder = resources.files("geomint.sources") / "recorded" / _FOLDER

    def read(name: str) -> Any:
        return json.loads((folder / name).read_text("utf-8"))

    pages = {None: read("collections_page1.json"), "next:naip": read("collections_page2.json")}
    collection = read("cop_dem_collection.json")
    items = read("cop_dem_search.json")
    api = urlsplit(EARTH_SEARCH_API)

    def answer(asked: httpx.Request) -> httpx.Response | None:
        url = urlsplit(str(asked.url))
        if (url.scheme, url.netloc) != (api.scheme, api.netloc):
            return None
        path = url.path.removeprefix(api.path)
        if asked.method == "GET" and path == "/collections":
            token = parse_qs(url.query).get("token", [None])[0]
            page = pages.get(token)
            return httpx.Response(200, json=page) if page is not None else None
        if asked.method == "GET" and path == "/collections/cop-dem-glo-30":
            return httpx.Response(200, json=collection)
        if asked.method == "POST" and path == "/search":
            return _search(asked, items)
        return None

    return Recordings(
        answer=answer,
        holds=(
            "Earth Search's list of collections, the cop-dem-glo-30 collection, and its "
            "items over Helsinki (tiles N60 E024 and E025)"
        ),
        note=(
            "answered from recordings shipped with geomint's demo, not the live API: they "
            "were written by hand in Earth Search's shape, not captured from it, so item "
            "ids, dates and extents are illustrative; nothing was sent over the network"
        ),
    )


def _search(asked: httpx.Request, items: dict[str, Any]) -> httpx.Response | None:
    """A search of the recorded items: those of the collection asked over the box asked."""
    try:
        body = json.loads(asked.content or b"{}")
    except ValueError:
        return httpx.Response(400, json={"description": "the search body is not JSON"})
    if not isinstance(body, dict) or body.get("collections") != ["cop-dem-glo-30"]:
        return None
    if body.get("datetime") or body.get("query"):
        return None  # the recorded items carry no dates or cloud cover to filter by
    box = body.get("bbox")
    if not (isinstance(box, list) and len(box) == 4):
        return None
    west, south, east, north = (float(v) for v in box)
    kept = [
        f
        for f in items["features"]
        if not (
            f["bbox"][0] > east
            or f["bbox"][2] < west
            or f["bbox"][1] > north
            or f["bbox"][3] < south
        )
    ]
    if not kept:
        return None  # outside the recordings: not an empty answer the live API might not give
    answer = {**items, "features": kept, "numberMatched": len(kept), "numberReturned": len(kept)}
    answer["context"] = {**items.get("context", {}), "matched": len(kept), "returned": len(kept)}
    return httpx.Response(200, json=answer, headers={"Content-Type": "application/geo+json"})
