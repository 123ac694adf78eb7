"""Whole turns of the map agent on the real OpenAI and Anthropic model classes, against a stub
server that misbehaves the way real ones do: parallel tool calls in one streamed response, a
refusal, a 429 with Retry-After, a 500, a stream cut mid-answer, tool arguments that are not
JSON, and the token counts each response reports.

Each test asks what the person would notice: the answer and the error they read, what the
chat keeps (read back from the store), how many requests reached the server and how long the
client waited between them (recorded, not slept), and the turn's tokens.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Iterator
from typing import Any

import anyio
import pytest
from pydantic_ai.models import Model
from typer.testing import CliRunner

from geomint._commands.chat import app
from geomint.agent import MapAgent, RunResult, create_map_agent
from geomint.agent.demo import seed_demo_chat
from geomint.models import ARGUMENT_RETRIES, refusal_message, resolve_model
from geomint.providers import default_providers
from geomint.state import MessageAdded, RunEnded
from geomint.store import Chats, MemoryStore
from geomint.testing import StubLLMServer, StubReply
from geomint.ui import RunEndedPart, TextPart, ToolCallPart, chat_parts

from .test_provider_wiring import ANTHROPIC, OPENAI, Wire

pytestmark = pytest.mark.anyio

CAFES = {"category": "cafe", "where": {"queries": [{"query": "Esplanadinpuisto"}]}}
RESTAURANTS = {"category": "restaurant", "where": {"queries": [{"query": "Esplanadinpuisto"}]}}
WRITTEN = '{"category": "cafe", "where": {"queries": [{"qu'
PICK = StubReply.call("final_result", {"tools": ["discover_places"], "scopes": {}})


@pytest.fixture(params=[OPENAI, ANTHROPIC], ids=["openai", "anthropic"])
def wire(request: pytest.FixtureRequest) -> Wire:
    return request.param  # type: ignore[no-any-return]


@pytest.fixture
def waits(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[float]]:
    """The waits the SDKs' retries asked for, recorded instead of slept.

    Both SDKs wait between attempts with ``anyio.sleep``; here it only yields to the loop.
    """
    asked: list[float] = []
    sleep = anyio.sleep

    async def recorded(delay: float, *args: Any, **kwargs: Any) -> None:
        if delay > 0:
            asked.append(delay)
        await sleep(0)

    monkeypatch.setattr(anyio, "sleep", recorded)
    yield asked


@pytest.fixture
async def agent_on(wire: Wire, stub: StubLLMServer) -> AsyncIterator[Any]:
    """Build the map agent with create_map_agent on the wire's real model class."""
    made: list[tuple[MapAgent, Model]] = []

    def make(*, max_retries: int | None = None) -> MapAgent:
        model = resolve_model(
            wire.spec, base_url=stub.url + wire.root, api_key="k", max_retries=max_retries
        )
        agent = create_map_agent(
            model,
            store=Chats(MemoryStore()),
            code_execution={"mode": "in-process"},
            providers=default_providers({}),
        )
        made.append((agent, model))
        return agent

    yield make
    for agent, model in made:
        async with model:  # type: ignore[attr-defined]
            agent.close()


def _ended(agent: MapAgent, result: RunResult) -> RunEnded:
    (ended,) = [
        e.body for e in agent.chats.trace(result.chat_id, result.run_id)
        if isinstance(e.body, RunEnded)
    ]  # fmt: skip
    return ended


def _read_back(agent: MapAgent, result: RunResult) -> list[Any]:
    """The run's parts as a reopened chat shows them."""
    return chat_parts(agent.chats, result.chat_id, run_id=result.run_id)


