"""What every connector shares: the request it is given, what it returns, how it fails.

A connector reads one kind of source (the bundled tables, the World Bank Indicators API,
SDMX, CKAN). It declares the filter keys it takes (:attr:`Connector.vocabulary`), is
handed a :class:`Request` whose units the place spine already resolved, and returns a
:class:`Table` of rows in the source's own unit codes (the caller maps them back to
spine ids) or, for a file-shaped resource, a :class:`Download` that the caller lands
through the confined intake. Every request goes through :mod:`geomint.http` with the
policy the caller gives (a test passes a ``ScriptedTransport`` or a loopback server).

A connector never guesses: a response that does not have the shape its documentation
gives is a :class:`SourceFetchError` with code ``malformed`` or ``changed``, never a
table read as best it could.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Final, Literal, Protocol

from pydantic import JsonValue

from geomint.errors import ModelFacingError
from geomint.geo.raster import Raster
from geomint.http import RequestPolicy
from geomint.sources.model import Source

__all__ = [
    "CODE_SYSTEMS",
    "FETCH_ERROR_CODES",
    "CodeSystem",
    "Connector",
    "Download",
    "FetchErrorKind",
    "Grid",
    "ListedDataset",
    "ListedResource",
    "Listing",
    "PeriodFilter",
    "Request",
    "Row",
    "SourceFetchError",
    "Table",
    "Unit",
]

CodeSystem = Literal["iso3", "iso2", "m49", "geonameid", "spine", "none"]
"""How a table names its units: ISO 3166-1 alpha-3 or alpha-2, UN M49 numeric, GeoNames
id, a spine id, or not at all (a catalogue listing)."""
CODE_SYSTEMS: Final[tuple[str, ...]] = ("iso3", "iso2", "m49", "geonameid", "spine", "none")

FetchErrorKind = Literal[
    "timeout",
    "rate_limited",
    "unavailable",
    "malformed",
    "changed",
    "not_found",
    "not_covered",
    "refused_filter",
]
FETCH_ERROR_CODES: Final[tuple[str, ...]] = (
    "timeout",
    "rate_limited",
    "unavailable",
    "malformed",
    "changed",
    "not_found",
    "not_covered",
    "refused_filter",
)


class SourceFetchError(ModelFacingError):
    """A fetch of a source failed or was refused; the message says why and what to try.

    Attributes:
        code: ``timeout``, ``rate_limited`` (``retry_after`` may say how long),
            ``unavailable`` (the service answered with an error or not at all),
            ``malformed`` (the body does not parse as the documented shape), ``changed``
            (it parses but lacks what the profile promises: columns renamed or gone),
            ``not_found`` (the source has no such series or resource), ``not_covered``
            (the unit asked for is of a level or place the source does not cover), or
            ``refused_filter`` (a filter value the source does not take; ``options``
            lists those it published, and the registry keeps them for the next hit).
        key: The filter key a ``refused_filter`` is about.
        options: The values the source published for ``key`` (shown to the model).
        learnable: ``options`` are the source's own code list for ``key``, the same for
            every fetch (an SDMX dimension's codes), so the registry keeps them on the
            row. False for options that hold only for this request (one CKAN dataset's
            resources): a registry that kept those would refuse every other dataset.
        retry_after: Seconds to wait before asking again, when the service said.
        url: The request URL, secrets removed, when one was sent.
    """

    def __init__(
        self,
        code: FetchErrorKind,
        message: str,
        *,
        key: str | None = None,
        options: tuple[str, ...] = (),
        learnable: bool = False,
        retry_after: float | None = None,
        url: str | None = None,
    ) -> None:
        super().__init__(message)
        self.code: FetchErrorKind = code
        self.key = key
        self.options = options
        self.learnable = learnable
        self.retry_after = retry_after
        self.url = url


@dataclass(frozen=True, kw_only=True)
class Unit:
    """A place the spine resolved, with every code a connector might ask a service by.

    Attributes:
        id: The spine id (``"country:FIN"``, ``"city:658225"``).
        name: Its English name.
        level: ``country``, ``admin1``, ``city`` or ``area``.
        iso2: ISO 3166-1 alpha-2 (countries) or ISO 3166-2 (divisions), when it has one.
        iso3: ISO 3166-1 alpha-3, for a country.
        m49: UN M49 numeric code, for a country.
        geonameid: GeoNames id, for a city.
        country: The ISO alpha-3 code of the country it lies in.
        bbox: Its bounding box ``(west, south, east, north)`` in degrees, or None for a
            point (a city): what a raster read covers when no other area is given.
    """

    id: str
    name: str
    level: str
    iso2: str | None = None
    iso3: str | None = None
    m49: int | None = None
    geonameid: int | None = None
    country: str | None = None
    bbox: tuple[float, float, float, float] | None = None


@dataclass(frozen=True, kw_only=True)
class PeriodFilter:
    """The years a fetch asks for: one year, a range, or the latest the source has.

    Attributes:
        start: First year wanted, or None for no lower bound.
        end: Last year wanted, or None for no upper bound.
        latest: Only the newest period each unit has (after ``start``/``end``).
    """

    start: int | None = None
    end: int | None = None
    latest: bool = False

    def holds(self, year: int) -> bool:
        """Whether ``year`` is inside the asked range (``latest`` is applied later)."""
        return (self.start is None or year >= self.start) and (self.end is None or year <= self.end)


@dataclass(frozen=True, kw_only=True)
class Request:
    """What a connector is asked to read.

    Attributes:
        source: The registry row.
        units: The units asked for, already resolved on the spine; empty for all.
        period: The years asked for, or None for all.
        options: The other filters, by key, as the model gave them (strings, or lists
            of strings for a key that takes several), checked against the source's
            declared keys before the connector sees them.
        policy: How to send HTTP requests (limits, retries, cache, a test transport).
    """

    source: Source
    units: tuple[Unit, ...] = ()
    period: PeriodFilter | None = None
    options: Mapping[str, str | tuple[str, ...]] = field(default_factory=dict)
    policy: RequestPolicy = field(default_factory=RequestPolicy)


@dataclass(frozen=True, kw_only=True)
class Row:
    """One observation: a value for one unit and one period.

    Attributes:
        unit_code: The unit as the source names it (``"FI"``, ``"FIN"``, ``"246"``).
        unit_name: The unit's name as the source gives it, when it does.
        period: The period it refers to (``"2020"``), or ``"not stated"``.
        value: The number, or None when the source has the row but no value.
        extra: Other columns of the row (a dimension such as sex, an observation status).
    """

    unit_code: str
    unit_name: str | None
    period: str
    value: float | int | None
    extra: Mapping[str, JsonValue] = field(default_factory=dict)


@dataclass(frozen=True, kw_only=True)
class Table:
    """What a table-shaped fetch returned.

    Attributes:
        rows: The rows, in the source's order.
        code_system: How ``unit_code`` names units.
        retrieved_at: When the answer was fetched (for bundled data: when the package
            carrying it was published).
        url: The request URL (secrets removed), or the bundled package it came from.
        unit: The unit of measure of ``value``, when the source states it.
        last_updated: When the publisher last updated the series, when it says.
        notes: What the connector narrowed, substituted or could not cover, in words.
    """

    rows: tuple[Row, ...]
    code_system: CodeSystem
    retrieved_at: datetime
    url: str | None = None
    unit: str | None = None
    last_updated: str | None = None
    notes: tuple[str, ...] = ()


@dataclass(frozen=True, kw_only=True)
class Download:
    """A file-shaped resource a connector fetched (a portal's GeoJSON or CSV): raw
    bytes for the confined intake to judge, never parsed here.

    Attributes:
        data: The bytes as received (capped by the policy's ``max_bytes``).
        name: The resource's name, for messages and the entry's label.
        media_type: The media type the server or the catalogue gave.
        url: Where it was fetched from.
        retrieved_at: When.
        licence: The licence the catalogue gives for it, or None when it states none.
        title: The dataset's title in the catalogue.
        publisher: The organisation the catalogue names.
    """

    data: bytes
    name: str
    media_type: str
    url: str
    retrieved_at: datetime
    licence: str | None
    title: str
    publisher: str | None = None


@dataclass(frozen=True, kw_only=True)
class Grid:
    """A raster a connector read: a window of a Cloud-Optimised GeoTIFF, or a grid
    derived from bundled data. Its values were decoded in a confined child (a remote
    file) or computed here from data we ship; never parsed in this process.

    Attributes:
        raster: The values with their grid.
        url: Where it was read from (secrets removed), or the bundled recipe's name.
        retrieved_at: When.
        licence: The licence its publisher gives, or None when it states none.
        title: What it is, for the entry's label.
        publisher: Who published it (for a derived grid: geomint, and from what).
        period: The period it refers to (``"2024-07-01"``), or ``"not stated"``.
        unit: The unit of a cell's value (``"people"``), when known.
        recipe: How a derived grid was computed, in words; None for a publisher's own.
        notes: What the read narrowed (a window, a band, a coarser overview), in words.
    """

    raster: Raster
    url: str
    retrieved_at: datetime
    licence: str | None
    title: str
    publisher: str | None = None
    period: str = "not stated"
    unit: str | None = None
    recipe: str | None = None
    notes: tuple[str, ...] = ()


class Connector(Protocol):
    """Reads one kind of source. Registered by name; a source names its connector."""

    @property
    def name(self) -> str:
        """The id sources name it by (``"worldbank"``)."""
        ...

    @property
    def needs_network(self) -> bool:
        """Whether a fetch sends requests over the network (the bundled tables do not):
        where the network is off, sources it reads are named but not offered."""
        ...

    @property
    def vocabulary(self) -> Mapping[str, str]:
        """The filter keys it takes beyond ``unit`` and ``period``, each with what it
        takes in words; a source's ``filters`` are drawn from these."""
        ...

    def fetch(self, request: Request) -> Table | Download | Listing | Grid:
        """Read what ``request`` asks for.

        Raises:
            SourceFetchError: It failed or was refused; the code says which.
        """
        ...


@dataclass(frozen=True, kw_only=True)
class ListedResource:
    """One file or service of a catalogue's dataset, as the catalogue describes it.

    Attributes:
        id: The catalogue's id for it (what ``resource`` takes).
        name: Its name in the catalogue, or None when it has none.
        format: The format the catalogue gives (``"CSV"``, ``"GeoJSON"``), or None.
        url: Where the file is, as the catalogue gives it.
        size: Its size in bytes, when the catalogue states it.
    """

    id: str
    name: str | None
    format: str | None
    url: str | None
    size: int | None = None


@dataclass(frozen=True, kw_only=True)
class ListedDataset:
    """One dataset a catalogue search found.

    Attributes:
        name: The catalogue's name for it (what ``dataset`` takes).
        title: Its title.
        organisation: The organisation publishing it, when the catalogue names one.
        licence_id: The catalogue's licence id (``"cc-by-4.0"``), or None when unstated.
        licence_title: The licence as a person reads it, or None.
        metadata_modified: When its catalogue entry last changed (ISO 8601 text), or None.
        resources: Its files and services.
        description: What the catalogue says it is (clipped), or None when it says nothing.
    """

    name: str
    title: str
    organisation: str | None
    licence_id: str | None
    licence_title: str | None
    metadata_modified: str | None
    resources: tuple[ListedResource, ...] = ()
    description: str | None = None


@dataclass(frozen=True, kw_only=True)
class Listing:
    """What a catalogue search returned: datasets to choose from, not data.

    Attributes:
        datasets: The datasets on this page of results, in the catalogue's order.
        count: How many datasets match in all (more than ``datasets`` when paged).
        url: The request URL (secrets removed).
        retrieved_at: When the answer was fetched.
        notes: What the connector narrowed or could not honour, in words.
        next: How to read one of them with this connector's filters, when it is not
            ``dataset`` and ``resource`` (a CKAN portal's).
    """

    datasets: tuple[ListedDataset, ...]
    count: int
    url: str
    retrieved_at: datetime
    notes: tuple[str, ...] = ()
    next: str | None = None
