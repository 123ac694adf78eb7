"""On the host: start a template, take confined children from it, call them, kill them.

The host owns the wall clock. A call that overruns is ended with SIGKILL through a pidfd
(no pid reuse race, no signal handler in the child to defeat); the worker lives on and
the next spare child is already confining itself. The host reads at most a capped reply
and hands it to the caller's schema check; nothing the child says is trusted.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any, Final

from geomint.confine import _wire as _protocol

__all__ = [
    "CallTimeoutError",
    "Child",
    "ChildDiedError",
    "ChildLostError",
    "ConfinementRefusedError",
    "WorkerProcess",
    "WorkerStartError",
    "worker_environment",
]

#: Variables the worker may inherit; everything else (API keys above all) stays behind.
_PASSED_THROUGH: Final = ("OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE", "TZ")
_START_TIMEOUT_S: Final = 60.0


class WorkerStartError(RuntimeError):
    """The template process could not start or confine a child on this machine."""


class CallTimeoutError(TimeoutError):
    """The child overran its wall clock and was killed."""


class ChildDiedError(RuntimeError):
    """The child exited before sending a complete reply."""


class ChildLostError(RuntimeError):
    """The child was gone before it said it was ready: no code of the call ran."""


class ConfinementRefusedError(RuntimeError):
    """The child could not apply its confinement and refused to run code."""


def worker_environment() -> dict[str, str]:
    """The allow-listed environment the worker is exec'd with."""
    env = {
        "PATH": "/usr/bin:/bin",
        "LANG": "C.UTF-8",
        "HOME": "/nonexistent",
        "OPENBLAS_NUM_THREADS": "1",
        "OMP_NUM_THREADS": "1",
        "MKL_NUM_THREADS": "1",
        "NUMEXPR_NUM_THREADS": "1",
        "PROJ_NETWORK": "OFF",
        "PYTHONHASHSEED": "0",
    }
    env.update({k: os.environ[k] for k in _PASSED_THROUGH if k in os.environ})
    return env


