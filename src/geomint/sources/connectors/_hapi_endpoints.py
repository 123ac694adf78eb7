"""The HDX HAPI endpoints geomint reads, and the filter keys they take: data, not code.

Each :class:`HapiEndpoint` says where an endpoint is, which field a row's value is, how
its rows name their place, which fields tell one series from another, and which filter
keys it takes (sent to HAPI, or applied to the rows it sent). :data:`VOCABULARY` says in
words what each key takes; :func:`checked` refuses a value that cannot be one of a key's
codes before it is sent.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Final, Literal

from geomint.sources.connectors.base import SourceFetchError

__all__ = ["ENDPOINTS", "VOCABULARY", "HapiEndpoint", "Place", "checked"]

_WHAT: Final = "HDX HAPI"

Place = Literal["admin", "asylum"]


@dataclass(frozen=True, kw_only=True)
class HapiEndpoint:
    """One HAPI endpoint this connector reads, as data.

    Attributes:
        path: Its path under ``/api/v2/``.
        title: What it holds, in words for messages.
        value: The field a row's value is read from, or None for rows that carry no
            number (who works where).
        unit: The unit of that value.
        place: ``admin`` (rows by country and COD p-codes of its divisions) or ``asylum``
            (rows by country of asylum, with the country of origin as a column).
        dimensions: Fields that tell one series of rows from another; kept on each row.
        details: Other fields kept on each row (names, age bounds, fractions).
        params: The filter keys sent to HAPI, each with the query parameter it sets.
        local: Filter keys applied here to the rows HAPI sent, for a field HAPI does not
            filter by (each with the field it compares).
    """

    path: str
    title: str
    value: str | None
    unit: str | None
    place: Place
    dimensions: tuple[str, ...]
    details: tuple[str, ...] = ()
    params: Mapping[str, str]
    local: Mapping[str, str] = dataclasses.field(default_factory=dict)

    @property
    def keys(self) -> frozenset[str]:
        """Every filter key a source of this endpoint may declare (with ``unit`` and
        ``period``)."""
        return frozenset({"unit", "period", *self.params, *self.local})


_ADMIN: Final[Mapping[str, str]] = {
    "location": "location_code",
    "admin_level": "admin_level",
    "admin1_code": "admin1_code",
    "admin2_code": "admin2_code",
}

ENDPOINTS: Final[Mapping[str, HapiEndpoint]] = {
    "baseline-population": HapiEndpoint(
        path="geography-infrastructure/baseline-population",
        title="baseline population",
        value="population",
        unit="people",
        place="admin",
        dimensions=("gender", "age_range"),
        details=("min_age", "max_age"),
        params={**_ADMIN, "gender": "gender", "age_range": "age_range"},
    ),
    "humanitarian-needs": HapiEndpoint(
        path="affected-people/humanitarian-needs",
        title="humanitarian needs",
        value="population",
        unit="people",
        place="admin",
        dimensions=("sector_code", "category", "population_status"),
        details=("sector_name",),
        params={
            **_ADMIN,
            "sector_code": "sector_code",
            "population_status": "population_status",
        },
        local={"category": "category"},
    ),
    "refugees": HapiEndpoint(
        path="affected-people/refugees-persons-of-concern",
        title="refugees and persons of concern",
        value="population",
        unit="people",
        place="asylum",
        dimensions=("origin_location_code", "population_group", "gender", "age_range"),
        details=("origin_location_name", "min_age", "max_age"),
        params={
            "location": "asylum_location_code",
            "origin": "origin_location_code",
            "population_group": "population_group",
            "gender": "gender",
            "age_range": "age_range",
        },
    ),
    "food-security": HapiEndpoint(
        path="food-security-nutrition-poverty/food-security",
        title="food security (IPC)",
        value="population_in_phase",
        unit="people",
        place="admin",
        dimensions=("ipc_phase", "ipc_type"),
        details=("population_fraction_in_phase",),
        params={**_ADMIN, "ipc_phase": "ipc_phase", "ipc_type": "ipc_type"},
    ),
    "operational-presence": HapiEndpoint(
        path="coordination-context/operational-presence",
        title="operational presence (who does what where)",
        value=None,
        unit=None,
        place="admin",
        dimensions=("org_acronym", "org_name", "sector_code"),
        details=("org_type_code", "org_type_description", "sector_name"),
        params={**_ADMIN, "sector_code": "sector_code"},
    ),
}
"""The endpoints this connector reads, by the ``endpoint`` a source's config names."""

