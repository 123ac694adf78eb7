"""Gate 1: read model-written code before anything runs it.

:func:`prepare` strips markdown fences, drops redundant re-bindings of injected names,
and verifies the body against the policy in :mod:`geomint.sandbox._policy`, collecting
every violation (with its line and a reason a model can act on) before answering.

:func:`compile_body` turns a prepared body into a callable: the body of an ``async def``
whose parameters are the injected names, with a final expression turned into the result.
The worker runs it after Gate 2 has confined the process; Gate 1 is a tripwire that gives
clear messages, not the boundary.
"""

from __future__ import annotations

import ast
import io
import re
import string
import sys
import tokenize
import unicodedata
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any, Final

from geomint.errors import ModelFacingError
from geomint.sandbox import _policy as policy

__all__ = [
    "GateRefused",
    "PreparedCode",
    "Violation",
    "check_expression",
    "compile_body",
    "prepare",
    "strip_fences",
]

_FENCE_OPEN = re.compile(r"^\s*```[\w+-]*[ \t]*$")
_FENCE_CLOSE = re.compile(r"^\s*```\s*$")
_FUNCTION_NAME = "__geomint_body__"


@dataclass(frozen=True, kw_only=True, slots=True)
class Violation:
    """One reason Gate 1 refused a body.

    Attributes:
        line: Line of the code as the model wrote it (1-based; 0 for the whole body).
        reason: What is refused and what to do instead, written for the model.
        rule: A short fixed name for the rule (``import``, ``dunder``, ``bidi``, ...), for
            the operator's security log; it never holds the code.
    """

    line: int
    reason: str
    rule: str = "policy"

    def __str__(self) -> str:
        return f"line {self.line}: {self.reason}" if self.line else self.reason


@dataclass(frozen=True, kw_only=True, slots=True)
class PreparedCode:
    """A body after fence stripping, sanitising and verification.

    Attributes:
        source: The body without markdown fences, as it will be compiled.
        line_offset: Lines removed above the body; add it to a line of ``source`` to get
            the line of the code as the model wrote it.
        dropped: Indices of top-level statements dropped as redundant re-bindings.
        violations: Everything Gate 1 refused; empty when the body may run.
        defines_only: The function's name when the body only defines functions and has
            no top-level ``return`` (the model wrapped its code in a function).
        syntax_error: True when the body does not parse (the single violation says where).
    """

    source: str
    line_offset: int = 0
    dropped: tuple[int, ...] = ()
    violations: tuple[Violation, ...] = ()
    defines_only: str | None = None
    syntax_error: bool = False

    @property
    def ok(self) -> bool:
        """Whether the body passed Gate 1."""
        return not self.violations


class GateRefused(ModelFacingError, ValueError):  # noqa: N818 - a static refusal's type name
    """A library was asked to turn a string into code that Gate 1 refuses.

    Raised at call time by the worker's guards (:mod:`geomint.sandbox._guards`) on the
    paths where a library evaluates text (``DataFrame.query``, ``pd.eval``, a string
    annotation): the text is held to the same rules as the body itself. The message is
    read by the model; the error's type name matches a static refusal's.
    """


def check_expression(text: str, *, what: str, instead: str) -> None:
    """Verify text that a library is about to evaluate, with Gate 1's rules.

    Args:
        text: The expression (or statements) the library will evaluate.
        what: What the text is, for the message (``"the DataFrame.query expression"``).
        instead: What to write instead, for the message.

    Raises:
        GateRefused: The text breaks a rule; the message names each break and ``instead``.
    """
    if len(text) > policy.LIMITS["max_literal_chars"]:
        raise GateRefused(f"{what} is {len(text):,} characters long; {instead}")
    hidden = _invisible_characters(text, 0)
    if hidden:
        reasons = "; ".join(v.reason for v in hidden[:5])
        raise GateRefused(f"{what} is refused: {reasons}. Instead, {instead}")
    try:
        tree = ast.parse(text.strip(), mode="exec")
    except (SyntaxError, ValueError, RecursionError, MemoryError) as exc:
        # Fail closed: text Gate 1 cannot read is text it has not checked.
        raise GateRefused(
            f"{what} {text[:200]!r} does not parse as Python ({exc}); {instead}"
        ) from None
    found = _Verifier(0).verify(tree)
    if found:
        reasons = "; ".join(v.reason for v in found[:5])
        raise GateRefused(f"{what} {text[:200]!r} is refused: {reasons}. Instead, {instead}")


