"""The provider client's caches answer repeated requests, stay in bounds and keep no key.

Requests are answered by the scripted service through the transport seam (``service.py``).
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pytest
from tests.http.service import BASE, Service, policy

from geomint.http import (
    DiskCache,
    FetchError,
    MemoryCache,
    default_cache_dir,
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


class _Clock:
    def __init__(self, now: float = 1000.0) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


def _never_shows_key(*texts: object) -> None:
    for text in texts:
        for form in (KEY, quote(KEY, safe=""), quote(KEY)):
            assert form not in str(text), text


def test_a_cache_hit_does_not_reach_the_server_until_it_expires(base: str, server: Service) -> None:
    clock = _Clock()
    given = policy(server, cache=MemoryCache(clock=clock), cache_ttl_s=60)
    first = request("GET", f"{base}/count/c", params={"b": 2, "a": 1}, policy=given)
    hit = request("GET", f"{base}/count/c", params={"a": 1, "b": 2}, policy=given)
    assert (first.from_cache, hit.from_cache, hit.body) == (False, True, first.body)
    assert server.hits["/count/c"] == 1
    clock.now += 61
    assert request_json("GET", f"{base}/count/c", params={"a": 1, "b": 2}, policy=given) == {"n": 2}


def test_refresh_bypasses_the_cache_and_skip_leaves_it_alone(base: str, server: Service) -> None:
    given = policy(server, cache=MemoryCache())
    url = f"{base}/count/r"
    assert request_json("GET", url, policy=given) == {"n": 1}
    assert request_json("GET", url, policy=given, cache="refresh") == {"n": 2}
    assert request_json("GET", url, policy=given) == {"n": 2}
    assert request_json("GET", url, policy=given, cache="skip") == {"n": 3}
    assert request_json("GET", url, policy=given) == {"n": 2}


def test_post_bodies_are_part_of_the_key(base: str, server: Service) -> None:
    given = policy(server, cache=MemoryCache())
    for query in ("one", "two", "one"):
        request("POST", f"{base}/count/p", data={"data": query}, policy=given)
    assert server.hits["/count/p"] == 2


def test_error_answers_are_not_cached(base: str, server: Service) -> None:
    given = policy(server, cache=MemoryCache())
    server.script("/script/n", (404, {}, b""))
    with pytest.raises(FetchError) as caught:
        request("GET", f"{base}/script/n", policy=given)
    assert caught.value.status == 404
    assert request_json("GET", f"{base}/script/n", policy=given) == {"ok": True}
    assert server.hits["/script/n"] == 2


def test_the_memory_cache_is_bounded_and_evicts_the_least_recently_used(
    base: str, server: Service
) -> None:
    cache = MemoryCache(max_entries=2)
    given = policy(server, cache=cache)
    for path in ("a", "b", "a", "c"):
        request("GET", f"{base}/count/{path}", policy=given)
    assert len(cache) == 2
    assert [key.split()[1].rsplit("/", 1)[1] for key in cache.keys()] == ["a", "c"]  # noqa: SIM118


def test_the_disk_cache_outlives_its_object_and_holds_no_key(
    base: str, server: Service, tmp_path: Path
) -> None:
    first = policy(server, secrets=(KEY,), cache=DiskCache(tmp_path))
    request("GET", f"{base}/count/d", params={"key": KEY}, policy=first)
    second = policy(server, secrets=(KEY,), cache=DiskCache(tmp_path))
    hit = request("GET", f"{base}/count/d", params={"key": KEY}, policy=second)
    assert hit.from_cache and json.loads(hit.body) == {"n": 1}
    assert server.hits["/count/d"] == 1
    files = list(tmp_path.iterdir())
    assert len(files) == 1 and files[0].suffix == ".response"
    _never_shows_key(files[0].read_bytes().decode())


def test_the_disk_cache_writes_whole_files_or_none(
    base: str,
    server: Service,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    cache = DiskCache(tmp_path)
    given = policy(server, cache=cache)
    url = f"{base}/count/w"
    request("GET", url, policy=given)
    before = {path.name: path.read_bytes() for path in tmp_path.iterdir()}

    def crash(source: Any, target: Any) -> None:
        raise OSError("disk full")

    with monkeypatch.context() as patch:  # a full disk, at the moment of the rename
        patch.setattr(os, "replace", crash)
        refreshed = request("GET", url, policy=given, cache="refresh")
    assert json.loads(refreshed.body) == {"n": 2}  # the answer arrives all the same
    assert {path.name: path.read_bytes() for path in tmp_path.iterdir()} == before
    assert "could not write to the HTTP cache" in caplog.text
    assert json.loads(request("GET", url, policy=given).body) == {"n": 1}


def test_the_disk_cache_expires_and_stays_in_bounds(
    base: str, server: Service, tmp_path: Path
) -> None:
    clock = _Clock()
    cache = DiskCache(tmp_path, max_entries=2, clock=clock)
    given = policy(server, cache=cache, cache_ttl_s=10)
    for path in ("a", "b", "c"):
        request("GET", f"{base}/count/{path}", policy=given)
        time.sleep(0.01)  # distinct modification times
    assert len(list(tmp_path.glob("*.response"))) == 2
    clock.now += 11
    assert not request("GET", f"{base}/count/c", policy=given).from_cache


def test_the_default_disk_cache_lives_under_geomint_home() -> None:
    assert default_cache_dir() == Path(os.environ["GEOMINT_HOME"]) / "cache" / "http"
    assert DiskCache().directory == default_cache_dir()
