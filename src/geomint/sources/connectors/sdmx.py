"""SDMX data services (Eurostat, the OECD, the ILO): one dataflow, by country and period.

A source names its service and series in ``config``: ``agency`` (``ESTAT``, ``OECD`` or
``ILO``), ``dataflow`` (``"DEMO_PJAN"``, ``"OECD.SDD.TPS,DSD_PRICES@DF_PRICES_ALL,1.0"``)
and a ``key`` template with one ``{geo}`` slot for the countries and a slot for each
dimension the source lets a fetch narrow (``"A.NR.TOTAL.{sex}.{geo}"``). The URL is
built here, the bytes are fetched through :mod:`geomint.http` under the caller's policy,
and only then does the ``sdmx1`` package parse them: it never sends a request itself.

Formats: SDMX-ML 2.1 generic data (Eurostat, ILO) and SDMX-JSON 1.0 (OECD), asked for
by ``Accept`` header. Structure-specific SDMX-ML needs the data structure to be read,
a second request this connector does not make, so it is refused with a message saying so.

A body is parsed in a confined child process
(:mod:`~geomint.sources.connectors._confined_sdmx`), never in the application: ``sdmx1``
builds an object per observation, and 19 MB of SDMX-ML once took 27 s and 760 MB. The
child's rows are checked for shape here. Where no confined child can start, the fetch is
``unavailable``. At most 8 MB is fetched (less if the caller's ``max_bytes`` says so).

Before that, a body is refused that could hide markup from these checks: one that is not
UTF-8 (or declares another encoding, such as UTF-7, or holds NUL characters, as UTF-16
text does), and one with a document type declaration: SDMX never needs one, and an XML
parser given ``<!ENTITY`` can be made to expand a few bytes into gigabytes.

Eurostat names countries by ISO 3166-1 alpha-2, except Greece (``EL``) and the United
Kingdom (``UK``): those are asked as ``EL``/``UK`` and read back as ``GR``/``GB``, and
the table's notes say so.
"""

from __future__ import annotations

import re
import string
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final, Literal
from urllib.parse import quote

from geomint.errors import UsageError
from geomint.http import Fetched, FetchError, ParamValue, RequestPolicy, request
from geomint.sources.connectors._common import (
    capped,
    config_text,
    fetch_error,
    head_of,
    now,
    option_values,
    trusting,
    unit_text,
)
from geomint.sources.connectors._confined_sdmx import (
    MAX_BODY,
    Parsed,
    Reader,
    decode,
    read_in_child,
)
from geomint.sources.connectors.base import (
    PeriodFilter,
    Request,
    Row,
    SourceFetchError,
    Table,
    Unit,
)
from geomint.sources.model import Source

__all__ = ["AGENCIES", "SdmxConnector"]

Format = Literal["generic", "json"]

_ACCEPT: Final[Mapping[Format, str]] = {
    "generic": "application/vnd.sdmx.genericdata+xml;version=2.1",
    "json": "application/vnd.sdmx.data+json;version=1.0.0",
}
_HOSTILE: Final = ("<!doctype", "<!entity")
# The encodings a body may declare: the one it is checked in, and its subset.
_ENCODINGS: Final = frozenset({"utf-8", "utf8", "us-ascii", "ascii"})
_DECLARED: Final = re.compile(r"""\bencoding\s{0,20}=\s{0,20}["']([^"']{0,40})["']""")
# A parse gets at least this long, however much of timeout_s the request used.
_MIN_PARSE_S: Final = 2.0
_CODE: Final[Mapping[str, re.Pattern[str]]] = {
    "iso2": re.compile(r"[A-Z]{2}"),
    "iso3": re.compile(r"[A-Z]{3}"),
}


@dataclass(frozen=True, kw_only=True)
class _Agency:
    """How one SDMX service is asked and answers."""

    publisher: str
    base_url: str
    format: Format
    codes: Literal["iso2", "iso3"]
    geo: str
    asked_as: Mapping[str, str]  # ISO code -> the service's code, where they differ


AGENCIES: Final[Mapping[str, _Agency]] = {
    "ESTAT": _Agency(
        publisher="Eurostat",
        base_url="https://ec.europa.eu/eurostat/api/dissemination/sdmx/2.1",
        format="generic",
        codes="iso2",
        geo="geo",
        asked_as={"GR": "EL", "GB": "UK"},
    ),
    "OECD": _Agency(
        publisher="the OECD",
        base_url="https://sdmx.oecd.org/public/rest",
        format="json",
        codes="iso3",
        geo="REF_AREA",
        asked_as={},
    ),
    "ILO": _Agency(
        publisher="the ILO",
        base_url="https://sdmx.ilo.org/rest",
        format="generic",
        codes="iso3",
        geo="REF_AREA",
        asked_as={},
    ),
}
"""The services this connector reads, by the ``agency`` a source's config names."""


