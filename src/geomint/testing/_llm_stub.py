"""A scripted stand-in for the OpenAI and Anthropic HTTP APIs, listening on loopback only.

A test scripts what "the model" says next as provider-neutral :class:`StubReply` values;
the server renders each one in the wire format of the endpoint the SDK called (OpenAI
Chat Completions or Anthropic Messages), streamed as server-sent events when the request
asked for ``stream: true``. Every request is recorded, so a test can assert what the SDK
sent. It tests the wiring a :class:`~geomint.testing.Script` skips: the real model
classes, their base URLs, keys, streaming and error handling, without a key or a network.

pydantic-ai's real model classes refuse to send anything while
``pydantic_ai.models.ALLOW_MODEL_REQUESTS`` is False (as inside
:func:`~geomint.testing.offline`); allow them for the stub's duration with
``pydantic_ai.models.override_allow_model_requests(True)``.

Example:
    >>> import asyncio
    >>> from pydantic_ai import Agent
    >>> from pydantic_ai.models import override_allow_model_requests
    >>> from geomint.models import resolve_model
    >>> async def ask(url: str) -> str:
    ...     model = resolve_model("openai:gpt-4.1", base_url=url + "/v1", api_key="sk-test")
    ...     async with model:
    ...         return (await Agent(model).run("Say hello.")).output
    >>> with StubLLMServer() as stub, override_allow_model_requests(True):
    ...     stub.script(StubReply.say("Hello", " there."))
    ...     asyncio.run(ask(stub.url))
    ...     stub.received[0].path, stub.received[0].body["model"]
    'Hello there.'
    ('/v1/chat/completions', 'gpt-4.1')
"""

from __future__ import annotations

import itertools
import json
import threading
from collections import deque
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import Any

__all__ = ["StubLLMServer", "StubReply", "StubRequest", "StubToolCall"]

_CREATED = 1_700_000_000
_OPENAI_USAGE = {"prompt_tokens": 11, "completion_tokens": 7, "total_tokens": 18}


@dataclass(frozen=True, kw_only=True)
class StubToolCall:
    """One tool call the scripted model makes.

    Attributes:
        name: The tool's name.
        args: Its arguments, sent as JSON.
    """

    name: str
    args: dict[str, Any]


@dataclass(frozen=True, kw_only=True)
class StubReply:
    """What the scripted model answers to one request, in no provider's format.

    Attributes:
        chunks: The text, in the pieces a streamed response delivers it in.
        tool_calls: The tool calls, after the text.
        status: The HTTP status; anything but 200 is an error response.
        error: The error message sent with a non-200 status.
    """

    chunks: tuple[str, ...] = ()
    tool_calls: tuple[StubToolCall, ...] = ()
    status: int = 200
    error: str = ""

    @classmethod
    def say(cls, *chunks: str) -> StubReply:
        """Answer with text, streamed in the given pieces."""
        return cls(chunks=chunks)

    @classmethod
    def call(cls, name: str, args: dict[str, Any]) -> StubReply:
        """Answer with one tool call."""
        return cls(tool_calls=(StubToolCall(name=name, args=args),))

    @classmethod
    def fail(cls, status: int, error: str = "scripted failure") -> StubReply:
        """Answer with an HTTP error."""
        return cls(status=status, error=error)

    @property
    def text(self) -> str:
        """The whole text, its pieces joined."""
        return "".join(self.chunks)


@dataclass(frozen=True, kw_only=True)
class StubRequest:
    """One request the stub received.

    Attributes:
        method: The method (always ``POST``).
        path: The path as sent, with its query.
        headers: The request headers, names lower-cased.
        body: The JSON body, parsed.
    """

    method: str
    path: str
    headers: dict[str, str]
    body: dict[str, Any]


@dataclass
class _Script:
    replies: deque[StubReply] = field(default_factory=deque)
    received: list[StubRequest] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)
    ids: Iterator[int] = field(default_factory=lambda: itertools.count(1))


