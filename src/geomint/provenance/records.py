"""The records a figure or a layer carries: where it came from and what minted it.

Every record is a frozen pydantic model that refuses unknown fields and round-trips
through JSON unchanged (``Model.model_validate_json(record.model_dump_json()) ==
record``), because the state stores them inside events. Types are strict: ``"3"`` is
not a version, ``True`` is not a count, a float that is not finite is not a value, and
a timestamp without a time zone is refused rather than guessed. Lists are accepted
where tuples are declared and kept as tuples, and ISO 8601 text where a timestamp is,
so a record reads the same whether it arrives as JSON or as data parsed from it.

Ids:
    * A :class:`Value` is ``v<n>`` and a :class:`Layer` is ``l<n>``, numbered from 1 per
      chat by :class:`~geomint.provenance.Ledger`; neither is ever reissued. Layers have
      their own prefix so that an id says what it names: a conflict or a figure that
      cites ``l2`` is told it named a layer, not a value.
    * An :class:`EntryVersion` names the entry an input or a layer is stored as
      (``places-1``, ``byod-0``) and which version of it.
"""

from __future__ import annotations

import hashlib
import re
from datetime import datetime
from typing import Annotated, Final, Literal, get_args

from pydantic import (
    AfterValidator,
    AwareDatetime,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    StringConstraints,
)

from geomint.provenance import merge
from geomint.provenance._ids import ENTRY_ID, LAYER_ID, VALUE_ID

__all__ = [
    "EVIDENCE_TYPES",
    "LICENCE_NOT_STATED",
    "PERIOD_NOT_STATED",
    "EntryVersion",
    "Evidence",
    "Layer",
    "MintedRecord",
    "Provenance",
    "Value",
    "hash_code",
]

Evidence = Literal["observed", "modelled", "derived", "user-supplied", "model-typed"]
"""How a source knows what it says.

``observed``: measured or counted (a census, a sensor, a survey). ``modelled``: estimated
by a model (gridded population, a forecast). ``derived``: computed by the publisher from
other data (an index, a classification). ``user-supplied``: the person brought it.
``model-typed``: the language model wrote it itself (a coordinate from memory), so what
rests on it is only as good as the model's recall.
"""

EVIDENCE_TYPES: Final[tuple[str, ...]] = get_args(Evidence)

PERIOD_NOT_STATED: Final = "not stated"
"""The period of a figure whose source states none: said on the card, never guessed."""

LICENCE_NOT_STATED: Final = "not stated"
"""The licence of a source whose publisher states none: a licence the display lists like any
other, so a figure resting on it says so instead of dropping it."""

# The widest integer a browser reads back exactly: a figure is shown by JavaScript, and a
# larger one would be displayed with digits it does not have.
_SAFE_INT: Final = 2**53 - 1
_MIXED: Final = re.compile(r"\s*mixed\b", re.IGNORECASE)
_URL: Final = re.compile(r"https?://\S+")


def _text(max_length: int) -> StringConstraints:
    return StringConstraints(strip_whitespace=True, min_length=1, max_length=max_length)


def _as_tuple(value: object) -> object:
    return tuple(value) if isinstance(value, list) else value


def _matching(pattern: re.Pattern[str], shape: str) -> AfterValidator:
    def check(value: str) -> str:
        if not pattern.fullmatch(value):
            raise ValueError(f"{shape}; got {value!r}")
        return value

    return AfterValidator(check)


def _one_licence(value: str) -> str:
    if _MIXED.match(value):
        raise ValueError(
            f"{value!r} is not one source's licence; a thing derived from several sources "
            "carries each of them, and its `licences` lists every licence"
        )
    return value


def _timestamp(value: object) -> object:
    # ISO 8601 text is read here rather than by pydantic's lax mode, which would also take
    # a bare number (or digits) as Unix time. Reading it here keeps the record valid when
    # an enclosing model's own validators hand it on as Python data, not JSON.
    if isinstance(value, str):
        try:
            return datetime.fromisoformat(value)
        except ValueError:
            raise ValueError(
                "a timestamp is ISO 8601 text with a time zone, such as "
                f"'2026-01-05T09:30:00Z'; got {value!r}"
            ) from None
    return value


