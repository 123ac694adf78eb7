"""Monitors and trackers: code that runs again when its inputs change."""

from __future__ import annotations

from typing import Any

import pytest

from geomint.provenance import EntryVersion
from geomint.state import EntryWritten
from geomint.tools import ToolContext, ToolError, ToolResult, rerun_watchers
from geomint.tools.effects import EffectRefusedError
from geomint.tools.watch import check_verdict
from geomint.ui import MonitorRanPart

from .conftest import MakeCtx, UiLog
from .helpers import cafes, call, collection, point, seed

pytestmark = pytest.mark.anyio

COUNT = "return {'n': len(places['features']), 'previous': previous}"


def _more_cafes() -> dict[str, Any]:
    return collection(
        *cafes()["features"], point(24.955, 60.172, name="Kahvila C", category="cafe")
    )


async def monitor(ctx: ToolContext, name: str = "cafe-count", code: str = COUNT) -> ToolResult:
    result = await call(
        ctx,
        "analyse_data",
        {"places_entry_ids": ["places-1"], "name": name, "code": code, "monitor": True},
    )
    assert isinstance(result, ToolResult)
    assert not result.failed
    return result


# -- monitors -------------------------------------------------------------------------


async def test_a_new_version_of_an_input_reruns_the_monitor(ctx: ToolContext, ui: UiLog) -> None:
    await seed(ctx, "places", cafes())
    first = await monitor(ctx)
    assert first.model["result"] == {"n": 3, "previous": None}
    assert first.model["monitor"] == "on: re-runs as 'cafe-count' when an input gets a new version"

    await seed(ctx, "places", _more_cafes(), entry_id="places-1")

    runs = ctx.refresh().runs_of("cafe-count")
    assert [r.analysis_id for r in runs] == ["a1", "a2"]
    rerun = runs[1]
    assert rerun.trigger == EntryVersion(entry_id="places-1", version=2)
    assert rerun.inputs == (EntryVersion(entry_id="places-1", version=2),)
    assert rerun.monitored
    assert rerun.result == {"n": 4, "previous": {"n": 3, "previous": None}}
    assert rerun.code == runs[0].code
    ran = [p for p in ui if isinstance(p, MonitorRanPart)]
    assert [(r.name, r.analysis_id, r.ok) for r in ran] == [("cafe-count", "a2", True)]
    assert ran[0].trigger == EntryVersion(entry_id="places-1", version=2)


async def test_an_unmonitored_run_cannot_take_over_a_monitors_name(ctx: ToolContext) -> None:
    await seed(ctx, "places", cafes())
    await monitor(ctx)
    with pytest.raises(ToolError) as caught:
        await call(
            ctx,
            "analyse_data",
            {"places_entry_ids": ["places-1"], "name": "cafe-count", "code": "return 1"},
        )
    assert "would stop the monitor" in caught.value.message
    assert "monitor=true" in (caught.value.hint or "")
    # With monitor=true the monitor's code is replaced, and it keeps watching.
    replaced = await monitor(ctx, code="return {'n': -1, 'previous': previous}")
    assert replaced.model["result"] == {"n": -1, "previous": None}
    assert [a.name for a in ctx.refresh().watching("places-1")] == ["cafe-count"]


async def test_a_monitor_whose_first_run_failed_watches_nothing(ctx: ToolContext) -> None:
    await seed(ctx, "places", cafes())
    failed = await call(
        ctx,
        "analyse_data",
        {
            "places_entry_ids": ["places-1"],
            "name": "broken",
            "code": "return 1 / 0",
            "monitor": True,
        },
    )
    assert failed.failed
    assert ctx.refresh().watching("places-1") == ()
    await seed(ctx, "places", _more_cafes(), entry_id="places-1")
    assert len(ctx.refresh().runs_of("broken")) == 1  # no re-run


async def test_a_written_version_does_not_change_with_the_callers_dict(ctx: ToolContext) -> None:
    data = cafes()
    await seed(ctx, "places", data)
    data["features"].clear()  # the caller reuses its dict
    assert len(ctx.entry_data("places-1")["features"]) == 3


