"""Every record round-trips through JSON, and every malformed field is refused by name."""

from __future__ import annotations

import math
from collections.abc import Callable
from datetime import UTC, datetime, timedelta, timezone
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from pydantic import BaseModel, TypeAdapter, ValidationError

from geomint.provenance import (
    EVIDENCE_TYPES,
    LICENCE_NOT_STATED,
    Conflict,
    EntryVersion,
    Layer,
    MintedRecord,
    Provenance,
    Value,
    hash_code,
)

from .conftest import AT

SOURCE: dict[str, Any] = {
    "source_id": "osm-overpass",
    "title": "OpenStreetMap",
    "publisher": "OpenStreetMap Foundation",
    "licence": "ODbL-1.0",
    "retrieved_at": AT,
    "evidence": "observed",
}
ENTRY: dict[str, Any] = {"entry_id": "places-1", "version": 2}
VALUE: dict[str, Any] = {"id": "v3", "label": "bus stops", "value": 412, "minted_at": AT}
LAYER: dict[str, Any] = {
    "id": "l2",
    "label": "stops",
    "entry": EntryVersion(entry_id="layers-1", version=1),
    "feature_count": 412,
    "minted_at": AT,
}


def _value(**fields: Any) -> Value:
    return Value(**{**VALUE, **fields})


def _full_value() -> Value:
    return Value(
        id="v12",
        label="children within 800 m",
        value=2210.5,
        unit="people",
        period="2020",
        sources=(Provenance(**SOURCE),),
        minted_by="analysis-4",
        code_hash=hash_code("return 1"),
        inputs=(EntryVersion(**ENTRY),),
        minted_at=datetime(2026, 1, 5, 11, 30, tzinfo=timezone(timedelta(hours=2))),
    )


RECORDS: dict[str, Callable[[], BaseModel]] = {
    "provenance": lambda: Provenance(**SOURCE, url="https://www.openstreetmap.org/copyright"),
    "provenance without url": lambda: Provenance(**SOURCE),
    "entry version": lambda: EntryVersion(**ENTRY),
    "value, every field": _full_value,
    "value, bare": _value,
    "value, bool": lambda: _value(value=True),
    "value, text": lambda: _value(value="residential"),
    "value, float that looks whole": lambda: _value(value=3.0),
    "layer": lambda: Layer(
        **LAYER, bbox=(170.5, -10.0, -170.5, 10.0), sources=[Provenance(**SOURCE)]
    ),
    "layer without bbox": lambda: Layer(**LAYER),
    "conflict": lambda: Conflict(
        a=_full_value(), b=_value(value=2000, unit="people"), reason="different periods"
    ),
}


@pytest.mark.parametrize("build", RECORDS.values(), ids=RECORDS.keys())
def test_json_round_trip(build: Callable[[], BaseModel]) -> None:
    record = build()
    text = record.model_dump_json()
    again = type(record).model_validate_json(text)
    assert again == record
    assert again.model_dump_json() == text


@pytest.mark.parametrize("build", RECORDS.values(), ids=RECORDS.keys())
def test_python_round_trip_through_json_data(build: Callable[[], BaseModel]) -> None:
    # The state may hold records as parsed JSON before validating them (an event union).
    record = build()
    assert type(record).model_validate(record.model_dump(mode="json")) == record


def test_a_float_stays_a_float_and_an_int_an_int() -> None:
    assert type(Value.model_validate_json(_value(value=3.0).model_dump_json()).value) is float
    assert type(Value.model_validate_json(_value(value=3).model_dump_json()).value) is int
    assert Value.model_validate_json(_value(value=True).model_dump_json()).value is True


def test_minted_record_reads_either_kind_by_its_tag() -> None:
    adapter: TypeAdapter[Value | Layer] = TypeAdapter(MintedRecord)
    value, layer = _value(), Layer(**LAYER)
    assert adapter.validate_json(value.model_dump_json()) == value
    assert adapter.validate_json(layer.model_dump_json()) == layer
    assert '"kind":"value"' in value.model_dump_json()


