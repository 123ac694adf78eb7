"""The connection layer refuses forged requests and cuts off what the wire drags out.

These tests stay at the socket, on a server on 127.0.0.1 started here, because the
socket is what they test, and the transport seam would replace exactly that layer:
which addresses a connection may reach, that a name is resolved once and the checked
address pinned (DNS rebinding, faked through ``getaddrinfo``), that a resolver or a
server that hangs is cut off at the deadline, that no proxy from the environment is
used, and what HTTP framing on the wire (chunked, unframed, a lying Content-Length) can
push in. The checks above the connection are tested through the seam, in
``test_fetch.py`` and ``test_client.py``.
"""

from __future__ import annotations

import json
import socket
import threading
import time
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, quote, urlsplit

import pytest

from geomint.errors import ModelFacingError
from geomint.http import FetchError, FetchPolicy, RequestPolicy, fetch, request, request_json

LOOPBACK = ("127.0.0.1/32",)
MB = 1_000_000
JSON_BODY = json.dumps({"ok": True, "features": list(range(100))}).encode()


class _Server(ThreadingHTTPServer):
    stop: threading.Event

    def handle_error(self, request: Any, client_address: Any) -> None:
        pass  # clients hang up on purpose here (refused bodies, timeouts)


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    timeout = 5
    server: _Server

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def do_GET(self) -> None:
        parts = urlsplit(self.path)
        route = getattr(self, "route_" + parts.path.strip("/").split("/")[0], None)
        if route is None:
            self.answer(404, b"no such route", "text/plain")
        else:
            route(parts.path, parse_qs(parts.query))

    def answer(self, status: int, body: bytes, kind: str, **headers: str) -> None:
        self.send_response(status)
        self.send_header("Content-Type", kind)
        self.send_header("Content-Length", str(len(body)))
        for name, value in headers.items():
            self.send_header(name.replace("_", "-"), value)
        self.end_headers()
        self.wfile.write(body)

    def pour(self, total: int) -> None:
        block = b"x" * 65536
        for _ in range(0, total, len(block)):
            self.wfile.write(block)

    def route_ok(self, path: str, query: dict[str, list[str]]) -> None:
        self.answer(200, JSON_BODY, "application/json; charset=utf-8")

    def route_echo(self, path: str, query: dict[str, list[str]]) -> None:
        self.answer(200, json.dumps(dict(self.headers.items())).encode(), "application/json")

    def route_method(self, path: str, query: dict[str, list[str]]) -> None:
        self.answer(200, json.dumps({"method": self.command}).encode(), "application/json")

    def route_redirect(self, path: str, query: dict[str, list[str]]) -> None:
        self.send_response(int(query.get("status", ["302"])[0]))
        self.send_header("Location", query["to"][0])
        self.send_header("Content-Length", "0")
        self.end_headers()

    def route_chunked(self, path: str, query: dict[str, list[str]]) -> None:
        self.send_response(200)
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        for _ in range(100):
            self.wfile.write(b"10000\r\n" + b"x" * 65536 + b"\r\n")
        self.wfile.write(b"0\r\n\r\n")

    def route_unframed(self, path: str, query: dict[str, list[str]]) -> None:
        self.close_connection = True
        self.send_response(200)
        self.send_header("Connection", "close")
        self.end_headers()
        self.pour(5 * MB)

    def route_lie(self, path: str, query: dict[str, list[str]]) -> None:
        self.close_connection = True
        self.send_response(200)
        self.send_header("Content-Length", "1000")
        self.end_headers()
        self.pour(5 * MB)

    def route_drip(self, path: str, query: dict[str, list[str]]) -> None:
        """Headers at once, then one body byte every 0.2 s, forever."""
        self.close_connection = True
        self.send_response(200)
        self.send_header("Content-Length", str(10 * MB))
        self.end_headers()
        self.drip()

    def route_drip_head(self, path: str, query: dict[str, list[str]]) -> None:
        """The status line itself, one byte every 0.2 s."""
        self.close_connection = True
        self.wfile.write(b"HTTP/1.1 200 OK\r\nX-Padding: ")
        self.drip()

    def drip(self) -> None:
        while not self.server.stop.wait(0.2):
            self.wfile.write(b"x")
            self.wfile.flush()

    def route_slow(self, path: str, query: dict[str, list[str]]) -> None:
        self.server.stop.wait(3)
        self.answer(200, b"{}", "application/json")


