"""HDX HAPI, the Humanitarian Data Exchange's humanitarian API (v2): one endpoint, by
country, administrative level and the endpoint's own dimensions.

A source names its endpoint in ``config["endpoint"]`` (a key of :data:`ENDPOINTS`:
``baseline-population``, ``humanitarian-needs``, ``refugees``, ``food-security``,
``operational-presence``); a fetch asks ``{base}/api/v2/{path}`` for the countries and
filters given and pages through the answer with ``limit`` and ``offset``. The answer is
``{"data": [rows]}``: each row names its country by ISO alpha-3 (``location_code``) and
its first and second-level divisions by the p-codes of the Common Operational Datasets
(``admin1_code``, ``admin2_code``), gives its reference period as two dates, and names the
HDX resource it was read from (``resource_hdx_id``). HAPI says nothing of a row's
licence: it is that of the resource's HDX dataset, and the table's notes say which.

HAPI asks every caller for an *app identifier*, base64 of ``"application:email"``
(:func:`encode_app_identifier`). The operator sets it in ``GEOMINT_HAPI_APP_IDENTIFIER``
(or passes it to :class:`HapiConnector`); it is sent as the ``app_identifier`` query
parameter and is a secret of the request policy, so every URL, message and cache key
geomint writes shows ``***`` in its place.

The place spine holds no p-codes, so rows of divisions are named by p-code with no spine
unit (``code_system="none"``) and the notes say so; a country's own rows (admin level 0)
are named by ISO alpha-3 and join the spine. A ``unit`` is therefore a country and asks
for its own rows; a country's divisions are asked with ``location`` and ``admin_level``.

HAPI refuses a bad filter value with HTTP 422 and, for a parameter with a fixed list of
values (``gender``, ``population_status``...), lists them: that list is the service's own
code list for the key, so the refusal is ``learnable``. A 400 says why a combination of
filters was refused, a 403 that the app identifier was missing or not one.
"""

from __future__ import annotations

import base64
import binascii
import dataclasses
import os
import re
import time
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import date
from typing import Final

from geomint.errors import UsageError
from geomint.http import Fetched, FetchError, ParamValue, RequestPolicy, request
from geomint.sources.connectors import _hapi_rows as answers
from geomint.sources.connectors._common import (
    capped,
    config_text,
    fetch_error,
    now,
    trusting,
    unit_text,
)
from geomint.sources.connectors._hapi_endpoints import (
    ENDPOINTS,
    VOCABULARY,
    HapiEndpoint,
    checked,
)
from geomint.sources.connectors.base import PeriodFilter, Request, Row, SourceFetchError, Table
from geomint.sources.model import Source

__all__ = [
    "APP_IDENTIFIER_ENV",
    "DEFAULT_BASE_URL",
    "ENDPOINTS",
    "VOCABULARY",
    "HapiConnector",
    "HapiEndpoint",
    "encode_app_identifier",
]

DEFAULT_BASE_URL: Final = "https://hapi.humdata.org"
#: Where the operator puts the app identifier (base64 of ``application:email``).
APP_IDENTIFIER_ENV: Final = "GEOMINT_HAPI_APP_IDENTIFIER"
_WHAT: Final = "HDX HAPI"
# HAPI sends at most 10,000 rows an answer; 5,000 keeps a page of its widest rows
# (about 600 bytes each) well under the page cap.
_PAGE_ROWS: Final = 5_000
_MAX_PAGE_ROWS: Final = 10_000
# What one fetch may hold, whatever the service sends: a page is parsed in this process,
# so each is capped, and so are the pages' bytes and rows together. The rows cap is what
# a landed table holds (geomint.sources.reads.MAX_TABLE_ROWS): a fetch is refused rather
# than cut, since a table missing some divisions sums to a wrong total.
_MAX_PAGE_BYTES: Final = 8_000_000
_MAX_TOTAL_BYTES: Final = 30_000_000
_MAX_ROWS: Final = 50_000
_MAX_COUNTRIES: Final = 10
_MAX_PAGES: Final = 100
# HAPI's terms ask callers to send about one request a second.
_RATE_PER_S: Final = 1.0
# The start of an error body (geomint.http keeps 200 printable characters of it), read
# with patterns whose every repetition is bounded.
_LOC: Final = re.compile(r'"loc"\s{0,5}:\s{0,5}\[\s{0,5}"query"\s{0,5},\s{0,5}"([a-z0-9_]{1,40})"')
_MSG: Final = re.compile(r'"msg"\s{0,5}:\s{0,5}"((?:[^"\\]|\\.){1,300})"')
_MSG_CUT: Final = re.compile(r'"msg"\s{0,5}:\s{0,5}"((?:[^"\\]|\\.){1,300})')
_ERROR: Final = re.compile(r'"(?:error|detail)"\s{0,5}:\s{0,5}"((?:[^"\\]|\\.){1,300})"?')
_QUOTED: Final = re.compile(r"'([^']{1,60})'")


