"""A local HTTP server that answers with recorded responses, for tests of HTTP services.

A provider's tests need not reach the internet: they point its ``base_url`` at this
server on 127.0.0.1, which answers each request from a table of routes, and then assert
what the provider sent. A route matches on the method, the path (a regular expression,
matched in full against the percent-decoded path) and the query parameters it requires;
it answers with a status, headers and a body read from a file of the recordings folder
(or given inline). Routes added later win, so a test can shadow a recorded answer with an
error for one call.

Recordings can be listed in a manifest, ``routes.json`` in the recordings folder::

    {"routes": [
        {"method": "GET", "path": "/search/2/poiSearch/.+\\\\.json",
         "query": {"key": null, "limit": "5"}, "file": "poi_search.json"},
        {"method": "GET", "path": "/status", "status": 503,
         "headers": {"Retry-After": "1"}, "body": "down"}
    ]}

In ``query``, a string must equal the parameter's value, ``null`` only asks that the
parameter be present, and ``{"regex": "..."}`` must match its value in full.

Example:
    >>> import json, urllib.request
    >>> with RecordedServer() as server:
    ...     _ = server.add("GET", "/hello", query={"name": None}, body='{"hi": 1}')
    ...     with urllib.request.urlopen(server.base_url + "/hello?name=x") as answer:
    ...         json.load(answer)
    ...     server.requests[0].query
    {'hi': 1}
    {'name': ['x']}

A request no route matches gets a 404 whose JSON body says so, and is kept in
:attr:`RecordedServer.unmatched`, so a test can assert that every request was expected.

Unlike :class:`~geomint.http.ScriptedTransport`, which replaces the connection, this
server is reached over a real socket: use it where the code under test builds its own
client (a provider given only a URL), or to test the connection layer itself.
"""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, unquote, urlsplit

__all__ = ["RecordedReply", "RecordedRequest", "RecordedRoute", "RecordedServer"]

QueryRule = str | re.Pattern[str] | None
_RANGE = re.compile(r"bytes=(\d{1,18})-(\d{0,18})")


@dataclass(frozen=True, kw_only=True)
class RecordedReply:
    """One answer the server gives.

    Attributes:
        status: The HTTP status.
        body: The body, inline (text is sent as UTF-8); ignored when ``file`` is given.
        file: A file of the recordings folder whose bytes are the body.
        headers: More response headers (``Content-Length`` is always set).
        content_type: The ``Content-Type``.
        delay_s: Seconds to wait before answering (a slow service); the wait ends early
            when the server stops.
        ranges: Answer a ``Range: bytes=a-b`` request with ``206 Partial Content`` and
            only those bytes (read from the file without loading the rest), as a file
            server does; when False, a ``Range`` header is ignored and the whole body
            sent (as a server that does not serve ranges).
    """

    status: int = 200
    body: bytes | str = b""
    file: str | None = None
    headers: Mapping[str, str] = field(default_factory=dict)
    content_type: str = "application/json"
    delay_s: float = 0.0
    ranges: bool = False


@dataclass(kw_only=True)
class RecordedRoute:
    """Which requests a route answers, and its replies, given in turn (the last repeats).

    Attributes:
        method: ``GET`` or ``POST`` (any method the handler serves).
        path: A regular expression the percent-decoded path must match in full.
        query: Parameters the request must carry: a string to equal, a compiled pattern
            to match in full, or None for any value.
        replies: The answers, one per matching request; the last is given again after.
        hits: How many requests this route answered.
        bytes_sent: How many body bytes it sent in all (what a client's reads cost).
    """

    method: str
    path: re.Pattern[str]
    query: Mapping[str, QueryRule]
    replies: Sequence[RecordedReply]
    hits: int = 0
    bytes_sent: int = 0

    def matches(self, method: str, path: str, query: Mapping[str, list[str]]) -> bool:
        """Whether this route answers a request."""
        if method != self.method or not self.path.fullmatch(path):
            return False
        for name, rule in self.query.items():
            values = query.get(name)
            if not values:
                return False
            if isinstance(rule, str) and rule not in values:
                return False
            if isinstance(rule, re.Pattern) and not any(rule.fullmatch(v) for v in values):
                return False
        return True

    def next_reply(self) -> RecordedReply:
        """The reply for the next request, counting it."""
        reply = self.replies[min(self.hits, len(self.replies) - 1)]
        self.hits += 1
        return reply