async def test_a_switched_off_monitor_stays_still_until_switched_on(ctx: ToolContext) -> None:
    await seed(ctx, "places", cafes())
    await monitor(ctx)

    off = await call(ctx, "monitor_analysis", {"name": "cafe-count", "on": False})
    assert off == {"name": "cafe-count", "monitoring": False}
    assert "cafe-count" in ctx.refresh().switched_off
    await seed(ctx, "places", _more_cafes(), entry_id="places-1")
    assert len(ctx.refresh().runs_of("cafe-count")) == 1

    on = await call(ctx, "monitor_analysis", {"name": "cafe-count", "on": True})
    assert on == {"name": "cafe-count", "monitoring": True}
    assert "cafe-count" not in ctx.refresh().switched_off
    await seed(ctx, "places", cafes(), entry_id="places-1")
    runs = ctx.refresh().runs_of("cafe-count")
    assert len(runs) == 2
    assert runs[1].trigger == EntryVersion(entry_id="places-1", version=3)
    assert runs[1].result == {"n": 3, "previous": {"n": 3, "previous": None}}


async def test_monitor_analysis_refuses_an_unknown_name(ctx: ToolContext) -> None:
    await seed(ctx, "places", cafes())
    await monitor(ctx)
    await call(
        ctx, "analyse_data", {"places_entry_ids": ["places-1"], "name": "once", "code": "return 1"}
    )
    before = ctx.refresh().last_seq

    with pytest.raises(ToolError) as unknown:
        await call(ctx, "monitor_analysis", {"name": "cafe-cuont", "on": False})
    assert unknown.value.message == "no monitor or tracker named 'cafe-cuont'"
    assert unknown.value.hint == "the monitored names are cafe-count"

    with pytest.raises(ToolError) as not_monitored:
        await call(ctx, "monitor_analysis", {"name": "once", "on": False})
    assert not_monitored.value.message == "no monitor or tracker named 'once'"
    assert ctx.refresh().last_seq == before


async def test_monitor_analysis_with_no_monitors_says_how_to_start_one(ctx: ToolContext) -> None:
    with pytest.raises(ToolError) as caught:
        await call(ctx, "monitor_analysis", {"name": "x", "on": True})
    assert caught.value.hint == "start one with analyse_data(monitor=true) or create_tracker"


#: A monitor that mints the places' convex hull as a layer on every run.
MINT_HULL = (
    "mint.layer(shapely.MultiPoint([f['geometry']['coordinates'] for f in "
    "places['features']]).convex_hull, 'hull')\nreturn len(places['features'])"
)


async def test_a_rerun_never_cascades(make_ctx: MakeCtx) -> None:
    heard: list[str] = []

    async def after(ctx: ToolContext, written: EntryWritten) -> None:
        heard.append(f"{written.entry_id}@{written.version}")
        await rerun_watchers(ctx, written)

    ctx = make_ctx(after_entry_written=after)
    await seed(ctx, "places", cafes())
    await monitor(ctx, "hull", MINT_HULL)
    assert heard == ["places-1@1", "geometries-1@1"]

    await seed(ctx, "places", _more_cafes(), entry_id="places-1")

    # The re-run wrote geometries-2, and that write woke nothing.
    assert heard == ["places-1@1", "geometries-1@1", "places-1@2"]
    assert "geometries-2" in ctx.refresh().entries
    assert len(ctx.workspace.runs_of("hull")) == 2
    assert ctx.rerunning is False


