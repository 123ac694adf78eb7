"""The real OpenAI and Anthropic model classes, as resolve_model builds them, against a stub server.

Each test runs a real ``pydantic_ai.Agent`` through the provider's SDK to a scripted server on
127.0.0.1 and then reads what the SDK sent: the model name, the key, the tool schemas, and the
tool result on the follow-up request. Nothing leaves the machine: the suite's guard refuses any
connection beyond loopback (``tests/conftest.py``).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import anyio
import pytest
from pydantic import BaseModel
from pydantic_ai import (
    Agent,
    AgentRunResultEvent,
    FunctionToolCallEvent,
    FunctionToolResultEvent,
    PartDeltaEvent,
    PartStartEvent,
    TextPart,
    TextPartDelta,
)
from pydantic_ai.exceptions import (
    ModelAPIError,
    ModelConnectionError,
    ModelHTTPError,
    ModelRateLimitError,
    ModelServerError,
    ModelUnavailableError,
)
from pydantic_ai.models import Model
from pydantic_ai.settings import ModelSettings

from geomint.models import model_failure, resolve_model
from geomint.testing import StubLLMServer, StubReply, StubRequest

pytestmark = pytest.mark.anyio

KEY = "test-key"


@dataclass(frozen=True)
class Wire:
    """One provider's wire format, as far as these tests read it."""

    spec: str
    root: str
    """Appended to the stub's URL to make the base URL: each SDK's convention differs."""
    path: str
    base_url_env: str
    key_env: str
    tools: Callable[[dict[str, Any]], dict[str, dict[str, Any]]]
    """A request's tool definitions: name to ``(description, JSON schema)``."""
    tool_results: Callable[[dict[str, Any]], list[tuple[str, str]]]
    """A request's tool results: ``(call id, content)``."""
    tool_call_ids: Callable[[dict[str, Any]], list[str]]
    """The ids of the tool calls the assistant made, as echoed back in a request's history."""

    def key_sent(self, request: StubRequest) -> str | None:
        headers = request.headers
        if (bearer := headers.get("authorization", "")).startswith("Bearer "):
            return bearer.removeprefix("Bearer ")
        # Older Anthropic SDKs send the key as x-api-key; 2.x sends a bearer token.
        return headers.get("x-api-key")


