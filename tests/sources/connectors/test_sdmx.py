"""The SDMX connector, against hand-written SDMX-ML 2.1 generic data (Eurostat, ILO) and
SDMX-JSON 1.0 (OECD) served on 127.0.0.1: the URL is built here and sdmx1 only parses,
Eurostat's EL and UK are read as GR and GB and said so, aggregates are left out, and a
hostile, broken or reshaped body or a service failure is a fetch error a model can act on.
"""

from __future__ import annotations

import base64
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest
from tests.sources.connectors.support import (
    FINLAND,
    GREECE,
    HELSINKI,
    RECORDED,
    fast,
    live_source,
    sdmx_in_process,
)

import geomint
from geomint.sources.connectors import _confined_sdmx, _sdmx_child
from geomint.sources.connectors.base import PeriodFilter, Request, SourceFetchError, Table
from geomint.sources.connectors.sdmx import SdmxConnector
from geomint.testing import RecordedServer

RECORDINGS = "sdmx"
DEMO = "/data/DEMO_PJAN/" + re.escape("A.NR.TOTAL.T.FI+EL")
GENERIC = "application/vnd.sdmx.genericdata+xml;version=2.1"


def _fetch(server: RecordedServer, source_id: str, **kwargs: object) -> Table:
    source = live_source(source_id, base_url=server.base_url)
    policy = kwargs.pop("policy", fast())
    table = SdmxConnector(reader=sdmx_in_process).fetch(
        Request(source=source, policy=policy, **kwargs)
    )  # type: ignore[arg-type]
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


# --- hostile answers --------------------------------------------------------------------


def _utf7(text: str) -> bytes:
    """``text`` in UTF-7 with every character in one base64 run: no '<' shows."""
    return ("+" + base64.b64encode(text.encode("utf-16-be")).decode().rstrip("=") + "-").encode()


@pytest.mark.parametrize(
    ("body", "said"),
    [
        (
            b'<?xml version="1.0" encoding="UTF-7"?>'
            + _utf7('<!DOCTYPE r [<!ENTITY x "hello">]><r>&x;</r>'),
            "names the encoding 'UTF-7'",
        ),
        (b"<?xml version=\"1.0\" encoding='utf-16'?><r/>", "names the encoding 'utf-16'"),
        (b'<?xml version="1.0"' + b" " * 400 + b"?><r/>", "none geomint can read"),
        ("<!DOCTYPE r><r/>".encode("utf-16-le"), "NUL characters"),
        ("<!DOCTYPE r><r/>".encode("utf-32"), "it is not UTF-8 text"),
        ("\ufeff<!DOCTYPE r><r/>".encode("utf-16-be"), "it is not UTF-8 text"),
    ],
    ids=["utf-7", "utf-16-declared", "endless-declaration", "utf-16-no-bom", "utf-32", "bom"],
)
def test_a_body_that_could_hide_markup_is_refused_before_parsing(
    server: RecordedServer, body: bytes, said: str
) -> None:
    server.add("GET", DEMO, body=body, content_type="application/xml")

    error = _refused(server, "eurostat-population-1-january", units=(FINLAND, GREECE))

    assert error.code == "malformed"
    assert said in str(error)


@pytest.mark.parametrize(
    "declared", ['encoding="UTF-8"', "encoding='utf-8'", 'encoding="US-ASCII"', ""]
)
def test_a_utf8_or_ascii_declaration_is_read(server: RecordedServer, declared: str) -> None:
    recorded = (RECORDED / RECORDINGS / "estat_demo_pjan.xml").read_text("utf-8")
    body = recorded.replace('encoding="UTF-8"', declared, 1)
    server.add("GET", DEMO, body=body, content_type="application/xml")

    table = _fetch(server, "eurostat-population-1-january", units=(FINLAND, GREECE))

    assert len(table.rows) == 4


@pytest.mark.parametrize("value", ["abc", "1e400", "-inf", "0x10"])
def test_a_value_that_is_not_a_finite_number_is_malformed(
    server: RecordedServer, value: str
) -> None:
    recorded = (RECORDED / RECORDINGS / "estat_demo_pjan.xml").read_text("utf-8")
    body = recorded.replace('value="5563970"', f'value="{value}"')
    server.add("GET", DEMO, body=body, content_type="application/xml")

    error = _refused(server, "eurostat-population-1-january", units=(FINLAND, GREECE))

    assert error.code == "malformed"
    assert "cannot read" in str(error)  # not an uncaught ValueError, never inf


@pytest.mark.parametrize("code", ["Y_GE65.M", "....", "T+M"])
def test_a_code_with_sdmx_key_syntax_is_refused(server: RecordedServer, code: str) -> None:
    source = live_source("eurostat-population-1-january", base_url=server.base_url)
    opened = source.model_copy(
        update={"filters": tuple(f.model_copy(update={"options": ()}) for f in source.filters)}
    )
    request = Request(source=opened, units=(FINLAND,), options={"sex": code}, policy=fast())

    with pytest.raises(SourceFetchError) as caught:
        SdmxConnector(reader=sdmx_in_process).fetch(request)

    assert caught.value.code == "refused_filter"
    assert server.requests == []


def test_the_fetch_is_capped_below_the_callers_max_bytes(server: RecordedServer) -> None:
    big = b"<x>" + b" " * 8_000_001 + b"</x>"
    server.add("GET", DEMO, body=big, content_type="application/xml")
    policy = fast(max_bytes=50_000_000)

    error = _refused(
        server, "eurostat-population-1-january", units=(FINLAND, GREECE), policy=policy
    )

    assert error.code == "unavailable"
    assert "max_bytes=8,000,000" in str(error)
    assert policy.max_bytes == 50_000_000