def encode_app_identifier(application: str, email: str) -> str:
    """The app identifier HAPI asks for: base64 of ``"application:email"``.

    Example:
        >>> encode_app_identifier("geomint", "maps@example.org")
        'Z2VvbWludDptYXBzQGV4YW1wbGUub3Jn'
    """
    if not application.strip() or ":" in application or "@" not in email or ":" in email:
        raise UsageError(
            "an app identifier is an application name (without ':') and an email address"
        )
    return base64.b64encode(f"{application.strip()}:{email.strip()}".encode()).decode()


class HapiConnector:
    """Read one HDX HAPI endpoint (``source.config["endpoint"]``) by country and filters.

    Settings in ``source.config``: ``endpoint`` (required, a key of :data:`ENDPOINTS`),
    ``base_url`` (default ``https://hapi.humdata.org``), ``limit`` (rows a page, 1 to
    10,000, default 5,000) and ``defaults`` (a value for a filter key a fetch leaves out,
    such as ``{"admin_level": "1"}``; the table's notes say when one was used).

    Args:
        app_identifier: The identifier HAPI asks for (see :func:`encode_app_identifier`);
            None reads ``GEOMINT_HAPI_APP_IDENTIFIER`` at each fetch.

    Example:
        >>> connector = HapiConnector(app_identifier="Z2VvbWludDptYXBzQGV4YW1wbGUub3Jn")
        >>> connector.name, "Z2Vv" in repr(connector)
        ('hapi', False)
    """

    def __init__(self, *, app_identifier: str | None = None) -> None:
        self._app_identifier = app_identifier

    def __repr__(self) -> str:
        return "HapiConnector()"

    @property
    def name(self) -> str:
        """``"hapi"``."""
        return "hapi"

    @property
    def needs_network(self) -> bool:
        """True: every fetch is a request to the service."""
        return True

    @property
    def vocabulary(self) -> Mapping[str, str]:
        """The keys HAPI sources may declare (:data:`VOCABULARY`); each endpoint takes
        some of them (:attr:`HapiEndpoint.keys`)."""
        return VOCABULARY

    def fetch(self, request: Request) -> Table:
        """Read the endpoint for the countries and filters asked, every page of it.

        Raises:
            SourceFetchError: ``refused_filter`` for a unit that is not a country, a
                filter value HAPI does not take (with its options when it lists them) or
                a combination it refuses; ``malformed`` or ``changed`` for an answer of
                another shape; ``unavailable`` when the app identifier is missing or
                refused, when the answer is more than one fetch holds, or when the
                service fails; ``timeout`` or ``rate_limited``.
        """
        source = request.source
        endpoint = _endpoint(source)
        base = config_text(source, "base_url", DEFAULT_BASE_URL).rstrip("/")
        identifier, secrets = self._identifier()
        asked = _Asked.of(request, endpoint)
        policy = trusting(request.policy, base)
        policy = dataclasses.replace(
            capped(policy, _MAX_PAGE_BYTES),
            secrets=tuple(dict.fromkeys((*policy.secrets, *secrets))),
            rate_per_s=None if policy.rate_per_s is None else min(policy.rate_per_s, _RATE_PER_S),
        )
        reading = _Reading(
            url=f"{base}/api/v2/{endpoint.path}",
            endpoint=endpoint,
            policy=policy,
            limit=_limit(source),
            identifier=identifier,
            asked=asked,
        )
        for country in asked.countries or (None,):
            reading.read(country)

        rows, starts = reading.rows, reading.starts
        notes = list(asked.notes)
        for key, wanted in asked.local.items():
            rows, starts = answers.kept(rows, starts, endpoint.local[key], wanted, key)
        if request.period is not None and request.period.latest:
            rows = answers.latest(rows, starts, endpoint)
            notes.append("kept each series' latest reference period with a value")
        all_national = endpoint.place == "asylum" or all(
            row.extra.get("admin_level") == 0 for row in rows
        )
        if not all_national:
            notes.append(
                "rows of divisions are named by the p-codes of the Common Operational "
                "Datasets (unit_code, admin1_code, admin2_code), which the place spine does "
                "not hold: they land without geometry, and so do the countries' own rows "
                "among them. Join them to COD boundaries by p-code, or ask admin_level 0 "
                "alone for the countries' own rows, joined to the spine"
            )
        notes.extend(answers.licence_notes(rows))
        if not rows:
            notes.append(
                f"{_WHAT} has no {endpoint.title} rows for what was asked; it holds this "
                "for the countries of humanitarian responses, not every country"
            )
        return Table(
            rows=tuple(rows),
            code_system="iso3" if all_national else "none",
            retrieved_at=now(),
            url=reading.first_url,
            unit=unit_text(endpoint.unit) or unit_text(source.profile.unit),
            notes=tuple(notes),
        )

    def _identifier(self) -> tuple[str, tuple[str, ...]]:
        """The app identifier, and the texts never to show (it, and what it encodes)."""
        given = self._app_identifier
        identifier = (
            given if given is not None else os.environ.get(APP_IDENTIFIER_ENV, "")
        ).strip()
        if not identifier:
            raise SourceFetchError(
                "unavailable",
                f"{_WHAT} asks every caller for an app identifier, and this deployment has "
                f"none: the operator must set {APP_IDENTIFIER_ENV} to base64 of "
                "'application:email' (geomint.sources.connectors.hapi.encode_app_identifier "
                "makes one). Use another source meanwhile",
            )
        try:
            decoded = base64.b64decode(identifier, validate=True).decode("utf-8")
        except (binascii.Error, UnicodeDecodeError):
            decoded = ""
        application, colon, email = decoded.partition(":")
        if not (application and colon and "@" in email and ":" not in email):
            raise SourceFetchError(
                "unavailable",
                f"the app identifier this deployment gives {_WHAT} is not base64 of "
                f"'application:email', so HAPI would refuse it: the operator must fix "
                f"{APP_IDENTIFIER_ENV} (encode_app_identifier makes one). Use another "
                "source meanwhile",
            )
        return identifier, (identifier, decoded, email)