@dataclass(slots=True)
class Child:
    """One confined child, ready for exactly one call (and, before it, build-ahead work)."""

    pid: int
    sock: socket.socket
    pidfd: int

    def call(
        self, payload: bytes, *, timeout_s: float, max_reply: int, fds: list[int] | None = None
    ) -> bytes:
        """Send one request and return the raw reply, enforcing the wall clock.

        Raises:
            CallTimeoutError: The wall clock ran out; the child has been killed.
            ChildDiedError: The child closed its socket without a complete reply.
            ConfinementRefusedError: The child could not confine itself.
            OverflowError: The reply was over ``max_reply`` bytes; the child was killed.
        """
        deadline = time.monotonic() + timeout_s
        with self._guarded(timeout_s):
            self._start(payload, fds, deadline)
            return self._read_reply(deadline, max_reply)
        raise AssertionError("unreachable")  # pragma: no cover - _guarded re-raises

    def converse(
        self,
        payload: bytes,
        *,
        timeout_s: float,
        max_reply: int,
        answer: Callable[[bytes], bytes],
        max_question: int = 1 << 16,
        max_questions: int = 256,
        fds: list[int] | None = None,
    ) -> bytes:
        """Send one request, answer the child's questions, and return its final answer.

        For a child that needs something only the host may do while it works (a byte
        range of a remote file, which it cannot fetch: it has no network). The child
        asks with :func:`geomint.confine._wire.ask` and ends with
        :func:`~geomint.confine._wire.write_answer`; each question is handed to
        ``answer`` on this thread, and what it returns is sent back. The wall clock
        covers the answering too. A question is hostile input like any reply: it is
        read up to ``max_question`` bytes, and at most ``max_questions`` are answered.

        Raises:
            CallTimeoutError: The wall clock ran out; the child has been killed.
            ChildDiedError: The child closed its socket without a final answer, or
                broke the protocol.
            ConfinementRefusedError: The child could not confine itself.
            OverflowError: A question or the answer was over its limit, or the child
                asked more than ``max_questions``; the child was killed.
            Exception: Whatever ``answer`` raised (the child was killed first).
        """
        deadline = time.monotonic() + timeout_s
        asked = 0
        with self._guarded(timeout_s):
            self._start(payload, fds, deadline)
            while True:
                kind, body = self._read_tagged(deadline, max_reply, max_question)
                if kind == _protocol.ANSWER:
                    return body
                asked += 1
                if asked > max_questions:
                    raise OverflowError(f"the child asked more than {max_questions} questions")
                reply = answer(body)
                self._timed(deadline)
                _protocol.write_frame(self.sock, reply)
        raise AssertionError("unreachable")  # pragma: no cover - _guarded re-raises

    @contextlib.contextmanager
    def _guarded(self, timeout_s: float) -> Iterator[None]:
        """Tell the call's failures as this module's errors; kill the child in any case."""
        try:
            yield
        except TimeoutError as exc:
            self.kill()
            raise CallTimeoutError(f"killed after {timeout_s:g} s") from exc
        except (EOFError, BrokenPipeError, ConnectionResetError) as exc:
            self.kill()
            raise ChildDiedError(str(exc)) from exc
        finally:
            # Also after a complete reply: a child that sent one early (forged on its
            # socket, or with its exit patched away) must not outlive its call.
            self.kill()
            self.close()

    def _start(self, payload: bytes, fds: list[int] | None, deadline: float) -> None:
        """Send the request and wait until the child says it is confined and ready."""
        self._timed(deadline)
        _protocol.send_descriptors(self.sock, fds or [])
        _protocol.write_frame(self.sock, payload)
        self._timed(deadline)
        try:
            status = _protocol.read_exact(self.sock, 1)
        except (EOFError, ConnectionResetError) as exc:
            raise ChildLostError("the child was gone before it ran any code") from exc
        if status == _protocol.REFUSED:
            reason = _protocol.read_frame(self.sock, limit=1000).decode(errors="replace")
            raise ConfinementRefusedError(reason)
        if status != _protocol.READY:
            raise ChildDiedError("the child broke the protocol before running any code")

    def prefetch(self, payload: bytes, fds: list[int]) -> bool:
        """Send entries for the child to build ahead; False if it is already gone."""
        try:
            self.sock.settimeout(5.0)
            _protocol.send_descriptors(self.sock, fds)
            _protocol.write_frame(self.sock, payload)
        except OSError:
            return False
        return True

    def _timed(self, deadline: float) -> None:
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            raise TimeoutError
        self.sock.settimeout(remaining)

    def _read_reply(self, deadline: float, max_reply: int) -> bytes:
        size = int.from_bytes(self._read_exactly(4, deadline), "big")
        if size > max_reply:
            raise OverflowError(f"reply of {size:,} bytes is over the limit of {max_reply:,}")
        return self._read_exactly(size, deadline)

    def _read_tagged(
        self, deadline: float, max_reply: int, max_question: int
    ) -> tuple[bytes, bytes]:
        """One frame of a conversation: its kind (question or answer) and its body."""
        size = int.from_bytes(self._read_exactly(4, deadline), "big")
        if size == 0:
            raise ChildDiedError("the child sent an empty frame in a conversation")
        kind = self._read_exactly(1, deadline)
        if kind not in (_protocol.QUESTION, _protocol.ANSWER):
            raise ChildDiedError("the child broke the conversation's protocol")
        limit = max_reply if kind == _protocol.ANSWER else max_question
        if size - 1 > limit:
            what = "answer" if kind == _protocol.ANSWER else "question"
            raise OverflowError(f"{what} of {size - 1:,} bytes is over the limit of {limit:,}")
        return kind, self._read_exactly(size - 1, deadline)

    def _read_exactly(self, size: int, deadline: float) -> bytes:
        buffer = bytearray(size)
        view = memoryview(buffer)
        got = 0
        while got < size:
            self._timed(deadline)
            n = self.sock.recv_into(view[got:], size - got)
            if n == 0:
                raise EOFError("the child exited before its reply was complete")
            got += n
        return bytes(buffer)

    def kill(self) -> None:
        """SIGKILL the child through its pidfd (a no-op once it has exited)."""
        with contextlib.suppress(ProcessLookupError, OSError):
            signal.pidfd_send_signal(self.pidfd, signal.SIGKILL)

    def close(self) -> None:
        """Release the socket and the pidfd."""
        self.sock.close()
        if self.pidfd >= 0:
            with contextlib.suppress(OSError):
                os.close(self.pidfd)
            self.pidfd = -1


