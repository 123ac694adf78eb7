"""``mint``: how model-written code registers figures and layers where it computes them.

A figure registered with ``mint.value`` is kept wherever the code then puts it (nested in
a dict, only in a local, or nowhere at all): registration happens at the call, not by
searching the return value. The records leave the sandbox as plain data; the tools layer
turns them into provenance-carrying values.
"""

from __future__ import annotations

import base64
import math
import numbers
import re
import sys
import zlib
from decimal import Decimal
from typing import Any

from geomint.geo.raster import Raster
from geomint.sandbox.results import JsonValue, to_json_safe

__all__ = ["MAX_FIGURES", "MAX_LAYERS", "MAX_LAYER_CELLS", "Mint"]

MAX_FIGURES = 200
MAX_LAYERS = 20
#: The most cells a raster layer minted by code may hold (64 MB of float32).
MAX_LAYER_CELLS = 16_000_000
_MAX_LABEL = 200
_GEOMETRY_TYPES = frozenset(
    {"Point", "MultiPoint", "LineString", "MultiLineString", "Polygon", "MultiPolygon",
     "GeometryCollection"}
)  # fmt: skip


class Mint:
    """The ``mint`` object injected into every body.

    Example:
        >>> mint = Mint()
        >>> mint.value(42, "schools beyond 800 m", unit="schools")
        42
        >>> mint.figures[0]["label"]
        'schools beyond 800 m'
    """

    __slots__ = ("figures", "layers", "raster_cells")

    def __init__(self) -> None:
        self.figures: list[dict[str, JsonValue]] = []
        self.layers: list[dict[str, JsonValue]] = []
        self.raster_cells = 0  # of every raster minted so far, held to MAX_LAYER_CELLS

    def value(
        self,
        x: Any,
        label: str,
        unit: str | None = None,
        sources: list[str] | None = None,
        period: str | None = None,
    ) -> Any:
        """Register ``x`` as a figure a person will read, and return ``x`` unchanged.

        Args:
            x: A number (int, float, numpy scalar, Decimal) or a bool.
            label: What the number is, in a few words ("children within 800 m").
            unit: Its unit ("m", "km²", "people"), or None for a plain count.
            sources: Entry ids the figure was computed from, when narrower than the
                call's inputs.
            period: The period the figure refers to, read off the rows it came from
                (``row["period"]`` of a table); left out, the card shows its sources'
                periods.
        """
        if len(self.figures) >= MAX_FIGURES:
            raise ValueError(
                f"mint.value was called more than {MAX_FIGURES} times; mint the "
                "figures a person will read, and return the rest as data"
            )
        number = _as_number(x)
        self.figures.append(
            {
                "label": _label(label, "mint.value"),
                "value": number,
                "unit": _optional_text(unit, "unit"),
                "sources": _sources(sources),
                "line": _caller_line(),
                **({"period": _period(period)} if period is not None else {}),
            }
        )
        return x

    def layer(self, data: Any, label: str) -> Any:
        """Register ``data`` (GeoJSON, shapely geometry, GeoDataFrame or a Raster) as a
        map layer.

        Returns:
            ``data`` unchanged, so the call can wrap the value being returned.
        """
        if len(self.layers) >= MAX_LAYERS:
            raise ValueError(
                f"mint.layer was called more than {MAX_LAYERS} times; combine "
                "features into fewer layers"
            )
        if isinstance(data, Raster):
            held = self.raster_cells
            if held + data.array.size > MAX_LAYER_CELLS:
                raise ValueError(
                    f"the rasters one call mints hold at most {MAX_LAYER_CELLS:,} cells in all; "
                    f"this one would make {held + data.array.size:,}: mint fewer, or coarser "
                    "ones (load(raster, like=coarser, method='average'))"
                )
        kept = (
            {"raster": _raster_record(data)}
            if isinstance(data, Raster)
            else {"data": _as_feature_collection(data)}
        )
        if isinstance(data, Raster):
            self.raster_cells += data.array.size
        self.layers.append({"label": _label(label, "mint.layer"), **kept, "line": _caller_line()})
        return data


