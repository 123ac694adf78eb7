"""The ledger numbers per chat, never reissues, replays deterministically, and explains misses."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from hypothesis import given
from hypothesis import strategies as st

from geomint.errors import ModelFacingError, UsageError
from geomint.provenance import (
    EntryVersion,
    Layer,
    Ledger,
    Provenance,
    ReusedIdError,
    UnknownLayerError,
    UnknownValueError,
    Value,
)

from .conftest import AT

LAYERS_1 = EntryVersion(entry_id="layers-1", version=1)


def _mint(ledger: Ledger, n: int = 1) -> Ledger:
    for _ in range(n):
        _, ledger = ledger.mint_value(label="count", value=1, minted_at=AT)
    return ledger


def test_values_are_numbered_from_v1_in_order() -> None:
    ledger = Ledger()
    ids = []
    for n in range(3):
        value, ledger = ledger.mint_value(label=f"figure {n}", value=n, minted_at=AT)
        ids.append(value.id)
    assert ids == ["v1", "v2", "v3"]
    assert [v.id for v in ledger.values] == ids
    assert ledger.next_value_id == "v4"


def test_layers_have_their_own_counter() -> None:
    value, ledger = Ledger().mint_value(label="stops", value=3, minted_at=AT)
    layer, ledger = ledger.mint_layer(label="stops", entry=LAYERS_1, feature_count=3)
    second, ledger = ledger.mint_value(label="schools", value=5, minted_at=AT)
    assert (value.id, layer.id, second.id) == ("v1", "l1", "v2")
    assert ledger.next_layer_id == "l2"
    assert ledger.layer("l1") == layer


def test_minting_leaves_the_earlier_ledger_unchanged() -> None:
    before = _mint(Ledger(), 2)
    value, after = before.mint_value(label="new", value=9, minted_at=AT)
    assert value.id == "v3"
    assert [v.id for v in before.values] == ["v1", "v2"]
    assert before.next_value_id == "v3"
    assert "v3" in after
    assert "v3" not in before


def test_minting_stamps_an_aware_time_when_none_is_given() -> None:
    start = datetime.now(UTC)
    value, _ = Ledger().mint_value(label="stops", value=3)
    assert start <= value.minted_at <= datetime.now(UTC)


def test_a_value_derived_from_others_carries_the_union_of_their_provenance(
    ledger: Ledger, osm: Provenance, worldpop: Provenance
) -> None:
    extra = EntryVersion(entry_id="byod-0", version=1)
    share, _ = ledger.mint_value(
        label="share of people beyond 800 m", value=0.2, sources=[worldpop],
        derived_from=["v2", "v3", "l1"], inputs=[extra], minted_at=AT,
    )  # fmt: skip
    assert share.sources == (worldpop, osm)
    assert share.licences == ("CC-BY-4.0", "ODbL-1.0")
    assert share.inputs == (extra, EntryVersion(entry_id="places-1", version=1))


def test_a_layer_derived_from_a_value_carries_its_provenance(
    ledger: Ledger, osm: Provenance
) -> None:
    layer, _ = ledger.mint_layer(
        label="stops again", entry=LAYERS_1, feature_count=3, derived_from=["v1"]
    )
    assert layer.id == "l2"
    assert layer.sources == (osm,)


def test_deriving_from_an_id_never_minted_is_refused(ledger: Ledger) -> None:
    with pytest.raises(UnknownValueError, match="v9 was never minted in this chat"):
        ledger.mint_value(label="x", value=1, derived_from=["v9"])
    assert ledger.next_value_id == "v4"


def test_from_records_continues_the_numbering(ledger: Ledger) -> None:
    rebuilt = Ledger.from_records(ledger.values, ledger.layers)
    assert rebuilt == ledger
    value, rebuilt = rebuilt.mint_value(label="next", value=1, minted_at=AT)
    layer, _ = rebuilt.mint_layer(label="next", entry=LAYERS_1, feature_count=0, minted_at=AT)
    assert (value.id, layer.id) == ("v4", "l2")


def test_from_records_accepts_any_order(ledger: Ledger) -> None:
    assert Ledger.from_records(reversed(ledger.values), ledger.layers) == ledger


def test_apply_replays_minting_deterministically(ledger: Ledger) -> None:
    replayed = Ledger()
    for record in (*ledger.values, *ledger.layers):
        replayed = replayed.apply(record)
    assert replayed == ledger
    assert repr(replayed) == "Ledger(values=v1..v3, layers=l1, next=v4/l2, withdrawn=0)"


def test_apply_refuses_a_reused_id(ledger: Ledger) -> None:
    reused = ledger.value("v2").model_copy(update={"label": "another figure"})
    with pytest.raises(ReusedIdError) as caught:
        ledger.apply(reused)
    assert str(caught.value) == (
        "cannot apply v2: v2 was already minted in this chat ('people (modelled)'); ids are "
        "never reissued, so the events are repeated or out of order (the next id is v4)"
    )
    assert isinstance(caught.value, UsageError)


def test_apply_refuses_an_id_the_counter_has_passed() -> None:
    ledger = Ledger().apply(Value(id="v5", label="x", value=1, minted_at=AT))
    late = Value(id="v3", label="y", value=2, minted_at=AT)
    with pytest.raises(ReusedIdError, match="v3 comes after v5 was issued"):
        ledger.apply(late)


def test_apply_refuses_a_reused_layer_id(ledger: Ledger) -> None:
    with pytest.raises(ReusedIdError, match="cannot apply l1: l1 was already minted"):
        ledger.apply(ledger.layer("l1"))


def test_a_gap_is_allowed_and_never_filled() -> None:
    ledger = Ledger().apply(Value(id="v4", label="x", value=1, minted_at=AT))
    value, _ = ledger.mint_value(label="y", value=2, minted_at=AT)
    assert value.id == "v5"


def test_from_records_refuses_two_records_with_one_id() -> None:
    a = Value(id="v1", label="a", value=1, minted_at=AT)
    b = Value(id="v1", label="b", value=2, minted_at=AT)
    with pytest.raises(ReusedIdError, match="v1 was already minted in this chat \\('a'\\)"):
        Ledger.from_records([a, b])


def test_a_withdrawn_value_keeps_its_number(ledger: Ledger) -> None:
    withdrawn = ledger.withdraw("v3")
    value, _ = withdrawn.mint_value(label="again", value=1, minted_at=AT)
    assert value.id == "v4"
    assert [v.id for v in withdrawn.values] == ["v1", "v2"]
    assert "v3" not in withdrawn
    with pytest.raises(ReusedIdError, match="v3 was already minted"):
        withdrawn.apply(ledger.value("v3"))


def test_a_withdrawn_value_is_explained(ledger: Ledger) -> None:
    with pytest.raises(UnknownValueError) as caught:
        ledger.withdraw("v2").value("v2")
    assert str(caught.value) == (
        "v2 was withdrawn in this chat and can no longer be cited; the values that can be "
        "cited are v1, v3"
    )


def test_from_records_replays_withdrawals(ledger: Ledger) -> None:
    withdrawn = ledger.withdraw("v1").withdraw("l1")
    rebuilt = Ledger.from_records(ledger.values, ledger.layers, withdrawn=withdrawn.withdrawn)
    assert rebuilt == withdrawn
    assert rebuilt.layers == ()


@pytest.mark.parametrize(
    ("given", "message"),
    [
        ("v7", "v7 was never minted in this chat; the values minted so far are v1..v3"),
        ("l1", "l1 is a layer, not a value; the values minted so far are v1..v3"),
        ("V2", "'V2' is not a value id (value ids look like v3); did you mean v2?; the values "
               "minted so far are v1..v3"),
        ("value 3", "'value 3' is not a value id (value ids look like v3); did you mean v3?; "
                    "the values minted so far are v1..v3"),
        ("v 9", "'v 9' is not a value id (value ids look like v3); the values minted so far "
                "are v1..v3"),
        ("people", "'people' is not a value id (value ids look like v3); the values minted "
                   "so far are v1..v3"),
    ],
)  # fmt: skip
def test_unknown_value_messages(ledger: Ledger, given: str, message: str) -> None:
    with pytest.raises(UnknownValueError) as caught:
        ledger.value(given)
    assert str(caught.value) == message
    assert caught.value.value_id == given
    assert caught.value.known == ("v1", "v2", "v3")
    assert isinstance(caught.value, ModelFacingError)


def test_unknown_layer_messages(ledger: Ledger) -> None:
    with pytest.raises(UnknownLayerError) as caught:
        ledger.layer("v1")
    assert str(caught.value) == "v1 is a value, not a layer; the layers minted so far are l1"
    with pytest.raises(UnknownLayerError, match=r"^l4 was never minted in this chat; the layers"):
        ledger.layer("l4")


def test_an_empty_ledger_says_how_to_mint() -> None:
    with pytest.raises(UnknownValueError) as caught:
        Ledger().value("v1")
    assert str(caught.value) == (
        "v1 was never minted in this chat; no values have been minted in this chat yet; "
        "mint one with mint.value(...)"
    )


def test_a_long_ledger_lists_ids_as_ranges() -> None:
    ledger = _mint(Ledger(), 500)
    with pytest.raises(UnknownValueError) as caught:
        ledger.value("v501")
    assert str(caught.value).endswith("the values minted so far are v1..v500")


def test_a_ragged_ledger_lists_its_ends_only() -> None:
    ledger = _mint(Ledger(), 40)
    for n in range(2, 41, 2):
        ledger = ledger.withdraw(f"v{n}")
    with pytest.raises(UnknownValueError) as caught:
        ledger.value("v2")
    assert str(caught.value).endswith(
        "the values that can be cited are v1, v3, …, v35, v37, v39 (20 in all)"
    )


def test_record_reads_values_and_layers(ledger: Ledger) -> None:
    assert isinstance(ledger.record("v1"), Value)
    assert isinstance(ledger.record("l1"), Layer)
    with pytest.raises(UnknownLayerError):
        ledger.record("l2")


def test_a_non_text_id_is_explained_not_crashed_on(ledger: Ledger) -> None:
    with pytest.raises(UnknownValueError, match=r"^\['v1'\] is not a value id"):
        ledger.value(["v1"])  # type: ignore[arg-type]


_steps = st.lists(st.sampled_from(["value", "layer", "withdraw"]), max_size=60)


@given(_steps)
def test_any_sequence_of_mints_gives_increasing_ids_never_reused(steps: list[str]) -> None:
    ledger = Ledger()
    minted: list[Value | Layer] = []
    for step in steps:
        if step == "value":
            record: Value | Layer
            record, ledger = ledger.mint_value(label="x", value=1, minted_at=AT)
            minted.append(record)
        elif step == "layer":
            record, ledger = ledger.mint_layer(
                label="x", entry=LAYERS_1, feature_count=0, minted_at=AT
            )
            minted.append(record)
        elif ledger.values:
            ledger = ledger.withdraw(ledger.values[0].id)
    for prefix in "vl":
        numbers = [int(r.id[1:]) for r in minted if r.id[0] == prefix]
        assert numbers == list(range(1, len(numbers) + 1))
    assert len({r.id for r in minted}) == len(minted)
    everything = Ledger.from_records(
        [r for r in minted if isinstance(r, Value)],
        [r for r in minted if isinstance(r, Layer)],
        withdrawn=ledger.withdrawn,
    )
    assert everything == ledger
