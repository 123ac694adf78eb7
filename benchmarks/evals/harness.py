"""Run the eval's questions through the real agent and score each answer.

An answer is right when it holds what its question's truth asks
(:mod:`benchmarks.evals.truth`): its figures read off minted values it cites or presents,
never off a number the model typed, each within the question's tolerance; the members of
a list named; a chart's bars true; the capabilities named. Per question the harness
reports: right or not (and what a wrong answer lacks), model requests, tool calls, tool
errors, wasted calls (a call that failed, was refused, or repeated an earlier call's
arguments), the numbers the answer cited, matched and typed unminted, and the characters
of instructions and tool definitions the model was sent per request.
"""

from __future__ import annotations

import json
import time
from dataclasses import asdict, dataclass
from typing import Any

from benchmarks.evals.questions import QUESTIONS, Question
from benchmarks.evals.truth import Minted, judge

from geomint.agent import MapAgent, RunResult
from geomint.agent._prompt import INSTRUCTIONS
from geomint.agent.demo import seed_demo_chat
from geomint.provenance import Ledger
from geomint.ui import AnalysisPart, FigurePart, TextPart, figure_card

__all__ = ["Score", "as_json", "run_question", "score", "table"]


@dataclass(frozen=True)
class Score:
    """How one question went.

    ``truth`` and ``answered`` are short texts: the truth's figures and parts, and the
    figures of the answer that matched (or, when none did, those it showed). ``wrong``
    says what a wrong answer lacks.
    """

    id: str
    right: bool
    truth: str
    answered: str
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
    wrong: tuple[str, ...] = ()


def score(
    question: Question,
    result: RunResult,
    prompt_chars: int,
    seconds: float,
    ledger: Ledger | None = None,
) -> Score:
    """Score one run of ``question``; ``ledger`` (the chat's) reads the figures the answer
    cited that no card or analysis showed, such as a cell ``fetch`` minted."""
    truth = question.truth()
    shown = _shown(result, ledger)
    answer = result.rendered or result.text
    wrong, matched = judge(truth, question.tolerance, shown, answer, result.charts)
    seen: set[str] = set()
    wasted = 0
    for call in result.tool_calls:
        key = json.dumps([call["name"], call["args"]], sort_keys=True, default=str)
        if not call["ok"] or key in seen:
            wasted += 1
        seen.add(key)
    answered = matched or [m.value for m in shown]
    return Score(
        id=question.id,
        right=not wrong,
        truth=truth.summary(),
        answered=", ".join(f"{v:g}" for v in answered) or "-",
        requests=result.steps,
        tool_calls=len(result.tool_calls),
        tool_errors=sum(1 for c in result.tool_calls if not c["ok"]),
        wasted_calls=wasted,
        cited=result.cited,
        matched=result.matched,
        unminted=result.unminted,
        prompt_chars_per_request=prompt_chars,
        seconds=round(seconds, 2),
        answer=answer,
        wrong=tuple(wrong),
    )


def _shown(result: RunResult, ledger: Ledger | None = None) -> list[Minted]:
    """The numeric figures the answer presented as cards or cited, each once."""
    cited = {
        s.ref
        for p in result.parts
        if isinstance(p, TextPart)
        for s in p.segments
        if s.state == "cited" and s.ref
    }
    cards = {card.id: card for p in result.parts if isinstance(p, FigurePart) for card in p.figures}
    for part in result.parts:
        if isinstance(part, AnalysisPart):
            cards.update({card.id: card for card in part.figures if card.id in cited})
    if ledger is not None:
        for value_id in sorted(cited - set(cards)):
            found = next((v for v in ledger.values if v.id == value_id), None)
            if found is not None:
                cards[value_id] = figure_card(found)
    return [
        Minted(card.label, float(card.value))
        for card in cards.values()
        if isinstance(card.value, int | float) and not isinstance(card.value, bool)
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
    return score(question, result, surface, seconds, agent.chats.open(chat_id).ledger)


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
            f"| {s.id} | {'yes' if s.right else 'NO'} | {s.truth} | {s.answered} | "
            f"{s.requests} | {s.tool_calls} | {s.tool_errors} | {s.wasted_calls} | {s.cited} | "
            f"{s.matched} | {s.unminted} | {s.prompt_chars_per_request:,} |"
        )
    return "\n".join(lines)


def as_json(scores: list[Score]) -> str:
    return json.dumps([asdict(s) for s in scores], ensure_ascii=False, indent=1)


QUESTION_IDS = tuple(q.id for q in QUESTIONS)
