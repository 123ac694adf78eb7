"""One service of the OpenStreetMap stack: where it is, how it is called, how it is credited.

Nominatim, Overpass, OSRM and Valhalla are each a :class:`Service`: a base URL the operator
chose, the :class:`~geomint.http.RequestPolicy` its calls go out under, and the
source id its answers are credited to. A call returns the answer parsed as JSON or raises a
:class:`~geomint.providers.base.ProviderMiss` whose code says what a caller can do about
it (see :func:`miss_of`).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, Final

from geomint.http import FetchError, Method, ParamValue, RequestPolicy, arequest_json
from geomint.provenance import Evidence, Provenance
from geomint.providers.base import MissCode, ProviderMiss

__all__ = ["NAME", "Service", "miss_of"]

NAME: Final = "osm"
_PUBLISHER: Final = "OpenStreetMap contributors"
_LICENCE: Final = "ODbL-1.0"
_COPYRIGHT: Final = "https://www.openstreetmap.org/copyright"

#: What an error answer's body says when the service found nothing, rather than failed:
#: OSRM's ``NoRoute``/``NoSegment`` codes, Valhalla's error codes 170 (unconnected
#: regions), 171 (no road near a location) and 442 (no path).
_NOT_FOUND_BODY: Final = re.compile(
    r'"code"\s*:\s*"(NoRoute|NoSegment|NoMatch|NoTrips)"|"error_code"\s*:\s*(170|171|442)\b'
)
_REFUSED_CODES: Final = frozenset({"scheme", "address", "vetoed"})
_MESSAGE: Final = re.compile(r'"(?:message|error)"\s*:\s*"((?:[^"\\]|\\.){1,200})"')


def _said(detail: str | None) -> str:
    """What an error answer says: its JSON ``message`` or ``error``, else its text unless
    it is markup (an HTML error page says nothing a model can use in 200 characters)."""
    if not detail:
        return ""
    found = _MESSAGE.search(detail)
    if found:
        return found.group(1)
    return "" if detail.lstrip().startswith("<") else detail


def miss_of(error: FetchError, *, service: str, endpoint: str) -> ProviderMiss:
    """Tell a failed call as a miss: what happened, in words a model can act on, and a code.

    * ``rate_limited``: a 429 that outlasted the retries, a ``Retry-After`` or rate-limit
      wait past the deadline;
    * ``not_found``: an error answer that says there is no route or no road nearby;
    * ``refused``: the address was refused, or the service refused the request (a 4xx);
    * ``unavailable``: a 5xx, a timeout, a failed connection, an answer that is not the
      JSON expected or too large.
    """
    code: MissCode
    status = error.status
    said = _said(error.detail)
    tries = f" after {error.attempts} attempts" if error.attempts > 1 else ""
    if error.code == "rate_limited" or status == 429:
        code = "rate_limited"
        wait = f" in {error.retry_after:.0f} s" if error.retry_after else " later"
        reason = f"{service} is limiting how often geomint may call it; try again{wait}"
    elif error.code in _REFUSED_CODES:
        code, reason = "refused", f"geomint refused to call {service}: {error.reason or error}"
    elif status is not None and 400 <= status < 500 and _NOT_FOUND_BODY.search(error.detail or ""):
        code = "not_found"
        reason = (
            f"{service} found no way there ({said}); check that every point is on or near "
            "a road the travel mode may use"
        )
    elif status is not None and 400 <= status < 500:
        code = "refused"
        reason = (
            f"{service} refused the request (HTTP {status}{': ' + said if said else ''}); "
            f"check the request, the base URL and the service's usage policy"
        )
    elif status is not None:
        code = "unavailable"
        reason = (
            f"{service} is unavailable (HTTP {status}{': ' + said if said else ''}){tries}; "
            "try again later"
        )
    else:
        code = "unavailable"
        reason = f"{service} is unavailable: {error.reason or error}"
    return ProviderMiss(reason, code=code, provider=NAME, endpoint=endpoint)


@dataclass(frozen=True, kw_only=True)
class Service:
    """One service of the stack.

    Attributes:
        label: Its name in messages (``"Nominatim"``).
        source_id: The provenance source id of its answers (``"osm-nominatim"``).
        title: The provenance title (what the data is and what served it).
        base_url: Where it is, without a trailing slash.
        policy: How its requests are sent, spaced, retried and cached.
    """

    label: str
    source_id: str
    title: str
    base_url: str
    policy: RequestPolicy

    def url(self, path: str = "") -> str:
        """The URL of ``path`` under the base URL."""
        return self.base_url + path

    async def json(
        self,
        method: Method,
        path: str = "",
        *,
        params: Mapping[str, ParamValue] | None = None,
        json: Any = None,
        data: Mapping[str, ParamValue] | None = None,
    ) -> Any:
        """Call the service and return its answer parsed as JSON.

        Raises:
            ProviderMiss: The call failed for good (see :func:`miss_of`).
        """
        url = self.url(path)
        try:
            return await arequest_json(
                method, url, params=params, json=json, data=data, policy=self.policy
            )
        except FetchError as error:
            raise miss_of(error, service=self.label, endpoint=url) from error

    def malformed(self, what: str, path: str = "") -> ProviderMiss:
        """The miss for an answer that parsed but is not the shape the API documents."""
        return ProviderMiss(
            f"{self.label} answered with {what}, not what its API documents; check that "
            f"{self.base_url} is a {self.label} server, or try again later",
            code="unavailable",
            provider=NAME,
            endpoint=self.url(path),
        )

    def provenance(self, evidence: Evidence) -> Provenance:
        """Credit an answer: OpenStreetMap contributors, ODbL, retrieved now."""
        return Provenance(
            source_id=self.source_id,
            title=self.title,
            publisher=_PUBLISHER,
            licence=_LICENCE,
            url=_COPYRIGHT,
            retrieved_at=datetime.now(UTC),
            evidence=evidence,
        )
