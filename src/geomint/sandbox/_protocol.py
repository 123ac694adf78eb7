"""The wire between the host and a sandbox child: length-prefixed strict JSON frames.

Nothing here unpickles. The reply schema is checked on the host with pydantic, in strict
mode, with caps on every string and list: a child may have been taken over by the code
it ran, so everything it says is untrusted data to validate, never an instruction.
"""

from __future__ import annotations

import os
import socket
import struct
from typing import Annotated, Any, Final, Literal

from pydantic import BaseModel, ConfigDict, Field, JsonValue

__all__ = [
    "READY",
    "REFUSED",
    "ChildError",
    "Reply",
    "read_exact",
    "read_frame",
    "receive_descriptors",
    "send_descriptors",
    "write_frame",
]

READY: Final = b"R"
REFUSED: Final = b"F"
_HEADER = struct.Struct(">I")

Text = Annotated[str, Field(max_length=4_000)]


def send_descriptors(sock: socket.socket, fds: list[int]) -> None:
    """Send the entry files a call may read: a 4-byte count carrying the descriptors."""
    header = _HEADER.pack(len(fds))
    if fds:
        socket.send_fds(sock, [header], fds)
    else:
        sock.sendall(header)


def receive_descriptors(sock: socket.socket, *, limit: int = 64) -> list[int]:
    """Receive what :func:`send_descriptors` sent (the child side)."""
    data, fds, _, _ = socket.recv_fds(sock, _HEADER.size, limit)
    while len(data) < _HEADER.size:  # a stream may split even four bytes
        data += read_exact(sock, _HEADER.size - len(data))
    (count,) = _HEADER.unpack(data)
    if count != len(fds):
        for fd in fds:
            os.close(fd)
        raise EOFError(f"expected {count} descriptors, got {len(fds)}")
    return list(fds)


def write_frame(sock: socket.socket, payload: bytes) -> None:
    """Send one frame: a 4-byte big-endian length, then the payload."""
    sock.sendall(_HEADER.pack(len(payload)) + payload)


def read_exact(sock: socket.socket, size: int) -> bytes:
    """Read exactly ``size`` bytes, or raise :class:`EOFError` if the peer closed first."""
    buffer = bytearray(size)
    view = memoryview(buffer)
    got = 0
    while got < size:
        n = sock.recv_into(view[got:], size - got)
        if n == 0:
            raise EOFError(f"peer closed after {got} of {size} bytes")
        got += n
    return bytes(buffer)


def read_frame(sock: socket.socket, *, limit: int) -> bytes:
    """Read one frame, refusing (with :class:`OverflowError`) one longer than ``limit``."""
    (size,) = _HEADER.unpack(read_exact(sock, _HEADER.size))
    if size > limit:
        raise OverflowError(f"frame of {size:,} bytes is over the limit of {limit:,}")
    return read_exact(sock, size)


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
