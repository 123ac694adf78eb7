"""What exporting a long chat as a notebook costs, and replaying it against the original.

Run: ``.venv/bin/python benchmarks/bench_replay.py``. One chat is built by asking the demo
prompts (the scripted demo model, the real tools, isolated sandbox and a SQLite store) in
order until it holds 50 turns, timing each turn. Then:

- *export*: ``geomint.replay.export_chat`` to a notebook and its inputs (median of three);
- *replay*: ``open_replay`` (every input hashed) and every analysis re-run in the sandbox
  and checked, through the API the script uses (one cold run, sandbox start included);
- *notebook*: the exported notebook executed by nbclient with ipykernel (kernel start
  included), as a person or CI runs it;
- *original*: the 50 turns' wall time, which includes the same analyses and everything
  else a turn does (the model's steps, fetches, the store's appends).
"""

from __future__ import annotations

import asyncio
import statistics
import tempfile
import time
from pathlib import Path

import nbformat
from nbclient import NotebookClient

from geomint import create_map_agent
from geomint.agent.demo import seed_demo_chat
from geomint.models.demo import DEMO_PROMPTS
from geomint.replay import export_chat, open_replay
from geomint.state import AnalysisRecorded
from geomint.store import Chats

TURNS = 50


async def _build(store: str) -> tuple[Chats, str, float]:
    agent = create_map_agent("demo", store=store, require_approval=[])
    chat_id = await seed_demo_chat(agent, "bench")
    prompts = [p.text for p in DEMO_PROMPTS if not p.needs_page]
    spent = 0.0
    for turn in range(TURNS):
        started = time.perf_counter()
        await agent.run(prompts[turn % len(prompts)], chat_id=chat_id)
        spent += time.perf_counter() - started
    return agent.chats, chat_id, spent


def main() -> None:
    with tempfile.TemporaryDirectory() as folder:
        out = Path(folder)
        chats, chat_id, original = asyncio.run(_build(str(out / "chats.db")))
        analyses = sum(isinstance(e.body, AnalysisRecorded) for e in chats.trace(chat_id))
        times = []
        for _ in range(3):
            started = time.perf_counter()
            inputs = export_chat(chats, chat_id, out / "chat.ipynb", "notebook")
            times.append(time.perf_counter() - started)
        size = sum(p.stat().st_size for p in inputs.rglob("*") if p.is_file())

        started = time.perf_counter()
        replay = open_replay(inputs, magic=False)
        for analysis_id in replay.manifest["analyses"]:
            replay.run(analysis_id)
        replayed = time.perf_counter() - started
        reproduced = sum(r.reproduced for r in replay.reports.values())
        replay.close()

        notebook = nbformat.read(out / "chat.ipynb", as_version=4)
        started = time.perf_counter()
        NotebookClient(
            notebook, timeout=600, kernel_name="python3", resources={"metadata": {"path": out}}
        ).execute()
        executed = time.perf_counter() - started

    print(f"{TURNS} turns, {analyses} analyses ({reproduced} reproduced), inputs {size:,} bytes")
    print(f"original turns        {original:8.2f} s")
    print(f"export (median of 3)  {statistics.median(times):8.2f} s")
    print(f"replay, API           {replayed:8.2f} s")
    print(f"notebook, nbclient    {executed:8.2f} s")


if __name__ == "__main__":
    main()
