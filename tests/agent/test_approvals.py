"""Approvals guard effects, not tool names.

The red team refused a ``process_data`` call (``--approve process_data``), and the model
then added the same layer with ``analyse_data`` and ``mint.layer``, unasked. Each effect
is now asked for where it happens, whichever tool reaches it.
"""

from __future__ import annotations

from asyncio import run
from collections.abc import Callable
from typing import Any

from geomint.agent import ApprovalRequest, MapAgent
from geomint.agent.demo import seed_demo_chat
from geomint.providers.base import Found, Providers
from geomint.providers.offline import OfflineProvider
from geomint.state import ApprovalAsked, ViewChanged
from geomint.testing import Script

UNION = (
    "parks = gpd.GeoDataFrame.from_features(geometries['features'])\n"
    "return {'geometries': [{'label': 'parks united', 'geometry': "
    "shapely.union_all(parks.geometry)}]}"
)
MINTED = (
    "parks = gpd.GeoDataFrame.from_features(geometries['features'])\n"
    "mint.layer(shapely.union_all(parks.geometry), 'parks united')\n"
    "return len(parks)"
)
COUNT = "return len(geometries['features'])"


def _script(*calls: tuple[str, dict[str, Any]]) -> Script:
    return Script(
        picks=[{"tools": sorted({name for name, _ in calls}), "scopes": {}}],
        steps=[*[[call] for call in calls], "Done."],
    )


def _analyse(code: str, name: str = "parks") -> tuple[str, dict[str, Any]]:
    arguments = {"geometries_entry_ids": ["geometries-1"], "code": code, "name": name}
    return ("analyse_data", arguments)


def _asker(answer: bool, asked: list[ApprovalRequest]) -> Callable[..., Any]:
    async def approve(request: ApprovalRequest) -> tuple[bool, str]:
        asked.append(request)
        return answer, "approved" if answer else "not on my map"

    return approve


def _geometries(agent: MapAgent, chat_id: str) -> list[str]:
    return [e for e in agent.chats.open(chat_id).entries if e.startswith("geometries")]


def test_a_refused_layer_is_not_reached_through_another_tool(
    make_agent: Callable[..., MapAgent],
) -> None:
    asked: list[ApprovalRequest] = []
    process = ("process_data", {"geometries_entry_ids": ["geometries-1"], "code": UNION})
    agent = make_agent(_script(process, _analyse(MINTED)), require_approval=["process_data"])
    chat_id = run(seed_demo_chat(agent, "sidestep"))
    result = run(agent.run("Union the parks", chat_id=chat_id, approve=_asker(False, asked)))
    assert [(r.tool, r.effects) for r in asked] == [
        ("process_data", ("code_entry", "display", "runs_code")),
        ("analyse_data", ("code_entry", "runs_code")),
    ]
    assert _geometries(agent, chat_id) == ["geometries-1"]  # nothing was added
    refusal = result.tool_calls[1]["result"]["error"]
    assert refusal.startswith(
        "analyse_data needs a person's approval, because it adds a layer computed by "
        "model-written code to the map and runs model-written Python in the sandbox,"
    )
    assert refusal.endswith("and was refused: not on my map")
    assert [m["effect"] for m in asked[1].preview["effects"]] == ["code_entry", "runs_code"]


def test_code_entry_asks_only_when_code_adds_a_layer_and_once_per_call(
    make_agent: Callable[..., MapAgent],
) -> None:
    asked: list[ApprovalRequest] = []
    agent = make_agent(
        _script(_analyse(COUNT, "count"), _analyse(MINTED)), require_approval=["code_entry"]
    )
    chat_id = run(seed_demo_chat(agent, "layers"))
    run(agent.run("Count, then union the parks", chat_id=chat_id, approve=_asker(True, asked)))
    (request,) = asked  # the count ran unasked: it adds nothing to the map
    assert request.tool == "analyse_data" and request.effects == ("code_entry",)
    assert request.preview["about"]["label"] == "parks united"
    assert request.preview["about"]["features"] == 1
    assert "mint.layer" in request.preview["about"]["code"]
    assert _geometries(agent, chat_id) == ["geometries-1", "geometries-2"]
    stored = [e.body for e in agent.chats.trace(chat_id) if isinstance(e.body, ApprovalAsked)]
    assert [b.effects for b in stored] == [("code_entry",)]


def test_a_tool_named_that_declares_no_effects_is_asked_before_each_call(
    make_agent: Callable[..., MapAgent],
) -> None:
    asked: list[ApprovalRequest] = []
    recall = ("recall_state", {})
    agent = make_agent(_script(recall), require_approval=["recall_state"])
    result = run(agent.run("What is here?", chat_id="recall", approve=_asker(False, asked)))
    assert [(r.tool, r.effects) for r in asked] == [("recall_state", ())]
    assert result.tool_calls[0]["result"]["error"] == (
        "recall_state needs a person's approval and was refused: not on my map"
    )


