"""The names a replayed analysis gets are the ones the original run got: several entries
of one kind merged in order, and a monitor's re-run with ``previous`` and ``log`` rebuilt
from the chat's earlier results."""

from __future__ import annotations

from pathlib import Path

import pytest
from tests.tools.helpers import cafes, call, collection, point, seed

from geomint.replay import export_chat, open_replay
from geomint.sandbox import Sandbox
from geomint.state import EntryWritten
from geomint.store import Chats, MemoryStore
from geomint.tools import ToolContext, ToolSettings, rerun_watchers

pytestmark = pytest.mark.anyio


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


async def _rerun(ctx: ToolContext, written: EntryWritten) -> None:
    await rerun_watchers(ctx, written)


def _context(sandbox: Sandbox) -> ToolContext:
    chats = Chats(MemoryStore())
    chats.create("c1")
    return ToolContext(
        chats=chats,
        chat_id="c1",
        run_id="r1",
        sandbox=sandbox,
        settings=ToolSettings(),
        after_entry_written=_rerun,
    )


MERGED = """
mint.value(len(places["features"]), "places in both entries")
mint.value(list(places_by_entry).index("places-2"), "position of places-2")
mint.value(len(places["features"][-1]["properties"]["name"]), "letters in the last name")
return len(places["features"])
"""

MONITOR = """
mint.value(len(byod["features"]), "stops now")
mint.value(-1 if previous is None else previous["stops"], "stops before")
mint.value(len(log), "earlier results")
return {"stops": len(byod["features"])}
"""


async def test_merged_entries_and_a_monitors_reruns_replay_with_the_same_names(
    in_process: Sandbox, tmp_path: Path
) -> None:
    ctx = _context(in_process)
    await seed(ctx, "places", cafes())
    await seed(ctx, "places", collection(point(24.95, 60.17, name="Kioski", category="kiosk")))
    await call(ctx, "analyse_data", {"code": MERGED, "name": "merged",
               "places_entry_ids": ["places-1", "places-2"]})  # fmt: skip
    stops = collection(point(24.94, 60.17, name="A"), point(24.95, 60.17, name="B"))
    await seed(ctx, "byod", stops)
    await call(ctx, "analyse_data", {"code": MONITOR, "name": "stops", "monitor": True,
               "byod_entry_ids": ["byod-1"]})  # fmt: skip
    for more in range(2):
        stops = collection(*stops["features"], point(24.96 + more / 100, 60.17, name="C"))
        await seed(ctx, "byod", stops, entry_id="byod-1")
    ledger = {v.label: v.value for v in ctx.refresh().values}
    assert ledger["places in both entries"] == 4
    assert (ledger["position of places-2"], ledger["letters in the last name"]) == (1, 6)
    assert [v.value for v in ctx.refresh().values if v.label == "earlier results"] == [0, 1, 2]

    folder = export_chat(ctx.chats, "c1", tmp_path / "chat.ipynb", "notebook")
    with open_replay(folder, magic=False) as replay:
        reports = [replay.run(a) for a in replay.manifest["analyses"]]

    assert len(reports) == 4
    for report in reports:
        assert report.reproduced, report.text()
    before = [f for r in reports for f in r.figures if f.label == "stops before"]
    assert [f.replayed for f in before] == [-1, 2, 3]


CLUSTERS = """
found = geo.cluster(incidents, eps_m=200.0, min_members=2, max_clusters=None, previous=previous)
mint.value(-1 if previous is None else len(previous["clusters"]), "clusters before")
return found
"""


async def test_a_clustering_run_again_replays_with_the_last_clustering_as_previous(
    in_process: Sandbox, tmp_path: Path
) -> None:
    ctx = _context(in_process)
    jams = collection(
        point(24.9400, 60.1700, id="i1", category="jam"),
        point(24.9409, 60.1700, id="i2", category="jam"),
        point(24.9580, 60.1700, id="i4", category="roadworks"),
        point(24.9589, 60.1700, id="i5", category="roadworks"),
    )
    await seed(ctx, "incidents", jams)
    for _ in range(2):
        await call(ctx, "cluster_incidents", {"incidents_entry_ids": ["incidents-1"],
                   "code": CLUSTERS})  # fmt: skip
    assert [v.value for v in ctx.refresh().values] == [-1, 2]

    folder = export_chat(ctx.chats, "c1", tmp_path / "chat.py", "script")
    with open_replay(folder, magic=False) as replay:
        reports = [replay.run(a) for a in replay.manifest["analyses"]]

    assert [r.figures[0].replayed for r in reports] == [-1, 2]
    assert all(r.reproduced for r in reports), [r.text() for r in reports]


TRACKER = """
mint.value(len(log), "verdicts before")
mint.value(-1 if previous is None else len(previous["members"]), "members before")
names = [f["properties"]["name"] for f in byod["features"]]
return {"active": len(names) > 2, "members": names, "summary": f"{len(names)} stops"}
"""


async def test_a_trackers_reruns_and_a_failed_run_replay_as_they_ran(
    in_process: Sandbox, tmp_path: Path
) -> None:
    ctx = _context(in_process)
    stops = collection(point(24.94, 60.17, name="A"), point(24.95, 60.17, name="B"))
    await seed(ctx, "byod", stops)
    await call(ctx, "create_tracker", {"name": "busy", "rule": "more than two stops",
               "code": TRACKER, "byod_entry_ids": ["byod-1"]})  # fmt: skip
    for more in range(2):
        stops = collection(*stops["features"], point(24.96 + more / 100, 60.17, name="C"))
        await seed(ctx, "byod", stops, entry_id="byod-1")
    await call(ctx, "analyse_data", {"code": "return 1 / 0", "name": "broken",
               "byod_entry_ids": ["byod-1"]})  # fmt: skip
    ledger = [(v.label, v.value) for v in ctx.refresh().values]
    assert ledger == [
        ("verdicts before", 0), ("members before", -1),
        ("verdicts before", 1), ("members before", 2),
        ("verdicts before", 2), ("members before", 3),
    ]  # fmt: skip

    folder = export_chat(ctx.chats, "c1", tmp_path / "chat.py", "script")
    with open_replay(folder, magic=False) as replay:
        reports = [replay.run(a) for a in replay.manifest["analyses"]]

    assert len(reports) == 4
    assert all(r.reproduced for r in reports), [r.text() for r in reports]
    failed = reports[-1]
    assert failed.recorded_error is not None and failed.error is not None
    assert "ZeroDivisionError" in failed.text() and "it failed in the chat too" in failed.text()
