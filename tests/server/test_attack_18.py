"""Attack 18: the new-chat, layer-display, map-switch, export and location-answer routes,
attacked from outside. Each test names what should hold; each failed on the code it was
written against, before the fixes that followed it."""

from __future__ import annotations

import asyncio
import json
from asyncio import run
from collections.abc import Iterator
from typing import Any

import pytest
from tests.server.web import call, make_agent

from geomint.agent import MapAgent
from geomint.sandbox import Sandbox
from geomint.server import create_app
from geomint.server.approvals import Approvals
from geomint.server.limits import TurnLimiter
from geomint.tools.context import ToolContext
from geomint.ui import ApprovalAskedPart

_JSON = {"content-type": "application/json"}


@pytest.fixture
def agent(in_process: Sandbox) -> Iterator[MapAgent]:
    yield make_agent(in_process)


def _strict_json(text: str) -> Any:
    """``text`` parsed as a browser's ``JSON.parse`` would: no NaN, no Infinity."""

    def refuse(constant: str) -> Any:
        raise ValueError(f"{constant} is not JSON")

    return json.loads(text, parse_constant=refuse)


# 1. A JSON body holding NaN or Infinity (Python's json reads both) makes the 422 handler
#    echo the value back, and Starlette's JSONResponse refuses to encode it: a 500.
@pytest.mark.parametrize(
    ("method", "url", "body"),
    [
        ("PATCH", "/api/chats/c1/entries/places-1/display", '{"opacity": NaN}'),
        ("PATCH", "/api/chats/c1/entries/places-1/display", '{"order": Infinity}'),
        ("POST", "/api/chats/c1/map", '{"style": NaN}'),
        (
            "POST",
            "/api/chats/c1/approvals/a1",
            '{"approved": true, "location": {"lon": NaN, "lat": 60, "accuracy_m": 5}}',
        ),
        ("PATCH", "/api/chats/c1", '{"title": -Infinity}'),
        ("POST", "/api/chat", '{"id": NaN, "messages": []}'),
    ],
)
def test_a_body_with_nan_or_infinity_is_refused_with_a_422_not_a_500(
    agent: MapAgent, method: str, url: str, body: str
) -> None:
    app = create_app(agent)
    response = run(call(app, method, url, content=body, headers=_JSON))
    assert response.status_code == 422, (response.status_code, response.text[:200])
    assert agent.chats.store.chat_ids() == []


# 2. Two changes to a new chat's two layers at once (a person hides both quickly, or
#    changes one while the first message stores the chat): the second request finds the
#    chat created but only half seeded (NewChat.start returns as soon as the chat has any
#    entry) and answers 404 for a layer the page shows and the chat is about to hold.
def test_a_change_to_a_new_chats_layer_while_it_is_being_stored_is_kept(
    agent: MapAgent, monkeypatch: pytest.MonkeyPatch
) -> None:
    app = create_app(agent, limiter=TurnLimiter(per_minute=1000, burst=1000))
    assert run(call(app, "GET", "/api/chats/warm/parts")).status_code == 200  # template built

    original = ToolContext.write_entry

    async def slow_write_entry(self: ToolContext, *args: Any, **kwargs: Any) -> Any:
        written = await original(self, *args, **kwargs)
        await asyncio.sleep(0.1)  # the seeding's own awaits, drawn out
        return written

    monkeypatch.setattr(ToolContext, "write_entry", slow_write_entry)

    async def both() -> tuple[int, int]:
        url = "/api/chats/fresh/entries/{}/display"
        first = asyncio.create_task(
            call(app, "PATCH", url.format("places-1"), json={"visible": False})
        )
        await asyncio.sleep(0.05)
        second = await call(app, "PATCH", url.format("geometries-1"), json={"opacity": 0.5})
        return (await first).status_code, second.status_code

    assert run(both()) == (200, 200)
    entries = agent.chats.open("fresh").entries
    assert list(entries) == ["places-1", "geometries-1"]


# 4. The device position in a location answer is read in pydantic's lax mode: a boolean
#    latitude (true -> 1.0) and numbers as strings are taken, and land in the chat as the
#    person's device position (with the provenance "the person's device").
def test_a_location_answer_takes_only_numbers_for_coordinates(agent: MapAgent) -> None:
    approvals = Approvals()
    app = create_app(agent, approvals=approvals)
    answered: list[int] = []

    async def turn() -> None:
        agent.chats.create("near")
        async for part in agent.run_stream("Cafés near me", chat_id="near", approve=approvals.ask):
            if isinstance(part, ApprovalAskedPart) and not answered:
                url = f"/api/chats/near/approvals/{part.approval_id}"
                wrong = {
                    "approved": True,
                    "location": {"lon": "24.94", "lat": True, "accuracy_m": "5"},
                }
                answered.append((await call(app, "POST", url, json=wrong)).status_code)
                if answered[-1] != 200:  # refused, as it should be: let the run end
                    approvals.answer("near", part.approval_id, approved=False)

    run(turn())
    assert answered == [422]
