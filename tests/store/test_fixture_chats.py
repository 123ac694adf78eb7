"""Chats an earlier geomint wrote open and read back unchanged: they are users' data.

``tests/fixtures/chats`` holds one chat per demo prompt (and one with a refused approval
and a dropped file) from each of two geomints: the files without a prefix were written
before the typed parts (each answer one message), the ``t``-prefixed ones by the first
geomint that streams typed parts (tool calls, answer blocks and run ends as events). The
``m``-prefixed ones are the map-code prompts of the first geomint with map code (issue 19),
each with its ``map_changed`` event and the blobs it names. The ``r``-prefixed ones are
the raster and catalogue prompts of issue 21: rasters entries (Arrow blobs), the zonal
sums and resampled totals minted over them, and a replayed STAC search with its
``discovery_ran`` event. Each
file names its writer (``written_by``) and holds what that geomint's web app returned when
the chat was opened (``read_back``, and ``parts`` for the second). Each is imported into
today's geomint, folded, exported again, and read back as parts:

- everything the earlier read-back showed is in today's parts, the same (questions,
  answers, tool calls and whether they succeeded, charts, figure cards, approvals and
  their answers, uploads, whether a run was stopped), and the map holds the same entries
  with the same data, display state and camera; a chat written with parts reads back as
  exactly those parts;
- entries gained the style the server holds (issue 18); these chats set none, so each
  entry reads back with its palette default and otherwise as before;
- the parts themselves are pinned in ``tests/fixtures/chats/parts`` (written by
  ``write_fixture_parts.py``), so a later change to the projection is a deliberate one.
"""

from __future__ import annotations

import gzip
import json
from pathlib import Path
from typing import Any

import pytest

from geomint.models.demo import DEMO_PROMPTS
from geomint.server.thread import chat_view, entry_geojson
from geomint.state import PALETTE, LayerStyle
from geomint.store import Chats, MemoryStore
from geomint.ui import chat_parts

FIXTURES = Path(__file__).parents[1] / "fixtures" / "chats"
CHATS = sorted(FIXTURES.glob("*.json.gz"))
PARTS = FIXTURES / "parts"


def _fixture(path: Path) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(gzip.decompress(path.read_bytes()))
    return data


def _imported(path: Path) -> tuple[Chats, str, dict[str, Any]]:
    fixture = _fixture(path)
    chats = Chats(MemoryStore())
    return chats, chats.import_(fixture["export"]), fixture


def _styled(fixture: dict[str, Any]) -> bool:
    """Whether a geomint that keeps entry styles wrote the chat (its parts carry them)."""
    return any("style" in p for p in fixture.get("parts", []) if p.get("type") == "entry")


