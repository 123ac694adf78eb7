"""A scripted web service for the provider client's tests, answered through the transport seam.

:class:`Service` answers requests from the request alone, through a
:class:`~geomint.http.ScriptedTransport` that a test puts in its policy: no socket opens,
no name is resolved, and a host can be any name. Its routes:

* ``/echo``: what was sent (method, query, headers as written, body), as JSON;
* ``/count/...``: how many requests this path has had, this one included;
* ``/script/...``: the replies a test queued with :meth:`Service.script`, in turn, then
  200 ``{"ok": true}``;
* ``/denied``: a 403 whose body quotes the key it was given, as some services do;
* ``/html``, ``/empty``, ``/big``: a web page, an empty body, 5,003 bytes of JSON;
* ``/redirect?to=...&status=...``: a redirect (302 unless ``status`` says otherwise).

Anything else is a 404.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable
from typing import Any
from urllib.parse import parse_qs

import httpx
import pytest

from geomint.http import RequestPolicy, ScriptedTransport

__all__ = ["BASE", "Reply", "Service", "policy"]

#: The service's base URL: any name does, as nothing resolves it.
BASE = "http://api.test"

Reply = tuple[int, dict[str, str], bytes]


class Service:
    """The routes above, behind :attr:`transport`; :attr:`hits` counts requests by path."""

    def __init__(self) -> None:
        self.scripts: dict[str, list[Reply]] = {}
        self.transport = ScriptedTransport(self._answer)

    @property
    def hits(self) -> Counter[str]:
        """How many requests each path has had."""
        return Counter(request.url.path for request in self.transport.requests)

    def script(self, path: str, *steps: Reply) -> None:
        """Have ``path`` answer with these replies in turn, then 200 ``{"ok": true}``."""
        self.scripts[path] = list(steps)

    def _answer(self, request: httpx.Request) -> httpx.Response:
        name = request.url.path.strip("/").split("/")[0]
        route: Callable[[httpx.Request], httpx.Response] | None = getattr(
            self, f"route_{name}", None
        )
        if route is None:
            return _answer(404, b'{"error": "no such route"}')
        return route(request)

    def route_echo(self, request: httpx.Request) -> httpx.Response:
        seen = {
            "method": request.method,
            "query": parse_qs(request.url.query.decode()),
            "headers": {name.decode(): value.decode() for name, value in request.headers.raw},
            "body": request.content.decode(),
        }
        return _answer(200, json.dumps(seen).encode())

    def route_count(self, request: httpx.Request) -> httpx.Response:
        return _answer(200, json.dumps({"n": self.hits[request.url.path]}).encode())

    def route_script(self, request: httpx.Request) -> httpx.Response:
        steps = self.scripts.get(request.url.path, [])
        status, headers, body = steps.pop(0) if steps else (200, {}, b'{"ok": true}')
        return _answer(status, body, **headers)

    def route_denied(self, request: httpx.Request) -> httpx.Response:
        given = request.url.params.get("key", "")
        return _answer(403, json.dumps({"error": f"invalid key {given}"}).encode())

    def route_html(self, request: httpx.Request) -> httpx.Response:
        page = b"<!DOCTYPE html>\n<html><body>\tMaintenance\x00</body></html>"
        return _answer(200, page, "text/html")

    def route_empty(self, request: httpx.Request) -> httpx.Response:
        return _answer(200, b"")

    def route_big(self, request: httpx.Request) -> httpx.Response:
        return _answer(200, b"[" + b"0," * 2500 + b"0]")

    def route_redirect(self, request: httpx.Request) -> httpx.Response:
        status = int(request.url.params.get("status", "302"))
        return httpx.Response(
            status, headers={"Location": request.url.params["to"], "Content-Length": "0"}
        )


def _answer(
    status: int, body: bytes, kind: str = "application/json", **headers: str
) -> httpx.Response:
    return httpx.Response(
        status,
        headers={"Content-Type": kind, "Content-Length": str(len(body)), **headers},
        content=iter([body]),  # sent as a server sends it: httpx decodes nothing on the way
    )


def policy(service: Service, sleeps: list[float] | None = None, **options: Any) -> RequestPolicy:
    """A policy whose requests go to ``service``, recording its waits in ``sleeps``.

    With no ``sleeps``, a wait fails the test: the client should not have waited.
    """
    options.setdefault("transport", service.transport)
    options.setdefault("sleep", sleeps.append if sleeps is not None else _never_sleep)
    return RequestPolicy(**options)


def _never_sleep(seconds: float) -> None:
    pytest.fail(f"the client slept {seconds} s where it should not have")
