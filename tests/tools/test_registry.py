"""Merging an application's tools into the defaults, and what help shows."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

import pytest
from pydantic import BaseModel

from geomint.errors import UsageError
from geomint.tools.registry import ToolEntry, help_entries, resolve_tools


class _NoInput(BaseModel):
    pass


async def _ok(_: BaseModel, __: Any) -> dict[str, str]:
    return {"ok": "yes"}


def entry(description: str = "A tool.", **kwargs: Any) -> ToolEntry:
    return ToolEntry(description=description, input_schema=_NoInput, execute=_ok, **kwargs)


class _Scope(BaseModel):
    kinds: list[Literal["places", "routes"]]


def _analyse(scope: BaseModel | None) -> ToolEntry[Any]:
    kinds = ", ".join(scope.kinds) if isinstance(scope, _Scope) else "any kind of"
    return entry(
        f"Analyse {kinds} entries.",
        tags=("data",),
        scope_schema=_Scope,
        scope_prompt="k",
        prepare=_analyse,
    )


DEFAULTS = {
    "fly_to": entry("Move the map.", tags=("map",)),
    "set_language": entry("Set the map language.", tags=("map",)),
    "recall_places": entry("Read places back.", tags=("data",)),
}


def test_remove_replace_and_add() -> None:
    mine = entry("My fly_to.")
    fleet = entry("Where a vehicle is.", tags=("fleet",))
    resolved = resolve_tools(
        DEFAULTS, {"set_language": False, "fly_to": mine, "get_fleet_vehicle": fleet}
    )
    assert list(resolved) == ["fly_to", "recall_places", "get_fleet_vehicle"]
    assert resolved["fly_to"] is mine


def test_start_from_none_and_re_add_a_few() -> None:
    resolved = resolve_tools(DEFAULTS, {"fly_to": True}, include_default_tools=False)
    assert list(resolved) == ["fly_to"]


@pytest.mark.parametrize(
    ("tools", "message"),
    [
        ({"set_langauge": False}, "no default tool of that name; did you mean 'set_language'?"),
        ({"Fly-To": entry()}, "must be lower_snake_case"),
        ({"x": "yes"}, "must be a ToolEntry, True or False; got str"),
        ({"after": entry(depends_on=("route",))}, "depends on 'route', which is not in"),
    ],
)
def test_what_cannot_be_merged_is_refused(tools: dict[str, Any], message: str) -> None:
    with pytest.raises(UsageError, match=message):
        resolve_tools(DEFAULTS, tools)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"description": " "}, "needs a description"),
        ({"input_schema": dict}, "must be a pydantic model class"),
        ({"scope_schema": _Scope}, "needs both scope_schema and scope_prompt"),
        ({"prepare": _analyse}, "prepare receives the turn's scope"),
    ],
)
def test_a_malformed_entry_is_refused(kwargs: dict[str, Any], message: str) -> None:
    base: dict[str, Any] = {"description": "d", "input_schema": _NoInput, "execute": _ok}
    with pytest.raises(UsageError, match=message):
        ToolEntry(**{**base, **kwargs})


def test_a_scopable_entry_prepares_itself_for_the_scope() -> None:
    tool = _analyse(None)
    assert tool.for_scope(_Scope(kinds=["routes"])).description == "Analyse routes entries."
    assert tool.for_scope(None) is tool
    assert tool.description == "Analyse any kind of entries." and tool.scopable
    plain = entry("No scope.")
    assert plain.for_scope(_Scope(kinds=["places"])) is plain


def test_help_filters_by_tag_and_names_the_tags_that_exist() -> None:
    registry = {**DEFAULTS, "analyse_data": _analyse(None)}
    assert [r["name"] for r in help_entries(registry, "data")] == ["recall_places", "analyse_data"]
    assert len(help_entries(registry)) == 4
    with pytest.raises(UsageError, match="no tool is tagged 'route'; the tags are data, map"):
        help_entries(registry, "route")


def test_the_tools_type_check_without_an_ignore() -> None:
    # ToolEntry is generic in its input model, so each tool's execute is checked against
    # its input schema by mypy; an ignore in tools/ would hide a mismatch again.
    import geomint.tools

    folder = Path(geomint.tools.__file__).parent
    ignored = [
        f"{path.name}:{number}"
        for path in sorted(folder.glob("*.py"))
        for number, line in enumerate(path.read_text().splitlines(), 1)
        if "type: " + "ignore" in line
    ]
    assert ignored == []
