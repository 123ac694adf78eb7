"""A conflict reads two minted values off the ledger; code computes the ratio, never the model."""

from __future__ import annotations

import json

import pytest
from pydantic import ValidationError

from geomint.provenance import (
    Conflict,
    ConflictRefusedError,
    FigureRefusedError,
    Ledger,
    UnknownValueError,
    Value,
    record_conflict,
)

from .conftest import AT


def _ledger(*figures: tuple[object, str | None]) -> Ledger:
    ledger = Ledger()
    for value, unit in figures:
        _, ledger = ledger.mint_value(label="figure", value=value, unit=unit, minted_at=AT)  # type: ignore[arg-type]
    return ledger


def test_ratio_and_difference_are_computed_from_the_ledger(ledger: Ledger) -> None:
    conflict = record_conflict(ledger, "v2", "v3", "the model counts night-time residents")
    assert (conflict.a.id, conflict.b.id) == ("v2", "v3")
    assert conflict.comparable is True
    assert conflict.ratio == 1.2
    assert conflict.difference == 400
    assert conflict.a == ledger.value("v2")
    assert conflict.reason == "the model counts night-time residents"


def test_differing_periods_are_noted_but_still_compared(ledger: Ledger) -> None:
    conflict = record_conflict(ledger, "v2", "v3", "different years")
    assert conflict.notes == ("v2 describes 2020 and v3 describes 2023",)
    assert conflict.ratio is not None


def test_an_exact_integer_difference_and_a_float_ratio() -> None:
    ledger = _ledger((9_007_199_254_740_991, None), (1, None))
    conflict = record_conflict(ledger, "v1", "v2", "one is a typo")
    assert conflict.difference == 9_007_199_254_740_990
    assert isinstance(conflict.difference, int)
    assert conflict.ratio == pytest.approx(9.007199254740991e15)


def test_values_in_different_units_are_flagged_not_compared() -> None:
    ledger = _ledger((12.5, "km"), (12_400, "m"))
    conflict = record_conflict(ledger, "v1", "v2", "two routing engines")
    assert conflict.comparable is False
    assert (conflict.ratio, conflict.difference) == (None, None)
    assert conflict.notes == (
        "v1 is in km and v2 is in m; no ratio or difference is computed across units: mint "
        "both in one unit to compare them",
    )


def test_a_unitless_count_and_a_unit_are_different_units() -> None:
    conflict = record_conflict(_ledger((3, None), (3, "people")), "v1", "v2", "units")
    assert conflict.comparable is False
    assert conflict.notes[0].startswith("v1 has no unit and v2 is in people")


def test_a_zero_divisor_gives_a_difference_but_no_ratio() -> None:
    conflict = record_conflict(_ledger((5, "people"), (0, "people")), "v1", "v2", "missing data")
    assert conflict.comparable is True
    assert (conflict.ratio, conflict.difference) == (None, 5)
    assert conflict.notes == ("v2 is zero, so there is no ratio",)


def test_a_ratio_too_large_for_a_float_is_not_invented() -> None:
    conflict = record_conflict(_ledger((1e308, None), (1e-10, None)), "v1", "v2", "scale")
    assert conflict.ratio is None
    assert conflict.difference == 1e308
    assert conflict.notes == ("the ratio is too large to represent",)


def test_a_difference_too_large_for_a_float_is_not_invented() -> None:
    conflict = record_conflict(_ledger((1.5e308, None), (-1.5e308, None)), "v1", "v2", "scale")
    assert conflict.difference is None
    assert conflict.ratio == -1.0
    assert conflict.notes == ("the difference is too large to represent",)


def test_text_and_bool_values_are_not_numbers() -> None:
    conflict = record_conflict(_ledger(("residential", None), (True, None)), "v1", "v2", "tags")
    assert conflict.comparable is False
    assert conflict.ratio is None
    assert conflict.notes == (
        "v1 is a text ('residential'), not a number",
        "v2 is a yes/no value, not a number",
    )


def test_an_id_never_minted_is_refused_with_the_reason(ledger: Ledger) -> None:
    with pytest.raises(UnknownValueError) as caught:
        record_conflict(ledger, "v2", "v7", "they disagree")
    assert str(caught.value) == (
        "v7 was never minted in this chat; the values minted so far are v1..v3"
    )


def test_a_layer_id_is_refused(ledger: Ledger) -> None:
    with pytest.raises(UnknownValueError, match=r"^l1 is a layer, not a value"):
        record_conflict(ledger, "l1", "v2", "they disagree")


def test_a_typed_number_is_refused(ledger: Ledger) -> None:
    with pytest.raises(FigureRefusedError, match=r"^2400 is a number typed by hand; pass value"):
        record_conflict(ledger, 2400, "v3", "they disagree")


def test_one_value_named_twice_is_refused(ledger: Ledger) -> None:
    with pytest.raises(ConflictRefusedError) as caught:
        record_conflict(ledger, "v2", "v2", "it disagrees with itself")
    assert str(caught.value) == (
        "a conflict names two different values; got v2 twice. Name the other figure it "
        "disagrees with"
    )


@pytest.mark.parametrize("reason", ["", "   ", None])
def test_a_conflict_needs_a_reason(ledger: Ledger, reason: object) -> None:
    with pytest.raises(ConflictRefusedError, match="between v2 and v3 needs a reason: say"):
        record_conflict(ledger, "v2", "v3", reason)


def test_a_reason_has_a_length_limit(ledger: Ledger) -> None:
    with pytest.raises(ConflictRefusedError, match="is 2,001 characters; keep it under 2,000"):
        record_conflict(ledger, "v2", "v3", "x" * 2001)


def test_the_json_carries_what_code_computed(ledger: Ledger) -> None:
    data = json.loads(record_conflict(ledger, "v2", "v3", "why").model_dump_json())
    assert {k: data[k] for k in ("comparable", "ratio", "difference", "notes")} == {
        "comparable": True,
        "ratio": 1.2,
        "difference": 400,
        "notes": ["v2 describes 2020 and v3 describes 2023"],
    }


def test_a_forged_ratio_in_stored_json_is_recomputed(ledger: Ledger) -> None:
    data = json.loads(record_conflict(ledger, "v2", "v3", "why").model_dump_json())
    data.update(ratio=17.0, difference=-1, comparable=False, notes=["typed by hand"])
    read = Conflict.model_validate_json(json.dumps(data))
    assert (read.ratio, read.difference, read.comparable) == (1.2, 400, True)


def test_other_extra_keys_are_still_refused(ledger: Ledger) -> None:
    data = json.loads(record_conflict(ledger, "v2", "v3", "why").model_dump_json())
    data["severity"] = "high"
    with pytest.raises(ValidationError, match="severity\n  Extra inputs are not permitted"):
        Conflict.model_validate_json(json.dumps(data))


def test_a_stored_conflict_naming_one_value_twice_is_refused(ledger: Ledger) -> None:
    value: Value = ledger.value("v2")
    with pytest.raises(ValidationError, match="a conflict names two different values; got v2"):
        Conflict(a=value, b=value, reason="why")
