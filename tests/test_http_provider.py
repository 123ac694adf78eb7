"""The provider client sends, retries, spaces out and caches requests, and keeps keys secret.

Every test talks to a server on 127.0.0.1 started here (reached through trusted base URLs
or an allowed loopback network); an autouse fixture fails any test that connects elsewhere.
Sleeps are injected and recorded, so no test waits for a backoff.
"""

from __future__ import annotations

import asyncio
import email.utils
import json
import logging
import os
import socket
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, quote, urlsplit

import pytest

from geomint.errors import UsageError
from geomint.http import (
    USER_AGENT,
    DiskCache,
    FetchError,
    MemoryCache,
    ParamValue,
    RateLimiter,
    RequestPolicy,
    arequest_json,
    default_cache_dir,
    request,
    request_json,
)

KEY = "s3cr3t-K3y/42+x"
LOOPBACK = ("127.0.0.1/32",)

Reply = tuple[int, dict[str, str], bytes]


class _Server(ThreadingHTTPServer):
    stop: threading.Event
    hits: Counter[str]
    scripts: dict[str, list[Reply]]

    def handle_error(self, request: Any, client_address: Any) -> None:
        pass  # clients hang up on purpose here (timeouts, refused bodies)


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    timeout = 5
    server: _Server

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def do_GET(self) -> None:
        self.dispatch()

    def do_POST(self) -> None:
        self.dispatch()

    def dispatch(self) -> None:
        parts = urlsplit(self.path)
        self.server.hits[parts.path] += 1
        length = int(self.headers.get("Content-Length", "0"))
        self.body = self.rfile.read(length) if length else b""
        self.query = parse_qs(parts.query)
        route = getattr(self, "route_" + parts.path.strip("/").split("/")[0], None)
        if route is None:
            self.answer(404, b'{"error": "no such route"}')
        else:
            route(parts.path)

    def answer(
        self, status: int, body: bytes, kind: str = "application/json", **headers: str
    ) -> None:
        self.send_response(status)
        self.send_header("Content-Type", kind)
        self.send_header("Content-Length", str(len(body)))
        for name, value in headers.items():
            self.send_header(name.replace("_", "-"), value)
        self.end_headers()
        self.wfile.write(body)

    def route_echo(self, path: str) -> None:
        seen = {
            "method": self.command,
            "query": self.query,
            "headers": dict(self.headers.items()),
            "body": self.body.decode(),
        }
        self.answer(200, json.dumps(seen).encode())

    def route_count(self, path: str) -> None:
        self.answer(200, json.dumps({"n": self.server.hits[path]}).encode())

    def route_script(self, path: str) -> None:
        steps = self.server.scripts.get(path, [])
        status, headers, body = steps.pop(0) if steps else (200, {}, b'{"ok": true}')
        self.answer(status, body, **headers)

    def route_denied(self, path: str) -> None:
        """A 403 whose body quotes the key it was given, as some services do."""
        given = self.query.get("key", [""])[0]
        self.answer(403, json.dumps({"error": f"invalid key {given}"}).encode())

    def route_slow(self, path: str) -> None:
        self.server.stop.wait(3)
        self.answer(200, b"{}")

    def route_html(self, path: str) -> None:
        self.answer(
            200, b"<!DOCTYPE html>\n<html><body>\tMaintenance\x00</body></html>", "text/html"
        )

    def route_empty(self, path: str) -> None:
        self.answer(200, b"")

    def route_big(self, path: str) -> None:
        self.answer(200, b"[" + b"0," * 2500 + b"0]")

    def route_redirect(self, path: str) -> None:
        self.send_response(int(self.query.get("status", ["302"])[0]))
        self.send_header("Location", self.query["to"][0])
        self.send_header("Content-Length", "0")
        self.end_headers()


