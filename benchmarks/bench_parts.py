"""What projecting a chat's events into typed UI parts costs, live and read back.

Run: ``.venv/bin/python benchmarks/bench_parts.py``. One chat is built by asking every
demo prompt (the scripted demo model, the real tools, sandbox and store) round after round
until it holds about 2,000 events. Then, on the memory store and on SQLite:

- *read back*: ``chat_parts`` over the whole chat, what ``GET /api/chats/{id}/parts`` does
  (median of five);
- *live*: a run's stream projects each append as it is stored (``Projector``); here each
  stored event is projected on its own, in order, and the median and the 99th percentile
  per event are reported (events that need the chat's state, such as an analysis's figure
  cards, fold it first; the rest do not).
"""

from __future__ import annotations

import asyncio
import statistics
import tempfile
import time

from geomint import create_map_agent
from geomint.agent.demo import seed_demo_chat
from geomint.models.demo import DEMO_PROMPTS
from geomint.state import Workspace
from geomint.store import Chats
from geomint.ui import Projector, chat_parts

TARGET_EVENTS = 2_000


async def _build(store: str) -> tuple[Chats, str]:
    agent = create_map_agent("demo", store=store, require_approval=[])
    chat_id = await seed_demo_chat(agent, "bench")
    while agent.chats.open(chat_id).last_seq < TARGET_EVENTS:
        for prompt in DEMO_PROMPTS:
            await agent.run(prompt.text, chat_id=chat_id)
    return agent.chats, chat_id


def _read_back_ms(chats: Chats, chat_id: str, runs: int = 5) -> float:
    times = []
    for _ in range(runs):
        started = time.perf_counter()
        chat_parts(chats, chat_id)
        times.append((time.perf_counter() - started) * 1000)
    return statistics.median(times)


def _live_us(chats: Chats, chat_id: str) -> tuple[float, float]:
    projector = Projector(chats, Workspace(chat_id=chat_id))
    times = []
    for event in chats.trace(chat_id):
        started = time.perf_counter()
        projector.project([event])
        times.append((time.perf_counter() - started) * 1e6)
    times.sort()
    return statistics.median(times), times[int(len(times) * 0.99)]


def main() -> None:
    print(
        "| store | events | parts | read back (median) | per event | live per event: median, p99 |"
    )
    print("|---|---:|---:|---:|---:|---:|")
    with tempfile.TemporaryDirectory() as folder:
        for name, url in (("memory", "memory:"), ("SQLite", f"sqlite:///{folder}/bench.db")):
            chats, chat_id = asyncio.run(_build(url))
            events = chats.open(chat_id).last_seq
            parts = len(chat_parts(chats, chat_id))
            read = _read_back_ms(chats, chat_id)
            median, p99 = _live_us(chats, chat_id)
            print(
                f"| {name} | {events:,} | {parts:,} | {read:.0f} ms | "
                f"{read * 1000 / events:.0f} µs | {median:.0f} µs, {p99:,.0f} µs |"
            )


if __name__ == "__main__":
    main()
