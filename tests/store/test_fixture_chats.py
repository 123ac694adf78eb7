"""Chats an earlier geomint wrote open and read back unchanged: they are users' data.

``tests/fixtures/chats`` holds one chat per demo prompt (and one with a refused approval
and a dropped file), written by the commit each file names (``written_by``) with
``export_fixture_chats.py``, beside what that geomint's web app returned when the chat
was opened. Each is imported into today's geomint, folded, exported again and read back.
"""

from __future__ import annotations

import gzip
import json
from pathlib import Path
from typing import Any

import pytest

from geomint.models.demo import DEMO_PROMPTS
from geomint.server.thread import chat_view
from geomint.store import Chats, MemoryStore

FIXTURES = Path(__file__).parents[1] / "fixtures" / "chats"
CHATS = sorted(FIXTURES.glob("*.json.gz"))


def _fixture(path: Path) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(gzip.decompress(path.read_bytes()))
    return data


def test_there_is_a_fixture_chat_per_demo_prompt() -> None:
    assert len(CHATS) >= len(DEMO_PROMPTS) + 1


@pytest.mark.parametrize("path", CHATS, ids=[p.name.split(".")[0] for p in CHATS])
def test_a_stored_chat_opens_and_reads_back_unchanged(path: Path) -> None:
    fixture = _fixture(path)
    chats = Chats(MemoryStore())
    chat_id = chats.import_(fixture["export"])
    workspace = chats.open(chat_id)  # folding every event must still work
    assert workspace.last_seq == len(fixture["export"]["events"])
    # Re-exported byte for byte: no event changed on the way in or out.
    assert json.loads(json.dumps(chats.export(chat_id), default=str)) == fixture["export"]
    assert json.loads(json.dumps(chat_view(chats, chat_id), default=str)) == fixture["read_back"]
