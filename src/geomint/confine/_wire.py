"""The wire between a host and a confined child: length-prefixed frames and descriptors.

Nothing here decodes what a frame holds: the host and each handler parse their own
payloads, strictly, because a child may have been taken over by what it read or ran.
"""

from __future__ import annotations

import os
import socket
import struct
from typing import Final

__all__ = [
    "ANSWER",
    "QUESTION",
    "READY",
    "REFUSED",
    "ask",
    "read_exact",
    "read_frame",
    "receive_descriptors",
    "send_descriptors",
    "write_answer",
    "write_frame",
]

#: The child confined itself and waits for its request.
READY: Final = b"R"
#: The child could not confine itself; a frame with the reason follows.
REFUSED: Final = b"F"
#: In a conversation (:meth:`geomint.confine.Child.converse`), the first byte of a
#: frame the child sends: a question the host answers, then more frames may follow...
QUESTION: Final = b"?"
#: ...or the child's final answer, after which it sends nothing more.
ANSWER: Final = b"="
_HEADER = struct.Struct(">I")


def send_descriptors(sock: socket.socket, fds: list[int]) -> None:
    """Send descriptors for the child to read: a 4-byte count carrying them."""
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


def ask(sock: socket.socket, question: bytes, *, limit: int) -> bytes:
    """Ask the host a question in a conversation and return its reply (the child side).

    Raises:
        OverflowError: The reply is longer than ``limit``.
        EOFError: The host closed the socket (it refused the question, or gave up).
    """
    write_frame(sock, QUESTION + question)
    return read_frame(sock, limit=limit)


def write_answer(sock: socket.socket, payload: bytes) -> None:
    """End a conversation with the child's final answer (the child side)."""
    write_frame(sock, ANSWER + payload)
