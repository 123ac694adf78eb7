"""The rate limiter spaces requests to each host, and a wait past the deadline is refused.

Requests are answered by the scripted service through the transport seam (``service.py``),
so two host names need no faked DNS; the clock and the sleeps are fakes.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator

import pytest
from tests.http.service import BASE, Service, policy

from geomint.http import FetchError, RateLimiter, RequestPolicy, request


@pytest.fixture
def server() -> Iterator[Service]:
    yield Service()


class _Clock:
    def __init__(self, now: float = 1000.0) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


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


def test_requests_to_one_host_wait_for_the_rate(server: Service) -> None:
    clock = _Clock()
    sleeps: list[float] = []

    def sleep(seconds: float) -> None:
        sleeps.append(seconds)
        clock.now += seconds

    given = RequestPolicy(
        rate_per_s=1.0,
        limiter=RateLimiter(clock=clock),
        sleep=sleep,
        transport=server.transport,
    )
    for host in ("a.test", "b.test", "a.test"):
        request("GET", f"http://{host}/echo", policy=given)
    assert sleeps == [1.0]
    assert [sent.url.host for sent in server.transport.requests] == ["a.test", "b.test", "a.test"]


def test_a_rate_limit_wait_past_the_deadline_fails_without_sending(server: Service) -> None:
    limiter = RateLimiter()
    given = policy(server, rate_per_s=0.01, limiter=limiter, timeout_s=5)
    request("GET", f"{BASE}/count/l", policy=given)
    with pytest.raises(FetchError) as caught:
        request("GET", f"{BASE}/count/l", policy=given)
    error = caught.value
    assert (error.code, error.attempts) == ("rate_limited", 0)
    assert error.retry_after is not None and 99 < error.retry_after <= 100
    assert "geomint sends at most 0.01 requests per second to api.test" in str(error)
    assert server.hits["/count/l"] == 1
