"""Connectors answered from recordings: the demo's STAC searches run the real connector
over the Earth Search answers geomint ships, say so in every result, and refuse what no
recording covers instead of answering it."""

from __future__ import annotations

import pytest
from tests.sources.connectors.support import live_source

from geomint.http import RequestPolicy
from geomint.sources.connectors.base import Listing, Request, SourceFetchError
from geomint.sources.connectors.stac import StacConnector
from geomint.sources.discovery import CatalogueQuery, CatalogueSearcher
from geomint.sources.replay import ReplayedSearcher, demo_connectors, earth_search

#: A transport that fails every request: nothing here may reach the network.
OFFLINE = RequestPolicy(max_attempts=1, timeout_s=3.0)


def replayed() -> ReplayedSearcher:
    connector = demo_connectors()["stac"]
    assert isinstance(connector, ReplayedSearcher)
    return connector


def test_the_demo_replays_stac_and_keeps_every_other_connector() -> None:
    connectors = demo_connectors()
    stac = connectors["stac"]
    assert isinstance(stac, CatalogueSearcher) and stac.name == "stac"
    assert not stac.needs_network  # offered offline, since nothing is sent
    assert stac.vocabulary == StacConnector().vocabulary
    assert {"ckan", "worldbank", "bundled"} <= set(connectors)
    assert stac.is_catalogue(live_source("earth-search"))
    assert not stac.is_catalogue(live_source("copernicus-dem-glo-30"))


def test_a_replayed_search_is_the_real_ranking_and_says_it_was_replayed() -> None:
    asked = CatalogueQuery(
        catalogue=live_source("earth-search"), query="radar backscatter", policy=OFFLINE
    )
    found = replayed().search(asked)
    assert [c.id for c in found.candidates] == ["sentinel-1-grd"]
    assert "not the live API" in found.notes[-1] and "written by hand" in found.notes[-1]


def test_a_replayed_listing_keeps_only_the_recorded_items_over_the_area() -> None:
    request = Request(
        source=live_source("earth-search"),
        options={"collection": "cop-dem-glo-30", "list": "yes", "bbox": "25.1,60.2,25.3,60.3"},
        policy=OFFLINE,
    )
    listing = replayed().fetch(request)
    assert isinstance(listing, Listing)
    assert [d.name for d in listing.datasets] == ["Copernicus_DSM_COG_10_N60_00_E025_00_DEM"]
    assert "nothing was sent over the network" in listing.notes[-1]


@pytest.mark.parametrize(
    ("options", "missing"),
    [
        # an area the recordings do not cover is not answered "no items"
        ({"collection": "cop-dem-glo-30", "list": "yes", "bbox": "30,0,31,1"}, "/search"),
        # another collection
        ({"collection": "sentinel-2-l2a", "list": "yes", "bbox": "24.9,60.1,25,60.2"}, "sentinel"),
        # a read needs the file's bytes, which are not recorded
        ({"collection": "cop-dem-glo-30", "bbox": "24.9,60.15,24.95,60.17"}, "Copernicus_DSM"),
    ],
)
def test_what_no_recording_covers_is_unavailable_and_says_what_they_hold(
    options: dict[str, str], missing: str
) -> None:
    request = Request(source=live_source("earth-search"), options=options, policy=OFFLINE)
    with pytest.raises(SourceFetchError) as caught:
        replayed().fetch(request)
    assert caught.value.code == "unavailable"
    said = str(caught.value)
    assert missing in said and "they hold Earth Search's list of collections" in said


def test_the_recordings_answer_only_the_api_they_imitate() -> None:
    import httpx

    recordings = earth_search()
    assert recordings.answer(httpx.Request("GET", "https://example.org/v1/collections")) is None
    listed = recordings.answer(
        httpx.Request("GET", "https://earth-search.aws.element84.com/v1/collections")
    )
    assert listed is not None and listed.status_code == 200