def test_fit_on_map_asks_for_display(make_agent: Callable[..., MapAgent]) -> None:
    # From the second red team: with display refused for fly_to, process_data's
    # fit_on_map moved the camera unasked.
    asked: list[ApprovalRequest] = []
    fit = "return {'fit_on_map': [10.0, 50.0, 11.0, 51.0]}"
    process = ("process_data", {"geometries_entry_ids": ["geometries-1"], "code": fit})
    agent = make_agent(_script(process), require_approval=["display"])
    chat_id = run(seed_demo_chat(agent, "fit"))
    result = run(agent.run("Fit the map", chat_id=chat_id, approve=_asker(False, asked)))
    assert [(r.tool, r.effects) for r in asked] == [("process_data", ("display",))]
    assert asked[0].preview["about"] == {"bbox": [10.0, 50.0, 11.0, 51.0]}
    assert result.tool_calls[0]["ok"] is False
    assert not [e for e in agent.chats.trace(chat_id) if isinstance(e.body, ViewChanged)]


class _SpyGeocoder:
    """A geocoder that records what it was sent."""

    name = "spy"

    def __init__(self) -> None:
        self.heard: list[str] = []

    async def locate(self, query: str, **_: Any) -> Found:
        self.heard.append(query)
        point = {"type": "Point", "coordinates": [24.94, 60.17]}
        feature = {"type": "Feature", "geometry": point, "properties": {"name": query}}
        return Found(
            data={"type": "FeatureCollection", "features": [feature]},
            sources=(),
            provider=self.name,
            endpoint="spy:locate",
        )


def test_chat_text_reaches_no_provider_before_network_is_approved(
    make_agent: Callable[..., MapAgent],
) -> None:
    # From the second red team: set_route geocoded its origin, and a where area was
    # looked up, before network was asked, and even when it was refused.
    asked: list[ApprovalRequest] = []
    spy = _SpyGeocoder()
    secret = "the patient at 12 Elm St"
    route = (
        "set_route",
        {"origin": {"query": secret}, "destination": {"lon": 24.95, "lat": 60.17}},
    )
    where = {"queries": [{"query": secret, "query_as": "place"}]}
    discover = ("discover_places", {"category": "cafe", "where": where})
    providers = Providers(geocoder=spy, places=OfflineProvider(), router=OfflineProvider())
    agent = make_agent(_script(route, discover), require_approval=["network"], providers=providers)
    run(agent.run("Route from there", chat_id="leak", approve=_asker(False, asked)))
    assert [(r.tool, r.effects) for r in asked] == [
        ("set_route", ("network",)),
        ("discover_places", ("network",)),
    ]
    assert asked[0].preview["about"] == {"geocode": secret}
    assert spy.heard == []


NEAR_ME = (
    ("get_current_location", {"purpose": "to find cafés near you"}),
    ("discover_places", {"category": "cafe", "near": {"place_id": "device:current-location"}}),
)


def test_a_location_is_asked_always_and_comes_back_with_the_yes(
    make_agent: Callable[..., MapAgent],
) -> None:
    asked: list[ApprovalRequest] = []

    async def page(request: ApprovalRequest) -> tuple[bool, str, dict[str, Any]]:
        asked.append(request)
        return True, "approved", {"lon": 24.9414, "lat": 60.1699, "accuracy_m": 20.0}

    agent = make_agent(_script(*NEAR_ME))  # no policy: a location is asked all the same
    result = run(agent.run("Cafés near me", chat_id="near-me", approve=page))
    assert [(r.tool, r.effects) for r in asked] == [("get_current_location", ("location",))]
    assert asked[0].preview["about"]["purpose"] == "to find cafés near you"
    assert [c["ok"] for c in result.tool_calls] == [True, True]
    entries = agent.chats.open("near-me").entries
    assert entries["places-1"].latest.sources[0].source_id == "device-geolocation"
    assert entries["places-2"].latest.label  # the cafés found around it


def test_a_terminal_chat_is_told_it_has_no_page_to_ask(
    make_agent: Callable[..., MapAgent],
) -> None:
    agent = make_agent(_script(NEAR_ME[0]))
    result = run(agent.run("Where am I?", chat_id="terminal"))  # no approver
    error = result.tool_calls[0]["result"]["error"]
    assert error == (
        "get_current_location needs a person's approval, because it reads where the person "
        "is from their device (always asked), and was refused: no web page is open to read "
        "the device's location from (a terminal chat or a program)"
    )
    assert not agent.chats.open("terminal").entries


def test_map_code_is_approved_as_its_intent_and_again_as_its_diff(
    make_agent: Callable[..., MapAgent],
) -> None:
    # A yes to the intent once stood for the diff too: the person never saw the preview.
    asked: list[ApprovalRequest] = []
    code = 'mapview.add_layer({"id": "heat", "type": "heatmap", "source": "places-1"})'
    call = ("execute_map_code", {"intent": "heat", "entry_ids": ["places-1"], "code": code})
    agent = make_agent(_script(call), require_approval=["map_style"])
    chat_id = run(seed_demo_chat(agent, "staged"))
    run(agent.run("Heatmap", chat_id=chat_id, approve=_asker(True, asked)))
    stages = [r.preview["about"]["stage"] for r in asked]  # type: ignore[index]
    assert stages == ["intent", "effect"]
    assert asked[1].preview["about"]["description"] == "adds a heatmap layer heat over places-1"  # type: ignore[index]
    assert [c.change_id for c in agent.chats.open(chat_id).map_changes] == ["m1"]