class SdmxConnector:
    """Read one SDMX dataflow by country and period (see the module docstring).

    Settings in ``source.config``: ``agency``, ``dataflow`` and ``key`` (required);
    ``defaults`` (a value for each dimension slot a fetch may leave out), ``unit`` (the
    unit of the values), and overrides of the agency's ``base_url``, ``format``
    (``generic`` or ``json``), ``geo_dimension`` and ``time_dimension``.
    """

    @property
    def name(self) -> str:
        """``"sdmx"``."""
        return "sdmx"

    @property
    def needs_network(self) -> bool:
        """True: every fetch is a request to the service."""
        return True

    @property
    def vocabulary(self) -> Mapping[str, str]:
        """The dimension keys a source may declare; each fills the slot of its name in
        the source's key template, with the codes that source publishes."""
        return {
            "sex": "a sex code the dataflow publishes (total, males, females)",
            "age": "an age-class code the dataflow publishes",
        }

    def __init__(self, *, reader: Reader | None = None) -> None:
        """Read SDMX answers with ``reader``: by default in a confined child process.

        Args:
            reader: Parses a body and returns the child's raw answer; a test passes one
                that runs the child's parse in process (never do so outside tests: an
                answer's cost is unbounded there).
        """
        self._reader: Reader = reader or read_in_child

    def fetch(self, request: Request) -> Table:
        """Read the dataflow for the countries, periods and dimension codes asked.

        Raises:
            SourceFetchError: ``refused_filter`` for a unit that is not a country or a
                dimension code the source does not publish (with its options);
                ``not_found`` when the service has no data for the key; ``malformed``
                for a body that is hostile or does not parse; ``changed`` when it lacks
                the geography or time dimension; ``timeout``, ``rate_limited`` or
                ``unavailable`` when the service fails.
        """
        source = request.source
        agency = _agency(source)
        settings = _Settings.of(source, agency)
        geo_codes, renamed = _geo_codes(request.units, agency)
        key = _key(source, settings.key, geo_codes, request.options)
        url = (
            f"{settings.base_url}/data/{quote(settings.dataflow, safe=',@')}/{quote(key, safe='+')}"
        )
        params = _period_params(request.period)
        deadline = time.monotonic() + request.policy.timeout_s
        fetched = _get(url, params, settings, agency, request.policy, key)
        parsed = self._parse(fetched, agency, deadline)
        latest = request.period is not None and request.period.latest
        rows, left_out = _rows(parsed, settings, agency, fetched.url, latest=latest)

        notes: list[str] = []
        if renamed:
            notes.append(
                f"{agency.publisher} names "
                + " and ".join(f"{iso} as {theirs}" for iso, theirs in renamed)
                + "; the rows give the ISO codes"
            )
        if left_out:
            notes.append(
                "left out the rows of areas that are not countries: "
                + ", ".join(sorted(left_out)[:5])
                + (f" and {len(left_out) - 5} more" if len(left_out) > 5 else "")
            )
        if latest:
            notes.append("kept each series' latest period with a value")
        if not rows:
            notes.append(f"{agency.publisher} has no values of {settings.dataflow} for key {key}")
        return Table(
            rows=tuple(rows),
            code_system=agency.codes,
            retrieved_at=now(),
            url=fetched.url,
            unit=unit_text(settings.unit) or unit_text(source.profile.unit),
            notes=tuple(notes),
        )

    def _parse(self, fetched: Fetched, agency: _Agency, deadline: float) -> Parsed | None:
        """Refuse a hostile or unreadable body, then parse it in a confined child."""
        what = f"{agency.publisher}'s SDMX service"
        _refuse_hostile(fetched, what)
        timeout_s = max(_MIN_PARSE_S, deadline - time.monotonic())
        try:
            parsed = decode(self._reader(fetched.body, timeout_s, what), what)
        except SourceFetchError as error:
            error.url = error.url or fetched.url
            if error.code == "malformed":
                error.args = (f"{error}; {head_of(fetched.body)}",)
            raise
        if parsed.deferred:
            raise SourceFetchError(
                "unavailable",
                f"{agency.publisher} will only prepare this extract for later download; "
                "ask for fewer countries or years",
                url=fetched.url,
            )
        return parsed if parsed.rows else None


# --- what is asked ------------------------------------------------------------------------


