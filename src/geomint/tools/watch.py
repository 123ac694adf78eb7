"""Code that keeps running: monitors and trackers.

A monitored analysis (``analyse_data(monitor=True)``) and a tracker (``create_tracker``)
are recipes recorded by name. When one of their source entries gets a new version,
:func:`rerun_watchers` runs the recipe again over the latest versions, with ``now``,
``previous`` and ``log``: a monitor's last result and its earlier results, a tracker's last
verdict and its verdicts so far. Every re-run is recorded, so the history is part of the chat's log.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Mapping
from typing import Any, Final

from pydantic import BaseModel, ConfigDict, Field, create_model

from geomint.provenance import EntryVersion
from geomint.state import ENTRY_KINDS, AnalysisRecorded, EntryWritten, MonitorFailed
from geomint.tools._analysis import CodeCall, entry_ids_by_kind, run_code, stored_result
from geomint.tools.context import ToolContext
from geomint.tools.registry import ToolEntry
from geomint.tools.results import ToolError, ToolResult

__all__ = ["CREATE_TRACKER", "check_verdict", "rerun_watchers"]

_logger = logging.getLogger(__name__)

_LOG_KEPT: Final = 20
_MEMBERS_KEPT: Final = 500
_MEMBER_CHARS: Final = 200
#: Monitors re-run per new version; more are recorded as skipped, not run.
_RERUNS_PER_WRITE: Final = 10


# -- re-running --------------------------------------------------------------------------


async def rerun_watchers(ctx: ToolContext, written: EntryWritten) -> None:
    """Re-run every monitor and tracker (switched on) that reads ``written``'s entry.

    Re-runs never trigger further re-runs: a monitor that mints a layer writes an entry,
    and that write does not wake other monitors (no cascades, no loops).
    """
    if written.version == 1:
        return  # a new entry: nothing recorded can have read it yet
    trigger = EntryVersion(entry_id=written.entry_id, version=written.version)
    watching = ctx.workspace.watching(written.entry_id)
    ctx.rerunning = True
    try:
        for recipe in watching[:_RERUNS_PER_WRITE]:
            try:
                await _rerun(ctx, recipe, trigger)
            except Exception as exc:  # a monitor's failure is its own, not the write's
                _logger.warning("monitor %s failed to re-run: %s", recipe.name, exc)
                _failed(ctx, recipe, trigger, f"{type(exc).__name__}: {str(exc)[:300]}")
        for recipe in watching[_RERUNS_PER_WRITE:]:
            _failed(
                ctx,
                recipe,
                trigger,
                f"skipped: at most {_RERUNS_PER_WRITE} monitors re-run per change",
            )
    finally:
        ctx.rerunning = False


def _failed(ctx: ToolContext, recipe: AnalysisRecorded, trigger: EntryVersion, why: str) -> None:
    """Keep a re-run that failed or was skipped, so the person sees it (live and on reload)."""
    name = recipe.name or recipe.analysis_id
    ctx.append([MonitorFailed(name=name, tracker=recipe.tracker, trigger=trigger, error=why)])


async def _rerun(ctx: ToolContext, recipe: AnalysisRecorded, trigger: EntryVersion) -> None:
    ids = entry_ids_by_kind(list(dict.fromkeys(i.entry_id for i in recipe.inputs)))
    present = {k: [i for i in v if i in ctx.workspace.entries] for k, v in ids.items()}
    now = ctx.now().isoformat()
    # Every run has the same three names: a tracker's log is its verdicts, a monitor's its
    # earlier results; previous is the latest of them.
    if recipe.tracker:
        log = _verdicts(ctx, recipe.name or "")
        extra: dict[str, Any] = {"now": now, "log": log, "previous": log[-1] if log else None}
        check = check_verdict
    else:
        extra = {"now": now, "previous": stored_result(ctx, recipe), "log": _results(ctx, recipe)}
        check = None
    await run_code(
        ctx,
        CodeCall(
            tool=recipe.tool or "analyse_data",
            code=recipe.code,
            ids_by_kind=present,
            name=recipe.name,
            output_format=recipe.output_format,
            extra_inputs=extra,
            monitored=recipe.monitored,
            tracker=recipe.tracker,
            rule=recipe.rule,
            trigger=trigger,
            check=check,
        ),
    )


def _results(ctx: ToolContext, recipe: AnalysisRecorded) -> list[dict[str, Any]]:
    """A monitor's earlier results, oldest first (the last few)."""
    runs = [r for r in ctx.workspace.runs_of(recipe.name or "") if r.error is None]
    return [
        {"analysis_id": r.analysis_id, "result": stored_result(ctx, r)} for r in runs[-_LOG_KEPT:]
    ]