@pytest.fixture(scope="module")
def server() -> Iterator[_Server]:
    httpd = _Server(("127.0.0.1", 0), _Handler)
    httpd.stop = threading.Event()
    httpd.hits = Counter()
    httpd.scripts = {}
    thread = threading.Thread(target=httpd.serve_forever, kwargs={"poll_interval": 0.05})
    thread.start()
    yield httpd
    httpd.stop.set()
    httpd.shutdown()
    thread.join()
    httpd.server_close()


@pytest.fixture
def base(server: _Server) -> str:
    server.hits.clear()
    server.scripts.clear()
    return f"http://127.0.0.1:{server.server_address[1]}"


@pytest.fixture(autouse=True)
def connections(monkeypatch: pytest.MonkeyPatch) -> list[object]:
    """Record every outbound connect, and fail the test if one leaves 127.0.0.1."""
    attempted: list[object] = []
    real_connect = socket.socket.connect

    def connect(sock: socket.socket, address: Any) -> None:
        attempted.append(address)
        if address[0] != "127.0.0.1":
            pytest.fail(f"a test tried to connect to {address}")
        real_connect(sock, address)

    monkeypatch.setattr(socket.socket, "connect", connect)
    return attempted


def _script(server: _Server, path: str, *steps: Reply) -> None:
    """Have ``path`` answer with these replies in turn, then 200 ``{"ok": true}``."""
    server.scripts[path] = list(steps)


def _policy(base: str, sleeps: list[float] | None = None, **options: Any) -> RequestPolicy:
    options.setdefault("trusted_base_urls", (base,))
    options.setdefault("sleep", sleeps.append if sleeps is not None else _never_sleep)
    return RequestPolicy(**options)


def _never_sleep(seconds: float) -> None:
    pytest.fail(f"the client slept {seconds} s where it should not have")


def _failure(call: Callable[[], object]) -> FetchError:
    with pytest.raises(FetchError) as caught:
        call()
    return caught.value


# --- methods, bodies, headers ------------------------------------------------------------


def test_get_sends_params_user_agent_and_accept(base: str) -> None:
    params: dict[str, ParamValue] = {"q": "Lyon, France", "limit": 5, "polygon": True, "lang": None}
    seen = request_json("GET", f"{base}/echo?format=json", params=params, policy=_policy(base))
    assert seen["method"] == "GET"
    assert seen["query"] == {
        "format": ["json"],
        "q": ["Lyon, France"],
        "limit": ["5"],
        "polygon": ["true"],
    }
    assert seen["headers"]["User-Agent"] == USER_AGENT
    assert USER_AGENT.startswith("geomint/") and USER_AGENT.endswith(
        "(+https://github.com/geomint)"
    )
    assert seen["headers"]["Accept"] == "application/json"


def test_post_sends_a_form_body(base: str) -> None:
    query = '[out:json];node["amenity"="cafe"](45.7,4.8,45.8,4.9);out;'
    seen = request_json("POST", f"{base}/echo", data={"data": query}, policy=_policy(base))
    assert seen["method"] == "POST"
    assert seen["headers"]["Content-Type"] == "application/x-www-form-urlencoded"
    assert parse_qs(seen["body"]) == {"data": [query]}


def test_post_sends_a_json_body_and_headers(base: str) -> None:
    body = {"locations": [{"lat": 45.76, "lon": 4.83}], "costing": "auto", "name": "Lyon é"}
    seen = request_json(
        "POST", f"{base}/echo", json=body, headers={"Accept-Language": "fr"}, policy=_policy(base)
    )
    assert seen["headers"]["Content-Type"] == "application/json"
    assert seen["headers"]["Accept-Language"] == "fr"
    assert json.loads(seen["body"]) == body