def strip_fences(code: str) -> tuple[str, int]:
    """Remove a markdown code fence around a body.

    Returns:
        The body and the number of lines removed above it.
    """
    lines = code.strip("\n").split("\n")
    leading = len(code) - len(code.lstrip("\n"))
    if lines and _FENCE_OPEN.match(lines[0]):
        lines = lines[1:]
        leading += 1
        if lines and _FENCE_CLOSE.match(lines[-1]):
            lines = lines[:-1]
    return "\n".join(lines), leading


def prepare(code: str, injected: Iterable[str], *, static_checks: bool = True) -> PreparedCode:
    """Strip, sanitise and verify a model-written function body.

    Args:
        code: The body as the model wrote it, possibly inside a markdown fence.
        injected: The names the body receives as arguments (inputs and libraries).
        static_checks: Run the verifier. ``False`` runs Gate 2 alone and exists only for
            proving that the kernel boundary holds by itself.

    Returns:
        The prepared body; check :attr:`PreparedCode.ok` before running it.
    """
    if not isinstance(code, str):
        raise TypeError(f"code must be a str, got {type(code).__name__}")
    source, offset = strip_fences(code)
    names = frozenset(injected)
    limits = policy.LIMITS
    if static_checks:
        if len(source) > limits["max_code_chars"]:
            return _refused(
                source,
                offset,
                f"the body has {len(source):,} characters; the "
                f"limit is {limits['max_code_chars']:,}. Write shorter code.",
                rule="size",
            )
        if source.count("\n") + 1 > limits["max_lines"]:
            return _refused(
                source,
                offset,
                f"the body has more than {limits['max_lines']:,} lines. Write shorter code.",
                rule="size",
            )
    if static_checks:
        hidden = _invisible_characters(source, offset)
        if hidden:
            return PreparedCode(source=source, line_offset=offset, violations=tuple(hidden))
    if not source.strip():
        return _refused(
            source,
            offset,
            "the code is empty: write a body that ends with `return <value>`",
            syntax_error=True,
        )
    try:
        tree = ast.parse(source, mode="exec")
    except SyntaxError as exc:
        line = (exc.lineno or 0) + offset if exc.lineno else 0
        text = (exc.text or "").strip()
        where = f" near `{text}`" if text else ""
        return _refused(
            source,
            offset,
            f"the body does not parse: {exc.msg}{where}",
            line=line,
            syntax_error=True,
        )
    except (ValueError, RecursionError, MemoryError) as exc:
        return _refused(source, offset, f"the body does not parse: {exc}", syntax_error=True)

    dropped = tuple(_redundant_rebindings(tree.body, names))
    violations: list[Violation] = []
    if static_checks:
        violations = _Verifier(offset).verify(tree, skip=dropped)
    return PreparedCode(
        source=source,
        line_offset=offset,
        dropped=dropped,
        violations=tuple(violations),
        defines_only=_defined_but_not_called(tree.body, dropped),
    )