def _openai_tools(body: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {
        t["function"]["name"]: {
            "description": t["function"].get("description"),
            "schema": t["function"]["parameters"],
        }
        for t in body.get("tools", [])
    }


def _openai_results(body: dict[str, Any]) -> list[tuple[str, str]]:
    return [(m["tool_call_id"], m["content"]) for m in body["messages"] if m["role"] == "tool"]


def _openai_call_ids(body: dict[str, Any]) -> list[str]:
    return [c["id"] for m in body["messages"] for c in m.get("tool_calls") or []]


def _anthropic_tools(body: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {
        t["name"]: {"description": t.get("description"), "schema": t["input_schema"]}
        for t in body.get("tools", [])
    }


def _blocks(body: dict[str, Any], kind: str) -> list[dict[str, Any]]:
    return [
        block
        for m in body["messages"]
        if isinstance(m["content"], list)
        for block in m["content"]
        if block["type"] == kind
    ]


def _anthropic_results(body: dict[str, Any]) -> list[tuple[str, str]]:
    def text(content: Any) -> str:
        return content if isinstance(content, str) else "".join(c["text"] for c in content)

    return [(b["tool_use_id"], text(b["content"])) for b in _blocks(body, "tool_result")]


def _anthropic_call_ids(body: dict[str, Any]) -> list[str]:
    return [b["id"] for b in _blocks(body, "tool_use")]


OPENAI = Wire(
    spec="openai:gpt-4.1",
    root="/v1",
    path="/v1/chat/completions",
    base_url_env="OPENAI_BASE_URL",
    key_env="OPENAI_API_KEY",
    tools=_openai_tools,
    tool_results=_openai_results,
    tool_call_ids=_openai_call_ids,
)
ANTHROPIC = Wire(
    spec="anthropic:claude-sonnet-4-6",
    root="",  # the Anthropic SDK appends /v1 itself
    path="/v1/messages",
    base_url_env="ANTHROPIC_BASE_URL",
    key_env="ANTHROPIC_API_KEY",
    tools=_anthropic_tools,
    tool_results=_anthropic_results,
    tool_call_ids=_anthropic_call_ids,
)

# Below the Anthropic SDK's non-streaming limit: pydantic-ai streams larger requests behind the
# scenes, and these tests mean to exercise the plain JSON path too.
NOT_STREAMED = ModelSettings(max_tokens=1024)


@pytest.fixture(params=[OPENAI, ANTHROPIC], ids=["openai", "anthropic"])
def wire(request: pytest.FixtureRequest) -> Wire:
    return request.param  # type: ignore[no-any-return]


def _model(wire: Wire, stub: StubLLMServer) -> Model:
    return resolve_model(wire.spec, base_url=stub.url + wire.root, api_key=KEY, max_retries=0)


def _count_agent(model: Model) -> tuple[Agent[None, str], list[dict[str, Any]]]:
    """An agent with one tool that records how it was called."""
    calls: list[dict[str, Any]] = []
    agent = Agent(model, name="wiring", instructions="Answer questions about map layers.")

    @agent.tool_plain
    def count_features(layer: str, bbox: list[float]) -> int:
        """Count the features of a layer inside a bounding box (west, south, east, north)."""
        calls.append({"layer": layer, "bbox": bbox})
        return 42

    return agent, calls


ARGS = {"layer": "cafes", "bbox": [13.3, 52.5, 13.4, 52.6]}


def _assert_tool_loop(wire: Wire, stub: StubLLMServer, *, streamed: bool) -> None:
    first, second = stub.received
    for request in (first, second):
        assert request.path.split("?")[0] == wire.path
        assert request.body["model"] == wire.spec.split(":", 1)[1]
        assert wire.key_sent(request) == KEY
        assert bool(request.body.get("stream")) is streamed
    tools = wire.tools(first.body)
    assert tools["count_features"]["description"].startswith("Count the features of a layer")
    schema = tools["count_features"]["schema"]
    assert schema["properties"] == {
        "layer": {"type": "string"},
        "bbox": {"type": "array", "items": {"type": "number"}},
    }
    assert sorted(schema["required"]) == ["bbox", "layer"]
    assert wire.tool_results(first.body) == []
    # The follow-up carries the call the model made and the tool's result, paired by id.
    (call_id,) = wire.tool_call_ids(second.body)
    assert wire.tool_results(second.body) == [(call_id, "42")]


async def test_a_tool_call_round_trip(wire: Wire, stub: StubLLMServer) -> None:
    stub.script(StubReply.call("count_features", ARGS), StubReply.say("There are 42 cafés."))
    model = _model(wire, stub)
    agent, calls = _count_agent(model)
    async with model:
        result = await agent.run("How many cafés in the box?", model_settings=NOT_STREAMED)

    assert result.output == "There are 42 cafés."
    assert calls == [ARGS]
    _assert_tool_loop(wire, stub, streamed=False)


async def test_streamed_events_carry_the_text_deltas(wire: Wire, stub: StubLLMServer) -> None:
    stub.script(
        StubReply.call("count_features", ARGS), StubReply.say("There are ", "42 ", "cafés.")
    )
    model = _model(wire, stub)
    agent, calls = _count_agent(model)
    text: list[str] = []
    tool_events: list[str] = []
    output = None
    async with model, agent.run_stream_events("How many cafés in the box?") as events:
        async for event in events:
            if isinstance(event, PartStartEvent) and isinstance(event.part, TextPart):
                text.append(event.part.content)
            elif isinstance(event, PartDeltaEvent) and isinstance(event.delta, TextPartDelta):
                text.append(event.delta.content_delta)
            elif isinstance(event, FunctionToolCallEvent):
                tool_events.append(f"call {event.part.tool_name} {event.part.args_as_dict()}")
            elif isinstance(event, FunctionToolResultEvent):
                tool_events.append(f"result {event.part.content}")
            elif isinstance(event, AgentRunResultEvent):
                output = event.result.output

    assert [piece for piece in text if piece] == ["There are ", "42 ", "cafés."]
    assert tool_events == [f"call count_features {ARGS}", "result 42"]
    assert output == "There are 42 cafés."
    assert calls == [ARGS]
    _assert_tool_loop(wire, stub, streamed=True)


async def test_run_stream_yields_text_as_it_arrives(wire: Wire, stub: StubLLMServer) -> None:
    stub.script(StubReply.say("Buffered ", "3 ", "parcels."))
    model = _model(wire, stub)
    agent = Agent(model, name="wiring")
    async with model, agent.run_stream("Buffer the parcels.") as result:
        deltas = [d async for d in result.stream_text(delta=True, debounce_by=None)]
    assert deltas == ["Buffered ", "3 ", "parcels."]
    assert [r.body.get("stream") for r in stub.received] == [True]


class Place(BaseModel):
    """A named point."""

    name: str
    lon: float
    lat: float


@pytest.mark.parametrize("streamed", [False, True], ids=["json", "sse"])
async def test_structured_output(wire: Wire, stub: StubLLMServer, streamed: bool) -> None:
    place = {"name": "Brandenburg Gate", "lon": 13.3777, "lat": 52.5163}
    stub.script(StubReply.call("final_result", place))
    model = _model(wire, stub)
    agent = Agent(model, name="wiring", output_type=Place)
    async with model:
        if streamed:
            async with agent.run_stream("Where is the gate?") as stream:
                output = await stream.get_output()
        else:
            output = (await agent.run("Where is the gate?", model_settings=NOT_STREAMED)).output

    assert output == Place.model_validate(place)
    (request,) = stub.received
    assert bool(request.body.get("stream")) is streamed
    schema = wire.tools(request.body)["final_result"]["schema"]
    assert set(schema["properties"]) == {"name", "lon", "lat"}
    assert schema["properties"]["lon"] == {"type": "number"}


@pytest.mark.parametrize(
    ("status", "category"),
    [(429, ModelRateLimitError), (500, ModelServerError), (503, ModelUnavailableError)],
)
@pytest.mark.parametrize("streamed", [False, True], ids=["json", "sse"])
async def test_http_errors_reach_the_caller_without_retries(
    wire: Wire, stub: StubLLMServer, status: int, category: type[Exception], streamed: bool
) -> None:
    stub.script(StubReply.fail(status, "the stub says no"))
    model = _model(wire, stub)
    agent = Agent(model, name="wiring")
    async with model:
        with pytest.raises(ModelHTTPError) as caught:
            if streamed:
                async with agent.run_stream("Hello") as stream:
                    await stream.get_output()
            else:
                await agent.run("Hello", model_settings=NOT_STREAMED)

    assert isinstance(caught.value, category)
    assert caught.value.status_code == status
    assert "the stub says no" in json.dumps(caught.value.body)
    # max_retries=0 reached the SDK: one attempt, no backoff.
    assert len(stub.received) == 1


async def test_the_environment_reaches_the_wire(
    wire: Wire, stub: StubLLMServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("GEOMINT_MODEL", wire.spec)
    monkeypatch.setenv(wire.base_url_env, stub.url + wire.root)
    monkeypatch.setenv(wire.key_env, "key-from-env")
    stub.script(StubReply.say("ok"))
    model = resolve_model()
    async with model:
        result = await Agent(model, name="wiring").run("ping", model_settings=NOT_STREAMED)
    assert result.output == "ok"
    (request,) = stub.received
    assert request.path.split("?")[0] == wire.path
    assert wire.key_sent(request) == "key-from-env"


async def test_a_keyless_local_openai_server_gets_a_placeholder(stub: StubLLMServer) -> None:
    stub.script(StubReply.say("ok"))
    model = resolve_model("openai:llama3.2", base_url=stub.url + "/v1")
    async with model:
        assert (await Agent(model, name="wiring").run("ping")).output == "ok"
    (request,) = stub.received
    assert request.body["model"] == "llama3.2"
    assert OPENAI.key_sent(request) == "not-needed"


async def test_the_real_endpoint_is_unreachable_from_these_tests(
    model_requests: None, refused: list[str]
) -> None:
    """With model requests allowed, as in the stub's tests, the socket guard still refuses
    to look up the real endpoint (tests/testing shows the first guard refusing the request)."""
    model = resolve_model("openai:gpt-4.1", api_key=KEY, max_retries=0)
    async with model:
        with pytest.raises(ModelAPIError):
            await Agent(model, name="wiring").run("ping")
    assert refused == ["api.openai.com"]


async def test_a_cut_body_is_asked_for_again_but_a_cut_stream_is_not(
    wire: Wire, stub: StubLLMServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A JSON body cut short is a failed request, which the SDK sends again; a stream
    cut after it began is the caller's to handle (pydantic-ai raises ModelConnectionError)."""
    monkeypatch.setattr(anyio, "sleep", _no_wait)
    stub.script(StubReply.say("lost").truncated(), StubReply.say("Whole."))
    model = resolve_model(wire.spec, base_url=stub.url + wire.root, api_key=KEY)
    agent = Agent(model, name="wiring")
    async with model:
        result = await agent.run("ping", model_settings=NOT_STREAMED)
        assert result.output == "Whole."
        assert len(stub.received) == 2

        stub.script(StubReply.say("Half ", "of it").truncated())
        with pytest.raises(ModelConnectionError) as caught:
            async with agent.run_stream("ping") as stream:
                await stream.get_output()
    # The SDK's own words are often just "Connection error."; geomint names the cause.
    assert "incomplete chunked read" in model_failure(caught.value)
    assert len(stub.received) == 3


async def _no_wait(delay: float, *args: Any, **kwargs: Any) -> None:
    """``anyio.sleep`` for the SDKs' retries: no wait."""