REFUSALS: list[tuple[str, Callable[[], object], str]] = [
    ("naive retrieval time",
     lambda: Provenance(**{**SOURCE, "retrieved_at": datetime(2026, 1, 5)}),
     "Input should have timezone info"),
    ("naive time as text",
     lambda: Provenance(**{**SOURCE, "retrieved_at": "2026-01-05T09:30:00"}),
     "Input should have timezone info"),
    ("unix time as text",
     lambda: Provenance(**{**SOURCE, "retrieved_at": "1767605400"}),
     "a timestamp is ISO 8601 text with a time zone, such as '2026-01-05T09:30:00Z'"),
    ("unix time as a number",
     lambda: Provenance(**{**SOURCE, "retrieved_at": 1767605400}),
     "Input should be a valid datetime"),
    ("unknown evidence type",
     lambda: Provenance(**{**SOURCE, "evidence": "estimated"}),
     "Input should be 'observed', 'modelled', 'derived', 'user-supplied' or 'model-typed'"),
    ("a mixed licence written as one text",
     lambda: Provenance(**{**SOURCE, "licence": "mixed (WorldPop, ODbL, Not stated)"}),
     "is not one source's licence; a thing derived from several sources carries each"),
    ("a link that is not http",
     lambda: Provenance(**SOURCE, url="javascript:alert(1)"),
     "url must be an http or https link a person can follow; got 'javascript:alert(1)'"),
    ("an empty source id",
     lambda: Provenance(**{**SOURCE, "source_id": "  "}),
     "String should have at least 1 character"),
    ("a source id with a space",
     lambda: Provenance(**{**SOURCE, "source_id": "osm overpass"}),
     "a source_id has no spaces, e.g. 'osm-overpass'; got 'osm overpass'"),
    ("an extra field on a source",
     lambda: Provenance(**SOURCE, confidence="high"),
     "confidence\n  Extra inputs are not permitted"),
    ("an entry id with capitals",
     lambda: EntryVersion(entry_id="Places-1", version=1),
     "an entry id is a kind and a number, e.g. 'places-1'; got 'Places-1'"),
    ("an entry id with a leading zero",
     lambda: EntryVersion(entry_id="places-01", version=1),
     "an entry id is a kind and a number, e.g. 'places-1'; got 'places-01'"),
    ("version 0", lambda: EntryVersion(entry_id="places-1", version=0),
     "Input should be greater than or equal to 1"),
    ("a version as text", lambda: EntryVersion(entry_id="places-1", version="2"),
     "Input should be a valid integer"),
    ("a version as a bool", lambda: EntryVersion(entry_id="places-1", version=True),
     "Input should be a valid integer"),
    ("value id v0", lambda: _value(id="v0"),
     "a value id is v and a number from 1, e.g. 'v3'; got 'v0'"),
    ("value id with a capital", lambda: _value(id="V3"),
     "a value id is v and a number from 1, e.g. 'v3'; got 'V3'"),
    ("value id with a leading zero", lambda: _value(id="v03"),
     "a value id is v and a number from 1, e.g. 'v3'; got 'v03'"),
    ("a layer id on a value", lambda: _value(id="l3"),
     "a value id is v and a number from 1, e.g. 'v3'; got 'l3'"),
    ("a blank label", lambda: _value(label="   "), "String should have at least 1 character"),
    ("a label too long", lambda: _value(label="x" * 201),
     "String should have at most 200 characters"),
    ("NaN", lambda: _value(value=math.nan), "Input should be a finite number"),
    ("infinity", lambda: _value(value=-math.inf), "Input should be a finite number"),
    ("NaN in JSON", lambda: Value.model_validate_json(
        '{"id":"v1","label":"x","value":NaN,"minted_at":"2026-01-05T09:30:00Z"}'),
     "Input should be a finite number"),
    ("an integer a browser would round", lambda: _value(value=2**53),
     "Input should be less than or equal to 9007199254740991"),
    ("no value", lambda: _value(value=None), "Input should be a valid boolean"),
    ("a list as a value", lambda: _value(value=[1, 2]), "Input should be a valid integer"),
    ("a short code hash", lambda: _value(code_hash="abc123"),
     "code_hash is a sha256 digest: 64 lowercase hex; got 'abc123'"),
    ("a naive mint time", lambda: _value(minted_at=datetime(2026, 1, 5)),
     "Input should have timezone info"),
    ("a value tagged as a layer", lambda: _value(kind="layer"), "Input should be 'value'"),
    ("an extra field on a value", lambda: _value(note="typed by the model"),
     "note\n  Extra inputs are not permitted"),
    ("a source given as a dict with an extra key",
     lambda: _value(sources=[{**SOURCE, "licence_note": "mixed"}]),
     "Extra inputs are not permitted"),
    ("layer id in the entry style", lambda: Layer(**{**LAYER, "id": "layer-1"}),
     "a layer id is l and a number from 1, e.g. 'l2'; got 'layer-1'"),
    ("a negative feature count", lambda: Layer(**{**LAYER, "feature_count": -1}),
     "Input should be greater than or equal to 0"),
    ("a bbox upside down", lambda: Layer(**LAYER, bbox=(0.0, 10.0, 1.0, -10.0)),
     "bbox is (west, south, east, north) with -90 <= south <= north <= 90"),
    ("a bbox in metres", lambda: Layer(**LAYER, bbox=(500000.0, 0.0, 510000.0, 1.0)),
     "bbox longitudes must lie in -180..180"),
    ("a bbox with NaN", lambda: Layer(**LAYER, bbox=(0.0, math.nan, 1.0, 1.0)),
     "Input should be a finite number"),
]  # fmt: skip


