"""Run one prepared body in the current process and describe what happened as plain data.

Both the confined worker child and the ``in-process`` mode call :func:`execute`. It never
raises for anything the model's code does: exceptions, bad return values and misuse of
``mint`` all come back as an ``error`` record naming the exception and the model's line.
"""

from __future__ import annotations

import builtins
import contextlib
import importlib
import io
import os
import traceback
import types
import warnings
from collections.abc import Callable, Coroutine, Mapping, Sequence
from contextlib import redirect_stderr, redirect_stdout
from typing import Any, Final

from geomint.sandbox import _policy as policy
from geomint.sandbox._mapview import MapView
from geomint.sandbox._mint import Mint
from geomint.sandbox._rasters import RasterOps
from geomint.sandbox.prepare import compile_body
from geomint.sandbox.results import JsonValue, ResultError, to_json_safe

__all__ = ["BUILTINS", "LIBRARY_NAMES", "MAPVIEW", "execute", "load_libraries"]

FILENAME: Final = "<code>"
#: The name map code reaches the recording map by (not ``map``, Python's builtin).
MAPVIEW: Final = "mapview"
LIBRARY_NAMES: Final = (*policy.INJECTED_LIBRARIES, "mint", *policy.RASTER_NAMES)
_MAX_MESSAGE = 2_000
_MAX_WARNINGS = 10


def load_libraries() -> dict[str, Any]:
    """Import the injected libraries once, and every module ``import`` allows (the worker
    does this before it forks; see ``policy.PREIMPORTED_MODULES`` for why)."""
    before = set(os.environ)
    libraries = {
        name: importlib.import_module(module) for name, module in policy.INJECTED_LIBRARIES.items()
    }
    for module in policy.PREIMPORTED_MODULES:
        with contextlib.suppress(ImportError):  # an optional module missing here
            importlib.import_module(module)
    # rasterio points GDAL and PROJ at a CA bundle for HTTPS on import; the sandbox has
    # no network, and its environment stays the allow-listed one the template was given.
    for added in set(os.environ) - before:
        del os.environ[added]
    return libraries


def _guarded_import(
    name: str,
    globals_: Mapping[str, object] | None = None,
    locals_: Mapping[str, object] | None = None,
    fromlist: Sequence[str] = (),
    level: int = 0,
) -> types.ModuleType:
    # A tripwire behind Gate 1 (which already refused the import): keeps a body compiled
    # with static_checks=False from importing os by name. Gate 2 is the boundary.
    parts = name.split(".")
    prefixes = [".".join(parts[: i + 1]) for i in range(len(parts))]
    names = [*prefixes, *(f"{name}.{item}" for item in fromlist or ())]
    allowed = any(p in policy.ALLOWED_MODULES for p in prefixes)
    if level or not allowed or any(n in policy.DENIED_SUBMODULES for n in names):
        raise ImportError(f"import of {name!r} is not allowed in the sandbox")
    return importlib.__import__(name, globals_, locals_, fromlist, level)


def _safe_builtins() -> dict[str, Any]:
    table = {k: v for k, v in vars(builtins).items() if k not in policy.DENIED_CALLS}
    table["__import__"] = _guarded_import
    return table


#: The builtins a body (and any text a guard lets a library evaluate) may use.
BUILTINS: Final = _safe_builtins()


