"""The World Bank connector, against hand-written answers of the Indicators API v2 served
on 127.0.0.1: pages read in turn, aggregates left out and said so, and each way the API
fails (a slow answer, a 429, a body that is not JSON, rows whose fields were renamed, an
indicator it does not have, a country it refuses) told as a fetch error a model can act on.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable

import httpx
import pytest
from tests.sources.connectors.support import FINLAND, HELSINKI, SWEDEN, fast, live_source

from geomint.http import ScriptedTransport
from geomint.sources.connectors import worldbank
from geomint.sources.connectors.base import PeriodFilter, Request, SourceFetchError, Table
from geomint.sources.connectors.worldbank import WorldBankConnector
from geomint.testing import RecordedServer

RECORDINGS = "worldbank"
PATH = "/v2/country/FIN;SWE/indicator/SP.POP.TOTL"


def _request(server: RecordedServer, **kwargs: object) -> Request:
    source = live_source("worldbank-population", base_url=server.base_url, per_page=3)
    policy = kwargs.pop("policy", fast())
    return Request(source=source, policy=policy, **kwargs)  # type: ignore[arg-type]


def _fetch(request: Request) -> Table:
    table = WorldBankConnector().fetch(request)
    assert isinstance(table, Table)
    return table


def test_reads_every_page_into_rows_named_by_iso3(server: RecordedServer) -> None:
    server.add("GET", PATH, query={"page": "1"}, file="population_page1.json")
    server.add("GET", PATH, query={"page": "2"}, file="population_page2.json")

    table = _fetch(
        _request(server, units=(FINLAND, SWEDEN), period=PeriodFilter(start=2019, end=2020))
    )

    assert [(r.unit_code, r.period, r.value) for r in table.rows] == [
        ("FIN", "2020", 5529543),
        ("FIN", "2019", 5521606),
        ("SWE", "2020", 10353442),
        ("SWE", "2019", None),
    ]
    assert table.rows[0].unit_name == "Finland"
    assert table.rows[3].extra == {"obs_status": "E", "decimal": 0}
    assert table.code_system == "iso3"
    assert table.last_updated == "2025-07-01"
    assert table.unit == "people"  # the row's unit is empty, so the profile's
    sent = server.sent(PATH)
    assert [s.param("page") for s in sent] == ["1", "2"]
    assert {s.param("date") for s in sent} == {"2019:2020"}
    assert {s.param("format") for s in sent} == {"json"}
    assert table.url is not None and "page=1" in table.url


def test_latest_asks_for_the_most_recent_value_and_leaves_out_aggregates(
    server: RecordedServer,
) -> None:
    path = "/v2/country/all/indicator/SP.POP.TOTL"
    server.add("GET", path, query={"mrv": "1"}, file="population_latest_all.json")

    table = _fetch(_request(server, period=PeriodFilter(latest=True)))

    assert [r.unit_code for r in table.rows] == ["FIN", "AFG"]
    assert any("left out 1 rows for regions and groups" in note for note in table.notes)
    assert "date" not in server.sent(path)[0].query


def test_latest_within_years_keeps_each_countrys_newest_value(server: RecordedServer) -> None:
    server.add("GET", PATH, query={"page": "1"}, file="population_page1.json")
    server.add("GET", PATH, query={"page": "2"}, file="population_page2.json")

    table = _fetch(
        _request(
            server,
            units=(FINLAND, SWEDEN),
            period=PeriodFilter(start=2019, end=2020, latest=True),
        )
    )

    assert [(r.unit_code, r.period) for r in table.rows] == [("FIN", "2020"), ("SWE", "2020")]


def test_a_slow_answer_is_a_timeout(server: RecordedServer) -> None:
    server.add("GET", PATH, body="[]", delay_s=2.0)

    with pytest.raises(SourceFetchError) as caught:
        _fetch(_request(server, units=(FINLAND, SWEDEN), policy=fast(timeout_s=0.3)))

    assert caught.value.code == "timeout"
    assert "did not answer in time" in str(caught.value)


def test_a_429_is_rate_limited_with_the_wait_the_service_asked(server: RecordedServer) -> None:
    server.add("GET", PATH, status=429, headers={"Retry-After": "30"}, body="slow down")

    with pytest.raises(SourceFetchError) as caught:
        _fetch(_request(server, units=(FINLAND, SWEDEN)))

    assert caught.value.code == "rate_limited"
    assert caught.value.retry_after == 30
    assert "try again in 30 s" in str(caught.value)


def test_a_429_then_an_answer_is_retried(server: RecordedServer) -> None:
    from geomint.testing import RecordedReply

    waits: list[float] = []
    server.add(
        "GET",
        PATH,
        replies=[
            RecordedReply(status=429, headers={"Retry-After": "1"}, body="slow down"),
            RecordedReply(file="population_latest_all.json"),
        ],
    )

    table = _fetch(
        _request(server, units=(FINLAND, SWEDEN), policy=fast(max_attempts=2, sleep=waits.append))
    )

    assert waits == [1.0]
    assert len(table.rows) == 2


def test_a_body_that_is_not_json_is_malformed(server: RecordedServer) -> None:
    server.add("GET", PATH, body="<html><body>Service maintenance</body></html>")

    with pytest.raises(SourceFetchError) as caught:
        _fetch(_request(server, units=(FINLAND, SWEDEN)))

    assert caught.value.code == "malformed"
    assert "Service maintenance" in str(caught.value)


def test_rows_whose_fields_were_renamed_are_changed(server: RecordedServer) -> None:
    server.add("GET", PATH, file="changed_fields.json")

    with pytest.raises(SourceFetchError) as caught:
        _fetch(_request(server, units=(FINLAND, SWEDEN)))

    assert caught.value.code == "changed"
    message = str(caught.value)
    assert "countryiso3code, country, date missing" in message
    assert "no table was made" in message


@pytest.mark.parametrize("recording", ["error_no_indicator.json", "error_no_indicator.xml"])
def test_an_indicator_it_does_not_have_is_not_found(server: RecordedServer, recording: str) -> None:
    server.add("GET", PATH, file=recording)

    with pytest.raises(SourceFetchError) as caught:
        _fetch(_request(server, units=(FINLAND, SWEDEN)))

    assert caught.value.code == "not_found"
    message = str(caught.value)
    assert "has no indicator 'SP.POP.TOTL'" in message
    assert "The indicator was not found" in message
    assert "use find_sources" in message


def test_a_country_code_it_refuses_is_a_refused_filter(server: RecordedServer) -> None:
    server.add("GET", PATH, file="error_invalid_value.json")

    with pytest.raises(SourceFetchError) as caught:
        _fetch(_request(server, units=(FINLAND, SWEDEN)))

    assert caught.value.code == "refused_filter"
    assert caught.value.key == "unit"
    assert "refused the countries asked (FIN, SWE)" in str(caught.value)


def test_a_city_is_refused_before_any_request_and_its_country_suggested(
    server: RecordedServer,
) -> None:
    with pytest.raises(SourceFetchError) as caught:
        _fetch(_request(server, units=(HELSINKI,)))

    assert caught.value.code == "refused_filter"
    assert "ask for its country instead (country:FIN)" in str(caught.value)
    assert server.requests == []


def test_a_server_error_is_unavailable(server: RecordedServer) -> None:
    server.add("GET", PATH, status=503, body="Service Unavailable")

    with pytest.raises(SourceFetchError) as caught:
        _fetch(_request(server, units=(FINLAND, SWEDEN)))

    assert caught.value.code == "unavailable"
    assert "503" in str(caught.value)


# --- hostile answers: each is bounded in time and memory, and told as a fetch error ------


def _scripted(
    answer: Callable[[httpx.Request], httpx.Response], **policy: object
) -> tuple[Request, ScriptedTransport]:
    transport = ScriptedTransport(answer)
    source = live_source("worldbank-population", base_url="https://api.worldbank.org")
    request = Request(source=source, units=(FINLAND,), policy=fast(transport=transport, **policy))
    return request, transport


def _page_of(records: list[dict[str, object]], *, pages: int = 1) -> bytes:
    header = {"page": 1, "pages": pages, "per_page": 1000, "lastupdated": "2025-07-01"}
    return json.dumps([header, records]).encode()


def _record(value: object = 1, **changes: object) -> dict[str, object]:
    record = {
        "countryiso3code": "FIN",
        "country": {"id": "FI", "value": "Finland"},
        "date": "2020",
        "value": value,
        "unit": "",
    }
    return {**record, **changes}


def _failure(request: Request) -> SourceFetchError:
    with pytest.raises(SourceFetchError) as caught:
        _fetch(request)
    return caught.value


@pytest.mark.parametrize(
    "body",
    [
        "<message " + 'id="a" ' * 1000,  # 7 kB held the interpreter for 16 s
        "<wb:message " + 'key="k" ' * 200_000,
        "<" + "message " * 100_000,
    ],
    ids=["repeated-id", "repeated-key-1.6MB", "repeated-tag"],
)
def test_an_xml_body_crafted_to_backtrack_is_malformed_at_once(body: str) -> None:
    request, _ = _scripted(lambda r: httpx.Response(200, content=body.encode()))

    started = time.perf_counter()
    error = _failure(request)

    assert time.perf_counter() - started < 0.5
    assert error.code == "malformed"
    assert "not the World Bank's error message" in str(error)


def test_an_xml_error_with_its_key_before_its_id_is_still_read() -> None:
    body = (
        '\ufeff<?xml version="1.0" encoding="utf-8"?><wb:error xmlns:wb="http://www.worldbank.org">'
        '<wb:message key="Invalid value" id="120">The provided parameter value is not valid'
        "</wb:message></wb:error>"
    )
    request, _ = _scripted(lambda r: httpx.Response(200, content=body.encode()))

    error = _failure(request)

    assert error.code == "refused_filter"
    assert "(message 120, Invalid value)" in str(error)


def test_json_nested_deeper_than_python_goes_is_malformed() -> None:
    deep = b"[" * 200_000 + b"]" * 200_000
    request, _ = _scripted(lambda r: httpx.Response(200, content=deep))

    error = _failure(request)

    assert error.code == "malformed"
    assert "nests deeper than geomint reads" in str(error)


@pytest.mark.parametrize(
    "value",
    ["1e400", "-1e400", "NaN", "Infinity", "1" + "0" * 400],
    ids=["inf", "-inf", "NaN", "Infinity", "huge-int"],
)
def test_a_value_that_is_not_a_finite_number_is_malformed(value: str) -> None:
    body = _page_of([_record()]).replace(b'"value": 1', b'"value": ' + value.encode())
    request, _ = _scripted(lambda r: httpx.Response(200, content=body))

    error = _failure(request)

    assert error.code == "malformed"


def test_the_service_cannot_page_past_the_rows_one_fetch_holds(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(worldbank, "_MAX_ROWS", 25)
    page = _page_of([_record()] * 10, pages=50)
    request, transport = _scripted(lambda r: httpx.Response(200, content=page))

    error = _failure(request)

    assert error.code == "unavailable"
    assert "more than 25 rows" in str(error)
    assert "narrow it by unit (fewer countries) or period" in str(error)
    assert len(transport.requests) == 3


def test_the_service_cannot_page_past_the_bytes_one_fetch_holds(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    page = _page_of([_record()] * 10, pages=50)
    monkeypatch.setattr(worldbank, "_MAX_TOTAL_BYTES", len(page) * 4)
    request, transport = _scripted(lambda r: httpx.Response(200, content=page))

    error = _failure(request)

    assert error.code == "unavailable"
    assert f"more than {len(page) * 4:,} bytes over 5 pages" in str(error)
    assert len(transport.requests) == 5


def test_a_page_is_capped_below_the_callers_max_bytes(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(worldbank, "_MAX_PAGE_BYTES", 1_000)
    page = _page_of([_record()] * 20)
    request, _ = _scripted(lambda r: httpx.Response(200, content=page))

    error = _failure(request)

    assert error.code == "unavailable"
    assert "max_bytes=1,000" in str(error)
    assert request.policy.max_bytes == 20_000_000  # the caller's policy is left as it was


def test_one_deadline_holds_for_every_page() -> None:
    page = _page_of([_record()], pages=50)

    def slow(request: httpx.Request) -> httpx.Response:
        time.sleep(0.15)
        return httpx.Response(200, content=page)

    request, transport = _scripted(slow, timeout_s=0.5)

    started = time.perf_counter()
    error = _failure(request)

    assert time.perf_counter() - started < 1.0
    assert error.code == "timeout"
    assert "within timeout_s=0.5 s" in str(error)
    assert len(transport.requests) < 5


@pytest.mark.parametrize(
    "unit", ["u" * 41, "people\x1b[2J", "  "], ids=["long", "control", "blank"]
)
def test_a_unit_a_table_cannot_carry_gives_way_to_the_profiles(unit: str) -> None:
    page = _page_of([_record(unit=unit)])
    request, _ = _scripted(lambda r: httpx.Response(200, content=page))

    table = _fetch(request)

    assert table.unit == "people"
    assert table.rows[0].value == 1


def test_remote_texts_of_a_row_are_kept_only_when_short() -> None:
    record = _record(country={"id": "FI", "value": "F" * 300}, obs_status=["nested"])
    page = _page_of([record])
    request, _ = _scripted(lambda r: httpx.Response(200, content=page))

    table = _fetch(request)

    assert table.rows[0].unit_name is None
    assert table.rows[0].extra == {}
