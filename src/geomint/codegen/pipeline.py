"""From an intent to a verified map diff: skills, prompt, generate, dry-run, validate, retry.

:func:`generate_verified_map_code` is the whole pipeline. The code (given, or written by a
second model call) runs in the sandbox against a recording ``mapview``; its calls are
replayed and the diff they make is checked (:mod:`geomint.codegen.verify`). Whatever was
wrong (Gate 1's violations, the runtime error, every specification violation) goes back to
the model as data for the next attempt, up to ``max_retries`` times, and then the failure
says what stayed wrong. Nothing here touches a store or the page.
"""

from __future__ import annotations

import ast
import re
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final

from pydantic_ai.models import Model

from geomint.codegen.prompt import build_prompt
from geomint.codegen.skills import match_skills
from geomint.codegen.verify import Verified, verify_ops
from geomint.models import TurnBudget, Usage, second_call
from geomint.sandbox import Sandbox, SandboxResult

__all__ = [
    "Attempt",
    "MapCodeOutcome",
    "TurnBudget",
    "Usage",
    "generate_verified_map_code",
]

_FENCE: Final = re.compile(r"```(?:python|py)?[ \t]*\n(.*?)```", re.DOTALL)
_MAX_CODE: Final = 20_000
#: Characters of an answer read for code: a body is at most _MAX_CODE, with room for prose.
_MAX_ANSWER: Final = 100_000


@dataclass(frozen=True, kw_only=True)
class Attempt:
    """One body tried.

    Attributes:
        code: The body.
        problem: What was wrong with it (None for the one that passed).
        generated: Whether a model wrote it (False for code the caller gave).
    """

    code: str
    problem: str | None = None
    generated: bool = True


@dataclass(frozen=True, kw_only=True)
class MapCodeOutcome:
    """What the pipeline ended with.

    Attributes:
        verified: The verified diff, or None when every attempt failed.
        attempts: Every body tried, in order.
        usage: The second model's cost for this change.
        skills: The skills matched, best first.
        prompt_chars: Characters of the last generation prompt (0 when none was made),
            and ``skill_chars`` of those the skills took.
        timings: ``generate_ms``, ``dry_run_ms``, ``validate_ms`` summed over attempts.
        error: Why it failed, saying what stayed wrong (None on success).
    """

    verified: Verified | None
    attempts: tuple[Attempt, ...]
    usage: Usage
    skills: tuple[str, ...] = ()
    prompt_chars: int = 0
    skill_chars: int = 0
    timings: Mapping[str, float] = field(default_factory=dict)
    error: str | None = None

    @property
    def code(self) -> str:
        """The last body tried (the verified one on success)."""
        return self.attempts[-1].code if self.attempts else ""


Progress = Callable[[str], None]