def compile_body(
    source: str, names: Sequence[str], *, dropped: Sequence[int] = (), filename: str = "<code>"
) -> ast.Module:
    """Wrap a body as ``async def __geomint_body__(*names)`` and return the module AST.

    The final statement, when it is an expression, becomes the ``return`` value. Line
    numbers stay those of ``source``, so tracebacks point at the model's own lines.
    """
    tree = ast.parse(source, filename=filename, mode="exec")
    skip = set(dropped)
    body: list[ast.stmt] = [s for i, s in enumerate(tree.body) if i not in skip]
    if body and isinstance(body[-1], ast.Expr):
        last = body[-1]
        body[-1] = ast.copy_location(ast.Return(value=last.value), last)
    if not body:
        body = [ast.Pass()]
    args = ast.arguments(
        posonlyargs=[],
        args=[ast.arg(arg=name) for name in names],
        kwonlyargs=[],
        kw_defaults=[],
        defaults=[],
    )
    extra: dict[str, Any] = {"type_params": []} if sys.version_info >= (3, 12) else {}
    function = ast.AsyncFunctionDef(
        name=_FUNCTION_NAME, args=args, body=body, decorator_list=[], returns=None, **extra
    )
    module = ast.Module(body=[function], type_ignores=[])
    return ast.fix_missing_locations(module)


def _refused(
    source: str,
    offset: int,
    reason: str,
    *,
    line: int = 0,
    syntax_error: bool = False,
    rule: str = "syntax",
) -> PreparedCode:
    return PreparedCode(
        source=source,
        line_offset=offset,
        syntax_error=syntax_error,
        violations=(Violation(line=line, reason=reason, rule="syntax" if syntax_error else rule),),
    )


def _invisible_characters(source: str, offset: int) -> list[Violation]:
    """Refuse characters that make code read differently from how it runs (Trojan Source).

    Bidirectional controls reorder what a person sees, inside a string as much as outside
    one (the string can swallow code on screen); they are refused anywhere. Other format
    characters (Unicode category Cf: zero-width spaces, joiners) are invisible, and
    refused outside string literals only, since joiners are part of legitimate text. So are
    characters that look like nothing or like a line break without being one to a reader
    (:data:`LOOKS_INVISIBLE`: Hangul fillers, which are letters and so make invisible
    names; what a screen breaks a line at and Python does not, such as the line and
    paragraph separators, vertical tab and form feed; a carriage return not before a
    newline, which Python reads as the end of a comment).
    """
    if not any(hides_code(c) for c in set(source)):
        return []
    inside = _string_spans(source)
    found: list[Violation] = []
    for number, text in enumerate(source.split("\n"), start=1):
        for column, char in enumerate(text, start=1):
            if not hides_code(char) or (char == "\r" and column == len(text)):
                continue  # a CR before the newline is a Windows line ending
            code = f"U+{ord(char):04X} {unicodedata.name(char, _CONTROL_NAMES.get(char, ''))}"
            if char in policy.BIDI_CONTROLS:
                reason = (
                    f"column {column}: {code} is a bidirectional control character, which "
                    "makes code display in another order than it runs; delete it (a string "
                    f"that needs it can write the escape `\\u{ord(char):04x}`)"
                )
                rule = "bidi"
            elif not _within(inside, number, column):
                reason = (
                    f"column {column}: {code} is invisible, or breaks a line where none is "
                    "seen, outside a string literal; delete it (inside a string it is allowed)"
                )
                rule = "invisible"
            else:
                continue
            found.append(Violation(line=number + offset, reason=reason, rule=rule))
            if len(found) >= 20:
                return found
    return found


#: Characters that are not format characters (Cf) but hide what code does from a reader.
LOOKS_INVISIBLE: Final = frozenset(
    "\u115f\u1160\u3164\uffa0"  # Hangul fillers: letters that show as nothing
    "\u2028\u2029\u0085\x0b\x0c\x1c\x1d\x1e"  # line breaks to a screen, not to Python
    "\r"  # a carriage return not before a newline ends a comment for Python, not on screen
)


#: Names of the control characters in LOOKS_INVISIBLE (unicodedata has none for them).
_CONTROL_NAMES: Final = {
    "\r": "CARRIAGE RETURN", "\x0b": "LINE TABULATION", "\x0c": "FORM FEED",
    "\x1c": "FILE SEPARATOR", "\x1d": "GROUP SEPARATOR", "\x1e": "RECORD SEPARATOR",
    "\x85": "NEXT LINE",
}  # fmt: skip