def _as_number(x: Any) -> JsonValue:
    if isinstance(x, bool) or type(x).__name__ == "bool_":
        return bool(x)
    if isinstance(x, numbers.Number | Decimal) and not isinstance(x, complex):
        value = to_json_safe(x)
        if value is None:
            raise ValueError(
                f"mint.value got {x!r}, which is not a finite number; check for "
                "empty inputs or a division by zero before minting"
            )
        return value
    hint = ""
    if isinstance(x, list | tuple | dict) or type(x).__name__ in {"Series", "DataFrame", "ndarray"}:
        hint = "; mint one number per call (e.g. `len(...)`, `.sum()`), or return the data"
    raise TypeError(f"mint.value takes a number, got {type(x).__name__}{hint}")


def _label(label: object, where: str) -> str:
    if not isinstance(label, str) or not label.strip():
        raise TypeError(f"{where} needs a label: a short text saying what this is, got {label!r}")
    if len(label) > _MAX_LABEL:
        raise ValueError(f"{where} label is {len(label)} characters; keep it under {_MAX_LABEL}")
    return label.strip()


def _optional_text(value: object, name: str) -> str | None:
    if value is None:
        return None
    if not isinstance(value, str) or len(value) > 40:
        raise TypeError(
            f"mint.value {name} must be a short text such as 'm' or 'people', got {value!r}"
        )
    return value


# A year, a month or a day, or a range of them; or what a source says when it states none.
_DATE = r"\d{4}(?:-\d{2}(?:-\d{2})?)?"
_PERIOD = re.compile(rf"(?:{_DATE}(?:/{_DATE})?|not stated)")


def _period(value: object) -> str:
    text = (
        str(value).strip() if isinstance(value, str | int) and not isinstance(value, bool) else ""
    )
    if not _PERIOD.fullmatch(text):
        raise TypeError(
            "mint.value period must be a short text such as '2020', '2000/2010', "
            f"'2024-07-01' or 'not stated', read off the rows; got {value!r}"
        )
    return text


def _sources(sources: object) -> list[JsonValue] | None:
    if sources is None:
        return None
    if isinstance(sources, str):
        sources = [sources]
    if not isinstance(sources, list | tuple) or not all(isinstance(s, str) for s in sources):
        raise TypeError("mint.value sources must be a list of entry ids, e.g. ['places-1']")
    return list(sources[:50])


def _raster_record(raster: Raster) -> JsonValue:
    """A raster as plain data: its grid, and its cells compressed and in base64."""
    if raster.array.size > MAX_LAYER_CELLS:
        rows, cols = raster.shape
        raise ValueError(
            f"mint.layer takes rasters of up to {MAX_LAYER_CELLS:,} cells; this one has "
            f"{raster.array.size:,} ({rows:,} x {cols:,}); put it on a coarser grid first "
            "with load(raster, like=coarser, method='average')"
        )
    cells = zlib.compress(raster.array.tobytes(order="C"), 1)
    nodata = raster.nodata
    return {
        "shape": list(raster.array.shape),
        "dtype": raster.array.dtype.name,
        "transform": list(raster.transform),
        "crs": raster.crs,
        "nodata": "nan" if nodata is not None and math.isnan(nodata) else nodata,
        "cells": base64.b64encode(cells).decode("ascii"),
    }


def _as_feature_collection(data: Any) -> JsonValue:
    value = to_json_safe(data)
    if isinstance(value, dict):
        kind = value.get("type")
        if kind == "FeatureCollection" and isinstance(value.get("features"), list):
            return value
        if kind == "Feature":
            return {"type": "FeatureCollection", "features": [value]}
        if kind in _GEOMETRY_TYPES:
            feature: dict[str, JsonValue] = {"type": "Feature", "properties": {}, "geometry": value}
            return {"type": "FeatureCollection", "features": [feature]}
    if isinstance(value, list) and all(
        isinstance(f, dict) and f.get("type") == "Feature" for f in value
    ):
        return {"type": "FeatureCollection", "features": list(value)}
    raise TypeError(
        "mint.layer takes GeoJSON (a FeatureCollection, a Feature, a geometry or "
        f"a list of Features), a shapely geometry or a GeoDataFrame; got "
        f"{type(data).__name__}"
    )


def _caller_line() -> int:
    # Two frames up is the model's code (mint.value -> _caller_line). The frame is read
    # by our own trusted code; the model's code cannot reach frames (Gate 1).
    frame = sys._getframe(2)
    return frame.f_lineno if frame.f_code.co_filename == "<code>" else 0
