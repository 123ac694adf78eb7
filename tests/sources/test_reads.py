"""Path A reads one cell or misses, never picks a row; path B lands every row joined to
the spine. The connector here is a stand-in that returns a fixed table."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import UTC, datetime

import pytest
from tests.sources.test_registry import make_source

from geomint.http import RequestPolicy
from geomint.sources import Cell, CellMiss, LandedTable, SourceFetchError, UnknownPlaceError, spine
from geomint.sources.connectors.base import CodeSystem, Request, Row, Table
from geomint.sources.model import FilterKey
from geomint.sources.reads import check_filters, read_cell, read_table

RETRIEVED = datetime(2026, 1, 5, 9, 30, tzinfo=UTC)


class FixedConnector:
    """Answers every request with the same rows, and keeps the requests."""

    def __init__(self, rows: list[Row], system: CodeSystem = "iso3") -> None:
        self.rows = rows
        self.system = system
        self.requests: list[Request] = []

    @property
    def name(self) -> str:
        return "fixed"

    @property
    def needs_network(self) -> bool:
        return False

    @property
    def vocabulary(self) -> Mapping[str, str]:
        return {"sex": "T, M or F"}

    def fetch(self, request: Request) -> Table:
        self.requests.append(request)
        return Table(rows=tuple(self.rows), code_system=self.system, retrieved_at=RETRIEVED)


SEXED = make_source(
    "sexed",
    filters=(
        FilterKey(key="unit", takes="a spine id"),
        FilterKey(key="period", takes="a year or latest"),
        FilterKey(key="sex", takes="T, M or F", options=("T", "M", "F")),
    ),
)
ROWS = [
    Row(unit_code="FIN", unit_name="Finland", period="2019", value=5_521_000),
    Row(unit_code="FIN", unit_name="Finland", period="2020", value=5_529_614),
    Row(unit_code="FIN", unit_name="Finland", period="2021", value=None),
    Row(unit_code="SWE", unit_name="Sweden", period="2020", value=10_353_691),
    Row(unit_code="ZZZ", unit_name="Nowhere", period="2020", value=1),
]


def _cell(filters: dict[str, object], rows: list[Row] = ROWS) -> Cell | CellMiss:
    source = make_source("pop")
    narrowing = check_filters(source, filters, spine())  # type: ignore[arg-type]
    return read_cell(source, FixedConnector(rows), spine(), narrowing, RequestPolicy())


def test_one_unit_and_one_year_is_one_cell_with_its_provenance_and_period() -> None:
    cell = _cell({"unit": "country:FIN", "period": 2020})
    assert isinstance(cell, Cell)
    assert (cell.value, cell.period, cell.unit) == (5_529_614, "2020", "people")
    assert cell.provenance.period == "2020"
    assert cell.provenance.retrieved_at == RETRIEVED
    assert (cell.provenance.licence, cell.provenance.source_id) == ("CC-BY-4.0", "pop")


def test_latest_is_the_newest_period_that_has_a_value() -> None:
    cell = _cell({"unit": "country:FIN", "period": "latest"})
    assert isinstance(cell, Cell) and cell.period == "2020"  # 2021 has no value


def test_a_narrowing_that_reaches_two_rows_is_a_miss_naming_what_they_differ_by() -> None:
    miss = _cell({"unit": "country:FIN", "period": "2019/2020"})
    assert isinstance(miss, CellMiss)
    assert miss.reached == 2
    assert "reaches 2 rows" in miss.reason and "period" in miss.reason
    assert "never picks one" in miss.reason


def test_rows_differing_by_a_dimension_say_which_filter_narrows_them() -> None:
    rows = [
        Row(unit_code="FIN", unit_name=None, period="2020", value=1, extra={"sex": "M"}),
        Row(unit_code="FIN", unit_name=None, period="2020", value=2, extra={"sex": "F"}),
    ]
    miss = _cell({"unit": "country:FIN", "period": 2020}, rows)
    assert isinstance(miss, CellMiss)
    assert "filters['sex']" in miss.reason
    assert [r["sex"] for r in miss.rows] == ["M", "F"]


def test_no_row_and_no_value_are_misses_that_say_what_the_source_has() -> None:
    none = _cell({"unit": "country:FIN", "period": 1990})
    assert isinstance(none, CellMiss) and none.reached == 0
    assert "it has periods 2019, 2020, 2021" in none.reason
    empty = _cell({"unit": "country:FIN", "period": 2021})
    assert isinstance(empty, CellMiss) and "no value" in empty.reason
    other = _cell({"unit": "country:NOR", "period": 2020})
    assert isinstance(other, CellMiss) and "has no row for country:NOR (Norway)" in other.reason


def test_a_cell_names_exactly_one_unit() -> None:
    with pytest.raises(SourceFetchError, match="exactly one unit"):
        _cell({"unit": ["country:FIN", "country:SWE"], "period": 2020})


@pytest.mark.parametrize(
    ("filters", "match"),
    [
        ({"unit": "Finland"}, "not a place id.*country:FIN"),
        ({"colour": "red"}, "takes no filter 'colour'"),
        ({"period": "last year"}, "is not a period"),
    ],
)
def test_filters_are_checked_before_any_request(filters: dict[str, object], match: str) -> None:
    with pytest.raises((SourceFetchError, UnknownPlaceError), match=match):
        check_filters(make_source("pop"), filters, spine())  # type: ignore[arg-type]


def test_a_value_outside_the_published_options_is_refused_with_them() -> None:
    with pytest.raises(SourceFetchError, match="not one of the options") as refused:
        check_filters(SEXED, {"sex": "X"}, spine())
    assert refused.value.options == ("T", "M", "F")
    assert refused.value.code == "refused_filter"


def test_a_landed_table_joins_rows_to_the_spine_and_says_what_it_could_not() -> None:
    source = make_source("pop")
    narrowing = check_filters(source, {"period": 2020}, spine())
    landed = read_table(source, FixedConnector(ROWS), spine(), narrowing, RequestPolicy())
    assert isinstance(landed, LandedTable)
    by_unit = {f["properties"]["unit_code"]: f for f in landed.data["features"]}
    assert by_unit["FIN"]["properties"]["unit_id"] == "country:FIN"
    assert by_unit["FIN"]["geometry"]["type"] == "MultiPolygon"  # one row per unit: boundaries
    assert by_unit["ZZZ"]["properties"]["unit_id"] is None
    assert by_unit["ZZZ"]["geometry"] is None
    assert landed.unmatched == ("ZZZ",)
    assert any("not on the place spine" in n for n in landed.notes)
    assert landed.provenance.period == "2020"


def test_a_table_over_years_places_rows_at_label_points_and_says_so() -> None:
    source = make_source("pop")
    narrowing = check_filters(source, {"unit": ["country:FIN"]}, spine())
    landed = read_table(source, FixedConnector(ROWS), spine(), narrowing, RequestPolicy())
    assert isinstance(landed, LandedTable)
    assert landed.rows == 3
    assert {f["geometry"]["type"] for f in landed.data["features"]} == {"Point"}
    assert any("label point" in n for n in landed.notes)
    assert landed.provenance.period == "2019/2021"


class RefusingConnector(FixedConnector):
    """Refuses every fetch for a dimension value, publishing the ones it takes."""

    def fetch(self, request: Request) -> Table:
        raise SourceFetchError(
            "refused_filter",
            "sex 'X' is not a code of SEX",
            key="sex",
            options=("T", "M", "F"),
            learnable=True,
        )


def test_options_a_source_published_in_a_refusal_are_learned_for_the_next_hit() -> None:
    from geomint.sources import SourceRegistry, Sources
    from geomint.store import MemoryStore

    source = make_source("refuses", connector="refusing")
    registry = SourceRegistry(MemoryStore(), seed=[source])
    sources = Sources(registry, connectors={"refusing": RefusingConnector([])}, live=False)
    with pytest.raises(SourceFetchError, match="not a code of SEX"):
        sources.read("refuses", {"unit": "country:FIN"}, cell=True)
    learned = registry.get("refuses")
    assert learned is not None
    key = learned.filter_key("sex")
    assert key is not None and key.options == ("T", "M", "F")
    hit = sources.find("population")
    assert {"key": "sex", "takes": key.takes, "required": False, "options": ["T", "M", "F"]} in (
        hit.hits[0].source.for_model()["filters"]  # type: ignore[operator]
    )
