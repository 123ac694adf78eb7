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

Beyond text and tool calls, a reply can do what real servers do to a client: several tool
calls in one response (:meth:`StubReply.calls`), a refusal (:meth:`StubReply.refuse`), an
HTTP error with a ``Retry-After`` header (:meth:`StubReply.fail`), a connection that breaks
off mid-answer (:meth:`StubReply.truncated`), tool arguments that are not valid JSON (a
:class:`StubToolCall` whose ``args`` is a string), and the token counts it reports
(:meth:`StubReply.costing`).
"""

from __future__ import annotations

import itertools
import json
import threading
from collections import deque
from collections.abc import Iterator
from dataclasses import dataclass, field, replace
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import Any

__all__ = ["StubLLMServer", "StubReply", "StubRequest", "StubToolCall"]

_CREATED = 1_700_000_000


@dataclass(frozen=True, kw_only=True)
class StubToolCall:
    """One tool call the scripted model makes.

    Attributes:
        name: The tool's name.
        args: Its arguments: a dict is sent as JSON; a string is sent exactly as written,
            so a test can send arguments that are not valid JSON, as a model sometimes
            writes them. (Anthropic's API parses a call's input before a non-streamed
            response is sent, so only a streamed reply carries such text from a real
            server; the stub sends it either way.)
    """

    name: str
    args: dict[str, Any] | str

    @property
    def arguments(self) -> str:
        """The arguments as the wire carries them: JSON text."""
        return self.args if isinstance(self.args, str) else json.dumps(self.args)


@dataclass(frozen=True, kw_only=True)
class StubReply:
    """What the scripted model answers to one request, in no provider's format.

    Attributes:
        chunks: The text, in the pieces a streamed response delivers it in.
        tool_calls: The tool calls, after the text, all in the one response.
        refusal: The model declines, saying this: OpenAI's ``refusal`` field in place of
            content, Anthropic's ``stop_reason: "refusal"`` with it as the explanation
            (after the text pieces, which a refusing Anthropic model may have begun).
        input_tokens: The prompt tokens the response reports.
        output_tokens: The completion tokens it reports.
        cut: The connection closes partway. Streamed: after the text pieces, halfway
            through the next server-sent event, with no end to the chunked body (no tool
            call, no finish). Not streamed: halfway through the JSON body.
        status: The HTTP status; anything but 200 is an error response.
        error: The error message sent with a non-200 status.
        retry_after: Seconds sent in a ``Retry-After`` header with an error.
    """

    chunks: tuple[str, ...] = ()
    tool_calls: tuple[StubToolCall, ...] = ()
    refusal: str = ""
    input_tokens: int = 11
    output_tokens: int = 7
    cut: bool = False
    status: int = 200
    error: str = ""
    retry_after: float | None = None

    @classmethod
    def say(cls, *chunks: str) -> StubReply:
        """Answer with text, streamed in the given pieces."""
        return cls(chunks=chunks)

    @classmethod
    def call(cls, name: str, args: dict[str, Any] | str) -> StubReply:
        """Answer with one tool call (``args`` as a string is sent verbatim)."""
        return cls(tool_calls=(StubToolCall(name=name, args=args),))

    @classmethod
    def calls(cls, *calls: tuple[str, dict[str, Any] | str]) -> StubReply:
        """Answer with several tool calls in one response (parallel calls), in order."""
        return cls(tool_calls=tuple(StubToolCall(name=n, args=a) for n, a in calls))

    @classmethod
    def refuse(cls, refusal: str, *chunks: str) -> StubReply:
        """Decline to answer, after the text pieces given (Anthropic only sends those)."""
        return cls(chunks=chunks, refusal=refusal)

    @classmethod
    def fail(
        cls, status: int, error: str = "scripted failure", *, retry_after: float | None = None
    ) -> StubReply:
        """Answer with an HTTP error, with a ``Retry-After`` header when given."""
        return cls(status=status, error=error, retry_after=retry_after)

    def costing(self, input_tokens: int, output_tokens: int) -> StubReply:
        """This reply, reporting these token counts."""
        return replace(self, input_tokens=input_tokens, output_tokens=output_tokens)

    def truncated(self) -> StubReply:
        """This reply, its connection closed partway (see :attr:`cut`)."""
        return replace(self, cut=True)

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


class _Cut:
    """Where a truncated stream stops: the renderers put one after the text pieces."""


_CUT = _Cut()
_Event = tuple[str | None, Any] | _Cut


class _Handler(BaseHTTPRequestHandler):
    # HTTP/1.1, so a streamed body is chunked as real servers send it and a stream that
    # breaks off is an incomplete body the client notices; every response says
    # "Connection: close", so no keep-alive socket outlives a test.
    protocol_version = "HTTP/1.1"
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
            headers = {}
            if reply.retry_after is not None:
                headers["Retry-After"] = f"{reply.retry_after:g}"
            self._json(reply.status, render.error(reply), headers=headers)
        elif body.get("stream"):
            self._sse(render.events(reply), cut=reply.cut)
        else:
            self._json(200, render.message(reply), cut=reply.cut)

    def _json(
        self,
        status: int,
        payload: dict[str, Any],
        *,
        headers: dict[str, str] | None = None,
        cut: bool = False,
    ) -> None:
        data = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.send_header("Connection", "close")
        self.end_headers()
        # Cut: the length promised, half of it sent, then the connection closes.
        self.wfile.write(data[: len(data) // 2] if cut else data)

    def _sse(self, events: Iterator[_Event], *, cut: bool) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Transfer-Encoding", "chunked")
        self.send_header("Connection", "close")
        self.end_headers()
        cutting = False
        for event in events:
            if isinstance(event, _Cut):
                cutting = cut
                continue
            name, data = event
            head = f"event: {name}\n" if name else ""
            payload = data if isinstance(data, str) else json.dumps(data)
            encoded = f"{head}data: {payload}\n\n".encode()
            if cutting:
                # Half an event, and no last chunk: the body ends where no body may end.
                self._chunk(encoded[: len(encoded) // 2])
                return
            self._chunk(encoded)
        self.wfile.write(b"0\r\n\r\n")

    def _chunk(self, data: bytes) -> None:
        self.wfile.write(f"{len(data):X}\r\n".encode() + data + b"\r\n")
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
        # A refusal finishes as "stop": the refusal field, not the reason, says so.
        return "tool_calls" if reply.tool_calls and not reply.refusal else "stop"

    def _usage(self, reply: StubReply) -> dict[str, int]:
        return {
            "prompt_tokens": reply.input_tokens,
            "completion_tokens": reply.output_tokens,
            "total_tokens": reply.input_tokens + reply.output_tokens,
        }

    def message(self, reply: StubReply) -> dict[str, Any]:
        message: dict[str, Any] = {"role": "assistant", "content": reply.text or None}
        if reply.refusal:
            # OpenAI sends a refusal instead of content, never beside it.
            message = {"role": "assistant", "content": None, "refusal": reply.refusal}
        elif reply.tool_calls:
            message["tool_calls"] = [
                {
                    "id": f"call_{self.serial}_{i}",
                    "type": "function",
                    "function": {"name": call.name, "arguments": call.arguments},
                }
                for i, call in enumerate(reply.tool_calls)
            ]
        choice = {
            "index": 0,
            "message": message,
            "finish_reason": self._finish(reply),
            "logprobs": None,
        }
        return {
            **self._base("chat.completion"),
            "choices": [choice],
            "usage": self._usage(reply),
        }

    def events(self, reply: StubReply) -> Iterator[_Event]:
        def chunk(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
            choice = {"index": 0, "delta": delta, "finish_reason": finish, "logprobs": None}
            return {**self._base("chat.completion.chunk"), "choices": [choice]}

        yield None, chunk({"role": "assistant", "content": ""})
        if reply.refusal:
            for piece in _halves(reply.refusal):
                yield None, chunk({"refusal": piece})
        else:
            for piece in reply.chunks:
                yield None, chunk({"content": piece})
        yield _CUT
        for i, call in enumerate(() if reply.refusal else reply.tool_calls):
            opening = {
                "index": i,
                "id": f"call_{self.serial}_{i}",
                "type": "function",
                "function": {"name": call.name, "arguments": ""},
            }
            yield None, chunk({"tool_calls": [opening]})
            for part in _halves(call.arguments):
                yield None, chunk({"tool_calls": [{"index": i, "function": {"arguments": part}}]})
        yield None, chunk({}, self._finish(reply))
        if (self.request.get("stream_options") or {}).get("include_usage"):
            usage = self._usage(reply)
            yield None, {**self._base("chat.completion.chunk"), "choices": [], "usage": usage}
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
        if reply.refusal:
            return blocks
        blocks.extend(
            {"type": "tool_use", "id": f"toolu_{self.serial}_{i}", "name": c.name, "input": c.args}
            for i, c in enumerate(reply.tool_calls)
        )
        return blocks

    def _head(self, content: list[dict[str, Any]], reply: StubReply) -> dict[str, Any]:
        return {
            "id": f"msg_{self.serial}",
            "type": "message",
            "role": "assistant",
            "model": self.request.get("model", ""),
            "content": content,
            "stop_reason": None,
            "stop_sequence": None,
            "usage": {"input_tokens": reply.input_tokens, "output_tokens": 1},
        }

    def _stop(self, reply: StubReply) -> dict[str, Any]:
        """The stop reason and, for a refusal, its details."""
        if reply.refusal:
            details = {"type": "refusal", "category": None, "explanation": reply.refusal}
            return {"stop_reason": "refusal", "stop_sequence": None, "stop_details": details}
        reason = "tool_use" if reply.tool_calls else "end_turn"
        return {"stop_reason": reason, "stop_sequence": None}

    def message(self, reply: StubReply) -> dict[str, Any]:
        return {
            **self._head(self._blocks(reply), reply),
            **self._stop(reply),
            "usage": {"input_tokens": reply.input_tokens, "output_tokens": reply.output_tokens},
        }

    def events(self, reply: StubReply) -> Iterator[_Event]:
        yield "message_start", {"type": "message_start", "message": self._head([], reply)}
        if not reply.chunks:
            yield _CUT
        for index, block in enumerate(self._blocks(reply)):
            start: dict[str, Any]
            if block["type"] == "text":
                start = {"type": "text", "text": ""}
                deltas = [{"type": "text_delta", "text": piece} for piece in reply.chunks]
            else:
                start = {**block, "input": {}}
                given = block["input"]
                text = given if isinstance(given, str) else json.dumps(given)
                deltas = [{"type": "input_json_delta", "partial_json": p} for p in _halves(text)]
            yield (
                "content_block_start",
                {"type": "content_block_start", "index": index, "content_block": start},
            )
            for delta in deltas:
                yield (
                    "content_block_delta",
                    {"type": "content_block_delta", "index": index, "delta": delta},
                )
            if block["type"] == "text":
                yield _CUT
            yield "content_block_stop", {"type": "content_block_stop", "index": index}
        yield (
            "message_delta",
            {
                "type": "message_delta",
                "delta": self._stop(reply),
                "usage": {"output_tokens": reply.output_tokens},
            },
        )
        yield "message_stop", {"type": "message_stop"}

    def error(self, reply: StubReply) -> dict[str, Any]:
        kind = {429: "rate_limit_error", 529: "overloaded_error"}.get(reply.status, "api_error")
        return {"type": "error", "error": {"type": kind, "message": reply.error}}
