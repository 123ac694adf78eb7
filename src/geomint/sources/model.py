"""What a source is: one row of the registry, written as data, never as code.

A :class:`Source` says what a dataset is (title, publisher, licence, edition), where it
reaches (countries, years, modality), how to read it (the connector, its filter keys,
the options the source itself published) and what one fetch returns (its
:class:`Profile`). Adding a source is adding one of these; adding a way of reading is a
connector (:mod:`geomint.sources.connectors`).

Periods are text a person reads: ``"2020"``, ``"1952/2007"``, ``"2024-07-01"``, or
:data:`PERIOD_NOT_STATED` when the publisher gives none. A figure read off a source
carries the period its row refers to, and a card shows it.
"""

from __future__ import annotations

import re
from typing import Annotated, Final, Literal

from pydantic import BaseModel, ConfigDict, Field, JsonValue, StringConstraints, model_validator

from geomint.provenance import PERIOD_NOT_STATED, Evidence

__all__ = [
    "MODALITIES",
    "PERIOD_NOT_STATED",
    "Column",
    "Coverage",
    "FilterKey",
    "Modality",
    "Profile",
    "Source",
    "period_years",
]

Modality = Literal["table", "vector", "raster"]
MODALITIES: Final[tuple[str, ...]] = ("table", "vector", "raster")

#: Most countries a hit spells out; past it, it says how many.
_LISTED_COUNTRIES: Final = 12
_SOURCE_ID: Final = re.compile(r"[a-z0-9][a-z0-9._-]{0,99}")
_YEAR: Final = re.compile(r"(\d{4})")

_Text = Annotated[str, StringConstraints(strip_whitespace=True, min_length=1, max_length=2_000)]
_Name = Annotated[str, StringConstraints(strip_whitespace=True, min_length=1, max_length=200)]


