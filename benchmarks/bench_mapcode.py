"""Measure the map-code pipeline (issue 19) with the scripted models, model time excluded.

Run: ``.venv/bin/python benchmarks/bench_mapcode.py [--runs 20]``. For each of the demo's
four map-code intents over the demo chat, in the isolated sandbox (warm): intent to a
verified diff (skills, prompt, the scripted second model, Gate 1, the dry run, replay and
validation), and its parts: the dry run in the sandbox and the validation. Then the
generation prompt's size with and without the matched skills. Prints Markdown rows for
docs/performance.md. Timings on a shared 2-core VM are noisy: read the medians.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import time
from typing import Any

from geomint.agent import create_map_agent
from geomint.agent.demo import seed_demo_chat
from geomint.codegen.pipeline import generate_verified_map_code
from geomint.codegen.prompt import build_prompt
from geomint.codegen.skills import match_skills
from geomint.codegen.style import current_style
from geomint.models.demo import DemoModel
from geomint.tools._analysis import entry_ids_by_kind, gather_inputs
from geomint.tools.mapcode import _digest

INTENTS = (
    ("heatmap of the cafés", "places"),
    ("extrude the parks by their area", "geometries"),
    ("animate the route from start to end", "routes"),
    ("a hexagon density surface of the restaurants as an overlay", "places"),
)


def _pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


async def main(runs: int) -> None:
    agent = create_map_agent("demo", store="memory:", code_execution={"mode": "auto"})
    try:
        chat = await seed_demo_chat(agent)
        await agent.run("Route from the central station to the cathedral", chat_id=chat)
        ctx = agent.context(chat, "bench")
        model = DemoModel()
        print(f"sandbox: {agent.code_execution_mode}; load {os.getloadavg()[0]:.1f}; "
              f"{runs} runs each, the first (cold) left out\n")  # fmt: skip
        print("| intent | intent → verified diff (ms) | dry run (ms) | validation (ms) |"
              " prompt chars (skills) |")  # fmt: skip
        print("|---|---:|---:|---:|---:|")
        for intent, kind in INTENTS:
            entry_id = next(e for e in ctx.workspace.entries if e.startswith(f"{kind}-"))
            inputs, _ = gather_inputs(ctx, entry_ids_by_kind([entry_id]))
            style = current_style(ctx.workspace)
            digests = [_digest(ctx, entry_id)]
            total: list[float] = []
            dry: list[float] = []
            check: list[float] = []
            outcome: Any = None
            for index in range(runs + 1):
                started = time.perf_counter()
                outcome = await generate_verified_map_code(
                    intent=intent, style=style, entries=digests, inputs=inputs,
                    sandbox=agent.sandbox, model=model,
                )  # fmt: skip
                elapsed = (time.perf_counter() - started) * 1000
                assert outcome.verified is not None, outcome.error
                if index:  # the first run pays the skills index and imports
                    total.append(elapsed - outcome.timings["generate_ms"])
                    dry.append(outcome.timings["dry_run_ms"])
                    check.append(outcome.timings["validate_ms"])
            system, user = build_prompt(intent=intent, skills=[], style=style, entries=digests)
            bare = len(system) + len(user)
            print(
                f"| {intent} | {statistics.median(total):.0f} (p90 {_pct(total, 0.9):.0f}) "
                f"| {statistics.median(dry):.1f} | {statistics.median(check):.1f} "
                f"| {outcome.prompt_chars:,} ({bare:,} without skills) |"
            )
        print("\nskills matched:", {i: [s.name for s, _ in match_skills(i)] for i, _ in INTENTS})
    finally:
        agent.close()


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=20)
    asyncio.run(main(parser.parse_args().runs))