# --- what is asked ------------------------------------------------------------------------


def _endpoint(source: Source) -> HapiEndpoint:
    name = config_text(source, "endpoint")
    if name not in ENDPOINTS:
        raise UsageError(
            f"source {source.id!r} names HAPI endpoint {name!r}; this connector reads "
            f"{', '.join(ENDPOINTS)}"
        )
    endpoint = ENDPOINTS[name]
    extra = {f.key for f in source.filters} - endpoint.keys
    if extra:
        raise UsageError(
            f"source {source.id!r} declares filters {', '.join(sorted(extra))}, which HAPI's "
            f"{name} endpoint does not take; it takes {', '.join(sorted(endpoint.keys))}"
        )
    return endpoint


def _limit(source: Source) -> int:
    limit = source.config.get("limit", _PAGE_ROWS)
    if isinstance(limit, bool) or not isinstance(limit, int) or not 1 <= limit <= _MAX_PAGE_ROWS:
        raise UsageError(
            f"source {source.id!r} asks HAPI for pages of {limit!r} rows; give a whole "
            f"number from 1 to {_MAX_PAGE_ROWS:,}"
        )
    return limit


@dataclass(frozen=True, kw_only=True)
class _Asked:
    """A fetch's filters, checked: the countries, the query parameters, the filters
    applied here, and what was read into them."""

    countries: tuple[str, ...]
    params: Mapping[str, ParamValue]
    local: Mapping[str, str]
    notes: tuple[str, ...]
    sent: Mapping[str, str]  # query parameter -> filter key, to tell a refusal

    @classmethod
    def of(cls, request: Request, endpoint: HapiEndpoint) -> _Asked:
        source = request.source
        options: dict[str, str | tuple[str, ...]] = dict(request.options)
        notes: list[str] = []
        defaults = source.config.get("defaults")
        for key, value in (defaults if isinstance(defaults, dict) else {}).items():
            if key in options or not isinstance(value, str):
                continue
            if not (key == "admin_level" and request.units):
                options[key] = value
                notes.append(f"{key} {value} (the source's default; pass {key} for another)")
        countries = _countries(request, endpoint, options, notes)
        params: dict[str, ParamValue] = {}
        local: dict[str, str] = {}
        sent: dict[str, str] = {}
        for key, given in options.items():
            if key == "location":
                continue
            if key not in endpoint.params and key not in endpoint.local:
                raise UsageError(
                    f"HAPI's {endpoint.path} takes no filter {key!r}; fix the registry row "
                    f"of {source.id!r}"
                )
            value = _one(key, given)
            if key in endpoint.local:
                local[key] = value
                continue
            params[endpoint.params[key]] = value
            sent[endpoint.params[key]] = key
        params.update(_period_params(request.period))
        sent.update({"start_date": "period", "end_date": "period"})
        if "location" in endpoint.params:
            sent[endpoint.params["location"]] = "location" if "location" in options else "unit"
        return cls(
            countries=countries,
            params=params,
            local=local,
            notes=tuple(notes),
            sent=sent,
        )