@pytest.mark.parametrize(
    ("call", "says"),
    [
        (lambda: request("GET", "http://x.test/", json={}), "a GET request carries no body"),
        (lambda: request("POST", "http://x.test/", json={}, data={}), "not both"),
        (lambda: request("PUT", "http://x.test/"), "use 'GET' or 'POST'"),  # type: ignore[arg-type]
        (
            lambda: request("GET", "http://x.test/", headers={"User-Agent": "curl"}),
            "set the User-Agent through the policy",
        ),
        (lambda: request("GET", "http://x.test/", cache="never"), "not a cache mode"),  # type: ignore[arg-type]
        (lambda: RequestPolicy(max_attempts=0), "max_attempts=0"),
        (lambda: RequestPolicy(rate_per_s=0), "rate_per_s=0"),
        (lambda: RequestPolicy(trusted_base_urls=("ftp://10.0.0.5/",)), "http or https URL"),
        (lambda: RequestPolicy(allowed_networks=("10.0.0.0/33",)), "CIDR form"),
    ],
)
def test_misuse_is_refused_before_anything_is_sent(
    call: Callable[[], object], says: str, connections: list[object]
) -> None:
    with pytest.raises(UsageError, match=None) as caught:
        call()
    assert says in str(caught.value)
    assert connections == []


# --- secrets -----------------------------------------------------------------------------


def _never_shows_key(*texts: object) -> None:
    for text in texts:
        for form in (KEY, quote(KEY, safe=""), quote(KEY)):
            assert form not in str(text), text


def test_an_api_key_never_shows_in_errors_logs_or_cache_keys(
    base: str, server: _Server, caplog: pytest.LogCaptureFixture
) -> None:
    cache = MemoryCache()
    policy = _policy(base, [], secrets=(KEY,), cache=cache)
    base_script = "/script/k"
    # a retry (logged), then success: cached under a key free of the secret
    caplog.set_level(logging.DEBUG, logger="geomint.http")
    _script(server, base_script, (503, {}, b"busy"), (200, {}, b'{"ok": 1}'))
    got = request("GET", f"{base}{base_script}", params={"key": KEY, "q": "x"}, policy=policy)
    assert got.url == f"{base}{base_script}?key=***&q=x"
    _never_shows_key(got.url, got.final_url, *cache.keys(), caplog.text)
    assert "retrying GET" in caplog.text

    error = _failure(lambda: request("GET", f"{base}/denied", params={"key": KEY}, policy=policy))
    assert error.code == "status" and error.status == 403
    assert error.url == f"{base}/denied?key=***"
    assert error.detail == '{"error": "invalid key ***"}'
    _never_shows_key(error, repr(error), error.url, error.reason, error.detail, repr(policy))


def test_a_key_in_a_header_or_unlisted_credential_param_is_hidden_too(base: str) -> None:
    cache = MemoryCache()
    policy = _policy(base, cache=cache)  # no secrets listed: credentials are known by name
    request("GET", f"{base}/echo", headers={"X-Api-Key": KEY}, policy=policy)
    error = _failure(lambda: request("GET", f"{base}/denied", params={"key": KEY}, policy=policy))
    _never_shows_key(error, error.url, *cache.keys())


def test_answers_for_different_keys_are_not_mixed(base: str, server: _Server) -> None:
    policy = _policy(base, cache=MemoryCache())
    first = request_json("GET", f"{base}/count/keys", params={"key": "one"}, policy=policy)
    second = request_json("GET", f"{base}/count/keys", params={"key": "two"}, policy=policy)
    again = request_json("GET", f"{base}/count/keys", params={"key": "one"}, policy=policy)
    assert (first, second, again) == ({"n": 1}, {"n": 2}, {"n": 1})


def test_a_redirect_leaving_the_origin_drops_the_credentials(
    base: str, server: _Server, monkeypatch: pytest.MonkeyPatch
) -> None:
    _fake_dns(monkeypatch, {"a.test": "127.0.0.1", "b.test": "127.0.0.1"})
    port = server.server_address[1]
    to = quote(f"http://b.test:{port}/echo")
    policy = _policy(base, trusted_base_urls=(f"http://a.test:{port}",), allowed_networks=LOOPBACK)
    headers = {"X-Api-Key": KEY, "Accept-Language": "fr"}
    seen = request_json(
        "GET", f"http://a.test:{port}/redirect?to={to}", headers=headers, policy=policy
    )
    assert "X-Api-Key" not in seen["headers"]
    assert seen["headers"]["Accept-Language"] == "fr"


