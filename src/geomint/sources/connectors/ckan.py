"""CKAN open-data portals (Helsinki Region Infoshare, avoindata.fi...): search, list, download.

A source names its portal in ``config["base_url"]`` (``"https://hri.fi/data"``); the
portal's action API is under ``{base}/api/3/action/``. A fetch does one of three things,
by the filters it is given:

* ``q`` (and ``rows``): search, with ``package_search``, and return a
  :class:`~geomint.sources.connectors.base.Listing` of datasets and their resources;
* ``dataset``: list that one dataset and its resources (``package_show``);
* ``resource``: download that resource's file and return it as a
  :class:`~geomint.sources.connectors.base.Download` of raw bytes, never parsed here:
  the caller lands it through the confined intake.

It is also a :class:`~geomint.sources.discovery.CatalogueSearcher`: :meth:`CkanConnector.search`
runs the same ``package_search`` for discovery and returns each dataset as a
:class:`~geomint.sources.discovery.Candidate` that ``fetch(filters={"dataset": name})``
lists next.

A portal's licence is per dataset, so a listing gives each dataset's licence and a
download carries its dataset's. CKAN answers in an envelope, ``{"success": true,
"result": ...}``; a failure is ``{"success": false, "error": {"__type", "message"}}``
with HTTP 403 (not allowed), 404 (no such dataset) or 409 (a bad search or parameter),
each told here as what it means for the fetch. The portal's own address is trusted
like a provider's base URL; a file it links to elsewhere must be on a public address.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any, Final

from geomint.http import Fetched, FetchError, ParamValue, RequestPolicy, request
from geomint.sources.connectors._common import (
    DenseAnswerError,
    capped,
    clipped,
    config_text,
    fetch_error,
    head_of,
    json_answer,
    now,
    trusting,
)
from geomint.sources.connectors.base import (
    Download,
    FetchErrorKind,
    ListedDataset,
    ListedResource,
    Listing,
    Request,
    SourceFetchError,
)
from geomint.sources.discovery import Candidate, CatalogueQuery, CatalogueResults
from geomint.sources.model import Source

__all__ = ["DEFAULT_ROWS", "MAX_ROWS", "CkanConnector"]

DEFAULT_ROWS: Final = 10
MAX_ROWS: Final = 100
_NO_LICENCE: Final = frozenset({"", "notspecified", "other-closed"})
_TYPE: Final = re.compile(r'"__type"\s{0,20}:\s{0,20}"([^"]{1,100})"')
# An action's answer is parsed in this process: a search of MAX_ROWS datasets with their
# resources is well under this; a portal sending more is cut off by geomint.http.
_MAX_ANSWER_BYTES: Final = 8_000_000
_MAX_RESOURCES: Final = 500
# What a dataset's texts may be to become a landed file's provenance (the limits of
# geomint.provenance.Provenance); a name or id is an identifier, never clipped.
_MAX_TITLE: Final = 500
_MAX_PUBLISHER: Final = 200
_MAX_LICENCE: Final = 200
_MAX_NAME: Final = 200
# A dataset's description as discovery's shortlisting model reads it: enough to judge it.
_MAX_DESCRIPTION: Final = 1_000
_MIXED: Final = re.compile(r"\s*mixed\b", re.IGNORECASE)


class CkanConnector:
    """Search a CKAN portal, list a dataset, or download a resource's file.

    Settings in ``source.config``: ``base_url`` (required), the portal's address
    before ``/api/3/action``.
    """

    @property
    def name(self) -> str:
        """``"ckan"``."""
        return "ckan"

    @property
    def needs_network(self) -> bool:
        """True: every fetch is a request to the service."""
        return True

    @property
    def vocabulary(self) -> Mapping[str, str]:
        """What a fetch of a portal takes."""
        return {
            "q": "search words",
            "dataset": "a dataset name or id from a listing, to list its resources",
            "resource": "a resource id from a listing, to download that file",
            "rows": f"how many datasets to list, 1 to {MAX_ROWS} (default {DEFAULT_ROWS})",
        }

    def fetch(self, request: Request) -> Listing | Download:
        """Search, list one dataset, or download one resource (see the module docstring).

        Raises:
            SourceFetchError: ``not_found`` for a dataset or resource the portal does
                not have; ``refused_filter`` for one it does not let geomint read, a
                search it cannot parse, a ``rows`` out of range, or a resource not in
                the dataset named (with the dataset's resource ids as options);
                ``malformed`` or ``changed`` for an answer of another shape;
                ``timeout``, ``rate_limited`` or ``unavailable`` when it fails.
        """
        portal = _Portal(request)
        dataset = _one(request, "dataset")
        resource = _one(request, "resource")
        if resource is not None:
            return portal.download(resource, dataset)
        if dataset is not None:
            found = portal.action("package_show", {"id": dataset}, key="dataset", value=dataset)
            listed = _dataset(found, portal)
            return Listing(
                datasets=(listed,),
                count=1,
                url=portal.last_url,
                retrieved_at=now(),
                notes=tuple(portal.notes),
            )
        return portal.search(_one(request, "q") or "", _rows(request))

    def is_catalogue(self, source: Source) -> bool:
        """True: a CKAN row is a portal, searched by words."""
        return True

    def search(self, query: CatalogueQuery) -> CatalogueResults:
        """Search the portal for discovery: ``package_search`` with the query's words.

        A portal is searched by words only: the place and its box are not sent (a
        catalogue row is chosen by the countries it covers).

        Raises:
            SourceFetchError: As :meth:`fetch` does for a search.
        """
        rows = min(max(query.limit, 1), MAX_ROWS)
        portal = _Portal(Request(source=query.catalogue, policy=query.policy))
        listing = portal.search(query.query, rows)
        page = f"{portal.base}/dataset/"
        candidates = tuple(
            Candidate(
                id=d.name,
                title=d.title,
                kind="dataset",
                catalogue=query.catalogue.id,
                fetch={"source_id": query.catalogue.id, "filters": {"dataset": d.name}},
                description=d.description,
                publisher=d.organisation,
                licence=d.licence_title or d.licence_id,
                url=page + d.name,
                formats=tuple(dict.fromkeys(r.format for r in d.resources if r.format))[:10],
                modified=d.metadata_modified,
            )
            for d in listing.datasets
        )
        return CatalogueResults(candidates=candidates, matched=listing.count, notes=listing.notes)


class _Portal:
    """One fetch's conversation with a portal: its address, policy and notes."""

    def __init__(self, request: Request) -> None:
        self.source = request.source
        self.base = config_text(self.source, "base_url").rstrip("/")
        self.title = self.source.title
        self.policy: RequestPolicy = trusting(request.policy, self.base)
        self.api_policy = capped(self.policy, _MAX_ANSWER_BYTES)
        self.last_url = self.base
        self.notes: list[str] = []
        if request.units:
            self.notes.append(
                "a catalogue is searched by words, not by place: the units asked were not "
                "used; put a place name in q"
            )
        if request.period is not None:
            self.notes.append(
                "a catalogue is not filtered by period: the years asked were not used; "
                "each dataset's metadata_modified says how recent its entry is"
            )

    def action(self, name: str, params: Mapping[str, ParamValue], *, key: str, value: str) -> Any:
        """Call one action and return its ``result``, or raise what its error means."""
        url = f"{self.base}/api/3/action/{name}"
        try:
            fetched = request(
                "GET",
                url,
                params=params,
                headers={"Accept": "application/json"},
                policy=self.api_policy,
            )
        except FetchError as error:
            if error.code == "status" and error.status in (403, 404, 409):
                found = _TYPE.search(error.detail or "")
                raise self._refusal(
                    found[1] if found else None, error.status, key, value, error.url
                ) from None
            raise fetch_error(error, self.title) from None
        self.last_url = fetched.url
        try:
            envelope = json_answer(fetched.body)
        except DenseAnswerError as exc:
            raise self._malformed(fetched, str(exc)) from None
        except ValueError:
            raise self._malformed(fetched, "it is not JSON") from None
        except RecursionError:
            raise self._malformed(fetched, "it nests deeper than geomint reads") from None
        if not isinstance(envelope, dict) or "success" not in envelope:
            raise self._malformed(fetched, "it is not CKAN's {success, result} envelope")
        if envelope["success"] is not True:
            said = envelope.get("error")
            kind = said.get("__type") if isinstance(said, dict) else None
            raise self._refusal(kind, None, key, value, fetched.url)
        if "result" not in envelope:
            raise self.changed(fetched.url, f"{name} answered success without a result")
        return envelope["result"]

    def search(self, words: str, rows: int) -> Listing:
        result = self.action(
            "package_search", {"q": words, "rows": rows, "start": 0}, key="q", value=words
        )
        if not (
            isinstance(result, dict)
            and isinstance(result.get("count"), int)
            and isinstance(result.get("results"), list)
        ):
            has = ", ".join(sorted(result)) if isinstance(result, dict) else type(result).__name__
            raise self.changed(
                self.last_url, f"package_search's result has no count and results (it has {has})"
            )
        results = result["results"]
        if len(results) > rows:
            self.notes.append(
                f"{self.title} sent {len(results)} datasets for rows={rows}; kept the first {rows}"
            )
        datasets = tuple(_dataset(found, self) for found in results[:rows])
        count = max(result["count"], len(datasets))
        if count > len(datasets):
            self.notes.append(
                f"showing {len(datasets)} of {count} datasets; narrow q, or ask for up to "
                f"{MAX_ROWS} rows"
            )
        if not datasets:
            self.notes.append(f"{self.title} has no dataset matching {words!r}; try other words")
        return Listing(
            datasets=datasets,
            count=count,
            url=self.last_url,
            retrieved_at=now(),
            notes=tuple(self.notes),
        )

    def download(self, resource: str, dataset: str | None) -> Download:
        """Fetch a resource's file, with its dataset's title, licence and publisher."""
        if dataset is None:
            found = self.action("resource_show", {"id": resource}, key="resource", value=resource)
            package_id = found.get("package_id") if isinstance(found, dict) else None
            if not isinstance(package_id, str) or not package_id:
                raise self.changed(self.last_url, "resource_show's result has no package_id")
            dataset = package_id
        package = self.action("package_show", {"id": dataset}, key="dataset", value=dataset)
        listed = _dataset(package, self)
        # Checked before the file is fetched: a file whose dataset cannot be cited is
        # not landed, so it is not downloaded either.
        licence = self._licence(listed)
        chosen = next((r for r in listed.resources if resource in (r.id, r.name)), None)
        if chosen is None:
            options = tuple(r.id for r in listed.resources)
            described = "; ".join(
                f"{r.id} ({r.name or 'no name'}, {r.format or '?'})" for r in listed.resources
            )
            raise SourceFetchError(
                "refused_filter",
                f"dataset {listed.name!r} of {self.title} has no resource {resource!r}; its "
                f"resources are: {described or 'none'}",
                key="resource",
                options=options,
            )
        if not chosen.url:
            raise SourceFetchError(
                "not_found",
                f"resource {chosen.id} of dataset {listed.name!r} has no URL in {self.title}; "
                "pick another of its resources",
            )
        try:
            fetched = request("GET", chosen.url, policy=self.policy)
        except FetchError as error:
            raise fetch_error(error, f"the server of resource {chosen.id} ({chosen.url})") from None
        if fetched.content_type in ("text/html", "application/xhtml+xml") and (
            (chosen.format or "").lower() not in ("html", "htm")
        ):
            raise SourceFetchError(
                "not_found",
                f"resource {chosen.id} of dataset {listed.name!r} links to a web page, not a "
                "data file; pick another of its resources (CSV, GeoJSON, GeoPackage...)",
                url=fetched.url,
            )
        return Download(
            data=fetched.body,
            name=chosen.name or chosen.id,
            media_type=fetched.content_type or _media_type_of(chosen.format),
            url=fetched.final_url,
            retrieved_at=now(),
            licence=licence,
            title=listed.title[:_MAX_TITLE],
            publisher=listed.organisation[:_MAX_PUBLISHER] if listed.organisation else None,
        )

    def _licence(self, listed: ListedDataset) -> str | None:
        """The dataset's licence as a landed file's provenance carries it, or None when
        the catalogue states none (the caller says "not stated").

        Raises:
            SourceFetchError: ``changed`` for a licence that is not one licence ("Mixed
                ...") or is longer than a licence's name, in both its title and its id.
        """
        given = [text for text in (listed.licence_title, listed.licence_id) if text]
        if any(_MIXED.match(text) for text in given):
            raise SourceFetchError(
                "changed",
                f"dataset {listed.name!r} of {self.title} gives its licence as "
                f"{given[0][:80]!r}, which is not one licence; a file cannot be landed "
                "without knowing which licence it is under. Pick another dataset, or ask "
                "the portal",
                url=self.last_url,
            )
        fitting = [text for text in given if len(text) <= _MAX_LICENCE]
        if given and not fitting:
            raise SourceFetchError(
                "changed",
                f"dataset {listed.name!r} of {self.title} gives a licence of "
                f"{len(given[0]):,} characters, not a licence's name; a file cannot be "
                "landed without one. Pick another dataset",
                url=self.last_url,
            )
        return fitting[0] if fitting else None

    # -- messages ----------------------------------------------------------------------

    def _refusal(
        self, kind: str | None, status: int | None, key: str, value: str, url: str
    ) -> SourceFetchError:
        code: FetchErrorKind
        if kind == "Not Found Error" or (kind is None and status == 404):
            code = "not_found"
            message = (
                f"{self.title} has no {key} {value!r}; search with q to find its name"
                if key != "q"
                else f"{self.title} has no search API at {url}; check the portal's address"
            )
        elif kind == "Authorization Error" or (kind is None and status == 403):
            code = "refused_filter"
            message = (
                f"{self.title} does not let geomint read {key} {value!r} (it is private or "
                "needs a login); pick a public one from a search"
            )
        elif kind in ("Validation Error", "Search Query Error"):
            code = "refused_filter"
            message = (
                f"{self.title} refused {key} {value!r} ({kind}); use plain search words, "
                "or a name or id from a listing"
            )
        else:
            code = "unavailable"
            message = f"{self.title} failed to answer ({kind or f'HTTP {status}'}); try again later"
        return SourceFetchError(
            code, message, key=key if code == "refused_filter" else None, url=url
        )

    def _malformed(self, fetched: Fetched, why: str) -> SourceFetchError:
        return SourceFetchError(
            "malformed",
            f"{self.title} sent an answer geomint cannot read: {why}; {head_of(fetched.body)}. "
            "Check that the portal's address is its CKAN site, or try again later",
            url=fetched.url,
        )

    def changed(self, url: str, what: str) -> SourceFetchError:
        return SourceFetchError(
            "changed",
            f"{self.title} answered in a shape this connector does not read: {what}; the "
            "portal's API may have changed, so nothing was listed. Report it",
            url=url,
        )


# --- reading the catalogue ----------------------------------------------------------------


def _dataset(found: Any, portal: _Portal) -> ListedDataset:
    name = clipped(found.get("name")) if isinstance(found, dict) else None
    if not isinstance(found, dict) or name is None or len(name) > _MAX_NAME:
        raise portal.changed(portal.last_url, "a dataset without a name of at most 200 characters")
    resources = found.get("resources", [])
    if not isinstance(resources, list):
        raise portal.changed(portal.last_url, f"dataset {name!r} has no resource list")
    if len(resources) > _MAX_RESOURCES:
        portal.notes.append(
            f"dataset {name!r} has {len(resources):,} resources; listed the first {_MAX_RESOURCES}"
        )
    organisation = found.get("organization")
    licence_id = clipped(found.get("license_id"))
    return ListedDataset(
        name=name,
        title=clipped(found.get("title"), _MAX_TITLE) or name,
        organisation=clipped(organisation.get("title"), _MAX_PUBLISHER)
        if isinstance(organisation, dict)
        else None,
        licence_id=None if (licence_id or "") in _NO_LICENCE else licence_id,
        licence_title=None
        if (licence_id or "") in _NO_LICENCE
        else clipped(found.get("license_title")),
        metadata_modified=clipped(found.get("metadata_modified"), 40),
        resources=tuple(_resource(r, name, portal) for r in resources[:_MAX_RESOURCES]),
        description=clipped(found.get("notes"), _MAX_DESCRIPTION),
    )


def _resource(found: Any, dataset: str, portal: _Portal) -> ListedResource:
    ident = clipped(found.get("id")) if isinstance(found, dict) else None
    if not isinstance(found, dict) or ident is None or len(ident) > _MAX_NAME:
        raise portal.changed(
            portal.last_url, f"a resource of {dataset!r} without an id of at most 200 characters"
        )
    size = found.get("size")
    if isinstance(size, str) and size.isdigit() and len(size) < 19:
        size = int(size)
    return ListedResource(
        id=ident,
        name=clipped(found.get("name"), _MAX_TITLE),
        format=clipped(found.get("format"), 40),
        url=clipped(found.get("url"), 2_000),
        size=size if isinstance(size, int) and not isinstance(size, bool) else None,
    )


def _media_type_of(form: str | None) -> str:
    known = {
        "csv": "text/csv",
        "geojson": "application/geo+json",
        "json": "application/json",
        "gpkg": "application/geopackage+sqlite3",
        "zip": "application/zip",
    }
    return known.get((form or "").lower(), "application/octet-stream")


# --- reading the filters ------------------------------------------------------------------


def _one(request: Request, key: str) -> str | None:
    given = request.options.get(key)
    if given is None:
        return None
    if isinstance(given, tuple):
        if len(given) != 1:
            raise SourceFetchError(
                "refused_filter", f"{key} takes one value, and {len(given)} were given", key=key
            )
        given = given[0]
    return given.strip() or None


def _rows(request: Request) -> int:
    given = _one(request, "rows")
    if given is None:
        return DEFAULT_ROWS
    if not given.isdigit() or not 1 <= int(given) <= MAX_ROWS:
        raise SourceFetchError(
            "refused_filter",
            f"rows takes a whole number from 1 to {MAX_ROWS}, not {given!r}",
            key="rows",
        )
    return int(given)