@pytest.fixture(scope="module")
def server() -> Iterator[_Server]:
    httpd = _Server(("127.0.0.1", 0), _Handler)
    httpd.stop = threading.Event()
    thread = threading.Thread(target=httpd.serve_forever, kwargs={"poll_interval": 0.05})
    thread.start()
    yield httpd
    httpd.stop.set()
    httpd.shutdown()
    thread.join()
    httpd.server_close()


@pytest.fixture
def base(server: _Server) -> str:
    return f"http://127.0.0.1:{server.server_address[1]}"


def _refused(url: str, **policy: Any) -> FetchError:
    with pytest.raises(FetchError) as caught:
        fetch(url, FetchPolicy(**policy))
    return caught.value


def _failure(call: Callable[[], object]) -> FetchError:
    with pytest.raises(FetchError) as caught:
        call()
    return caught.value


def _never_sleep(seconds: float) -> None:
    pytest.fail(f"the client slept {seconds} s where it should not have")


def _policy(base: str, **options: Any) -> RequestPolicy:
    options.setdefault("trusted_base_urls", (base,))
    options.setdefault("sleep", _never_sleep)
    return RequestPolicy(**options)


# --- the whole path, over a socket -------------------------------------------------------


def test_fetches_a_small_json_file(base: str) -> None:
    got = fetch(f"{base}/ok", FetchPolicy(allowed_networks=LOOPBACK))
    assert got.status == 200
    assert got.body == JSON_BODY
    assert got.content_type == "application/json"
    assert got.url == got.final_url == f"{base}/ok"
    assert got.headers["content-length"] == str(len(JSON_BODY))
    assert 0 < got.elapsed_s < 1


