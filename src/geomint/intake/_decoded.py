"""How large a layer may grow when decoded to GeoJSON, and how that is measured cheaply.

``max_bytes`` bounds what a user sends, after any zip or gzip is unpacked. Some formats
compress inside themselves: Parquet's dictionaries, run lengths and zstd pages, a CSV
that names every column once for all rows. Their GeoJSON, which is what is validated,
stored, streamed and read back, can be hundreds of times larger than the file. So the
decoded layer is capped too, at :data:`EXPANSION` times ``max_bytes``.

Why 20: GeoJSON is text and repeats every column name in every feature, so a compact
source is legitimately several times larger as GeoJSON (100,000 points with four
properties: 7.5x the GeoParquet file, 3.3x the CSV, 1.7x the GeoPackage). Twenty leaves
room for narrower and sparser tables than that while a source built to expand (a few
kilobytes of Parquet that decode to megabytes) is refused.

The measure is what the layer's own JSON texts weigh, plus what each feature repeats:
its ``{"type":"Feature",...}`` frame and one key per column. Where the texts do not
exist yet (a file's metadata, a frame before it is written out), the same measure taken
over rows and coordinates is a lower bound, so an early refusal is never a wrong one.
"""

from __future__ import annotations

import json
from collections.abc import Sequence

__all__ = [
    "EXPANSION",
    "FEATURE_BYTES",
    "POSITION_BYTES",
    "counted",
    "limit",
    "table_bytes",
    "too_large",
]

#: The decoded GeoJSON of a layer may be this many times ``max_bytes``.
EXPANSION = 20
#: What every feature costs before any property or coordinate (compact JSON).
FEATURE_BYTES = len('{"type":"Feature","properties":{},"geometry":null},')
#: What a position costs at the least.
POSITION_BYTES = len("[0.0,0.0],")


def limit(max_bytes: int) -> int:
    """Return how many bytes of GeoJSON a source of at most ``max_bytes`` may decode to."""
    return EXPANSION * max_bytes


def table_bytes(texts: int, rows: int, columns: Sequence[str]) -> int:
    """Return the GeoJSON size of ``rows`` features built from JSON texts.

    Args:
        texts: The length of the JSON texts the properties and geometries come from.
        rows: How many features they make.
        columns: The property names, each repeated as a key in every feature.
    """
    keys = sum(len(json.dumps(c)) + 2 for c in columns)  # "name": and a comma
    return texts + rows * (FEATURE_BYTES + keys)


def counted(count: int, noun: str) -> str:
    """Return ``"1 row"``, ``"2,000 rows"``."""
    return f"{count:,} {noun}{'' if count == 1 else 's'}"


def too_large(what: str, found: int, max_bytes: int, *, at_least: bool = False) -> str | None:
    """Say why ``what``, decoding to ``found`` bytes of GeoJSON, is refused; None if it fits.

    ``at_least`` marks ``found`` as a lower bound taken before the layer was decoded.
    """
    cap = limit(max_bytes)
    if found <= cap:
        return None
    return (
        f"{what} decodes to {'at least' if at_least else 'about'} {found:,} bytes of GeoJSON, "
        f"over the {cap:,}-byte limit for decoded data ({EXPANSION} x max_bytes); "
        "pass a larger max_bytes if that is expected, or send fewer rows or columns"
    )