def test_a_303_after_a_post_is_followed_with_get_and_no_body(base: str) -> None:
    seen = request_json(
        "POST", f"{base}/redirect?status=303&to=/echo", json={"a": 1}, policy=_policy(base)
    )
    assert (seen["method"], seen["body"]) == ("GET", "")
    assert "Content-Type" not in seen["headers"]


# --- retries -----------------------------------------------------------------------------


def test_429_with_retry_after_is_retried_after_the_wait_it_asks(base: str, server: _Server) -> None:
    sleeps: list[float] = []
    _script(server, "/script/a", (429, {"Retry-After": "2"}, b"slow down"), (200, {}, b'{"ok": 1}'))
    got = request_json("GET", f"{base}/script/a", policy=_policy(base, sleeps))
    assert got == {"ok": 1}
    assert sleeps == [2.0]
    assert server.hits["/script/a"] == 2


def test_retry_after_may_be_an_http_date(base: str, server: _Server) -> None:
    sleeps: list[float] = []
    when = email.utils.formatdate(time.time() + 3, usegmt=True)
    _script(server, "/script/d", (503, {"Retry-After": when}, b""), (200, {}, b"{}"))
    request("GET", f"{base}/script/d", policy=_policy(base, sleeps))
    assert len(sleeps) == 1 and 1.5 < sleeps[0] <= 3


def test_gives_up_after_max_attempts_with_backoff_and_jitter(base: str, server: _Server) -> None:
    sleeps: list[float] = []
    _script(server, "/script/b", *[(503, {}, b"down for maintenance")] * 5)
    policy = _policy(base, sleeps, max_attempts=3, backoff_base_s=0.5, backoff_max_s=0.8)
    error = _failure(lambda: request("GET", f"{base}/script/b", policy=policy))
    assert (error.code, error.status, error.attempts) == ("status", 503, 3)
    assert server.hits["/script/b"] == 3
    assert len(sleeps) == 2 and 0 <= sleeps[0] <= 0.5 and 0 <= sleeps[1] <= 0.8
    assert str(error) == (
        f"could not fetch {base}/script/b: the server answered 503 Service Unavailable "
        "(down for maintenance); gave up after 3 attempts"
    )


def test_a_429_that_outlasts_the_retries_is_rate_limited(base: str, server: _Server) -> None:
    _script(server, "/script/c", *[(429, {}, b"")] * 3)
    error = _failure(lambda: request("GET", f"{base}/script/c", policy=_policy(base, [])))
    assert (error.code, error.status, error.attempts) == ("rate_limited", 429, 3)
    assert "the service limits how often it may be called" in str(error)


@pytest.mark.parametrize("status", [400, 401, 404, 500])
def test_other_error_statuses_are_not_retried(base: str, server: _Server, status: int) -> None:
    _script(server, "/script/e", (status, {"Retry-After": "1"}, b""))
    error = _failure(lambda: request("GET", f"{base}/script/e", policy=_policy(base)))
    assert (error.code, error.status, error.attempts) == ("status", status, 1)
    assert server.hits["/script/e"] == 1


def test_a_retry_after_past_the_deadline_fails_at_once(base: str, server: _Server) -> None:
    _script(server, "/script/f", (429, {"Retry-After": "120"}, b""))
    started = time.monotonic()
    error = _failure(lambda: request("GET", f"{base}/script/f", policy=_policy(base, timeout_s=5)))
    assert time.monotonic() - started < 1
    assert (error.code, error.retry_after, error.attempts) == ("rate_limited", 120, 1)
    assert "the server asks to wait 120 s before trying again, more than the" in str(error)
    assert "try again in 120 s" in str(error)
    assert server.hits["/script/f"] == 1