async def test_parallel_tool_calls_in_one_streamed_response(
    wire: Wire, stub: StubLLMServer, agent_on: Any
) -> None:
    stub.script(
        PICK.costing(900, 30),
        StubReply.calls(("discover_places", CAFES), ("discover_places", RESTAURANTS)).costing(
            2_000, 60
        ),
        StubReply.say("Found cafés ", "and restaurants.").costing(2_400, 12),
    )
    agent = agent_on()
    result = await agent.run("Cafés and restaurants in the Esplanade park", chat_id="both")

    assert result.errors == [], result.errors
    assert result.text == "Found cafés and restaurants."
    # Both calls came in one response and ran in one step; each wrote its own entry.
    assert result.steps == 2
    calls = [(c["name"], c["args"]["category"], c["ok"]) for c in result.tool_calls]
    assert sorted(calls) == [
        ("discover_places", "cafe", True),
        ("discover_places", "restaurant", True),
    ]
    assert sorted(result.entries) == ["places-1", "places-2"]
    _, first, second = stub.received
    assert first.body.get("stream") is True
    # Both results went back in the next request, each paired with its call's id.
    ids = wire.tool_call_ids(second.body)
    assert len(ids) == 2
    assert sorted(call_id for call_id, _ in wire.tool_results(second.body)) == sorted(ids)
    # The turn's tokens: the classifier's request and the loop's two.
    assert (result.requests, result.input_tokens, result.output_tokens) == (3, 5_300, 102)
    ended = _ended(agent, result)
    assert (ended.requests, ended.input_tokens, ended.output_tokens) == (3, 5_300, 102)
    assert ended.model == wire.spec.split(":", 1)[1]
    # A reopened chat shows the same counts.
    (shown,) = [p for p in _read_back(agent, result) if isinstance(p, RunEndedPart)]
    assert (shown.requests, shown.input_tokens, shown.output_tokens) == (3, 5_300, 102)


async def test_a_refusal_ends_the_turn_with_the_models_reason(
    stub: StubLLMServer, agent_on: Any
) -> None:
    stub.script(PICK, StubReply.refuse("I can't help with that request."))
    agent = agent_on()
    result = await agent.run("Cafés in the Esplanade park", chat_id="no")

    assert result.stopped
    assert result.errors == [refusal_message("I can't help with that request.")]
    assert "I can't help with that request." in result.errors[0]
    assert result.text == ""
    # The refused request still counts: the server answered it.
    assert (result.requests, result.input_tokens, result.output_tokens) == (2, 22, 14)
    ended = _read_back(agent, result)[-1]
    assert isinstance(ended, RunEndedPart) and ended.error == result.errors[0]


# OpenAI sends a refusal instead of content, never after it.
@pytest.mark.parametrize("wire", [ANTHROPIC], ids=["anthropic"])
async def test_a_refusal_after_some_text_keeps_the_text_and_says_it_was_refused(
    stub: StubLLMServer, agent_on: Any, wire: Wire
) -> None:
    stub.script(PICK, StubReply.refuse("I won't continue.", "Here is ", "how to"))
    agent = agent_on()
    result = await agent.run("Cafés in the Esplanade park", chat_id="half")

    # pydantic-ai alone would take "Here is how to" as the answer; geomint says it was refused.
    assert result.text == "Here is how to"
    assert result.stopped
    assert result.errors == [refusal_message("I won't continue.")]
    kept = [p.text for p in _read_back(agent, result) if isinstance(p, TextPart)]
    assert kept == ["Here is how to"]


async def test_a_429_is_retried_after_the_wait_the_server_asked_for(
    wire: Wire, stub: StubLLMServer, agent_on: Any, waits: list[float]
) -> None:
    stub.script(
        PICK,
        StubReply.fail(429, "Rate limit reached for requests", retry_after=3),
        StubReply.say("Still here."),
    )
    agent = agent_on()  # the SDK's default: two retries
    result = await agent.run("Cafés in the Esplanade park", chat_id="slow")

    assert result.errors == [], result.errors
    assert result.text == "Still here."
    assert waits == [3.0]
    _, refused, retried = stub.received
    assert refused.body == retried.body  # the same request, sent again
    # Only the answered requests count.
    assert (result.requests, result.input_tokens, result.output_tokens) == (2, 22, 14)


async def test_a_429_that_outlasts_the_retries_says_so(
    stub: StubLLMServer, agent_on: Any, waits: list[float]
) -> None:
    stub.script(
        PICK,
        StubReply.fail(429, "Rate limit reached", retry_after=7),
        StubReply.fail(429, "Rate limit reached", retry_after=7),
    )
    agent = agent_on(max_retries=1)
    result = await agent.run("Cafés in the Esplanade park", chat_id="slower")

    assert waits == [7.0]
    assert result.stopped
    assert result.errors == [
        "The model server is limiting requests (HTTP 429: Rate limit reached; it asked for a "
        "wait of 7 s). Wait a minute and ask again; a higher rate limit or quota from the "
        "provider stops it."
    ]


