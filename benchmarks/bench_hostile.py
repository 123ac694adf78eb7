"""What each hostile input of the red team's costs the application process, after the fix.

Run: ``.venv/bin/python benchmarks/bench_hostile.py``. For each input it measures, in this
process (the host): the wall time until the call returns, the CPU time the host itself
spent (``getrusage(RUSAGE_SELF)``, so a confined child's work is not in it), and the growth
of the host's peak resident memory (``VmHWM``, reset before each row through
``/proc/self/clear_refs``). Prints a Markdown table for docs/performance.md.
"""

from __future__ import annotations

import json
import math
import resource
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from geomint.intake import IntakeError, load
from geomint.sandbox import Sandbox

rows: list[tuple[str, str, str, str, str]] = []


def _peak_kb() -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1])
    return 0


def _reset_peak() -> None:
    Path("/proc/self/clear_refs").write_text("5")


def _cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def measure(what: str, action: Callable[[], str]) -> None:
    _reset_peak()
    before_kb, cpu, started = _peak_kb(), _cpu(), time.perf_counter()
    outcome = action()
    wall, host_cpu = time.perf_counter() - started, _cpu() - cpu
    grown = max(0, _peak_kb() - before_kb) / 1024
    rows.append((what, f"{wall:.2f} s", f"{host_cpu:.2f} s", f"{grown:.0f} MB", outcome))
    print(f"{what:<48} wall {wall:6.2f} s  host cpu {host_cpu:5.2f} s  +{grown:5.0f} MB  {outcome}")


def refused(source: Any, **options: Any) -> str:
    try:
        load(source, **options)
    except IntakeError as exc:
        return "IntakeError: " + exc.problems[0][:70]
    return "accepted"


def nested_wkt_csv(depth: int) -> bytes:
    wkt = "GEOMETRYCOLLECTION (" * depth + "POINT (1 2)" + ")" * depth
    return f'name,wkt\na,"{wkt}"\n'.encode()


def star(n: int = 301) -> bytes:
    step = n // 2 - 1
    ring = [
        [13.4 + 0.01 * math.cos(2 * math.pi * (i * step % n) / n),
         52.5 + 0.01 * math.sin(2 * math.pi * (i * step % n) / n)]
        for i in range(n)
    ]  # fmt: skip
    ring.append(ring[0])
    feature = {"type": "Feature", "properties": {}, "geometry": {"type": "Polygon",
               "coordinates": [ring]}}  # fmt: skip
    return json.dumps({"type": "FeatureCollection", "features": [feature]}).encode()


def sandbox_call(sandbox: Sandbox, code: str) -> str:
    result = sandbox.run(code)
    if result.ok:
        return f"ok: {str(result.value)[:60]}"
    assert result.error is not None
    return f"{result.error.type}: {result.error.message[:60]}"


# The red team's way to the real os module past the runtime's import guard (Gate 1 off).
MEMFD = """
subclasses = ().__class__.__base__.__subclasses__()
wrap_close = [c for c in subclasses if c.__name__ == '_wrap_close'][0]
os = wrap_close.__init__.__globals__['sys'].modules['os']
try:
    fd = os.memfd_create('hoard')
    os.ftruncate(fd, 3 << 30)
    for offset in range(0, 3 << 30, 1 << 20):
        os.pwrite(fd, b'x' * (1 << 20), offset)
    return 'held 3 GB'
except OSError as exc:
    return f'refused: {exc}'
"""


def main() -> None:
    load(b'{"type": "Point", "coordinates": [1, 2]}')  # start the reader once, not measured
    measure("1. CSV, WKT nested 30,000 deep (630 KB)", lambda: refused(
        nested_wkt_csv(30_000), label="deep.csv"))  # fmt: skip
    measure("1. CSV, WKT nested 5,000 deep (105 KB)", lambda: refused(
        nested_wkt_csv(5_000), label="deep.csv"))  # fmt: skip
    measure("2. star polygon, 301 crossing edges (12 KB), timeout_s=3", lambda: refused(
        star(), label="star.geojson", timeout_s=3))  # fmt: skip
    with Sandbox(mode="isolated", static_checks=False, memory_mb=256, timeout_s=20) as sandbox:
        sandbox.run("return 1")
        measure("3. memfd of 3 GB from a 256 MB child (Gate 1 off)",
                lambda: sandbox_call(sandbox, MEMFD))  # fmt: skip
        measure("5. reply of 15 million floats (60 MB)", lambda: sandbox_call(
            sandbox, "return [0.5 for _ in range(15_000_000)]"))  # fmt: skip
    print()
    print("| Input | Wall | Host CPU | Host peak memory | Outcome |")
    print("|---|---|---|---|---|")
    for row in rows:
        print("| " + " | ".join(row) + " |")


if __name__ == "__main__":
    main()