def test_a_refused_connection_is_retried_then_reported() -> None:
    with socket.socket() as unused:
        unused.bind(("127.0.0.1", 0))
        port = unused.getsockname()[1]
    sleeps: list[float] = []
    url = f"http://127.0.0.1:{port}/x"
    error = _failure(lambda: request("GET", url, policy=_policy(url, sleeps, max_attempts=3)))
    assert (error.code, error.attempts) == ("connection", 3)
    assert len(sleeps) == 2
    assert str(error).startswith(f"could not fetch {url}: ")


def test_a_slow_server_times_out_within_the_deadline(base: str) -> None:
    started = time.monotonic()
    error = _failure(lambda: request("GET", f"{base}/slow", policy=_policy(base, timeout_s=0.5)))
    assert error.code == "timeout" and error.attempts == 1
    assert 0.4 < time.monotonic() - started < 1.0


# --- answers -----------------------------------------------------------------------------


def test_malformed_json_names_the_url_and_the_first_bytes(base: str) -> None:
    cache = MemoryCache()
    policy = _policy(base, secrets=(KEY,), cache=cache)
    error = _failure(
        lambda: request_json("GET", f"{base}/html", params={"key": KEY}, policy=policy)
    )
    assert error.code == "malformed"
    assert error.url == f"{base}/html?key=***"
    assert str(error) == (
        f"could not read {base}/html?key=***: the answer is not valid JSON (Expecting value: "
        "line 1 column 1 (char 0)); it starts '<!DOCTYPE html> <html><body> Maintenance "
        "</body></html>'; check that the base URL points at the service's API, or try again later"
    )
    assert len(cache) == 0
    empty = _failure(lambda: request_json("GET", f"{base}/empty", policy=policy))
    assert "it is empty" in str(empty)


def test_an_oversize_answer_is_refused(base: str) -> None:
    error = _failure(lambda: request("GET", f"{base}/big", policy=_policy(base, max_bytes=1000)))
    assert error.code == "too_large"
    assert "max_bytes=1,000" in str(error)


def test_async_callers_get_the_same_answers(base: str) -> None:
    seen = asyncio.run(arequest_json("GET", f"{base}/echo", params={"q": 1}, policy=_policy(base)))
    assert seen["query"] == {"q": ["1"]}


# --- the cache ---------------------------------------------------------------------------


class _Clock:
    def __init__(self, now: float = 1000.0) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


def test_a_cache_hit_does_not_reach_the_server_until_it_expires(base: str, server: _Server) -> None:
    clock = _Clock()
    policy = _policy(base, cache=MemoryCache(clock=clock), cache_ttl_s=60)
    first = request("GET", f"{base}/count/c", params={"b": 2, "a": 1}, policy=policy)
    hit = request("GET", f"{base}/count/c", params={"a": 1, "b": 2}, policy=policy)
    assert (first.from_cache, hit.from_cache, hit.body) == (False, True, first.body)
    assert server.hits["/count/c"] == 1
    clock.now += 61
    assert request_json("GET", f"{base}/count/c", params={"a": 1, "b": 2}, policy=policy) == {
        "n": 2
    }


def test_refresh_bypasses_the_cache_and_skip_leaves_it_alone(base: str, server: _Server) -> None:
    policy = _policy(base, cache=MemoryCache())
    url = f"{base}/count/r"
    assert request_json("GET", url, policy=policy) == {"n": 1}
    assert request_json("GET", url, policy=policy, cache="refresh") == {"n": 2}
    assert request_json("GET", url, policy=policy) == {"n": 2}
    assert request_json("GET", url, policy=policy, cache="skip") == {"n": 3}
    assert request_json("GET", url, policy=policy) == {"n": 2}