async def test_a_500_is_retried_then_reaches_the_person_and_the_chat_keeps_everything(
    stub: StubLLMServer, agent_on: Any, waits: list[float]
) -> None:
    stub.script(
        PICK,
        StubReply.call("discover_places", CAFES),
        StubReply.say("There is one café."),
        PICK,
        *[StubReply.fail(500, "The server had an error while processing your request.")] * 3,
    )
    agent = agent_on()
    first = await agent.run("Cafés in the Esplanade park", chat_id="kept")
    assert first.errors == [], first.errors
    result = await agent.run("And restaurants?", chat_id="kept")

    assert result.stopped
    assert result.errors == [
        "The model server failed (HTTP 500: The server had an error while processing your "
        "request.), also when geomint's client retried. It is usually brief: ask again in a "
        "moment."
    ]
    # Three attempts, with the SDK's exponential backoff (0.5 s, then 1 s, less jitter).
    assert len(stub.received) == 3 + 1 + 3
    assert len(waits) == 2
    assert 0.375 <= waits[0] <= 0.5 and 0.75 <= waits[1] <= 1.0
    # The person sees it as the run's end; the chat keeps both questions, the first
    # answer, its entry and how the second turn ended.
    parts = chat_parts(agent.chats, "kept")
    ended = parts[-1]
    assert isinstance(ended, RunEndedPart)
    assert ended.error == result.errors[0] and ended.stopped
    assert [p.text for p in parts if isinstance(p, TextPart)] == ["There is one café."]
    questions = [
        e.body.text()
        for e in agent.chats.trace("kept")
        if isinstance(e.body, MessageAdded) and e.body.role == "user"
    ]
    assert questions == ["Cafés in the Esplanade park", "And restaurants?"]
    assert [p.tool for p in parts if isinstance(p, ToolCallPart)] == ["discover_places"]
    assert result.parts[-1] == ended


async def test_a_classifier_the_server_fails_fails_open_and_the_turn_goes_on(
    stub: StubLLMServer, agent_on: Any, waits: list[float]
) -> None:
    stub.script(
        *[StubReply.fail(503, "Service Unavailable")] * 3,
        StubReply.say("Every tool was offered.").costing(4_000, 6),
    )
    agent = agent_on()
    result = await agent.run("Cafés in the Esplanade park", chat_id="open")

    assert result.errors == [], result.errors
    assert result.text == "Every tool was offered."
    assert result.classification is not None
    assert str(result.classification["failed"]).startswith("ModelUnavailableError")
    assert set(result.classification["active"]) == set(agent.registry)
    assert len(waits) == 2
    # Only the answered request counts.
    assert (result.requests, result.input_tokens, result.output_tokens) == (1, 4_000, 6)


async def test_a_stream_cut_mid_answer_keeps_what_arrived_and_says_what_broke(
    stub: StubLLMServer, agent_on: Any
) -> None:
    stub.script(PICK, StubReply.say("There are ", "four cafés").truncated())
    agent = agent_on()
    result = await agent.run("Cafés in the Esplanade park", chat_id="cut")

    assert result.text == "There are four cafés"
    assert result.stopped
    (error,) = result.errors
    assert error.startswith(
        "The connection to the model server broke off before its answer was complete ("
    )
    assert "incomplete chunked read" in error
    assert error.endswith("What was said so far is kept; ask again to go on.")
    # A broken stream is not sent again: the server may have acted on it.
    assert len(stub.received) == 2
    kept = [p.text for p in _read_back(agent, result) if isinstance(p, TextPart)]
    assert kept == ["There are four cafés"]