@dataclass(frozen=True, kw_only=True)
class RecordedRequest:
    """A request the server received.

    Attributes:
        method: The method.
        path: The path, percent-decoded.
        raw_path: The path as sent.
        query: Every query parameter, each with all its values, decoded.
        headers: The request headers, names lowercased.
        body: The request body.
        url: The full URL as sent (path and query), for asserting that a secret is there.
    """

    method: str
    path: str
    raw_path: str
    query: dict[str, list[str]]
    headers: dict[str, str]
    body: bytes
    url: str

    def param(self, name: str) -> str | None:
        """The first value of a query parameter, or None."""
        values = self.query.get(name)
        return values[0] if values else None

    def json(self) -> Any:
        """The body parsed as JSON."""
        return json.loads(self.body)


class _HTTPServer(ThreadingHTTPServer):
    daemon_threads = True
    owner: RecordedServer

    def handle_error(self, request: Any, client_address: Any) -> None:
        pass  # clients hang up on purpose (timeouts, refused bodies)


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    timeout = 10
    server: _HTTPServer

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def do_GET(self) -> None:
        self._answer()

    def do_POST(self) -> None:
        self._answer()

    def _answer(self) -> None:
        owner = self.server.owner
        parts = urlsplit(self.path)
        length = int(self.headers.get("Content-Length", "0"))
        seen = RecordedRequest(
            method=self.command,
            path=unquote(parts.path),
            raw_path=parts.path,
            query=parse_qs(parts.query, keep_blank_values=True),
            headers={name.lower(): value for name, value in self.headers.items()},
            body=self.rfile.read(length) if length else b"",
            url=self.path,
        )
        route, reply = owner._reply_for(seen)
        if reply.delay_s and owner._stopping.wait(reply.delay_s):
            return
        status, body, extra = owner._ranged(reply, seen.headers.get("range"))
        try:
            self.send_response(status)
            self.send_header("Content-Type", reply.content_type)
            self.send_header("Content-Length", str(len(body)))
            for name, value in {**reply.headers, **extra}.items():
                self.send_header(name, value)
            self.end_headers()
            self.wfile.write(body)
        except OSError:
            pass  # the client gave up waiting
        else:
            if route is not None:
                with owner._lock:
                    route.bytes_sent += len(body)