def test_post_bodies_are_part_of_the_key(base: str, server: _Server) -> None:
    policy = _policy(base, cache=MemoryCache())
    for query in ("one", "two", "one"):
        request("POST", f"{base}/count/p", data={"data": query}, policy=policy)
    assert server.hits["/count/p"] == 2


def test_error_answers_are_not_cached(base: str, server: _Server) -> None:
    policy = _policy(base, cache=MemoryCache())
    _script(server, "/script/n", (404, {}, b""))
    assert _failure(lambda: request("GET", f"{base}/script/n", policy=policy)).status == 404
    assert request_json("GET", f"{base}/script/n", policy=policy) == {"ok": True}
    assert server.hits["/script/n"] == 2


def test_the_memory_cache_is_bounded_and_evicts_the_least_recently_used(base: str) -> None:
    cache = MemoryCache(max_entries=2)
    policy = _policy(base, cache=cache)
    for path in ("a", "b", "a", "c"):
        request("GET", f"{base}/count/{path}", policy=policy)
    assert len(cache) == 2
    assert [key.split()[1].rsplit("/", 1)[1] for key in cache.keys()]  # noqa: SIM118 == ["a", "c"]


def test_the_disk_cache_outlives_its_object_and_holds_no_key(
    base: str, server: _Server, tmp_path: Path
) -> None:
    first = _policy(base, secrets=(KEY,), cache=DiskCache(tmp_path))
    request("GET", f"{base}/count/d", params={"key": KEY}, policy=first)
    second = _policy(base, secrets=(KEY,), cache=DiskCache(tmp_path))
    hit = request("GET", f"{base}/count/d", params={"key": KEY}, policy=second)
    assert hit.from_cache and json.loads(hit.body) == {"n": 1}
    assert server.hits["/count/d"] == 1
    files = list(tmp_path.iterdir())
    assert len(files) == 1 and files[0].suffix == ".response"
    _never_shows_key(files[0].read_bytes().decode())