async def test_malformed_tool_arguments_go_back_to_the_model_which_writes_them_again(
    wire: Wire, stub: StubLLMServer, agent_on: Any
) -> None:
    stub.script(
        PICK,
        StubReply.call("discover_places", WRITTEN),
        StubReply.call("discover_places", CAFES),
        StubReply.say("Found one café."),
    )
    agent = agent_on()
    result = await agent.run("Cafés in the Esplanade park", chat_id="json")

    assert result.errors == [], result.errors
    assert result.text == "Found one café."
    # The unreadable call never ran; the model read why and called again.
    _, _, retry, _ = stub.received
    ((call_id, told),) = wire.tool_results(retry.body)[:1]
    assert call_id == wire.tool_call_ids(retry.body)[0]
    assert "json_invalid" in told and "Invalid JSON: EOF while parsing" in told
    # The person sees it as a failed call, with the text as the model wrote it.
    (unread, ran) = result.tool_calls
    assert (unread["name"], unread["ok"], ran["ok"]) == ("discover_places", False, True)
    assert unread["call_id"] == call_id
    assert unread["args"] == {"as_written": WRITTEN}
    assert unread["result"]["error"].startswith(
        "the arguments could not be read (Invalid JSON: EOF while parsing a string"
    )
    assert unread["result"]["error"].endswith("the model was asked to write the call again")
    assert list(agent.chats.open("json").entries) == ["places-1"]  # the second call's
    calls = [p for p in _read_back(agent, result) if isinstance(p, ToolCallPart)]
    assert [p.call_id for p in calls] == [call_id, ran["call_id"]]


async def test_arguments_that_stay_malformed_end_the_turn_with_a_clear_error(
    stub: StubLLMServer, agent_on: Any
) -> None:
    broken = StubReply.call("discover_places", '{"category": "cafe", ')
    stub.script(PICK, *[broken] * (ARGUMENT_RETRIES + 1))
    agent = agent_on()
    result = await agent.run("Cafés in the Esplanade park", chat_id="broken")

    assert result.stopped
    (error,) = result.errors
    assert error.startswith(
        f"The model kept writing calls of discover_places that could not be read "
        f"({ARGUMENT_RETRIES + 1} in a row; the last: "
    )
    assert "EOF while parsing" in error or "json" in error.lower()
    assert error.endswith("use a model that handles tool calls (docs/models.md).")
    # Each attempt is in the log as a failed call; none reached the tool.
    assert [c["ok"] for c in result.tool_calls] == [False] * (ARGUMENT_RETRIES + 1)
    *sent_back, last = [c["result"]["error"] for c in result.tool_calls]
    assert all(e.startswith("the arguments could not be read (") for e in sent_back)
    assert last == "not run: the turn ended before it could be"
    assert agent.chats.open("broken").entries == {}
    assert result.requests == ARGUMENT_RETRIES + 2


def test_a_run_kept_before_tokens_were_counted_reads_and_writes_as_it_was() -> None:
    kept = {"type": "run_ended", "steps": 2, "stopped": False, "error": None, "cited": 1,
            "matched": 0, "unminted": 0}  # fmt: skip
    body = RunEnded.model_validate(kept)
    assert body.requests is None and body.input_tokens is None
    assert json.loads(body.model_dump_json()) == kept


def test_the_terminal_shows_the_turns_tokens_under_the_answer(
    stub: StubLLMServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("GEOMINT_MODEL", OPENAI.spec)
    monkeypatch.setenv("OPENAI_BASE_URL", stub.url + "/v1")
    stub.script(
        StubReply.call("final_result", {"tools": [], "scopes": {}}).costing(1_200, 20),
        StubReply.say("Hello.").costing(1_500, 3),
    )
    result = CliRunner().invoke(app, ["--once", "Say hello", "--store", "memory:"])

    assert result.exit_code == 0, result.output
    assert "Hello." in result.output
    assert "1 step · 2,723 tokens · resume: geomint chat --chat " in result.output


async def test_the_demo_model_records_its_requests_but_no_tokens() -> None:
    agent = create_map_agent("demo", store="memory:", code_execution={"mode": "in-process"})
    try:
        chat = await seed_demo_chat(agent, "demo")
        result = await agent.run("What can you do?", chat_id=chat)
        ended = _ended(agent, result)
    finally:
        agent.close()
    assert ended.requests == 3 and ended.model == "geomint-demo"
    assert ended.input_tokens is None and ended.output_tokens is None
    assert "tokens" not in ended.model_dump_json(exclude_none=False)
