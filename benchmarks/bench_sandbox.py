"""Measure the sandbox side by side: in-process lower bound, each mode, a cold spawn.

Run: ``.venv/bin/python benchmarks/bench_sandbox.py [--calls 200] [--big]``. Prints a
Markdown table for docs/performance.md. Timings on a shared 2-core VM are noisy: read
them as medians and ratios, and run twice.

On this VM the first touch of each page of fresh memory is slow (about 16 s for 6 GB,
against 0.8 s for a page touched moments before), and freed memory is soon handed back
to the hypervisor, so the big-input rows swing with it. ``--big`` measures that cost
first, so a reader can tell the machine's share from the sandbox's.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import platform
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from typing import Any

from geomint.sandbox import Entry, Sandbox
from geomint.sandbox._runtime import load_libraries
from geomint.sandbox.prepare import compile_body

TRIVIAL = "return 1 + 1"
SMALL_INPUTS = {"threshold": 3, "names": ["a", "b", "c"]}
NUMERIC = "s = 0\nfor i in range(2_000_000):\n    s += i * i % 7\nreturn s"
rows: list[tuple[str, str, str]] = []


def _pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def _row(what: str, value: str, note: str = "") -> None:
    rows.append((what, value, note))
    print(f"{what:58} {value:>24}  {note}", flush=True)


def _series(fn: Callable[[], Any], calls: int, pause_s: float) -> list[float]:
    times = []
    for _ in range(calls):
        if pause_s:
            time.sleep(pause_s)
        started = time.perf_counter()
        fn()
        times.append((time.perf_counter() - started) * 1000)
    return times


def lower_bound(calls: int) -> float:
    """A compiled body called in this process: the floor every mode is compared to."""
    libraries = load_libraries()
    names = [*libraries, "mint", *SMALL_INPUTS]
    namespace: dict[str, Any] = {}
    exec(compile(compile_body(TRIVIAL, names), "<code>", "exec"), namespace)
    function = namespace["__geomint_body__"]
    args = [*libraries.values(), None, *SMALL_INPUTS.values()]

    def call() -> None:
        with contextlib.suppress(StopIteration):
            function(*args).send(None)

    times = _series(call, calls, 0)
    median = statistics.median(times)
    _row("in-process lower bound (compiled body, called)", f"{median * 1000:.1f} µs median")
    return median


def round_trips(mode: str, calls: int, floor_ms: float) -> None:
    with Sandbox(mode=mode) as sandbox:  # type: ignore[arg-type]
        sandbox.run(TRIVIAL, SMALL_INPUTS)
        paused = _series(lambda: sandbox.run(TRIVIAL, SMALL_INPUTS), calls, 0.02)
        back = _series(lambda: sandbox.run(TRIVIAL, SMALL_INPUTS), max(20, calls // 4), 0)
    median = statistics.median(paused)
    _row(
        f"`Sandbox.run` {mode}, 20 ms apart: median / p99",
        f"{median:.2f} / {_pct(paused, 0.99):.2f} ms",
        f"{median / floor_ms:,.0f}x floor",
    )
    _row(
        f"`Sandbox.run` {mode}, back to back: median / p99",
        f"{statistics.median(back):.2f} / {_pct(back, 0.99):.2f} ms",
    )


def start_up() -> None:
    started = time.perf_counter()
    with Sandbox() as sandbox:
        result = sandbox.run(TRIVIAL)
        first = (time.perf_counter() - started) * 1000
        mode = result.mode
    _row(f"`Sandbox()` to first result ({mode})", f"{first:.0f} ms", "target <= 1,500 ms")
    with Sandbox() as sandbox:
        sandbox.start()
        time.sleep(2.0)  # the application does other work meanwhile
        started = time.perf_counter()
        sandbox.run(TRIVIAL)
        _row(
            "first result after `start()` and 2 s of other work",
            f"{(time.perf_counter() - started) * 1000:.1f} ms",
        )


def cold_spawn() -> None:
    code = "import numpy, pandas, shapely, h3, pyproj, geopandas; print(1 + 1)"
    times = _series(
        lambda: subprocess.run(
            [sys.executable, "-c", code],
            check=True,
            capture_output=True,
        ),
        5,
        0,
    )
    _row("cold `python` spawn importing the same libraries", f"{statistics.median(times):.0f} ms")


def numeric_loop() -> None:
    results = {}
    for mode in ("in-process", "isolated"):
        with Sandbox(mode=mode, timeout_s=60) as sandbox:  # type: ignore[arg-type]
            sandbox.run(TRIVIAL)
            times = _series(lambda s=sandbox: s.run(NUMERIC), 5, 0.05)  # type: ignore[misc]
            results[mode] = statistics.median(times)
    ratio = results["isolated"] / results["in-process"]
    _row(
        "numeric loop (2M iterations), isolated / in-process",
        f"{results['isolated']:.0f} / {results['in-process']:.0f} ms",
        f"{ratio:.2f}x (target <= 1.2x)",
    )


def arun_concurrency() -> None:
    async def many(sandbox: Sandbox) -> float:
        started = time.perf_counter()
        await asyncio.gather(*(sandbox.arun(TRIVIAL) for _ in range(20)))
        return (time.perf_counter() - started) * 1000

    with Sandbox() as sandbox:
        sandbox.run(TRIVIAL)
        _row(
            "20 concurrent `arun` calls (one sandbox, serialised)",
            f"{asyncio.run(many(sandbox)):.0f} ms",
        )


def points(n: int) -> dict[str, Any]:
    import numpy as np

    rng = np.random.default_rng(7)
    xs, ys = rng.uniform(13.0, 13.8, n), rng.uniform(52.3, 52.7, n)
    cats = ["cafe", "park", "museum", "school"]
    return {"type": "FeatureCollection", "features": [
        {"type": "Feature", "geometry": {"type": "Point", "coordinates": [float(x), float(y)]},
         "properties": {"id": i, "category": cats[i % 4], "rating": float(i % 50) / 10}}
        for i, (x, y) in enumerate(zip(xs, ys, strict=True))
    ]}  # fmt: skip


AS_FRAME = "fc = places_by_entry['places-1']\ngdf = fc.to_geodataframe()\nreturn int(len(gdf))"
# "Reaches the code": the collection is built and its first and last features are read;
# what the code then does with a million features is its own cost, not the sandbox's.
AS_DICTS = (
    "features = places_by_entry['places-1']['features']\n"
    "assert features[0]['properties']['id'] == 0 and features[-1]['geometry']['type'] == 'Point'\n"
    "return len(features)"
)


def memory_does_not_slow_calls() -> None:
    """Round trips on one sandbox before and after it served a 1M-point layer."""
    layer = Entry(id="places-1", version=1, data=points(1_000_000))
    with Sandbox(timeout_s=60, memory_mb=4096) as sandbox:
        sandbox.run(TRIVIAL)
        before = _series(lambda: sandbox.run(TRIVIAL, SMALL_INPUTS), 100, 0.02)
        assert sandbox.run(AS_DICTS, {"places_by_entry": {"places-1": layer}}).ok
        sandbox.run(TRIVIAL)
        after = _series(lambda: sandbox.run(TRIVIAL, SMALL_INPUTS), 100, 0.02)
    _row(
        "round trip before / after serving a 1M-point layer (median)",
        f"{statistics.median(before):.2f} / {statistics.median(after):.2f} ms",
    )


def touch_memory(gigabytes: int) -> None:
    """Time the first touch of fresh memory in a throwaway process (see the docstring)."""
    code = f"import numpy as np; np.ones({gigabytes} * 2**30 // 8)"
    started = time.perf_counter()
    subprocess.run([sys.executable, "-c", code], check=True)
    _row(f"first touch of {gigabytes} GB of fresh memory (the VM's cost, not the sandbox's)",
         f"{time.perf_counter() - started:.1f} s")  # fmt: skip


def big_inputs() -> None:
    for n, label in ((100_000, "100k"), (1_000_000, "1M")):
        layer = points(n)
        for body, kind in ((AS_FRAME, "GeoDataFrame"), (AS_DICTS, "dicts")):
            with Sandbox(timeout_s=60, memory_mb=4096) as sandbox:
                sandbox.run(TRIVIAL)
                entry = Entry(id="places-1", version=1, data=layer)
                inputs = {"places_by_entry": {"places-1": entry}}
                started = time.perf_counter()
                first = sandbox.run(body, inputs)
                first_ms = (time.perf_counter() - started) * 1000
                assert first.ok and first.value == n, first.error
                time.sleep(3.0)
                started = time.perf_counter()
                second = sandbox.run(body, inputs)
                second_ms = (time.perf_counter() - started) * 1000
                assert second.ok, second.error
                _row(
                    f"{label} points as {kind}: first call / same version after 3 s",
                    f"{first_ms:.0f} / {second_ms:.0f} ms",
                    f"{second_ms / first_ms:.2f} of first",
                )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--calls", type=int, default=200)
    parser.add_argument("--big", action="store_true", help="also measure 100k and 1M points")
    args = parser.parse_args()
    print(
        f"# {platform.node()} {platform.machine()} {os.cpu_count()} cores, Python "
        f"{platform.python_version()}, {time.strftime('%Y-%m-%d')}"
    )
    floor = lower_bound(args.calls * 5)
    for mode in ("in-process", "restricted", "isolated"):
        round_trips(mode, args.calls, floor)
    start_up()
    cold_spawn()
    numeric_loop()
    arun_concurrency()
    if args.big:
        touch_memory(6)
        big_inputs()
        memory_does_not_slow_calls()
    print("\n| What | Measured | Note |\n|---|---|---|")
    for what, value, note in rows:
        print(f"| {what} | {value} | {note} |")


if __name__ == "__main__":
    main()