@dataclass(frozen=True, kw_only=True)
class _Settings:
    base_url: str
    dataflow: str
    key: str
    format: Format
    geo: str
    time: str
    unit: str | None

    @classmethod
    def of(cls, source: Source, agency: _Agency) -> _Settings:
        form = config_text(source, "format", agency.format)
        if form not in _ACCEPT:
            raise UsageError(
                f"source {source.id!r} asks for SDMX format {form!r}; use 'generic' "
                "(SDMX-ML 2.1 generic data) or 'json' (SDMX-JSON 1.0)"
            )
        unit = source.config.get("unit")
        return cls(
            base_url=config_text(source, "base_url", agency.base_url).rstrip("/"),
            dataflow=config_text(source, "dataflow"),
            key=config_text(source, "key"),
            format="json" if form == "json" else "generic",
            geo=config_text(source, "geo_dimension", agency.geo),
            time=config_text(source, "time_dimension", "TIME_PERIOD"),
            unit=unit if isinstance(unit, str) else None,
        )


def _agency(source: Source) -> _Agency:
    name = config_text(source, "agency")
    if name not in AGENCIES:
        raise UsageError(
            f"source {source.id!r} names SDMX agency {name!r}; this connector reads "
            f"{', '.join(AGENCIES)}"
        )
    return AGENCIES[name]


def _geo_codes(
    units: Sequence[Unit], agency: _Agency
) -> tuple[tuple[str, ...], list[tuple[str, str]]]:
    """The service's codes for the units, and the (ISO, theirs) pairs that differ."""
    codes: list[str] = []
    renamed: list[tuple[str, str]] = []
    for unit in units:
        iso = unit.iso2 if agency.codes == "iso2" else unit.iso3
        if unit.level != "country" or not iso:
            raise SourceFetchError(
                "refused_filter",
                f"this {agency.publisher} series is by country, and {unit.id} ({unit.name}) "
                f"is a {unit.level}; ask for its country instead"
                + (f" (country:{unit.country})" if unit.country else ""),
                key="unit",
            )
        theirs = agency.asked_as.get(iso, iso)
        if theirs != iso:
            renamed.append((iso, theirs))
        codes.append(theirs)
    return tuple(dict.fromkeys(codes)), renamed


def _key(
    source: Source,
    template: str,
    geo_codes: Sequence[str],
    options: Mapping[str, str | tuple[str, ...]],
) -> str:
    """Fill the key template: ``{geo}`` with the countries, other slots with the codes
    asked, the source's defaults, or nothing (every code)."""
    slots = [name for _, name, _, _ in string.Formatter().parse(template) if name]
    if "geo" not in slots:
        raise UsageError(f"source {source.id!r} has key {template!r} without a {{geo}} slot")
    defaults = source.config.get("defaults")
    defaults = defaults if isinstance(defaults, dict) else {}
    values: dict[str, str] = {"geo": "+".join(geo_codes)}
    for slot in slots:
        if slot == "geo":
            continue
        if slot in options:
            values[slot] = "+".join(option_values(source, slot, options[slot]))
        else:
            default = defaults.get(slot)
            values[slot] = default if isinstance(default, str) else ""
    return template.format_map(values)


def _period_params(period: PeriodFilter | None) -> dict[str, ParamValue]:
    if period is None:
        return {}
    params: dict[str, ParamValue] = {"startPeriod": period.start, "endPeriod": period.end}
    if period.latest:
        params["lastNObservations"] = 1
    return params


def _get(
    url: str,
    params: Mapping[str, ParamValue],
    settings: _Settings,
    agency: _Agency,
    policy: RequestPolicy,
    key: str,
) -> Fetched:
    """Fetch the data message; a 404 is the service having nothing for the key."""
    what = f"{agency.publisher}'s SDMX service"
    try:
        return request(
            "GET",
            url,
            params=params,
            headers={"Accept": _ACCEPT[settings.format]},
            policy=capped(trusting(policy, settings.base_url), MAX_BODY),
        )
    except FetchError as error:
        if error.code == "status" and error.status == 404:
            text = _plain(error.detail)
            said = f" ({text})" if text else ""
            raise SourceFetchError(
                "not_found",
                f"{agency.publisher} has no data of {settings.dataflow} for key {key} in the "
                f"periods asked{said}; check that the countries are in the source's coverage "
                "and ask for other years or latest",
                url=error.url,
            ) from None
        if error.code == "status" and error.status == 413:
            raise SourceFetchError(
                "unavailable",
                f"{agency.publisher} refused to send that much at once (HTTP 413); ask for "
                "fewer countries or years",
                url=error.url,
            ) from None
        raise fetch_error(error, what) from None


