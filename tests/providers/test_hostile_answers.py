"""A routing answer costs the host what a real one does, whatever it holds.

From the red team: an OSRM answer listing 1,000 waypoints over 100,000 positions kept the
event loop busy for 34 s (each waypoint scanned every position in Python), and a 19 MB
Valhalla shape of 9.5 million positions cost 60 s and 2 GB before it was judged. The
answer's size is now checked against what was asked before any work that grows with it.
"""

from __future__ import annotations

import resource
import time
from datetime import UTC, datetime
from typing import Any

import pytest

from geomint.providers.osm import _routes
from geomint.providers.osm._routes import MAX_POSITIONS, decode_polyline

DEPARTURE = datetime(2026, 1, 1, tzinfo=UTC)


def _host_cpu_s() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def _osrm(waypoints: int, positions: int) -> dict[str, Any]:
    line = [[24.9 + i * 1e-6, 60.1] for i in range(positions)]
    return {
        "code": "Ok",
        "waypoints": [{"location": [24.9 + i * 1e-4, 60.1]} for i in range(waypoints)],
        "routes": [
            {
                "geometry": {"type": "LineString", "coordinates": line},
                "legs": [{"distance": 1.0, "duration": 1.0}] * (waypoints - 1),
            }
        ],
    }


def test_an_osrm_answer_with_more_waypoints_than_sent_is_refused_at_once() -> None:
    answer = _osrm(1_000, 100_000)
    cpu = _host_cpu_s()
    with pytest.raises(ValueError, match="1000 waypoints in the answer for 2 sent"):
        _routes.osrm_routes(answer, mode="car", avoid=(), departure=DEPARTURE, waypoints=2)
    assert _host_cpu_s() - cpu < 0.5


def test_an_osrm_answer_over_the_position_cap_is_refused_before_it_is_read() -> None:
    answer = _osrm(2, MAX_POSITIONS + 1)
    with pytest.raises(ValueError, match="positions, over 250,000"):
        _routes.osrm_routes(answer, mode="car", avoid=(), departure=DEPARTURE, waypoints=2)


def test_twenty_waypoints_over_the_most_positions_cost_well_under_a_second() -> None:
    answer = _osrm(20, MAX_POSITIONS)
    started = time.monotonic()
    [route] = _routes.osrm_routes(answer, mode="car", avoid=(), departure=DEPARTURE, waypoints=20)
    assert time.monotonic() - started < 3  # 34 s for 1,000 waypoints over 100,000 before
    assert len(route["properties"]["sections"]) == 19


def test_a_valhalla_shape_over_the_position_cap_stops_decoding_there() -> None:
    cpu = _host_cpu_s()
    with pytest.raises(ValueError, match="more than 250,000 positions"):
        decode_polyline("A" * 19_000_000)  # 9.5 million positions
    assert _host_cpu_s() - cpu < 5  # 60 s and 2 GB before
    trip = {"legs": [{"shape": "AA" * 200_000, "summary": {"length": 1, "time": 1}}] * 2}
    with pytest.raises(ValueError, match="more than 50,000 positions"):
        _routes.valhalla_routes(
            {"trip": trip}, mode="car", avoid=(), departure=DEPARTURE
        )  # the cap is for every leg and trip together
