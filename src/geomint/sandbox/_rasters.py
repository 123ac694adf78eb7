"""The raster operations model-written code calls by name: ``load``, ``zonal_stats``,
``cell_area`` (and ``Raster`` to build one from an array).

They wrap :mod:`geomint.geo.raster` with what a call needs: entry ids resolve to the
rasters the call was given, and ``zonal_stats`` mints its own labelled figures, so ten
calls give ten named figures rather than ten anonymous numbers. What they cannot mint (too
many zones) they say in a warning, which reaches the model beside the result.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Mapping, Sequence
from typing import Any, Final

from geomint.geo.errors import GeoInputError
from geomint.geo.raster import RESAMPLING, Raster, cell_area, resample, zonal_stats
from geomint.sandbox._mint import Mint

__all__ = ["MAX_MINTED_ZONE_FIGURES", "RasterOps"]

#: ``zonal_stats`` mints a figure per zone and statistic up to this many; past it the
#: rows come back as data and the code mints the ones a person will read.
MAX_MINTED_ZONE_FIGURES: Final = 40
_ZONE_NAME_KEYS: Final = ("name", "name:en", "title", "label", "id")
_UNITS: Final = {"count": "cells"}


class RasterOps:
    """The operations, bound to one call's inputs and its ``mint``."""

    def __init__(self, mint: Mint, inputs: Mapping[str, Any]) -> None:
        self._mint = mint
        self._by_id: dict[str, Raster] = {}
        for name, value in inputs.items():
            if name.endswith("_by_entry") and isinstance(value, Mapping):
                for entry_id, item in value.items():
                    if isinstance(item, Raster):
                        self._by_id[str(entry_id)] = item
        self._ids = {id(r): i for i, r in self._by_id.items()}

    def names(self) -> dict[str, Any]:
        """What the body gets, by name."""
        return {
            "Raster": Raster,
            "load": self.load,
            "zonal_stats": self.zonal_stats,
            "cell_area": cell_area,
        }

    def _raster(self, ref: Any, what: str) -> Raster:
        if isinstance(ref, Raster):
            return ref
        if isinstance(ref, str):
            found = self._by_id.get(ref)
            if found is not None:
                return found
            known = ", ".join(self._by_id) or "none (pass raster entry ids to the tool)"
            raise KeyError(f"{what}: no raster {ref!r} among this call's inputs; they are {known}")
        raise TypeError(f"{what} takes a raster entry id (e.g. 'rasters-1') or a Raster; got "
                        f"{type(ref).__name__}")  # fmt: skip

    def load(self, ref: Any, like: Any = None, method: str = "nearest") -> Raster:
        """A raster of this call, optionally put onto another raster's grid.

        Args:
            ref: A raster entry id (``"rasters-2"``) or a Raster.
            like: Another raster (or its id) whose grid, CRS and extent to use; cells
                with nodata are left out of the resampling.
            method: How cells combine (``nearest``, ``average``, ``sum``, ``bilinear``,
                ``min``, ``max``, ``mode``): ``sum`` for counts going coarser, ``average``
                for densities and rates, ``nearest`` or ``mode`` for categories.
        """
        raster = self._raster(ref, "load")
        if like is None:
            return raster
        if method not in RESAMPLING:
            raise ValueError(f"load's method is one of {', '.join(RESAMPLING)}; got {method!r}")
        return resample(raster, self._raster(like, "load(like=...)"), method)

    def zonal_stats(
        self,
        raster: Any,
        zones: Any,
        stats: Sequence[str] | str = ("sum", "mean", "count", "min", "max"),
        *,
        label: str | None = None,
        unit: str | None = None,
        band: int = 1,
        weights: Any = None,
        mint: bool = True,
    ) -> list[dict[str, Any]]:
        """Per zone, the statistics of ``raster`` weighted by each cell's exact coverage.

        Each statistic of each zone is minted as a figure labelled with the zone's name
        (its ``name`` property, else its position) when there are at most
        :data:`MAX_MINTED_ZONE_FIGURES` of them; the rows are returned either way.

        Args:
            raster: A raster entry id or a Raster.
            zones: Polygons: an entry (``parks``), a GeoDataFrame, GeoJSON or shapely.
            stats: ``sum``, ``mean``, ``count``, ``min``, ``max``, ``median``, ``stdev``,
                ``majority``.
            label: What the raster's values are, for the figures' labels (``"people"``);
                defaults to the raster's own label.
            unit: The unit of ``sum``, ``mean``, ``min`` and ``max`` figures.
            band: Which band (1-based).
            weights: A raster (or id) on the same grid to weight ``sum`` and ``mean`` by.
            mint: False to mint nothing (rows only).
        """
        source = self._raster(raster, "zonal_stats")
        weighting = (
            self._raster(weights, "zonal_stats(weights=...)") if weights is not None else None
        )
        try:
            rows = zonal_stats(source, zones, stats, band=band, weights=weighting)
        except GeoInputError as exc:
            raise ValueError(str(exc)) from None
        names = [_zone_name(row, index) for index, row in enumerate(rows)]
        for row, name in zip(rows, names, strict=True):
            row["zone"] = name
        if mint:
            self._mint_rows(rows, source, label, unit)
        return rows

    def _mint_rows(
        self, rows: list[dict[str, Any]], source: Raster, label: str | None, unit: str | None
    ) -> None:
        figures = [(row, stat) for row in rows for stat in row
                   if stat not in ("properties", "zone")]  # fmt: skip
        if len(figures) > MAX_MINTED_ZONE_FIGURES:
            warnings.warn(
                f"zonal_stats minted no figures: {len(rows)} zones gave {len(figures)} "
                f"statistics, more than the {MAX_MINTED_ZONE_FIGURES} it mints itself; mint "
                "the ones a person will read with mint.value(row['sum'], '...')",
                stacklevel=3,
            )
            return
        what = label or source.label or self._ids.get(id(source)) or "raster values"
        for row, stat in figures:
            value = row[stat]
            if value is None or (isinstance(value, float) and not math.isfinite(value)):
                continue
            figure_unit = _UNITS.get(stat, unit)
            self._mint.value(value, f"{stat} of {what} in {row['zone']}"[:200], unit=figure_unit)


def _zone_name(row: Mapping[str, Any], index: int) -> str:
    properties = row.get("properties") or {}
    for key in _ZONE_NAME_KEYS:
        value = properties.get(key)
        if isinstance(value, str) and value.strip():
            return value.strip()[:80]
        if isinstance(value, int) and not isinstance(value, bool):
            return f"{key} {value}"
    return f"zone {index + 1}"
