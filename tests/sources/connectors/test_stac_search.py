"""The STAC connector as a catalogue discovery searches: a whole API's collections
(two pages of Earth Search-shaped ``/collections``, on 127.0.0.1) ranked by the words
asked, those outside the place left out and said so, each a candidate one ``fetch`` away."""

from __future__ import annotations

import pytest
from tests.sources.connectors.support import EARTH_SEARCH, fast, live_source

from geomint.sources.connectors.base import Request, SourceFetchError
from geomint.sources.connectors.stac import StacConnector
from geomint.sources.discovery import CatalogueQuery, CatalogueResults, CatalogueSearcher
from geomint.testing import RecordedServer

RECORDINGS = "stac"
API = "https://earth-search.aws.element84.com/v1"
#: Finland's box, as the spine gives a country's.
FINLAND = (20.55, 59.45, 31.59, 70.09)


def serve_collections(server: RecordedServer) -> None:
    for name, query in (("collections_page1.json", None), ("collections_page2.json", "next:naip")):
        body = (EARTH_SEARCH / name).read_text("utf-8").replace(API, server.base_url)
        server.add("GET", "/collections", body=body, query={"token": query} if query else None)


def search(
    server: RecordedServer, words: str, *, bbox: tuple[float, float, float, float] | None = None
) -> CatalogueResults:
    catalogue = live_source("earth-search", api_url=server.base_url)
    asked = CatalogueQuery(catalogue=catalogue, query=words, bbox=bbox, limit=20, policy=fast())
    return StacConnector().search(asked)


def test_a_whole_api_is_a_catalogue_and_a_collection_row_is_data() -> None:
    connector = StacConnector()
    assert isinstance(connector, CatalogueSearcher)
    assert connector.is_catalogue(live_source("earth-search"))
    assert not connector.is_catalogue(live_source("copernicus-dem-glo-30"))


def test_collections_across_pages_are_ranked_by_the_words_asked(server: RecordedServer) -> None:
    serve_collections(server)
    found = search(server, "digital elevation model DEM")

    assert {c.id for c in found.candidates} == {"cop-dem-glo-30", "cop-dem-glo-90"}
    assert found.matched == 2
    dem = next(c for c in found.candidates if c.id == "cop-dem-glo-30")
    assert dem.kind == "collection" and dem.catalogue == "earth-search"
    assert dem.fetch == {
        "source_id": "earth-search",
        "filters": {"collection": "cop-dem-glo-30", "list": "yes"},
    }
    # "proprietary" alone says nothing: the licence link's title is carried with it
    assert dem.licence is not None and dem.licence.startswith("proprietary (Copernicus DEM")
    assert dem.url == f"{server.base_url}/collections/cop-dem-glo-30"
    assert dem.description is not None and "Digital Surface Model" in dem.description


def test_a_collection_outside_the_place_is_left_out_and_said(server: RecordedServer) -> None:
    serve_collections(server)
    everywhere = search(server, "aerial imagery")
    in_finland = search(server, "aerial imagery", bbox=FINLAND)

    assert "naip" in [c.id for c in everywhere.candidates]
    assert "naip" not in [c.id for c in in_finland.candidates]
    assert any("do not cover the place asked" in n and "naip" in n for n in in_finland.notes)
    naip = next(c for c in everywhere.candidates if c.id == "naip")
    assert naip.formats == ("image/tiff; application=geotiff; profile=cloud-optimized",)
    assert naip.publisher is not None and "USDA" in naip.publisher


def test_words_no_collection_holds_are_no_candidates_and_said(server: RecordedServer) -> None:
    serve_collections(server)
    found = search(server, "bicycle counts")

    assert found.candidates == () and found.matched == 0
    assert "none of the API's 6 collections has these words" in found.notes[-1]


def test_an_answer_without_collections_is_changed(server: RecordedServer) -> None:
    server.add("GET", "/collections", body='{"type": "Catalog", "links": []}')
    with pytest.raises(SourceFetchError) as caught:
        search(server, "dem")
    assert caught.value.code == "changed"
    assert "without a collections list" in str(caught.value)


def test_fetching_the_catalogue_without_a_collection_says_how_to_find_one() -> None:
    catalogue = live_source("earth-search", api_url="http://127.0.0.1:9")
    with pytest.raises(SourceFetchError) as caught:
        StacConnector().fetch(Request(source=catalogue, options={"list": "yes"}, policy=fast()))
    assert caught.value.code == "refused_filter" and caught.value.key == "collection"
    assert "search_catalogues=true" in str(caught.value)


def test_an_answer_denser_in_lists_than_honest_json_is_not_parsed(server: RecordedServer) -> None:
    # 2.6 million empty lists in 8 MB would cost the host a gigabyte to decode
    server.add("GET", "/collections", body='{"collections": [' + "[]," * 400_000 + "[]]}")
    with pytest.raises(SourceFetchError) as caught:
        search(server, "dem")
    assert caught.value.code == "malformed"
    assert "than any honest answer of its size" in str(caught.value)
