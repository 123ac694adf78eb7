"""`geomint serve`: what it hands to uvicorn and what it tells the person; the server
itself is driven end to end in tests/e2e."""

from __future__ import annotations

from asyncio import run
from typing import Any

import httpx
import pytest
import uvicorn
from typer.testing import CliRunner

from geomint.cli import app


@pytest.fixture
def served(monkeypatch: pytest.MonkeyPatch) -> dict[str, Any]:
    """What ``uvicorn.run`` was called with, instead of serving."""
    seen: dict[str, Any] = {}

    def fake_run(asgi: Any, **options: Any) -> None:
        seen.update(app=asgi, **options)

    monkeypatch.setattr(uvicorn, "run", fake_run)
    monkeypatch.delenv("GEOMINT_TOKEN", raising=False)
    return seen


def _health(asgi: Any, host: str, **headers: str) -> int:
    async def go() -> int:
        transport = httpx.ASGITransport(app=asgi)
        async with httpx.AsyncClient(transport=transport, base_url=f"http://{host}") as c:
            return (await c.get("/api/health", headers=headers)).status_code

    return int(run(go()))


def test_on_localhost_it_answers_only_to_loopback_names(served: dict[str, Any]) -> None:
    result = CliRunner().invoke(app, ["serve", "--store", "memory:", "--no-open", "--port", "8123"])
    assert result.exit_code == 0, result.output
    assert "http://127.0.0.1:8123/ model geomint-demo" in result.stdout
    assert (served["host"], served["port"]) == ("127.0.0.1", 8123)
    assert served["proxy_headers"] is False  # the client is the socket peer (issue 15)
    assert _health(served["app"], "127.0.0.1:8123") == 200
    assert _health(served["app"], "rebind.evil.example:8123") == 421


def test_beyond_localhost_it_warns_without_a_token_and_prints_the_token_link(
    served: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    args = ["serve", "--store", "memory:", "--no-open", "--host", "0.0.0.0"]
    warned = CliRunner().invoke(app, args)
    assert warned.exit_code == 0, warned.output
    assert "GEOMINT_TOKEN is not set" in warned.stderr

    monkeypatch.setenv("GEOMINT_TOKEN", "t0ken")
    behind_proxy = ["--allowed-host", "maps.example.org", "--forwarded-allow-ips", "10.0.0.7"]
    tokened = CliRunner().invoke(app, [*args, *behind_proxy])
    assert tokened.exit_code == 0, tokened.output
    assert (served["proxy_headers"], served["forwarded_allow_ips"]) == (True, ["10.0.0.7"])
    assert "GEOMINT_TOKEN" not in tokened.stderr
    assert "http://127.0.0.1:8000/?token=t0ken" in tokened.stdout
    assert _health(served["app"], "maps.example.org") == 401  # the token is needed
    assert _health(served["app"], "maps.example.org", authorization="Bearer t0ken") == 200
    assert _health(served["app"], "other.example.org", authorization="Bearer t0ken") == 421


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (["--mode", "in-process"], "runs model-written code"),
        (["--approve", "proces_data"], "did you mean 'process_data'?"),
    ],
)
def test_bad_options_are_refused_before_anything_starts(
    served: dict[str, Any], args: list[str], says: str
) -> None:
    result = CliRunner().invoke(app, ["serve", "--store", "memory:", "--no-open", *args])
    assert result.exit_code == 2
    assert says in result.stderr
    assert served == {}
