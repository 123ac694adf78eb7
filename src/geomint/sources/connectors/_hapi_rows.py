"""Reading HDX HAPI's answers: a page's rows, checked against the documented shape, as
table rows; then the rows narrowed (a filter HAPI does not apply, the latest period)
and the notes on where their licence is said.

An answer is ``{"data": [rows]}``. A row of divisions is named by the finest p-code it
has (``admin2_code``, else ``admin1_code``), a country's own row by ``location_code``,
a row of refugees by its country of asylum. Its period is read from
``reference_period_start`` and ``reference_period_end``. Anything else is a fetch error:
a body that is not JSON, nests too deeply, holds a number that is not finite or a text
longer than HAPI's own models allow is ``malformed``; a row without the fields read
here is ``changed``.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping, Sequence
from datetime import date
from typing import Any, Final

from pydantic import JsonValue

from geomint.http import Fetched
from geomint.provenance import PERIOD_NOT_STATED
from geomint.sources.connectors._common import head_of
from geomint.sources.connectors._hapi_endpoints import HapiEndpoint
from geomint.sources.connectors.base import Row, SourceFetchError

__all__ = ["kept", "latest", "licence_notes", "read_row", "records"]

_WHAT: Final = "HDX HAPI"
# The longest texts HAPI's own response models allow (max_length): anything longer is
# not an answer of the documented shape.
_MAX_CODE: Final = 128
_MAX_NAME: Final = 512
_MAX_RESOURCES_NAMED: Final = 5
_DATE: Final = re.compile(r"(\d{4})-(\d{2})-(\d{2})(?:[T ][0-9:.]{0,20}(?:Z|[+-]\d{2}:?\d{2})?)?")


def records(fetched: Fetched) -> list[dict[str, Any]]:
    """The rows of one page: ``{"data": [objects]}``, or a fetch error saying why not."""
    try:
        answer = json.loads(fetched.body.decode("utf-8"), parse_constant=_no_constant)
    except UnicodeDecodeError:
        raise _malformed(fetched, "it is not UTF-8 text") from None
    except ValueError:
        raise _malformed(fetched, "it is not JSON") from None
    except RecursionError:
        raise _malformed(fetched, "it nests deeper than geomint reads") from None
    records = answer.get("data") if isinstance(answer, dict) else None
    if not isinstance(records, list):
        raise _malformed(fetched, 'it is not the {"data": [rows]} answer HAPI documents')
    if not all(isinstance(record, dict) for record in records):
        raise _malformed(fetched, "its rows are not all objects")
    return records


def read_row(
    record: Mapping[str, Any], endpoint: HapiEndpoint, url: str
) -> tuple[Row, date | None]:
    """One row and the start of its reference period (to find the latest)."""
    where = "asylum_location_code" if endpoint.place == "asylum" else "location_code"
    required = [where, "reference_period_start", "resource_hdx_id"]
    if endpoint.value is not None:
        required.append(endpoint.value)
    missing = [name for name in required if name not in record]
    if missing:
        raise SourceFetchError(
            "changed",
            f"{_WHAT} answered {endpoint.title} rows without the fields this connector reads "
            f"({', '.join(missing)} missing; a row has {', '.join(sorted(record)[:30])}); "
            "the API may have changed, so no table was made. Report it, and use another "
            "source meanwhile",
            url=url,
        )
    texts = _Texts(record, url, endpoint)
    start = _date(record, "reference_period_start", url)
    end = _date(record, "reference_period_end", url) if "reference_period_end" in record else None
    extra: dict[str, JsonValue] = {}
    if endpoint.place == "asylum":
        unit_code = texts.code(where, required=True)
        unit_name = texts.name("asylum_location_name")
    else:
        location = texts.code("location_code", required=True)
        admin1, admin2 = texts.code("admin1_code"), texts.code("admin2_code")
        names = {n: texts.name(n) for n in ("location_name", "admin1_name", "admin2_name")}
        level = 2 if admin2 else 1 if admin1 else 0
        unit_code = admin2 or admin1 or location
        unit_name = names[f"admin{level}_name" if level else "location_name"]
        extra.update(
            admin_level=level,
            location_code=location,
            location_name=names["location_name"],
            admin1_code=admin1,
            admin1_name=names["admin1_name"],
            admin2_code=admin2,
            admin2_name=names["admin2_name"],
        )
    assert unit_code is not None
    for name in (*endpoint.dimensions, *endpoint.details):
        if name in record:
            extra[name] = texts.value(name)
    extra["resource_hdx_id"] = texts.code("resource_hdx_id")
    value = None if endpoint.value is None else _number(record[endpoint.value], endpoint, url)
    return (
        Row(
            unit_code=unit_code,
            unit_name=unit_name,
            period=_period(start, end),
            value=value,
            extra=extra,
        ),
        start,
    )


class _Texts:
    """The text and number fields of one row, each checked against HAPI's own limits."""

    def __init__(self, record: Mapping[str, Any], url: str, endpoint: HapiEndpoint) -> None:
        self.record = record
        self.url = url
        self.endpoint = endpoint

    def code(self, name: str, *, required: bool = False) -> str | None:
        text = self._text(name, _MAX_CODE)
        if text is None and required:
            raise self._wrong(name, "has none")
        return text

    def name(self, name: str) -> str | None:
        return self._text(name, _MAX_NAME)

    def value(self, name: str) -> JsonValue:
        given = self.record[name]
        if isinstance(given, bool) or given is None:
            return given
        if isinstance(given, int | float):
            if not _finite(given):
                raise SourceFetchError(
                    "malformed",
                    f"{_WHAT} gave a row's {name} as {str(given)[:40]}, not a finite number; "
                    "no table was made. Try again later",
                    url=self.url,
                )
            return given
        # An empty text is None: an empty category is the needs overview's total.
        return self._text(name, _MAX_NAME)

    def _text(self, name: str, limit: int) -> str | None:
        given = self.record.get(name)
        if given is None:
            return None
        if not isinstance(given, str):
            raise self._wrong(name, f"is {type(given).__name__}, not text")
        text = given.strip()
        if len(given) > limit:
            raise SourceFetchError(
                "malformed",
                f"{_WHAT} gave a row's {name} as {len(given):,} characters of text, longer "
                f"than the {limit} its own documentation allows; no table was made. Try "
                "again later, or report it",
                url=self.url,
            )
        if not text.isprintable():
            raise self._wrong(name, "holds control characters")
        return text or None

    def _wrong(self, name: str, what: str) -> SourceFetchError:
        return SourceFetchError(
            "changed",
            f"{_WHAT} answered a {self.endpoint.title} row whose {name} {what}; the API may "
            "have changed, so no table was made. Report it, and use another source meanwhile",
            url=self.url,
        )


