"""The :class:`Sandbox`: modes, start-up, fallback, and turning replies into results."""

from __future__ import annotations

import asyncio
import contextlib
import functools
import json
import keyword
import logging
import math
import threading
import time
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field, replace
from typing import Any, Final, Literal, TypeVar, get_args

from pydantic import ValidationError

from geomint import audit, confine
from geomint.errors import SandboxUnavailableError, UsageError
from geomint.sandbox import _runtime, hints
from geomint.sandbox._entries import (
    ENTRY_MARKER,
    Entry,
    EntryFiles,
    replace_entries,
    resolve_entries,
    table_collection,
)
from geomint.sandbox._protocol import (
    MapOp,
    MintedFigure,
    MintedLayer,
    Reply,
    ReplyTooComplexError,
)
from geomint.sandbox.prepare import PreparedCode, Violation, prepare
from geomint.sandbox.results import JsonValue, digest, to_json_safe

__all__ = ["CodeError", "Mode", "Sandbox", "SandboxResult"]

logger = logging.getLogger("geomint.sandbox")

Mode = Literal["not-started", "isolated", "restricted", "in-process", "unavailable"]
RunMode = Literal["auto", "isolated", "restricted", "in-process"]
_RANK: Final = {"in-process": 0, "restricted": 1, "isolated": 2}
_RETRY_AFTER_S: Final = 30.0
_warned: set[str] = set()


def _warn_once(key: str, message: str) -> None:
    if key not in _warned:
        _warned.add(key)
        logger.warning(message)


@dataclass(frozen=True, kw_only=True, slots=True)
class CodeError:
    """Why a body failed, for the model to act on.

    Attributes:
        type: The exception type (``KeyError``, ``MemoryError``) or the sandbox's own
            (``Timeout``, ``WorkerDied``, ``NoResult``, ``GateRefused``,
            ``ResultTooLarge``, ``InvalidReply``).
        message: What happened.
        line: The line of the code as the model wrote it (0 when not in its code).
        code_line: The text of that line.
    """

    type: str
    message: str
    line: int = 0
    code_line: str | None = None

    def __str__(self) -> str:
        where = f" (line {self.line}: `{self.code_line}`)" if self.line and self.code_line else ""
        return f"{self.type}: {self.message}{where}"


@dataclass(frozen=True, kw_only=True, slots=True)
class SandboxResult:
    """What running one body produced.

    Attributes:
        ok: True when the body ran and returned a JSON-safe value.
        value: The returned value, normalised to JSON (None when not ok).
        error: Why it failed, or None.
        hint: A targeted suggestion for the model when the error (or, for a result that
            ran, a warning such as a buffer in degrees) matches a known pitfall.
        violations: Everything Gate 1 refused (the body did not run).
        figures: ``mint.value`` registrations, with their lines in the model's code.
        layers: ``mint.layer`` registrations (GeoJSON ``data``), with their lines.
        map_ops: The body's ``mapview`` calls in order, with their lines (map code only).
        stdout: What the body printed (capped).
        stdout_truncated: Whether printed output was cut at the cap.
        warnings: Warnings the code raised (``"UserWarning: ..."``), deduplicated.
        duration_ms: Wall time of the whole call, in milliseconds.
        mode: The mode the body ran in.
    """

    ok: bool
    value: JsonValue = None
    error: CodeError | None = None
    hint: str | None = None
    violations: tuple[Violation, ...] = ()
    figures: tuple[MintedFigure, ...] = ()
    layers: tuple[MintedLayer, ...] = ()
    map_ops: tuple[MapOp, ...] = ()
    stdout: str = ""
    stdout_truncated: bool = False
    warnings: tuple[str, ...] = ()
    duration_ms: float = 0.0
    mode: Mode = "not-started"

    def to_dict(self) -> dict[str, Any]:
        """The result as plain JSON-safe data (the CLI's ``--json`` output)."""
        out = asdict(replace(self, figures=(), layers=(), map_ops=()))
        out["figures"] = [f.model_dump(mode="json") for f in self.figures]
        out["layers"] = [layer.model_dump(mode="json") for layer in self.layers]
        out["map_ops"] = [op.model_dump(mode="json") for op in self.map_ops]
        return out

    def for_model(self, *, max_chars: int = 8_000) -> str:
        """A text for the model: the value (digested when large) or the error and hint."""
        hint = f"\nHint: {self.hint}" if self.hint else ""
        if self.violations:
            lines = "\n".join(f"- {v}" for v in self.violations)
            return f"The code was refused before it ran:\n{lines}{hint}"
        if not self.ok:
            return f"Error: {self.error}{hint}"
        text = digest(self.value, max_chars=max_chars)
        if self.warnings:
            text += "\nWarnings: " + "; ".join(self.warnings)
        return text + hint


