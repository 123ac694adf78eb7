"""``geomint mcp``'s overhead: a trivial tool's round trip over stdio and over streamable
HTTP, and one ``analyse_data`` call over MCP against the same call made in the agent.

Run: ``.venv/bin/python -m benchmarks.bench_mcp [--calls 200] [--analyses 20]``.

The client is the SDK's own (``mcp.Client``). stdio: ``geomint mcp`` started as a desktop
client starts it (the venv's command, a SQLite store in a temporary folder). HTTP: the same
server as ``geomint mcp --http`` (``geomint.mcp.http_app`` under uvicorn on 127.0.0.1, with
a token), in this process's other thread. The trivial tool is ``recall_state`` (it reads the
chat and changes nothing). The analysis counts the bundled stops layer and mints one figure;
"in the agent" is ``MapAgent.call_tool`` on an agent of the same settings, which is what the
MCP server calls, so the difference is the protocol and the transport. Times are wall clock
per call after warm-up calls, median and p99.
"""

from __future__ import annotations

import argparse
import asyncio
import socket
import statistics
import sys
import tempfile
import threading
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

COUNT = "mint.value(len(byod['features']), 'stops', unit='stops')\nreturn len(byod['features'])"
STOPS = {"path": "helsinki_stops.csv", "label": "stops"}
TOKEN = "bench-token"


async def _timed(call: Callable[[], Awaitable[Any]], n: int, warm: int = 3) -> list[float]:
    for _ in range(warm):
        await call()
    times = []
    for _ in range(n):
        started = time.perf_counter()
        await call()
        times.append((time.perf_counter() - started) * 1000)
    return times


def _summary(times: list[float]) -> str:
    ordered = sorted(times)
    p99 = ordered[min(len(ordered) - 1, int(len(ordered) * 0.99))]
    return f"median {statistics.median(times):.2f} ms, p99 {p99:.2f} ms (n={len(times)})"


async def _client_runs(client: Any, calls: int, analyses: int) -> tuple[list[float], list[float]]:
    trivial = await _timed(lambda: client.call_tool("recall_state", {}), calls)
    added = await client.call_tool("add_byod_layer", STOPS)
    entry = added.structured_content["entry_id"]
    analysis = {"byod_entry_ids": [entry], "name": "n", "code": COUNT}
    heavy = await _timed(lambda: client.call_tool("analyse_data", analysis), analyses, warm=2)
    return trivial, heavy


async def _stdio(calls: int, analyses: int, folder: Path) -> tuple[list[float], list[float]]:
    from mcp import Client, StdioServerParameters

    command = StdioServerParameters(
        command=str(Path(sys.executable).parent / "geomint"),
        args=["mcp", "--store", f"sqlite:///{folder / 'stdio.db'}", "--chat", "bench"],
    )
    async with Client(command) as client:
        return await _client_runs(client, calls, analyses)


async def _http(agent: Any, calls: int, analyses: int) -> tuple[list[float], list[float]]:
    import httpx2
    import uvicorn
    from mcp import Client
    from mcp.client.streamable_http import streamable_http_client

    from geomint.mcp import http_app

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    app = http_app(agent, token=TOKEN, allowed_hosts=["127.0.0.1"], chat_id="bench-http")
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="error"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    while not server.started:
        time.sleep(0.05)
    try:
        headers = {"Authorization": f"Bearer {TOKEN}"}
        async with httpx2.AsyncClient(headers=headers, timeout=120) as http:
            url = f"http://127.0.0.1:{port}/mcp"
            async with Client(streamable_http_client(url, http_client=http)) as client:
                return await _client_runs(client, calls, analyses)
    finally:
        server.should_exit = True
        thread.join(timeout=10)


async def _in_agent(agent: Any, analyses: int) -> list[float]:
    added = await agent.call_tool("bench-agent", "add_byod_layer", STOPS)
    analysis = {"byod_entry_ids": [added.result["entry_id"]], "name": "n", "code": COUNT}
    return await _timed(
        lambda: agent.call_tool("bench-agent", "analyse_data", analysis), analyses, warm=2
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--calls", type=int, default=200)
    parser.add_argument("--analyses", type=int, default=20)
    args = parser.parse_args()

    from geomint.agent import create_map_agent

    with tempfile.TemporaryDirectory() as folder:
        stdio_trivial, stdio_analysis = asyncio.run(_stdio(args.calls, args.analyses, Path(folder)))
        agent = create_map_agent("demo", store=f"sqlite:///{Path(folder) / 'http.db'}")
        try:
            agent.ready()
            http_trivial, http_analysis = asyncio.run(_http(agent, args.calls, args.analyses))
            direct = asyncio.run(_in_agent(agent, args.analyses))
        finally:
            agent.close()
    print(f"recall_state over stdio: {_summary(stdio_trivial)}")
    print(f"recall_state over HTTP:  {_summary(http_trivial)}")
    print(f"analyse_data over stdio: {_summary(stdio_analysis)}")
    print(f"analyse_data over HTTP:  {_summary(http_analysis)}")
    print(f"analyse_data in the agent (MapAgent.call_tool): {_summary(direct)}")


if __name__ == "__main__":
    main()
