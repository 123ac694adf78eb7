"""geo's public surface is pinned and every name is documented (tests/test_docstring_examples.py
runs the examples)."""

from __future__ import annotations

import inspect
import types

import pytest

from geomint import geo

FUNCTIONS = [
    "along", "area_m2", "bbox", "bearing", "buffer_m", "cell_boundary", "cells_for_points",
    "cells_for_polygon", "centroid", "cluster", "coordinate_at_progress", "destination",
    "difference", "distance_m", "feature_collection", "intersection", "length_m",
    "make_valid", "midpoint", "nearest", "nearest_point_on_line", "point_in_polygon",
    "point_to_line_distance_m", "points_within", "progress_between", "route_progress_at_point",
    "section_bbox", "to_feature", "to_shapely", "union", "vertex_mean",
]  # fmt: skip
TYPES = ["Cluster", "Clustering", "GeoInputError", "Matches", "Nearest", "NearestPointOnLine"]
MODULES = [
    "clustering", "construction", "convert", "errors", "indexing", "measurement", "raster",
    "routes",
]  # fmt: skip


def test_exports_are_pinned() -> None:
    assert sorted(geo.__all__) == sorted(FUNCTIONS + TYPES + MODULES)


def test_submodules_are_imported_eagerly() -> None:
    for name in MODULES:
        assert isinstance(getattr(geo, name), types.ModuleType)


@pytest.mark.parametrize("name", FUNCTIONS)
def test_every_function_documents_args_returns_raises(name: str) -> None:
    doc = inspect.getdoc(getattr(geo, name)) or ""
    for section in ("Returns:", "Raises:", "Examples:"):
        assert section in doc, f"{name} lacks {section}"
    if inspect.signature(getattr(geo, name)).parameters:
        assert "Args:" in doc
