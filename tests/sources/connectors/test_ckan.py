"""The CKAN connector, against hand-written answers of a CKAN action API served on
127.0.0.1: a search is a listing with each dataset's own licence, a dataset lists its
resources, a resource is downloaded as raw bytes with its dataset's licence, and each
way a portal fails or refuses is a fetch error a model can act on.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from tests.sources.connectors.support import FINLAND, RECORDED, fast, live_source

from geomint.sources.connectors import ckan
from geomint.sources.connectors.base import (
    Download,
    Listing,
    PeriodFilter,
    Request,
    SourceFetchError,
)
from geomint.sources.connectors.ckan import CkanConnector
from geomint.testing import RecordedServer

RECORDINGS = "ckan"
ACTION = "/api/3/action/"
DATASET = "helsingin-pyorailijamaarat"
CSV_RESOURCE = "a1b2c3d4-0001-4e5f-8a9b-111111111111"


def _serve(server: RecordedServer, action: str, recording: str, status: int = 200) -> None:
    """Answer an action with a recording whose {BASE} is this server's address."""
    text = (RECORDED / RECORDINGS / recording).read_text("utf-8")
    server.add("GET", ACTION + action, status=status, body=text.replace("{BASE}", server.base_url))


def _fetch(server: RecordedServer, **kwargs: object) -> Listing | Download:
    source = live_source("hri-catalogue", base_url=server.base_url)
    policy = kwargs.pop("policy", fast())
    return CkanConnector().fetch(Request(source=source, policy=policy, **kwargs))  # type: ignore[arg-type]


def _refused(server: RecordedServer, **kwargs: object) -> SourceFetchError:
    with pytest.raises(SourceFetchError) as caught:
        _fetch(server, **kwargs)
    return caught.value


def test_a_search_is_a_listing_with_each_datasets_licence(server: RecordedServer) -> None:
    _serve(server, "package_search", "package_search.json")

    listing = _fetch(server, options={"q": "pyöräily", "rows": "2"})

    assert isinstance(listing, Listing)
    assert listing.count == 27
    first, second = listing.datasets
    assert first.name == DATASET
    assert first.title == "Helsingin pyöräilijämäärät"
    assert first.organisation == "Helsingin kaupunkiympäristön toimiala"
    assert (first.licence_id, first.licence_title) == (
        "cc-by-4.0",
        "Creative Commons Attribution 4.0",
    )
    assert [(r.format, r.size) for r in first.resources] == [
        ("CSV", 48213),
        ("GeoJSON", None),
        (None, None),
    ]
    assert (second.licence_id, second.licence_title, second.organisation) == (None, None, None)
    assert "showing 2 of 27 datasets; narrow q, or ask for up to 100 rows" in listing.notes
    sent = server.requests[0]
    assert (sent.param("q"), sent.param("rows"), sent.param("start")) == ("pyöräily", "2", "0")


def test_units_and_years_are_not_used_and_that_is_said(server: RecordedServer) -> None:
    _serve(server, "package_search", "package_search.json")

    listing = _fetch(server, units=(FINLAND,), period=PeriodFilter(start=2020), options={})

    assert isinstance(listing, Listing)
    assert any("put a place name in q" in note for note in listing.notes)
    assert any("not filtered by period" in note for note in listing.notes)
    assert server.requests[0].param("rows") == "10"


def test_a_dataset_lists_its_resources(server: RecordedServer) -> None:
    _serve(server, "package_show", "package_show.json")

    listing = _fetch(server, options={"dataset": DATASET})

    assert isinstance(listing, Listing)
    assert listing.count == 1
    assert [r.format for r in listing.datasets[0].resources] == ["CSV", "GeoJSON", None]
    assert server.requests[0].param("id") == DATASET


def test_a_resource_is_downloaded_raw_with_its_datasets_licence(server: RecordedServer) -> None:
    _serve(server, "resource_show", "resource_show.json")
    _serve(server, "package_show", "package_show.json")
    server.add(
        "GET",
        "/files/pyorailijamaarat_2025.csv",
        file="files/pyorailijamaarat_2025.csv",
        content_type="text/csv; charset=utf-8",
    )

    download = _fetch(server, options={"resource": CSV_RESOURCE})

    assert isinstance(download, Download)
    assert download.data == (RECORDED / "ckan/files/pyorailijamaarat_2025.csv").read_bytes()
    assert download.media_type == "text/csv"
    assert download.licence == "Creative Commons Attribution 4.0"
    assert download.title == "Helsingin pyöräilijämäärät"
    assert download.publisher == "Helsingin kaupunkiympäristön toimiala"
    assert download.name == "Pyöräilijämäärät 2025 (CSV)"
    assert download.url.endswith("/files/pyorailijamaarat_2025.csv")
    assert [s.param("id") for s in server.sent(ACTION + "package_show")] == [
        "5c9e2f0a-1b7d-4c55-9a3e-0f6c1d2e3a41"
    ]