def _no_int(value: object) -> object:
    # pydantic's float takes an int even in strict mode; a figure's int must stay exact.
    if isinstance(value, int) and not isinstance(value, bool):
        raise ValueError(
            f"{value} is an integer too large to show exactly; a figure keeps "
            "its integers whole, so mint a float on purpose if one is meant"
        )
    return value


def _url(value: str) -> str:
    if not _URL.fullmatch(value):
        raise ValueError(f"url must be an http or https link a person can follow; got {value!r}")
    return value


def _bbox(value: tuple[float, float, float, float]) -> tuple[float, float, float, float]:
    west, south, east, north = value
    if not (-180 <= west <= 180 and -180 <= east <= 180):
        raise ValueError(f"bbox longitudes must lie in -180..180; got {value!r}")
    if not -90 <= south <= north <= 90:
        raise ValueError(
            f"bbox is (west, south, east, north) with -90 <= south <= north <= 90; got {value!r}"
        )
    return value


Label = Annotated[str, _text(200)]
Timestamp = Annotated[AwareDatetime, BeforeValidator(_timestamp)]
Finite = Annotated[float, Field(allow_inf_nan=False)]
SafeInt = Annotated[int, Field(ge=-_SAFE_INT, le=_SAFE_INT)]
Scalar = bool | SafeInt | Annotated[Finite, BeforeValidator(_no_int)] | Annotated[str, _text(200)]
Sha256 = Annotated[
    str, _matching(re.compile(r"[0-9a-f]{64}"), "code_hash is a sha256 digest: 64 lowercase hex")
]


def hash_code(code: str) -> str:
    """Return the sha256 hex digest of the code that computed a record.

    Example:
        >>> hash_code("return 1")[:12]
        '486d9affb60d'
    """
    return hashlib.sha256(code.encode("utf-8")).hexdigest()


class _Record(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, strict=True)


class Provenance(_Record):
    """One source a figure or a layer rests on, as code read it off the source.

    Attributes:
        source_id: The source's id in the registry or provider (``"osm-overpass"``).
        title: The dataset's title as its publisher gives it.
        publisher: Who publishes it.
        licence: The licence of this one source (``"ODbL-1.0"``), or
            :data:`LICENCE_NOT_STATED`. Never a summary of several: text starting
            with "mixed" is refused.
        url: Where a person can read the source, when it has such a page.
        retrieved_at: When it was fetched; must carry a time zone.
        evidence: How the source knows what it says (:data:`Evidence`).
        period: The time what was read refers to, as the source states it (``"2020"``,
            ``"1950/2023"``, ``"2024-01-01"``), or :data:`PERIOD_NOT_STATED` when the
            source states none (GeoNames populations). None on records written before
            periods were kept, and for sources that are not about a time (a boundary).
        recipe: For ``derived`` evidence that geomint computed itself (a grid from the
            bundled points), how it was computed, in words; None otherwise.
    """

    source_id: Annotated[
        str,
        _text(200),
        _matching(re.compile(r"\S+"), "a source_id has no spaces, e.g. 'osm-overpass'"),
    ]
    title: Annotated[str, _text(500)]
    publisher: Annotated[str, _text(200)]
    licence: Annotated[str, _text(200), AfterValidator(_one_licence)]
    url: Annotated[str, _text(2_000), AfterValidator(_url)] | None = None
    retrieved_at: Timestamp
    evidence: Evidence
    # Left out when None, so a record stored before periods were kept reads back and is
    # written again byte for byte.
    period: Annotated[str, _text(100)] | None = Field(default=None, exclude_if=lambda v: v is None)
    # How a derived source was computed from its inputs; likewise left out when None.
    recipe: Annotated[str, _text(1_000)] | None = Field(
        default=None, exclude_if=lambda v: v is None
    )


class EntryVersion(_Record):
    """One version of one entry of the chat: an input something was computed from.

    Attributes:
        entry_id: The entry (``"places-1"``, ``"byod-0"``).
        version: Its version, from 1.
    """

    entry_id: Annotated[
        str, _matching(ENTRY_ID, "an entry id is a kind and a number, e.g. 'places-1'")
    ]
    version: Annotated[int, Field(ge=1)]


def _distinct_sources(sources: tuple[Provenance, ...]) -> tuple[Provenance, ...]:
    return merge.union(sources)


