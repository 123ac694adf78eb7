"""The place spine: names in several languages resolve to one id, units one level down,
codes for the connectors, and a name where an id belongs is refused with the way out."""

from __future__ import annotations

import pytest

from geomint.sources import UnknownPlaceError, spine
from geomint.sources.spine import fold


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("Helsinki", "city:658225"),
        ("Helsingfors", "city:658225"),  # GeoNames alternate name
        ("helsinki", "city:658225"),
        ("Espoo", "city:660158"),
        ("Finland", "country:FIN"),
        ("Republic of Finland", "country:FIN"),  # ISO long form
        ("Esplanadinpuisto", "area:osm-way-28328802"),  # the demo area's named places
    ],
)
def test_a_name_resolves_to_its_spine_id(name: str, expected: str) -> None:
    assert spine().resolve(name)[0].id == expected


def test_divisions_have_finnish_and_swedish_names_and_sit_in_their_country() -> None:
    found = spine().resolve("Nyland")
    assert [p.id for p in found] == ["admin1:FI-18"]
    uusimaa = found[0]
    assert uusimaa.names.get("fi") == "Uusimaa"
    assert uusimaa.parent == "country:FIN"
    assert spine().resolve("Uusimaa")[0].id == "admin1:FI-18"


def test_units_inside_go_one_level_down() -> None:
    places = spine()
    divisions = places.inside("country:FIN")
    assert {p.level for p in divisions} == {"admin1"}
    assert len(divisions) == 18
    cities = {p.id for p in places.inside("admin1:FI-18")}
    assert {"city:658225", "city:660158"} <= cities  # Helsinki and Espoo lie in Uusimaa
    assert "area:osm-way-28328802" in {p.id for p in places.inside("city:658225")}


def test_a_shared_name_returns_every_unit_countries_first() -> None:
    found = spine().resolve("Georgia")
    assert found[0].id == "country:GEO"
    assert "admin1:US-GA" in [p.id for p in found]


def test_a_unit_carries_every_code_a_connector_asks_by() -> None:
    finland = spine().unit("country:FIN")
    assert (finland.iso2, finland.iso3, finland.m49) == ("FI", "FIN", 246)
    assert spine().unit("city:658225").geonameid == 658225
    assert spine().by_code("m49", 246) == "country:FIN"
    assert spine().by_code("iso2", "fi") == "country:FIN"


def test_a_name_where_an_id_belongs_is_refused_with_the_id_to_use() -> None:
    with pytest.raises(UnknownPlaceError, match=r"not a place id.*city:658225 \(Helsinki\)"):
        spine().require("Helsinki")
    with pytest.raises(UnknownPlaceError, match="did you mean country:FIN"):
        spine().require("country:FINN")


def test_a_miss_offers_the_names_close_to_it() -> None:
    assert spine().resolve("Helsimki") == []
    assert "helsinki" in spine().near_names("Helsimki")


def test_no_figure_rides_on_a_unit() -> None:
    # The GeoNames population was tempting to type when a place search carried it.
    helsinki = spine().get("city:658225")
    assert helsinki is not None
    assert "population" not in repr(helsinki).lower()


def test_fold_drops_accents_case_and_punctuation() -> None:
    assert fold("  Åland-Islands ") == "aland islands"
