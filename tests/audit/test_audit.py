"""Security events: a count each, and one JSON line with nothing long in it."""

from __future__ import annotations

import json
import logging

import pytest
from tests.hostile_inputs import star_geojson

from geomint import audit
from geomint.intake import IntakeError, load
from geomint.sandbox import Sandbox


def test_an_event_is_counted_and_logged_as_one_json_line(caplog: pytest.LogCaptureFixture) -> None:
    audit.reset()
    with caplog.at_level(logging.WARNING, logger="geomint.security"):
        audit.record("rate_limited", client="127.0.0.1", limit="new chats", detail="x" * 500)
    assert audit.counts()["rate_limited"] == 1
    assert set(audit.counts()) == set(audit.EVENTS)
    [line] = [r.getMessage() for r in caplog.records if r.name == "geomint.security"]
    logged = json.loads(line)
    assert logged == {
        "event": "rate_limited",
        "client": "127.0.0.1",
        "limit": "new chats",
        "detail": "x" * 200,
    }


def test_an_unknown_event_is_refused() -> None:
    with pytest.raises(ValueError, match="unknown security event 'rate_limit'"):
        audit.record("rate_limit")


def test_refusals_and_kills_are_counted_where_they_happen(isolated: Sandbox) -> None:
    audit.reset()
    with pytest.raises(IntakeError):
        load("http://127.0.0.1:9/stops.geojson")  # loopback: refused before connecting
    with pytest.raises(IntakeError):
        load(star_geojson(), timeout_s=1)
    spin = "n = 0\nfor i in range(10**12):\n    n += i\nreturn n"
    assert isolated.run(spin).error.type == "Timeout"  # type: ignore[union-attr]
    counts = audit.counts()
    assert counts["url_refused"] == 1
    assert counts["child_killed"] == 2