def hides_code(char: str) -> bool:
    """Whether ``char`` is one Gate 1 counts as hiding what code does from a reader."""
    return char in LOOKS_INVISIBLE or unicodedata.category(char) == "Cf"


def _string_spans(source: str) -> list[tuple[tuple[int, int], tuple[int, int]]]:
    """Start and end (line, column, 1-based) of every string literal; none if unreadable."""
    spans = []
    kinds = {tokenize.STRING, getattr(tokenize, "FSTRING_MIDDLE", tokenize.STRING)}
    try:
        for token in tokenize.generate_tokens(io.StringIO(source).readline):
            if token.type in kinds:
                (a, b), (c, d) = token.start, token.end
                spans.append(((a, b + 1), (c, d)))
    except (tokenize.TokenError, SyntaxError, IndentationError):
        return []  # then every format character counts as outside a string
    return spans


def _within(
    spans: Sequence[tuple[tuple[int, int], tuple[int, int]]], line: int, column: int
) -> bool:
    return any(start <= (line, column) <= end for start, end in spans)


def _redundant_rebindings(body: Sequence[ast.stmt], names: frozenset[str]) -> Iterator[int]:
    """Yield top-level statements such as ``x = globals()["x"]`` for an injected ``x``.

    Only a lookup of the injected value itself is dropped; a genuine shadowing assignment
    (``places_by_entry = {...}``) stays, since dropping it would corrupt the model's code.
    """
    for index, stmt in enumerate(body):
        if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1:
            target, value = stmt.targets[0], stmt.value
        elif isinstance(stmt, ast.AnnAssign) and stmt.value is not None:
            target, value = stmt.target, stmt.value
        else:
            continue
        if isinstance(target, ast.Name) and target.id in names and _is_lookup_of(value, target.id):
            yield index


def _is_lookup_of(value: ast.expr, name: str) -> bool:
    if not isinstance(value, ast.Subscript):
        return False
    key = value.slice
    if not (isinstance(key, ast.Constant) and key.value == name):
        return False
    container = value.value
    if isinstance(container, ast.Name):
        return container.id in {"kwargs", "arguments", "inputs"}
    return (
        isinstance(container, ast.Call)
        and isinstance(container.func, ast.Name)
        and container.func.id in policy.REBINDING_LOOKUPS
        and not container.args
    )


def _defined_but_not_called(body: Sequence[ast.stmt], dropped: Sequence[int]) -> str | None:
    """Name the function when the body is only a definition (and imports) with no call."""
    defined: list[str] = []
    for index, stmt in enumerate(body):
        if index in dropped or isinstance(stmt, ast.Import | ast.ImportFrom):
            continue
        if isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant):
            continue  # a docstring
        if isinstance(stmt, ast.FunctionDef | ast.AsyncFunctionDef):
            defined.append(stmt.name)
        elif (
            isinstance(stmt, ast.Assign)
            and isinstance(stmt.value, ast.Lambda)
            and isinstance(stmt.targets[0], ast.Name)
        ):
            defined.append(stmt.targets[0].id)
        else:
            return None
    return defined[-1] if defined else None