def _countries(
    request: Request,
    endpoint: HapiEndpoint,
    options: dict[str, str | tuple[str, ...]],
    notes: list[str],
) -> tuple[str, ...]:
    """The countries to read, from ``unit`` (countries' own rows) or ``location``."""
    given = options.get("location")
    if request.units and given is not None:
        raise SourceFetchError(
            "refused_filter",
            "give unit (spine countries, for their own rows) or location (a country whose "
            "divisions are read), not both",
            key="location",
        )
    codes: list[str] = []
    for unit in request.units:
        if unit.level != "country" or not unit.iso3:
            raise SourceFetchError(
                "refused_filter",
                f"{_WHAT} names divisions by the p-codes of the Common Operational "
                f"Datasets, which the place spine does not hold, so {unit.id} ({unit.name}) "
                "cannot be asked for: ask for its country with location"
                + (f"={unit.country}" if unit.country else "")
                + " and admin_level 1, then narrow by admin1_code as the rows give it",
                key="unit",
            )
        codes.append(unit.iso3)
    if request.units and endpoint.place == "admin":
        level = options.get("admin_level")
        if level is not None and level != "0":
            raise SourceFetchError(
                "refused_filter",
                "unit asks for countries' own rows (admin level 0), joined to the spine; "
                f"for admin level {level}, whose rows are named by p-codes, give location "
                f"({', '.join(codes)}) instead of unit",
                key="unit",
            )
        options["admin_level"] = "0"
        notes.append("unit asks for the countries' own rows: admin_level 0")
    if given is not None:
        for value in (given,) if isinstance(given, str) else given:
            codes.append(checked("location", value))
    codes = list(dict.fromkeys(codes))
    if len(codes) > _MAX_COUNTRIES:
        raise SourceFetchError(
            "refused_filter",
            f"{len(codes)} countries were asked, and one fetch reads at most "
            f"{_MAX_COUNTRIES}; split them over several fetches",
            key="location" if given is not None else "unit",
        )
    return tuple(codes)


def _one(key: str, given: str | tuple[str, ...]) -> str:
    if isinstance(given, tuple):
        if len(given) != 1:
            raise SourceFetchError(
                "refused_filter",
                f"{key} takes one value, and {len(given)} were given; fetch once for each",
                key=key,
            )
        given = given[0]
    return checked(key, given)


def _period_params(period: PeriodFilter | None) -> dict[str, ParamValue]:
    """``start_date`` and ``end_date`` (years): HAPI keeps rows whose reference period
    overlaps them. ``latest`` alone asks for every period and keeps the newest here."""
    if period is None:
        return {}
    params: dict[str, ParamValue] = {}
    if period.start is not None:
        params["start_date"] = str(period.start)
    if period.end is not None:
        params["end_date"] = str(period.end)
    return params


# --- reading the pages --------------------------------------------------------------------


