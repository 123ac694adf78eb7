"""One confinement for everything that runs hostile code or reads hostile bytes.

The sandbox runs model-written code here and intake parses users' files here: a template
process imports what its handler needs once and forks a child per call, and each child
confines itself with every layer the machine offers before it reads a byte of its
request (a minimal root of read-only libraries, network, mount, IPC and UTS namespaces,
a private scratch tmpfs, resource limits, Landlock, an unprivileged uid, a seccomp
filter). The host owns the wall clock and ends a child with SIGKILL through its pidfd.
What each child reached is reported, never assumed. A :class:`Pool` keeps one
handler's template and the turns its callers wait for; :meth:`Child.converse` lets a
child ask the host for what only the host may do (a byte range of a remote file) while
it works.

This layer imports nothing else of geomint's: ``sandbox`` and ``intake`` sit above it.
"""

from geomint.confine._host import (
    CallTimeoutError,
    Child,
    ChildDiedError,
    ChildLostError,
    ConfinementRefusedError,
    WorkerProcess,
    WorkerStartError,
    worker_environment,
)
from geomint.confine._layers import ConfineConfig, ConfinementError, confine, default_read_paths
from geomint.confine._pool import Pool

__all__ = [
    "CallTimeoutError",
    "Child",
    "ChildDiedError",
    "ChildLostError",
    "ConfineConfig",
    "ConfinementError",
    "ConfinementRefusedError",
    "Pool",
    "WorkerProcess",
    "WorkerStartError",
    "confine",
    "default_read_paths",
    "worker_environment",
]
