"""What a sandbox child says: the reply schema, checked strictly on the host.

The frames it travels in are :mod:`geomint.confine._wire`.

Nothing here unpickles. The reply schema is checked on the host with pydantic, in strict
mode, with caps on every string and list: a child may have been taken over by the code
it ran, so everything it says is untrusted data to validate, never an instruction.
"""

from __future__ import annotations

import math
from typing import Annotated, Any, Final, Literal

from pydantic import BaseModel, ConfigDict, Field, JsonValue, model_validator

__all__ = [
    "MAX_RASTER_CELLS",
    "MAX_VALUES",
    "ChildError",
    "MapOp",
    "MintedFigure",
    "MintedLayer",
    "MintedRaster",
    "Reply",
    "ReplyTooComplexError",
    "count_values",
]

Text = Annotated[str, Field(max_length=4_000)]


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, strict=True)


class ChildError(_Strict):
    """An exception raised by the model's code, as the child described it."""

    type: Annotated[str, Field(max_length=100)]
    message: Text
    line: Annotated[int, Field(ge=0, le=1_000_000)]
    code_line: Annotated[str, Field(max_length=500)] | None
    phase: Literal["run", "result"]


class MintedFigure(_Strict):
    """A ``mint.value`` registration: the number, its label and unit, the period it refers
    to when the code read one off its rows, the entry ids it was computed from when narrower
    than the call's inputs, and its line in the model's code."""

    label: Annotated[str, Field(min_length=1, max_length=200)]
    value: bool | int | float
    unit: Annotated[str, Field(max_length=40)] | None
    sources: Annotated[list[Annotated[str, Field(max_length=200)]], Field(max_length=50)] | None
    line: Annotated[int, Field(ge=0)]
    period: Annotated[str, Field(min_length=1, max_length=100)] | None = Field(
        default=None, exclude_if=lambda v: v is None
    )


class MapOp(_Strict):
    """One call the body made on ``mapview``: replayed and checked again on the host."""

    op: Annotated[str, Field(max_length=40)]
    args: dict[str, JsonValue]
    line: Annotated[int, Field(ge=0)]


_RASTER_DTYPES: Final = ("uint8", "int8", "uint16", "int16", "uint32", "int32", "int64",
                         "uint64", "float32", "float64")  # fmt: skip
