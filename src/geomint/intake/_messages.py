"""How intake's problem messages show values, paths and numbers.

Every message names what was found as the user would recognise it (``null``, ``the string
"abc"``, ``[12.5, 41]``), where it was (a member path, ``root`` for the top), and for a
position that cannot be used, why and what to do about it.
"""

from __future__ import annotations

import math
from typing import Any

from geomint.intake._parse import NonFinite

__all__ = [
    "at",
    "describe",
    "join",
    "nonfinite",
    "nonfinite_problem",
    "num",
    "pos",
    "range_problem",
    "short",
]


def describe(value: Any) -> str:
    """Name what a JSON value is, as a message shows what was found instead."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "false" if not value else "true"
    if isinstance(value, int | float):
        return "a number"
    if isinstance(value, str):
        shown = value if len(value) <= 40 else value[:37] + "..."
        # Escape lone surrogates so the message itself stays printable as UTF-8.
        return f'the string "{shown.encode("utf-8", "backslashreplace").decode()}"'
    return "an array" if isinstance(value, list | tuple) else "an object"


def at(path: str) -> str:
    """Return ``path``, or ``root`` for the top of the document."""
    return path or "root"


def join(path: str, member: str) -> str:
    """Return the path of ``member`` inside the object at ``path``."""
    return f"{path}.{member}" if path else member


def num(value: float) -> str:
    """Show a coordinate as written: whole numbers without ``.0``."""
    return str(int(value)) if value.is_integer() and abs(value) < 1e15 else repr(value)


def pos(position: list[float]) -> str:
    """Show a position as ``[lon, lat]``."""
    return f"[{num(position[0])}, {num(position[1])}]"


def short(path: str) -> str:
    """Cut a very deep path at a member boundary: the start says where the nesting is."""
    if len(path) <= 60:
        return path
    cut = max(path.rfind(".", 0, 60), path.rfind("[", 0, 60))
    return path[: cut if cut > 0 else 60] + "…"


def nonfinite(value: float) -> str:
    """Show a non-finite number as the input wrote it: NaN, Infinity or -Infinity."""
    if isinstance(value, NonFinite):
        return value.literal
    if math.isnan(value):
        return "NaN"
    return "Infinity" if value > 0 else "-Infinity"


def nonfinite_problem(value: float) -> str:
    """Say why a non-finite coordinate is refused and what to do about it."""
    if isinstance(value, NonFinite):
        why = "is not valid JSON and not a valid coordinate"
    elif math.isnan(value):
        why = "is not a valid coordinate"
    else:
        why = (
            "is not a valid coordinate (a JSON number too large for a 64-bit float, "
            "such as 1e400, reads as Infinity)"
        )
    return (
        f"non-finite number ({nonfinite(value)}) {why}; "
        "replace it with the real value or remove the feature"
    )


def range_problem(lon: float, lat: float) -> str:
    """Say which ordinate is out of range and the likely cause: swapped axes or metres."""
    if abs(lat) > 90:
        what = f"latitude {num(lat)} is beyond +/-90"
    else:
        what = f"longitude {num(lon)} is beyond +/-360"
    if 90 < abs(lat) <= 180 and abs(lon) <= 90:
        advice = (
            "it looks like [lat, lng] order: GeoJSON positions are [lng, lat], "
            f"so write [{num(lat)}, {num(lon)}]"
        )
    elif max(abs(lon), abs(lat)) > 1000:
        advice = (
            "these look like projected coordinates (e.g. metres): reproject the data to "
            "EPSG:4326 first (ogr2ogr -t_srs EPSG:4326 out.geojson in.geojson) or name its "
            "CRS in a 'crs' member"
        )
    else:
        advice = "correct or remove this position"
    return (
        f"coordinate out of range: {what} (position [{num(lon)}, {num(lat)}]); EPSG:4326 "
        "needs -180<=lon<=180 and -90<=lat<=90 (longitudes up to +/-360 are wrapped); " + advice
    )
