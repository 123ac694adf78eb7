"""Security events: a count each, and one JSON line with nothing long in it."""

from __future__ import annotations

import json
import logging

import pytest

from geomint import audit


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