class StubLLMServer:
    """A threaded HTTP server on 127.0.0.1 (a free port) that answers from a script.

    It listens from construction; :meth:`start` (or ``with``) serves in a background
    thread. It serves ``POST /v1/chat/completions`` (OpenAI) and ``POST /v1/messages``
    (Anthropic); any other path gets a 404, so a base URL with a missing or doubled
    ``/v1`` shows. A request after the script has run out gets a 500.
    """

    def __init__(self) -> None:
        self._script = _Script()
        script = self._script

        class Handler(_Handler):
            pass

        Handler.script = script
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        # A short poll keeps shutdown() (and so each test's teardown) quick.
        self._thread = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.01}, daemon=True
        )
        self._started = False

    @property
    def url(self) -> str:
        """The server's root, e.g. ``http://127.0.0.1:54321`` (the SDKs want ``url + "/v1"``)."""
        host, port = self._server.server_address[:2]
        return f"http://{host!s}:{port}"

    @property
    def received(self) -> list[StubRequest]:
        """The requests received so far, oldest first."""
        with self._script.lock:
            return list(self._script.received)

    @property
    def pending(self) -> int:
        """How many scripted replies have not been served yet."""
        with self._script.lock:
            return len(self._script.replies)

    def script(self, *replies: StubReply) -> None:
        """Queue replies, served one per request in order."""
        with self._script.lock:
            self._script.replies.extend(replies)

    def start(self) -> StubLLMServer:
        """Serve in a background thread (again is a no-op)."""
        if not self._started:
            self._thread.start()
            self._started = True
        return self

    def close(self) -> None:
        """Stop serving and close the socket."""
        if self._started:
            self._server.shutdown()
            self._thread.join(timeout=5)
        self._server.server_close()

    def __enter__(self) -> StubLLMServer:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()