def _distinct_inputs(inputs: tuple[EntryVersion, ...]) -> tuple[EntryVersion, ...]:
    return merge.union_inputs(inputs)


# A record carries a union: repeats given by its writer are dropped, first position kept.
Sources = Annotated[
    tuple[Provenance, ...], BeforeValidator(_as_tuple), AfterValidator(_distinct_sources)
]
Inputs = Annotated[
    tuple[EntryVersion, ...], BeforeValidator(_as_tuple), AfterValidator(_distinct_inputs)
]


class _Minted(_Record):
    """What a value and a layer share: a label, provenance, and what minted them."""

    # Declared here so that stored JSON opens with them; each subclass narrows both.
    kind: str
    id: str
    label: Label
    sources: Sources = ()
    minted_by: Annotated[str, _text(100)] | None = None
    code_hash: Sha256 | None = None
    inputs: Inputs = ()
    minted_at: Timestamp

    @property
    def licences(self) -> tuple[str, ...]:
        """The distinct licences of the sources, in first-seen order."""
        return merge.licences(self.sources)

    @property
    def publishers(self) -> tuple[str, ...]:
        """The distinct publishers of the sources, in first-seen order."""
        return merge.publishers(self.sources)

    @property
    def evidence_types(self) -> tuple[Evidence, ...]:
        """The distinct evidence types of the sources, in first-seen order."""
        return merge.evidence_types(self.sources)


class Value(_Minted):
    """A figure a person reads, minted by code.

    Attributes:
        kind: Always ``"value"``: tells a value from a layer in stored JSON.
        id: ``v<n>``, numbered per chat, never reissued.
        label: What the figure is, in a few words ("children within 800 m").
        value: The figure: a bool, an integer a browser can show exactly, a finite
            float, or a short text (a category).
        unit: Its unit (``"m"``, ``"people"``), or None for a plain count.
        period: The time it describes (``"2020"``, ``"2023-01/2023-06"``), when known.
        sources: The union of the provenance of everything it was computed from; empty
            when code knew of no source, which the display shows as unsourced.
        minted_by: The id of the analysis or operation that minted it.
        code_hash: sha256 of the code that computed it (:func:`hash_code`).
        inputs: The entry versions it was computed from.
        minted_at: When code minted it.
    """

    kind: Literal["value"] = "value"
    id: Annotated[str, _matching(VALUE_ID, "a value id is v and a number from 1, e.g. 'v3'")]
    value: Scalar
    unit: Annotated[str, _text(40)] | None = None
    period: Annotated[str, _text(100)] | None = None

    @property
    def is_number(self) -> bool:
        """True when the figure is an int or a float (a bool is not a number here)."""
        return not isinstance(self.value, bool | str)


class Layer(_Minted):
    """A layer minted by code: geometry a person sees on the map, stored as an entry.

    Attributes:
        kind: Always ``"layer"``: tells a layer from a value in stored JSON.
        id: ``l<n>``, numbered per chat, never reissued. Writing the same entry again is
            a new layer record with a new id and a new entry version.
        label: What the layer shows ("schools beyond 800 m of a stop").
        entry: The entry and version its features are stored as.
        feature_count: How many features it has.
        bbox: ``(west, south, east, north)`` in degrees, or None when it has no geometry.
            ``west > east`` crosses the antimeridian.
        sources: The union of the provenance of everything it was computed from.
        minted_by: The id of the analysis or operation that minted it.
        code_hash: sha256 of the code that computed it (:func:`hash_code`).
        inputs: The entry versions it was computed from.
        minted_at: When code minted it.
    """

    kind: Literal["layer"] = "layer"
    id: Annotated[str, _matching(LAYER_ID, "a layer id is l and a number from 1, e.g. 'l2'")]
    entry: EntryVersion
    feature_count: Annotated[int, Field(ge=0)]
    bbox: (
        Annotated[
            tuple[Finite, Finite, Finite, Finite],
            BeforeValidator(_as_tuple),
            AfterValidator(_bbox),
        ]
        | None
    ) = None


MintedRecord = Annotated[Value | Layer, Field(discriminator="kind")]
"""A value or a layer, told apart by ``kind``: ``TypeAdapter(MintedRecord)`` reads either."""