@dataclass(slots=True)
class _Verifier:
    """Walks a body once and collects every violation of the policy."""

    offset: int
    found: list[Violation] = field(default_factory=list)
    aliases: dict[str, str] = field(default_factory=dict)
    _seen: set[tuple[int, str]] = field(default_factory=set)
    _called: set[int] = field(default_factory=set)  # ids of Name nodes that are call targets

    def verify(self, tree: ast.Module, *, skip: Sequence[int] = ()) -> list[Violation]:
        # A statement dropped as a redundant re-binding never runs: it is not checked.
        kept = [statement for index, statement in enumerate(tree.body) if index not in skip]
        self.aliases = _module_aliases(kept)
        nodes = 1
        for statement in kept:
            for node in ast.walk(statement):
                nodes += 1
                self._check(node)
        if nodes > policy.LIMITS["max_ast_nodes"]:
            self._add(
                0,
                f"the body has {nodes:,} syntax nodes; the limit is "
                f"{policy.LIMITS['max_ast_nodes']:,}. Write shorter code.",
                rule="size",
            )
        self._check_top_level(kept)
        return sorted(self.found, key=lambda v: v.line)

    def _add(self, line: int, reason: str, rule: str) -> None:
        key = (line, reason)
        if key not in self._seen:
            self._seen.add(key)
            self.found.append(Violation(line=line, reason=reason, rule=rule))

    def _line(self, node: ast.AST) -> int:
        return int(getattr(node, "lineno", 0)) + self.offset if hasattr(node, "lineno") else 0

    def _check(self, node: ast.AST) -> None:
        line = self._line(node)
        if isinstance(node, ast.Import):
            for alias in node.names:
                self._check_module(alias.name, line)
        elif isinstance(node, ast.ImportFrom):
            self._check_import_from(node, line)
        elif isinstance(node, ast.Name):
            self._check_name(node.id, line)
            if node.id in policy.ATTRIBUTE_BUILTINS and id(node) not in self._called:
                self._add(
                    line,
                    f"`{node.id}` may only be called directly, as `{node.id}(obj, 'name')`; "
                    "write `obj.name` instead",
                    rule="attribute-builtin",
                )
        elif isinstance(node, ast.arg):
            if _is_dunder(node.arg):
                self._add(
                    line, f"`{node.arg}` is reserved; choose another parameter name", rule="dunder"
                )
        elif isinstance(node, ast.Attribute):
            self._check_attribute(node, line)
        elif isinstance(node, ast.Call):
            self._check_call(node, line)
        elif isinstance(node, ast.Subscript):
            key = node.slice
            if (
                isinstance(key, ast.Constant)
                and isinstance(key.value, str)
                and (_is_dunder(key.value) or key.value in policy.INTERNAL_ATTRIBUTES)
            ):
                self._add(
                    line,
                    f"subscript `[{key.value!r}]` reaches interpreter internals; read the "
                    "data by its own keys",
                    rule="dunder",
                )
        elif isinstance(node, ast.Constant):
            self._check_constant(node, line)
        elif isinstance(node, ast.BinOp):
            self._check_binop(node, line)
        elif isinstance(node, ast.While):
            if _always_true(node.test) and not _can_leave(node.body):
                self._add(
                    line,
                    "`while True` with no `break`, `return` or `raise` never "
                    "ends; loop over the data or add an exit",
                    rule="loop",
                )
        elif isinstance(node, ast.MatchClass):
            for attr in node.kwd_attrs:
                self._check_attribute_name(attr, None, line)
        elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            if _is_dunder(node.name) and not isinstance(node, ast.ClassDef):
                return  # a dunder method defined in a class body is ordinary Python
            if _is_dunder(node.name):
                self._add(
                    line, f"`{node.name}` is reserved; choose another class name", rule="dunder"
                )

    def _check_top_level(self, body: Sequence[ast.stmt]) -> None:
        for node in _walk_outside_functions(body):
            if isinstance(node, ast.Yield | ast.YieldFrom):
                self._add(
                    self._line(node),
                    "`yield` at the top level makes the body a "
                    "generator; collect the items in a list and return it",
                    rule="yield",
                )

    def _check_module(self, name: str, line: int) -> None:
        denied = _denied_submodule(name)
        if denied:
            self._add(line, f"import of `{name}` is not allowed: {denied}", rule="import")
            return
        if _module_allowed(name):
            if any(part.startswith("_") for part in name.split(".")):
                self._add(
                    line,
                    f"import of `{name}` is not allowed: it is a private module; import the "
                    "package's public API",
                    rule="private",
                )
            return
        root = name.split(".", maxsplit=1)[0]
        advice = policy.MODULE_HINTS.get(name) or policy.MODULE_HINTS.get(root)
        allowed = ", ".join(sorted(m for m in policy.ALLOWED_MODULES if "." not in m))
        reason = f"import of `{name}` is not allowed"
        reason += f": {advice}" if advice else f". Modules that may be imported: {allowed}"
        self._add(line, reason, rule="import")

    def _check_import_from(self, node: ast.ImportFrom, line: int) -> None:
        if node.level:
            self._add(
                line,
                "relative imports are not available; import allowed modules by their full name",
                rule="import",
            )
            return
        module = node.module or ""
        for alias in node.names:
            if alias.name == "*":
                self._add(
                    line,
                    f"`from {module} import *` is not allowed; import the names you use",
                    rule="import",
                )
                continue
            full = f"{module}.{alias.name}"
            if _denied_submodule(full) and not _denied_submodule(module):
                self._check_module(full, line)
                continue
            if _denied_submodule(module) or not (_module_allowed(module) or _module_allowed(full)):
                self._check_module(module, line)
            elif _module_allowed(module):
                self._check_module(module, line)  # a private module is refused there
            self._check_name(alias.name, line)
            if (
                alias.name.startswith("_")
                and not _is_dunder(alias.name)
                and alias.name not in policy.ALLOWED_PRIVATE_ATTRIBUTES
            ):
                self._add(
                    line,
                    f"`{alias.name}` is private to `{module}`; import its public API",
                    rule="private",
                )
            self._check_attribute_name(alias.name, module.split(".")[-1], line)

    def _check_name(self, name: str, line: int) -> None:
        reason = policy.DENIED_CALLS.get(name)
        if reason:
            self._add(line, f"`{name}` is not available: {reason}", rule="builtin")
        elif _is_dunder(name):
            self._add(
                line, f"`{name}` reaches interpreter internals and is not available", rule="dunder"
            )

    def _check_attribute(self, node: ast.Attribute, line: int) -> None:
        base = node.value
        base_name = (
            self.aliases.get(base.id, base.id).rsplit(".", maxsplit=1)[-1]
            if isinstance(base, ast.Name)
            else (base.attr if isinstance(base, ast.Attribute) else None)
        )
        if node.attr.startswith("_") and not _is_dunder(node.attr):
            if base_name in {"self", "cls"} or node.attr in policy.ALLOWED_PRIVATE_ATTRIBUTES:
                return
            self._add(
                line,
                f"private attribute `.{node.attr}` is not available; use the public API",
                rule="private",
            )
            return
        self._check_attribute_name(node.attr, base_name, line)

    def _check_attribute_name(self, attr: str, base_name: str | None, line: int) -> None:
        if _is_dunder(attr):
            if attr not in policy.ALLOWED_DUNDER_ATTRIBUTES:
                self._add(
                    line,
                    f"`.{attr}` reaches interpreter internals and is not available",
                    rule="dunder",
                )
        elif attr in policy.INTERNAL_ATTRIBUTES:
            self._add(
                line,
                f"`.{attr}` reaches frames or code objects and is not available",
                rule="internal",
            )
        elif attr in policy.DENIED_ATTRIBUTES:
            if attr in policy.TEXT_CODEC_ATTRIBUTES and base_name in policy.TEXT_CODEC_MODULES:
                return
            if base_name in policy.DENIED_ATTRIBUTE_EXCEPTIONS.get(attr, ()):
                return
            self._add(
                line,
                f"`.{attr}` is not available: {policy.DENIED_ATTRIBUTES[attr]}",
                rule="denied-attribute",
            )

    def _check_call(self, node: ast.Call, line: int) -> None:
        func = node.func
        if isinstance(func, ast.Name):
            self._called.add(id(func))  # ast.walk visits a call before its target
        if isinstance(func, ast.Name) and func.id in policy.ATTRIBUTE_BUILTINS:
            name = node.args[1] if len(node.args) > 1 else None
            if not (isinstance(name, ast.Constant) and isinstance(name.value, str)):
                self._add(
                    line,
                    f"`{func.id}` needs a literal attribute name; write "
                    "`obj.name` or a dict lookup instead",
                    rule="attribute-builtin",
                )
            elif name.value.startswith("_") and name.value not in (
                policy.ALLOWED_PRIVATE_ATTRIBUTES | policy.ALLOWED_DUNDER_ATTRIBUTES
            ):
                self._add(
                    line,
                    f"`{func.id}` of `{name.value}` reaches internals and is not available",
                    rule="private",
                )
            else:
                self._check_attribute_name(name.value, None, line)
        elif isinstance(func, ast.Attribute) and func.attr == "format":
            self._check_format_call(func.value, line)
        elif isinstance(func, ast.Attribute) and func.attr in policy.FILE_WRITER_METHODS:
            writes = node.args or any(
                k.arg in {"path_or_buf", "buf", "path", "filename"} for k in node.keywords
            )
            if writes:
                self._add(
                    line,
                    f"`.{func.attr}(path)` writes a file; call it without a path "
                    "to get text, or return the data",
                    rule="file-write",
                )

    def _check_format_call(self, target: ast.expr, line: int) -> None:
        if isinstance(target, ast.Name) and target.id == "str":
            self._add(
                line,
                "`str.format` with a computed template is not available; use an f-string",
                rule="format",
            )
            return
        if not (isinstance(target, ast.Constant) and isinstance(target.value, str)):
            if isinstance(target, ast.Name | ast.Attribute | ast.Subscript | ast.Call):
                self._add(
                    line,
                    "`.format` on a computed template is not available; use an "
                    "f-string or a literal template",
                    rule="format",
                )
            return
        try:
            fields = [f for _, f, _, _ in string.Formatter().parse(target.value) if f]
        except ValueError:
            return  # a malformed template fails at run time with its own message
        for name in fields:
            if "." in name or "[" in name:
                self._add(
                    line,
                    f"format field `{{{name}}}` reaches attributes or items; "
                    "format the values themselves in an f-string",
                    rule="format",
                )

    def _check_constant(self, node: ast.Constant, line: int) -> None:
        value = node.value
        limit = policy.LIMITS["max_literal_chars"]
        if isinstance(value, str | bytes) and len(value) > limit:
            self._add(
                line,
                f"a literal of {len(value):,} characters is over the limit of "
                f"{limit:,}; the data arrives as arguments",
                rule="size",
            )
        elif isinstance(value, int) and not isinstance(value, bool):
            digits = policy.LIMITS["max_int_literal_digits"]
            if value.bit_length() > digits * 3.33:
                self._add(
                    line, f"an integer literal over {digits} digits is not allowed", rule="size"
                )

    def _check_binop(self, node: ast.BinOp, line: int) -> None:
        if isinstance(node.op, ast.Pow) and isinstance(node.right, ast.Constant | ast.BinOp):
            exponent = _constant_int(node.right)
            if exponent is not None and exponent > 10_000:
                self._add(
                    line,
                    "a power with an exponent over 10,000 is too large to compute",
                    rule="size",
                )
        if isinstance(node.op, ast.Mult):
            for side, other in ((node.left, node.right), (node.right, node.left)):
                factor = _constant_int(side)
                if (
                    factor is not None
                    and factor > policy.LIMITS["max_repeat_factor"]
                    and isinstance(other, ast.Constant | ast.List | ast.Tuple | ast.JoinedStr)
                    and not isinstance(getattr(other, "value", ""), int | float)
                ):
                    self._add(
                        line,
                        f"repeating a sequence {factor:,} times would exhaust memory",
                        rule="size",
                    )