@pytest.mark.parametrize(
    ("build", "fragment"), [(b, f) for _, b, f in REFUSALS], ids=[n for n, _, _ in REFUSALS]
)
def test_refusals_name_the_problem(build: Callable[[], object], fragment: str) -> None:
    with pytest.raises(ValidationError) as caught:
        build()
    assert fragment in str(caught.value)


def test_records_are_frozen() -> None:
    value = _value()
    with pytest.raises(ValidationError, match="Instance is frozen"):
        value.label = "something else"
    assert value.label == "bus stops"


def test_text_is_trimmed_and_lists_become_tuples() -> None:
    value = _value(label="  bus stops \n", sources=[Provenance(**SOURCE)])
    assert value.label == "bus stops"
    assert isinstance(value.sources, tuple)


def test_a_record_carries_each_source_once(osm: Provenance, worldpop: Provenance) -> None:
    value = _value(sources=[osm, worldpop, osm], inputs=[EntryVersion(**ENTRY)] * 2)
    assert value.sources == (osm, worldpop)
    assert value.inputs == (EntryVersion(**ENTRY),)


def test_licences_publishers_and_evidence_list_each_once_in_order(
    osm: Provenance, worldpop: Provenance
) -> None:
    unstated = worldpop.model_copy(update={"source_id": "hdx-roads", "licence": LICENCE_NOT_STATED})
    value = _value(sources=[worldpop, osm, unstated])
    assert value.licences == ("CC-BY-4.0", "ODbL-1.0", "not stated")
    assert value.publishers == ("WorldPop", "OpenStreetMap Foundation")
    assert value.evidence_types == ("modelled", "observed")


def test_is_number_excludes_bools_and_text() -> None:
    assert [_value(value=v).is_number for v in (3, 2.5, True, "3")] == [True, True, False, False]


def test_evidence_types_are_the_designs_and_the_models_own() -> None:
    # The four of the design, and what the model typed itself (a coordinate from memory).
    assert EVIDENCE_TYPES == ("observed", "modelled", "derived", "user-supplied", "model-typed")


def test_hash_code_is_the_sha256_of_the_text() -> None:
    digest = hash_code("return len(places_by_entry)")
    assert len(digest) == 64
    assert digest != hash_code("return len(places_by_entry) ")
    assert _value(code_hash=digest).code_hash == digest


_texts = st.text(min_size=1, max_size=200).filter(lambda s: s.strip() == s)
_offsets = st.integers(-14 * 60, 14 * 60).map(lambda m: timezone(timedelta(minutes=m)))
_times = st.datetimes(
    min_value=datetime(1900, 1, 1), max_value=datetime(2200, 1, 1), timezones=_offsets
)
_scalars = st.one_of(
    st.booleans(),
    st.integers(-(2**53) + 1, 2**53 - 1),
    st.floats(allow_nan=False, allow_infinity=False),
    _texts,
)


@given(
    value=_scalars,
    label=_texts,
    unit=st.none() | _texts.filter(lambda s: len(s) <= 40),
    minted_at=_times,
    evidence=st.sampled_from(EVIDENCE_TYPES),
)
def test_any_valid_value_round_trips(
    value: bool | int | float | str, label: str, unit: str | None, minted_at: datetime,
    evidence: str,
) -> None:  # fmt: skip
    source = Provenance(**{**SOURCE, "evidence": evidence, "retrieved_at": minted_at})
    record = Value(
        id="v1", label=label, value=value, unit=unit, sources=[source], minted_at=minted_at
    )
    again = Value.model_validate_json(record.model_dump_json())
    assert again == record
    assert type(again.value) is type(record.value)
    assert again.minted_at.utcoffset() == minted_at.utcoffset()


def test_the_same_instant_in_two_zones_is_one_retrieval() -> None:
    utc = Provenance(**{**SOURCE, "retrieved_at": datetime(2026, 1, 5, 10, tzinfo=UTC)})
    cest = Provenance(
        **{**SOURCE, "retrieved_at": datetime(2026, 1, 5, 12, tzinfo=timezone(timedelta(hours=2)))}
    )
    assert utc == cest
    assert _value(sources=[utc, cest]).sources == (utc,)