class _Frozen(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class Coverage(_Frozen):
    """Where and when a source reaches.

    Attributes:
        countries: ISO 3166-1 alpha-3 codes of the countries it covers; empty with
            ``world`` true for a source about every country.
        world: It covers the world (every country), so no country predicate excludes it.
        areas: Other areas it names, in words ("Helsinki", "EU27").
        levels: The spine levels its rows are about (``country``, ``admin1``, ``city``,
            ``area``); empty when it does not say. A fetch naming a unit of another level
            is a miss before any request.
        start: The first year it has, or None when it states none.
        end: The last year it has, or None for open-ended or unstated.
    """

    countries: tuple[Annotated[str, StringConstraints(pattern=r"^[A-Z]{3}$")], ...] = ()
    world: bool = False
    areas: tuple[_Name, ...] = ()
    levels: tuple[Literal["country", "admin1", "city", "area"], ...] = ()
    start: int | None = Field(default=None, ge=1000, le=2200)
    end: int | None = Field(default=None, ge=1000, le=2200)

    @model_validator(mode="after")
    def _ordered(self) -> Coverage:
        if self.start is not None and self.end is not None and self.start > self.end:
            raise ValueError(f"coverage starts in {self.start}, after it ends in {self.end}")
        return self

    @property
    def period(self) -> str:
        """The years as text: ``"1950/2100"``, ``"2007"``, or ``"not stated"``."""
        if self.start is None and self.end is None:
            return PERIOD_NOT_STATED
        if self.start == self.end:
            return str(self.start)
        return f"{self.start or ''}/{self.end or ''}"


class FilterKey(_Frozen):
    """One key a fetch of this source may narrow by.

    Attributes:
        key: The name passed in ``filters`` (``"unit"``, ``"period"``, ``"geo"``).
        takes: What it takes, in words the model reads ("a spine id such as country:FIN").
        required: A fetch without it is refused before any request.
        options: Values the source itself published for it (learned from a refused fetch
            or declared); empty when open.
    """

    key: Annotated[str, StringConstraints(pattern=r"^[a-z][a-z0-9_]{0,39}$")]
    takes: _Text
    required: bool = False
    options: tuple[_Name, ...] = ()


class Column(_Frozen):
    """One column of what a fetch returns.

    Attributes:
        name: The column's name in the landed table.
        meaning: What it holds.
        unit: Its unit (``"people"``, ``"US$ (2005 PPP)"``), or None.
    """

    name: _Name
    meaning: _Text
    unit: _Name | None = None


class Profile(_Frozen):
    """What one fetch returns, so the first fetch is the right one.

    Attributes:
        shape: One line: what a row is ("one row per country and year").
        columns: The columns a landed table has.
        value: The column a cell read returns.
        unit: The unit of that value.
    """

    shape: _Text
    columns: tuple[Column, ...]
    value: _Name = "value"
    unit: _Name | None = None


class Source(_Frozen):
    """One source in the registry.

    Attributes:
        id: Lower-case id, unique in the registry (``"un-wpp-2024-population"``).
        title: The dataset's title as its publisher gives it.
        publisher: Who publishes it.
        licence: Its licence (an SPDX id where there is one), or ``"not stated"``.
        url: Where a person reads about it.
        edition: Which edition or package version, when it has one.
        evidence: How the publisher knows it (:data:`geomint.provenance.Evidence`).
        connector: Which connector reads it (``"bundled"``, ``"worldbank"``...).
        config: What the connector needs to read this source (an indicator id, a
            dataflow, a portal URL, a bundled file); not shown to the model.
        coverage: Where and when it reaches.
        modality: ``table``, ``vector`` or ``raster``.
        concepts: What it measures, as short ids (``"population"``, ``"gdp_per_capita"``).
        description: What it is, in a few sentences.
        guidance: How to use it well, written per source (caveats, what a period means).
        filters: The keys a fetch may narrow by.
        profile: What one fetch returns.
    """

    id: Annotated[str, StringConstraints(pattern=_SOURCE_ID.pattern)]
    title: Annotated[str, StringConstraints(strip_whitespace=True, min_length=1, max_length=500)]
    publisher: _Name
    licence: _Name
    url: Annotated[str, StringConstraints(pattern=r"^https?://\S+$", max_length=2_000)] | None = (
        None
    )
    edition: _Name | None = None
    evidence: Evidence
    connector: Annotated[str, StringConstraints(pattern=r"^[a-z][a-z0-9_]{0,39}$")]
    config: dict[str, JsonValue] = Field(default_factory=dict)
    coverage: Coverage
    modality: Modality
    concepts: tuple[Annotated[str, StringConstraints(pattern=r"^[a-z][a-z0-9_]{0,59}$")], ...]
    description: _Text
    guidance: _Text
    filters: tuple[FilterKey, ...] = ()
    profile: Profile

    def filter_key(self, key: str) -> FilterKey | None:
        """The filter named ``key``, or None."""
        return next((f for f in self.filters if f.key == key), None)

    def search_text(self) -> str:
        """What the ranking arms read of it: every word a person might search it by."""
        return " ".join(
            (
                self.title,
                self.publisher,
                self.licence,
                " ".join(c.replace("_", " ") for c in self.concepts),
                self.description,
                " ".join(self.coverage.areas),
                " ".join(col.meaning for col in self.profile.columns),
            )
        )

    def brief(self) -> dict[str, JsonValue]:
        """A hit below the first few: enough to choose it, not yet to fetch it."""
        return {
            "source_id": self.id,
            "title": self.title,
            "publisher": self.publisher,
            "licence": self.licence,
            "period": self.coverage.period,
            "concepts": list(self.concepts),
        }

    def for_model(self) -> dict[str, JsonValue]:
        """What a ``find_sources`` hit tells the model: enough to make the first fetch
        the right one, without the connector's private configuration. Long lists are
        counted rather than spelled out (142 countries), so a few hits fit a result."""
        coverage = self.coverage
        countries: JsonValue = (
            "world"
            if coverage.world
            else list(coverage.countries)
            if len(coverage.countries) <= _LISTED_COUNTRIES
            else f"{len(coverage.countries)} countries (not every country)"
        )
        return {
            "source_id": self.id,
            "title": self.title,
            "publisher": self.publisher,
            "licence": self.licence,
            "edition": self.edition,
            "modality": self.modality,
            "concepts": list(self.concepts),
            "description": self.description,
            "guidance": self.guidance,
            "coverage": {
                "countries": countries,
                **({"levels": list(coverage.levels)} if coverage.levels else {}),
                "areas": list(coverage.areas),
                "period": coverage.period,
            },
            "filters": [
                {
                    "key": f.key,
                    "takes": f.takes,
                    "required": f.required,
                    **({"options": list(f.options)} if f.options else {}),
                }
                for f in self.filters
            ],
            "profile": {
                "shape": self.profile.shape,
                "columns": [
                    f"{c.name} ({c.unit})" if c.unit else c.name for c in self.profile.columns
                ],
                "value": self.profile.value,
                **({"unit": self.profile.unit} if self.profile.unit else {}),
            },
        }


def period_years(period: str) -> tuple[int, int] | None:
    """The first and last year a period text names, or None when it names none.

    Example:
        >>> period_years("2020"), period_years("1990/2000"), period_years("not stated")
        ((2020, 2020), (1990, 2000), None)
    """
    years = [int(y) for y in _YEAR.findall(period)]
    if not years:
        return None
    return min(years), max(years)
