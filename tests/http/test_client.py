"""The provider client sends, retries and reports requests, and keeps keys secret.

Every request is answered by a scripted service through the transport seam (see
``service.py``): nothing here opens a socket or resolves a name, so a redirect may cross
to another host without faking DNS. Sleeps are injected and recorded, so no test waits
for a backoff. The tests where the connection itself is the subject (a slow socket,
trusted base URLs on private addresses) are in ``test_guard.py``.
"""

from __future__ import annotations

import asyncio
import email.utils
import json
import logging
import time
from collections.abc import Callable, Iterator
from urllib.parse import parse_qs, quote

import httpx
import pytest
from tests.http.service import BASE, Service, policy

from geomint.errors import UsageError
from geomint.http import (
    USER_AGENT,
    FetchError,
    MemoryCache,
    ParamValue,
    RequestPolicy,
    ScriptedTransport,
    arequest_json,
    request,
    request_json,
)

KEY = "s3cr3t-K3y/42+x"


@pytest.fixture
def server() -> Iterator[Service]:
    yield Service()


@pytest.fixture
def base() -> str:
    return BASE


def _failure(call: Callable[[], object]) -> FetchError:
    with pytest.raises(FetchError) as caught:
        call()
    return caught.value


# --- methods, bodies, headers ------------------------------------------------------------


def test_get_sends_params_user_agent_and_accept(base: str, server: Service) -> None:
    params: dict[str, ParamValue] = {"q": "Lyon, France", "limit": 5, "polygon": True, "lang": None}
    seen = request_json("GET", f"{base}/echo?format=json", params=params, policy=policy(server))
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


def test_post_sends_a_form_body(base: str, server: Service) -> None:
    query = '[out:json];node["amenity"="cafe"](45.7,4.8,45.8,4.9);out;'
    seen = request_json("POST", f"{base}/echo", data={"data": query}, policy=policy(server))
    assert seen["method"] == "POST"
    assert seen["headers"]["Content-Type"] == "application/x-www-form-urlencoded"
    assert parse_qs(seen["body"]) == {"data": [query]}


def test_post_sends_a_json_body_and_headers(base: str, server: Service) -> None:
    body = {"locations": [{"lat": 45.76, "lon": 4.83}], "costing": "auto", "name": "Lyon é"}
    seen = request_json(
        "POST", f"{base}/echo", json=body, headers={"Accept-Language": "fr"}, policy=policy(server)
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
    # These go out on the default policy, with no transport: the socket guard sees nothing.
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
    base: str, server: Service, caplog: pytest.LogCaptureFixture
) -> None:
    cache = MemoryCache()
    given = policy(server, [], secrets=(KEY,), cache=cache)
    base_script = "/script/k"
    # a retry (logged), then success: cached under a key free of the secret
    caplog.set_level(logging.DEBUG, logger="geomint.http")
    server.script(base_script, (503, {}, b"busy"), (200, {}, b'{"ok": 1}'))
    got = request("GET", f"{base}{base_script}", params={"key": KEY, "q": "x"}, policy=given)
    assert got.url == f"{base}{base_script}?key=***&q=x"
    _never_shows_key(got.url, got.final_url, *cache.keys(), caplog.text)
    assert "retrying GET" in caplog.text

    error = _failure(lambda: request("GET", f"{base}/denied", params={"key": KEY}, policy=given))
    assert error.code == "status" and error.status == 403
    assert error.url == f"{base}/denied?key=***"
    assert error.detail == '{"error": "invalid key ***"}'
    _never_shows_key(error, repr(error), error.url, error.reason, error.detail, repr(given))


def test_a_key_in_a_header_or_unlisted_credential_param_is_hidden_too(
    base: str, server: Service
) -> None:
    cache = MemoryCache()
    given = policy(server, cache=cache)  # no secrets listed: credentials are known by name
    request("GET", f"{base}/echo", headers={"X-Api-Key": KEY}, policy=given)
    error = _failure(lambda: request("GET", f"{base}/denied", params={"key": KEY}, policy=given))
    _never_shows_key(error, error.url, *cache.keys())


def test_answers_for_different_keys_are_not_mixed(base: str, server: Service) -> None:
    given = policy(server, cache=MemoryCache())
    first = request_json("GET", f"{base}/count/keys", params={"key": "one"}, policy=given)
    second = request_json("GET", f"{base}/count/keys", params={"key": "two"}, policy=given)
    again = request_json("GET", f"{base}/count/keys", params={"key": "one"}, policy=given)
    assert (first, second, again) == ({"n": 1}, {"n": 2}, {"n": 1})


def test_a_redirect_leaving_the_origin_drops_the_credentials(server: Service) -> None:
    to = quote("http://b.test/echo")
    headers = {"X-Api-Key": KEY, "Accept-Language": "fr"}
    seen = request_json(
        "GET", f"http://a.test/redirect?to={to}", headers=headers, policy=policy(server)
    )
    assert "X-Api-Key" not in seen["headers"]
    assert seen["headers"]["Accept-Language"] == "fr"
    first, second = server.transport.requests
    assert (first.url.host, second.url.host) == ("a.test", "b.test")
    assert first.headers["X-Api-Key"] == KEY


def test_a_303_after_a_post_is_followed_with_get_and_no_body(base: str, server: Service) -> None:
    seen = request_json(
        "POST", f"{base}/redirect?status=303&to=/echo", json={"a": 1}, policy=policy(server)
    )
    assert (seen["method"], seen["body"]) == ("GET", "")
    assert "Content-Type" not in seen["headers"]