@dataclass(slots=True)
class _State:
    worker: confine.WorkerProcess | None = None
    level: str | None = None
    failed_at: float | None = None
    failure: str = ""
    starter: threading.Thread | None = None
    spare: confine.Child | None = None
    handoff: threading.Thread | None = None
    lock: threading.RLock = field(default_factory=threading.RLock)
    # Guards only `starter`, so start() never waits on `lock`, which the starting thread
    # holds for as long as a worker takes to come up.
    starting: threading.Lock = field(default_factory=threading.Lock)


class Sandbox:
    """Run model-written Python bodies isolated from the host.

    Example:
        >>> with Sandbox(mode="in-process") as sb:
        ...     sb.run("return threshold * 2", inputs={"threshold": 21}).value
        42

    Args:
        timeout_s: Wall-clock budget per call; the host kills the child when it runs out.
        memory_mb: Address-space budget per call on top of the worker's own size.
        mode: ``"auto"`` (the strongest mode this machine supports), ``"isolated"``,
            ``"restricted"`` or ``"in-process"`` (tests and trusted code only: no
            boundary and no timeout).
        allow_fallback: When the requested mode cannot start, run in the next weaker
            mode (never below ``minimum_mode``) with a warning, instead of failing.
        minimum_mode: The weakest mode a fallback may reach.
        static_checks: Run Gate 1. ``False`` exists only to prove Gate 2 holds alone.
        stdout_limit: Characters of printed output kept.
        max_result_mb: Largest reply accepted from a child.
        scratch_mb: Size of each child's private scratch space.
    """

    def __init__(
        self,
        *,
        timeout_s: float = 10.0,
        memory_mb: int = 1024,
        mode: RunMode = "auto",
        allow_fallback: bool = False,
        minimum_mode: Literal["isolated", "restricted", "in-process"] = "restricted",
        static_checks: bool = True,
        stdout_limit: int = 64_000,
        max_result_mb: int = 64,
        scratch_mb: int = 64,
    ) -> None:
        if mode not in get_args(RunMode):
            raise UsageError(f"mode must be one of {', '.join(get_args(RunMode))}; got {mode!r}")
        if minimum_mode not in _RANK:
            raise UsageError(
                f"minimum_mode must be isolated, restricted or in-process; got {minimum_mode!r}"
            )
        if not (0 < timeout_s <= 3600) or not (32 <= memory_mb <= 1 << 20):
            raise UsageError("timeout_s must be in (0, 3600] and memory_mb in [32, 1048576]")
        self.timeout_s = float(timeout_s)
        self.memory_mb = int(memory_mb)
        self.requested_mode: RunMode = mode
        self.allow_fallback = allow_fallback
        self.minimum_mode = minimum_mode if mode != "in-process" else "in-process"
        self.static_checks = static_checks
        self.stdout_limit = stdout_limit
        self.max_result_bytes = max_result_mb * 1024 * 1024
        self.scratch_mb = scratch_mb
        self._state = _State()
        self._libraries: dict[str, Any] | None = None
        self._entry_files: EntryFiles | None = None
        self._closed = False
        if not static_checks:
            _warn_once(
                "static",
                "Sandbox(static_checks=False): Gate 1 is off; only for "
                "testing that the kernel boundary holds by itself",
            )

    # -- lifecycle -----------------------------------------------------------------------

    @property
    def mode(self) -> Mode:
        """The mode calls run in now (``not-started`` until the first start)."""
        state = self._state
        if state.level is not None:
            return state.level  # type: ignore[return-value]
        return "unavailable" if state.failed_at is not None else "not-started"

    @property
    def layers(self) -> dict[str, bool | int]:
        """The confinement layers calls run under now, as the worker's probe found them.

        ``netns``/``mountns``/``seccomp``/``uid_drop``/``rlimits`` are booleans and
        ``landlock`` is the ABI version (0 when absent). Empty before the first start
        and in the ``in-process`` mode.
        """
        worker, level = self._state.worker, self._state.level
        if worker is None or level not in ("isolated", "restricted"):
            return {}
        probe = worker.probe(level)
        return {k: v for k, v in probe.items() if k != "ok" and isinstance(v, bool | int)}

    def start(self) -> None:
        """Start the worker in the background, so the first :meth:`run` is fast."""
        with self._state.starting:
            if self._state.level is not None or self._state.starter is not None:
                return
            starter = threading.Thread(
                target=self._try_start, name="geomint-sandbox-start", daemon=True
            )
            self._state.starter = starter
            starter.start()

    def wait_started(self, timeout_s: float = 60.0) -> Mode:
        """Wait for a :meth:`start` under way to finish; return the mode calls will run in."""
        starter = self._state.starter
        if starter is not None and starter is not threading.current_thread():
            starter.join(timeout=timeout_s)
        return self.mode

    def _try_start(self) -> None:
        # A failure is recorded in the state; the next run() reports it.
        with contextlib.suppress(SandboxUnavailableError):
            self._ensure_started()

    def _ensure_started(self) -> str:
        state = self._state
        with state.lock:
            if self._closed:
                raise UsageError("this Sandbox is closed")
            if state.level is not None and (state.worker is None or state.worker.alive()):
                return state.level
            if state.worker is not None:  # the worker died: start a new one
                _warn_once("restart", "the sandbox worker died; starting a new one")
                self._forget_worker()
            if state.failed_at is not None and time.monotonic() - state.failed_at < _RETRY_AFTER_S:
                raise SandboxUnavailableError(state.failure)
            try:
                state.level = self._start_best()
                state.failed_at, state.failure = None, ""
            except SandboxUnavailableError as exc:
                state.failed_at, state.failure = time.monotonic(), str(exc)
                raise
            return state.level

    def _forget_worker(self) -> None:
        """Drop the worker and its spare child; the next call starts a new one."""
        self._await_handoff()
        state = self._state
        if state.spare is not None:
            state.spare.close()
            state.spare = None
        if state.worker is not None:
            state.worker.close()
            state.worker = None
        state.level = None

    def _start_best(self) -> str:
        wanted = self.requested_mode
        if wanted == "in-process":
            _warn_once(
                "in-process",
                "the sandbox runs code in-process: no isolation and no "
                "timeout (tests and trusted code only)",
            )
            return "in-process"
        try:
            worker = confine.WorkerProcess(
                handler="geomint.sandbox._worker",
                memory_mb=self.memory_mb,
                cpu_s=math.ceil(self.timeout_s) + 1,
                scratch_mb=self.scratch_mb,
            )
        except confine.WorkerStartError as exc:
            return self._fall_back(
                "restricted" if wanted == "isolated" else "in-process",
                f"the sandbox worker could not start: {exc}",
            )
        levels = ["isolated", "restricted"] if wanted in {"auto", "isolated"} else ["restricted"]
        reasons: list[str] = []
        for level in levels:
            probe = worker.probe(level)
            if probe.get("ok"):
                if wanted == "auto" and level != "isolated":
                    _warn_once(
                        "auto-restricted",
                        f"this machine offers only the restricted sandbox: {'; '.join(reasons)}",
                    )
                elif wanted not in ("auto", level):
                    worker.close()
                    return self._fall_back(level, "; ".join(reasons))
                self._state.worker = worker
                worker.request_spare(level)
                return level
            reasons.append(f"{level}: {probe.get('reason')}")
        worker.close()
        return self._fall_back("in-process", "; ".join(reasons))

    def _fall_back(self, level: str, reason: str) -> str:
        if not self.allow_fallback or _RANK[level] < _RANK[self.minimum_mode]:
            raise SandboxUnavailableError(
                f"the {self.requested_mode} sandbox cannot start here ({reason}). Run on "
                "Linux with namespaces and seccomp, or choose a weaker mode explicitly: "
                "Sandbox(mode='restricted'), or allow_fallback=True"
            )
        if level == "in-process":
            _warn_once("fallback-in-process", f"sandbox falling back to in-process: {reason}")
            return "in-process"
        try:
            worker = confine.WorkerProcess(
                handler="geomint.sandbox._worker",
                memory_mb=self.memory_mb,
                cpu_s=math.ceil(self.timeout_s) + 1,
                scratch_mb=self.scratch_mb,
            )
        except confine.WorkerStartError as exc:  # the weaker mode needs a worker too
            return self._fall_back("in-process", f"{reason}; {level}: {exc}")
        _warn_once(f"fallback-{level}", f"sandbox falling back to {level}: {reason}")
        self._state.worker = worker
        worker.request_spare(level)
        return level

    def close(self) -> None:
        """Stop the worker. Safe to call twice."""
        starter = self._state.starter
        if starter is not None and starter is not threading.current_thread():
            starter.join(timeout=60.0)
        with self._state.lock:
            self._closed = True
            self._await_handoff()
            if self._state.spare is not None:
                self._state.spare.close()
                self._state.spare = None
            if self._state.worker is not None:
                self._state.worker.close()
                self._state.worker = None
            if self._entry_files is not None:
                self._entry_files.close()
                self._entry_files = None

    def __enter__(self) -> Sandbox:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()

    # -- running -------------------------------------------------------------------------

    def run(
        self,
        code: str,
        inputs: Mapping[str, Any] | None = None,
        *,
        mapview: Mapping[str, Any] | None = None,
    ) -> SandboxResult:
        """Run a body over ``inputs``; every key becomes an identifier in the code.

        With ``mapview`` (the map's style as data), the body also gets a recording
        ``mapview`` of it (:class:`geomint.sandbox.MapView`); its calls come back as
        :attr:`SandboxResult.map_ops`, and the body need not return anything.

        Raises:
            UsageError: ``inputs`` has a key that is not a usable identifier.
            SandboxUnavailableError: The sandbox cannot run code at the allowed modes.
        """
        started = time.perf_counter()
        inputs = dict(inputs or {})
        _check_input_names(inputs)
        names = [*_runtime.LIBRARY_NAMES, *inputs]
        if mapview is not None:
            names.append(_runtime.MAPVIEW)
        prepared = prepare(code, names, static_checks=self.static_checks)
        if not prepared.ok:
            if not prepared.syntax_error:  # a typo is not an attack; a refusal may be
                first = prepared.violations[0]
                audit.record(
                    "gate1_refused",
                    rule=first.rule,
                    line=first.line,
                    violations=len(prepared.violations),
                )
            refusal = CodeError(
                type="GateRefused",
                message="; ".join(str(v) for v in prepared.violations)[:4000],
            )
            hint = hints.hint_for(refusal, _hint_view(inputs))
            if hint is None and prepared.syntax_error:
                hint = hints.UNPARSABLE_HINT
            return SandboxResult(
                ok=False,
                error=refusal,
                hint=hint,
                violations=prepared.violations,
                duration_ms=_ms(started),
                mode=self.mode,
            )
        entries: list[Entry] = []
        wire = replace_entries(inputs, lambda e: {ENTRY_MARKER: _index(entries, e)})
        with self._state.lock:
            level = self._ensure_started()
            payload = _encode_request(
                prepared,
                wire,
                self.stdout_limit,
                entries,
                checks=self.static_checks,
                mapview=mapview,
            )
            if level == "in-process":
                reply_or_error: Reply | CodeError = self._run_in_process(prepared, payload, entries)
            else:
                reply_or_error = self._run_in_child(level, payload, entries)
        if isinstance(reply_or_error, Reply) and _refused_at_call(reply_or_error):
            # a worker's guard refused text a library was about to evaluate
            error = reply_or_error.error
            audit.record("gate1_refused", rule="call-time", line=error.line if error else 0)
        return self._result(
            prepared,
            _hint_view(inputs),
            reply_or_error,
            level,
            started,
            needs_value=mapview is None,
        )

    def _files(self) -> EntryFiles:
        if self._entry_files is None:
            self._entry_files = EntryFiles()
        return self._entry_files

    async def arun(
        self,
        code: str,
        inputs: Mapping[str, Any] | None = None,
        *,
        mapview: Mapping[str, Any] | None = None,
    ) -> SandboxResult:
        """Run a body without blocking the event loop (see :meth:`run`)."""
        return await asyncio.to_thread(functools.partial(self.run, mapview=mapview), code, inputs)

    def _run_in_process(
        self, prepared: PreparedCode, payload: bytes, entries: list[Entry]
    ) -> Reply | CodeError:
        if self._libraries is None:
            self._libraries = _runtime.load_libraries()
        request = json.loads(payload)  # a copy: the caller's objects never change
        inputs = resolve_entries(request["inputs"], lambda i: table_collection(entries[i].table))
        reply = _runtime.execute(
            prepared.source,
            inputs,
            libraries=self._libraries,
            dropped=prepared.dropped,
            stdout_limit=self.stdout_limit,
            mapview=request.get("mapview"),
        )
        return Reply.parse(reply)

    def _run_in_child(
        self, level: str, payload: bytes, entries: list[Entry], *, retry: bool = True
    ) -> Reply | CodeError:
        self._await_handoff()
        worker = self._state.worker
        assert worker is not None
        try:
            fds = [self._files().descriptor(entry) for entry in entries]
        except ValueError as exc:
            raise UsageError(str(exc)) from exc
        try:
            child, self._state.spare = self._state.spare or worker.take_spare(level), None
            raw = child.call(
                payload, timeout_s=self.timeout_s, max_reply=self.max_result_bytes, fds=fds
            )
        except (confine.WorkerStartError, confine.ChildLostError) as exc:
            # The worker (or the spare it made) is gone and no code of this call ran:
            # start a new worker and try once more.
            self._forget_worker()
            if not retry:
                raise SandboxUnavailableError(f"the sandbox worker stopped: {exc}") from exc
            level = self._ensure_started()
            return self._run_in_child(level, payload, entries, retry=False)
        except confine.CallTimeoutError:
            audit.record("child_killed", by="sandbox", limit="time", seconds=self.timeout_s)
            return CodeError(
                type="Timeout",
                message=f"the code ran longer than {self.timeout_s:g} s and was stopped",
            )
        except confine.ChildDiedError as exc:
            audit.record("child_killed", by="sandbox", limit="memory, CPU or a crash")
            return CodeError(
                type="WorkerDied",
                message="the process running the code died "
                f"before replying (memory or CPU limit, or a crash): {exc}",
            )
        except confine.ConfinementRefusedError as exc:
            self._state.level = None
            raise SandboxUnavailableError(
                f"a sandbox child could not confine itself: {exc}"
            ) from exc
        except OverflowError as exc:
            audit.record("child_killed", by="sandbox", limit="reply size")
            return CodeError(
                type="ResultTooLarge", message=f"{exc}; return a summary or fewer features"
            )
        finally:
            if worker.alive():
                worker.request_spare(level)
        try:
            reply = Reply.parse(raw)
        except ReplyTooComplexError as exc:
            return CodeError(
                type="ResultTooLarge",
                message=f"{exc}; aggregate it (counts, totals, one row per group), return "
                "fewer rows, features or coordinates (`.head(...)`, `gdf.simplify(...)`), "
                "or leave the bulk out",
            )
        except ValidationError as exc:
            return CodeError(
                type="InvalidReply",
                message="the sandbox child sent a reply "
                f"that does not match the protocol ({exc.error_count()} errors)",
            )
        self._build_ahead(worker, level, entries, reply)
        return reply

    def _build_ahead(
        self, worker: confine.WorkerProcess, level: str, entries: list[Entry], reply: Reply
    ) -> None:
        """Hand the next spare the layers this call read, so it builds them while idle.

        What the child reported it read only chooses among entries the host itself sent
        (indices are checked), so a forged report can cost time, never widen access.
        """
        features = sorted({i for i in reply.used_features if i < len(entries)})
        frames = sorted({i for i in reply.used_frames if i < len(entries)})
        if not (features or frames) or not worker.alive():
            return
        wanted = sorted(set(features) | set(frames))
        keep = [entries[i] for i in wanted]
        request = {
            "op": "prefetch",
            "entries": [entry.key for entry in keep],
            "features": [wanted.index(i) for i in features],
            "frames": [wanted.index(i) for i in frames],
        }
        payload = json.dumps(request).encode()
        fds = [self._files().descriptor(e) for e in keep]

        def hand_over() -> None:
            # Off the caller's path: waiting for the worker's next fork costs milliseconds.
            try:
                spare = worker.take_spare(level)
            except confine.WorkerStartError:
                return
            if spare.prefetch(payload, fds):
                self._state.spare = spare
            else:
                spare.close()

        handoff = threading.Thread(target=hand_over, name="geomint-sandbox-handoff", daemon=True)
        self._state.handoff = handoff
        handoff.start()

    def _await_handoff(self) -> None:
        """Let a running hand-over finish before anything else talks to the worker."""
        handoff, self._state.handoff = self._state.handoff, None
        if handoff is not None:
            handoff.join()

    def _result(
        self,
        prepared: PreparedCode,
        inputs: Mapping[str, Any],
        outcome: Reply | CodeError,
        level: str,
        started: float,
        *,
        needs_value: bool = True,
    ) -> SandboxResult:
        mode: Mode = level  # type: ignore[assignment]
        if isinstance(outcome, CodeError):
            return SandboxResult(
                ok=False,
                error=outcome,
                hint=hints.hint_for(outcome, inputs),
                duration_ms=_ms(started),
                mode=mode,
            )
        common: dict[str, Any] = {
            "stdout": outcome.stdout, "stdout_truncated": outcome.stdout_truncated,
            "warnings": tuple(outcome.warnings), "duration_ms": _ms(started), "mode": mode,
        }  # fmt: skip
        # The reply's records, their lines moved to the model's own; a layer's data is
        # shared, not copied (a 500,000-feature layer is a quarter of a gigabyte). A body
        # that failed keeps what it minted before it failed.
        offset = prepared.line_offset
        common["figures"] = tuple(_shift(f, offset) for f in outcome.figures)
        common["layers"] = tuple(_shift(layer, offset) for layer in outcome.layers)
        common["map_ops"] = tuple(_shift(op, offset) for op in outcome.map_ops)
        if outcome.ok and outcome.error is None and not (needs_value and outcome.returned_none):
            return SandboxResult(
                ok=True, value=outcome.value, hint=_warning_hint(outcome.warnings, inputs),
                **common,
            )  # fmt: skip
        if outcome.error is None:
            error = _no_result_error(prepared)
        else:
            child = outcome.error
            line = child.line + prepared.line_offset if child.line else 0
            error = CodeError(
                type=child.type, message=child.message, line=line, code_line=child.code_line
            )
        return SandboxResult(ok=False, error=error, hint=hints.hint_for(error, inputs), **common)