class WorkerProcess:
    """A template process: exec'd once, forks one confined child per call.

    Args:
        handler: The module the template imports; its ``prepare(settings)`` runs once
            and its ``serve(sock, state, report)`` in every confined child.
        memory_mb: Each child's address-space budget on top of its own size.
        cpu_s: Each child's CPU seconds (the host's wall clock normally acts first).
        scratch_mb: Each child's private scratch, and its largest file.
        settings: More for the handler's ``prepare``: JSON values only.
        environment: Variables the template needs beyond :func:`worker_environment`
            (never secrets: every child inherits them).
    """

    def __init__(
        self,
        *,
        handler: str,
        memory_mb: int,
        cpu_s: int,
        scratch_mb: int,
        settings: dict[str, Any] | None = None,
        environment: dict[str, str] | None = None,
    ) -> None:
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        config = {
            **(settings or {}),
            "memory_mb": memory_mb,
            "cpu_s": cpu_s,
            "scratch_mb": scratch_mb,
        }
        self._log = tempfile.TemporaryFile()  # noqa: SIM115 - kept for error reports
        try:
            self.process = subprocess.Popen(  # noqa: S603 - our own interpreter and module
                [sys.executable, "-I", "-m", "geomint.confine._template",
                 str(theirs.fileno()), handler, json.dumps(config)],
                pass_fds=[theirs.fileno()],
                env={**worker_environment(), **(environment or {})},
                stdin=subprocess.DEVNULL,
                stdout=self._log,
                stderr=self._log,
                start_new_session=True,
            )  # fmt: skip
        finally:
            theirs.close()
        self.ctrl = ours
        self.pending: int = 0
        self.hello = self._hello()

    def _hello(self) -> dict[str, Any]:
        self.ctrl.settimeout(_START_TIMEOUT_S)
        try:
            raw = self.ctrl.recv(65536)
        except (TimeoutError, OSError) as exc:
            self.close()
            raise WorkerStartError(f"the worker did not start in {_START_TIMEOUT_S:g} s") from exc
        finally:
            self.ctrl.settimeout(None)
        if not raw:
            tail = self.log_tail()  # before close() closes the log
            self.close()
            raise WorkerStartError(f"the worker exited at start: {tail}")
        hello: dict[str, Any] = json.loads(raw)
        if not hello.get("ok"):
            self.close()
            raise WorkerStartError(f"the worker failed at start: {hello.get('reason')}")
        return hello

    def probe(self, level: str) -> dict[str, Any]:
        """What confining a child at ``level`` gave when the worker tried it at start."""
        result: dict[str, Any] = self.hello["probes"][level]
        return result

    def alive(self) -> bool:
        """Whether the worker process is still running."""
        return self.process.poll() is None

    def request_spare(self, level: str, limits: dict[str, int] | None = None) -> None:
        """Ask for the next child now, so it confines itself while the host does other work.

        Args:
            level: ``"isolated"`` or ``"restricted"``.
            limits: This child's own ``memory_mb``, ``cpu_s`` or ``scratch_mb``, in place
                of the template's.
        """
        message = b"Si" if level == "isolated" else b"Sr"
        self.ctrl.send(message + (json.dumps(limits).encode() if limits else b""))
        self.pending += 1

    def take_spare(self, level: str, *, timeout_s: float = 10.0) -> Child:
        """Return a confined (or confining) child, asking for one if none is pending."""
        if self.pending == 0:
            self.request_spare(level)
        self.ctrl.settimeout(timeout_s)
        try:
            message, fds, _, _ = socket.recv_fds(self.ctrl, 1024, 2)
        except (TimeoutError, OSError) as exc:
            raise WorkerStartError(f"the worker did not hand over a child: {exc}") from exc
        finally:
            self.ctrl.settimeout(None)
        self.pending -= 1
        if not message or len(fds) != 2:
            for fd in fds:
                os.close(fd)
            raise WorkerStartError(f"the worker stopped: {self.log_tail()}")
        pid = int(json.loads(message)["pid"])
        return Child(pid=pid, sock=socket.socket(fileno=fds[0]), pidfd=fds[1])

    def log_tail(self) -> str:
        """The last lines the worker printed (for start-up failures)."""
        self._log.seek(0)
        return self._log.read()[-2000:].decode(errors="replace").strip() or "(no output)"

    def close(self) -> None:
        """Stop the worker; its children die with it (parent-death signal)."""
        with contextlib.suppress(OSError):
            self.ctrl.close()
        try:
            self.process.wait(timeout=2)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        self._log.close()
        self._remove_base()

    def _remove_base(self) -> None:
        """Delete the template's directory: it empties it itself, unless it was killed."""
        base = str(getattr(self, "hello", {}).get("base") or "")
        name = os.path.basename(os.path.normpath(base))
        if not (os.path.isabs(base) and name.startswith("geomint-confine-")):
            return  # not a directory the worker could have made: leave it alone
        if os.path.isdir(base):
            # ``rm`` walks a tree of any depth (the children's scratch) without recursion.
            with contextlib.suppress(OSError, subprocess.TimeoutExpired):
                subprocess.run(  # noqa: S603 - a fixed tool on our own directory
                    ["/bin/rm", "-rf", "--one-file-system", "--", base],
                    check=False, stdin=subprocess.DEVNULL, timeout=30,
                )  # fmt: skip