def test_ignores_proxies_from_the_environment(base: str, monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("HTTP_PROXY", "http_proxy", "ALL_PROXY", "all_proxy"):
        monkeypatch.setenv(name, "http://10.9.9.9:3128")
    assert fetch(f"{base}/ok", FetchPolicy(allowed_networks=LOOPBACK)).body == JSON_BODY


def test_reports_a_connection_failure() -> None:
    with socket.socket() as unused:
        unused.bind(("127.0.0.1", 0))
        port = unused.getsockname()[1]
    error = _refused(f"http://127.0.0.1:{port}/", allowed_networks=LOOPBACK)
    assert error.code == "connection"
    assert str(error).startswith(f"could not fetch http://127.0.0.1:{port}/: ")


# --- the address guard -------------------------------------------------------------------


def test_refuses_loopback_unless_the_application_allows_it(
    base: str, connections: list[object]
) -> None:
    error = _refused(f"{base}/ok")
    assert error.code == "address"
    assert str(error) == (
        f"refused {base}/ok: 127.0.0.1 is a loopback address (this machine); geomint "
        "fetches only public addresses unless the application allows this network"
    )
    assert connections == []
    assert fetch(f"{base}/ok", FetchPolicy(allowed_networks=LOOPBACK)).body == JSON_BODY


def test_the_address_message_reads_well() -> None:
    error = _refused("http://10.0.0.5/x")
    assert isinstance(error, ModelFacingError)
    assert (error.code, error.url) == ("address", "http://10.0.0.5/x")
    assert str(error) == (
        "refused http://10.0.0.5/x: 10.0.0.5 is a private address; geomint fetches only "
        "public addresses unless the application allows this network"
    )


@pytest.mark.parametrize(
    "target",
    [
        "http://127.0.0.2:{port}/ok",
        "http://[::1]:{port}/ok",
        "http://[::ffff:127.0.0.2]:{port}/ok",
        "http://169.254.169.254/latest/meta-data",
        "http://10.0.0.1/",
        "http://2130706433:{port}/ok",
        "http://0x7f.1:{port}/ok",
        "http://127.1:{port}/ok",
    ],
)
def test_refuses_redirects_to_other_addresses_before_connecting(
    base: str, server: _Server, connections: list[object], target: str
) -> None:
    to = target.format(port=server.server_address[1])
    error = _refused(f"{base}/redirect?to={quote(to)}", allowed_networks=LOOPBACK)
    assert error.code == "address", error
    assert error.url == f"{base}/redirect?to={quote(to)}"
    assert f"refused {to} (reached by redirect from {base}/redirect" in str(error)
    assert connections == [("127.0.0.1", server.server_address[1])]


@pytest.mark.parametrize(
    ("host", "code"),
    [
        ("2130706433", "address"),
        ("0x7f.1", "address"),
        ("127.1", "address"),
        ("017700000001", "address"),
        ("0177.0.0.1", "scheme"),  # httpx itself refuses to parse this one
    ],
)
def test_odd_spellings_of_an_allowed_address_are_refused_too(
    server: _Server, connections: list[object], host: str, code: str
) -> None:
    port = server.server_address[1]
    error = _refused(f"http://{host}:{port}/ok", allowed_networks=("127.0.0.0/8",))
    assert error.code == code
    if code == "address":
        assert f"{host} is an IP address written as a number in an unusual form" in str(error)
    assert connections == []


def _fake_dns(
    monkeypatch: pytest.MonkeyPatch, answers: Callable[[str], list[str] | None]
) -> list[str]:
    """Answer chosen names with chosen addresses; leave numeric hosts to the real resolver."""
    asked: list[str] = []
    real = socket.getaddrinfo

    def getaddrinfo(host: Any, port: Any, *args: Any, **kwargs: Any) -> Any:
        addresses = answers(host)
        if addresses is None:
            return real(host, port, *args, **kwargs)
        asked.append(host)
        return [
            (socket.AF_INET, socket.SOCK_STREAM, 6, "", (address, port)) for address in addresses
        ]

    monkeypatch.setattr(socket, "getaddrinfo", getaddrinfo)
    return asked


def test_connects_to_the_address_it_checked_so_rebinding_cannot_swap_it(
    server: _Server, monkeypatch: pytest.MonkeyPatch
) -> None:
    answers = iter([["127.0.0.1"], ["10.0.0.1"], ["10.0.0.1"]])
    asked = _fake_dns(monkeypatch, lambda host: next(answers) if host == "data.test" else None)
    port = server.server_address[1]
    got = fetch(f"http://data.test:{port}/echo", FetchPolicy(allowed_networks=LOOPBACK))
    assert asked == ["data.test"]
    assert json.loads(got.body)["Host"] == f"data.test:{port}"


def test_refuses_a_name_when_any_of_its_addresses_is_private(
    monkeypatch: pytest.MonkeyPatch, connections: list[object]
) -> None:
    _fake_dns(monkeypatch, lambda host: ["127.0.0.1", "10.1.2.3"] if host == "mixed.test" else None)
    error = _refused("http://mixed.test/data.json", allowed_networks=LOOPBACK)
    assert error.code == "address"
    assert "mixed.test resolves to 10.1.2.3, a private address" in str(error)
    assert connections == []


def test_a_resolver_that_hangs_is_cut_off_at_the_deadline(monkeypatch: pytest.MonkeyPatch) -> None:
    release = threading.Event()

    def hang(host: str) -> list[str] | None:
        release.wait(5)
        return ["127.0.0.1"]

    _fake_dns(monkeypatch, hang)
    started = time.monotonic()
    try:
        error = _refused("http://slow.test/", timeout_s=0.3)
    finally:
        release.set()
    assert error.code == "timeout"
    assert time.monotonic() - started < 0.8


# --- trusted base URLs: the operator's services may be private, nothing else may ---------


def test_a_trusted_base_url_may_be_private_but_nothing_else_may(
    base: str, server: _Server, connections: list[object]
) -> None:
    assert request_json("GET", f"{base}/method", policy=_policy(base))["method"] == "GET"
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


# --- the wire: framing and time ----------------------------------------------------------


@pytest.mark.parametrize("route", ["chunked", "unframed"])
def test_stops_reading_at_the_limit_without_content_length(base: str, route: str) -> None:
    started = time.monotonic()
    error = _refused(f"{base}/{route}", allowed_networks=LOOPBACK, max_bytes=MB)
    assert error.code == "too_large"
    assert "the response grew past max_bytes=1,000,000" in str(error)
    assert time.monotonic() - started < 1


def test_a_content_length_lie_cannot_push_more_bytes_in(base: str) -> None:
    got = fetch(f"{base}/lie", FetchPolicy(allowed_networks=LOOPBACK, max_bytes=MB))
    assert got.body == b"x" * 1000


@pytest.mark.parametrize("route", ["drip", "drip_head"])
def test_a_server_that_drips_is_stopped_at_the_deadline(base: str, route: str) -> None:
    started = time.monotonic()
    error = _refused(f"{base}/{route}", allowed_networks=LOOPBACK, timeout_s=1.0)
    elapsed = time.monotonic() - started
    assert error.code == "timeout"
    assert "within timeout_s=1 s" in str(error)
    assert 0.9 < elapsed < 1.5


def test_a_slow_server_times_out_within_the_deadline(base: str) -> None:
    started = time.monotonic()
    error = _failure(lambda: request("GET", f"{base}/slow", policy=_policy(base, timeout_s=0.5)))
    assert error.code == "timeout" and error.attempts == 1
    assert 0.4 < time.monotonic() - started < 1.0
