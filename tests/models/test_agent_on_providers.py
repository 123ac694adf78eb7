"""The map agent itself (classifier, scoped tools, tool loop) on the real OpenAI and Anthropic
model classes, against the stub server: the provider wiring of a whole turn, without keys."""

from __future__ import annotations

import json

import pytest

from geomint.agent import MapAgent
from geomint.agent.demo import seed_demo_chat
from geomint.models import resolve_model
from geomint.providers import default_providers
from geomint.sandbox import Sandbox
from geomint.store import Chats, MemoryStore
from geomint.testing import StubLLMServer, StubReply
from geomint.tools import DEFAULT_TOOLS, ToolSettings

from .test_provider_wiring import ANTHROPIC, OPENAI, Wire

pytestmark = pytest.mark.anyio

_CODE = (
    "mint.value(len(places['features']), 'places counted', unit='places')\n"
    "return {'type': 'bar', 'data': {'labels': ['all'], "
    "'datasets': [{'label': 'Places', 'data': [len(places['features'])]}]}}"
)


@pytest.mark.parametrize("wire", [OPENAI, ANTHROPIC], ids=["openai", "anthropic"])
async def test_a_whole_turn_runs_on_the_providers_model_class(
    wire: Wire, stub: StubLLMServer, in_process: Sandbox
) -> None:
    stub.script(
        # The classifier's structured output is pydantic-ai's output tool.
        StubReply.call(
            "final_result",
            {
                "tools": ["analyse_data", "present_figure"],
                "scopes": {"analyse_data": {"kinds": ["places"]}},
            },
        ),
        StubReply.call(
            "analyse_data",
            {
                "places_entry_ids": ["places-1"],
                "name": "count",
                "output_format": "chart",
                "code": _CODE,
            },
        ),
        StubReply.call("present_figure", {"value_ids": ["v1"]}),
        StubReply.say("There are ", "1,346 places."),
    )
    model = resolve_model(wire.spec, base_url=stub.url + wire.root, api_key="k", max_retries=0)
    agent = MapAgent(
        model=model,
        registry=DEFAULT_TOOLS,
        chats=Chats(MemoryStore()),
        sandbox=in_process,
        settings=ToolSettings(),
        owns_store=False,
    )
    async with model:  # type: ignore[attr-defined]
        chat = await seed_demo_chat(agent, "wire")
        result = await agent.run("Bar chart of these places by category", chat_id=chat)

    assert result.errors == [], result.errors
    assert result.text == "There are 1,346 places."
    assert [c["name"] for c in result.tool_calls] == ["analyse_data", "present_figure"]
    assert result.figures[0].value == 1346
    classifier, *loop = stub.received
    assert len(loop) == 3  # three model steps after the classifier's one call
    # The loop's first request carried only the two chosen tools, analyse_data scoped,
    # and use_tools, which activates the others.
    tools = wire.tools(loop[0].body)
    assert set(tools) == {"analyse_data", "present_figure", "use_tools"}
    properties = tools["analyse_data"]["schema"]["properties"]
    assert "places_entry_ids" in properties and "byod_entry_ids" not in properties
    # What went back to the model is a digest: ids and figures, never the features.
    results = [content for _, content in wire.tool_results(loop[1].body)]
    returned = json.loads(results[-1])
    assert returned["figures"][0]["id"] == "v1"
    assert "coordinates" not in results[-1]
    assert "final_result" in json.dumps(wire.tools(classifier.body))


@pytest.mark.parametrize("wire", [OPENAI, ANTHROPIC], ids=["openai", "anthropic"])
async def test_a_tool_the_classifier_left_out_is_reached_within_the_turn(
    wire: Wire, stub: StubLLMServer, in_process: Sandbox
) -> None:
    cafes = {"category": "cafe", "where": {"queries": [{"query": "Esplanadinpuisto"}]}}
    stub.script(
        StubReply.call("final_result", {"tools": ["locate_place"], "scopes": {}}),
        # A call to a tool the model was not shown, then use_tools, then the tool itself.
        StubReply.call("discover_places", cafes),
        StubReply.call("use_tools", {"names": ["fit_bounds"]}),
        StubReply.call("discover_places", cafes),
        StubReply.call("fit_bounds", {"entry_ids": ["places-1"]}),
        StubReply.say("Found one café."),
    )
    model = resolve_model(wire.spec, base_url=stub.url + wire.root, api_key="k", max_retries=0)
    agent = MapAgent(
        model=model,
        registry=DEFAULT_TOOLS,
        chats=Chats(MemoryStore()),
        sandbox=in_process,
        settings=ToolSettings(),
        providers=default_providers({}),
        owns_store=False,
    )
    async with model:  # type: ignore[attr-defined]
        result = await agent.run("Cafés in the Esplanade park", chat_id="reach")

    assert result.errors == [], result.errors
    assert [(c["name"], c["ok"]) for c in result.tool_calls] == [
        ("discover_places", False),
        ("use_tools", True),
        ("discover_places", True),
        ("fit_bounds", True),
    ]
    assert result.tool_calls[0]["result"]["not_run"] is True
    _, *loop = stub.received
    shown = [set(wire.tools(request.body)) for request in loop]
    assert shown[0] == {"locate_place", "use_tools"}
    assert shown[1] == {"locate_place", "use_tools", "discover_places"}
    assert shown[2] == shown[1] | {"fit_bounds"} == shown[3] == shown[4]
