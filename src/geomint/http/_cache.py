"""Where successful answers are kept: in this process's memory, or in files on disk.

A cache is keyed by a string that names the request without its secrets (the client
builds it); what it stores is a :class:`~geomint.http.Fetched`. Both caches are bounded
in entries and bytes, and evict the least recently used answer first.
"""

from __future__ import annotations

import contextlib
import hashlib
import json as jsonlib
import logging
import os
import tempfile
import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from pathlib import Path
from typing import Protocol

from geomint.http._records import Fetched

__all__ = ["DiskCache", "MemoryCache", "ResponseCache", "default_cache_dir"]

_log = logging.getLogger("geomint.http")


class ResponseCache(Protocol):
    """Where successful answers are kept, by a key that holds no secret."""

    def get(self, key: str) -> Fetched | None:
        """Return the answer stored under ``key``, or None if there is none or it expired."""
        ...

    def put(self, key: str, response: Fetched, ttl_s: float) -> None:
        """Store an answer for ``ttl_s`` seconds, evicting others to stay in bounds."""
        ...


class MemoryCache:
    """Keep answers in this process, least recently used evicted first.

    Args:
        max_entries: Most answers kept.
        max_bytes: Most body bytes kept in all; a larger answer is not kept.
        clock: Monotonic seconds, for expiry; a test passes a fake one.
    """

    def __init__(
        self,
        *,
        max_entries: int = 256,
        max_bytes: int = 64_000_000,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.max_entries = max_entries
        self.max_bytes = max_bytes
        self._clock = clock
        self._lock = threading.Lock()
        self._entries: OrderedDict[str, tuple[float, Fetched]] = OrderedDict()
        self._bytes = 0

    def __len__(self) -> int:
        return len(self._entries)

    def keys(self) -> list[str]:
        """Return the keys held, least recently used first."""
        with self._lock:
            return list(self._entries)

    def get(self, key: str) -> Fetched | None:
        """Return the answer stored under ``key``, or None if there is none or it expired."""
        with self._lock:
            entry = self._entries.get(key)
            if entry is None:
                return None
            if self._clock() >= entry[0]:
                self._drop(key)
                return None
            self._entries.move_to_end(key)
            return entry[1]

    def put(self, key: str, response: Fetched, ttl_s: float) -> None:
        """Store an answer for ``ttl_s`` seconds, evicting others to stay in bounds."""
        if len(response.body) > self.max_bytes:
            return
        with self._lock:
            if key in self._entries:
                self._drop(key)
            self._entries[key] = (self._clock() + ttl_s, response)
            self._bytes += len(response.body)
            while len(self._entries) > self.max_entries or self._bytes > self.max_bytes:
                self._drop(next(iter(self._entries)))

    def _drop(self, key: str) -> None:
        self._bytes -= len(self._entries.pop(key)[1].body)


def default_cache_dir() -> Path:
    """Return where :class:`DiskCache` keeps answers: ``$GEOMINT_HOME/cache/http``."""
    home = os.environ.get("GEOMINT_HOME")
    root = Path(home) if home else Path("~/.local/share/geomint").expanduser()
    return root / "cache" / "http"


class DiskCache:
    """Keep answers on disk, one file per key, so they outlive the process.

    A file is named by the SHA-256 of its key and holds one line of JSON (the key, the
    expiry, the status, the headers) and then the body. It is written to a temporary
    file in the same folder and renamed into place, so a reader (in this process or
    another) sees a whole answer or none. Reading an answer touches its file, and the
    least recently used files go first when the folder is over its bounds. A failure to
    write is logged and otherwise ignored: a cache is not worth failing a request for.

    Args:
        directory: The folder; by default :func:`default_cache_dir`.
        max_entries: Most files kept.
        max_bytes: Most body bytes kept in all; a larger answer is not kept.
        clock: Wall-clock seconds, for expiry (it must mean the same across processes).
    """

    def __init__(
        self,
        directory: str | Path | None = None,
        *,
        max_entries: int = 4096,
        max_bytes: int = 256_000_000,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.directory = Path(directory) if directory is not None else default_cache_dir()
        self.max_entries = max_entries
        self.max_bytes = max_bytes
        self._clock = clock

    def path(self, key: str) -> Path:
        """Return the file that holds (or would hold) the answer for ``key``."""
        return self.directory / (hashlib.sha256(key.encode()).hexdigest() + ".response")

    def get(self, key: str) -> Fetched | None:
        """Return the answer stored under ``key``, or None if there is none or it expired."""
        path = self.path(key)
        try:
            raw = path.read_bytes()
        except OSError:
            return None
        head, _, body = raw.partition(b"\n")
        try:
            meta = jsonlib.loads(head)
            if meta["key"] != key:
                return None
            if self._clock() >= meta["expires"]:
                path.unlink(missing_ok=True)
                return None
            response = Fetched(
                url=meta["url"],
                final_url=meta["final_url"],
                status=meta["status"],
                content_type=meta["content_type"],
                headers=meta["headers"],
                body=body,
                elapsed_s=meta["elapsed_s"],
            )
        except (ValueError, KeyError, TypeError):
            with contextlib.suppress(OSError):
                path.unlink(missing_ok=True)
            return None
        with contextlib.suppress(OSError):
            os.utime(path)
        return response

    def put(self, key: str, response: Fetched, ttl_s: float) -> None:
        """Store an answer for ``ttl_s`` seconds, evicting others to stay in bounds."""
        if len(response.body) > self.max_bytes:
            return
        meta = {
            "key": key,
            "expires": self._clock() + ttl_s,
            "url": response.url,
            "final_url": response.final_url,
            "status": response.status,
            "content_type": response.content_type,
            "headers": response.headers,
            "elapsed_s": response.elapsed_s,
        }
        try:
            self.directory.mkdir(parents=True, exist_ok=True, mode=0o700)
            handle, temporary = tempfile.mkstemp(dir=self.directory, prefix=".partial-")
            try:
                with os.fdopen(handle, "wb") as out:
                    out.write(jsonlib.dumps(meta).encode() + b"\n")
                    out.write(response.body)
                os.replace(temporary, self.path(key))
            except BaseException:
                with contextlib.suppress(OSError):
                    os.unlink(temporary)
                raise
            self._trim()
        except OSError as exc:
            _log.warning("could not write to the HTTP cache in %s: %s", self.directory, exc)

    def _trim(self) -> None:
        files = []
        now = time.time()
        for entry in os.scandir(self.directory):
            with contextlib.suppress(OSError):
                stat = entry.stat()
                if entry.name.endswith(".response"):
                    files.append((stat.st_mtime, stat.st_size, entry.path))
                elif entry.name.startswith(".partial-") and now - stat.st_mtime > 3600:
                    os.unlink(entry.path)  # left by a writer that died mid-write
        files.sort()
        total = sum(size for _, size, _ in files)
        for count, (_, size, path) in enumerate(files):
            if len(files) - count <= self.max_entries and total <= self.max_bytes:
                break
            with contextlib.suppress(OSError):
                os.unlink(path)
            total -= size
