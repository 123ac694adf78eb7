"""What a sandbox child says: the reply schema, checked strictly on the host.

The frames it travels in are :mod:`geomint.confine._wire`.

Nothing here unpickles. The reply schema is checked on the host with pydantic, in strict
mode, with caps on every string and list: a child may have been taken over by the code
it ran, so everything it says is untrusted data to validate, never an instruction.
"""

from __future__ import annotations

from typing import Annotated, Any, Final, Literal

from pydantic import BaseModel, ConfigDict, Field, JsonValue

__all__ = ["ChildError", "Reply", "ReplyTooComplexError"]

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


class Figure(_Strict):
    """A ``mint.value`` registration."""

    label: Annotated[str, Field(min_length=1, max_length=200)]
    value: bool | int | float
    unit: Annotated[str, Field(max_length=40)] | None
    sources: Annotated[list[Annotated[str, Field(max_length=200)]], Field(max_length=50)] | None
    line: Annotated[int, Field(ge=0)]


class LayerRecord(_Strict):
    """A ``mint.layer`` registration."""

    label: Annotated[str, Field(min_length=1, max_length=200)]
    data: dict[str, JsonValue]
    line: Annotated[int, Field(ge=0)]


#: Most lists and objects a reply may open: a 500,000-point layer as GeoJSON is about
#: 2.5 million; what this many cost to decode stays in the hundreds of megabytes.
MAX_CONTAINERS: Final = 4_000_000


class ReplyTooComplexError(ValueError):
    """A reply too deeply built of containers to decode safely."""


class Reply(_Strict):
    """What a child sends back after running one body."""

    ok: bool
    value: JsonValue
    error: ChildError | None
    figures: Annotated[list[Figure], Field(max_length=200)]
    layers: Annotated[list[LayerRecord], Field(max_length=20)]
    stdout: Annotated[str, Field(max_length=1_000_000)]
    stdout_truncated: bool
    returned_none: bool
    warnings: Annotated[list[Annotated[str, Field(max_length=700)]], Field(max_length=10)] = []
    used_features: Annotated[list[Annotated[int, Field(ge=0)]], Field(max_length=64)] = []
    used_frames: Annotated[list[Annotated[int, Field(ge=0)]], Field(max_length=64)] = []

    @classmethod
    def parse(cls, data: bytes | dict[str, Any]) -> Reply:
        """Validate a reply from JSON bytes (a child) or a dict (the in-process mode).

        Raises:
            ReplyTooComplexError: The bytes open more lists and objects than
                :data:`MAX_CONTAINERS`: 64 MB of ``[]`` would otherwise decode into two
                gigabytes of empty lists in the host before any schema check.
            pydantic.ValidationError: The reply does not match the protocol.
        """
        if isinstance(data, bytes):
            # Counts brackets inside strings too: an over-estimate, never an under-one.
            opened = data.count(b"[") + data.count(b"{")
            if opened > MAX_CONTAINERS:
                raise ReplyTooComplexError(
                    f"the result holds over {MAX_CONTAINERS:,} lists and objects"
                )
            return cls.model_validate_json(data)
        return cls.model_validate(data)
