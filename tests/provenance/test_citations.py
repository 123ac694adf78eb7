"""Figures cited inline and typed numbers checked against the ledger, case by case."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest

from geomint.provenance import Value
from geomint.provenance.citations import check_text, format_figure, numbers_in

AT = datetime(2026, 1, 5, tzinfo=UTC)


def _value(id: str, value: Any, unit: str | None = None, label: str = "a figure") -> Value:
    return Value(
        id=id, label=label, value=value, unit=unit, minted_by="a1", code_hash="0" * 64,
        minted_at=AT,
    )  # fmt: skip


VALUES = {
    "v1": _value("v1", 1326, "places", "places counted"),
    "v2": _value("v2", 40123.456, "m²", "park area"),
    "v3": _value("v3", 1840.2, "m", "route length"),
    "v4": _value("v4", 0.375, None, "share of stops near a café"),
    "v5": _value("v5", 7, "cafés"),
}


def _states(text: str, **kwargs: Any) -> list[tuple[str, str, str | None]]:
    checked = check_text(text, VALUES, **kwargs)
    return [(s.text, s.state, s.ref) for s in checked.segments if s.state != "plain"]


def test_a_reference_reads_as_the_value_with_its_unit() -> None:
    checked = check_text("The park covers {v2}, the route is {v3}.", VALUES)
    assert checked.rendered == "The park covers 40,123.5 m², the route is 1,840.2 m."
    assert (checked.cited, checked.matched, checked.unminted) == (2, 0, 0)
    assert "".join(s.text for s in checked.segments) == "The park covers {v2}, the route is {v3}."


def test_an_unknown_or_withdrawn_reference_is_shown_as_such() -> None:
    checked = check_text("We found {v9} and {v5}.", VALUES, withdrawn={"v5"})
    assert checked.rendered == "We found [v9: no such figure] and [v5: withdrawn]."
    assert (checked.cited, checked.unminted) == (0, 2)


@pytest.mark.parametrize(
    ("text", "written", "ref"),
    [
        ("1,326 places", "1,326", "v1"),
        ("1326 places", "1326", "v1"),
        ("about 1,300", "1,300", "v1"),
        ("40,123.5 m²", "40,123.5", "v2"),
        ("4 ha", "4", "v2"),
        ("4.01 ha", "4.01", "v2"),
        ("1.8 km", "1.8", "v3"),
        ("1,840 m", "1,840", "v3"),
        ("37.5 %", "37.5", "v4"),
        ("seven cafés", "seven", "v5"),
    ],
)
def test_a_typed_number_that_shows_a_minted_value_is_matched(
    text: str, written: str, ref: str
) -> None:
    assert _states(text) == [(written, "matched", ref)]


@pytest.mark.parametrize(
    "text",
    [
        "on 2026-01-05 at 10:30",
        "in 2024",
        "places-1 and v3 and a12",
        "the 3rd park",
        "bus 55 and tram 7",
        "at Mannerheimintie 5",
        "postcode 00100",
        "one of the parks",
    ],
)
def test_dates_ids_ordinals_names_and_codes_are_not_checked(text: str) -> None:
    assert _states(text) == []


def test_a_number_that_matches_nothing_is_unminted() -> None:
    checked = check_text("There are 12 bus stations and eight parks.", VALUES)
    assert [(s.text, s.state) for s in checked.segments if s.state != "plain"] == [
        ("12", "unminted"),
        ("eight", "unminted"),
    ]
    assert checked.unminted == 2


def test_numbers_from_the_question_or_a_tool_are_not_invented() -> None:
    quoted = numbers_in("schools more than 800 m from a stop, within 10 minutes")
    stated = numbers_in({"digest": {"feature_count": 125}})
    text = "Within 10 minutes and 800 m there are 125 stops."
    assert _states(text, quoted=quoted, stated=stated) == [
        ("10", "quoted", None),
        ("800", "quoted", None),
        ("125", "stated", None),
    ]


def test_format_figure_of_text_and_yes_no_values() -> None:
    assert format_figure(_value("v8", "restaurant", None)) == "restaurant"
    assert format_figure(_value("v9", True, None)) == "yes"
