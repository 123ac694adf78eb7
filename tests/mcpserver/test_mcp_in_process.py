"""The MCP server with the SDK's own client, connected in process: geomint's tools with
their own schemas, a layer added and an analysis over it minting a figure whose provenance
is readable as a resource, approvals asked through the client (or refused where it cannot
ask), and the session's chat in the store as the web app would open it."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import mcp_types as types
import pytest
from mcp import Client
from tests.server.web import make_agent

from geomint.agent import MapAgent
from geomint.mcp import build_server, mcp_tools
from geomint.sandbox import Sandbox
from geomint.state import ToolCalled, ValueMinted
from geomint.ui import ToolCallPart, chat_parts

pytestmark = pytest.mark.anyio

CHAT = "mcp-chat"
STOPS = {"path": "helsinki_stops.csv", "label": "stops"}
COUNT = (
    "mint.value(len(byod['features']), 'stops in the layer', unit='stops')\n"
    "return len(byod['features'])"
)


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture
def agent(isolated: Sandbox) -> Iterator[MapAgent]:
    yield make_agent(isolated, require_approval=[])


def connect(agent: MapAgent, **options: Any) -> Client:
    return Client(build_server(agent, lambda ctx: CHAT), **options)


def data(result: types.CallToolResult) -> dict[str, Any]:
    text = result.content[0]
    assert isinstance(text, types.TextContent)
    found: dict[str, Any] = json.loads(text.text)
    assert result.structured_content == found
    return found


async def test_the_tools_are_the_agents_own_with_their_schemas(agent: MapAgent) -> None:
    async with connect(agent) as client:
        listed = {tool.name: tool for tool in (await client.list_tools()).tools}
    offered = mcp_tools(agent.tool_entries())
    assert set(listed) == set(offered)
    assert {"fetch", "add_byod_layer", "analyse_data", "process_data", "present_figure",
            "record_observation", "recall_state", "help"} <= set(listed)  # fmt: skip
    # a tool that only moves the page's map, or needs the page, is not offered
    assert not {"fly_to", "set_map_style", "get_current_location"} & set(listed)
    analyse = listed["analyse_data"]
    assert analyse.description == offered["analyse_data"].description
    assert analyse.input_schema == offered["analyse_data"].input_schema.model_json_schema()


async def test_a_layer_an_analysis_and_its_figure_with_provenance(agent: MapAgent) -> None:
    async with connect(agent) as client:
        added = data(await client.call_tool("add_byod_layer", STOPS))
        entry_id = added["entry_id"]
        counted = await client.call_tool(
            "analyse_data", {"byod_entry_ids": [entry_id], "name": "count", "code": COUNT}
        )
        result = data(counted)
        assert not counted.is_error, result
        (figure,) = result["figures"]
        card = await client.read_resource(f"geomint://chats/{CHAT}/figures/{figure['id']}")
        layer = await client.read_resource(f"geomint://chats/{CHAT}/entries/{entry_id}")
        resources = {r.name for r in (await client.list_resources()).resources}
    shown = json.loads(card.contents[0].text)  # type: ignore[union-attr]
    assert shown["label"] == "stops in the layer" and shown["value"] == result["result"]
    assert shown["sources"] and shown["minted_by"]  # code wrote where it came from
    geojson = json.loads(layer.contents[0].text)  # type: ignore[union-attr]
    assert geojson["type"] == "FeatureCollection" and len(geojson["features"]) == shown["value"]
    assert {entry_id, figure["id"], "events"} <= resources
    # the session's chat is in the store, as the web app and `geomint chat` open it
    events = [e.body for e in agent.chats.store.read(CHAT)]
    assert [e.tool for e in events if isinstance(e, ToolCalled)] == ["add_byod_layer",
                                                                     "analyse_data"]  # fmt: skip
    assert any(isinstance(e, ValueMinted) for e in events)
    # and the web app reads it back as it reads any chat: the calls and the figure
    parts = chat_parts(agent.chats, CHAT)
    assert [p.tool for p in parts if isinstance(p, ToolCallPart)] == ["add_byod_layer",
                                                                      "analyse_data"]  # fmt: skip
    assert figure["id"] in {v.id for v in agent.chats.open(CHAT).values}


async def test_an_escape_is_refused_by_the_sandbox_not_run(agent: MapAgent) -> None:
    escape = "import os\nreturn os.listdir('/')"
    async with connect(agent) as client:
        added = data(await client.call_tool("add_byod_layer", STOPS))
        refused = await client.call_tool(
            "analyse_data", {"byod_entry_ids": [added["entry_id"]], "name": "escape",
                             "code": escape},
        )  # fmt: skip
    assert refused.is_error
    said = data(refused)
    assert "os" in str(said) and "listdir" not in str(said.get("result", ""))


async def test_a_call_needing_approval_is_asked_through_the_client(isolated: Sandbox) -> None:
    agent = make_agent(isolated, require_approval=["runs_code"])
    asked: list[str] = []

    async def answer(context: Any, params: types.ElicitRequestParams) -> types.ElicitResult:
        asked.append(params.message)
        return types.ElicitResult(action="accept", content={"allow": True})

    async with connect(agent, elicitation_callback=answer) as client:
        added = data(await client.call_tool("add_byod_layer", STOPS))
        counted = await client.call_tool(
            "analyse_data",
            {"byod_entry_ids": [added["entry_id"]], "name": "count", "code": COUNT},
        )
    assert asked and "analyse_data" in asked[0]
    assert not counted.is_error


async def test_without_elicitation_a_call_needing_approval_is_refused(isolated: Sandbox) -> None:
    agent = make_agent(isolated, require_approval=["runs_code"])
    async with connect(agent) as client:
        added = data(await client.call_tool("add_byod_layer", STOPS))
        refused = await client.call_tool(
            "analyse_data",
            {"byod_entry_ids": [added["entry_id"]], "name": "count", "code": COUNT},
        )
    assert refused.is_error
    assert "does not support elicitation" in data(refused)["error"]
    assert not any(isinstance(e.body, ValueMinted) for e in agent.chats.store.read(CHAT))


async def test_the_example_prompts_are_prompts(agent: MapAgent) -> None:
    async with connect(agent) as client:
        prompts = (await client.list_prompts()).prompts
        first = await client.get_prompt(prompts[0].name)
    assert len(prompts) > 10
    said = first.messages[0].content
    assert isinstance(said, types.TextContent) and said.text == prompts[0].title


async def test_another_chats_resources_are_not_readable(agent: MapAgent) -> None:
    async with connect(agent) as client:
        with pytest.raises(Exception, match="not of this session's chat"):
            await client.read_resource("geomint://chats/someone-else/events")
