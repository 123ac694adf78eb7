"""A fetch follows redirects by hand, checks what comes back, and caps what it reads.

Every request here is answered through the transport seam, by a scripted server (see
``_answer`` below): the URL checks, redirects, statuses, media types, sizes and encodings
all happen above the connection, so they run exactly as they do over a socket. The tests
of the connection layer (addresses, DNS, framing on the wire, a slow socket) are in
``test_guard.py``.
"""

from __future__ import annotations

import functools
import gzip
import json
import time
import tracemalloc
import zlib
from collections.abc import Callable, Iterator
from typing import Any
from urllib.parse import quote, urlsplit

import httpx
import pytest

from geomint.http import FetchError, FetchPolicy, ScriptedTransport, fetch

MB = 1_000_000
BOMB_ZEROS = 200 * 2**20
JSON_BODY = json.dumps({"ok": True, "features": list(range(100))}).encode()
BASE = "http://data.test"


def _gzip(data: bytes) -> bytes:
    return gzip.compress(data, mtime=0)


def _raw_deflate(data: bytes) -> bytes:
    packer = zlib.compressobj(6, zlib.DEFLATED, -zlib.MAX_WBITS)
    return packer.compress(data) + packer.flush()


@functools.cache
def _bomb() -> bytes:
    """200 MB of zeros, gzip-compressed to about 200 KB (built once, when first asked)."""
    packer = zlib.compressobj(9, zlib.DEFLATED, 16 + zlib.MAX_WBITS)
    zeros = bytes(2**20)
    bomb = b"".join(packer.compress(zeros) for _ in range(BOMB_ZEROS // len(zeros)))
    return bomb + packer.flush()


def _streamed(data: bytes, block: int = 65536) -> Iterator[bytes]:
    for start in range(0, len(data), block):
        yield data[start : start + block]


def _answer(status: int, body: bytes, kind: str, encoding: str | None = None) -> httpx.Response:
    """Answer as a server does: a length, then the bytes as they are (nothing decoded)."""
    headers = {"Content-Type": kind, "Content-Length": str(len(body))}
    if encoding is not None:
        headers["Content-Encoding"] = encoding
    return httpx.Response(status, headers=headers, content=_streamed(body))


def _redirect(location: str) -> httpx.Response:
    return httpx.Response(302, headers={"Location": location, "Content-Length": "0"})


def _big(request: httpx.Request) -> httpx.Response:
    def unread() -> Iterator[bytes]:
        yield pytest.fail("the body of an answer announced as too large was read")

    return httpx.Response(200, headers={"Content-Length": str(5 * MB)}, content=unread())


def _encoded(request: httpx.Request) -> httpx.Response:
    encoding = request.url.params["as"]
    packed = {
        "gzip": _gzip(JSON_BODY),
        "deflate": zlib.compress(JSON_BODY),
        "raw-deflate": _raw_deflate(JSON_BODY),
        "two-members": _gzip(JSON_BODY[:50]) + _gzip(JSON_BODY[50:]),
        "truncated": _gzip(JSON_BODY)[:-12],
        "br": b"\x1b\x03\x00\xf8\xa5\x84",
    }[encoding]
    header = {"raw-deflate": "deflate", "two-members": "gzip", "truncated": "gzip"}
    return _answer(200, packed, "application/json", header.get(encoding, encoding))


def _chain(request: httpx.Request) -> httpx.Response:
    left = int(request.url.path.rsplit("/", 1)[1])
    return _redirect(f"/chain/{left - 1}" if left else "/ok")


ROUTES: dict[str, Callable[[httpx.Request], httpx.Response]] = {
    "ok": lambda request: _answer(200, JSON_BODY, "application/json; charset=utf-8"),
    "html": lambda request: _answer(
        200, b"<html><body>a page about data</body></html>", "text/html"
    ),
    "big": _big,
    "bomb": lambda request: _answer(200, _bomb(), "application/json", "gzip"),
    "encoded": _encoded,
    "redirect": lambda request: _redirect(request.url.params["to"]),
    "loop": lambda request: _redirect("/loop2"),
    "loop2": lambda request: _redirect("/loop"),
    "chain": _chain,
}


def _route(request: httpx.Request) -> httpx.Response:
    route = ROUTES.get(request.url.path.strip("/").split("/")[0])
    if route is None:
        return _answer(404, b"no such route", "text/plain")
    return route(request)


@pytest.fixture
def transport() -> ScriptedTransport:
    return ScriptedTransport(_route)


@pytest.fixture
def base() -> str:
    return BASE


def _refused(url: str, transport: ScriptedTransport | None = None, **policy: Any) -> FetchError:
    with pytest.raises(FetchError) as caught:
        fetch(url, FetchPolicy(**policy), transport=transport)
    return caught.value


# --- what is sent ------------------------------------------------------------------------


def test_sends_its_user_agent_and_asks_only_for_gzip_or_deflate(
    base: str, transport: ScriptedTransport
) -> None:
    fetch(f"{base}/ok", transport=transport)
    (sent,) = transport.requests
    assert sent.headers["User-Agent"].startswith("geomint/")
    assert sent.headers["Accept-Encoding"] == "gzip, deflate"


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
def test_refuses_urls_of_other_forms(url: str, says: str, transport: ScriptedTransport) -> None:
    error = _refused(url, transport)
    assert error.code == "scheme"
    assert says in str(error)
    assert "secret" not in str(error)
    assert "secret" not in error.url
    assert transport.requests == []


def test_refuses_a_redirect_to_an_invalid_url(base: str, transport: ScriptedTransport) -> None:
    error = _refused(f"{base}/redirect?to=http://0177.0.0.1/", transport)
    assert error.code == "redirects"
    assert "it redirects to an invalid URL (Invalid IPv4 address: '0177.0.0.1')" in str(error)


@pytest.mark.parametrize("target", ["file:///etc/passwd", "ftp://127.0.0.1/pub"])
def test_refuses_redirects_to_other_schemes(
    base: str, transport: ScriptedTransport, target: str
) -> None:
    error = _refused(f"{base}/redirect?to={quote(target)}", transport)
    assert error.code == "scheme"
    assert "geomint fetches only http and https URLs" in str(error)
    assert len(transport.requests) == 1


def test_follows_relative_redirects(base: str, transport: ScriptedTransport) -> None:
    got = fetch(f"{base}/redirect?to=/ok", transport=transport)
    assert got.url == f"{base}/redirect?to=/ok"
    assert got.final_url == f"{base}/ok"
    assert got.body == JSON_BODY


def test_refuses_a_redirect_loop(base: str, transport: ScriptedTransport) -> None:
    error = _refused(f"{base}/loop", transport)
    assert error.code == "redirects"
    assert "the redirects loop back to" in str(error)


@pytest.mark.parametrize(("hops", "refused"), [(3, False), (4, True)])
def test_follows_at_most_max_redirects(
    base: str, transport: ScriptedTransport, hops: int, refused: bool
) -> None:
    policy = FetchPolicy(max_redirects=3)
    if refused:
        with pytest.raises(FetchError, match="more than max_redirects=3") as caught:
            fetch(f"{base}/chain/{hops - 1}", policy, transport=transport)
        assert caught.value.code == "redirects"
    else:
        assert fetch(f"{base}/chain/{hops - 1}", policy, transport=transport).final_url == (
            f"{base}/ok"
        )


def test_the_veto_sees_every_url_and_can_refuse_a_redirect_target(
    base: str, transport: ScriptedTransport
) -> None:
    seen: list[str] = []

    def veto(url: str) -> str | None:
        seen.append(url)
        return (
            "this application reads only from its data bucket"
            if urlsplit(url).path == "/ok"
            else None
        )

    error = _refused(f"{base}/redirect?to=/ok", transport, veto=veto)
    assert error.code == "vetoed"
    assert seen == [f"{base}/redirect?to=/ok", f"{base}/ok"]
    assert str(error).endswith(": this application reads only from its data bucket")
    assert [request.url.path for request in transport.requests] == ["/redirect"]


# --- what comes back ---------------------------------------------------------------------


def test_refuses_a_web_page_when_data_is_expected(base: str, transport: ScriptedTransport) -> None:
    error = _refused(
        f"{base}/html",
        transport,
        content_types=frozenset({"application/json", "application/geo+json"}),
    )
    assert error.code == "content_type"
    assert "the server sent text/html (a web page, not data)" in str(error)
    assert "application/geo+json, application/json" in str(error)


def test_reports_an_error_status(base: str, transport: ScriptedTransport) -> None:
    error = _refused(f"{base}/missing", transport)
    assert error.code == "status"
    assert "the server answered 404 Not Found" in str(error)


def test_refuses_early_when_content_length_is_over_the_limit(
    base: str, transport: ScriptedTransport
) -> None:
    error = _refused(f"{base}/big", transport, max_bytes=MB)
    assert error.code == "too_large"
    assert "announces 5,000,000 bytes, more than max_bytes=1,000,000" in str(error)
    assert "pass a larger max_bytes" in str(error)


def test_a_gzip_bomb_is_refused_quickly_in_bounded_memory(
    base: str, transport: ScriptedTransport
) -> None:
    assert len(_bomb()) < 300_000
    tracemalloc.start()
    started = time.monotonic()
    try:
        error = _refused(f"{base}/bomb", transport, max_bytes=MB)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert error.code == "too_large"
    assert "the gzip-compressed response expands past max_bytes=1,000,000" in str(error)
    assert time.monotonic() - started < 1
    assert peak < 8 * MB


@pytest.mark.parametrize("encoding", ["gzip", "deflate", "raw-deflate", "two-members"])
def test_decompresses_gzip_and_deflate(
    base: str, transport: ScriptedTransport, encoding: str
) -> None:
    got = fetch(f"{base}/encoded?as={encoding}", transport=transport)
    assert got.body == JSON_BODY


def test_refuses_an_encoding_it_did_not_ask_for(base: str, transport: ScriptedTransport) -> None:
    error = _refused(f"{base}/encoded?as=br", transport)
    assert error.code == "decompression"
    assert "encoded the response as br, which geomint does not decode" in str(error)


def test_reports_a_truncated_gzip_body(base: str, transport: ScriptedTransport) -> None:
    error = _refused(f"{base}/encoded?as=truncated", transport)
    assert error.code == "decompression"
    assert "the compressed stream ends early" in str(error)


# --- the seam itself ---------------------------------------------------------------------


def test_any_httpx_transport_answers_even_with_a_body_httpx_already_read(base: str) -> None:
    # httpx.MockTransport's answers built from bytes arrive already read, which httpx
    # refuses to stream raw; the fetch reads them all the same.
    plain = httpx.MockTransport(lambda request: httpx.Response(200, content=JSON_BODY))
    assert fetch(f"{base}/ok", transport=plain).body == JSON_BODY


def test_a_failed_connection_from_the_transport_is_reported(base: str) -> None:
    def refuse(request: httpx.Request) -> httpx.Response:
        raise httpx.ConnectError("[Errno 111] Connection refused")

    error = _refused(f"{base}/ok", ScriptedTransport(refuse))
    assert error.code == "connection"
    assert str(error).startswith(f"could not fetch {base}/ok: [Errno 111] Connection refused")


def test_the_callers_transport_is_shared_and_never_closed(base: str) -> None:
    class Counting(ScriptedTransport):
        closed = False

        def close(self) -> None:
            self.closed = True

    transport = Counting(_route)
    for _ in range(2):
        assert fetch(f"{base}/ok", transport=transport).body == JSON_BODY
    assert len(transport.requests) == 2
    assert not transport.closed
