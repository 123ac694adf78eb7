"""A transport that answers requests from a test's function and keeps every request it got.

It is the test double for the network: pass it as a fetch's ``transport`` or a
:class:`~geomint.http.RequestPolicy`'s, and no socket opens and no name is resolved,
while everything the client does above the connection (redirects, retries, caps,
encodings, secrets, the cache) runs as it does for real. Tests of the connection layer
itself (the address guard, DNS rebinding, the deadline on a slow socket) need a real
server instead: the transport replaces that layer.
"""

from __future__ import annotations

import threading
from collections.abc import Callable

import httpx

__all__ = ["ScriptedTransport"]


class ScriptedTransport(httpx.BaseTransport):
    """Answer each request with ``handler(request)``, and keep the requests in order.

    Like ``httpx.MockTransport``, with a record of what was sent that threads may add
    to at once (the async calls run in worker threads).

    A body given to ``httpx.Response`` as bytes is decoded by httpx as the response is
    built, following its ``Content-Encoding``; to send an encoded body as the server
    would (a gzip bomb, a truncated stream), give it as an iterator of chunks instead,
    ``content=iter([data])``, which is also how a body that streams without a length is
    written.

    Args:
        handler: Called with each request, its body already read; returns the answer,
            or raises an ``httpx.TransportError`` (``httpx.ConnectError``...) for a
            request that does not get through.

    Example:
        >>> import httpx
        >>> from geomint.http import FetchPolicy, fetch
        >>> transport = ScriptedTransport(lambda request: httpx.Response(200, json=[1, 2]))
        >>> fetch("https://data.example/points.json", transport=transport).body
        b'[1,2]'
        >>> [str(request.url) for request in transport.requests]
        ['https://data.example/points.json']
    """

    def __init__(self, handler: Callable[[httpx.Request], httpx.Response]) -> None:
        self._handler = handler
        self._lock = threading.Lock()
        self._requests: list[httpx.Request] = []

    @property
    def requests(self) -> list[httpx.Request]:
        """Every request received, in order (a copy)."""
        with self._lock:
            return list(self._requests)

    def sent(self, path: str, method: str | None = None) -> list[httpx.Request]:
        """Return the requests to ``path`` (and of ``method``, when given), in order."""
        return [
            request
            for request in self.requests
            if request.url.path == path and (method is None or request.method == method)
        ]

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        """Keep the request, then answer it with the handler."""
        request.read()
        with self._lock:
            self._requests.append(request)
        return self._handler(request)
