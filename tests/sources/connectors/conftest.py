"""The recorded-response server each connector test module reads its recordings from."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from tests.sources.connectors.support import RECORDED

from geomint.testing import RecordedServer


@pytest.fixture
def server(request: pytest.FixtureRequest) -> Iterator[RecordedServer]:
    """A recorded-response server on 127.0.0.1 over the test module's recordings folder;
    a request no route expected fails the test."""
    folder = RECORDED / getattr(request.module, "RECORDINGS", "")
    with RecordedServer(folder) as running:
        yield running
        assert not running.unmatched, [f"{s.method} {s.url}" for s in running.unmatched]