@pytest.mark.parametrize(
    ("reply", "said"),
    [
        (b"not json", "the SDMX reader's answer for S was malformed"),
        (b"[" * 300_000 + b"]" * 300_000, "the SDMX reader's answer for S was malformed"),
        (b'{"ok": true, "dims": ["a"], "attributes": [], "rows": [["x"]]}', "was malformed"),
        (b'{"ok": true, "dims": ["a"], "attributes": [], "rows": [[1, 2]]}', "was malformed"),
        (b'{"ok": true, "dims": ["a"], "attributes": [], "rows": [["x", "1"]]}', "not a finite"),
        (b'{"ok": true, "dims": ["a"], "attributes": [], "rows": [["x", 1e400]]}', "malformed"),
        (b'{"ok": true, "dims": [{}], "attributes": [], "rows": []}', "was malformed"),
        (b'{"ok": false}', "was malformed"),
        (b'{"ok": false, "problem": "bad\\u001b[2J"}', "cannot read: bad [2J"),
        (b'{"ok": false, "too_many": 200000}', "200,000 observations"),
        (b'{"ok": false, "memory": true}', "needed more than 1,024 MB"),
    ],
    ids=[
        "not-json",
        "nested",
        "short-row",
        "key-not-text",
        "value-text",
        "value-inf",
        "dim-name",
        "no-problem",
        "control-chars",
        "too-many",
        "memory",
    ],
)
def test_the_childs_answer_is_checked_for_shape(reply: bytes, said: str) -> None:
    with pytest.raises(SourceFetchError) as caught:
        _confined_sdmx.decode(reply, "S")

    assert said in str(caught.value)
    assert caught.value.code in ("malformed", "unavailable")


def test_too_many_observations_are_refused_by_the_child(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_sdmx_child, "MAX_ROWS", 3)
    body = (RECORDED / RECORDINGS / "estat_demo_pjan.xml").read_bytes()

    with pytest.raises(SourceFetchError) as caught:
        _confined_sdmx.decode(_sdmx_child.answer(body), "S")

    assert caught.value.code == "unavailable"
    assert "5 observations" in str(caught.value)


def test_without_a_confined_reader_nothing_is_parsed(
    server: RecordedServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(_confined_sdmx, "_HANDLER", "geomint.no_such_handler")
    monkeypatch.setattr(_confined_sdmx, "_CHILDREN", _confined_sdmx._Children())
    server.add("GET", DEMO, file="estat_demo_pjan.xml", content_type="application/xml")
    source = live_source("eurostat-population-1-january", base_url=server.base_url)

    with pytest.raises(SourceFetchError) as caught:
        SdmxConnector().fetch(Request(source=source, units=(FINLAND, GREECE), policy=fast()))

    assert caught.value.code == "unavailable"
    assert "the confined SDMX reader cannot start on this machine" in str(caught.value)
    assert "parses no answer of Eurostat's SDMX service outside it" in str(caught.value)


# --- the confined child, end to end --------------------------------------------------------


def _installed_is_this_tree() -> bool:
    """Whether a confined child (``python -I``) imports this tree's geomint."""
    found = subprocess.run(
        [sys.executable, "-I", "-c", "import geomint; print(geomint.__file__)"],
        capture_output=True,
        text=True,
        check=False,
    )
    return Path(found.stdout.strip()).resolve() == Path(geomint.__file__).resolve()


confined = pytest.mark.skipif(
    not _installed_is_this_tree(),
    reason="a confined child imports the installed geomint, which is not this tree",
)


@pytest.mark.isolation
@confined
def test_a_confined_child_parses_the_answer(server: RecordedServer) -> None:
    server.add("GET", DEMO, file="estat_demo_pjan.xml", content_type="application/xml")
    source = live_source("eurostat-population-1-january", base_url=server.base_url)

    table = SdmxConnector().fetch(
        Request(source=source, units=(FINLAND, GREECE), policy=fast(timeout_s=30.0))
    )

    assert isinstance(table, Table)
    assert [(r.unit_code, r.period, r.value) for r in table.rows] == [
        ("FI", "2023", 5563970),
        ("FI", "2024", 5603851),
        ("GR", "2023", 10413982),
        ("GR", "2024", None),
    ]
    assert table.rows[1].extra["OBS_FLAG"] == "p"


@pytest.mark.isolation
@confined
def test_a_body_too_costly_to_parse_is_stopped_at_the_wall_clock(server: RecordedServer) -> None:
    recorded = (RECORDED / RECORDINGS / "estat_demo_pjan.xml").read_text("utf-8")
    head, _, _ = recorded.partition("<message:DataSet")
    series = "".join(
        '<generic:Series><generic:SeriesKey><generic:Value id="freq" value="A"/>'
        f'<generic:Value id="age" value="Y{s}"/><generic:Value id="sex" value="T"/>'
        '<generic:Value id="geo" value="FI"/></generic:SeriesKey>'
        + "".join(
            f'<generic:Obs><generic:ObsDimension value="{1900 + y}"/>'
            f'<generic:ObsValue value="{y}"/></generic:Obs>'
            for y in range(60)
        )
        + "</generic:Series>"
        for s in range(800)
    )
    body = (
        f'{head}<message:DataSet structureRef="S">{series}</message:DataSet></message:GenericData>'
    )
    server.add("GET", DEMO, body=body, content_type="application/xml")
    source = live_source("eurostat-population-1-january", base_url=server.base_url)

    started = time.monotonic()
    with pytest.raises(SourceFetchError) as caught:
        SdmxConnector().fetch(
            Request(source=source, units=(FINLAND, GREECE), policy=fast(timeout_s=0.5))
        )

    assert caught.value.code == "timeout"
    assert "took longer than 2.0 s and was stopped" in str(caught.value)
    assert time.monotonic() - started < 4.0
