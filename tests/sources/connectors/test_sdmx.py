"""The SDMX connector, against hand-written SDMX-ML 2.1 generic data (Eurostat, ILO) and
SDMX-JSON 1.0 (OECD) served on 127.0.0.1: the URL is built here and sdmx1 only parses,
Eurostat's EL and UK are read as GR and GB and said so, aggregates are left out, and a
hostile, broken or reshaped body or a service failure is a fetch error a model can act on.
"""

from __future__ import annotations

import re

import pytest
from tests.sources.connectors.support import FINLAND, GREECE, HELSINKI, fast, live_source

from geomint.sources.connectors.base import PeriodFilter, Request, SourceFetchError, Table
from geomint.sources.connectors.sdmx import SdmxConnector
from geomint.testing import RecordedServer

RECORDINGS = "sdmx"
DEMO = "/data/DEMO_PJAN/" + re.escape("A.NR.TOTAL.T.FI+EL")
GENERIC = "application/vnd.sdmx.genericdata+xml;version=2.1"


def _fetch(server: RecordedServer, source_id: str, **kwargs: object) -> Table:
    source = live_source(source_id, base_url=server.base_url)
    policy = kwargs.pop("policy", fast())
    table = SdmxConnector().fetch(Request(source=source, policy=policy, **kwargs))  # type: ignore[arg-type]
    assert isinstance(table, Table)
    return table


def _refused(server: RecordedServer, source_id: str, **kwargs: object) -> SourceFetchError:
    with pytest.raises(SourceFetchError) as caught:
        _fetch(server, source_id, **kwargs)
    return caught.value


def test_eurostat_generic_data_read_in_iso_codes(server: RecordedServer) -> None:
    server.add("GET", DEMO, file="estat_demo_pjan.xml", content_type="application/xml")

    table = _fetch(
        server,
        "eurostat-population-1-january",
        units=(FINLAND, GREECE),
        period=PeriodFilter(start=2023, end=2024),
    )

    assert [(r.unit_code, r.period, r.value) for r in table.rows] == [
        ("FI", "2023", 5563970),
        ("FI", "2024", 5603851),
        ("GR", "2023", 10413982),
        ("GR", "2024", None),
    ]
    assert table.rows[1].extra["OBS_FLAG"] == "p"
    assert table.rows[0].extra["sex"] == "T"
    assert table.code_system == "iso2"
    assert table.unit == "people"
    assert "Eurostat names GR as EL; the rows give the ISO codes" in table.notes
    assert "left out the rows of areas that are not countries: EU27_2020" in table.notes
    sent = server.requests[0]
    assert sent.param("startPeriod") == "2023"
    assert sent.param("endPeriod") == "2024"
    assert sent.headers["accept"] == GENERIC


def test_a_published_sex_code_fills_its_slot_of_the_key(server: RecordedServer) -> None:
    path = "/data/ILO,DF_UNE_2EAP_SEX_AGE_RT,1.0/" + re.escape("FIN.A..SEX_F.AGE_YTHADULT_YGE15")
    server.add("GET", path, file="ilo_unemployment.xml", content_type="application/xml")

    table = _fetch(
        server,
        "ilo-unemployment-rate",
        units=(FINLAND,),
        options={"sex": "SEX_F"},
        period=PeriodFilter(latest=True),
    )

    assert [(r.unit_code, r.period, r.value) for r in table.rows] == [("FIN", "2024", 7.8)]
    assert table.rows[0].extra["SEX"] == "SEX_F"
    assert server.requests[0].param("lastNObservations") == "1"
    assert table.code_system == "iso3"


def test_oecd_sdmx_json_read_and_its_aggregate_left_out(server: RecordedServer) -> None:
    path = "/data/OECD.SDD.TPS,DSD_PRICES@DF_PRICES_ALL,1.0/" + re.escape("FIN.A.N.CPI.PA._T.N.GY")
    server.add("GET", path, file="oecd_cpi.json")

    table = _fetch(server, "oecd-consumer-price-inflation", units=(FINLAND,))

    assert [(r.unit_code, r.period, r.value) for r in table.rows] == [
        ("FIN", "2022", 6.3),
        ("FIN", "2023", 6.2),
        ("FIN", "2024", 1.6),
    ]
    assert "left out the rows of areas that are not countries: OECD" in table.notes
    assert server.requests[0].headers["accept"] == "application/vnd.sdmx.data+json;version=1.0.0"