VOCABULARY: Final[Mapping[str, str]] = {
    "location": "a country's ISO 3166-1 alpha-3 code (AFG) or spine id (country:AFG): the "
    "country whose rows are read (for refugees, the country of asylum); one or several",
    "admin_level": "0 (the country's own rows), 1 (first-level divisions) or 2 "
    "(second-level divisions)",
    "admin1_code": "a first-level division's p-code from the Common Operational Datasets, "
    "as rows give it (AF01)",
    "admin2_code": "a second-level division's p-code, as rows give it (AF0101)",
    "gender": "f (female), m (male), x (non-binary), u (unspecified), o (other) or all "
    "(not disaggregated)",
    "age_range": "an age band as rows give it (0-4, 80+), or all (not disaggregated)",
    "sector_code": "a humanitarian sector's code as rows give it (Intersectoral, FSC, PRO)",
    "population_status": "INN (in need), TGT (targeted), AFF (affected), REA (reached) or "
    "all (the whole population)",
    "category": "a population category of the needs overview as rows give it, or total for "
    "the rows without one",
    "population_group": "a UNHCR population group (REF refugees, ASY asylum-seekers, OIP, "
    "IOC, STA stateless, OOC, HST, RST, NAT) or all",
    "origin": "the country of origin's ISO 3166-1 alpha-3 code (SDN)",
    "ipc_phase": "an IPC phase: 1 to 5, 3+ (phase 3 or worse) or all",
    "ipc_type": "current, first projection or second projection",
}
"""Every filter key a HAPI source may declare beyond ``unit`` and ``period``."""

# HAPI compares codes with SQL ILIKE, where "%" and "_" are wildcards: a value is only
# the characters its codes are made of, so "A_G" cannot stand for every such country.
_COUNTRY: Final = re.compile(r"(?:country:)?([A-Za-z]{3})")
_SHAPES: Final[Mapping[str, re.Pattern[str]]] = {
    "location": _COUNTRY,
    "origin": _COUNTRY,
    "admin_level": re.compile(r"[012]"),
    "admin1_code": re.compile(r"[A-Za-z0-9-]{2,30}"),
    "admin2_code": re.compile(r"[A-Za-z0-9-]{2,30}"),
    "gender": re.compile(r"[A-Za-z]{1,3}"),
    "age_range": re.compile(r"all|\d{1,3}(?:-\d{1,3}|\+)"),
    "sector_code": re.compile(r"[A-Za-z][A-Za-z0-9-]{0,31}"),
    "population_status": re.compile(r"[A-Za-z]{2,3}"),
    "population_group": re.compile(r"[A-Za-z]{2,3}"),
    "ipc_phase": re.compile(r"[1-5]\+?|all"),
    "ipc_type": re.compile(r"[a-z ]{4,20}"),
    "category": re.compile(r"[^\x00-\x1f\x7f]{1,128}"),
}
_COUNTRY_KEYS: Final = frozenset({"location", "origin"})


def checked(key: str, value: str) -> str:
    """The value of filter ``key`` as it is sent (a country code upper-cased, without a
    ``country:`` prefix).

    Raises:
        SourceFetchError: ``refused_filter`` for a value that cannot be one of the key's
            codes, saying what the key takes.
    """
    shape = _SHAPES.get(key)
    text = value.strip()
    found = shape.fullmatch(text) if shape is not None else None
    if found is None:
        raise SourceFetchError(
            "refused_filter",
            f"{key} {value[:60]!r} is not a value {_WHAT} takes: {key} takes "
            f"{VOCABULARY.get(key, 'a code as rows give it')}",
            key=key,
        )
    return found[1].upper() if key in _COUNTRY_KEYS else text
