"""Run the eval: ``.venv/bin/python -m benchmarks.evals.run [--json]``.

With ``GEOMINT_MODEL`` set (and its key, or a local OpenAI-compatible server), each
question goes to that model; without, to a scripted model that calls what each question's
script says, which proves the harness, not a model. The model sees only what any model
sees: the instructions, the tool schemas, the results and the errors.
"""

from __future__ import annotations

import asyncio
import os
import sys

from benchmarks.evals.harness import Score, as_json, run_question, table
from benchmarks.evals.questions import QUESTIONS, Question

from geomint import create_map_agent
from geomint.testing import Script


async def _ask(question: Question, model: str | None) -> Score:
    chosen = (
        model if model is not None else Script(picks=[question.picks], steps=question.steps).model()
    )
    agent = create_map_agent(chosen, store="memory:", code_execution={"mode": "isolated"})
    try:
        return await run_question(agent, question)
    finally:
        agent.close()


async def main(as_json_output: bool) -> None:
    model = os.environ.get("GEOMINT_MODEL") or None
    scores = [await _ask(q, model) for q in QUESTIONS]
    right = sum(s.right for s in scores)
    if as_json_output:
        print(as_json(scores))
        return
    print(f"model: {model or 'scripted (proves the harness, not a model)'}")
    print(table(scores))
    print(f"\n{right} of {len(scores)} right")
    for s in scores:
        if not s.right:
            print(f"- {s.id}: {'; '.join(s.wrong)}")


if __name__ == "__main__":
    asyncio.run(main("--json" in sys.argv[1:]))