async def generate_verified_map_code(
    *,
    intent: str,
    style: Mapping[str, Any],
    entries: Sequence[Mapping[str, Any]],
    inputs: Mapping[str, Any],
    sandbox: Sandbox,
    model: Model | None,
    code: str | None = None,
    max_retries: int = 3,
    budget: TurnBudget | None = None,
    progress: Progress | None = None,
) -> MapCodeOutcome:
    """Turn an intent (or a body the caller wrote) into a verified map diff.

    Args:
        intent: What should change on the map, in the person's terms.
        style: The map as ``mapview`` sees it (geomint's sources and layers marked).
        entries: Digests of the entries the intent concerns, for the prompt.
        inputs: The sandbox inputs (entries by kind, as the data tools get them).
        sandbox: Where the code runs.
        model: The model that writes the code; None to only check ``code``.
        code: A body already written; generation starts only if it fails.
        max_retries: Further bodies to ask for after the first fails.
        budget: The turn's cap on generation; a call over it is not made.
        progress: Called with a few words at each step.
    """
    say = progress or (lambda _: None)
    usage = Usage()
    timings = {"generate_ms": 0.0, "dry_run_ms": 0.0, "validate_ms": 0.0}
    skills = [skill for skill, _ in match_skills(intent)] if code is None or model else []
    attempts: list[Attempt] = []
    prompt_chars = skill_chars = 0

    def ended(verified: Verified | None, error: str | None) -> MapCodeOutcome:
        return MapCodeOutcome(
            verified=verified, attempts=tuple(attempts), usage=usage,
            skills=tuple(s.name for s in skills), prompt_chars=prompt_chars,
            skill_chars=skill_chars, timings=timings, error=error,
        )  # fmt: skip

    for number in range(max_retries + 1):
        if number == 0 and code is not None:
            body, generated = code, False
        else:
            if model is None:
                break
            refused = budget.refusal() if budget is not None else None
            if refused is not None:
                return ended(None, f"{refused}; the map was not changed")
            system, user = build_prompt(
                intent=intent,
                skills=skills,
                style=style,
                entries=entries,
                previous=[(a.code, a.problem or "") for a in attempts],
            )
            prompt_chars = len(system) + len(user)
            skill_chars = sum(len(s.body) for s in skills)
            say(f"writing map code (attempt {number + 1})")
            started = time.perf_counter()
            text, call_usage = await second_call(model, system=system, user=user)
            timings["generate_ms"] += (time.perf_counter() - started) * 1000
            usage.add(call_usage)
            if budget is not None:
                budget.spend(call_usage)
            body, generated = extract_code(text), True
        say("checking the map code")
        problem, verified = await _check(body, style, inputs, sandbox, timings)
        attempts.append(Attempt(code=body, problem=problem, generated=generated))
        if verified is not None:
            return ended(verified, None)
    # What the last body with code in it got wrong (a later answer in prose holds none).
    written = [a for a in attempts if a.code.strip()]
    last = (
        (written or attempts)[-1].problem
        if attempts
        else "no code was given and no model can write it"
    )
    tried = len(attempts)
    return ended(
        None,
        f"the map code was refused {tried} time{'s' * (tried != 1)}; what stayed wrong: {last}",
    )


async def _check(
    body: str,
    style: Mapping[str, Any],
    inputs: Mapping[str, Any],
    sandbox: Sandbox,
    timings: dict[str, float],
) -> tuple[str | None, Verified | None]:
    if not body.strip():
        return "the answer held no code: answer with the body in one ```python block", None
    if len(body) > _MAX_CODE:
        return f"the code is {len(body):,} characters; keep it under {_MAX_CODE:,}", None
    result = await sandbox.arun(body, inputs, mapview=style)
    timings["dry_run_ms"] += result.duration_ms
    if not result.ok:
        return _run_problem(result), None
    if not result.map_ops:
        return "the code made no change to the map: call mapview's methods", None
    started = time.perf_counter()
    checked = verify_ops(style, [op.model_dump() for op in result.map_ops])
    timings["validate_ms"] += (time.perf_counter() - started) * 1000
    if isinstance(checked, Verified):
        return None, checked
    return "\n".join(f"- {v}" for v in checked[:30]), None


def _run_problem(result: SandboxResult) -> str:
    if result.violations:
        text = "\n".join(f"- {v}" for v in result.violations)
        return f"Gate 1 refused the code before it ran:\n{text}"
    hint = result.hint
    if hint is not None and "_entry_ids" in hint:
        # The data tools' hint names their arguments; map code has one list for all kinds.
        hint = (
            "only the entries in execute_map_code's entry_ids reach the code (as `<kind>` "
            "and `<kind>_by_entry`); the other kinds are None. Name every entry the change "
            "reads in entry_ids, or guard with `if places:` before using one"
        )
    said = f"\nHint: {hint}" if hint else ""
    return f"the code failed when it ran: {result.error}{said}"


def extract_code(text: str) -> str:
    """The body in a model's answer: the first fenced block, else the whole text when it
    parses as Python, else nothing (an answer in prose holds no code)."""
    if len(text) > _MAX_ANSWER:
        text = text[:_MAX_ANSWER]
    found = _FENCE.search(text)
    if found:
        return found.group(1).strip("\n")
    try:
        ast.parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        # A hostile answer can nest past the parser's stack; it holds no usable code.
        return ""
    return text.strip("\n")