#: The most cells a minted raster may declare (the sandbox's own cap is the same).
MAX_RASTER_CELLS: Final = 16_000_000
# zlib at its worst adds a few bytes per 16 KB; base64 is 4 characters per 3 bytes.
_MAX_RASTER_TEXT: Final = (MAX_RASTER_CELLS * 8 * 1001 // 1000 + 1024) * 4 // 3


class MintedRaster(_Strict):
    """A raster ``mint.layer`` registered: its grid and its cells (zlib, then base64).

    The declared shape and dtype bound what :meth:`to_raster` decompresses: cells that
    inflate past them, or fall short, are refused rather than trusted.
    """

    shape: Annotated[
        list[Annotated[int, Field(ge=1, le=1_000_000)]], Field(min_length=2, max_length=3)
    ]
    dtype: Literal[_RASTER_DTYPES]  # type: ignore[valid-type]
    transform: Annotated[list[float], Field(min_length=6, max_length=6)]
    crs: Annotated[str, Field(min_length=1, max_length=20_000)]
    nodata: float | int | Literal["nan"] | None
    cells: Annotated[str, Field(max_length=_MAX_RASTER_TEXT)]

    def to_raster(self) -> Any:
        """The :class:`~geomint.geo.raster.Raster`, checked against what it declared.

        Raises:
            ValueError: The cells are not what the shape and dtype declare, or the grid
                is not a valid raster.
        """
        import base64  # noqa: PLC0415
        import binascii  # noqa: PLC0415
        import math  # noqa: PLC0415
        import zlib  # noqa: PLC0415

        import numpy as np  # noqa: PLC0415

        from geomint.geo.errors import GeoInputError  # noqa: PLC0415
        from geomint.geo.raster import Raster  # noqa: PLC0415

        count = math.prod(self.shape)
        if count > MAX_RASTER_CELLS:
            raise ValueError(f"the raster declares {count:,} cells, over {MAX_RASTER_CELLS:,}")
        expected = count * np.dtype(self.dtype).itemsize
        try:
            packed = base64.b64decode(self.cells, validate=True)
            inflater = zlib.decompressobj()
            raw = inflater.decompress(packed, expected + 1)
        except (binascii.Error, zlib.error) as exc:
            raise ValueError(f"the raster's cells are not readable: {exc}") from None
        if len(raw) != expected or not inflater.eof or inflater.unconsumed_tail:
            raise ValueError("the raster's cells do not match its declared shape and dtype")
        array = np.frombuffer(raw, dtype=self.dtype).reshape(self.shape)
        nodata = math.nan if self.nodata == "nan" else self.nodata
        try:
            return Raster(array, tuple(self.transform), self.crs, nodata)  # type: ignore[arg-type]
        except GeoInputError as exc:
            raise ValueError(str(exc)) from None


class MintedLayer(_Strict):
    """A ``mint.layer`` registration: its label, the GeoJSON FeatureCollection or the
    raster, and its line in the model's code."""

    label: Annotated[str, Field(min_length=1, max_length=200)]
    data: dict[str, JsonValue] | None = Field(default=None, exclude_if=lambda v: v is None)
    raster: MintedRaster | None = Field(default=None, exclude_if=lambda v: v is None)
    line: Annotated[int, Field(ge=0)]

    @model_validator(mode="after")
    def _one_kind(self) -> MintedLayer:
        if (self.data is None) == (self.raster is None):
            raise ValueError("a minted layer holds GeoJSON data or a raster, one of them")
        return self


#: Most JSON values a reply may hold, counted from its bytes before anything is decoded
#: (:func:`count_values`): every number, string, ``true``/``false``/``null``, list and
#: object counts, and so does every object key. A 500,000-point layer as GeoJSON with one
#: property is 8.5 million. The reply byte cap alone does not bound what decoding costs:
#: 60 MB of ``0.5,`` is 15 million floats, over a gigabyte in the host. At this budget
#: the host's decode peaks near 1.1 GB and takes up to about 8 s for the costliest shapes
#: measured (one-key objects, one-item lists, GeoJSON); docs/sandbox.md has the figures.
MAX_VALUES: Final = 10_000_000


class ReplyTooComplexError(ValueError):
    """A reply holding more JSON values than the host decodes (:data:`MAX_VALUES`)."""


def count_values(data: bytes) -> int:
    """Bound the number of JSON values and object keys in ``data`` from above, cheaply.

    A list or object of ``n`` items has ``n - 1`` commas, so the values in a document are
    at most its commas plus its opening brackets plus one (the document itself), and its
    keys are at most its colons. The same bytes inside strings are counted too, which can
    only over-estimate. Four byte scans: about 0.25 s for 60 MB.
    """
    return data.count(b",") + data.count(b":") + data.count(b"[") + data.count(b"{") + 1


class Reply(_Strict):
    """What a child sends back after running one body."""

    ok: bool
    value: JsonValue
    error: ChildError | None
    figures: Annotated[list[MintedFigure], Field(max_length=200)]
    layers: Annotated[list[MintedLayer], Field(max_length=20)]
    stdout: Annotated[str, Field(max_length=1_000_000)]
    stdout_truncated: bool
    returned_none: bool
    warnings: Annotated[list[Annotated[str, Field(max_length=700)]], Field(max_length=10)] = []
    used_features: Annotated[list[Annotated[int, Field(ge=0)]], Field(max_length=64)] = []
    used_frames: Annotated[list[Annotated[int, Field(ge=0)]], Field(max_length=64)] = []
    map_ops: Annotated[list[MapOp], Field(max_length=200)] = []

    @model_validator(mode="after")
    def _raster_cells(self) -> Reply:
        # Each raster is decoded on the host (CPU and memory the sandbox's limits do not
        # count): twenty of the most cells one may hold would be 2.5 GB of float64.
        declared = sum(math.prod(x.raster.shape) for x in self.layers if x.raster is not None)
        if declared > MAX_RASTER_CELLS:
            raise ValueError(
                f"the rasters of one reply declare {declared:,} cells, over "
                f"{MAX_RASTER_CELLS:,} in all"
            )
        return self

    @classmethod
    def parse(cls, data: bytes | dict[str, Any]) -> Reply:
        """Validate a reply from JSON bytes (a child) or a dict (the in-process mode).

        Raises:
            ReplyTooComplexError: The bytes may hold more than :data:`MAX_VALUES` values
                (:func:`count_values`): each costs the host up to about 100 bytes while
                decoding, so 60 MB of small numbers would otherwise take over a gigabyte
                before any schema check.
            pydantic.ValidationError: The reply does not match the protocol.
        """
        if isinstance(data, bytes):
            counted = count_values(data)
            if counted > MAX_VALUES:
                raise ReplyTooComplexError(
                    f"the result holds about {counted:,} JSON values (numbers, strings, "
                    f"keys, lists and objects), over the limit of {MAX_VALUES:,}"
                )
            return cls.model_validate_json(data)
        return cls.model_validate(data)
