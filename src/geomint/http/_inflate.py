"""Content encodings undone under a cap, so a small body cannot expand without end.

A gzip or deflate body of 200 KB can expand to 200 MB of zeros (a decompression bomb).
:class:`Inflater` undoes gzip (every member) or deflate (zlib-wrapped or raw, told apart
by the first two bytes) in steps of at most a megabyte, counting what it produces, and
stops at the limit: the bomb never exists in memory beyond one step.
"""

from __future__ import annotations

import zlib
from typing import Final, Literal

__all__ = ["CorruptError", "ExpandedError", "Inflater"]

_CHUNK: Final = 1 << 20


class ExpandedError(Exception):
    """The decompressed body grew past the limit."""


class CorruptError(Exception):
    """The compressed body is not a valid gzip or deflate stream."""


class Inflater:
    """Undo gzip or deflate while never producing more than ``limit`` bytes in total."""

    def __init__(self, encoding: Literal["gzip", "deflate"], limit: int) -> None:
        self._encoding = encoding
        self._limit = limit
        self._produced = 0
        self._head = b""  # deflate: the first bytes, until they tell zlib from raw
        self._inflate = zlib.decompressobj(16 + zlib.MAX_WBITS) if encoding == "gzip" else None

    def feed(self, data: bytes) -> bytes:
        """Return what the next compressed bytes expand to; raise past the limit."""
        if self._inflate is None:
            self._head += data
            if len(self._head) < 2:
                return b""
            zlib_header = (self._head[0] & 0x0F) == 8 and int.from_bytes(self._head[:2]) % 31 == 0
            self._inflate = zlib.decompressobj(zlib.MAX_WBITS if zlib_header else -zlib.MAX_WBITS)
            data, self._head = self._head, b""
        try:
            return self._inflate_all(data)
        except zlib.error as exc:
            raise CorruptError(str(exc)) from None

    def _inflate_all(self, data: bytes) -> bytes:
        inflate = self._inflate
        assert inflate is not None
        out = bytearray()
        while True:
            if inflate.eof:
                if not data:
                    return bytes(out)
                if self._encoding != "gzip":
                    raise CorruptError("data follows the end of the deflate stream")
                inflate = self._inflate = zlib.decompressobj(16 + zlib.MAX_WBITS)  # next member
            # max_length keeps each step small, so a bomb never exists in memory beyond it
            asked = min(self._limit - self._produced + 1, _CHUNK)
            piece = inflate.decompress(data, asked)
            self._produced += len(piece)
            if self._produced > self._limit:
                raise ExpandedError
            out += piece
            data = inflate.unused_data if inflate.eof else inflate.unconsumed_tail
            if not data and len(piece) < asked:
                return bytes(out)

    def finish(self) -> None:
        """Refuse a stream that stopped before its end, once every byte has been fed."""
        started = self._inflate is not None or self._head
        if started and (self._inflate is None or not self._inflate.eof):
            raise CorruptError("the compressed stream ends early")