def _verdicts(ctx: ToolContext, name: str) -> list[dict[str, Any]]:
    verdicts = []
    for record in ctx.workspace.runs_of(name):
        if record.error is None:
            result = stored_result(ctx, record)
            if isinstance(result, Mapping):
                verdicts.append(
                    {
                        "analysis_id": record.analysis_id,
                        "active": result.get("active"),
                        "summary": result.get("summary"),
                        "members": result.get("members"),
                    }
                )
    return verdicts[-_LOG_KEPT:]


# -- trackers ----------------------------------------------------------------------------


def check_verdict(value: Any) -> dict[str, Any]:
    """Check a tracker's verdict: ``{active: bool, members: list, summary: str}``."""
    if not isinstance(value, Mapping):
        raise ToolError(
            f"tracker code returned {type(value).__name__}; return "
            "{'active': bool, 'members': [...], 'summary': 'one line'}"
        )
    missing = [k for k in ("active", "members", "summary") if k not in value]
    if missing:
        raise ToolError(
            f"the tracker verdict lacks {', '.join(missing)}",
            hint="return {'active': bool, 'members': [...], 'summary': '...'}",
        )
    if not isinstance(value["active"], bool):
        raise ToolError(f"verdict 'active' must be true or false, got {value['active']!r}")
    if not isinstance(value["members"], list):
        raise ToolError("verdict 'members' must be a list (ids or names of what matched)")
    if not isinstance(value["summary"], str):
        raise ToolError("verdict 'summary' must be a line of text")
    # Bounded item by item: every re-run reads the last verdicts back as `log`.
    return {
        "active": value["active"],
        "members": [_member(m) for m in value["members"][:_MEMBERS_KEPT]],
        "summary": value["summary"][:500],
    }


def _member(member: Any) -> Any:
    if isinstance(member, bool | int | float) or member is None:
        return member
    text = member if isinstance(member, str) else json.dumps(member, default=str)
    return text if len(text) <= _MEMBER_CHARS else text[: _MEMBER_CHARS - 1] + "…"


class TrackerArgs(BaseModel):
    """What ``create_tracker`` always takes; :data:`TrackerInput` adds the entries it
    watches, a ``<kind>_entry_ids`` per kind, as analyse_data names its inputs."""

    model_config = ConfigDict(extra="forbid")

    name: str = Field(min_length=1, max_length=100)
    rule: str = Field(min_length=1, max_length=1_000, description="The rule, in words.")
    code: str = Field(
        min_length=1,
        max_length=20_000,
        description="Body returning {active, members, summary}; `now`, `log` (earlier "
        "verdicts) and `previous` (the last verdict) are given.",
    )


_WATCHED: Final[dict[str, Any]] = {
    f"{kind}_entry_ids": (list[str] | None, Field(default=None, description=f"{kind} entries"))
    for kind in ENTRY_KINDS
}
#: The arguments of ``create_tracker``.
TrackerInput: Final = create_model("TrackerInput", __base__=TrackerArgs, **_WATCHED)


def _watched(arguments: BaseModel) -> dict[str, list[str]]:
    return {
        kind: list(ids)
        for kind in ENTRY_KINDS
        if (ids := getattr(arguments, f"{kind}_entry_ids", None))
    }


async def _create_tracker(arguments: TrackerArgs, ctx: ToolContext) -> ToolResult:
    watched = _watched(arguments)
    if not watched:
        raise ToolError(
            "create_tracker needs at least one entry to watch",
            hint="pass <kind>_entry_ids, e.g. byod_entry_ids=['byod-1']",
        )
    if ctx.workspace.recipe(arguments.name) is not None:
        raise ToolError(
            f"an analysis named {arguments.name!r} exists already",
            hint="choose another name, or switch it with monitor_analysis",
        )
    run = await run_code(
        ctx,
        CodeCall(
            tool="create_tracker",
            code=arguments.code,
            ids_by_kind=watched,
            name=arguments.name,
            extra_inputs={"now": ctx.now().isoformat(), "log": [], "previous": None},
            tracker=True,
            rule=arguments.rule,
            check=check_verdict,
        ),
    )
    out = run.for_model(ctx.settings.digest_chars)
    if run.ok:
        out["tracking"] = f"re-runs as {arguments.name!r} when a watched entry changes"
    return ToolResult(model=out, failed=not run.ok)


CREATE_TRACKER: Final = ToolEntry(
    description=(
        "Watch entries with a rule. The code returns {active: bool, members: [...], "
        "summary: '...'} and re-runs whenever a watched entry gets a new version, with "
        "`now` (ISO time) and `log` (earlier verdicts); every verdict is kept."
    ),
    input_schema=TrackerInput,
    execute=_create_tracker,
    effects=frozenset({"runs_code"}),
    classification_prompt="Keep watching entries and say when a rule starts or stops holding.",
    tags=("data", "monitor"),
    example_prompts=("Tell me when more than 3 stops are in the closed zone",),
    related_tools=("monitor_analysis", "analyse_data"),
)