# --- retries -----------------------------------------------------------------------------


def test_429_with_retry_after_is_retried_after_the_wait_it_asks(base: str, server: Service) -> None:
    sleeps: list[float] = []
    server.script("/script/a", (429, {"Retry-After": "2"}, b"slow down"), (200, {}, b'{"ok": 1}'))
    got = request_json("GET", f"{base}/script/a", policy=policy(server, sleeps))
    assert got == {"ok": 1}
    assert sleeps == [2.0]
    assert server.hits["/script/a"] == 2


def test_retry_after_may_be_an_http_date(base: str, server: Service) -> None:
    sleeps: list[float] = []
    when = email.utils.formatdate(time.time() + 3, usegmt=True)
    server.script("/script/d", (503, {"Retry-After": when}, b""), (200, {}, b"{}"))
    request("GET", f"{base}/script/d", policy=policy(server, sleeps))
    assert len(sleeps) == 1 and 1.5 < sleeps[0] <= 3


def test_gives_up_after_max_attempts_with_backoff_and_jitter(base: str, server: Service) -> None:
    sleeps: list[float] = []
    server.script("/script/b", *[(503, {}, b"down for maintenance")] * 5)
    given = policy(server, sleeps, max_attempts=3, backoff_base_s=0.5, backoff_max_s=0.8)
    error = _failure(lambda: request("GET", f"{base}/script/b", policy=given))
    assert (error.code, error.status, error.attempts) == ("status", 503, 3)
    assert server.hits["/script/b"] == 3
    assert len(sleeps) == 2 and 0 <= sleeps[0] <= 0.5 and 0 <= sleeps[1] <= 0.8
    assert str(error) == (
        f"could not fetch {base}/script/b: the server answered 503 Service Unavailable "
        "(down for maintenance); gave up after 3 attempts"
    )


def test_a_429_that_outlasts_the_retries_is_rate_limited(base: str, server: Service) -> None:
    server.script("/script/c", *[(429, {}, b"")] * 3)
    error = _failure(lambda: request("GET", f"{base}/script/c", policy=policy(server, [])))
    assert (error.code, error.status, error.attempts) == ("rate_limited", 429, 3)
    assert "the service limits how often it may be called" in str(error)


@pytest.mark.parametrize("status", [400, 401, 404, 500])
def test_other_error_statuses_are_not_retried(base: str, server: Service, status: int) -> None:
    server.script("/script/e", (status, {"Retry-After": "1"}, b""))
    error = _failure(lambda: request("GET", f"{base}/script/e", policy=policy(server)))
    assert (error.code, error.status, error.attempts) == ("status", status, 1)
    assert server.hits["/script/e"] == 1


def test_a_retry_after_past_the_deadline_fails_at_once(base: str, server: Service) -> None:
    server.script("/script/f", (429, {"Retry-After": "120"}, b""))
    started = time.monotonic()
    error = _failure(lambda: request("GET", f"{base}/script/f", policy=policy(server, timeout_s=5)))
    assert time.monotonic() - started < 1
    assert (error.code, error.retry_after, error.attempts) == ("rate_limited", 120, 1)
    assert "the server asks to wait 120 s before trying again, more than the" in str(error)
    assert "try again in 120 s" in str(error)
    assert server.hits["/script/f"] == 1


def test_a_refused_connection_is_retried_then_reported() -> None:
    def refuse(request: httpx.Request) -> httpx.Response:
        raise httpx.ConnectError("[Errno 111] Connection refused")

    transport = ScriptedTransport(refuse)
    sleeps: list[float] = []
    url = "http://127.0.0.1:9/x"
    error = _failure(
        lambda: request(
            "GET",
            url,
            policy=RequestPolicy(transport=transport, sleep=sleeps.append, max_attempts=3),
        )
    )
    assert (error.code, error.attempts) == ("connection", 3)
    assert len(sleeps) == 2
    assert str(error).startswith(f"could not fetch {url}: ")
    assert len(transport.requests) == 3


# --- answers -----------------------------------------------------------------------------


def test_malformed_json_names_the_url_and_the_first_bytes(base: str, server: Service) -> None:
    cache = MemoryCache()
    given = policy(server, secrets=(KEY,), cache=cache)
    error = _failure(lambda: request_json("GET", f"{base}/html", params={"key": KEY}, policy=given))
    assert error.code == "malformed"
    assert error.url == f"{base}/html?key=***"
    assert str(error) == (
        f"could not read {base}/html?key=***: the answer is not valid JSON (Expecting value: "
        "line 1 column 1 (char 0)); it starts '<!DOCTYPE html> <html><body> Maintenance "
        "</body></html>'; check that the base URL points at the service's API, or try again later"
    )
    assert len(cache) == 0
    empty = _failure(lambda: request_json("GET", f"{base}/empty", policy=given))
    assert "it is empty" in str(empty)


def test_an_oversize_answer_is_refused(base: str, server: Service) -> None:
    error = _failure(lambda: request("GET", f"{base}/big", policy=policy(server, max_bytes=1000)))
    assert error.code == "too_large"
    assert "max_bytes=1,000" in str(error)


def test_async_callers_get_the_same_answers(base: str, server: Service) -> None:
    seen = asyncio.run(arequest_json("GET", f"{base}/echo", params={"q": 1}, policy=policy(server)))
    assert seen["query"] == {"q": ["1"]}