def _plain(detail: str | None) -> str | None:
    """The words of an error body's start, without its markup (None when it has none)."""
    if not detail:
        return None
    text = re.sub(r"<[^>]*(>|$)", " ", detail.removesuffix("..."))
    words = " ".join(text.split())
    return words or None


# --- what comes back ----------------------------------------------------------------------


def _refuse_hostile(fetched: Fetched, what: str) -> None:
    """Refuse a body that could hide markup from the checks, or that carries a DTD."""
    try:
        text = fetched.body.decode("utf-8-sig")
    except UnicodeDecodeError:
        raise _malformed(fetched, what, "it is not UTF-8 text") from None
    if "\x00" in text:
        raise _malformed(
            fetched,
            what,
            "it holds NUL characters (UTF-16 or UTF-32 text read as UTF-8, which would "
            "hide its markup from geomint's checks), so it was refused before parsing",
        )
    if text.startswith("<?xml"):
        end = text.find("?>", 0, 300)
        declared = _DECLARED.search(text, 0, end) if end > 0 else None
        if end < 0 or (declared is not None and declared[1].lower() not in _ENCODINGS):
            said = repr(declared[1]) if declared is not None else "none geomint can read"
            raise _malformed(
                fetched,
                what,
                f"its XML declaration names the encoding {said}; geomint reads SDMX in "
                "UTF-8 only (another encoding, such as UTF-7, could hide markup from its "
                "checks), so it was refused before parsing",
            )
    lowered = text.lower()
    if any(marker in lowered for marker in _HOSTILE):
        raise _malformed(
            fetched,
            what,
            "it carries a document type declaration (<!DOCTYPE or <!ENTITY), which SDMX "
            "never needs and which can expand a few bytes into gigabytes, so it was refused "
            "before parsing",
        )
    if "structurespecificdata" in lowered[:2_000]:
        raise _malformed(
            fetched,
            what,
            "it is structure-specific SDMX-ML, which cannot be read without the data "
            "structure; the source's config must ask for format 'generic' or 'json'",
        )


def _rows(
    parsed: Parsed | None, settings: _Settings, agency: _Agency, url: str, *, latest: bool
) -> tuple[list[Row], set[str]]:
    """Rows in ISO codes (with ``latest``, each series' newest period with a value), and
    the codes left out because they name no country."""
    if parsed is None:
        return [], set()
    names = list(parsed.dims)
    missing = [dim for dim in (settings.geo, settings.time) if dim not in names]
    if missing:
        raise SourceFetchError(
            "changed",
            f"{agency.publisher} answered {settings.dataflow} without the "
            f"{' and '.join(missing)} this source reads (it has "
            f"{', '.join(names)}); the dataflow's structure may have changed, so no table "
            "was made. Report it, and use another source meanwhile",
            url=url,
        )
    read_as = {theirs: iso for iso, theirs in agency.asked_as.items()}
    shape = _CODE[agency.codes]
    width = len(names)
    rows: list[Row] = []
    series: list[tuple[str, ...]] = []
    left_out: set[str] = set()
    for record in parsed.rows:
        dims = dict(zip(names, record[:width], strict=True))
        theirs = dims.pop(settings.geo)
        code = read_as.get(theirs, theirs)
        if not shape.fullmatch(code):
            left_out.add(theirs)
            continue
        period = dims.pop(settings.time)
        extra: dict[str, Any] = dict(dims)
        series.append((code, *extra.values()))
        extra.update(
            {
                name: value
                for name, value in zip(parsed.attributes, record[width + 1 :], strict=True)
                if value
            }
        )
        value = _number(record[width])
        rows.append(Row(unit_code=code, unit_name=None, period=period, value=value, extra=extra))
    return (_latest(rows, series) if latest else rows), left_out


def _number(value: float | None) -> float | int | None:
    """The checked value, as an int when it is a whole number a float carries exactly."""
    if value is None:
        return None
    return int(value) if float(value).is_integer() and abs(value) < 2**53 else value


def _latest(rows: Sequence[Row], series: Sequence[tuple[str, ...]]) -> list[Row]:
    """Each series' row of the latest period with a value, in the source's order."""
    best: dict[tuple[str, ...], int] = {}
    for at, (row, key) in enumerate(zip(rows, series, strict=True)):
        kept = best.get(key)
        if row.value is not None and (kept is None or row.period > rows[kept].period):
            best[key] = at
    chosen = set(best.values())
    return [row for at, row in enumerate(rows) if at in chosen]


def _malformed(fetched: Fetched, what: str, why: str) -> SourceFetchError:
    return SourceFetchError(
        "malformed",
        f"{what} sent an answer geomint cannot read: {why}; {head_of(fetched.body)}",
        url=fetched.url,
    )
