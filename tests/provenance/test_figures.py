"""Only minted value ids become figures; a number the model typed is refused with the fix."""

from __future__ import annotations

import re
from decimal import Decimal

import pytest

from geomint.errors import ModelFacingError
from geomint.provenance import (
    FigureRefusedError,
    Ledger,
    UnknownValueError,
    check_figure_ids,
    cited_value,
    refuse_typed_number,
)

HOW = "pass value ids such as v3 minted by code; a typed number cannot be shown as a figure"


def test_minted_ids_give_their_values_in_order(ledger: Ledger) -> None:
    values = check_figure_ids(ledger, ["v3", "v1"])
    assert [v.id for v in values] == ["v3", "v1"]
    assert values[0] == ledger.value("v3")


def test_a_single_id_is_read_as_one_figure(ledger: Ledger) -> None:
    assert [v.label for v in check_figure_ids(ledger, "v1")] == ["bus stops"]


def test_a_repeated_id_is_shown_once(ledger: Ledger) -> None:
    assert [v.id for v in check_figure_ids(ledger, ("v2", "v1", "v2"))] == ["v2", "v1"]


@pytest.mark.parametrize(
    "typed",
    [42, 2.5, Decimal("3.2"), "12,400", "12,400 people", "3.2 km", "about 5 million",
     {"value": 3, "label": "stops"}, [3]],
)  # fmt: skip
def test_typed_numbers_are_refused_with_the_fix(ledger: Ledger, typed: object) -> None:
    with pytest.raises(FigureRefusedError) as caught:
        check_figure_ids(ledger, [typed])
    assert HOW in str(caught.value)
    assert "is a number typed by hand" in str(caught.value)
    assert isinstance(caught.value, ModelFacingError)


@pytest.mark.parametrize("argument", ["v3", "l2", "places-1", "V3", "value 3", "stops", True, None])
def test_ids_and_words_are_not_called_typed_numbers(ledger: Ledger, argument: object) -> None:
    refuse_typed_number(argument)  # raises for a typed number only
    try:
        outcome = cited_value(ledger, argument).id
    except (FigureRefusedError, UnknownValueError) as exc:
        outcome = str(exc)
    assert "typed by hand" not in outcome


def test_refuse_typed_number_message() -> None:
    with pytest.raises(FigureRefusedError) as caught:
        refuse_typed_number("12,400 people")
    assert str(caught.value) == (
        f"'12,400 people' is a number typed by hand; {HOW}. To show it, compute it in an "
        "analysis and mint it with mint.value(x, label, unit=...)"
    )
    assert caught.value.problems == (str(caught.value),)


@pytest.mark.parametrize(
    ("argument", "message"),
    [
        ("v9", "v9 was never minted in this chat; the values minted so far are v1..v3"),
        ("l1", "l1 is a layer, not a value; the values minted so far are v1..v3"),
        ("V2", "'V2' is not a value id (value ids look like v3); did you mean v2?"),
        ("places-1", "places-1 is an entry id, not a value id: compute the figure from the "
                     "entry in an analysis, mint it with mint.value(x, label, unit=...), and "
                     "pass the value id it gets"),
        (None, f"None (NoneType) is not a value id; {HOW}"),
        (True, f"True (bool) is not a value id; {HOW}"),
    ],
)  # fmt: skip
def test_each_refusal_says_why(ledger: Ledger, argument: object, message: str) -> None:
    with pytest.raises(FigureRefusedError) as caught:
        check_figure_ids(ledger, [argument])
    assert str(caught.value).startswith(message)


def test_every_problem_is_named_at_once(ledger: Ledger) -> None:
    with pytest.raises(FigureRefusedError) as caught:
        check_figure_ids(ledger, ["v1", 2400, "v9", "v2"])
    assert caught.value.problems[0].startswith("2400 is a number typed by hand")
    assert caught.value.problems[1].startswith("v9 was never minted in this chat")
    assert len(caught.value.problems) == 2
    assert str(caught.value).startswith("2 figure arguments were refused:\n  - 2400 is a")


def test_no_ids_is_refused(ledger: Ledger) -> None:
    with pytest.raises(FigureRefusedError, match="^" + re.escape(f"no figure was named; {HOW}")):
        check_figure_ids(ledger, [])


def test_a_withdrawn_value_cannot_be_shown(ledger: Ledger) -> None:
    with pytest.raises(FigureRefusedError, match=r"^v1 was withdrawn in this chat"):
        check_figure_ids(ledger.withdraw("v1"), ["v1"])


def test_cited_value_raises_the_ledgers_own_error(ledger: Ledger) -> None:
    with pytest.raises(UnknownValueError) as caught:
        cited_value(ledger, "v8")
    assert caught.value.known == ("v1", "v2", "v3")
    assert cited_value(ledger, "v2") == ledger.value("v2")
