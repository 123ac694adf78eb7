"""The outbound client refuses forged requests and oversized or endless responses.

Every test talks to a server on 127.0.0.1 started here, or is refused before connecting;
an autouse fixture fails any test that tries to connect anywhere else.
"""

from __future__ import annotations

import gzip
import json
import socket
import threading
import time
import tracemalloc
import zlib
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, quote, urlsplit

import pytest

from geomint.errors import ModelFacingError, UsageError
from geomint.http import FetchError, FetchPolicy, address_refusal, fetch

LOOPBACK = ("127.0.0.1/32",)
MB = 1_000_000
BOMB_ZEROS = 200 * 2**20
JSON_BODY = json.dumps({"ok": True, "features": list(range(100))}).encode()


def _gzip(data: bytes) -> bytes:
    return gzip.compress(data, mtime=0)


def _raw_deflate(data: bytes) -> bytes:
    packer = zlib.compressobj(6, zlib.DEFLATED, -zlib.MAX_WBITS)
    return packer.compress(data) + packer.flush()


class _Server(ThreadingHTTPServer):
    stop: threading.Event
    bomb: bytes

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

    def redirect(self, location: str) -> None:
        self.send_response(302)
        self.send_header("Location", location)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def pour(self, total: int) -> None:
        block = b"x" * 65536
        for _ in range(0, total, len(block)):
            self.wfile.write(block)

    def route_ok(self, path: str, query: dict[str, list[str]]) -> None:
        self.answer(200, JSON_BODY, "application/json; charset=utf-8")

    def route_echo(self, path: str, query: dict[str, list[str]]) -> None:
        self.answer(200, json.dumps(dict(self.headers.items())).encode(), "application/json")

    def route_html(self, path: str, query: dict[str, list[str]]) -> None:
        self.answer(200, b"<html><body>a page about data</body></html>", "text/html")

    def route_big(self, path: str, query: dict[str, list[str]]) -> None:
        self.send_response(200)
        self.send_header("Content-Length", str(5 * MB))
        self.end_headers()
        self.pour(5 * MB)

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

    def route_bomb(self, path: str, query: dict[str, list[str]]) -> None:
        self.answer(200, self.server.bomb, "application/json", Content_Encoding="gzip")

    def route_encoded(self, path: str, query: dict[str, list[str]]) -> None:
        encoding = query["as"][0]
        packed = {
            "gzip": _gzip(JSON_BODY),
            "deflate": zlib.compress(JSON_BODY),
            "raw-deflate": _raw_deflate(JSON_BODY),
            "two-members": _gzip(JSON_BODY[:50]) + _gzip(JSON_BODY[50:]),
            "truncated": _gzip(JSON_BODY)[:-12],
            "br": b"\x1b\x03\x00\xf8\xa5\x84",
        }[encoding]
        header = {"raw-deflate": "deflate", "two-members": "gzip", "truncated": "gzip"}
        self.answer(
            200, packed, "application/json", Content_Encoding=header.get(encoding, encoding)
        )

    def route_redirect(self, path: str, query: dict[str, list[str]]) -> None:
        self.redirect(query["to"][0])

    def route_loop(self, path: str, query: dict[str, list[str]]) -> None:
        self.redirect("/loop2")

    def route_loop2(self, path: str, query: dict[str, list[str]]) -> None:
        self.redirect("/loop")

    def route_chain(self, path: str, query: dict[str, list[str]]) -> None:
        left = int(path.rsplit("/", 1)[1])
        self.redirect(f"/chain/{left - 1}" if left else "/ok")