def _date(record: Mapping[str, Any], name: str, url: str) -> date | None:
    given = record.get(name)
    if given is None:
        return None
    found = _DATE.fullmatch(given) if isinstance(given, str) and len(given) <= 40 else None
    if found is not None:
        try:
            return date(int(found[1]), int(found[2]), int(found[3]))
        except ValueError:  # 2024-02-30
            pass
    raise SourceFetchError(
        "changed",
        f"{_WHAT} gave a row's {name} as {str(given)[:40]!r}, not a date; the API may have "
        "changed, so no table was made. Report it",
        url=url,
    )


def _period(start: date | None, end: date | None) -> str:
    """A reference period as text: ``"2024"`` for a calendar year, a date, or a range."""
    if start is None:
        return PERIOD_NOT_STATED
    if end is None or end == start:
        return start.isoformat()
    if (start.month, start.day, end.month, end.day) == (1, 1, 12, 31) and start.year == end.year:
        return str(start.year)
    return f"{start.isoformat()}/{end.isoformat()}"


def _number(value: Any, endpoint: HapiEndpoint, url: str) -> int | float | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise SourceFetchError(
            "changed",
            f"{_WHAT} gave a {endpoint.title} row's {endpoint.value} as "
            f"{str(value)[:40]!r}, not a number; the API may have changed, so no table was "
            "made",
            url=url,
        )
    if not _finite(value):
        raise SourceFetchError(
            "malformed",
            f"{_WHAT} gave a {endpoint.title} row's {endpoint.value} as "
            f"{str(value)[:40]}..., not a finite number; no table was made. Try again later",
            url=url,
        )
    return value


def _finite(value: int | float) -> bool:
    """Whether a number is one a table can hold: finite, and an int a float can carry."""
    if isinstance(value, int):
        return abs(value) < 2**53
    return math.isfinite(value)


def _no_constant(name: str) -> None:
    """Refuse ``NaN`` and ``Infinity``, which are not JSON (Python's parser takes them)."""
    raise ValueError(f"{name} is not JSON")


def _malformed(fetched: Fetched, why: str) -> SourceFetchError:
    return SourceFetchError(
        "malformed",
        f"{_WHAT} sent an answer geomint cannot read: {why}; {head_of(fetched.body)}. "
        "Try again later",
        url=fetched.url,
    )


# --- shaping the table --------------------------------------------------------------------


def kept(
    rows: Sequence[Row], starts: Sequence[date | None], field: str, wanted: str, key: str
) -> tuple[list[Row], list[date | None]]:
    """The rows whose ``field`` is ``wanted`` (``total``: the rows without one)."""
    if rows and not any(field in row.extra for row in rows):
        raise SourceFetchError(
            "changed",
            f"{_WHAT} answered rows without the {field} that {key} narrows by; the API may "
            "have changed. Fetch without it",
        )
    target = None if wanted.lower() == "total" else wanted.casefold()
    pairs = [
        (row, start)
        for row, start in zip(rows, starts, strict=True)
        if (str(row.extra.get(field)).casefold() if row.extra.get(field) else None) == target
    ]
    return [row for row, _ in pairs], [start for _, start in pairs]


def latest(rows: Sequence[Row], starts: Sequence[date | None], endpoint: HapiEndpoint) -> list[Row]:
    """Each series' row of the latest reference period with a value, in HAPI's order."""
    best: dict[tuple[object, ...], int] = {}
    for at, (row, start) in enumerate(zip(rows, starts, strict=True)):
        if start is None or (row.value is None and endpoint.value is not None):
            continue
        key = (row.unit_code, *(row.extra.get(name) for name in endpoint.dimensions))
        held = best.get(key)
        if held is None or start > (starts[held] or date.min):
            best[key] = at
    chosen = set(best.values())
    return [row for at, row in enumerate(rows) if at in chosen]


def licence_notes(rows: Sequence[Row]) -> list[str]:
    """Where the rows' licence is said: HAPI gives none, their HDX datasets do."""
    resources = list(
        dict.fromkeys(
            str(row.extra["resource_hdx_id"]) for row in rows if row.extra.get("resource_hdx_id")
        )
    )
    if not resources:
        return []
    named = ", ".join(resources[:_MAX_RESOURCES_NAMED])
    more = (
        f" and {len(resources) - _MAX_RESOURCES_NAMED} more"
        if len(resources) > _MAX_RESOURCES_NAMED
        else ""
    )
    return [
        f"{_WHAT} states no licence per row: the rows come from HDX resource"
        f"{'s' if len(resources) > 1 else ''} {named}{more} (each row's resource_hdx_id), "
        "each under the licence of its HDX dataset; "
        f"https://data.humdata.org/api/3/action/resource_show?id={resources[0]} names the "
        "dataset of the first"
    ]
