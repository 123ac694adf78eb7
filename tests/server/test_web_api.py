"""The web app's routes beyond a turn: the page, a chat read back after a reload, the code
behind a figure, files dropped into the chat, and approvals answered over HTTP."""

from __future__ import annotations

import asyncio
import json
from asyncio import run
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from tests.server.web import ask, call, make_agent

from geomint.agent import MapAgent
from geomint.agent.demo import seed_demo_chat
from geomint.providers import bundled
from geomint.sandbox import Sandbox
from geomint.server import create_app
from geomint.server.approvals import Approvals
from geomint.ui import ApprovalAskedPart, TextDeltaPart

_STOPS = {
    "type": "FeatureCollection",
    "features": [
        {
            "type": "Feature",
            "properties": {"name": f"stop {i}"},
            "geometry": {"type": "Point", "coordinates": [24.94 + i / 1000, 60.17]},
        }
        for i in range(3)
    ],
}


@pytest.fixture
def agent(in_process: Sandbox) -> Iterator[MapAgent]:
    yield make_agent(in_process)


def test_the_page_is_served_for_a_chat_url_with_a_strict_policy(agent: MapAgent) -> None:
    app = create_app(agent)
    for url in ("/", "/chat/c-1"):
        response = run(call(app, "GET", url))
        assert response.status_code == 200
        assert '<main id="map"' in response.text
        policy = response.headers["content-security-policy"]
        assert "script-src 'self';" in policy and "connect-src 'self'" in policy
        assert "unsafe-eval" not in policy
    assert run(call(app, "GET", "/chat/not%20an%20id")).status_code == 422
    # The page's own files are there.
    for path in ("/static/app/main.js", "/static/app/map.js", "/static/app/app.css"):
        assert run(call(app, "GET", path)).status_code == 200


def test_the_basemap_streets_are_served_gzipped_from_the_bundled_graph(agent: MapAgent) -> None:
    app = create_app(agent)
    response = run(call(app, "GET", "/basemap/streets.geojson"))  # httpx asks for gzip
    assert response.status_code == 200
    assert response.headers["content-encoding"] == "gzip"
    assert int(response.headers["content-length"]) < 150_000
    streets = response.json()
    assert len(streets["features"]) > 2_000
    names = {f["properties"]["name"] for f in streets["features"]}
    assert "Mannerheimintie" in names
    plain = run(
        call(app, "GET", "/basemap/streets.geojson", headers={"accept-encoding": "identity"})
    )
    assert "content-encoding" not in plain.headers and plain.json() == streets


def _parts(app: Any, chat_id: str) -> list[dict[str, Any]]:
    """The chat's durable parts, as the page reads them back."""
    response = run(call(app, "GET", f"/api/chats/{chat_id}/parts"))
    assert response.status_code == 200, response.text
    parts: list[dict[str, Any]] = response.json()["parts"]
    return parts


def test_opening_a_chat_creates_it_with_the_demo_data_once(agent: MapAgent) -> None:
    app = create_app(agent)
    assert run(call(app, "GET", "/api/chats/fresh")).status_code == 404
    opened = run(call(app, "POST", "/api/chats/fresh")).json()
    assert [(e["entry_id"], e["visible"]) for e in opened["entries"]] == [
        ("places-1", True),
        ("geometries-1", True),
    ]
    places = run(call(app, "GET", opened["entries"][0]["geojson_url"])).json()
    assert len(places["features"]) == 1346
    # The entry says parks, gardens and squares: the landmark buildings' outlines stay out.
    outlines = run(call(app, "GET", opened["entries"][1]["geojson_url"])).json()
    kinds = {f["properties"]["kind"] for f in outlines["features"]}
    assert kinds == {"park", "garden", "square"}
    assert opened["entries"][1]["label"] == "parks, gardens and squares of central Helsinki"
    assert opened["entries"][0]["sources"][0]["licence"] == "ODbL-1.0"
    again = run(call(app, "POST", "/api/chats/fresh")).json()
    assert [e["entry_id"] for e in again["entries"]] == ["places-1", "geometries-1"]
    # A chat with no question yet is not listed in the sidebar.
    assert run(call(app, "GET", "/api/chats")).json() == []