def test_the_disk_cache_writes_whole_files_or_none(
    base: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    cache = DiskCache(tmp_path)
    policy = _policy(base, cache=cache)
    url = f"{base}/count/w"
    request("GET", url, policy=policy)
    before = {path.name: path.read_bytes() for path in tmp_path.iterdir()}

    def crash(source: Any, target: Any) -> None:
        raise OSError("disk full")

    with monkeypatch.context() as patch:
        patch.setattr(os, "replace", crash)
        refreshed = request("GET", url, policy=policy, cache="refresh")
    assert json.loads(refreshed.body) == {"n": 2}  # the answer arrives all the same
    assert {path.name: path.read_bytes() for path in tmp_path.iterdir()} == before
    assert "could not write to the HTTP cache" in caplog.text
    assert json.loads(request("GET", url, policy=policy).body) == {"n": 1}


def test_the_disk_cache_expires_and_stays_in_bounds(base: str, tmp_path: Path) -> None:
    clock = _Clock()
    cache = DiskCache(tmp_path, max_entries=2, clock=clock)
    policy = _policy(base, cache=cache, cache_ttl_s=10)
    for path in ("a", "b", "c"):
        request("GET", f"{base}/count/{path}", policy=policy)
        time.sleep(0.01)  # distinct modification times
    assert len(list(tmp_path.glob("*.response"))) == 2
    clock.now += 11
    assert not request("GET", f"{base}/count/c", policy=policy).from_cache


def test_the_default_disk_cache_lives_under_geomint_home() -> None:
    assert default_cache_dir() == Path(os.environ["GEOMINT_HOME"]) / "cache" / "http"
    assert DiskCache().directory == default_cache_dir()


# --- the rate limiter --------------------------------------------------------------------


def test_the_limiter_spaces_one_host_but_not_two() -> None:
    clock = _Clock()
    limiter = RateLimiter(clock=clock)
    assert limiter.reserve("a.test", 2.0) == 0
    assert limiter.reserve("A.test", 2.0) == 0.5
    assert limiter.reserve("b.test", 2.0) == 0
    clock.now += 2
    assert limiter.reserve("a.test", 2.0) == 0


def test_the_limiter_queues_threads_in_distinct_slots() -> None:
    limiter = RateLimiter(clock=_Clock())
    waits: list[float] = []
    threads = [
        threading.Thread(target=lambda: waits.append(limiter.reserve("h", 4.0))) for _ in range(8)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(waits) == [i * 0.25 for i in range(8)]


def test_requests_to_one_host_wait_for_the_rate(
    server: _Server, base: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    _fake_dns(monkeypatch, {"a.test": "127.0.0.1", "b.test": "127.0.0.1"})
    port = server.server_address[1]
    clock = _Clock()
    sleeps: list[float] = []

    def sleep(seconds: float) -> None:
        sleeps.append(seconds)
        clock.now += seconds

    policy = RequestPolicy(
        rate_per_s=1.0,
        limiter=RateLimiter(clock=clock),
        sleep=sleep,
        trusted_base_urls=(f"http://a.test:{port}", f"http://b.test:{port}"),
    )
    for host in ("a.test", "b.test", "a.test"):
        request("GET", f"http://{host}:{port}/echo", policy=policy)
    assert sleeps == [1.0]


def test_a_rate_limit_wait_past_the_deadline_fails_without_sending(
    base: str, server: _Server
) -> None:
    limiter = RateLimiter()
    policy = _policy(base, rate_per_s=0.01, limiter=limiter, timeout_s=5)
    request("GET", f"{base}/count/l", policy=policy)
    error = _failure(lambda: request("GET", f"{base}/count/l", policy=policy))
    assert (error.code, error.attempts) == ("rate_limited", 0)
    assert error.retry_after is not None and 99 < error.retry_after <= 100
    assert "geomint sends at most 0.01 requests per second to 127.0.0.1" in str(error)
    assert server.hits["/count/l"] == 1


# --- trusted base URLs -------------------------------------------------------------------


def test_a_trusted_base_url_may_be_private_but_nothing_else_may(
    base: str, server: _Server, connections: list[object]
) -> None:
    assert request_json("GET", f"{base}/echo", policy=_policy(base))["method"] == "GET"
    with socket.socket() as unused:
        unused.bind(("127.0.0.1", 0))
        other = f"http://127.0.0.1:{unused.getsockname()[1]}/echo"
    error = _failure(lambda: request("GET", other, policy=_policy(base)))
    assert error.code == "address" and error.attempts == 1
    assert connections == [("127.0.0.1", server.server_address[1])]


@pytest.mark.parametrize(
    "target", ["http://127.0.0.2:{port}/echo", "http://10.0.0.5/", "http://169.254.169.254/"]
)
def test_a_redirect_from_a_trusted_base_to_a_private_address_is_refused(
    base: str, server: _Server, connections: list[object], target: str
) -> None:
    to = target.format(port=server.server_address[1])
    error = _failure(
        lambda: request("GET", f"{base}/redirect?to={quote(to)}", policy=_policy(base))
    )
    assert error.code == "address"
    assert f"refused {to} (reached by redirect from {base}/redirect" in str(error)
    assert connections == [("127.0.0.1", server.server_address[1])]


def _fake_dns(monkeypatch: pytest.MonkeyPatch, names: dict[str, str]) -> None:
    real = socket.getaddrinfo

    def getaddrinfo(host: Any, port: Any, *args: Any, **kwargs: Any) -> Any:
        if host not in names:
            return real(host, port, *args, **kwargs)
        return [(socket.AF_INET, socket.SOCK_STREAM, 6, "", (names[host], port))]

    monkeypatch.setattr(socket, "getaddrinfo", getaddrinfo)
