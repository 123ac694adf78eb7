"""What a sandbox child says: the reply schema, checked strictly on the host.

The frames it travels in are :mod:`geomint.confine._wire`.

Nothing here unpickles. The reply schema is checked on the host with pydantic, in strict
mode, with caps on every string and list: a child may have been taken over by the code
it ran, so everything it says is untrusted data to validate, never an instruction.
"""

from __future__ import annotations

from typing import Annotated, Any, Final, Literal

from pydantic import BaseModel, ConfigDict, Field, JsonValue

__all__ = [
    "MAX_VALUES",
    "ChildError",
    "MapOp",
    "MintedFigure",
    "MintedLayer",
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


class MintedLayer(_Strict):
    """A ``mint.layer`` registration: its label, the GeoJSON FeatureCollection, and its line
    in the model's code."""

    label: Annotated[str, Field(min_length=1, max_length=200)]
    data: dict[str, JsonValue]
    line: Annotated[int, Field(ge=0)]


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