def test_a_resource_not_in_the_dataset_is_refused_with_its_resources(
    server: RecordedServer,
) -> None:
    _serve(server, "package_show", "package_show.json")

    error = _refused(server, options={"dataset": DATASET, "resource": "no-such-id"})

    assert error.code == "refused_filter"
    assert error.key == "resource"
    assert error.options[0] == CSV_RESOURCE
    assert len(error.options) == 3
    assert f"{CSV_RESOURCE} (Pyöräilijämäärät 2025 (CSV), CSV)" in str(error)


def test_a_resource_that_is_a_web_page_is_refused(server: RecordedServer) -> None:
    _serve(server, "package_show", "package_show.json")
    server.add("GET", "/files/kuvaus.html", body="<html></html>", content_type="text/html")

    error = _refused(
        server, options={"dataset": DATASET, "resource": "a1b2c3d4-0003-4e5f-8a9b-333333333333"}
    )

    assert error.code == "not_found"
    assert "links to a web page, not a data file" in str(error)


def test_a_resource_on_another_private_address_is_not_fetched(server: RecordedServer) -> None:
    body = (RECORDED / "ckan/package_show.json").read_text("utf-8")
    server.add("GET", ACTION + "package_show", body=body.replace("{BASE}", "http://127.0.0.1:9"))

    error = _refused(server, options={"dataset": DATASET, "resource": CSV_RESOURCE})

    assert error.code == "unavailable"
    message = str(error)
    assert "(http://127.0.0.1:9/files/pyorailijamaarat_2025.csv) was not fetched" in message
    assert "geomint fetches only public addresses" in message


def test_a_download_over_the_size_cap_is_unavailable(server: RecordedServer) -> None:
    _serve(server, "package_show", "package_show.json")
    server.add("GET", "/files/pyorailijamaarat_2025.csv", body="x" * 5_000)

    error = _refused(
        server,
        options={"dataset": DATASET, "resource": CSV_RESOURCE},
        policy=fast(max_bytes=4_000),
    )

    assert error.code == "unavailable"
    assert "max_bytes=4,000" in str(error)


def test_a_slow_portal_is_a_timeout(server: RecordedServer) -> None:
    server.add("GET", ACTION + "package_search", body="{}", delay_s=2.0)

    error = _refused(server, options={"q": "pyöräily"}, policy=fast(timeout_s=0.3))

    assert error.code == "timeout"
    assert "Helsinki Region Infoshare open data catalogue did not answer in time" in str(error)


def test_a_429_is_rate_limited_with_the_wait_asked(server: RecordedServer) -> None:
    server.add(
        "GET", ACTION + "package_search", status=429, headers={"Retry-After": "12"}, body="{}"
    )

    error = _refused(server, options={"q": "pyöräily"})

    assert error.code == "rate_limited"
    assert error.retry_after == 12
    assert "try again in 12 s" in str(error)


def test_a_body_that_is_not_json_is_malformed(server: RecordedServer) -> None:
    server.add(
        "GET", ACTION + "package_search", body="<html>Login</html>", content_type="text/html"
    )

    error = _refused(server, options={"q": "pyöräily"})

    assert error.code == "malformed"
    assert "it is not JSON; it starts '<html>Login</html>'" in str(error)


def test_a_search_result_of_another_shape_is_changed(server: RecordedServer) -> None:
    _serve(server, "package_search", "search_changed.json")

    error = _refused(server, options={"q": "pyöräily"})

    assert error.code == "changed"
    assert "has no count and results (it has datasets, total)" in str(error)


def test_a_dataset_it_does_not_have_is_not_found(server: RecordedServer) -> None:
    _serve(server, "package_show", "not_found.json", status=404)

    error = _refused(server, options={"dataset": "no-such-dataset"})

    assert error.code == "not_found"
    assert "has no dataset 'no-such-dataset'; search with q to find its name" in str(error)


def test_a_private_dataset_is_refused(server: RecordedServer) -> None:
    _serve(server, "package_show", "authorization.json", status=403)

    error = _refused(server, options={"dataset": "liikenteen-laskentatiedot"})

    assert error.code == "refused_filter"
    assert error.key == "dataset"
    assert "it is private or needs a login" in str(error)


def test_a_search_the_portal_cannot_parse_is_refused(server: RecordedServer) -> None:
    _serve(server, "package_search", "search_query_error.json", status=409)

    error = _refused(server, options={"q": "pyöräily:"})

    assert error.code == "refused_filter"
    assert error.key == "q"
    assert "refused q 'pyöräily:' (Search Query Error)" in str(error)


@pytest.mark.parametrize("rows", ["0", "101", "ten"])
def test_rows_out_of_range_is_refused_before_any_request(server: RecordedServer, rows: str) -> None:
    error = _refused(server, options={"rows": rows})

    assert error.code == "refused_filter"
    assert "rows takes a whole number from 1 to 100" in str(error)
    assert server.requests == []