def test_a_chat_reads_back_with_its_chart_figures_and_the_code_behind_them(
    agent: MapAgent,
) -> None:
    app = create_app(agent)
    run(call(app, "POST", "/api/chats/reload"))
    turn = run(
        call(app, "POST", "/api/chat", json=ask("Bar chart of these places by category", "reload"))
    )
    assert turn.status_code == 200
    chat = run(call(app, "GET", "/api/chats/reload")).json()
    assert chat["title"] == "Bar chart of these places by category"
    parts = _parts(app, "reload")
    (question,) = [p for p in parts if p["type"] == "question"]
    assert question["text"] == "Bar chart of these places by category"
    run_parts = [p for p in parts if p["run_id"] == question["run_id"]]
    assert [p["type"] for p in run_parts] == [
        "question", "tool_call", "analysis", "chart", "tool_result",
        "tool_call", "figure", "tool_result", "text", "run_ended",
    ]  # fmt: skip
    assert [p["seq"] for p in run_parts] == sorted(p["seq"] for p in run_parts)
    assert run_parts[-1]["stopped"] is False
    chart = run_parts[3]["config"]
    assert chart["type"] == "bar" and chart["data"]["datasets"][0]["data"]
    (card, _) = run_parts[6]["figures"]
    assert card["value"] == 1346 and card["unit"] == "places"
    assert card["sources"][0]["publisher"] == "OpenStreetMap contributors"
    analysis = run(call(app, "GET", f"/api/chats/reload/analyses/{card['minted_by']}")).json()
    assert "Counter" in analysis["code"] or "category" in analysis["code"]
    assert analysis["inputs"] == [
        {"entry_id": "places-1", "version": 1, "label": "places in central Helsinki"}
    ]
    assert run(call(app, "GET", "/api/chats/reload/analyses/a99")).status_code == 404
    assert run(call(app, "GET", "/api/chats/nowhere/analyses/a1")).status_code == 404


def test_a_dropped_file_becomes_a_byod_entry_and_a_message(agent: MapAgent) -> None:
    app = create_app(agent)
    response = run(
        call(
            app,
            "POST",
            "/api/chats/drop/uploads",
            params={"name": "stops.geojson"},
            content=json.dumps(_STOPS).encode(),
        )
    )
    assert response.status_code == 200, response.text
    added = response.json()
    assert (added["entry_id"], added["label"], added["features"]) == ("byod-1", "stops", 3)
    assert len(added["geojson"]["features"]) == 3
    chat = run(call(app, "GET", "/api/chats/drop")).json()
    shown = [p for p in _parts(app, "drop") if p["type"] in ("upload", "entry")]
    # The file started the chat: with the demo data a new chat starts with, then the file.
    assert [(p["type"], p["entry_id"]) for p in shown] == [
        ("entry", "places-1"),
        ("entry", "geometries-1"),
        ("entry", "byod-1"),
        ("upload", "byod-1"),
    ]
    assert shown[3]["name"] == "stops.geojson" and shown[3]["features"] == 3
    (entry,) = [e for e in chat["entries"] if e["entry_id"] == "byod-1"]
    assert entry["sources"][0]["publisher"] == "the user"
    assert entry["sources"][0]["evidence"] == "user-supplied"


def _geoparquet() -> bytes:
    import io

    import geopandas as gpd

    frame = gpd.GeoDataFrame.from_features(_STOPS["features"], crs="EPSG:4326")
    buffer = io.BytesIO()
    frame.to_parquet(buffer)
    return buffer.getvalue()


def _geopackage(tmp_path: Path) -> bytes:
    import geopandas as gpd

    path = tmp_path / "stops.gpkg"
    gpd.GeoDataFrame.from_features(_STOPS["features"], crs="EPSG:4326").to_file(path)
    return path.read_bytes()


@pytest.mark.parametrize("kind", ["csv", "parquet", "gpkg"])
def test_other_formats_are_read_by_intake_from_their_bytes(
    agent: MapAgent, tmp_path: Path, kind: str
) -> None:
    content = {
        "csv": lambda: bundled.demo_stops_path().read_bytes(),
        "parquet": _geoparquet,
        "gpkg": lambda: _geopackage(tmp_path),
    }[kind]()
    name = {"csv": "stops.csv", "parquet": "stops.parquet", "gpkg": "stops.gpkg"}[kind]
    app = create_app(agent)
    response = run(
        call(app, "POST", "/api/chats/formats/uploads", params={"name": name}, content=content)
    )
    assert response.status_code == 200, response.text
    added = response.json()
    assert added["features"] == (125 if kind == "csv" else 3)
    assert len(added["geojson"]["features"]) == added["features"]


@pytest.mark.parametrize(
    ("name", "content", "status", "says"),
    [
        ("broken.geojson", b'{"type": "Feature"', 422, "broken.geojson could not be loaded"),
        ("empty.geojson", b"", 422, "is empty"),
        ("huge.geojson", b"x" * 200_001, 413, "Content Too Large"),
        ("table.csv", b"name,score\na,1\n", 422, "could not be loaded"),
    ],
)
def test_a_bad_upload_is_refused_plainly_and_nothing_is_stored(
    agent: MapAgent, name: str, content: bytes, status: int, says: str
) -> None:
    app = create_app(agent)
    response = run(
        call(app, "POST", "/api/chats/bad/uploads", params={"name": name}, content=content)
    )
    assert response.status_code == status
    assert says in response.text
    assert agent.chats.store.chat_ids() == []  # not even the chat the file would have started


