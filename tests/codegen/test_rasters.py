"""Map code's images of raster entries as stored: checked again before they are drawn."""

from __future__ import annotations

from typing import Any

import pytest

from geomint.codegen.verify import describe, stored_diff_problem

CORNERS = [[24.9, 60.2], [25.0, 60.2], [25.0, 60.1], [24.9, 60.1]]
STYLE: dict[str, Any] = {
    "sources": {"rasters-1": {"type": "image", "geomint": True, "coordinates": CORNERS}},
    "layers": [{"id": "rasters-1-raster", "type": "raster", "source": "rasters-1",
                "geomint": True}],
    "entries": ["rasters-1", "places-1"],
    "rasters": {"rasters-1": {"coordinates": CORNERS, "version": 1}},
}  # fmt: skip


def _diff(source: dict[str, Any]) -> dict[str, Any]:
    return {
        "added": {
            "sources": {"grid": source},
            "layers": [{"id": "grid", "type": "raster", "source": "grid", "before": None}],
        },
        "removed": {"sources": [], "layers": []},
        "updated": {"layers": []},
        "camera": None,
        "animations": [],
        "order": ["rasters-1-raster", "grid"],
    }


def test_an_image_of_a_raster_entry_passes_and_reads_as_one() -> None:
    diff = _diff({"type": "image", "raster": {"entry": "rasters-1"}, "coordinates": CORNERS})
    assert stored_diff_problem(diff, STYLE) is None
    assert describe(diff) == "adds a raster layer grid of the raster rasters-1 (grid)"


@pytest.mark.parametrize(
    ("source", "problem"),
    [
        ({"type": "image", "raster": {"entry": "places-1"}, "coordinates": CORNERS},
         "names 'places-1', which is not a raster entry of this chat"),
        ({"type": "image", "raster": {"entry": "https://evil.example/x.png"},
          "coordinates": CORNERS}, "names no raster entry"),
        ({"type": "image", "raster": {"entry": "rasters-1"}, "coordinates": CORNERS,
          "url": "https://evil.example/x.png"}, "is not an image map code made"),
    ],
)  # fmt: skip
def test_a_stored_image_naming_anything_but_a_raster_entry_is_left_out(
    source: dict[str, Any], problem: str
) -> None:
    found = stored_diff_problem(_diff(source), STYLE)
    assert found is not None and problem in found
