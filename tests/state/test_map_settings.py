"""The basemap and label language: events that fold into the workspace and read back as
the same parts, live and reopened."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from geomint.state import BasemapChanged, LanguageChanged
from geomint.store import Chats, MemoryStore
from geomint.ui import PART_ADAPTER, BasemapPart, LanguagePart, chat_parts


def test_the_last_switch_wins_and_reads_back_as_parts() -> None:
    chats = Chats(MemoryStore())
    chats.create("c1")
    chats.append("c1", "r1", [BasemapChanged(style="dark"), LanguageChanged(language="sv")])
    chats.append("c1", "map", [BasemapChanged(style="light")])

    workspace = chats.open("c1")
    assert (workspace.basemap, workspace.language) == ("light", "sv")
    parts = [p for p in chat_parts(chats, "c1") if isinstance(p, BasemapPart | LanguagePart)]
    assert [(p.type, p.run_id) for p in parts] == [
        ("basemap", "r1"),
        ("language", "r1"),
        ("basemap", "map"),
    ]
    assert [getattr(p, "style", None) or getattr(p, "language", None) for p in parts] == [
        "dark",
        "sv",
        "light",
    ]
    dumped = parts[0].model_dump(mode="json")
    assert PART_ADAPTER.validate_python(dumped) == parts[0]


def test_a_chat_without_them_has_the_defaults() -> None:
    chats = Chats(MemoryStore())
    chats.create("c1")
    workspace = chats.open("c1")
    assert (workspace.basemap, workspace.language) == (None, None)


@pytest.mark.parametrize(
    "body",
    [lambda: BasemapChanged(style="Dark Mode"), lambda: LanguageChanged(language="swedish")],
)
def test_names_are_checked(body: object) -> None:
    with pytest.raises(ValidationError):
        body()  # type: ignore[operator]
