"""Running model-written Python isolated, fast, with errors a model can correct.

Gate 1 (:mod:`geomint.sandbox.prepare`) reads the code before it runs; Gate 2 runs it in
a child process confined by the kernel (namespaces, Landlock, seccomp, resource limits,
an unprivileged uid). See ``docs/sandbox.md`` for the threat model.
"""

from __future__ import annotations

from geomint.sandbox._entries import RASTER_MEDIA_TYPE, Entry, bytes_raster, raster_bytes
from geomint.sandbox._mapview import MapCodeError, MapView, png_size, replay
from geomint.sandbox._protocol import MapOp, MintedFigure, MintedLayer, MintedRaster
from geomint.sandbox._sandbox import CodeError, Mode, Sandbox, SandboxResult
from geomint.sandbox.prepare import PreparedCode, Violation, prepare
from geomint.sandbox.results import CHART_TYPES, ChartError, digest, to_json_safe, validate_chart

__all__ = [
    "CHART_TYPES",
    "RASTER_MEDIA_TYPE",
    "ChartError",
    "CodeError",
    "Entry",
    "MapCodeError",
    "MapOp",
    "MapView",
    "MintedFigure",
    "MintedLayer",
    "MintedRaster",
    "Mode",
    "PreparedCode",
    "Sandbox",
    "SandboxResult",
    "Violation",
    "bytes_raster",
    "digest",
    "png_size",
    "prepare",
    "raster_bytes",
    "replay",
    "to_json_safe",
    "validate_chart",
]
