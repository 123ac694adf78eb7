"""Fixtures for the model seam: a scripted LLM server the real model classes may talk to, and
a demo model."""

from __future__ import annotations

import importlib
import sys
import types
from collections.abc import Iterator
from typing import ClassVar

import pytest
from pydantic_ai.models import Model, override_allow_model_requests
from pydantic_ai.models.test import TestModel

from geomint.testing import StubLLMServer

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


@pytest.fixture
def model_requests() -> Iterator[None]:
    """Let the real model classes send requests for this test (the suite's guard refuses
    them); the socket guard still keeps them on loopback."""
    with override_allow_model_requests(True):
        yield


@pytest.fixture
def stub(model_requests: None) -> Iterator[StubLLMServer]:
    """A started scripted LLM server, the one place a real model class may send to;
    closed, with its script used up, after the test."""
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