def test_an_approval_is_answered_over_http_and_both_answers_are_logged(
    agent: MapAgent,
) -> None:
    approvals = Approvals()
    app = create_app(agent, approvals=approvals)

    async def turn(chat_id: str, approved: bool) -> list[str]:
        await seed_demo_chat(agent, chat_id)
        seen: list[str] = []
        stream = agent.run_stream(
            "Union the park boundaries and show them", chat_id=chat_id, approve=approvals.ask
        )
        async for part in stream:
            seen.append(part.type)
            if isinstance(part, ApprovalAskedPart):
                assert "shapely.union_all" in str(part.preview["code"])
                url = f"/api/chats/{chat_id}/approvals/{part.approval_id}"
                answer = await call(app, "POST", url, json={"approved": approved})
                assert answer.status_code == 200
                again = await call(app, "POST", url, json={"approved": approved})
                assert again.status_code == 404  # answered once only
        return seen

    run(turn("yes", True))
    assert "geometries-2" in agent.chats.open("yes").entries
    run(turn("no", False))
    assert "geometries-2" not in agent.chats.open("no").entries
    for chat_id, approved in (("yes", True), ("no", False)):
        parts = _parts(app, chat_id)
        (approval,) = [p for p in parts if p["type"] == "approval"]
        (answered,) = [p for p in parts if p["type"] == "approval_answered"]
        assert answered["approval_id"] == approval["approval_id"]
        assert answered["approved"] is approved and "union_all" in approval["preview"]["code"]
        assert approval["preview"]["reads"][0]["entry_id"] == "geometries-1"  # as shown live
    response = run(call(app, "POST", "/api/chats/yes/approvals/r-nothing", json={"approved": True}))
    assert response.status_code == 404


def test_an_unanswered_approval_times_out_as_a_refusal() -> None:
    from geomint.agent import ApprovalRequest

    approvals = Approvals(timeout_s=0.05)
    request = ApprovalRequest("a1", "c", "r", "process_data", {}, {})
    assert asyncio.run(approvals.ask(request)) == (False, "no answer within 0 s")
    assert approvals.waiting("c") == []


def test_a_stopped_answer_reads_back_marked_stopped(agent: MapAgent) -> None:
    async def stop_after_first_words() -> None:
        stream = agent.run_stream("What can you do?", chat_id="halt")
        async for part in stream:
            if isinstance(part, TextDeltaPart):
                break
        await stream.aclose()  # type: ignore[attr-defined]

    run(stop_after_first_words())
    parts = _parts(create_app(agent), "halt")
    kinds = [p["type"] for p in parts]
    assert kinds[0] == "question" and kinds[-2:] == ["text", "run_ended"]
    assert parts[-1]["stopped"] is True


def test_a_page_of_another_site_cannot_post_in_the_persons_name(agent: MapAgent) -> None:
    app = create_app(agent)
    body = ask("What can you do?", "csrf")
    for headers in (
        {"origin": "https://evil.example"},
        {"origin": "http://geomint.test.evil.example"},
        {"sec-fetch-site": "cross-site"},
    ):
        for url, kwargs in (
            ("/api/chat", {"json": body}),
            ("/api/chats/csrf", {}),
            ("/api/chats/csrf/uploads?name=a.geojson", {"content": json.dumps(_STOPS)}),
            ("/api/chats/csrf/approvals/x", {"json": {"approved": True}}),
        ):
            response = run(call(app, "POST", url, headers=headers, **kwargs))
            assert response.status_code == 403, (url, headers)
    assert agent.chats.store.chat_ids() == []  # nothing was created
    same = {"origin": "http://geomint.test", "sec-fetch-site": "same-origin"}
    assert run(call(app, "POST", "/api/chats/csrf", headers=same)).status_code == 200


def test_only_the_allowed_host_names_are_answered(agent: MapAgent) -> None:
    app = create_app(agent, allowed_hosts=["127.0.0.1", "localhost", "::1"])

    async def get(host: str) -> int:
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url=f"http://{host}") as client:
            return (await client.get("/api/health")).status_code

    assert run(get("127.0.0.1:8000")) == 200
    assert run(get("localhost:8000")) == 200
    assert run(get("[::1]:8000")) == 200
    # A domain that resolves to 127.0.0.1 (DNS rebinding) is not answered.
    assert run(get("rebind.evil.example:8000")) == 421


def test_the_token_link_becomes_a_cookie_the_api_accepts(agent: MapAgent) -> None:
    app = create_app(agent, token="s3cret")

    async def go() -> None:
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://geomint.test") as c:
            assert (await c.get("/api/chats")).status_code == 401
            assert (await c.get("/chat/t1?token=wrong")).status_code == 401
            login = await c.get("/chat/t1?token=s3cret")
            assert login.status_code == 303 and login.headers["location"] == "/chat/t1"
            cookie = login.headers["set-cookie"].lower()
            assert "httponly" in cookie and "samesite=strict" in cookie
            assert (await c.get("/api/chats")).status_code == 200  # the cookie now
            c.cookies.clear()
            assert (await c.get("/api/chats")).status_code == 401
            bearer = {"authorization": "Bearer s3cret"}
            assert (await c.get("/api/chats", headers=bearer)).status_code == 200

    run(go())