async def test_a_rerun_asks_for_the_layer_it_would_add(make_ctx: MakeCtx) -> None:
    # A monitor's re-run is its own effect: refusing it keeps its layer off the map.
    asked: list[tuple[str, bool]] = []

    async def authorize(effect: str, about: dict[str, Any], **_: bool) -> None:
        asked.append((effect, ctx.rerunning))
        if effect == "code_entry" and ctx.rerunning:
            raise EffectRefusedError("code_entry was refused: not now")

    ctx = make_ctx(authorize=authorize)
    await seed(ctx, "places", cafes())
    await monitor(ctx, "hull", MINT_HULL)
    await seed(ctx, "places", _more_cafes(), entry_id="places-1")
    assert asked == [
        ("runs_code", False), ("code_entry", False), ("runs_code", True), ("code_entry", True)
    ]  # fmt: skip
    assert "geometries-2" not in ctx.refresh().entries
    assert len(ctx.workspace.runs_of("hull")) == 2  # the re-run ran; only its layer was refused


async def test_a_write_during_a_rerun_does_not_rerun_anything(ctx: ToolContext) -> None:
    await seed(ctx, "places", cafes())
    await monitor(ctx)
    ctx.rerunning = True
    await seed(ctx, "places", _more_cafes(), entry_id="places-1")
    assert len(ctx.refresh().runs_of("cafe-count")) == 1


# -- trackers -------------------------------------------------------------------------

TRACKER = (
    "n = len(places['features'])\n"
    "return {'active': n > 3, 'members': [v['summary'] for v in log], "
    "'summary': f'{n} places'}"
)


async def track(ctx: ToolContext, code: str = TRACKER, name: str = "crowded") -> ToolResult:
    result = await call(
        ctx,
        "create_tracker",
        {
            "places_entry_ids": ["places-1"],
            "name": name,
            "rule": "more than 3 places",
            "code": code,
        },
    )
    assert isinstance(result, ToolResult)
    return result


async def test_a_tracker_records_its_verdict_and_reruns_with_the_log(ctx: ToolContext) -> None:
    await seed(ctx, "places", cafes())
    first = await track(ctx)

    assert not first.failed
    assert first.model["result"] == {"active": False, "members": [], "summary": "3 places"}
    assert first.model["tracking"] == "re-runs as 'crowded' when a watched entry changes"
    record = ctx.refresh().recipe("crowded")
    assert record is not None
    assert record.tracker
    assert record.rule == "more than 3 places"

    await seed(ctx, "places", _more_cafes(), entry_id="places-1")
    await seed(ctx, "places", cafes(), entry_id="places-1")

    runs = ctx.refresh().runs_of("crowded")
    assert [r.result for r in runs] == [
        {"active": False, "members": [], "summary": "3 places"},
        {"active": True, "members": ["3 places"], "summary": "4 places"},
        {"active": False, "members": ["3 places", "4 places"], "summary": "3 places"},
    ]
    assert [r.trigger.version if r.trigger else None for r in runs] == [None, 2, 3]
    assert all(r.tracker for r in runs)


@pytest.mark.parametrize(
    ("returned", "message"),
    [
        ("['active']", "tracker code returned list"),
        ("{'active': True}", "the tracker verdict lacks members, summary"),
        ("{'active': 'yes', 'members': [], 'summary': ''}", "verdict 'active' must be true or"),
        ("{'active': True, 'members': 'a', 'summary': ''}", "verdict 'members' must be a list"),
        ("{'active': True, 'members': [], 'summary': 3}", "verdict 'summary' must be a line"),
    ],
)
async def test_a_verdict_of_the_wrong_shape_is_a_failed_result(
    ctx: ToolContext, returned: str, message: str
) -> None:
    await seed(ctx, "places", cafes())
    result = await track(ctx, f"return {returned}")

    assert result.failed
    assert message in result.model["error"]
    assert "tracking" not in result.model
    record = ctx.refresh().recipe("crowded")
    assert record is not None
    assert record.error == result.model["error"]


def test_check_verdict_cuts_long_members_and_summaries() -> None:
    verdict = check_verdict({"active": True, "members": list(range(600)), "summary": "x" * 900})
    assert len(verdict["members"]) == 500
    assert len(verdict["summary"]) == 500


