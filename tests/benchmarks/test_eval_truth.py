"""The eval's judge: what makes an answer right, part by part."""

from __future__ import annotations

from typing import Any

from benchmarks.evals.truth import Figure, Minted, Truth, judge


def _bar(labels: list[str], values: list[float]) -> dict[str, Any]:
    return {"type": "bar", "data": {"labels": labels, "datasets": [{"data": values}]}}


def test_each_figure_needs_a_minted_value_of_its_own() -> None:
    truth = Truth(figures=(Figure(value=10, about=("Espoo",)), Figure(value=10, about=("Vantaa",))))
    both = [Minted("people in Espoo", 10), Minted("people in Vantaa", 10.0)]
    assert judge(truth, 0.0, both, "") == ([], [10, 10])
    # One figure cannot answer for two, nor a near one for an exact count.
    assert judge(truth, 0.0, both[:1], "")[0] == ["no figure about Vantaa of 10"]
    assert judge(truth, 0.0, [both[0], Minted("people in Vantaa", 11)], "")[0]
    # Areas and distances: within the tolerance; a label's accents and case do not matter.
    area = Truth(figures=(Figure(value=14.138, about=("park",)),))
    assert judge(area, 0.02, [Minted("area of the PARK", 14.4)], "") == ([], [14.4])
    assert judge(area, 0.02, [Minted("area of the park", 14.5)], "")[0]


def test_a_band_takes_either_reading_and_nothing_beyond() -> None:
    # Cafés reached by network distance (57) and inside the reachable area (62).
    truth = Truth(figures=(Figure(value=57, upto=62),))
    for right in (57, 60, 62):
        assert judge(truth, 0.0, [Minted("cafés within the walk", right)], "")[0] == []
    for wrong in (56, 63):
        assert judge(truth, 0.0, [Minted("cafés within the walk", wrong)], "")[0] == [
            "no figure of 57 to 62"
        ]


def test_a_figure_read_in_whole_units_is_right_within_half_a_unit() -> None:
    truth = Truth(figures=(Figure(value=1.094, about=("Amin",), slack=0.5),))
    assert judge(truth, 0.02, [Minted("distance to Amin's cafe", 1)], "")[0] == []
    assert judge(truth, 0.02, [Minted("distance to Amin's cafe", 2)], "")[0]
    # Without the slack, 2 % of a metre is 2 cm.
    exact = Truth(figures=(Figure(value=1.094),))
    assert judge(exact, 0.02, [Minted("distance to Amin's cafe", 1)], "")[0]


def test_a_list_is_right_when_every_member_is_named() -> None:
    truth = Truth(names=("Senaatintori", "Kaisaniemen puisto"))
    assert judge(truth, 0.0, [], "Senaatintori and KAISANIEMEN PUISTO.")[0] == []
    assert judge(truth, 0.0, [], "Senaatintori only.")[0] == ["Kaisaniemen puisto is not named"]


def test_a_member_named_inside_a_longer_members_name_is_not_named() -> None:
    truth = Truth(names=("Yliopiston apteekki", "Yliopiston Apteekki Kaivopiha"))
    both = "Yliopiston Apteekki Kaivopiha and Yliopiston apteekki."
    assert judge(truth, 0.0, [], both)[0] == []
    assert judge(truth, 0.0, [], "Yliopiston Apteekki Kaivopiha.")[0] == [
        "Yliopiston apteekki is not named"
    ]


def test_a_chart_must_show_the_largest_categories_truthfully() -> None:
    truth = Truth(chart={"restaurant": 213, "clothes": 98, "cafe": 85, "pub": 51}, min_bars=2)
    top = _bar(["restaurant", "clothes", "cafe"], [213, 98, 85])
    assert judge(truth, 0.0, [], "", [top])[0] == []
    wrong_bar = _bar(["restaurant", "clothes", "cafe"], [213, 98, 84])
    skipped = _bar(["restaurant", "cafe"], [213, 85])  # clothes (98) is larger than cafe
    one_bar = _bar(["restaurant"], [213])
    for chart in (wrong_bar, skipped, one_bar):
        assert judge(truth, 0.0, [], "", [chart])[0] == [
            "no chart shows the largest categories with their true values"
        ]
    assert judge(truth, 0.0, [], "", [])[0]  # no chart at all


def test_a_capability_it_lacks_may_be_named_only_as_lacking() -> None:
    truth = Truth(mentions={"routes": ("route",)}, never={"traffic": ("traffic",)})
    assert judge(truth, 0.0, [], "I plan routes. I cannot show traffic.")[0] == []
    assert judge(truth, 0.0, [], "I plan routes and show traffic jams.")[0] == [
        "traffic is claimed, and the agent has none"
    ]
    assert judge(truth, 0.0, [], "I show maps.")[0] == ["routes is not mentioned"]
