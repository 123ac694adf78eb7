"""The World Bank connector, against hand-written answers of the Indicators API v2 served
on 127.0.0.1: pages read in turn, aggregates left out and said so, and each way the API
fails (a slow answer, a 429, a body that is not JSON, rows whose fields were renamed, an
indicator it does not have, a country it refuses) told as a fetch error a model can act on.
"""

from __future__ import annotations

import pytest
from tests.sources.connectors.support import FINLAND, HELSINKI, SWEDEN, fast, live_source

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