class _Handler(BaseHTTPRequestHandler):
    # HTTP/1.0: each connection carries one request and is closed after the response,
    # so no keep-alive socket outlives a test.
    protocol_version = "HTTP/1.0"
    timeout = 10
    script: _Script

    def log_message(self, format: str, *args: Any) -> None:
        """Keep the test output quiet."""

    def do_POST(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        body = json.loads(raw) if raw else {}
        path = self.path.split("?", 1)[0]
        with self.script.lock:
            self.script.received.append(
                StubRequest(
                    method="POST",
                    path=self.path,
                    headers={k.lower(): v for k, v in self.headers.items()},
                    body=body,
                )
            )
            reply = self.script.replies.popleft() if self.script.replies else None
            serial = next(self.script.ids)
        # Exact paths, so a base URL with a missing or doubled /v1 shows up as a 404.
        render: _OpenAI | _Anthropic
        if path == "/v1/chat/completions":
            render = _OpenAI(body, serial)
        elif path == "/v1/messages":
            render = _Anthropic(body, serial)
        else:
            self._json(404, {"error": {"message": f"the stub does not serve {path}"}})
            return
        if reply is None:
            reply = StubReply.fail(500, "the stub's script has no reply left for this request")
        if reply.status != 200:
            self._json(reply.status, render.error(reply))
        elif body.get("stream"):
            self._sse(render.events(reply))
        else:
            self._json(200, render.message(reply))

    def _json(self, status: int, payload: dict[str, Any]) -> None:
        data = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def _sse(self, events: Iterator[tuple[str | None, Any]]) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.end_headers()
        for name, data in events:
            head = f"event: {name}\n" if name else ""
            payload = data if isinstance(data, str) else json.dumps(data)
            self.wfile.write(f"{head}data: {payload}\n\n".encode())
            self.wfile.flush()


def _halves(text: str) -> list[str]:
    """Split a JSON string in two, so streamed arguments arrive in more than one delta."""
    middle = len(text) // 2
    return [part for part in (text[:middle], text[middle:]) if part]


@dataclass
class _OpenAI:
    """Chat Completions: ``POST /v1/chat/completions``."""

    request: dict[str, Any]
    serial: int

    def _base(self, kind: str) -> dict[str, Any]:
        return {
            "id": f"chatcmpl-{self.serial}",
            "object": kind,
            "created": _CREATED,
            "model": self.request.get("model", ""),
        }

    def _finish(self, reply: StubReply) -> str:
        return "tool_calls" if reply.tool_calls else "stop"

    def message(self, reply: StubReply) -> dict[str, Any]:
        message: dict[str, Any] = {"role": "assistant", "content": reply.text or None}
        if reply.tool_calls:
            message["tool_calls"] = [
                {
                    "id": f"call_{self.serial}_{i}",
                    "type": "function",
                    "function": {"name": call.name, "arguments": json.dumps(call.args)},
                }
                for i, call in enumerate(reply.tool_calls)
            ]
        choice = {
            "index": 0,
            "message": message,
            "finish_reason": self._finish(reply),
            "logprobs": None,
        }
        return {**self._base("chat.completion"), "choices": [choice], "usage": _OPENAI_USAGE}

    def events(self, reply: StubReply) -> Iterator[tuple[str | None, Any]]:
        def chunk(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
            choice = {"index": 0, "delta": delta, "finish_reason": finish, "logprobs": None}
            return {**self._base("chat.completion.chunk"), "choices": [choice]}

        yield None, chunk({"role": "assistant", "content": ""})
        for piece in reply.chunks:
            yield None, chunk({"content": piece})
        for i, call in enumerate(reply.tool_calls):
            opening = {
                "index": i,
                "id": f"call_{self.serial}_{i}",
                "type": "function",
                "function": {"name": call.name, "arguments": ""},
            }
            yield None, chunk({"tool_calls": [opening]})
            for part in _halves(json.dumps(call.args)):
                yield None, chunk({"tool_calls": [{"index": i, "function": {"arguments": part}}]})
        yield None, chunk({}, self._finish(reply))
        if (self.request.get("stream_options") or {}).get("include_usage"):
            yield (
                None,
                {**self._base("chat.completion.chunk"), "choices": [], "usage": _OPENAI_USAGE},
            )
        yield None, "[DONE]"

    def error(self, reply: StubReply) -> dict[str, Any]:
        kind = "rate_limit_exceeded" if reply.status == 429 else "server_error"
        return {"error": {"message": reply.error, "type": kind, "param": None, "code": kind}}


@dataclass
class _Anthropic:
    """Messages: ``POST /v1/messages``."""

    request: dict[str, Any]
    serial: int

    def _blocks(self, reply: StubReply) -> list[dict[str, Any]]:
        blocks: list[dict[str, Any]] = []
        if reply.chunks:
            blocks.append({"type": "text", "text": reply.text})
        blocks.extend(
            {"type": "tool_use", "id": f"toolu_{self.serial}_{i}", "name": c.name, "input": c.args}
            for i, c in enumerate(reply.tool_calls)
        )
        return blocks

    def _head(self, content: list[dict[str, Any]]) -> dict[str, Any]:
        return {
            "id": f"msg_{self.serial}",
            "type": "message",
            "role": "assistant",
            "model": self.request.get("model", ""),
            "content": content,
            "stop_reason": None,
            "stop_sequence": None,
            "usage": {"input_tokens": 11, "output_tokens": 1},
        }

    def _stop(self, reply: StubReply) -> str:
        return "tool_use" if reply.tool_calls else "end_turn"

    def message(self, reply: StubReply) -> dict[str, Any]:
        head = self._head(self._blocks(reply))
        return {
            **head,
            "stop_reason": self._stop(reply),
            "usage": {"input_tokens": 11, "output_tokens": 7},
        }

    def events(self, reply: StubReply) -> Iterator[tuple[str | None, Any]]:
        yield "message_start", {"type": "message_start", "message": self._head([])}
        for index, block in enumerate(self._blocks(reply)):
            start: dict[str, Any]
            if block["type"] == "text":
                start = {"type": "text", "text": ""}
                deltas = [{"type": "text_delta", "text": piece} for piece in reply.chunks]
            else:
                start = {**block, "input": {}}
                deltas = [
                    {"type": "input_json_delta", "partial_json": part}
                    for part in _halves(json.dumps(block["input"]))
                ]
            yield (
                "content_block_start",
                {
                    "type": "content_block_start",
                    "index": index,
                    "content_block": start,
                },
            )
            for delta in deltas:
                yield (
                    "content_block_delta",
                    {
                        "type": "content_block_delta",
                        "index": index,
                        "delta": delta,
                    },
                )
            yield "content_block_stop", {"type": "content_block_stop", "index": index}
        yield (
            "message_delta",
            {
                "type": "message_delta",
                "delta": {"stop_reason": self._stop(reply), "stop_sequence": None},
                "usage": {"output_tokens": 7},
            },
        )
        yield "message_stop", {"type": "message_stop"}

    def error(self, reply: StubReply) -> dict[str, Any]:
        kind = {429: "rate_limit_error", 529: "overloaded_error"}.get(reply.status, "api_error")
        return {"type": "error", "error": {"type": kind, "message": reply.error}}
