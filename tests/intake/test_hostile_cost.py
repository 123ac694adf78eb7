"""What a hostile source costs the application: its own child's time, never the host's.

Each source here crashed or stalled the process that called :func:`geomint.intake.load`
before intake judged every source in a confined child: a star polygon whose edges all
cross kept ``make_valid`` busy for minutes, and WKB nested 100,000 deep crashes GEOS's
reader. Now the child is killed at ``timeout_s`` or dies alone, the caller gets an
:class:`IntakeError` that says so, and other sources are judged meanwhile.
"""

from __future__ import annotations

import io
import json
import resource
import struct
import threading
import time
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from tests.hostile_inputs import star_geojson

from geomint.intake import IntakeError, load


def _host_cpu_s() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def test_a_star_polygon_costs_its_child_not_the_host() -> None:
    load(b'{"type": "Point", "coordinates": [1, 2]}')  # the reader is up
    cpu, started = _host_cpu_s(), time.monotonic()
    with pytest.raises(IntakeError) as caught:
        load(star_geojson(), label="star.geojson", timeout_s=2)
    assert str(caught.value) == (
        "Cannot load star.geojson: reading the file took longer than 2 s and was stopped; "
        "pass a larger timeout_s for a large file"
    )
    assert caught.value.timed_out
    assert time.monotonic() - started < 5
    assert _host_cpu_s() - cpu < 0.5, "the repair ran in the application process"


def test_other_sources_are_judged_while_a_slow_one_runs() -> None:
    load(b'{"type": "Point", "coordinates": [1, 2]}')
    refused: list[str] = []

    def judge_the_star() -> None:
        try:
            load(star_geojson(), timeout_s=4)
        except IntakeError as exc:
            refused.append(str(exc))

    slow = threading.Thread(target=judge_the_star, daemon=True)
    slow.start()
    time.sleep(0.3)  # the star's child is busy
    started = time.monotonic()
    layer = load(b'{"type": "Point", "coordinates": [4.9, 52.4]}')
    quick = time.monotonic() - started
    assert slow.is_alive(), "the star was expected to still be running"
    assert layer.report.feature_count == 1
    assert quick < 1.5, f"a one-point source waited {quick:.2f} s behind the star"
    slow.join(10)
    assert refused and "took longer than 4 s" in refused[0]


def _nested_wkb(depth: int) -> bytes:
    collection = b"\x01" + struct.pack("<II", 7, 1)  # a GeometryCollection of one member
    return collection * depth + b"\x01" + struct.pack("<Idd", 1, 4.9, 52.4)


def test_wkb_that_crashes_geos_costs_only_its_reader() -> None:
    geo = {
        "version": "1.1.0",
        "primary_column": "geometry",
        "columns": {"geometry": {"encoding": "WKB", "geometry_types": []}},
    }
    table = pa.table({"geometry": pa.array([_nested_wkb(100_000)], pa.binary())})
    table = table.replace_schema_metadata({b"geo": json.dumps(geo).encode()})
    buffer = io.BytesIO()
    pq.write_table(table, buffer)
    with pytest.raises(IntakeError) as caught:
        load(buffer.getvalue(), label="deep.parquet")
    assert "the reader stopped while parsing the file (it crashed" in str(caught.value)
    # The application is alive and the next source is judged as usual.
    assert load(b'{"type": "Point", "coordinates": [1, 2]}').report.feature_count == 1


def test_an_object_too_deep_for_json_is_refused_without_repairing_it_here() -> None:
    # A foreign member nested past the recursion limit beside a star polygon: the walk
    # that says where the nesting is used to repair the star in the host, for minutes.
    deep: list[Any] = []
    for _ in range(1_200):
        deep = [deep]
    star = json.loads(star_geojson())
    star["features"][0]["geometry"]["x"] = deep
    cpu = _host_cpu_s()
    with pytest.raises(IntakeError, match="nesting is deeper than 64 levels"):
        load(star, label="deep.geojson")
    assert _host_cpu_s() - cpu < 1, "the star was repaired in the application process"
