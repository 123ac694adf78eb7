"""The World Bank Indicators API v2: one indicator, by country and year.

A source names its indicator in ``config["indicator"]`` (``"SP.POP.TOTL"``); a fetch asks
``{base}/v2/country/{FIN;SWE}/indicator/{id}?format=json`` for the years wanted (or
``mrv=1``, the most recent value) and pages through the answer. The answer is
``[header, rows]``: the header says the page, the number of pages and when the series
was last updated; each row names a country by ISO alpha-3 (``countryiso3code``) and
gives one year's value, which may be null.

The service reports a bad request as a body, not a status: ``[{"message": [{"id",
"key", "value"}]}]`` in JSON, or an XML ``<wb:error>`` (with a byte-order mark) for
some paths. Both are read here: id 175 is an indicator it does not have, id 120 a
parameter value (the countries asked) it does not take.
"""

from __future__ import annotations

import dataclasses
import json
import math
import re
import time
from collections.abc import Mapping, Sequence
from datetime import date
from typing import Any, Final
from urllib.parse import quote

from geomint.http import Fetched, ParamValue, RequestPolicy
from geomint.sources.connectors._common import (
    capped,
    config_text,
    get,
    head_of,
    now,
    short_text,
    trusting,
    unit_text,
)
from geomint.sources.connectors.base import (
    PeriodFilter,
    Request,
    Row,
    SourceFetchError,
    Table,
    Unit,
)

__all__ = ["DEFAULT_BASE_URL", "WorldBankConnector"]

DEFAULT_BASE_URL: Final = "https://api.worldbank.org"
_WHAT: Final = "the World Bank Indicators API"
_PER_PAGE: Final = 1000
_MAX_PAGES: Final = 50
_ROW_FIELDS: Final = ("countryiso3code", "country", "date", "value")
# What one fetch may hold, whatever the service says of its pages: a page is parsed in
# this process, so each is capped, and so are the pages' bytes and rows together.
_MAX_PAGE_BYTES: Final = 8_000_000
_MAX_TOTAL_BYTES: Final = 20_000_000
_MAX_ROWS: Final = 100_000
# The error message is near the start of an XML answer: only this much is searched, and
# by patterns whose every repetition is bounded, so a crafted body costs linear time
# (an unbounded pattern here once held the interpreter for 16 s on 7 kB).
_XML_HEAD: Final = 4_096
_XML_MESSAGE: Final = re.compile(r"<(?:wb:)?message\b([^<>]{0,500})>([^<]{0,500})<")
_XML_ID: Final = re.compile(r'\bid="([^"<>]{0,100})"')
_XML_KEY: Final = re.compile(r'\bkey="([^"<>]{0,100})"')


class WorldBankConnector:
    """Read one World Bank indicator (``source.config["indicator"]``) by country and year.

    Settings in ``source.config``: ``indicator`` (required), ``base_url`` (default
    ``https://api.worldbank.org``), ``per_page`` (rows per page, default 1000).
    """

    @property
    def name(self) -> str:
        """``"worldbank"``."""
        return "worldbank"

    @property
    def needs_network(self) -> bool:
        """True: every fetch is a request to the service."""
        return True

    @property
    def vocabulary(self) -> Mapping[str, str]:
        """No keys beyond ``unit`` (countries) and ``period`` (years)."""
        return {}

    def fetch(self, request: Request) -> Table:
        """Read the indicator for the countries and years asked, every page of it.

        Raises:
            SourceFetchError: ``refused_filter`` for a unit that is not a country or a
                country code the service refuses; ``not_found`` for an indicator it does
                not have; ``malformed`` or ``changed`` for an answer of another shape;
                ``timeout``, ``rate_limited`` or ``unavailable`` when the service fails.
        """
        source = request.source
        indicator = config_text(source, "indicator")
        base = config_text(source, "base_url", DEFAULT_BASE_URL).rstrip("/")
        per_page = source.config.get("per_page", _PER_PAGE)
        codes = _country_codes(request.units)
        where = ";".join(codes) if codes else "all"
        url = f"{base}/v2/country/{quote(where, safe=';')}/indicator/{quote(indicator, safe='.')}"
        params: dict[str, ParamValue] = {
            "format": "json",
            "per_page": per_page if isinstance(per_page, int) else _PER_PAGE,
        }
        params.update(_period_params(request.period))
        policy = capped(trusting(request.policy, base), _MAX_PAGE_BYTES)
        # One deadline for every page: a service that pages slowly cannot stretch a fetch
        # to the policy's timeout_s times the number of pages.
        deadline = time.monotonic() + policy.timeout_s

        rows: list[Row] = []
        notes: list[str] = []
        aggregates = 0
        received = 0
        unit: str | None = None
        first_url: str | None = None
        header: Mapping[str, Any] = {}
        page = 1
        while True:
            try:
                fetched = get(
                    url,
                    params={**params, "page": page},
                    policy=_remaining(policy, deadline, page),
                    what=_WHAT,
                )
            except SourceFetchError as error:
                if error.code == "timeout" and page > 1:
                    raise _timed_out(policy, page) from None
                raise
            first_url = first_url or fetched.url
            received += len(fetched.body)
            if received > _MAX_TOTAL_BYTES:
                raise _too_much(f"more than {_MAX_TOTAL_BYTES:,} bytes over {page} pages")
            header, records = _page(fetched, indicator, codes)
            if len(rows) + aggregates + len(records) > _MAX_ROWS:
                raise _too_much(f"more than {_MAX_ROWS:,} rows")
            for record in records:
                unit = unit or _unit_of(record)
                row = _row(record, fetched.url)
                if row is None:
                    aggregates += 1
                else:
                    rows.append(row)
            pages = _count(header, "pages", fetched.url)
            if page >= pages:
                break
            if page >= _MAX_PAGES:
                notes.append(
                    f"stopped after {_MAX_PAGES} pages of {pages}; ask for fewer countries "
                    "or years to get the rest"
                )
                break
            page += 1

        if aggregates:
            notes.append(
                f"left out {aggregates} rows for regions and groups the World Bank gives "
                "without an ISO country code"
            )
        if request.period is not None and request.period.latest and "date" in params:
            rows = _latest(rows)
            notes.append("kept each country's latest year with a value, within the years asked")
        if not rows:
            notes.append(f"the World Bank has no values of {indicator} for what was asked")
        return Table(
            rows=tuple(rows),
            code_system="iso3",
            retrieved_at=now(),
            url=first_url,
            unit=unit or unit_text(source.profile.unit),
            last_updated=short_text(header.get("lastupdated"), 40),
            notes=tuple(notes),
        )