_Minted = TypeVar("_Minted", MintedFigure, MintedLayer, MapOp)


def _shift(record: _Minted, offset: int) -> _Minted:
    """Map a registration's line from the unfenced body back to the model's own lines."""
    if not record.line or not offset:
        return record
    return record.model_copy(update={"line": record.line + offset})


def _no_result_error(prepared: PreparedCode) -> CodeError:
    if prepared.defines_only:
        name = prepared.defines_only
        return CodeError(
            type="NoResult",
            message=(
                f"the code only defines `{name}` and never calls it, so nothing ran. The code "
                "is already a function body: drop the wrapper and end the body with "
                f"`return <value>` (or end with `return {name}(...)`)"
            ),
        )
    return CodeError(
        type="NoResult",
        message=(
            "the code returned None. End the body with `return <value>` or with an expression "
            "whose value is the result"
        ),
    )


def _check_input_names(inputs: Mapping[str, Any]) -> None:
    for name in inputs:
        if not isinstance(name, str) or not name.isidentifier() or keyword.iskeyword(name):
            raise UsageError(
                f"input name {name!r} is not a Python identifier; every key of "
                "inputs becomes a name in the code"
            )
        if name.startswith("__") or name in (*_runtime.LIBRARY_NAMES, _runtime.MAPVIEW):
            raise UsageError(
                f"input name {name!r} is reserved (injected: "
                f"{', '.join((*_runtime.LIBRARY_NAMES, _runtime.MAPVIEW))}); choose another"
            )


