"""Call-time checks on the library paths that turn a string into code.

Gate 1 reads the body, but a few library calls evaluate *text* the body hands them: a
``DataFrame.query`` expression, ``pd.eval``, a string annotation that
``typing.get_type_hints`` (or ``functools.singledispatch``) evaluates. That text never
passed Gate 1, and ``eval`` given a namespace without ``__builtins__`` adds the real ones.
The worker wraps each such path so the text is held to Gate 1's own rules
(:func:`geomint.sandbox.prepare.check_expression`) and evaluated with the sandbox's
builtins; a refusal raises :class:`~geomint.sandbox.prepare.GateRefused`, which the model
reads like a static refusal.

:func:`install` runs in the worker's template, before any fork, so every child has the
guards and no host process does (the ``in-process`` mode is not a sandbox). Each call
switches them with :data:`enabled`, so that ``Sandbox(static_checks=False)`` runs Gate 2
alone, as the red-team suite needs. The list of call sites these guards answer for, and
why the others are harmless, is ``tests/sandbox/code_paths.py``.
"""

from __future__ import annotations

import functools
import io
import tokenize
import traceback
import typing
from collections.abc import Callable
from typing import Any, Final

from geomint.sandbox import _runtime
from geomint.sandbox.prepare import GateRefused, check_expression

__all__ = ["enabled", "install", "refusals"]

#: Whether the guards check (the worker sets it per call from the sandbox's static_checks).
enabled: bool = True

#: Every refusal of this call, as (message, line of the model's code). The worker answers
#: with the first one even when the body caught the exception and carried on: a refusal
#: ends the call, as a static one does, so code cannot probe one path after another.
refusals: list[tuple[str, int]] = []

#: How pandas' preparse renames an ``@name`` local (``pandas.core.computation.scope``).
_LOCAL_TAG: Final = "__pd_eval_local_"
_QUERY_INSTEAD: Final = (
    "filter with boolean indexing, as in `df[df['a'] > 1]`, or keep the expression to "
    "column names, numbers, comparisons and public methods"
)
_ANNOTATION_INSTEAD: Final = "annotate with a plain type such as `int` or `list[str]`"


def install(builtins_table: dict[str, Any]) -> None:
    """Wrap every guarded path; ``builtins_table`` is what evaluated text may use."""
    _guard_forward_refs(builtins_table)
    _guard_pandas_expressions()


def _guard_forward_refs(builtins_table: dict[str, Any]) -> None:
    # Every forward reference typing evaluates (get_type_hints, singledispatch.register,
    # a ForwardRef in a generic) goes through ForwardRef._evaluate, whatever the caller.
    original: Callable[..., Any] = typing.ForwardRef._evaluate

    @functools.wraps(original)
    def _evaluate(
        self: typing.ForwardRef, globalns: Any, localns: Any, *args: Any, **kw: Any
    ) -> Any:
        if not enabled:
            return original(self, globalns, localns, *args, **kw)
        _check(self.__forward_arg__, what="the string annotation", instead=_ANNOTATION_INSTEAD)
        if self.__forward_module__ is not None:
            # typing would evaluate it in that module's namespace, where `sys` and `os`
            # are plain names
            _refuse(
                GateRefused(
                    "a forward reference evaluated in another module's namespace is not "
                    f"available; {_ANNOTATION_INSTEAD}"
                )
            )
        globalns = _with_builtins(globalns if globalns is not None else localns, builtins_table)
        return original(self, globalns, localns, *args, **kw)

    typing.ForwardRef._evaluate = _evaluate  # type: ignore[method-assign]


def _check(text: str, *, what: str, instead: str) -> None:
    try:
        check_expression(text, what=what, instead=instead)
    except GateRefused as exc:
        _refuse(exc)


def _refuse(exc: GateRefused) -> typing.NoReturn:
    frames = [f for f in traceback.extract_stack() if f.filename == _runtime.FILENAME]
    refusals.append((str(exc), frames[-1].lineno or 0 if frames else 0))
    raise exc


def _with_builtins(namespace: Any, builtins_table: dict[str, Any]) -> dict[str, Any]:
    """A copy of ``namespace`` whose builtins are the sandbox's, never the real ones."""
    names = dict(namespace) if isinstance(namespace, dict) else {}
    names["__builtins__"] = builtins_table
    return names


def _guard_pandas_expressions() -> None:
    # pd.eval, DataFrame.eval and DataFrame.query, with either parser, hand their text to
    # a visitor, which preparses it and gives the result to ast.parse: checking exactly
    # that source is checking what runs. (Reading the text some other way is how the guard
    # was passed twice: a regex across string literals, then parser="python", which skips
    # pandas' preparse, with a quote pandas' backtick splitter reads as never closing.)
    from pandas.core.computation import expr  # noqa: PLC0415 - the worker's import

    original: Callable[..., Any] = expr.BaseExprVisitor.visit

    @functools.wraps(original)
    def _visit(self: Any, node: Any, **kwargs: Any) -> Any:
        if enabled and isinstance(node, str):
            source = _as_python(self.preparser(node))
            _check(source, what="the pandas expression", instead=_QUERY_INSTEAD)
        return original(self, node, **kwargs)

    expr.BaseExprVisitor.visit = _visit  # type: ignore[method-assign]


def _as_python(source: str) -> str:
    """The source pandas will parse, with its ``@name`` locals (``__pd_eval_local_name``
    after its preparse) as plain names: what they resolve to is the body's own, already
    checked. Python's own tokenizer reads it, as ``ast.parse`` then does."""
    try:
        tokens = [
            (kind, f"local_{value[len(_LOCAL_TAG) :]}" if value.startswith(_LOCAL_TAG) else value)
            for kind, value, *_ in tokenize.generate_tokens(io.StringIO(source).readline)
        ]
    except (tokenize.TokenError, SyntaxError, ValueError) as exc:
        _refuse(GateRefused(f"the pandas expression does not read as Python: {exc}"))
    return tokenize.untokenize(tokens)
