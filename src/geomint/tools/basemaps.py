"""The basemap styles a map can be switched to, and the languages its labels come in.

Two styles ship with geomint, over the same bundled world tiles: ``light`` (the default)
and ``dark``. An application adds its own with :class:`MapStyle` (``create_map_agent(
map_styles=[...])``); a style served from another origin must name the origins it loads
from, so the page's content security policy opens to those and no others.

Example:
    >>> [style.name for style in BUILTIN_STYLES]
    ['light', 'dark']
    >>> MapStyle(name="paper", url="https://tiles.example.org/paper.json", label="Paper")
    Traceback (most recent call last):
    ...
    geomint.errors.UsageError: map style 'paper' is served from https://tiles.example.org, \
another origin than the page's: list that origin in MapStyle(origins=...) to allow it, \
or serve the style from this server (a path such as /static/...)
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Final, Literal
from urllib.parse import urlsplit

from geomint.errors import UsageError

__all__ = [
    "BUILTIN_STYLES",
    "LABEL_LANGUAGES",
    "UNTRANSLATED",
    "MapStyle",
    "style_catalogue",
]

_NAME: Final = re.compile(r"[a-z][a-z0-9_-]{0,39}")
_ORIGIN: Final = re.compile(r"https://[a-z0-9.-]+(:[0-9]{1,5})?")


@dataclass(frozen=True, kw_only=True)
class MapStyle:
    """A basemap style the map can be switched to.

    Attributes:
        name: What the model and the page call it: lower-case letters, digits, ``-``
            and ``_`` (``"satellite"``).
        url: Where its MapLibre style JSON is: a path on this server (``/static/...``),
            or an ``https://`` URL on one of ``origins``.
        label: What the switcher shows a person.
        theme: Whether the style is ``"light"`` or ``"dark"``: geomint draws its streets
            and labels over it in matching colours.
        origins: Other origins the style loads from (its JSON, tiles, glyphs, sprites),
            each ``https://host[:port]``. The page may reach these and no others; leave
            it empty for a style served by this server.
    """

    name: str
    url: str
    label: str
    theme: Literal["light", "dark"] = "light"
    origins: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        if not _NAME.fullmatch(self.name):
            raise UsageError(
                f"map style name {self.name!r} must be 1-40 lower-case letters, digits, "
                "'-' or '_', starting with a letter (e.g. 'satellite')"
            )
        if not self.label.strip():
            raise UsageError(f"map style {self.name!r} needs a label for the switcher")
        for origin in self.origins:
            if not _ORIGIN.fullmatch(origin):
                raise UsageError(
                    f"map style {self.name!r}: origin {origin!r} must be https://host[:port], "
                    "with no path"
                )
        if self.url.startswith("/") and not self.url.startswith("//"):
            return
        parts = urlsplit(self.url)
        if parts.scheme != "https" or not parts.netloc:
            raise UsageError(
                f"map style {self.name!r} has url {self.url!r}: give a path on this server "
                "(/static/...) or an https:// URL"
            )
        origin = f"https://{parts.netloc.lower()}"
        if origin not in self.origins:
            raise UsageError(
                f"map style {self.name!r} is served from {origin}, another origin than the "
                "page's: list that origin in MapStyle(origins=...) to allow it, or serve the "
                "style from this server (a path such as /static/...)"
            )


#: The styles geomint ships, over the bundled world tiles; the first is the default.
BUILTIN_STYLES: Final = (
    MapStyle(name="light", url="/static/basemap/style.json", label="Light"),
    MapStyle(name="dark", url="/static/basemap/style-dark.json", label="Dark", theme="dark"),
)

#: The languages map labels can be drawn in: place entries carry ``name:<code>`` for these
#: where OpenStreetMap has them (the bundled Helsinki places do); labels fall back to
#: ``name``.
LABEL_LANGUAGES: Final[Mapping[str, str]] = MappingProxyType(
    {"fi": "Finnish", "sv": "Swedish", "en": "English"}
)

#: What keeps one name whatever the language, as the person and the model are told.
UNTRANSLATED: Final = (
    "street names (the bundled Helsinki streets hold one name each, mostly Finnish) and "
    "country labels (English names from Natural Earth) have no translations and stay as "
    "they are; place labels show the language's name where the place has one, else its "
    "`name`"
)


def style_catalogue(extra: Iterable[MapStyle] = ()) -> tuple[MapStyle, ...]:
    """The built-in styles followed by ``extra``; an extra style replaces a built-in one
    of the same name.

    Raises:
        UsageError: Two of ``extra`` share a name.
    """
    extra = tuple(extra)
    names = [s.name for s in extra]
    twice = sorted({n for n in names if names.count(n) > 1})
    if twice:
        raise UsageError(f"map styles {', '.join(map(repr, twice))} are given twice")
    given = {s.name: s for s in extra}
    builtin = {s.name for s in BUILTIN_STYLES}
    return (
        *(given.get(s.name, s) for s in BUILTIN_STYLES),
        *(s for s in extra if s.name not in builtin),
    )