def _encode_request(
    prepared: PreparedCode,
    inputs: Mapping[str, Any],
    stdout_limit: int,
    entries: list[Entry],
    *,
    checks: bool = True,
    mapview: Mapping[str, Any] | None = None,
) -> bytes:
    request = {
        "op": "call",
        "checks": checks,
        "mapview": mapview,
        "entries": [entry.key for entry in entries],
        "source": prepared.source,
        "dropped": list(prepared.dropped),
        "inputs": inputs,
        "stdout_limit": stdout_limit,
    }
    try:
        return json.dumps(request, default=to_json_safe, separators=(",", ":")).encode()
    except (TypeError, ValueError) as exc:
        raise UsageError(
            f"inputs must be JSON-compatible data (GeoJSON, numbers, text): {exc}"
        ) from exc


def _warning_hint(warnings: list[str], inputs: Mapping[str, Any]) -> str | None:
    """A hint for a body that ran but warned of a known pitfall (degrees used as metres)."""
    for text in warnings:
        kind, _, message = text.partition(": ")
        hint = hints.hint_for(CodeError(type=kind, message=message), inputs)
        if hint is not None:
            return hint
    return None


def _hint_view(inputs: Mapping[str, Any]) -> dict[str, Any]:
    """Inputs with each big layer shown by its first features, for the hint table."""
    return replace_entries(inputs, lambda entry: entry.preview())


def _index(entries: list[Entry], entry: Entry) -> int:
    entries.append(entry)
    return len(entries) - 1


def _ms(started: float) -> float:
    return round((time.perf_counter() - started) * 1000, 3)


def _refused_at_call(reply: Reply) -> bool:
    return reply.error is not None and reply.error.type == "GateRefused"