# --- hostile or uncitable answers -----------------------------------------------------------


def _package(**changes: object) -> dict[str, Any]:
    """package_show.json's answer with the dataset's fields changed."""
    answer: dict[str, Any] = json.loads((RECORDED / RECORDINGS / "package_show.json").read_text())
    answer["result"].update(changes)
    return answer


def _serve_answer(server: RecordedServer, action: str, answer: object) -> None:
    text = json.dumps(answer).replace("{BASE}", server.base_url)
    server.add("GET", ACTION + action, body=text)


def _download(server: RecordedServer) -> Download | SourceFetchError:
    """Ask for the CSV resource of the dataset; the file is served but should not be read
    when the dataset cannot be cited."""
    server.add(
        "GET",
        "/files/pyorailijamaarat_2025.csv",
        file="files/pyorailijamaarat_2025.csv",
        content_type="text/csv",
    )
    try:
        answer = _fetch(server, options={"resource": CSV_RESOURCE, "dataset": DATASET})
    except SourceFetchError as error:
        return error
    assert isinstance(answer, Download)
    return answer


def _files_fetched(server: RecordedServer) -> int:
    return len(server.sent("/files/pyorailijamaarat_2025.csv"))


def test_a_search_keeps_only_the_rows_asked_whatever_the_portal_sends(
    server: RecordedServer,
) -> None:
    one = {"name": "d", "title": "t", "resources": [{"id": "r", "url": "https://f.example/x"}]}
    _serve_answer(
        server, "package_search", {"success": True, "result": {"count": 5, "results": [one] * 5000}}
    )

    listing = _fetch(server, options={"q": "x", "rows": "1"})

    assert isinstance(listing, Listing)
    assert len(listing.datasets) == 1
    assert "sent 5000 datasets for rows=1; kept the first 1" in " ".join(listing.notes)


def test_an_action_answer_over_the_cap_is_unavailable(
    server: RecordedServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(ckan, "_MAX_ANSWER_BYTES", 1_000)
    _serve(server, "package_search", "package_search.json")

    error = _refused(server, options={"q": "x"})

    assert error.code == "unavailable"
    assert "max_bytes=1,000" in str(error)


def test_json_nested_deeper_than_python_goes_is_malformed(server: RecordedServer) -> None:
    server.add("GET", ACTION + "package_search", body=b"[" * 200_000 + b"]" * 200_000)

    error = _refused(server, options={"q": "x"})

    assert error.code == "malformed"
    assert "nests deeper than geomint reads" in str(error)


def test_a_dataset_with_too_many_resources_lists_the_first_and_says_so(
    server: RecordedServer,
) -> None:
    resources = [{"id": f"r{i}", "url": "https://f.example/x"} for i in range(2_000)]
    _serve_answer(server, "package_show", _package(resources=resources))

    listing = _fetch(server, options={"dataset": DATASET})

    assert isinstance(listing, Listing)
    assert len(listing.datasets[0].resources) == 500
    assert "has 2,000 resources; listed the first 500" in " ".join(listing.notes)


@pytest.mark.parametrize(
    ("changes", "says"),
    [
        ({"license_title": "Mixed licences"}, "which is not one licence"),
        ({"license_title": "  mixed", "license_id": "cc-by-4.0"}, "which is not one licence"),
        ({"license_title": "L" * 300, "license_id": "x" * 300}, "gives a licence of 300"),
        ({"name": ""}, "a dataset without a name"),
        ({"name": "n" * 201}, "a dataset without a name"),
    ],
    ids=["mixed", "mixed-with-id", "long-licence", "empty-name", "long-name"],
)
def test_a_dataset_that_cannot_be_cited_is_changed_before_its_file_is_fetched(
    server: RecordedServer, changes: dict[str, object], says: str
) -> None:
    _serve_answer(server, "package_show", _package(**changes))

    error = _download(server)

    assert isinstance(error, SourceFetchError)
    assert error.code == "changed"
    assert says in str(error)
    assert _files_fetched(server) == 0


def test_long_texts_are_clipped_to_what_provenance_holds(server: RecordedServer) -> None:
    long = _package(
        title="T" * 900,
        organization={"title": "O" * 400},
        license_title="L" * 300,  # too long: the short id stands for it
    )
    _serve_answer(server, "package_show", long)

    download = _download(server)

    assert isinstance(download, Download)
    assert len(download.title) == 500 and download.title.endswith("...")
    assert download.publisher is not None and len(download.publisher) == 200
    assert download.licence == "cc-by-4.0"


def test_a_dataset_without_a_licence_is_downloaded_with_none_stated(
    server: RecordedServer,
) -> None:
    _serve_answer(server, "package_show", _package(license_id=None, license_title=None))

    download = _download(server)

    assert isinstance(download, Download)
    assert download.licence is None