def test_a_sex_code_the_source_does_not_publish_is_refused_with_its_options(
    server: RecordedServer,
) -> None:
    error = _refused(
        server, "eurostat-population-1-january", units=(FINLAND,), options={"sex": "W"}
    )

    assert error.code == "refused_filter"
    assert error.key == "sex"
    assert error.options == ("T", "M", "F")
    assert "has no sex 'W'; it takes T, M, F" in str(error)
    assert server.requests == []


def test_a_city_is_refused_and_its_country_suggested(server: RecordedServer) -> None:
    error = _refused(server, "eurostat-population-1-january", units=(HELSINKI,))

    assert error.code == "refused_filter"
    assert "ask for its country instead (country:FIN)" in str(error)


def test_a_slow_answer_is_a_timeout(server: RecordedServer) -> None:
    server.add("GET", DEMO, file="estat_demo_pjan.xml", delay_s=2.0)

    error = _refused(
        server,
        "eurostat-population-1-january",
        units=(FINLAND, GREECE),
        policy=fast(timeout_s=0.3),
    )

    assert error.code == "timeout"
    assert "Eurostat's SDMX service did not answer in time" in str(error)


def test_a_429_is_rate_limited_with_the_wait_asked(server: RecordedServer) -> None:
    server.add("GET", DEMO, status=429, headers={"Retry-After": "60"}, body="Too many requests")

    error = _refused(server, "eurostat-population-1-january", units=(FINLAND, GREECE))

    assert error.code == "rate_limited"
    assert error.retry_after == 60
    assert "try again in 60 s" in str(error)


def test_no_results_is_not_found_and_quotes_no_markup(server: RecordedServer) -> None:
    server.add("GET", DEMO, status=404, file="no_results.xml", content_type="application/xml")

    error = _refused(server, "eurostat-population-1-january", units=(FINLAND, GREECE))

    assert error.code == "not_found"
    message = str(error)
    assert "Eurostat has no data of DEMO_PJAN for key A.NR.TOTAL.T.FI+EL" in message
    assert "<" not in message
    assert "ask for other years or latest" in message


def test_a_plain_404_is_quoted(server: RecordedServer) -> None:
    server.add("GET", DEMO, status=404, body="NoRecordsFound", content_type="text/plain")

    error = _refused(server, "eurostat-population-1-january", units=(FINLAND, GREECE))

    assert error.code == "not_found"
    assert "(NoRecordsFound)" in str(error)


@pytest.mark.parametrize(
    ("body", "said"),
    [
        ("<html><body>Maintenance</body></html>", "does not parse as SDMX"),
        ("<!DOCTYPE".encode("utf-16"), "it is not UTF-8 text"),
    ],
)
def test_a_body_that_is_not_sdmx_is_malformed(
    server: RecordedServer, body: str | bytes, said: str
) -> None:
    server.add("GET", DEMO, body=body, content_type="text/html")

    error = _refused(server, "eurostat-population-1-january", units=(FINLAND, GREECE))

    assert error.code == "malformed"
    assert said in str(error)


def test_entity_declarations_are_refused_before_parsing(server: RecordedServer) -> None:
    server.add("GET", DEMO, file="entity_expansion.xml", content_type="application/xml")

    error = _refused(server, "eurostat-population-1-january", units=(FINLAND, GREECE))

    assert error.code == "malformed"
    assert "document type declaration" in str(error)
    assert "refused before parsing" in str(error)


def test_structure_specific_data_is_refused_with_the_setting_to_change(
    server: RecordedServer,
) -> None:
    server.add("GET", DEMO, file="structure_specific.xml", content_type="application/xml")

    error = _refused(server, "eurostat-population-1-january", units=(FINLAND, GREECE))

    assert error.code == "malformed"
    assert "format 'generic' or 'json'" in str(error)


def test_a_body_too_large_for_the_policy_is_unavailable(server: RecordedServer) -> None:
    server.add("GET", DEMO, file="estat_demo_pjan.xml", content_type="application/xml")

    error = _refused(
        server,
        "eurostat-population-1-january",
        units=(FINLAND, GREECE),
        policy=fast(max_bytes=500),
    )

    assert error.code == "unavailable"
    assert "ask for fewer units or years" in str(error)


def test_a_renamed_geography_dimension_is_changed(server: RecordedServer) -> None:
    server.add("GET", DEMO, file="changed_dimension.xml", content_type="application/xml")

    error = _refused(server, "eurostat-population-1-january", units=(FINLAND, GREECE))

    assert error.code == "changed"
    message = str(error)
    assert "without the geo this source reads" in message
    assert "GEO_AREA" in message