def _module_aliases(body: Sequence[ast.stmt]) -> dict[str, str]:
    """Map names bound by ``import m as x`` / ``from m import n as x`` to the module path.

    A name bound anywhere else as well (assigned, a parameter, imported twice) is left
    out: the verifier then knows only the name itself, as it does without an alias.
    """
    aliases: dict[str, str] = {}
    bindings: dict[str, int] = {}

    def bind(name: str) -> None:
        bindings[name] = bindings.get(name, 0) + 1

    for statement in body:
        for node in ast.walk(statement):
            if isinstance(node, ast.Import | ast.ImportFrom):
                for alias in node.names:
                    bound = alias.asname or alias.name.split(".", maxsplit=1)[0]
                    bind(bound)
                    if alias.asname and alias.name != "*":
                        prefix = f"{node.module}." if isinstance(node, ast.ImportFrom) else ""
                        aliases[alias.asname] = f"{prefix}{alias.name}"
            elif isinstance(node, ast.Name) and not isinstance(node.ctx, ast.Load):
                bind(node.id)
            elif isinstance(node, ast.arg):
                bind(node.arg)
            elif isinstance(node, _BINDS_NAME) and node.name:
                bind(node.name)
    return {name: module for name, module in aliases.items() if bindings.get(name) == 1}