class _Reading:
    """One fetch's pages: its deadline, the bytes and rows read so far, and the rows."""

    def __init__(
        self,
        *,
        url: str,
        endpoint: HapiEndpoint,
        policy: RequestPolicy,
        limit: int,
        identifier: str,
        asked: _Asked,
    ) -> None:
        self.url = url
        self.endpoint = endpoint
        self.policy = policy
        self.limit = limit
        self.identifier = identifier
        self.asked = asked
        # One deadline for every page: a service that pages slowly cannot stretch a fetch
        # to timeout_s times the number of pages.
        self.deadline = time.monotonic() + policy.timeout_s
        self.received = 0
        self.pages = 0
        self.first_url: str | None = None
        self.rows: list[Row] = []
        self.starts: list[date | None] = []

    def read(self, country: str | None) -> None:
        """Read every page for one country (or for every country, with None)."""
        params = dict(self.asked.params)
        if country is not None:
            params[self.endpoint.params["location"]] = country
        offset = 0
        while True:
            fetched = self._page({**params, "limit": self.limit, "offset": offset})
            records = answers.records(fetched)
            if len(records) > self.limit:
                raise SourceFetchError(
                    "changed",
                    f"{_WHAT} sent {len(records):,} rows for limit={self.limit:,}, so its "
                    "pages cannot be followed without rows read twice or missed; no table "
                    "was made. Report it, and use another source meanwhile",
                    url=fetched.url,
                )
            if len(self.rows) + len(records) > _MAX_ROWS:
                raise _too_much(f"more than {_MAX_ROWS:,} rows")
            for record in records:
                row, start = answers.read_row(record, self.endpoint, fetched.url)
                self.rows.append(row)
                self.starts.append(start)
            if len(records) < self.limit:
                return
            if self.pages >= _MAX_PAGES:
                raise _too_much(f"more than {_MAX_PAGES} pages of {self.limit:,} rows")
            offset += self.limit

    def _page(self, params: Mapping[str, ParamValue]) -> Fetched:
        self.pages += 1
        left = self.deadline - time.monotonic()
        if left <= 0:
            raise self._timed_out()
        try:
            fetched = request(
                "GET",
                self.url,
                params={**params, "output_format": "json", "app_identifier": self.identifier},
                headers={"Accept": "application/json"},
                policy=dataclasses.replace(self.policy, timeout_s=left),
            )
        except FetchError as error:
            if error.code == "timeout" and self.pages > 1:
                raise self._timed_out() from None
            raise _failure(error, self.asked) from None
        self.first_url = self.first_url or fetched.url
        self.received += len(fetched.body)
        if self.received > _MAX_TOTAL_BYTES:
            raise _too_much(f"more than {_MAX_TOTAL_BYTES:,} bytes over {self.pages} pages")
        return fetched

    def _timed_out(self) -> SourceFetchError:
        return SourceFetchError(
            "timeout",
            f"{_WHAT} did not send all its pages within timeout_s="
            f"{self.policy.timeout_s:g} s (it was on page {self.pages}); narrow the fetch "
            "(one country, an admin_level, gender or age_range), or try again later",
        )


def _too_much(what: str) -> SourceFetchError:
    return SourceFetchError(
        "unavailable",
        f"{_WHAT} sent {what} for one fetch, more than geomint reads at once (a table cut "
        "short would sum to a wrong total, so none was made); narrow it: fewer countries, "
        "admin_level 0 or 1, or one gender, age_range or sector",
    )


def _failure(error: FetchError, asked: _Asked) -> SourceFetchError:
    """A failed request, told as what it means: a refused filter, a refused identifier,
    or a failure every service shares."""
    if error.code != "status" or error.status not in (400, 401, 403, 422):
        return fetch_error(error, _WHAT)
    detail = error.detail or ""
    if error.status in (401, 403):
        said = _ERROR.search(detail)
        return SourceFetchError(
            "unavailable",
            f"{_WHAT} refused this deployment's app identifier ("
            f"{_unescaped(said[1]) if said else f'HTTP {error.status}'}): the operator must "
            f"set {APP_IDENTIFIER_ENV} to base64 of 'application:email'. Use another source "
            "meanwhile",
            url=error.url,
        )
    param = _LOC.search(detail)
    whole = _MSG.search(detail)
    said = whole or _MSG_CUT.search(detail) or _ERROR.search(detail)
    text = _unescaped(said[1]) if said else f"HTTP {error.status}"
    if param is not None and param[1] == "app_identifier":
        return SourceFetchError(
            "unavailable",
            f"{_WHAT} refused this deployment's app identifier ({text}): the operator must "
            f"fix {APP_IDENTIFIER_ENV}. Use another source meanwhile",
            url=error.url,
        )
    key = asked.sent.get(param[1]) if param is not None else None
    if key is None:
        key = next((k for p, k in asked.sent.items() if p in text), None)
    value = asked.params.get(param[1]) if param is not None else None
    # A whole list ("Input should be 'f', 'm' or 'all'", its closing quote read) is the
    # service's code list for the key; a list cut short by the error body's cap is not.
    options: tuple[str, ...] = ()
    if param is not None and whole is not None and text.startswith("Input should be"):
        options = tuple(_QUOTED.findall(text))
    refused = f"{key} {value!r}" if key and value is not None else key or "the request"
    listed = f"; it takes {', '.join(options)}" if options else ""
    return SourceFetchError(
        "refused_filter",
        f"{_WHAT} refused {refused}: {text}{listed}",
        key=key,
        options=options,
        learnable=bool(options) and key is not None,
        url=error.url,
    )


def _unescaped(text: str) -> str:
    return text.replace('\\"', '"').replace("\\\\", "\\")[:300]
