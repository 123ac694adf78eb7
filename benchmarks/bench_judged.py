"""What judging a provider's answer and a search area in intake's child costs a tool call.

Run: ``.venv/bin/python benchmarks/bench_judged.py``. Every answer that becomes an entry,
and every ``where`` area, goes through intake's confined child before the host computes on
it (``geomint.tools._judged``); this measures the median of ten calls with the reader
already up: the bundled 1,346 places as one answer, and the bundled park outlines as one
search area (each made valid, then unioned).
"""

from __future__ import annotations

import asyncio
import statistics
import time
from collections.abc import Awaitable, Callable
from typing import Any

from geomint.providers import bundled
from geomint.providers.base import Found
from geomint.tools._judged import judged_answer, judged_area


async def _median_ms(call: Callable[[], Awaitable[Any]], runs: int = 10) -> float:
    await call()  # the reader is up
    times = []
    for _ in range(runs):
        started = time.perf_counter()
        await call()
        times.append((time.perf_counter() - started) * 1000)
    return statistics.median(times)


async def main() -> None:
    places = Found(data=bundled.demo_places(), sources=(), provider="bench", endpoint="")
    parks = [f["geometry"] for f in bundled.demo_boundaries()["features"]]
    answer = await _median_ms(lambda: judged_answer(places))
    area = await _median_ms(lambda: judged_area(parks, "the parks"))
    print("| what is judged | median |")
    print("|---|---|")
    print(f"| an answer of {len(places.data['features']):,} places | {answer:.1f} ms |")
    print(f"| a search area of {len(parks)} park outlines, unioned | {area:.1f} ms |")


if __name__ == "__main__":
    asyncio.run(main())