async def test_a_tracker_name_in_use_is_refused(ctx: ToolContext) -> None:
    await seed(ctx, "places", cafes())
    await track(ctx)
    before = ctx.refresh().last_seq

    with pytest.raises(ToolError) as caught:
        await track(ctx)
    assert caught.value.message == "an analysis named 'crowded' exists already"
    assert caught.value.hint is not None
    assert "monitor_analysis" in caught.value.hint
    assert ctx.refresh().last_seq == before


async def test_analyse_data_cannot_take_over_a_trackers_name(ctx: ToolContext) -> None:
    await seed(ctx, "places", cafes())
    await track(ctx)
    with pytest.raises(ToolError) as caught:
        await call(
            ctx,
            "analyse_data",
            {"places_entry_ids": ["places-1"], "name": "crowded", "code": "return 1"},
        )
    assert caught.value.message == "the name 'crowded' belongs to a create_tracker run"

    await seed(ctx, "places", _more_cafes(), entry_id="places-1")
    assert [r.tracker for r in ctx.refresh().runs_of("crowded")] == [True, True]


async def test_a_tracker_can_be_switched_off(ctx: ToolContext) -> None:
    await seed(ctx, "places", cafes())
    await track(ctx)
    await call(ctx, "monitor_analysis", {"name": "crowded", "on": False})
    await seed(ctx, "places", _more_cafes(), entry_id="places-1")
    assert len(ctx.refresh().runs_of("crowded")) == 1


async def test_create_tracker_needs_an_entry_to_watch(ctx: ToolContext) -> None:
    with pytest.raises(ToolError) as caught:
        await call(ctx, "create_tracker", {"name": "t", "rule": "r", "code": "return 1"})
    assert "at least one entry" in caught.value.message


async def test_every_run_has_now_previous_and_log(ctx: ToolContext) -> None:
    # Monitored re-runs had no `log`, and tracker code that read `previous` failed.
    await seed(ctx, "places", cafes())
    code = "return {'n': len(places['features']), 'seen': len(log), 'had': previous is not None}"
    await call(
        ctx,
        "analyse_data",
        {"places_entry_ids": ["places-1"], "name": "m", "code": code, "monitor": True},
    )
    await seed(ctx, "places", _more_cafes(), entry_id="places-1")
    await seed(ctx, "places", cafes(), entry_id="places-1")
    runs = ctx.refresh().runs_of("m")
    assert [r.result for r in runs] == [
        {"n": 3, "seen": 0, "had": False},
        {"n": 4, "seen": 1, "had": True},
        {"n": 3, "seen": 2, "had": True},
    ]


async def test_an_analysis_made_without_monitor_can_be_switched_on(ctx: ToolContext) -> None:
    # monitor_analysis used to refuse it ("no monitor or tracker named ..."), leaving the
    # model to guess the way to do it.
    await seed(ctx, "places", cafes())
    code = "return len(places['features'])"
    await call(ctx, "analyse_data", {"places_entry_ids": ["places-1"], "name": "n", "code": code})
    switched = await call(ctx, "monitor_analysis", {"name": "n", "on": True})
    assert isinstance(switched, ToolResult) and not switched.failed
    assert switched.model["monitor"].startswith("on: 'n' ran again as a monitor")
    await seed(ctx, "places", _more_cafes(), entry_id="places-1")
    runs = ctx.refresh().runs_of("n")
    assert [(r.monitored, r.result) for r in runs] == [(False, 3), (True, 3), (True, 4)]


async def test_a_monitor_whose_runs_all_failed_is_not_reported_as_monitoring(
    ctx: ToolContext,
) -> None:
    await seed(ctx, "places", cafes())
    arguments = {"places_entry_ids": ["places-1"], "name": "bad", "code": "1/0", "monitor": True}
    await call(ctx, "analyse_data", arguments)
    state = await call(ctx, "recall_state", {})
    (row,) = [a for a in state.model["analyses"] if a["name"] == "bad"]
    assert (row["ok"], row["monitoring"]) == (False, False)
