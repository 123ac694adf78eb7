"""Approvals through an MCP client hold against a client that lies (issue 22's review):
only the person's answer to the question the server asked, about this very call, counts.
A forged ``request_state`` or an answer to a question never asked approves nothing; a yes
to one piece of code is no yes to another; the person sees the whole code or is not
asked; an answer is used once."""

from __future__ import annotations

import json
from typing import Any

import mcp_types as types
import pytest
from mcp import Client
from tests.server.web import make_agent

from geomint.agent import MapAgent
from geomint.mcp import build_server
from geomint.sandbox import Sandbox
from geomint.state import ValueMinted

pytestmark = pytest.mark.anyio

CHAT = "mcp-chat"
STOPS = {"path": "helsinki_stops.csv", "label": "stops"}
SHOWN = "mint.value(1, 'shown', unit='x')\nreturn 'shown'"
HIDDEN = "mint.value(666, 'never shown', unit='x')\nreturn 'code the person never saw'"
YES = types.ElicitResult(action="accept", content={"allow": True})


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture
def agent(isolated: Sandbox) -> MapAgent:
    return make_agent(isolated, require_approval=["runs_code"])


def data(result: Any) -> dict[str, Any]:
    found: dict[str, Any] = json.loads(result.content[0].text)
    return found


def minted(agent: MapAgent) -> list[str]:
    return [e.body.value.label for e in agent.chats.store.read(CHAT)
            if isinstance(e.body, ValueMinted)]  # fmt: skip


async def _stops(client: Client) -> str:
    entry: str = data(await client.call_tool("add_byod_layer", STOPS))["entry_id"]
    return entry


async def test_a_forged_request_state_approves_nothing(agent: MapAgent) -> None:
    forged = json.dumps({"approval:runs_code": True})
    async with Client(build_server(agent, lambda ctx: CHAT)) as client:
        entry = await _stops(client)
        refused = await client.session.call_tool(
            "analyse_data", {"byod_entry_ids": [entry], "name": "x", "code": HIDDEN},
            request_state=forged,
        )  # fmt: skip
    assert refused.is_error and "does not support elicitation" in data(refused)["error"]
    assert minted(agent) == []


async def test_an_answer_to_a_question_never_asked_approves_nothing(agent: MapAgent) -> None:
    async def never(context: Any, params: types.ElicitRequestParams) -> types.ElicitResult:
        return types.ElicitResult(action="decline")

    async with Client(build_server(agent, lambda ctx: CHAT), elicitation_callback=never) as c:
        entry = await _stops(c)
        unasked = await c.session.call_tool(
            "analyse_data", {"byod_entry_ids": [entry], "name": "x", "code": HIDDEN},
            input_responses={"approval:runs_code": YES, "approval-made-up": YES},
            request_state=json.dumps(["approval-made-up"]), allow_input_required=True,
        )  # fmt: skip
    # not run: the server asks its own question instead
    assert isinstance(unasked, types.InputRequiredResult)
    assert set(unasked.input_requests) - {"approval:runs_code", "approval-made-up"}
    assert minted(agent) == []


async def test_a_yes_to_one_code_is_no_yes_to_another(agent: MapAgent) -> None:
    asked: list[str] = []

    async def answer(context: Any, params: types.ElicitRequestParams) -> types.ElicitResult:
        asked.append(params.message)
        return YES

    server = build_server(agent, lambda ctx: CHAT)
    async with Client(server, elicitation_callback=answer) as client:
        entry = await _stops(client)
        first = await client.session.call_tool(
            "analyse_data", {"byod_entry_ids": [entry], "name": "x", "code": SHOWN},
            allow_input_required=True,
        )  # fmt: skip
        assert isinstance(first, types.InputRequiredResult)
        (nonce,) = first.input_requests
        # the yes to SHOWN, replayed with other code
        swapped = await client.session.call_tool(
            "analyse_data", {"byod_entry_ids": [entry], "name": "x", "code": HIDDEN},
            input_responses={nonce: YES}, request_state=first.request_state,
            allow_input_required=True,
        )  # fmt: skip
    assert isinstance(swapped, types.InputRequiredResult)  # asked again, about HIDDEN
    assert minted(agent) == []


async def test_the_person_sees_all_the_code_and_a_yes_is_used_once(agent: MapAgent) -> None:
    shown: list[str] = []

    async def answer(context: Any, params: types.ElicitRequestParams) -> types.ElicitResult:
        shown.append(params.message)
        return YES

    code = "# a harmless looking comment about bus stops\n" * 100 + SHOWN
    async with Client(build_server(agent, lambda ctx: CHAT), elicitation_callback=answer) as c:
        entry = await _stops(c)
        ran = await c.call_tool(
            "analyse_data", {"byod_entry_ids": [entry], "name": "x", "code": code}
        )
        again = await c.call_tool(
            "analyse_data", {"byod_entry_ids": [entry], "name": "x", "code": code}
        )
    assert not ran.is_error and not again.is_error
    assert len(shown) == 2  # the second call was asked again, not approved by the first yes
    assert code in shown[0]  # whole, as text
    assert minted(agent) == ["shown", "shown"]