# --- what is asked ------------------------------------------------------------------------


def _country_codes(units: Sequence[Unit]) -> tuple[str, ...]:
    """The ISO alpha-3 codes of the units; a unit that is not a country is refused."""
    codes: list[str] = []
    for unit in units:
        if unit.level != "country" or not unit.iso3:
            raise SourceFetchError(
                "refused_filter",
                f"World Bank indicators are by country, and {unit.id} ({unit.name}) is a "
                f"{unit.level}; ask for its country instead"
                + (f" (country:{unit.country})" if unit.country else ""),
                key="unit",
            )
        codes.append(unit.iso3)
    return tuple(dict.fromkeys(codes))


def _remaining(policy: RequestPolicy, deadline: float, page: int) -> RequestPolicy:
    """The policy for one page: what is left of the fetch's deadline."""
    left = deadline - time.monotonic()
    if left <= 0:
        raise _timed_out(policy, page)
    return dataclasses.replace(policy, timeout_s=left)


def _timed_out(policy: RequestPolicy, page: int) -> SourceFetchError:
    return SourceFetchError(
        "timeout",
        f"{_WHAT} did not send all its pages within timeout_s={policy.timeout_s:g} s "
        f"(it was on page {page}); ask for fewer countries or years, or try again later",
    )


def _too_much(what: str) -> SourceFetchError:
    return SourceFetchError(
        "unavailable",
        f"{_WHAT} sent {what} for one fetch, more than geomint reads at once; narrow it by "
        "unit (fewer countries) or period (fewer years, or latest)",
    )


def _period_params(period: PeriodFilter | None) -> dict[str, ParamValue]:
    """``date=2000:2010`` for years, ``mrv=1`` for only the latest value."""
    if period is None:
        return {}
    if period.start is None and period.end is None:
        return {"mrv": 1} if period.latest else {}
    start = period.start if period.start is not None else 1960
    end = period.end if period.end is not None else date.today().year
    return {"date": str(start) if start == end else f"{start}:{end}"}


# --- what comes back ----------------------------------------------------------------------


def _page(
    fetched: Fetched, indicator: str, codes: Sequence[str]
) -> tuple[Mapping[str, Any], list[Mapping[str, Any]]]:
    """The header and rows of one page, or the service's error told as a fetch error."""
    text = fetched.body.decode("utf-8-sig", "replace").lstrip()
    if text.startswith("<"):
        said = _XML_MESSAGE.search(text, 0, _XML_HEAD)
        ident = _XML_ID.search(said[1]) if said is not None else None
        if said is None or ident is None:
            raise _malformed(fetched, "it is XML but not the World Bank's error message")
        key = _XML_KEY.search(said[1])
        raise _refusal(ident[1], key[1] if key else "", said[2].strip(), indicator, codes)
    try:
        answer = json.loads(text, parse_constant=_no_constant)
    except ValueError:
        raise _malformed(fetched, "it is not JSON") from None
    except RecursionError:
        raise _malformed(fetched, "it nests deeper than geomint reads") from None
    if (
        isinstance(answer, list)
        and len(answer) == 1
        and isinstance(answer[0], dict)
        and isinstance(answer[0].get("message"), list)
        and answer[0]["message"]
        and isinstance(answer[0]["message"][0], dict)
    ):
        message = answer[0]["message"][0]
        raise _refusal(
            short_text(message.get("id"), 100) or "",
            short_text(message.get("key"), 100) or "",
            short_text(message.get("value"), 500) or "",
            indicator,
            codes,
        )
    if not (isinstance(answer, list) and len(answer) == 2 and isinstance(answer[0], dict)):
        raise _malformed(fetched, "it is not the [header, rows] pair the API documents")
    header, records = answer
    if records is None:
        return header, []
    if not isinstance(records, list) or not all(isinstance(r, dict) for r in records):
        raise _malformed(fetched, "its rows are not a list of objects")
    return header, records


