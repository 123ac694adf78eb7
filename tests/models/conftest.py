"""Fixtures for the model seam: a scripted LLM server, a demo model, and a loopback-only guard."""

from __future__ import annotations

import importlib
import ipaddress
import socket
import sys
import types
from collections.abc import Iterator
from typing import Any, ClassVar

import pytest
from pydantic_ai.models import Model
from pydantic_ai.models.test import TestModel

from .stub_llm_server import StubLLMServer

_ENV = (
    "GEOMINT_MODEL",
    "OPENAI_API_KEY",
    "OPENAI_BASE_URL",
    "ANTHROPIC_API_KEY",
    "ANTHROPIC_BASE_URL",
)


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture(autouse=True)
def _no_real_credentials(monkeypatch: pytest.MonkeyPatch) -> None:
    """Keep a developer's real keys and endpoints out of every test."""
    for name in _ENV:
        monkeypatch.delenv(name, raising=False)


@pytest.fixture(autouse=True)
def blocked(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Refuse any connection or lookup that would leave this machine; return what was refused."""
    refused: list[str] = []
    real_connect = socket.socket.connect
    real_getaddrinfo = socket.getaddrinfo

    def is_local(host: object) -> bool:
        if isinstance(host, bytes):
            host = host.decode()
        if host in (None, "localhost"):
            return True
        try:
            return ipaddress.ip_address(str(host)).is_loopback
        except ValueError:
            return False

    def connect(self: socket.socket, address: Any) -> None:
        if self.family in (socket.AF_INET, socket.AF_INET6) and not is_local(address[0]):
            refused.append(str(address[0]))
            raise OSError(f"tests/models are loopback-only; refused a connection to {address}")
        real_connect(self, address)

    def getaddrinfo(host: Any, *args: Any, **kwargs: Any) -> Any:
        if not is_local(host):
            refused.append(host.decode() if isinstance(host, bytes) else str(host))
            raise socket.gaierror(f"tests/models are loopback-only; refused to resolve {host!r}")
        return real_getaddrinfo(host, *args, **kwargs)

    monkeypatch.setattr(socket.socket, "connect", connect)
    monkeypatch.setattr(socket, "getaddrinfo", getaddrinfo)
    return refused


@pytest.fixture
def stub() -> Iterator[StubLLMServer]:
    """A started scripted LLM server; closed, with its script used up, after the test."""
    with StubLLMServer() as server:
        yield server
        assert server.pending == 0, "the test scripted replies the SDK never asked for"


class _StandInDemo(TestModel):
    """Used only while geomint.models.demo is not written yet."""

    is_demo: ClassVar[bool] = True


@pytest.fixture
def demo_model(monkeypatch: pytest.MonkeyPatch) -> type[Model]:
    """The demo model class: the real one, or a stand-in if geomint.models.demo is absent."""
    try:
        module = importlib.import_module("geomint.models.demo")
    except ModuleNotFoundError as exc:
        if exc.name != "geomint.models.demo":
            raise
        module = types.ModuleType("geomint.models.demo")
        module.DemoModel = _StandInDemo  # type: ignore[attr-defined]
        monkeypatch.setitem(sys.modules, "geomint.models.demo", module)
    demo: type[Model] = module.DemoModel
    return demo
