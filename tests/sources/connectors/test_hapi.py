"""The HDX HAPI connector, against hand-written HAPI v2 answers served on 127.0.0.1: pages
read in turn into rows named by p-code (or by ISO code for a country's own rows), the
filters sent or applied here, HAPI's refusals told as fetch errors a model can act on
(its own code list learnable), answers of another shape refused, every cap holding, and
the app identifier sent to HAPI yet never shown in a URL, a message or a note.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from typing import Any

import httpx
import pytest
from tests.sources.connectors.support import (
    AFGHANISTAN,
    FINLAND,
    KABUL_PROVINCE,
    RECORDED,
    SUDAN,
    fast,
    live_source,
)

from geomint.http import ScriptedTransport
from geomint.sources import SourceRegistry, Sources
from geomint.sources.connectors import hapi
from geomint.sources.connectors.base import PeriodFilter, Request, SourceFetchError, Table
from geomint.sources.connectors.hapi import (
    APP_IDENTIFIER_ENV,
    HapiConnector,
    encode_app_identifier,
)
from geomint.sources.reads import Cell, LandedTable
from geomint.store import MemoryStore
from geomint.testing import RecordedServer

RECORDINGS = "hapi"
IDENTIFIER = encode_app_identifier("geomint-tests", "tests@example.org")
POPULATION = "/api/v2/geography-infrastructure/baseline-population"
NEEDS = "/api/v2/affected-people/humanitarian-needs"
REFUGEES = "/api/v2/affected-people/refugees-persons-of-concern"
FOOD = "/api/v2/food-security-nutrition-poverty/food-security"
PRESENCE = "/api/v2/coordination-context/operational-presence"


def _request(server: RecordedServer, source_id: str, **kwargs: Any) -> Request:
    config: dict[str, Any] = {"base_url": server.base_url, **kwargs.pop("config", {})}
    source = live_source(source_id, **config)
    policy = kwargs.pop("policy", fast())
    return Request(source=source, policy=policy, **kwargs)


def _fetch(request: Request, identifier: str | None = IDENTIFIER) -> Table:
    table = HapiConnector(app_identifier=identifier).fetch(request)
    assert isinstance(table, Table)
    return table


def _failure(request: Request, identifier: str | None = IDENTIFIER) -> SourceFetchError:
    with pytest.raises(SourceFetchError) as caught:
        _fetch(request, identifier)
    return caught.value


def _shown(error: SourceFetchError) -> str:
    """Everything of an error a model or a log may read."""
    return f"{error} {error.url} {error.options}"


def _hidden(text: str) -> bool:
    """Whether ``text`` holds no part of the app identifier: as sent (its padding may be
    percent-encoded in a URL), or the email address it encodes."""
    return IDENTIFIER.rstrip("=") not in text and "tests@example.org" not in text


# --- a normal fetch -----------------------------------------------------------------------


def test_admin1_population_lands_every_page_as_rows_named_by_pcode(
    server: RecordedServer,
) -> None:
    server.add("GET", POPULATION, query={"offset": "0"}, file="population_afg_admin1_page1.json")
    server.add("GET", POPULATION, query={"offset": "4"}, file="population_afg_admin1_page2.json")

    table = _fetch(
        _request(
            server, "hdx-hapi-baseline-population", config={"limit": 4}, options={"location": "AFG"}
        )
    )

    assert [(r.unit_code, r.unit_name, r.period, r.value) for r in table.rows] == [
        ("AF01", "Kabul", "2023", 5_573_604),
        ("AF01", "Kabul", "2023", 2_701_288),
        ("AF01", "Kabul", "2023", 2_872_316),
        ("AF02", "Kapisa", "2023", 488_298),
        ("AF02", "Kapisa", "2023", 238_940),
        ("AF02", "Kapisa", "2023", 249_358),
    ]
    assert table.rows[1].extra == {
        "admin_level": 1,
        "location_code": "AFG",
        "location_name": "Afghanistan",
        "admin1_code": "AF01",
        "admin1_name": "Kabul",
        "admin2_code": None,
        "admin2_name": None,
        "gender": "f",
        "age_range": "all",
        "min_age": None,
        "max_age": None,
        "resource_hdx_id": "a2c4e6f8-1357-4bdf-9ace-0246813579bd",
    }
    assert table.code_system == "none"  # the spine holds no p-codes
    assert table.unit == "people"
    sent = server.sent(POPULATION)
    assert [(s.param("offset"), s.param("limit")) for s in sent] == [("0", "4"), ("4", "4")]
    assert {s.param("location_code") for s in sent} == {"AFG"}
    assert {s.param("admin_level") for s in sent} == {"1"}  # the source's default
    assert {s.param("output_format") for s in sent} == {"json"}
    notes = " ".join(table.notes)
    assert "admin_level 1 (the source's default" in notes
    assert "p-codes of the Common Operational Datasets" in notes
    assert "HDX resource a2c4e6f8-1357-4bdf-9ace-0246813579bd" in notes
    assert "states no licence per row" in notes


def test_the_app_identifier_is_sent_and_never_shown(server: RecordedServer) -> None:
    server.add("GET", POPULATION, file="population_afg_admin1_page2.json")

    table = _fetch(_request(server, "hdx-hapi-baseline-population", options={"location": "AFG"}))

    assert server.sent(POPULATION)[0].param("app_identifier") == IDENTIFIER
    assert table.url is not None and "app_identifier=***" in table.url
    shown = f"{table.url} {table.notes} {[r.extra for r in table.rows]}"
    assert _hidden(shown)
    assert _hidden(repr(HapiConnector(app_identifier=IDENTIFIER)))


def test_a_countrys_own_rows_join_the_spine_by_iso3(server: RecordedServer) -> None:
    server.add("GET", POPULATION, file="population_afg_total.json")

    table = _fetch(
        _request(
            server,
            "hdx-hapi-baseline-population",
            units=(AFGHANISTAN,),
            options={"gender": "all", "age_range": "all"},
        )
    )

    assert table.code_system == "iso3"
    assert [(r.unit_code, r.period, r.value) for r in table.rows] == [("AFG", "2023", 41_454_761)]
    assert table.rows[0].extra["admin_level"] == 0
    sent = server.sent(POPULATION)[0]
    assert (sent.param("location_code"), sent.param("admin_level")) == ("AFG", "0")
    assert (sent.param("gender"), sent.param("age_range")) == ("all", "all")
    assert "unit asks for the countries' own rows: admin_level 0" in table.notes
    assert not any("p-codes" in note for note in table.notes)


def test_several_countries_are_read_in_turn(server: RecordedServer) -> None:
    server.add("GET", NEEDS, query={"location_code": "SDN"}, file="humanitarian_needs_sdn.json")
    server.add("GET", NEEDS, query={"location_code": "AFG"}, body='{"data": []}')

    table = _fetch(
        _request(
            server, "hdx-hapi-humanitarian-needs", options={"location": ("SDN", "country:afg")}
        )
    )

    assert [s.param("location_code") for s in server.sent(NEEDS)] == ["SDN", "AFG"]
    assert {r.unit_code for r in table.rows} == {"SDN"}
    assert table.code_system == "iso3"  # the source's default is admin level 0


# --- filters narrowing --------------------------------------------------------------------


def test_the_period_asks_hapi_for_overlapping_years(server: RecordedServer) -> None:
    server.add("GET", NEEDS, file="humanitarian_needs_sdn.json")

    _fetch(
        _request(
            server,
            "hdx-hapi-humanitarian-needs",
            units=(SUDAN,),
            period=PeriodFilter(start=2024, end=2025),
        )
    )

    sent = server.sent(NEEDS)[0]
    assert (sent.param("start_date"), sent.param("end_date")) == ("2024", "2025")


def test_sector_and_status_are_sent_and_category_total_is_narrowed_here(
    server: RecordedServer,
) -> None:
    server.add("GET", NEEDS, file="humanitarian_needs_sdn.json")

    table = _fetch(
        _request(
            server,
            "hdx-hapi-humanitarian-needs",
            units=(SUDAN,),
            options={"sector_code": "Intersectoral", "category": "total"},
        )
    )

    sent = server.sent(NEEDS)[0]
    assert sent.param("sector_code") == "Intersectoral"
    assert sent.param("category") is None  # HAPI takes no such parameter: applied here
    # The recording holds every sector; a real answer would hold Intersectoral only.
    assert [r.extra["category"] for r in table.rows] == [None] * 6
    assert [(r.period, r.extra["population_status"], r.value) for r in table.rows[:3]] == [
        ("2025", "INN", 30_400_000),
        ("2025", "TGT", 20_900_000),
        ("2025", "all", 51_700_000),
    ]


def test_a_category_narrows_to_its_rows_in_any_case(server: RecordedServer) -> None:
    server.add("GET", NEEDS, file="humanitarian_needs_sdn.json")

    table = _fetch(
        _request(
            server, "hdx-hapi-humanitarian-needs", units=(SUDAN,), options={"category": "children"}
        )
    )

    assert [(r.extra["category"], r.value) for r in table.rows] == [("Children", 15_900_000)]


def test_latest_keeps_each_series_newest_period(server: RecordedServer) -> None:
    server.add("GET", NEEDS, file="humanitarian_needs_sdn.json")

    table = _fetch(
        _request(
            server,
            "hdx-hapi-humanitarian-needs",
            units=(SUDAN,),
            period=PeriodFilter(latest=True),
            options={"category": "total"},
        )
    )

    assert "start_date" not in server.sent(NEEDS)[0].query
    assert {r.period for r in table.rows} == {"2025"}
    assert len(table.rows) == 4  # INN, TGT and all of Intersectoral, INN of FSC
    assert "kept each series' latest reference period with a value" in table.notes
    assert "HDX resources" not in " ".join(table.notes)  # one resource is left


def test_refugees_are_rows_by_country_of_asylum(server: RecordedServer) -> None:
    server.add("GET", REFUGEES, file="refugees_tcd.json")

    table = _fetch(
        _request(
            server,
            "hdx-hapi-refugees",
            options={"location": "TCD", "origin": "sdn", "population_group": "REF"},
        )
    )

    sent = server.sent(REFUGEES)[0]
    assert sent.param("asylum_location_code") == "TCD"
    assert sent.param("origin_location_code") == "SDN"
    assert sent.param("population_group") == "REF"
    assert table.code_system == "iso3"
    first = table.rows[0]
    assert (first.unit_code, first.unit_name, first.period, first.value) == (
        "TCD",
        "Chad",
        "2024",
        1_096_184,
    )
    assert first.extra["origin_location_code"] == "SDN"
    assert first.extra["origin_location_name"] == "Sudan"
    assert "admin_level" not in first.extra


def test_food_security_keeps_phase_and_fraction(server: RecordedServer) -> None:
    source = live_source("hdx-hapi-baseline-population", base_url=server.base_url)
    source = source.model_copy(update={"config": {**source.config, "endpoint": "food-security"}})
    source = source.model_copy(update={"filters": source.filters[:3]})
    server.add("GET", FOOD, file="food_security_som.json")

    table = _fetch(Request(source=source, policy=fast(), options={"location": "SOM"}))

    bay = table.rows[2]
    assert (bay.unit_code, bay.unit_name, bay.period, bay.value) == (
        "SO27",
        "Bay",
        "2024-10-01/2024-12-31",
        426_700,
    )
    assert bay.extra["ipc_phase"] == "3+"
    assert bay.extra["population_fraction_in_phase"] == 0.34


def test_operational_presence_rows_carry_no_number(server: RecordedServer) -> None:
    source = live_source("hdx-hapi-baseline-population", base_url=server.base_url)
    source = source.model_copy(
        update={
            "config": {"base_url": server.base_url, "endpoint": "operational-presence"},
            "filters": source.filters[:3],
        }
    )
    server.add("GET", PRESENCE, file="operational_presence_afg.json")

    table = _fetch(Request(source=source, policy=fast(), options={"location": "AFG"}))

    assert [(r.unit_code, r.value, r.extra["org_acronym"]) for r in table.rows] == [
        ("AF01", None, "WFP"),
        ("AF01", None, "UNICEF"),
    ]
    assert table.rows[0].extra["sector_name"] == "Food Security"


# --- refused before any request -----------------------------------------------------------


def test_a_division_of_the_spine_is_refused_and_told_how_to_ask(server: RecordedServer) -> None:
    error = _failure(_request(server, "hdx-hapi-baseline-population", units=(KABUL_PROVINCE,)))

    assert error.code == "refused_filter"
    assert error.key == "unit"
    assert "location=AFG and admin_level 1, then narrow by admin1_code" in str(error)
    assert server.requests == []


def test_a_unit_with_divisions_asked_points_to_location(server: RecordedServer) -> None:
    error = _failure(
        _request(
            server,
            "hdx-hapi-baseline-population",
            units=(AFGHANISTAN,),
            options={"admin_level": "1"},
        )
    )

    assert error.code == "refused_filter"
    assert "give location (AFG) instead of unit" in str(error)
    assert server.requests == []


@pytest.mark.parametrize(
    ("options", "units", "match"),
    [
        ({"location": "AFG"}, (AFGHANISTAN,), "not both"),
        ({"location": tuple(f"A{c}A" for c in "BCDEFGHIJKL")}, (), "at most 10"),
        ({"location": "Afghanistan"}, (), "location 'Afghanistan' is not a value"),
        ({"location": "AFG", "admin1_code": "AF%"}, (), "admin1_code 'AF%' is not a value"),
        ({"location": "AFG", "admin1_code": "A_01"}, (), "admin1_code 'A_01' is not a value"),
        ({"location": "AFG", "gender": ("f", "m")}, (), "gender takes one value"),
        ({"location": "AFG", "age_range": "0 to 4"}, (), "an age band as rows give it"),
    ],
    ids=["unit-and-location", "eleven", "name", "percent", "underscore", "two-genders", "age"],
)
def test_values_hapi_could_not_take_are_refused_before_any_request(
    server: RecordedServer,
    options: dict[str, Any],
    units: tuple[Any, ...],
    match: str,
) -> None:
    error = _failure(_request(server, "hdx-hapi-baseline-population", options=options, units=units))

    assert error.code == "refused_filter"
    assert match in str(error)
    assert server.requests == []


# --- the app identifier -------------------------------------------------------------------


def test_without_an_identifier_nothing_is_sent_and_the_operator_is_named(
    server: RecordedServer,
) -> None:
    error = _failure(
        _request(server, "hdx-hapi-baseline-population", options={"location": "AFG"}),
        identifier=None,
    )

    assert error.code == "unavailable"
    assert APP_IDENTIFIER_ENV in str(error)
    assert "encode_app_identifier" in str(error)
    assert server.requests == []


def test_the_identifier_is_read_from_the_environment(
    server: RecordedServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(APP_IDENTIFIER_ENV, IDENTIFIER)
    server.add("GET", POPULATION, file="population_afg_total.json")

    _fetch(_request(server, "hdx-hapi-baseline-population", units=(AFGHANISTAN,)), identifier=None)

    assert server.sent(POPULATION)[0].param("app_identifier") == IDENTIFIER


@pytest.mark.parametrize(
    "identifier", ["geomint:tests@example.org", "bm90LWFuLWVtYWls", "%%%"], ids=str
)
def test_an_identifier_hapi_would_refuse_is_caught_before_any_request(
    server: RecordedServer, identifier: str
) -> None:
    error = _failure(
        _request(server, "hdx-hapi-baseline-population", options={"location": "AFG"}),
        identifier=identifier,
    )

    assert error.code == "unavailable"
    assert "not base64 of 'application:email'" in str(error)
    assert identifier not in str(error)
    assert server.requests == []


def test_an_identifier_hapi_refuses_is_unavailable_for_the_operator(
    server: RecordedServer,
) -> None:
    server.add("GET", POPULATION, status=403, file="error_identifier.json")

    error = _failure(_request(server, "hdx-hapi-baseline-population", options={"location": "AFG"}))

    assert error.code == "unavailable"
    assert "refused this deployment's app identifier (Invalid app identifier)" in str(error)
    assert APP_IDENTIFIER_ENV in str(error)
    assert _hidden(_shown(error))


def test_an_identifier_echoed_in_an_error_body_is_never_shown() -> None:
    def echo(request: httpx.Request) -> httpx.Response:
        sent = request.url.params["app_identifier"]
        body = {
            "detail": [
                {
                    "type": "string_too_long",
                    "loc": ["query", "app_identifier"],
                    "msg": f"String should have at most 512 characters, not {sent}",
                    "input": sent,
                }
            ]
        }
        return httpx.Response(422, json=body)

    request, _ = _scripted(echo)

    error = _failure(request)

    assert error.code == "unavailable"
    assert "***" in str(error)
    assert _hidden(_shown(error))


# --- refusals -----------------------------------------------------------------------------


def test_a_value_hapi_refuses_with_its_list_is_learnable(server: RecordedServer) -> None:
    server.add("GET", POPULATION, status=422, file="error_gender.json")

    error = _failure(
        _request(
            server,
            "hdx-hapi-baseline-population",
            options={"location": "AFG", "gender": "fem"},
        )
    )

    assert error.code == "refused_filter"
    assert error.key == "gender"
    assert error.options == ("f", "m", "x", "u", "o", "all")
    assert error.learnable
    assert str(error) == (
        "HDX HAPI refused gender 'fem': Input should be 'f', 'm', 'x', 'u', 'o' or 'all'; "
        "it takes f, m, x, u, o, all"
    )


def test_a_list_cut_short_is_not_learned() -> None:
    groups = ", ".join(f"'G{n:02d}'" for n in range(40))
    body = {
        "detail": [
            {
                "type": "enum",
                "loc": ["query", "population_group"],
                "msg": f"Input should be {groups} or 'all'",
            }
        ]
    }
    request, _ = _scripted(
        lambda r: httpx.Response(422, json=body),
        source="hdx-hapi-refugees",
        options={"population_group": "XYZ"},
    )

    error = _failure(request)

    assert error.code == "refused_filter"
    assert error.key == "population_group"
    assert error.options == ()
    assert not error.learnable
    assert "Input should be 'G00'" in str(error)


def test_a_combination_hapi_refuses_is_a_refused_filter_in_its_words(
    server: RecordedServer,
) -> None:
    server.add("GET", POPULATION, status=400, file="error_request.json")

    error = _failure(_request(server, "hdx-hapi-baseline-population", options={"location": "AFG"}))

    assert error.code == "refused_filter"
    assert "Cannot specify provider_admin1_name and admin level 0 filter" in str(error)
    assert not error.learnable


def test_a_path_hapi_does_not_have_is_not_found(server: RecordedServer) -> None:
    server.add("GET", POPULATION, status=404, body='{"detail":"Not Found"}')

    error = _failure(_request(server, "hdx-hapi-baseline-population", options={"location": "AFG"}))

    assert error.code == "not_found"
    assert _hidden(_shown(error))


# --- failures -----------------------------------------------------------------------------


def test_a_slow_answer_is_a_timeout(server: RecordedServer) -> None:
    server.add("GET", POPULATION, body='{"data": []}', delay_s=2.0)

    error = _failure(
        _request(
            server,
            "hdx-hapi-baseline-population",
            options={"location": "AFG"},
            policy=fast(timeout_s=0.3),
        )
    )

    assert error.code == "timeout"
    assert _hidden(_shown(error))


def test_a_429_is_rate_limited_with_the_wait_asked(server: RecordedServer) -> None:
    server.add("GET", POPULATION, status=429, headers={"Retry-After": "30"}, body="slow down")

    error = _failure(_request(server, "hdx-hapi-baseline-population", options={"location": "AFG"}))

    assert error.code == "rate_limited"
    assert error.retry_after == 30
    assert _hidden(_shown(error))


def test_a_server_error_is_unavailable(server: RecordedServer) -> None:
    server.add("GET", POPULATION, status=503, body="Service Unavailable")

    error = _failure(_request(server, "hdx-hapi-baseline-population", options={"location": "AFG"}))

    assert error.code == "unavailable"
    assert "503" in str(error)
    assert _hidden(_shown(error))


def test_a_body_that_is_not_json_is_malformed(server: RecordedServer) -> None:
    server.add("GET", POPULATION, body="<html><body>Maintenance</body></html>")

    error = _failure(_request(server, "hdx-hapi-baseline-population", options={"location": "AFG"}))

    assert error.code == "malformed"
    assert "Maintenance" in str(error)


def test_rows_whose_fields_were_renamed_are_changed(server: RecordedServer) -> None:
    server.add("GET", POPULATION, file="changed_fields.json")

    error = _failure(_request(server, "hdx-hapi-baseline-population", options={"location": "AFG"}))

    assert error.code == "changed"
    assert "location_code, reference_period_start, population missing" in str(error)
    assert "no table was made" in str(error)


# --- hostile answers: each bounded, and told as a fetch error -----------------------------


def _scripted(
    answer: Callable[[httpx.Request], httpx.Response],
    *,
    source: str = "hdx-hapi-baseline-population",
    options: dict[str, Any] | None = None,
    config: dict[str, Any] | None = None,
    **policy: Any,
) -> tuple[Request, ScriptedTransport]:
    transport = ScriptedTransport(answer)
    row = live_source(source, base_url="https://hapi.humdata.org", **(config or {}))
    request = Request(
        source=row,
        options=options if options is not None else {"location": "AFG"},
        policy=fast(transport=transport, **policy),
    )
    return request, transport


def _record(**changes: Any) -> dict[str, Any]:
    page = json.loads((RECORDED / RECORDINGS / "population_afg_admin1_page1.json").read_bytes())
    return {**page["data"][0], **changes}


def _page(records: list[dict[str, Any]]) -> bytes:
    return json.dumps({"data": records}).encode()


def test_json_nested_deeper_than_python_goes_is_malformed() -> None:
    deep = b'{"data": ' + b"[" * 200_000 + b"]" * 200_000 + b"}"
    request, _ = _scripted(lambda r: httpx.Response(200, content=deep))

    error = _failure(request)

    assert error.code == "malformed"
    assert "nests deeper than geomint reads" in str(error)


@pytest.mark.parametrize("body", [b"[]", b'{"rows": []}', b'{"data": [1, 2]}', b"\xff\xfe{}"])
def test_an_answer_that_is_not_hapis_shape_is_malformed(body: bytes) -> None:
    request, _ = _scripted(lambda r: httpx.Response(200, content=body))

    assert _failure(request).code == "malformed"


@pytest.mark.parametrize(
    "value",
    ["1e400", "-1e400", "NaN", "Infinity", "1" + "0" * 400],
    ids=["inf", "-inf", "NaN", "Infinity", "huge-int"],
)
def test_a_value_that_is_not_a_finite_number_is_malformed(value: str) -> None:
    body = _page([_record(population=12345)]).replace(b"12345", value.encode())
    request, _ = _scripted(lambda r: httpx.Response(200, content=body))

    error = _failure(request)

    assert error.code == "malformed"


def test_a_detail_that_is_not_a_finite_number_is_malformed() -> None:
    body = _page([_record(min_age=12345)]).replace(b"12345", b"1e999")
    request, _ = _scripted(lambda r: httpx.Response(200, content=body))

    error = _failure(request)

    assert error.code == "malformed"
    assert "min_age" in str(error)


@pytest.mark.parametrize(
    ("changes", "code", "match"),
    [
        ({"admin1_name": "K" * 600}, "malformed", "admin1_name as 600 characters"),
        ({"location_code": "A" * 129}, "malformed", "longer than the 128"),
        ({"admin1_name": "Kabul\x1b[2J"}, "changed", "control characters"),
        ({"admin1_code": ["AF01"]}, "changed", "admin1_code is list"),
        ({"population": "5573604"}, "changed", "not a number"),
        ({"population": True}, "changed", "not a number"),
        ({"reference_period_start": "last year"}, "changed", "not a date"),
        ({"reference_period_start": "2023-02-30"}, "changed", "not a date"),
        ({"location_code": None}, "changed", "location_code has none"),
    ],
    ids=[
        "long-name",
        "long-code",
        "control",
        "code-list",
        "text-number",
        "bool",
        "date-words",
        "date-impossible",
        "no-country",
    ],
)
def test_a_row_breaking_hapis_own_schema_is_refused(
    changes: dict[str, Any], code: str, match: str
) -> None:
    page = _page([_record(**changes)])
    request, _ = _scripted(lambda r: httpx.Response(200, content=page))

    error = _failure(request)

    assert error.code == code
    assert match in str(error)


def test_a_page_longer_than_asked_is_changed() -> None:
    page = _page([_record()] * 5)
    request, _ = _scripted(lambda r: httpx.Response(200, content=page), config={"limit": 4})

    error = _failure(request)

    assert error.code == "changed"
    assert "5 rows for limit=4" in str(error)


def test_the_service_cannot_page_past_the_rows_one_fetch_holds(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(hapi, "_MAX_ROWS", 10)
    page = _page([_record()] * 4)
    request, transport = _scripted(lambda r: httpx.Response(200, content=page), config={"limit": 4})

    error = _failure(request)

    assert error.code == "unavailable"
    assert "more than 10 rows" in str(error)
    assert "none was made" in str(error)
    assert len(transport.requests) == 3


def test_the_service_cannot_page_past_the_bytes_one_fetch_holds(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    page = _page([_record()] * 4)
    monkeypatch.setattr(hapi, "_MAX_TOTAL_BYTES", len(page) * 2)
    request, transport = _scripted(lambda r: httpx.Response(200, content=page), config={"limit": 4})

    error = _failure(request)

    assert error.code == "unavailable"
    assert f"more than {len(page) * 2:,} bytes over 3 pages" in str(error)
    assert len(transport.requests) == 3


def test_the_service_cannot_page_past_the_pages_one_fetch_reads(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(hapi, "_MAX_PAGES", 3)
    page = _page([_record()])
    request, transport = _scripted(lambda r: httpx.Response(200, content=page), config={"limit": 1})

    error = _failure(request)

    assert error.code == "unavailable"
    assert "more than 3 pages of 1 rows" in str(error)
    assert len(transport.requests) == 3


def test_a_page_is_capped_below_the_callers_max_bytes(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(hapi, "_MAX_PAGE_BYTES", 1_000)
    page = _page([_record()] * 4)
    request, _ = _scripted(lambda r: httpx.Response(200, content=page))

    error = _failure(request)

    assert error.code == "unavailable"
    assert "max_bytes=1,000" in str(error)
    assert request.policy.max_bytes == 20_000_000  # the caller's policy is left as it was


def test_one_deadline_holds_for_every_page() -> None:
    page = _page([_record()])

    def slow(request: httpx.Request) -> httpx.Response:
        time.sleep(0.15)
        return httpx.Response(200, content=page)

    request, transport = _scripted(slow, config={"limit": 1}, timeout_s=0.5)

    started = time.perf_counter()
    error = _failure(request)

    assert time.perf_counter() - started < 1.0
    assert error.code == "timeout"
    assert "within timeout_s=0.5 s" in str(error)
    assert len(transport.requests) < 5


def test_hapis_rate_is_kept_where_the_caller_set_one() -> None:
    waits: list[float] = []
    pages = iter([_page([_record()] * 2), _page([])])
    request, transport = _scripted(
        lambda r: httpx.Response(200, content=next(pages)),
        config={"limit": 2},
        rate_per_s=50.0,
        sleep=waits.append,
        timeout_s=10.0,
    )

    _fetch(request)

    assert len(transport.requests) == 2
    assert waits and max(waits) > 0.5  # HAPI asks for one request a second, not fifty


# --- through the registry: a table landed, a cell minted ----------------------------------


@pytest.fixture
def sources(server: RecordedServer) -> Sources:
    rows = [
        live_source(source_id, base_url=server.base_url)
        for source_id in ("hdx-hapi-baseline-population", "hdx-hapi-humanitarian-needs")
    ]
    return Sources(
        SourceRegistry(MemoryStore(), seed=rows),
        connectors={"hapi": HapiConnector(app_identifier=IDENTIFIER)},
        policy=fast(),
        live=True,
    )


def test_admin1_population_lands_as_a_table_with_its_period_and_licence(
    sources: Sources, server: RecordedServer
) -> None:
    server.add("GET", POPULATION, file="population_afg_admin1_page1.json")

    landed = sources.read(
        "hdx-hapi-baseline-population", {"location": "AFG", "gender": "all"}, cell=False
    )

    assert isinstance(landed, LandedTable)
    assert landed.rows == 4
    assert landed.periods == ("2023",)
    assert landed.provenance.period == "2023"
    assert landed.provenance.licence.startswith("per HDX dataset")
    assert landed.provenance.publisher == "UNFPA and OCHA country offices, via OCHA's HDX HAPI"
    first = landed.data["features"][0]
    assert first["geometry"] is None
    assert first["properties"]["unit_id"] is None
    assert first["properties"]["unit_code"] == "AF01"
    assert first["properties"]["admin1_name"] == "Kabul"
    assert first["properties"]["value"] == 5_573_604
    assert server.sent(POPULATION)[0].param("gender") == "all"


def test_a_countrys_population_is_one_cell_with_its_period(
    sources: Sources, server: RecordedServer
) -> None:
    server.add("GET", POPULATION, file="population_afg_total.json")

    cell = sources.read(
        "hdx-hapi-baseline-population",
        {"unit": "country:AFG", "gender": "all", "age_range": "all"},
        cell=True,
    )

    assert isinstance(cell, Cell)
    assert (cell.place.id, cell.value, cell.period, cell.unit) == (
        "country:AFG",
        41_454_761,
        "2023",
        "people",
    )
    assert cell.provenance.period == "2023"
    assert cell.provenance.source_id == "hdx-hapi-baseline-population"


def test_a_refusal_with_hapis_list_teaches_the_registry(
    sources: Sources, server: RecordedServer
) -> None:
    server.add("GET", NEEDS, status=422, body=_status_refusal())

    with pytest.raises(SourceFetchError):
        sources.read(
            "hdx-hapi-humanitarian-needs",
            {"unit": "country:SDN", "population_status": "INN"},
            cell=False,
        )

    learned = sources.registry.get("hdx-hapi-humanitarian-needs")
    assert learned is not None
    found = learned.filter_key("population_status")
    assert found is not None and found.options == ("AFF", "INN", "TGT", "REA", "all")


def _status_refusal() -> str:
    # Were HAPI to refuse a status the row declares (its list changed), the refusal names
    # the list HAPI takes now, and the registry keeps it.
    return json.dumps(
        {
            "detail": [
                {
                    "type": "enum",
                    "loc": ["query", "population_status"],
                    "msg": "Input should be 'AFF', 'INN', 'TGT', 'REA' or 'all'",
                }
            ]
        }
    )


def test_a_country_hapi_does_not_hold_answers_no_rows_and_says_so(
    server: RecordedServer,
) -> None:
    server.add("GET", NEEDS, body='{"data": []}')

    table = HapiConnector(app_identifier=IDENTIFIER).fetch(
        Request(
            source=live_source("hdx-hapi-humanitarian-needs", base_url=server.base_url),
            units=(FINLAND,),
            policy=fast(),
        )
    )

    assert table.rows == ()
    assert any("not every country" in note for note in table.notes)


def test_people_in_need_in_a_country_is_one_cell(sources: Sources, server: RecordedServer) -> None:
    # What HAPI answers for these filters: the recording's rows it would keep.
    recorded = json.loads((RECORDED / RECORDINGS / "humanitarian_needs_sdn.json").read_bytes())
    kept = [
        record
        for record in recorded["data"]
        if (record["sector_code"], record["population_status"]) == ("Intersectoral", "INN")
    ]
    server.add(
        "GET",
        NEEDS,
        query={"sector_code": "Intersectoral", "population_status": "INN"},
        body=json.dumps({"data": kept}),
    )

    cell = sources.read(
        "hdx-hapi-humanitarian-needs",
        {
            "unit": "country:SDN",
            "sector_code": "Intersectoral",
            "population_status": "INN",
            "category": "total",
            "period": "latest",
        },
        cell=True,
    )

    assert isinstance(cell, Cell)
    assert (cell.place.id, cell.value, cell.period) == ("country:SDN", 30_400_000, "2025")
    assert cell.provenance.licence.startswith("per HDX dataset")