def _row(record: Mapping[str, Any], url: str) -> Row | None:
    """One row, or None for an aggregate without an ISO code."""
    missing = [name for name in _ROW_FIELDS if name not in record]
    country = record.get("country")
    if missing or not isinstance(country, dict):
        raise SourceFetchError(
            "changed",
            f"{_WHAT} answered rows without the fields this connector reads "
            f"({', '.join(missing) or 'country as an object'} missing; it has "
            f"{', '.join(sorted(record))}); the API may have changed, so no table was made. "
            "Report it, and use another source meanwhile",
            url=url,
        )
    code = record["countryiso3code"]
    if not isinstance(code, str) or not code.strip():
        return None
    code = short_text(code, 10)
    period = record["date"]
    period = short_text(str(period) if isinstance(period, int) else period, 20)
    if code is None or period is None:
        raise SourceFetchError(
            "changed",
            f"{_WHAT} answered a row whose country code or date is not a short text (it "
            f"starts {str(record['countryiso3code'])[:20]!r}, {str(record['date'])[:20]!r}); "
            "the API may have changed, so no table was made",
            url=url,
        )
    value = record["value"]
    if isinstance(value, bool) or not (value is None or isinstance(value, int | float)):
        raise SourceFetchError(
            "changed",
            f"{_WHAT} gave {code} {period} the value {str(value)[:40]!r}, not a number or "
            "null; the API may have changed, so no table was made",
            url=url,
        )
    if value is not None and not _finite(value):
        raise SourceFetchError(
            "malformed",
            f"{_WHAT} gave {code} {period} a value too large to be a number "
            f"({str(value)[:40]}...); no table was made. Try again later",
            url=url,
        )
    extra: dict[str, str | int] = {}
    for name in ("obs_status", "decimal"):
        kept = record.get(name)
        if isinstance(kept, int) and not isinstance(kept, bool) and abs(kept) < 2**53:
            extra[name] = kept
        elif (text := short_text(kept, 40)) is not None:
            extra[name] = text
    return Row(
        unit_code=code,
        unit_name=short_text(country.get("value"), 200),
        period=period,
        value=value,
        extra=extra,
    )


def _finite(value: int | float) -> bool:
    """Whether a number is one a table can hold: finite, and an int a float can carry."""
    try:
        return math.isfinite(float(value))
    except OverflowError:  # an int of hundreds of digits
        return False


def _no_constant(name: str) -> None:
    """Refuse ``NaN`` and ``Infinity``, which are not JSON (Python's parser takes them)."""
    raise ValueError(f"{name} is not JSON")


def _count(header: Mapping[str, Any], name: str, url: str) -> int:
    try:
        return int(header[name])
    except (KeyError, TypeError, ValueError):
        raise SourceFetchError(
            "changed",
            f"{_WHAT} answered a header without a number of {name} (it has "
            f"{', '.join(sorted(header)) or 'nothing'}); the API may have changed, so no "
            "table was made",
            url=url,
        ) from None


def _latest(rows: Sequence[Row]) -> list[Row]:
    """Each country's row of the latest year that has a value, in the source's order."""
    best: dict[str, Row] = {}
    for row in rows:
        if row.value is None:
            continue
        kept = best.get(row.unit_code)
        if kept is None or row.period > kept.period:
            best[row.unit_code] = row
    return [row for row in rows if best.get(row.unit_code) is row]


def _unit_of(record: Mapping[str, Any]) -> str | None:
    return unit_text(record.get("unit"))


def _malformed(fetched: Fetched, why: str) -> SourceFetchError:
    return SourceFetchError(
        "malformed",
        f"{_WHAT} sent an answer geomint cannot read: {why}; {head_of(fetched.body)}. "
        "Try again later",
        url=fetched.url,
    )


def _refusal(
    ident: str, key: str, value: str, indicator: str, codes: Sequence[str]
) -> SourceFetchError:
    """The service's error message, told as what it means for this fetch."""
    said = f"{value} (message {ident}{', ' + key if key else ''})"
    if ident == "175" or "indicator" in value.lower():
        return SourceFetchError(
            "not_found",
            f"{_WHAT} has no indicator {indicator!r}: {said}. The series may have been "
            "archived; use find_sources for another source of the same concept",
        )
    if ident == "120":
        asked = ", ".join(codes) if codes else "all countries"
        return SourceFetchError(
            "refused_filter",
            f"{_WHAT} refused the countries asked ({asked}): {said}. Ask for countries "
            "by spine id (country:FIN); regions and cities are not World Bank units",
            key="unit",
        )
    return SourceFetchError("unavailable", f"{_WHAT} refused the request: {said}; try again later")