class _CappedText(io.TextIOBase):
    """A stdout that keeps the first ``limit`` characters and counts the rest."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.parts: list[str] = []
        self.size = 0
        self.dropped = 0

    def writable(self) -> bool:
        return True

    def write(self, text: str) -> int:
        text = str(text)
        room = self.limit - self.size
        if room > 0:
            kept = text[:room]
            self.parts.append(kept)
            self.size += len(kept)
        self.dropped += max(0, len(text) - max(room, 0))
        return len(text)

    def getvalue(self) -> str:
        return "".join(self.parts)


def execute(
    source: str,
    inputs: Mapping[str, Any],
    *,
    libraries: Mapping[str, Any],
    dropped: Sequence[int] = (),
    stdout_limit: int = 64_000,
    mapview: Mapping[str, Any] | None = None,
) -> dict[str, JsonValue]:
    """Run a body over ``inputs`` and return the reply record.

    Args:
        source: The prepared body (see :func:`geomint.sandbox.prepare.prepare`).
        inputs: Values for the injected input names; the caller passes copies.
        libraries: The pre-imported libraries, by injected name.
        dropped: Top-level statements Gate 1 dropped as redundant re-bindings.
        stdout_limit: Characters of printed output kept.
        mapview: The map's style, for map code: the body gets a recording ``mapview`` of
            it, may end without a result, and the reply's ``map_ops`` lists its calls.

    Returns:
        ``{"ok", "value", "error", "figures", "layers", "stdout", "stdout_truncated",
        "returned_none", "warnings", "map_ops"}`` with JSON-safe values only.
    """
    mint = Mint()
    view = MapView(mapview) if mapview is not None else None
    out = _CappedText(stdout_limit)
    reply: dict[str, JsonValue] = {
        "ok": False, "value": None, "error": None, "figures": [], "layers": [],
        "stdout": "", "stdout_truncated": False, "returned_none": False, "warnings": [],
    }  # fmt: skip
    arguments = {**libraries, **inputs, "mint": mint, **RasterOps(mint, inputs).names()}
    if view is not None:
        arguments[MAPVIEW] = view
    names = list(arguments)
    caught: list[warnings.WarningMessage] = []
    try:
        # Warnings are part of the answer (a buffer in degrees warns and still "works"),
        # so they are recorded the same way in every mode, whatever filters the host has.
        with (
            redirect_stdout(out),
            redirect_stderr(out),
            warnings.catch_warnings(record=True) as caught,
        ):
            warnings.simplefilter("always")
            function = _compile(source, names, dropped)
            value = _drive(function(*arguments.values()))
            if value is None:
                reply["returned_none"] = True
            else:
                reply["value"] = to_json_safe(value)
        # Map code changes the map; a value of its own is optional.
        reply["ok"] = view is not None or not reply["returned_none"]
    except ResultError as exc:
        reply["error"] = _error_record(exc, source, result=True)
    except (Exception, RecursionError) as exc:
        reply["error"] = _error_record(exc, source)
    except BaseException as exc:  # SystemExit, KeyboardInterrupt raised by the body
        reply["error"] = _error_record(exc, source)
    # What the body minted before it failed is kept too: the figures are right, only the
    # rest of the body did not run (the host says so beside the error).
    reply["figures"] = list(mint.figures)
    reply["layers"] = list(mint.layers)
    reply["stdout"] = out.getvalue()
    reply["stdout_truncated"] = out.dropped > 0
    reply["warnings"] = _warning_texts(caught)
    reply["map_ops"] = list(view.ops) if view is not None else []
    return reply


def _warning_texts(caught: Sequence[warnings.WarningMessage]) -> list[JsonValue]:
    texts: dict[str, None] = {}
    for item in caught[: _MAX_WARNINGS * 4]:
        texts[f"{item.category.__name__}: {str(item.message)[:500]}"] = None
    return [text for text in list(texts)[:_MAX_WARNINGS]]


def _compile(
    source: str, names: Sequence[str], dropped: Sequence[int]
) -> Callable[..., Coroutine[Any, Any, Any]]:
    module = compile_body(source, names, dropped=dropped, filename=FILENAME)
    code = compile(module, FILENAME, "exec", dont_inherit=True)
    namespace: dict[str, Any] = {"__builtins__": BUILTINS, "__name__": "geomint_body"}
    exec(code, namespace)  # noqa: S102 - this is the sandbox's purpose; Gate 1 ran first
    function: Callable[..., Coroutine[Any, Any, Any]] = namespace["__geomint_body__"]
    return function


def _drive(coroutine: Coroutine[Any, Any, Any]) -> Any:
    """Run a coroutine that awaits only the body's own coroutines, without an event loop.

    There is nothing to wait for in the sandbox (no network, no files, no asyncio), so a
    loop would only cost start-up time and need sockets the seccomp filter refuses.
    """
    try:
        while True:
            yielded = coroutine.send(None)
            if yielded is not None:
                coroutine.close()
                raise RuntimeError(
                    "the code awaited something that needs an event loop; there is none in "
                    "the sandbox: compute the result directly, without await"
                )
    except StopIteration as stop:
        return stop.value


def _error_record(exc: BaseException, source: str, *, result: bool = False) -> dict[str, JsonValue]:
    line = _model_line(exc)
    lines = source.split("\n")  # as Python counts lines; splitlines() breaks at more
    code_line = lines[line - 1].strip() if 0 < line <= len(lines) else None
    try:
        message = str(exc)
    except Exception:  # a hostile __str__ must not break the reply
        message = "<unprintable message>"
    if len(message) > _MAX_MESSAGE:
        message = message[:_MAX_MESSAGE] + "…"
    return {
        "type": type(exc).__name__[:100],
        "message": message,
        "line": line,
        "code_line": code_line[:500] if code_line else None,
        "phase": "result" if result else "run",
    }


def _model_line(exc: BaseException) -> int:
    """The last line of the model's code in the traceback (0 when it never got there)."""
    if isinstance(exc, SyntaxError) and exc.filename == FILENAME:
        return exc.lineno or 0
    line = 0
    for frame in traceback.extract_tb(exc.__traceback__):
        if frame.filename == FILENAME and frame.lineno:
            line = frame.lineno
    return line
