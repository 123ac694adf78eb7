"""How the map draws an entry: the style the server holds, one source for the page, the
terminal and an export.

An entry's style is its defaults (a colour from :data:`PALETTE` by the order entries were
first written, widths and opacities by kind) with every style change the chat's log holds
merged over them (:func:`entry_style`). A change sets keys; a key set to ``None`` goes back
to its default. Data-driven parts (``color_by``, ``size_by``) are stored resolved, with the
classes and counts the tool computed on the entry's data, so the legend and the map read
the same classes on every reload.
"""

from __future__ import annotations

from typing import Any, Final, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from geomint.state.workspace import Workspace

__all__ = [
    "GRADUATED",
    "PALETTE",
    "ColorBy",
    "LayerStyle",
    "SizeBy",
    "StyleClass",
    "default_style",
    "entry_style",
]

#: Entry colours in the order entries are first written: Tableau 10 with its grey swapped
#: for a dark blue, ten hues chosen to stay apart for most colour-blind readers.
PALETTE: Final = (
    "#4e79a7",
    "#f28e2b",
    "#e15759",
    "#76b7b2",
    "#59a14f",
    "#edc948",
    "#b07aa1",
    "#ff9da7",
    "#9c755f",
    "#2f4b7c",
)
#: Graduated classes, light to dark (viridis, reversed so the low end is the light one).
GRADUATED: Final = (
    "#fde725",
    "#a0da39",
    "#4ac16d",
    "#1fa187",
    "#277f8e",
    "#365c8d",
    "#46327e",
    "#440154",
)
#: Routes are drawn wider than other lines.
_WIDTH_BY_KIND: Final = {"routes": 4.0}


class StyleClass(BaseModel):
    """One row of a legend: a colour and what it stands for, with how many features it has.

    Categorical classes carry ``value``; graduated ones ``low`` and ``high`` (``low`` <=
    value < ``high``, the last class closed at ``high``); ``other`` is everything else,
    features without the property included.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    color: str
    count: int = Field(ge=0)
    value: str | int | float | bool | None = None
    low: float | None = None
    high: float | None = None
    other: bool = False


class ColorBy(BaseModel):
    """Colour by a property: the classes, counted on ``version`` of the entry."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    property: str
    kind: Literal["categorical", "graduated"]
    classes: tuple[StyleClass, ...]
    version: int = Field(ge=1)


class SizeBy(BaseModel):
    """Size points (radius) or lines (width) by a numeric property, linearly from the
    property's ``low`` to ``high`` onto ``smallest`` to ``largest`` pixels."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    property: str
    low: float
    high: float
    smallest: float = Field(ge=0.5, le=40)
    largest: float = Field(ge=0.5, le=40)


class LayerStyle(BaseModel):
    """Everything the map draws of an entry's look.

    Attributes:
        color: The entry's colour (fill, line and point).
        opacity: The layer's opacity, 0 to 1; fills are drawn at a quarter of it so what
            lies beneath shows.
        width: Line width in pixels.
        radius: Point radius in pixels; ``None`` grows with the zoom.
        color_by: Colours from a property, replacing ``color`` for the features it classes.
        size_by: Point radius or line width from a property.
        label_by: The property whose value labels each feature.
        order: Draw order: a higher order is drawn above.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    color: str
    opacity: float = Field(default=1.0, ge=0, le=1)
    width: float = Field(default=2.0, ge=0.5, le=20)
    radius: float | None = Field(default=None, ge=1, le=30)
    color_by: ColorBy | None = None
    size_by: SizeBy | None = None
    label_by: str | None = None
    order: int = 0


def default_style(index: int, kind: str) -> LayerStyle:
    """The look of the ``index``-th entry a chat wrote (from 0), of ``kind``."""
    return LayerStyle(
        color=PALETTE[index % len(PALETTE)],
        width=_WIDTH_BY_KIND.get(kind, 2.0),
        order=index,
    )


def entry_style(workspace: Workspace, entry_id: str) -> LayerStyle | None:
    """The style the map draws ``entry_id`` with, or ``None`` when there is no such entry.

    A stored change that no longer validates (a chat written by an older version, say) is
    left out key by key: the chat still opens and the rest of its style still draws.
    """
    entry = workspace.entries.get(entry_id)
    if entry is None:
        return None
    index = list(workspace.entries).index(entry_id)
    base = default_style(index, entry.kind)
    style = base
    for key, value in (entry.style or {}).items():
        style = _with(style, base, key, value)
    return style


def _with(style: LayerStyle, base: LayerStyle, key: str, value: Any) -> LayerStyle:
    if key not in LayerStyle.model_fields:
        return style
    if value is None:
        return style.model_copy(update={key: getattr(base, key)})
    try:
        return LayerStyle.model_validate({**style.model_dump(), key: value})
    except ValidationError:
        return style