class RecordedServer:
    """Serve recorded responses on 127.0.0.1 and remember every request.

    Args:
        directory: The recordings folder: bodies named by ``file`` are read from it.
        manifest: A file of ``directory`` listing routes (see the module docstring), or
            None for none; routes can also be added with :meth:`add`.

    Attributes:
        base_url: ``http://127.0.0.1:<port>``, once started.
        requests: Every request received, in order.
        unmatched: The requests no route matched (each was answered 404).
    """

    def __init__(self, directory: Path | str | None = None, manifest: str | None = None) -> None:
        self.directory = Path(directory) if directory is not None else None
        self.requests: list[RecordedRequest] = []
        self.unmatched: list[RecordedRequest] = []
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        self._recorded: list[RecordedRoute] = []
        self._added: list[RecordedRoute] = []
        self._httpd: _HTTPServer | None = None
        self._thread: threading.Thread | None = None
        if manifest is not None:
            if self.directory is None:
                raise ValueError("a manifest is read from the recordings directory; pass one")
            self._recorded = [
                self._route_of(entry)
                for entry in json.loads((self.directory / manifest).read_text())["routes"]
            ]

    # -- lifecycle ---------------------------------------------------------------------------

    def start(self) -> RecordedServer:
        """Listen on a free port of 127.0.0.1 and serve in a background thread."""
        httpd = _HTTPServer(("127.0.0.1", 0), _Handler)
        httpd.owner = self
        self._httpd = httpd
        self._thread = threading.Thread(
            target=httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop serving, ending any delayed reply at once."""
        self._stopping.set()
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()
        if self._thread is not None:
            self._thread.join()

    def __enter__(self) -> RecordedServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    @property
    def base_url(self) -> str:
        """``http://127.0.0.1:<port>``."""
        if self._httpd is None:
            raise RuntimeError("the server is not started; call start() or use it in `with`")
        return f"http://127.0.0.1:{self._httpd.server_address[1]}"

    # -- routes ------------------------------------------------------------------------------

    def add(
        self,
        method: str,
        path: str,
        *,
        query: Mapping[str, QueryRule] | None = None,
        status: int = 200,
        body: bytes | str = b"",
        file: str | None = None,
        headers: Mapping[str, str] | None = None,
        content_type: str = "application/json",
        delay_s: float = 0.0,
        ranges: bool = False,
        replies: Sequence[RecordedReply] | None = None,
    ) -> RecordedRoute:
        """Answer matching requests, ahead of every route added before.

        Either describe one reply (``status``, ``body`` or ``file``, ``headers``,
        ``ranges``...) or give ``replies``, served in turn with the last one repeating:
        a 429 then a 200.
        """
        given = (
            list(replies)
            if replies
            else [
                RecordedReply(
                    status=status,
                    body=body,
                    file=file,
                    headers=dict(headers or {}),
                    content_type=content_type,
                    delay_s=delay_s,
                    ranges=ranges,
                )
            ]
        )
        for reply in given:
            if reply.file is not None:
                self._file(reply.file)  # fail now, not at request time
        route = RecordedRoute(
            method=method.upper(), path=re.compile(path), query=dict(query or {}), replies=given
        )
        with self._lock:
            self._added.append(route)
        return route

    def reset(self) -> None:
        """Forget the routes added with :meth:`add` and every request; keep the manifest's."""
        with self._lock:
            self._added.clear()
            self.requests.clear()
            self.unmatched.clear()
            for route in self._recorded:
                route.hits = 0

    def sent(self, path: str, method: str | None = None) -> list[RecordedRequest]:
        """The requests whose decoded path matches ``path`` (a regex) in full."""
        pattern = re.compile(path)
        return [
            seen
            for seen in list(self.requests)
            if pattern.fullmatch(seen.path) and (method is None or seen.method == method)
        ]

    # -- internals ---------------------------------------------------------------------------

    def _route_of(self, entry: Mapping[str, Any]) -> RecordedRoute:
        query: dict[str, QueryRule] = {}
        for name, rule in (entry.get("query") or {}).items():
            query[name] = re.compile(rule["regex"]) if isinstance(rule, dict) else rule
        reply = RecordedReply(
            status=int(entry.get("status", 200)),
            body=entry.get("body", b""),
            file=entry.get("file"),
            headers=dict(entry.get("headers") or {}),
            content_type=entry.get("content_type", "application/json"),
            delay_s=float(entry.get("delay_s", 0.0)),
        )
        if reply.file is not None:
            self._file(reply.file)
        return RecordedRoute(
            method=str(entry["method"]).upper(),
            path=re.compile(entry["path"]),
            query=query,
            replies=[reply],
        )

    def _file(self, name: str) -> Path:
        if self.directory is None:
            raise ValueError(f"reply file {name!r} needs a recordings directory")
        path = self.directory / name
        if not path.is_file():
            raise FileNotFoundError(f"no recorded response {path}")
        return path

    def _reply_for(self, seen: RecordedRequest) -> tuple[RecordedRoute | None, RecordedReply]:
        with self._lock:
            self.requests.append(seen)
            for route in [*reversed(self._added), *reversed(self._recorded)]:
                if route.matches(seen.method, seen.path, seen.query):
                    return route, route.next_reply()
            self.unmatched.append(seen)
        problem = {"error": f"no recorded response for {seen.method} {seen.path}"}
        return None, RecordedReply(status=404, body=json.dumps(problem))

    def _ranged(self, reply: RecordedReply, asked: str | None) -> tuple[int, bytes, dict[str, str]]:
        """The status, body and extra headers of a reply, one range of it if asked."""
        found = _RANGE.fullmatch(asked.strip()) if asked and reply.ranges else None
        if found is None or reply.status != 200:
            extra = {"Accept-Ranges": "bytes"} if reply.ranges else {}
            return reply.status, self._body_of(reply), extra
        size = self._size_of(reply)
        start = int(found[1])
        end = min(int(found[2]) if found[2] else size - 1, size - 1)
        if start >= size or end < start:
            return 416, b"", {"Content-Range": f"bytes */{size}"}
        if reply.file is not None:
            with self._file(reply.file).open("rb") as source:
                source.seek(start)
                body = source.read(end - start + 1)
        else:
            body = self._body_of(reply)[start : end + 1]
        return 206, body, {"Content-Range": f"bytes {start}-{end}/{size}",
                           "Accept-Ranges": "bytes"}  # fmt: skip

    def _size_of(self, reply: RecordedReply) -> int:
        if reply.file is not None:
            return self._file(reply.file).stat().st_size
        return len(self._body_of(reply))

    def _body_of(self, reply: RecordedReply) -> bytes:
        if reply.file is not None:
            return self._file(reply.file).read_bytes()
        return reply.body.encode() if isinstance(reply.body, str) else reply.body
