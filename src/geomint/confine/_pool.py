"""A pool of confined children for one handler: its template, and the turns callers wait for.

Each reader of hostile bytes (intake, SDMX answers, remote rasters) keeps one template
process per application, started on first use and replaced when it dies, and lets at
most a few callers hold a child at once. That bookkeeping is the same for all of them,
so it is here once.
"""

from __future__ import annotations

import atexit
import threading
from typing import Final

from geomint.confine._host import Child, WorkerProcess, WorkerStartError

__all__ = ["Pool"]

_LEVELS: Final = ("isolated", "restricted")


class Pool:
    """One handler's template, started on first use, and at most ``children`` turns.

    Args:
        handler: The module the template imports (see :class:`WorkerProcess`).
        children: How many callers may hold a child at once; more wait their turn.
        memory_mb: Each child's address-space budget (a call may ask for its own).
        cpu_s: Each child's CPU seconds (likewise).
        scratch_mb: Each child's private scratch (likewise).
        environment: Variables the template needs (never secrets).
        settings: More for the handler's ``prepare`` (JSON values only).
        name: What messages call the pool's template ("the raster reader").

    Example:
        >>> pool = Pool(handler="geomint.sources.connectors._cog_child", children=2,
        ...             memory_mb=1024, cpu_s=30, scratch_mb=8)
        >>> pool.close()  # nothing was started: the template starts on first use
    """

    def __init__(
        self,
        *,
        handler: str,
        children: int,
        memory_mb: int,
        cpu_s: int,
        scratch_mb: int,
        environment: dict[str, str] | None = None,
        settings: dict[str, object] | None = None,
        name: str = "the confined reader",
    ) -> None:
        self.handler = handler
        self.name = name
        self._limits = {"memory_mb": memory_mb, "cpu_s": cpu_s, "scratch_mb": scratch_mb}
        self._environment = dict(environment or {})
        self._settings = dict(settings or {})
        self._lock = threading.Lock()
        self._turns = threading.BoundedSemaphore(children)
        self._worker: WorkerProcess | None = None
        self._level = ""
        atexit.register(self.close)

    def level(self) -> str:
        """The confinement the children reach here, starting the template if needed.

        Raises:
            WorkerStartError: No confined child can start on this machine.
        """
        with self._lock:
            return self._started()[1]

    def turn(self, timeout_s: float) -> bool:
        """Wait for a free turn; False when none came within ``timeout_s``."""
        return self._turns.acquire(timeout=max(0.0, timeout_s))

    def done(self) -> None:
        """Give the turn back."""
        self._turns.release()

    def child(self, timeout_s: float, limits: dict[str, int] | None = None) -> Child:
        """Fork one confined child, with its own ``limits`` if given, within ``timeout_s``.

        Raises:
            WorkerStartError: The template is busy past ``timeout_s``, could not start,
                or no confinement level works here; the next call starts a new one.
            OSError: The template's socket failed (likewise).
        """
        if not self._lock.acquire(timeout=max(0.0, timeout_s)):
            raise WorkerStartError(f"{self.name}'s template is busy handing over a child")
        try:
            worker, level = self._started()
            try:
                worker.request_spare(level, limits)
                return worker.take_spare(level, timeout_s=max(0.05, timeout_s))
            except (WorkerStartError, OSError):
                self._close_worker()  # the next call starts a new template
                raise
        finally:
            self._lock.release()

    def close(self) -> None:
        """Stop the template (at exit, or in a test)."""
        with self._lock:
            self._close_worker()

    def _started(self) -> tuple[WorkerProcess, str]:
        if self._worker is not None and self._worker.alive():
            return self._worker, self._level
        self._close_worker()
        worker = WorkerProcess(
            handler=self.handler,
            environment=self._environment,
            settings=self._settings,
            **self._limits,
        )
        for level in _LEVELS:
            if worker.probe(level).get("ok"):
                self._worker, self._level = worker, level
                return worker, level
        reasons = "; ".join(f"{level}: {worker.probe(level).get('reason')}" for level in _LEVELS)
        worker.close()
        raise WorkerStartError(reasons)

    def _close_worker(self) -> None:
        if self._worker is not None:
            self._worker.close()
            self._worker = None
