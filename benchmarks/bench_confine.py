"""Where one sandbox child's time goes: fork of the real template and each confinement layer.

Run as root: ``.venv/bin/python benchmarks/bench_confine.py [--children 120]``. The script
becomes a template itself (imports and warms the sandbox's libraries, freezes its heap,
compiles the seccomp filter, collapses huge pages, pivots into the minimal root: all as
``geomint.confine._template`` does), then forks children that confine themselves exactly
as a sandbox child does, each step timed with ``perf_counter_ns``. It pivots its own root,
so it does nothing else afterwards. Prints medians and p90 in microseconds.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import statistics
import tempfile
import time
from collections.abc import Callable
from typing import Any

from geomint.confine import _landlock, _layers, _seccomp
from geomint.confine._layers import ConfineConfig
from geomint.sandbox import _worker


def _timed(marks: list[tuple[str, int, int]], name: str, fn: Callable[..., Any]) -> Any:
    def wrapped(*args: Any, **kwargs: Any) -> Any:
        start = time.perf_counter_ns()
        out = fn(*args, **kwargs)
        marks.append((name, start, time.perf_counter_ns()))
        return out

    return wrapped


def one_child(config: ConfineConfig) -> list[tuple[str, float]]:
    reader, writer = os.pipe()
    forked = time.perf_counter_ns()
    pid = os.fork()
    if pid == 0:
        marks = [("child runs, after fork (at-fork hooks, first faults)", forked,
                  time.perf_counter_ns())]  # fmt: skip
        _layers._close_descriptors = _timed(marks, "close descriptors", _layers._close_descriptors)
        _layers._unshare = _timed(marks, "unshare net+mount+ipc+uts", _layers._unshare)
        _layers._mount = _timed(marks, "scratch tmpfs", _layers._mount)
        _layers._set_limits = _timed(marks, "rlimits", _layers._set_limits)
        _landlock.apply_landlock = _timed(marks, "Landlock", _landlock.apply_landlock)
        _seccomp.install_seccomp_filter = _timed(marks, "seccomp install",
                                                 _seccomp.install_seccomp_filter)  # fmt: skip
        start = time.perf_counter_ns()
        _layers.confine(writer, config)
        marks.append(("confine(), all layers", start, time.perf_counter_ns()))
        os.write(writer, json.dumps([(n, (b - a) / 1000) for n, a, b in marks]).encode())
        os._exit(0)
    in_parent = (time.perf_counter_ns() - forked) / 1000
    os.close(writer)
    data = os.read(reader, 65536)
    os.close(reader)
    os.waitpid(pid, 0)
    return [("fork() in the template", in_parent), *json.loads(data)]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--children", type=int, default=120)
    args = parser.parse_args()
    _worker.prepare({})
    gc.collect()
    gc.freeze()
    _landlock.landlock_abi()
    _seccomp.seccomp_available()
    _seccomp.compiled_filter()
    huge = _layers.collapse_to_huge_pages()
    own = _layers.own_address_space()
    read_paths = _layers.default_read_paths()
    _layers.enter_minimal_root(read_paths, tempfile.mkdtemp(prefix="geomint-confine-bench-"))
    config = ConfineConfig(
        level="isolated", memory_mb=1024, cpu_s=10, read_paths=read_paths, own_size=own,
        scratch_dir=_layers.SCRATCH, minimal_root=True,
    )  # fmt: skip
    steps: dict[str, list[float]] = {}
    for _ in range(args.children):
        for name, us in one_child(config):
            steps.setdefault(name, []).append(us)
    print(f"template: {own >> 20} MB of address space, {huge} MB collapsed to huge pages")
    print("| Step | median µs | p90 µs |\n|---|---:|---:|")
    for name, values in steps.items():
        values.sort()
        p90 = values[int(len(values) * 0.9)]
        print(f"| {name} | {statistics.median(values):,.0f} | {p90:,.0f} |")


if __name__ == "__main__":
    main()