_BINDS_NAME = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.ExceptHandler)


def _module_allowed(name: str) -> bool:
    parts = name.split(".")
    return any(".".join(parts[: i + 1]) in policy.ALLOWED_MODULES for i in range(len(parts)))


def _denied_submodule(name: str) -> str | None:
    """The reason ``name`` (or a package above it) is refused although its root is allowed."""
    parts = name.split(".")
    for i in range(len(parts)):
        reason = policy.DENIED_SUBMODULES.get(".".join(parts[: i + 1]))
        if reason:
            return reason
    return None


def _is_dunder(name: str) -> bool:
    return len(name) > 4 and name.startswith("__") and name.endswith("__")


def _always_true(test: ast.expr) -> bool:
    return isinstance(test, ast.Constant) and bool(test.value)


def _constant_int(node: ast.expr) -> int | None:
    """Evaluate small constant integer arithmetic (``10**9``) without running anything."""
    if isinstance(node, ast.Constant) and type(node.value) is int:
        return node.value
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Pow | ast.Mult):
        left, right = _constant_int(node.left), _constant_int(node.right)
        if left is None or right is None or abs(left) > 10**6 or abs(right) > 64:
            return None
        return left**right if isinstance(node.op, ast.Pow) else left * right
    return None


def _can_leave(body: Sequence[ast.stmt]) -> bool:
    """Whether a loop body contains a break, return or raise that ends *this* loop."""
    for node in _walk_outside_functions(body, stop_at_loops=True):
        if isinstance(node, ast.Break | ast.Return | ast.Raise):
            return True
    # a return or raise inside an inner loop still leaves the outer one
    return any(isinstance(node, ast.Return | ast.Raise) for node in _walk_outside_functions(body))


def _walk_outside_functions(
    body: Sequence[ast.stmt], *, stop_at_loops: bool = False
) -> Iterator[ast.AST]:
    """Walk statements without entering nested functions, lambdas or classes.

    The statements of ``body`` are filtered like every other node: a function defined at
    the top of ``body`` is not walked into either. With ``stop_at_loops``, the bodies of
    nested loops are skipped (a ``break`` there ends the inner loop) but their ``else``
    clauses are walked, since those run in the enclosing loop.
    """
    stack: list[ast.AST] = list(reversed(body))
    while stack:
        node = stack.pop()
        if isinstance(node, _SCOPES):
            continue
        yield node
        if stop_at_loops and isinstance(node, ast.For | ast.AsyncFor | ast.While):
            stack.extend(reversed(node.orelse))
            continue
        stack.extend(ast.iter_child_nodes(node))


_SCOPES: tuple[type[ast.AST], ...] = (
    ast.FunctionDef,
    ast.AsyncFunctionDef,
    ast.Lambda,
    ast.ClassDef,
)