def _without_default_styles(shown: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Entry parts or entries as an earlier geomint showed them: without the style entries
    gained, after checking that it is the default of an entry no style was set for (nor
    removed from the map, which came later still)."""
    out = []
    for item in shown:
        kept = dict(item)
        if item.get("type", "entry") == "entry" and "geojson_url" in item:
            assert kept.pop("removed", False) is False  # chat_view's entries gained it
            style = LayerStyle.model_validate(kept.pop("style"))
            assert style.color in PALETTE and style.opacity == 1
            assert (style.color_by, style.size_by, style.label_by) == (None, None, None)
        out.append(kept)
    return out


def _shown_then(read_back: dict[str, Any]) -> dict[str, list[Any]]:
    """What the earlier web app showed of a chat on reload, kind by kind."""
    shown: dict[str, list[Any]] = {k: [] for k in _KINDS}
    for message in read_back["messages"]:
        for part in message["parts"]:
            kind, data = part["type"], part.get("data", {})
            if kind == "text":
                shown["question" if message["role"] == "user" else "answer"].append(part["text"])
            elif kind == "tool":
                shown["tool"].append((part["name"], part["ok"]))
            elif kind == "data-chart":
                shown["chart"].append(data["config"])
            elif kind == "data-figure":
                shown["figure"].append((data["title"], data["figures"]))
            elif kind == "data-approval":
                answer = {"given": True, "refused": False}.get(data["state"])
                asked = (data["approval_id"], data["tool"], data["preview"])
                shown["approval"].append((*asked, answer))
            elif kind == "data-upload":
                shown["upload"].append((data["name"], data["entry_id"], data["features"]))
        if message["role"] == "assistant":
            shown["stopped"].append(message["stopped"])
    return shown


_KINDS = ("question", "answer", "tool", "chart", "figure", "approval", "upload", "stopped")


def _shown_now(parts: list[dict[str, Any]]) -> dict[str, list[Any]]:
    """The same facts from today's parts."""
    shown: dict[str, list[Any]] = {k: [] for k in _KINDS}
    results = [p for p in parts if p["type"] == "tool_result"]
    answers = {p["approval_id"]: p["approved"] for p in parts if p["type"] == "approval_answered"}
    for part in parts:
        kind = part["type"]
        if kind in ("question", "text"):
            shown["question" if kind == "question" else "answer"].append(part["text"])
        elif kind == "tool_call":
            ok = results.pop(0)["ok"]
            shown["tool"].append((part["tool"], ok))
        elif kind == "chart":
            shown["chart"].append(part["config"])
        elif kind == "figure":
            shown["figure"].append((part["title"], part["figures"]))
        elif kind == "approval":
            asked = (part["approval_id"], part["tool"], part["preview"])
            shown["approval"].append((*asked, answers.get(part["approval_id"])))
        elif kind == "upload":
            shown["upload"].append((part["name"], part["entry_id"], part["features"]))
        elif kind == "run_ended":
            shown["stopped"].append(part["stopped"])
    return shown


def test_there_is_a_fixture_chat_per_demo_prompt() -> None:
    assert len(CHATS) >= len(DEMO_PROMPTS) + 1


@pytest.mark.parametrize("path", CHATS, ids=[p.name.split(".")[0] for p in CHATS])
def test_a_stored_chat_opens_and_exports_unchanged(path: Path) -> None:
    chats, chat_id, fixture = _imported(path)
    workspace = chats.open(chat_id)  # folding every event must still work
    assert workspace.last_seq == len(fixture["export"]["events"])
    # Re-exported byte for byte: no event changed on the way in or out.
    assert json.loads(json.dumps(chats.export(chat_id), default=str)) == fixture["export"]


@pytest.mark.parametrize("path", CHATS, ids=[p.name.split(".")[0] for p in CHATS])
def test_a_stored_chat_shows_what_it_showed_before(path: Path) -> None:
    chats, chat_id, fixture = _imported(path)
    then = fixture["read_back"]
    parts = [p.model_dump(mode="json") for p in chat_parts(chats, chat_id)]
    view = json.loads(json.dumps(chat_view(chats, chat_id), default=str))
    if _styled(fixture):  # written since entries have styles: the same, style and all
        assert parts == fixture["parts"] and view == then
        return
    view["entries"] = _without_default_styles(view["entries"])
    if "parts" in fixture:
        assert _without_default_styles(parts) == fixture["parts"]
        assert all(e.pop("style") is None for e in then["entries"])
        assert view == then
        return
    assert _shown_now(parts) == _shown_then(then)
    now = view
    assert all(e["style"] is None for e in then["entries"])
    assert (now["title"], now["view"]) == (then["title"], then["view"])
    keys = ("entry_id", "kind", "version", "label", "visible", "sources")
    assert [{k: e[k] for k in keys} for e in now["entries"]] == [
        {k: e[k] for k in keys} for e in then["entries"]
    ]
    for entry in then["entries"]:
        stored = entry_geojson(chats, chat_id, entry["entry_id"], entry["version"])
        assert stored is not None and json.loads(stored) == entry["geojson"]


@pytest.mark.parametrize("path", CHATS, ids=[p.name.split(".")[0] for p in CHATS])
def test_a_stored_chat_reads_back_as_the_same_parts(path: Path) -> None:
    chats, chat_id, _ = _imported(path)
    pinned = json.loads((PARTS / f"{path.name.split('.')[0]}.json").read_text())
    assert [p.model_dump(mode="json") for p in chat_parts(chats, chat_id)] == pinned["parts"]


TYPED = [p for p in CHATS if "parts" in _fixture(p)]


@pytest.mark.parametrize("path", TYPED, ids=[p.name.split(".")[0] for p in TYPED])
def test_every_store_reads_a_chat_back_as_the_same_parts(chats: Chats, path: Path) -> None:
    # The memory store keeps events as objects; SQLite as text; PostgreSQL as jsonb, which
    # keeps an object's keys in an order of its own. The parts must not depend on it.
    fixture = _fixture(path)
    chat_id = chats.import_(fixture["export"])
    parts = [p.model_dump(mode="json") for p in chat_parts(chats, chat_id)]
    if _styled(fixture):
        assert parts == fixture["parts"]
    else:
        assert _without_default_styles(parts) == fixture["parts"]
