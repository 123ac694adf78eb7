"""The map's own settings: which basemap style it is drawn on, and the language of its
labels. Each change is an event in the chat's log, so a reopened chat shows the same map."""

from __future__ import annotations

import difflib
from typing import Any, Final

from pydantic import BaseModel, ConfigDict, Field

from geomint.state import BasemapChanged, LanguageChanged
from geomint.tools.basemaps import LABEL_LANGUAGES, UNTRANSLATED
from geomint.tools.context import ToolContext
from geomint.tools.registry import ToolEntry
from geomint.tools.results import ToolError

__all__ = ["SET_LANGUAGE", "SET_MAP_STYLE"]


class MapStyleInput(BaseModel):
    """Switch the basemap."""

    model_config = ConfigDict(extra="forbid")

    style: str = Field(
        min_length=1,
        max_length=40,
        description="The style's name: 'light', 'dark', or another the result of a call lists",
    )


def _styles(ctx: ToolContext) -> list[dict[str, str]]:
    return [{"name": s.name, "label": s.label, "theme": s.theme} for s in ctx.settings.map_styles]


async def _set_map_style(arguments: MapStyleInput, ctx: ToolContext) -> dict[str, Any]:
    names = [s.name for s in ctx.settings.map_styles]
    wanted = arguments.style.strip().lower()
    if wanted not in names:
        near = difflib.get_close_matches(wanted, names, n=1)
        raise ToolError(
            f"there is no map style {arguments.style!r}"
            + (f" (did you mean {near[0]!r}?)" if near else ""),
            hint=f"the styles are {', '.join(map(repr, names))}",
        )
    await ctx.require("display", {"style": wanted})
    ctx.append([BasemapChanged(style=wanted)])
    return {"style": wanted, "styles": _styles(ctx)}


SET_MAP_STYLE: Final = ToolEntry(
    description=(
        "Switch the map's basemap style ('light', the default, or 'dark', both over the "
        "same world map and Helsinki streets; an application may add its own). The "
        "result lists every style there is. Entries stay as they are."
    ),
    input_schema=MapStyleInput,
    execute=_set_map_style,
    effects=frozenset({"display"}),
    classification_prompt="Change the map's look: a dark or light basemap, another style.",
    tags=("map",),
    example_prompts=("Switch the map to dark mode",),
)

_LANGUAGE_LIST: Final = ", ".join(f"{code} ({name})" for code, name in LABEL_LANGUAGES.items())


class LanguageInput(BaseModel):
    """Switch the language of the map's labels."""

    model_config = ConfigDict(extra="forbid")

    language: str = Field(
        min_length=2, max_length=20, description=f"A language code: {_LANGUAGE_LIST}"
    )


def _coverage(ctx: ToolContext, language: str) -> dict[str, dict[str, int]]:
    """How many features of each places entry have a name in ``language``."""
    key = f"name:{language}"
    out: dict[str, dict[str, int]] = {}
    for entry in ctx.workspace.of_kind("places"):
        features = ctx.entry_data(entry.entry_id).get("features") or []
        named = sum(1 for f in features if (f.get("properties") or {}).get(key))
        out[entry.entry_id] = {"features": len(features), "named": named}
    return out


async def _set_language(arguments: LanguageInput, ctx: ToolContext) -> dict[str, Any]:
    given = arguments.language.strip().lower()
    by_name = {name.lower(): code for code, name in LABEL_LANGUAGES.items()}
    code = by_name.get(given, given)
    if code not in LABEL_LANGUAGES:
        raise ToolError(
            f"map labels cannot be shown in {arguments.language!r}",
            hint=f"the shipped data names places in {_LANGUAGE_LIST}; nothing else has "
            "translations",
        )
    await ctx.require("display", {"language": code})
    ctx.append([LanguageChanged(language=code)])
    return {
        "language": code,
        "labels": f"place labels show name:{code} where a place has it, else name",
        "places_named": _coverage(ctx, code),
        "untranslated": UNTRANSLATED,
        "languages": dict(LABEL_LANGUAGES),
    }


SET_LANGUAGE: Final = ToolEntry(
    description=(
        f"Switch the language of the map's labels: {_LANGUAGE_LIST}. Places from the "
        "bundled Helsinki data carry name:fi, name:sv and name:en where OpenStreetMap "
        "has them (about one place in ten); a label without one shows the place's name. "
        "Street names and country labels have no translations and do not change. The "
        "result counts, per places entry, how many places have a name in the language."
    ),
    input_schema=LanguageInput,
    execute=_set_language,
    effects=frozenset({"display"}),
    classification_prompt="Show the map's labels in another language (Finnish, Swedish, English).",
    tags=("map",),
    example_prompts=("Show the place names in Swedish",),
)
