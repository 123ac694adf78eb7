"""Loading from URLs, against a local HTTP server the test starts (loopback only)."""

from __future__ import annotations

import gzip
import json
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from geomint.intake import IntakeError, load

LOOPBACK = ("127.0.0.1/32",)
POINTS = {
    "type": "FeatureCollection",
    "features": [
        {"type": "Feature", "properties": {"n": i},
         "geometry": {"type": "Point", "coordinates": [i, i]}}
        for i in range(3)
    ],
}  # fmt: skip
BODY = json.dumps(POINTS).encode()
BOMB = gzip.compress(bytes(50_000_000), compresslevel=9)


class _Handler(BaseHTTPRequestHandler):
    def log_message(self, format: str, *args: object) -> None:
        pass

    def _send(self, body: bytes, media: str, status: int = 200, **headers: str) -> None:
        self.send_response(status)
        self.send_header("Content-Type", media)
        self.send_header("Content-Length", str(len(body)))
        for name, value in headers.items():
            self.send_header(name.replace("_", "-"), value)
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self) -> None:
        path = self.path
        if path == "/points.geojson":
            self._send(BODY, "application/geo+json")
        elif path == "/download":
            self._send(b"name,lon,lat\nA,4.9,52.3\n", "text/csv")
        elif path == "/page":
            self._send(b"<!doctype html><html><body>Sign in</body></html>", "text/html")
        elif path == "/big":
            self._send(BODY + b" " * 2_000_000, "application/geo+json")
        elif path == "/bomb.geojson":
            self._send(BOMB, "application/geo+json", Content_Encoding="gzip")
        elif path == "/gzipped.geojson":
            self._send(gzip.compress(BODY), "application/geo+json", Content_Encoding="gzip")
        elif path == "/drip":
            self.send_response(200)
            self.send_header("Content-Type", "application/geo+json")
            self.end_headers()
            try:
                for _ in range(200):
                    self.wfile.write(b" ")
                    self.wfile.flush()
                    time.sleep(0.1)
            except OSError:
                pass
        elif path == "/to-metadata":
            self._send(b"", "text/plain", 302, Location="http://169.254.169.254/latest/")
        elif path == "/to-localhost":
            self._send(b"", "text/plain", 302, Location="http://127.0.0.2:9/x.geojson")
        elif path == "/missing.geojson":
            self._send(b"not here", "text/plain", 404)
        else:
            self._send(b"?", "text/plain", 400)


@pytest.fixture(scope="module")
def server() -> Iterator[str]:
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    httpd.daemon_threads = True
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}"
    httpd.shutdown()
    httpd.server_close()


def test_geojson_over_http(server: str) -> None:
    layer = load(f"{server}/points.geojson", allowed_networks=LOOPBACK)
    assert layer.report.feature_count == 3
    assert layer.report.source == f"{server}/points.geojson"


def test_format_from_the_media_type_when_the_path_says_nothing(server: str) -> None:
    layer = load(f"{server}/download", allowed_networks=LOOPBACK)
    assert layer.report.format == "csv"
    assert layer.data["features"][0]["geometry"]["coordinates"] == [4.9, 52.3]


def test_gzip_encoding_is_undone(server: str) -> None:
    assert load(f"{server}/gzipped.geojson", allowed_networks=LOOPBACK).report.feature_count == 3


def _refused(url: str, **kwargs: object) -> str:
    with pytest.raises(IntakeError) as caught:
        load(url, **kwargs)  # type: ignore[arg-type]
    return str(caught.value)


def test_loopback_is_refused_unless_allowed(server: str) -> None:
    assert "127.0.0.1 is a loopback address" in _refused(f"{server}/points.geojson")


def test_a_web_page_is_not_data(server: str) -> None:
    message = _refused(f"{server}/page", allowed_networks=LOOPBACK)
    assert message.endswith("this is an HTML page, not KML or any geodata geomint reads; "
                            "check the link or file")  # fmt: skip


def test_oversize_is_refused(server: str) -> None:
    message = _refused(f"{server}/big", allowed_networks=LOOPBACK, max_bytes=1_000_000)
    assert "the response announces 2,000,340 bytes, more than max_bytes=1,000,000" in message


def test_gzip_bomb_is_refused_quickly(server: str) -> None:
    started = time.perf_counter()
    message = _refused(f"{server}/bomb.geojson", allowed_networks=LOOPBACK, max_bytes=1_000_000)
    assert "the gzip-compressed response expands past max_bytes=1,000,000" in message
    assert time.perf_counter() - started < 5


def test_slow_drip_is_stopped_at_the_deadline(server: str) -> None:
    started = time.perf_counter()
    message = _refused(f"{server}/drip", allowed_networks=LOOPBACK, timeout_s=1.0)
    assert "the whole fetch must finish within timeout_s=1 s" in message
    assert time.perf_counter() - started < 2.5


@pytest.mark.parametrize(
    ("path", "fragment"),
    [
        ("/to-metadata", "169.254.169.254 is a link-local address"),
        ("/to-localhost", "127.0.0.2 is a loopback address"),
    ],
)
def test_redirects_to_private_addresses_are_refused(server: str, path: str, fragment: str) -> None:
    assert fragment in _refused(f"{server}{path}", allowed_networks=LOOPBACK)


def test_the_application_can_veto(server: str) -> None:
    def veto(url: str) -> str | None:
        return "only data.example.org is allowed" if "data.example.org" not in url else None

    message = _refused(f"{server}/points.geojson", allowed_networks=LOOPBACK, veto=veto)
    assert "only data.example.org is allowed" in message


def test_http_errors_are_named(server: str) -> None:
    assert "the server answered 404 Not Found" in _refused(
        f"{server}/missing.geojson", allowed_networks=LOOPBACK
    )


@pytest.mark.parametrize(
    "url", ["file:///etc/passwd", "ftp://example.org/a.geojson", "gopher://x/"]
)
def test_other_schemes_are_refused(url: str) -> None:
    assert "only http and https" in _refused(url)