@pytest.fixture(scope="module")
def server() -> Iterator[_Server]:
    packer = zlib.compressobj(9, zlib.DEFLATED, 16 + zlib.MAX_WBITS)
    zeros = bytes(2**20)
    bomb = b"".join(packer.compress(zeros) for _ in range(BOMB_ZEROS // len(zeros)))
    httpd = _Server(("127.0.0.1", 0), _Handler)
    httpd.stop = threading.Event()
    httpd.bomb = bomb + packer.flush()
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


def _refused(url: str, **policy: Any) -> FetchError:
    with pytest.raises(FetchError) as caught:
        fetch(url, FetchPolicy(**policy))
    return caught.value


# --- the happy path ----------------------------------------------------------------------


def test_fetches_a_small_json_file(base: str) -> None:
    got = fetch(f"{base}/ok", FetchPolicy(allowed_networks=LOOPBACK))
    assert got.status == 200
    assert got.body == JSON_BODY
    assert got.content_type == "application/json"
    assert got.url == got.final_url == f"{base}/ok"
    assert got.headers["content-length"] == str(len(JSON_BODY))
    assert 0 < got.elapsed_s < 1


def test_sends_its_user_agent_and_asks_only_for_gzip_or_deflate(base: str) -> None:
    sent = json.loads(fetch(f"{base}/echo", FetchPolicy(allowed_networks=LOOPBACK)).body)
    assert sent["User-Agent"].startswith("geomint/")
    assert sent["Accept-Encoding"] == "gzip, deflate"


def test_ignores_proxies_from_the_environment(base: str, monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("HTTP_PROXY", "http_proxy", "ALL_PROXY", "all_proxy"):
        monkeypatch.setenv(name, "http://10.9.9.9:3128")
    assert fetch(f"{base}/ok", FetchPolicy(allowed_networks=LOOPBACK)).body == JSON_BODY


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


def test_refuses_a_redirect_to_an_invalid_url(base: str) -> None:
    error = _refused(f"{base}/redirect?to=http://0177.0.0.1/", allowed_networks=LOOPBACK)
    assert error.code == "redirects"
    assert "it redirects to an invalid URL (Invalid IPv4 address: '0177.0.0.1')" in str(error)


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


# --- the URL's form, vetoes and redirects ------------------------------------------------


@pytest.mark.parametrize(
    ("url", "says"),
    [
        ("file:///etc/passwd", "not file: URLs"),
        ("ftp://example.com/data.csv", "not ftp: URLs"),
        ("gopher://example.com:70/_", "not gopher: URLs"),
        ("data:text/plain,hello", "not data: URLs"),
        ("example.com/data.csv", "URLs without a scheme"),
        ("http:///data.csv", "no host name"),
        ("http://user:secret@example.com/data.csv", "user name or password"),
    ],
)
def test_refuses_urls_of_other_forms(url: str, says: str) -> None:
    error = _refused(url)
    assert error.code == "scheme"
    assert says in str(error)
    assert "secret" not in str(error)
    assert "secret" not in error.url


@pytest.mark.parametrize("target", ["file:///etc/passwd", "ftp://127.0.0.1/pub"])
def test_refuses_redirects_to_other_schemes(base: str, target: str) -> None:
    error = _refused(f"{base}/redirect?to={quote(target)}", allowed_networks=LOOPBACK)
    assert error.code == "scheme"
    assert "geomint fetches only http and https URLs" in str(error)


def test_follows_relative_redirects(base: str) -> None:
    got = fetch(f"{base}/redirect?to=/ok", FetchPolicy(allowed_networks=LOOPBACK))
    assert got.url == f"{base}/redirect?to=/ok"
    assert got.final_url == f"{base}/ok"
    assert got.body == JSON_BODY


def test_refuses_a_redirect_loop(base: str) -> None:
    error = _refused(f"{base}/loop", allowed_networks=LOOPBACK)
    assert error.code == "redirects"
    assert "the redirects loop back to" in str(error)


@pytest.mark.parametrize(("hops", "refused"), [(3, False), (4, True)])
def test_follows_at_most_max_redirects(base: str, hops: int, refused: bool) -> None:
    policy = FetchPolicy(allowed_networks=LOOPBACK, max_redirects=3)
    if refused:
        with pytest.raises(FetchError, match="more than max_redirects=3") as caught:
            fetch(f"{base}/chain/{hops - 1}", policy)
        assert caught.value.code == "redirects"
    else:
        assert fetch(f"{base}/chain/{hops - 1}", policy).final_url == f"{base}/ok"


def test_the_veto_sees_every_url_and_can_refuse_a_redirect_target(base: str) -> None:
    seen: list[str] = []

    def veto(url: str) -> str | None:
        seen.append(url)
        return (
            "this application reads only from its data bucket"
            if urlsplit(url).path == "/ok"
            else None
        )

    error = _refused(f"{base}/redirect?to=/ok", allowed_networks=LOOPBACK, veto=veto)
    assert error.code == "vetoed"
    assert seen == [f"{base}/redirect?to=/ok", f"{base}/ok"]
    assert str(error).endswith(": this application reads only from its data bucket")


# --- what comes back ---------------------------------------------------------------------


def test_refuses_a_web_page_when_data_is_expected(base: str) -> None:
    error = _refused(
        f"{base}/html",
        allowed_networks=LOOPBACK,
        content_types=frozenset({"application/json", "application/geo+json"}),
    )
    assert error.code == "content_type"
    assert "the server sent text/html (a web page, not data)" in str(error)
    assert "application/geo+json, application/json" in str(error)


def test_reports_an_error_status(base: str) -> None:
    error = _refused(f"{base}/missing", allowed_networks=LOOPBACK)
    assert error.code == "status"
    assert "the server answered 404 Not Found" in str(error)


def test_reports_a_connection_failure() -> None:
    with socket.socket() as unused:
        unused.bind(("127.0.0.1", 0))
        port = unused.getsockname()[1]
    error = _refused(f"http://127.0.0.1:{port}/", allowed_networks=LOOPBACK)
    assert error.code == "connection"
    assert str(error).startswith(f"could not fetch http://127.0.0.1:{port}/: ")


def test_refuses_early_when_content_length_is_over_the_limit(base: str) -> None:
    error = _refused(f"{base}/big", allowed_networks=LOOPBACK, max_bytes=MB)
    assert error.code == "too_large"
    assert "announces 5,000,000 bytes, more than max_bytes=1,000,000" in str(error)
    assert "pass a larger max_bytes" in str(error)


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


def test_a_gzip_bomb_is_refused_quickly_in_bounded_memory(base: str, server: _Server) -> None:
    assert len(server.bomb) < 300_000
    tracemalloc.start()
    started = time.monotonic()
    try:
        error = _refused(f"{base}/bomb", allowed_networks=LOOPBACK, max_bytes=MB)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert error.code == "too_large"
    assert "the gzip-compressed response expands past max_bytes=1,000,000" in str(error)
    assert time.monotonic() - started < 1
    assert peak < 8 * MB


@pytest.mark.parametrize("encoding", ["gzip", "deflate", "raw-deflate", "two-members"])
def test_decompresses_gzip_and_deflate(base: str, encoding: str) -> None:
    got = fetch(f"{base}/encoded?as={encoding}", FetchPolicy(allowed_networks=LOOPBACK))
    assert got.body == JSON_BODY


def test_refuses_an_encoding_it_did_not_ask_for(base: str) -> None:
    error = _refused(f"{base}/encoded?as=br", allowed_networks=LOOPBACK)
    assert error.code == "decompression"
    assert "encoded the response as br, which geomint does not decode" in str(error)


def test_reports_a_truncated_gzip_body(base: str) -> None:
    error = _refused(f"{base}/encoded?as=truncated", allowed_networks=LOOPBACK)
    assert error.code == "decompression"
    assert "the compressed stream ends early" in str(error)


# --- the policy and the address classifier -----------------------------------------------


def test_a_policy_with_a_malformed_network_is_refused() -> None:
    with pytest.raises(UsageError, match=r"'10\.0\.0\.1/8' is not a network"):
        FetchPolicy(allowed_networks=("10.0.0.1/8",))


@pytest.mark.parametrize(
    ("address", "reason"),
    [
        ("10.0.0.1", "a private address"),
        ("172.16.5.4", "a private address"),
        ("192.168.1.1", "a private address"),
        ("127.0.0.1", "a loopback address"),
        ("0.0.0.0", "the unspecified address"),
        ("169.254.169.254", "a link-local address"),
        ("100.64.0.1", "a shared carrier-grade NAT address"),
        ("224.0.0.1", "a multicast address"),
        ("240.0.0.1", "a private address"),
        ("255.255.255.255", "a private address"),
        ("192.0.2.1", "a private address"),
        ("::1", "a loopback address"),
        ("::", "the unspecified address"),
        ("fe80::1", "a link-local address"),
        ("fd12:3456::1", "a private address"),
        ("fec0::1", "a site-local address"),
        ("ff02::1", "a multicast address"),
        ("::ffff:127.0.0.1", "carrying 127.0.0.1 (IPv4-mapped), a loopback address"),
        ("::ffff:169.254.169.254", "(IPv4-mapped), a link-local address"),
        ("::127.0.0.1", "carrying 127.0.0.1 (IPv4-compatible), a loopback address"),
        ("2002:a00:1::1", "carrying 10.0.0.1 (6to4), a private address"),
        ("64:ff9b::a00:1", "carrying 10.0.0.1 (NAT64), a private address"),
        ("2001:0:4136:e378:8000:63bf:3fff:fdd2", "(Teredo), a private address"),
        ("8.8.8.8", None),
        ("1.1.1.1", None),
        ("2606:4700::1111", None),
        ("2001:4860:4860::8888", None),
        ("::ffff:8.8.8.8", None),
    ],
)
def test_address_classifier(address: str, reason: str | None) -> None:
    found = address_refusal(address)
    if reason is None:
        assert found is None
    else:
        assert found is not None
        assert reason in found


@pytest.mark.parametrize(
    ("address", "allowed", "reachable"),
    [
        ("127.0.0.1", ("127.0.0.0/8",), True),
        ("::ffff:127.0.0.1", ("127.0.0.0/8",), True),
        ("127.0.0.2", ("127.0.0.1/32",), False),
        ("10.20.30.40", ("10.0.0.0/8", "192.168.0.0/16"), True),
        ("fd00::5", ("fd00::/8",), True),
        ("172.16.0.1", ("10.0.0.0/8",), False),
    ],
)
def test_allowed_networks_open_exactly_themselves(
    address: str, allowed: tuple[str, ...], reachable: bool
) -> None:
    assert (address_refusal(address, allowed) is None) is reachable
