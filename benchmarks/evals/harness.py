"""Run the eval's questions through the real agent and score each answer.

An answer is right when a figure it cites or presents (a minted value, never a number the
model typed) is within the question's tolerance of the truth. Per question the harness
reports: right or not, model requests, tool calls, tool errors, wasted calls (a call that
failed, was refused, or repeated an earlier call's arguments), the numbers the answer
cited, matched and typed unminted, and the characters of instructions and tool
definitions the model was sent per request.
"""

from __future__ import annotations

import json
import time
from dataclasses import asdict, dataclass
from typing import Any

from benchmarks.evals.questions import QUESTIONS, Question

from geomint.agent import MapAgent, RunResult
from geomint.agent._prompt import INSTRUCTIONS
from geomint.agent.demo import seed_demo_chat
from geomint.ui import AnalysisPart, FigurePart, TextPart

__all__ = ["Score", "run_question", "score"]


@dataclass(frozen=True)
class Score:
    """How one question went."""

    id: str
    right: bool
    truth: float
    answered: float | None
    requests: int
    tool_calls: int
    tool_errors: int
    wasted_calls: int
    cited: int
    matched: int
    unminted: int
    prompt_chars_per_request: int
    seconds: float
    answer: str


def score(question: Question, result: RunResult, prompt_chars: int, seconds: float) -> Score:
    """Score one run of ``question``."""
    truth = question.truth()
    figures = {
        card.id: card for p in result.parts if isinstance(p, FigurePart) for card in p.figures
    }
    cited = [
        s.ref
        for p in result.parts
        if isinstance(p, TextPart)
        for s in p.segments
        if s.state == "cited" and s.ref
    ]
    candidates = [figures[i].value for i in figures] + _cited_values(result, cited)
    numbers = [
        float(v) for v in candidates if isinstance(v, int | float) and not isinstance(v, bool)
    ]
    close = [n for n in numbers if abs(n - truth) <= question.tolerance * abs(truth) + 1e-9]
    seen: set[str] = set()
    wasted = 0
    for call in result.tool_calls:
        key = json.dumps([call["name"], call["args"]], sort_keys=True, default=str)
        if not call["ok"] or key in seen:
            wasted += 1
        seen.add(key)
    return Score(
        id=question.id,
        right=bool(close),
        truth=round(truth, 4),
        answered=(close or numbers or [None])[0],
        requests=result.steps,
        tool_calls=len(result.tool_calls),
        tool_errors=sum(1 for c in result.tool_calls if not c["ok"]),
        wasted_calls=wasted,
        cited=result.cited,
        matched=result.matched,
        unminted=result.unminted,
        prompt_chars_per_request=prompt_chars,
        seconds=round(seconds, 2),
        answer=result.rendered or result.text,
    )


def _cited_values(result: RunResult, cited: list[str]) -> list[Any]:
    """The values of the figures an answer cited, from the analyses that minted them."""
    return [
        card.value
        for part in result.parts
        if isinstance(part, AnalysisPart)
        for card in part.figures
        if card.id in cited
    ]


async def run_question(agent: MapAgent, question: Question) -> Score:
    """Ask ``question`` in a fresh chat holding the demo data, and score the answer."""
    chat_id = await seed_demo_chat(agent)
    started = time.perf_counter()
    result = await agent.run(question.text, chat_id=chat_id)
    seconds = time.perf_counter() - started
    tools = agent.tools_for(_classification(agent, result))
    surface = len(INSTRUCTIONS) + sum(
        len(e.description) + len(json.dumps(e.input_schema.model_json_schema()))
        for e in tools.values()
    )
    return score(question, result, surface, seconds)


def _classification(agent: MapAgent, result: RunResult) -> Any:
    from geomint.agent.classifier import Classification

    chosen = result.classification
    if chosen is None:
        return None
    scopes = {
        name: agent.registry[name].scope_schema.model_validate(scope)  # type: ignore[union-attr]
        for name, scope in chosen["scopes"].items()
        if name in agent.registry and agent.registry[name].scope_schema is not None
    }
    return Classification(active=tuple(chosen["active"]), scopes=scopes)


def table(scores: list[Score]) -> str:
    """The scores as a markdown table."""
    head = (
        "| question | right | truth | answered | requests | tool calls | tool errors | "
        "wasted calls | cited | matched | unminted | prompt chars / request |"
    )
    lines = [head, "|" + "---|" * 12]
    for s in scores:
        lines.append(
            f"| {s.id} | {'yes' if s.right else 'NO'} | {s.truth:g} | {s.answered} | "
            f"{s.requests} | {s.tool_calls} | {s.tool_errors} | {s.wasted_calls} | {s.cited} | "
            f"{s.matched} | {s.unminted} | {s.prompt_chars_per_request:,} |"
        )
    return "\n".join(lines)


def as_json(scores: list[Score]) -> str:
    return json.dumps([asdict(s) for s in scores], ensure_ascii=False, indent=1)


QUESTION_IDS = tuple(q.id for q in QUESTIONS)
