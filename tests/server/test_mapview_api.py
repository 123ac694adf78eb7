"""The map's settings over HTTP: the catalogue, a person's switch kept in the chat, the
page's policy opened to an application style's origins only, and a location answer."""

from __future__ import annotations

from asyncio import run
from collections.abc import Iterator
from dataclasses import replace

import pytest
from tests.server.web import call, make_agent

from geomint.agent import MapAgent
from geomint.sandbox import Sandbox
from geomint.server import create_app
from geomint.server.approvals import Approvals
from geomint.tools import MapStyle
from geomint.tools.basemaps import style_catalogue
from geomint.ui import ApprovalAskedPart


@pytest.fixture
def agent(in_process: Sandbox) -> Iterator[MapAgent]:
    yield make_agent(in_process)


def test_the_catalogue_lists_the_styles_and_languages(agent: MapAgent) -> None:
    body = run(call(create_app(agent), "GET", "/api/map")).json()
    assert [(s["name"], s["url"], s["theme"]) for s in body["styles"]] == [
        ("light", "/static/basemap/style.json", "light"),
        ("dark", "/static/basemap/style-dark.json", "dark"),
    ]
    assert body["default_style"] == "light"
    assert body["languages"] == {"fi": "Finnish", "sv": "Swedish", "en": "English"}
    for style in body["styles"]:  # both are served
        assert run(call(create_app(agent), "GET", style["url"])).status_code == 200


def test_a_persons_switch_is_kept_in_the_chat(agent: MapAgent) -> None:
    app = create_app(agent)
    agent.chats.create("c1")
    response = run(call(app, "POST", "/api/chats/c1/map", json={"style": "dark", "language": "sv"}))
    assert response.json() == {"id": "c1", "style": "dark", "language": "sv"}
    parts = run(call(app, "GET", "/api/chats/c1/parts")).json()["parts"]
    assert [(p["type"], p.get("style") or p.get("language")) for p in parts] == [
        ("basemap", "dark"),
        ("language", "sv"),
    ]
    refused = run(call(app, "POST", "/api/chats/c1/map", json={"style": "satellite"}))
    assert refused.status_code == 422 and "the styles are light, dark" in refused.text
    assert run(call(app, "POST", "/api/chats/c1/map", json={"language": "de"})).status_code == 422
    assert run(call(app, "POST", "/api/chats/nope/map", json={"style": "x"})).status_code == 422
    assert agent.chats.store.chat_ids() == ["c1"]  # a refused switch stores no new chat


def test_the_page_policy_opens_only_to_an_application_styles_origins(agent: MapAgent) -> None:
    satellite = MapStyle(
        name="satellite",
        url="https://tiles.example.org/style.json",
        label="Satellite",
        origins=("https://tiles.example.org",),
    )
    agent.settings = replace(agent.settings, map_styles=style_catalogue([satellite]))
    app = create_app(agent)
    policy = run(call(app, "GET", "/")).headers["content-security-policy"]
    assert "connect-src 'self' https://tiles.example.org;" in policy
    assert "img-src 'self' data: blob: https://tiles.example.org;" in policy
    names = [s["name"] for s in run(call(app, "GET", "/api/map")).json()["styles"]]
    assert names == ["light", "dark", "satellite"]


def test_a_location_answer_reaches_the_run(agent: MapAgent) -> None:
    approvals = Approvals()
    app = create_app(agent, approvals=approvals)

    async def turn() -> None:
        agent.chats.create("near")
        async for part in agent.run_stream("Cafés near me", chat_id="near", approve=approvals.ask):
            if isinstance(part, ApprovalAskedPart):
                url = f"/api/chats/near/approvals/{part.approval_id}"
                bad = {"approved": True, "location": {"lon": 24.94, "lat": 95, "accuracy_m": 5}}
                assert (await call(app, "POST", url, json=bad)).status_code == 422
                good = {"approved": True, "location": {"lon": 24.94, "lat": 60.17, "accuracy_m": 5}}
                assert (await call(app, "POST", url, json=good)).status_code == 200

    run(turn())
    entries = agent.chats.open("near").entries
    data = agent.chats.read_blob("near", entries["places-1"].latest.blob)
    assert b'"coordinates":[24.94,60.17]' in data
    assert "places-2" in entries  # the cafés found around it
