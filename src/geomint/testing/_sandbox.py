"""A sandbox for tests: the in-process mode, which starts at once and runs anywhere."""

from __future__ import annotations

from geomint.sandbox import Sandbox

__all__ = ["in_process_sandbox"]


def in_process_sandbox() -> Sandbox:
    """Return a sandbox that runs code in this process, for tests and trusted code only.

    Gate 1 still reads every body before it runs (an import it refuses is refused here
    as in production), and results, figures and layers come back as from the other
    modes. There is no process boundary, no memory limit and no timeout, and no worker to
    start: a test's agent answers at once on any machine. Never give it a model's code
    in production; see ``docs/sandbox.md``.

    Example:
        >>> with in_process_sandbox() as sandbox:
        ...     result = sandbox.run("return sum(values)", inputs={"values": [1, 2, 3]})
        ...     refused = sandbox.run("import os")
        ...     result.value, sandbox.mode, refused.error.type
        (6, 'in-process', 'GateRefused')
    """
    return Sandbox(mode="in-process")
