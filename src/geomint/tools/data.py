"""The two data tools, ``analyse_data`` and ``process_data``, and ``monitor_analysis``.

Both take entry ids per kind (``places_entry_ids``, ``byod_entry_ids``, ...) and a Python
function body. Both are scopable: the classifier names the kinds a turn touches and the
tool's description and input schema are rebuilt to document only those (the sandbox still
carries every name; a kind not requested arrives as ``None``). Unscoped, they are terse.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Final, Literal

from pydantic import BaseModel, ConfigDict, Field, create_model

from geomint.intake import IntakeError
from geomint.intake import load as intake_load
from geomint.state import ENTRY_KINDS, AnalysisRecorded, MonitorSwitched, ViewChanged
from geomint.tools._analysis import (
    CodeCall,
    entry_ids_by_kind,
    figure_digests,
    run_code,
    sources_of,
    stored_result,
)
from geomint.tools._kinds import DataScope, code_names_doc, kinds_doc
from geomint.tools.context import ToolContext
from geomint.tools.registry import ToolEntry
from geomint.tools.results import ToolError, ToolResult

__all__ = ["ANALYSE_DATA", "MONITOR_ANALYSIS", "PROCESS_DATA", "check_envelope"]

_SCOPE_PROMPT: Final = (
    'Emit {"kinds": [...]} listing only the entry kinds the request touches, from: '
    + ", ".join(ENTRY_KINDS)
    + '. E.g. {"kinds": ["places"]} for a chart of places by category.'
)
_ENVELOPE_KEYS: Final = ("places", "place_connections", "geometries", "fit_on_map", "byod")
#: Features one process_data call may write: the host checks and stores every one.
_MAX_ENVELOPE_FEATURES: Final = 250_000


def _ids_fields(kinds: Sequence[str]) -> dict[str, Any]:
    return {
        f"{kind}_entry_ids": (
            list[str] | None,
            Field(default=None, description=f"Ids of {kind} entries to read, e.g. ['{kind}-1']."),
        )
        for kind in kinds
    }


def _ids_from(arguments: BaseModel) -> dict[str, list[str]]:
    grouped: dict[str, list[str]] = {}
    for kind in ENTRY_KINDS:
        ids = getattr(arguments, f"{kind}_entry_ids", None)
        if ids:
            grouped[kind] = list(ids)
    return grouped


def _no_inputs_hint(ctx: ToolContext) -> str:
    have = [e.entry_id for e in ctx.workspace.entries.values()]
    if not have:
        return "this chat has no entries yet: fetch or add data first"
    return f"pass <kind>_entry_ids; this chat has {', '.join(have[:20])}"


# -- analyse_data ------------------------------------------------------------------------


_OutputFormat = Literal["json", "chart"]


class AnalyseArgs(BaseModel):
    """What ``analyse_data`` always takes; its scope adds a ``<kind>_entry_ids`` per kind."""

    model_config = ConfigDict(extra="forbid")

    name: str = Field(
        min_length=1, max_length=100, description="A short name, e.g. 'category-bar'."
    )
    code: str = Field(min_length=1, max_length=20_000, description="Python function body.")
    output_format: _OutputFormat = Field(
        default="json", description="'chart' for a Chart.js config."
    )
    monitor: bool = Field(
        default=False, description="Re-run whenever an input entry gets a new version."
    )


def _analyse_schema(kinds: Sequence[str]) -> type[AnalyseArgs]:
    return create_model("AnalyseDataInput", __base__=AnalyseArgs, **_ids_fields(kinds))


async def _analyse(arguments: AnalyseArgs, ctx: ToolContext) -> ToolResult:
    ids = _ids_from(arguments)
    if not ids:
        raise ToolError("analyse_data needs at least one entry to read", _no_inputs_hint(ctx))
    name = arguments.name
    owner = ctx.workspace.recipe(name)
    if owner is not None and owner.tool not in (None, "analyse_data"):
        # The latest run of a name is what re-runs: reusing a tracker's name would stop it.
        raise ToolError(
            f"the name {name!r} belongs to a {owner.tool} run",
            hint="choose another name; monitor_analysis switches a tracker on or off",
        )
    if owner is not None and owner.monitored and not arguments.monitor:
        raise ToolError(
            f"the name {name!r} belongs to a monitored analysis; running it unmonitored "
            "would stop the monitor",
            hint="choose another name, or pass monitor=true to replace the monitor's code",
        )
    extra: dict[str, Any] = {"previous": None, "now": ctx.now().isoformat(), "log": []}
    run = await run_code(
        ctx,
        CodeCall(
            tool="analyse_data",
            code=arguments.code,
            ids_by_kind=ids,
            name=name,
            output_format=arguments.output_format,
            extra_inputs=extra,
            monitored=arguments.monitor,
        ),
    )
    out = run.for_model(ctx.settings.digest_chars)
    if run.ok and arguments.monitor:
        out["monitor"] = f"on: re-runs as {name!r} when an input gets a new version"
    return ToolResult(model=out, failed=not run.ok)


def _build_analyse(scope: BaseModel | None) -> ToolEntry[Any]:
    kinds = list(scope.kinds) if isinstance(scope, DataScope) else list(ENTRY_KINDS)
    doc = kinds_doc(kinds if scope is not None else None)
    description = (
        "Run Python over copies of entries to answer a question with a result or a chart. "
        "The result is recorded against every input entry and returned. "
        "`output_format='chart'` returns a Chart.js config {type, data, options?}. "
        "`monitor=true` re-runs it whenever an input gets a new version. Every run has "
        "`now` (ISO time), `previous` (the last result, None at first) and `log` (earlier "
        "results).\n" + doc
    )
    if scope is not None:
        description += "\n" + code_names_doc()
    return ToolEntry(
        description=description,
        input_schema=_analyse_schema(kinds),
        execute=_analyse,
        effects=frozenset({"runs_code", "code_entry"}),  # code_entry when it mints a layer
        classification_prompt="Compute, count, compare, measure or chart entries with code.",
        tags=("data", "analysis"),
        examples=(
            "analyse_data(places_entry_ids=['places-1'], name='category-bar', "
            "output_format='chart', code='...return {\"type\": \"bar\", ...}')",
        ),
        example_prompts=(
            "Bar chart of these places by category",
            "How many of these cafés are open on Sunday?",
        ),
        related_tools=("process_data", "present_figure", "recall_state"),
        scope_schema=DataScope,
        scope_prompt=_SCOPE_PROMPT,
        prepare=_build_analyse,
    )


#: Unscoped and terse; ``ANALYSE_DATA.for_scope(scope)`` documents only the scope's kinds.
ANALYSE_DATA: Final = _build_analyse(None)


# -- process_data ------------------------------------------------------------------------


class ProcessArgs(BaseModel):
    """What ``process_data`` always takes; its scope adds a ``<kind>_entry_ids`` per kind."""

    model_config = ConfigDict(extra="forbid")

    code: str = Field(min_length=1, max_length=20_000, description="Python function body.")
    label: str | None = Field(default=None, max_length=200, description="Name of the new entry.")


def _process_schema(kinds: Sequence[str]) -> type[ProcessArgs]:
    return create_model("ProcessDataInput", __base__=ProcessArgs, **_ids_fields(kinds))


def check_envelope(value: Any) -> dict[str, Any]:
    """Check what ``process_data`` code returned, with messages the model can act on.

    Raises:
        ToolError: The envelope is not a dict, has unknown keys, has none of the keys
            that write something, or has connections without places.
    """
    if not isinstance(value, Mapping):
        raise ToolError(
            f"process_data code returned {type(value).__name__}; return a dict such as "
            "{'places': feature_collection} or {'geometries': ..., 'fit_on_map': True}",
        )
    unknown = [k for k in value if k not in _ENVELOPE_KEYS]
    if unknown:
        raise ToolError(
            f"unknown envelope keys {unknown}; the keys are {', '.join(_ENVELOPE_KEYS)}",
            hint="rename them: e.g. 'polygons' -> 'geometries', 'fit' -> 'fit_on_map'",
        )
    # Empty values write nothing: {"places": {}} or "fit_on_map": 0 do not count.
    present = {k for k, v in value.items() if v}
    if not present & {"places", "geometries", "fit_on_map", "byod"}:
        raise ToolError(
            "the envelope writes nothing: set at least one of places, geometries, "
            "fit_on_map or byod",
        )
    if "place_connections" in present and "places" not in present:
        raise ToolError(
            "place_connections need places: return the places they connect in the same envelope",
        )
    return dict(value)


def _collection(value: Any, what: str, *, points_only: bool = False) -> dict[str, Any]:
    """Validate and repair GeoJSON from an envelope through intake (the same rules as
    a user's upload)."""
    if isinstance(value, list):
        value = {"type": "FeatureCollection", "features": value}
    features = value.get("features") if isinstance(value, Mapping) else None
    if isinstance(features, list) and len(features) > _MAX_ENVELOPE_FEATURES:
        raise ToolError(
            f"envelope {what} has {len(features):,} features; one call writes at most "
            f"{_MAX_ENVELOPE_FEATURES:,}",
            hint="filter or aggregate in code first (e.g. h3 cells, clusters)",
        )
    try:
        layer = intake_load(value, label=what)
    except IntakeError as exc:
        problems = "; ".join(exc.problems[:5])
        raise ToolError(f"envelope {what} is not valid GeoJSON: {problems}") from None
    data: dict[str, Any] = layer.data
    if points_only:
        for index, feature in enumerate(data["features"]):
            geometry = feature.get("geometry") or {}
            if geometry.get("type") != "Point":
                raise ToolError(
                    f"envelope places.features[{index}] is a {geometry.get('type')}; places "
                    "are Points",
                    hint="put polygons under 'geometries' (attached to the places) instead",
                )
    return data


def _connections(value: Any, count: int) -> list[dict[str, Any]]:
    pairs = []
    for index, item in enumerate(value or []):
        if isinstance(item, Mapping):
            a, b = item.get("from"), item.get("to")
        elif isinstance(item, list | tuple) and len(item) == 2:
            a, b = item
        else:
            raise ToolError(
                f"place_connections[{index}] must be {{'from': i, 'to': j}} or [i, j] "
                "(indexes into places)"
            )
        if not (_is_index(a, count) and _is_index(b, count)):
            raise ToolError(
                f"place_connections[{index}] = {item!r}: indexes must lie in 0..{count - 1}"
            )
        pairs.append({"from": a, "to": b})
    return pairs


def _is_index(value: Any, count: int) -> bool:
    # bool is an int to Python, but True is not an index a model meant.
    return isinstance(value, int) and not isinstance(value, bool) and 0 <= value < count


def _plan(envelope: Mapping[str, Any], label: str | None) -> dict[str, Any]:
    """Check an envelope's GeoJSON and decide the one entry it writes.

    Raises:
        ToolError: The envelope's GeoJSON or connections are not valid.
    """
    envelope = check_envelope(envelope)
    notes: list[str] = []
    kind: str | None = None
    data: dict[str, Any] | None = None
    if envelope.get("places"):
        kind, data = "places", _collection(envelope["places"], "places", points_only=True)
        if envelope.get("geometries"):
            data["attached_geometries"] = _collection(envelope["geometries"], "geometries")
        if envelope.get("place_connections"):
            data["connections"] = _connections(envelope["place_connections"], len(data["features"]))
        if envelope.get("byod"):
            notes.append("byod was dropped: one call writes one entry, and places came first")
        label = label or "processed places"
    elif envelope.get("geometries"):
        kind, data = "geometries", _collection(envelope["geometries"], "geometries")
        if envelope.get("byod"):
            notes.append("byod was dropped: one call writes one entry, and geometries came first")
        label = label or "processed geometries"
    elif envelope.get("byod"):
        byod = envelope["byod"]
        if isinstance(byod, Mapping) and "data" in byod:
            label = label or (str(byod["label"]) if byod.get("label") else None)
            byod = byod["data"]
        kind, data = "byod", _collection(byod, "byod")
        label = label or "processed layer"
    return {
        "kind": kind,
        "data": data,
        "label": label,
        "notes": notes,
        "fit_on_map": envelope.get("fit_on_map") or None,
    }


async def _process(arguments: ProcessArgs, ctx: ToolContext) -> ToolResult:
    ids = _ids_from(arguments)
    if not ids:
        raise ToolError("process_data needs at least one entry to read", _no_inputs_hint(ctx))
    planned: dict[str, Any] = {}

    def check(value: Any) -> dict[str, Any]:
        # Runs on the code's result, so a refused envelope is the run's recorded error; the
        # record keeps what the envelope writes, not a second copy of its data.
        planned.update(_plan(value, arguments.label))
        data = planned["data"]
        return {
            "writes": planned["kind"],
            "features": len(data["features"]) if data else 0,
            "fit_on_map": planned["fit_on_map"],
            "notes": planned["notes"],
        }

    run = await run_code(
        ctx,
        CodeCall(
            tool="process_data",
            code=arguments.code,
            ids_by_kind=ids,
            check=check,
        ),
    )
    if not run.ok:
        return ToolResult(model=run.for_model(ctx.settings.digest_chars), failed=True)
    derived = list(run.record.inputs)
    written = None
    if planned["kind"] is not None:
        await ctx.require(
            "code_entry",
            {"label": str(planned["label"]), "features": len(planned["data"]["features"])},
        )
        written = await ctx.write_entry(
            kind=planned["kind"],
            data=planned["data"],
            label=str(planned["label"]),
            sources=sources_of(ctx, derived),
            derived_from=derived,
        )
    notes: list[str] = list(planned["notes"])
    out: dict[str, Any] = {"analysis_id": run.record.analysis_id, "ok": True}
    if written is not None:
        out["entry_id"] = written.entry_id
        out["digest"] = written.digest
    fit = planned["fit_on_map"]
    if fit:
        bbox = _fit_bbox(fit, written.digest.get("bbox") if written else None)
        if bbox is None:
            notes.append("fit_on_map was ignored: there was nothing with a bbox to fit")
        else:
            await ctx.require("display", {"bbox": list(bbox)})
            ctx.append([ViewChanged(bbox=bbox)])
            out["fit_on_map"] = list(bbox)
    if run.figures:
        out["figures"] = figure_digests(run.figures)
    if notes or run.notes:
        out["notes"] = [*run.notes, *notes]
    return ToolResult(model=out)


def _fit_bbox(fit: Any, fallback: Any) -> tuple[float, float, float, float] | None:
    box = fit if isinstance(fit, list | tuple) and len(fit) == 4 else fallback
    if not isinstance(box, list | tuple) or len(box) != 4:
        return None
    try:
        west, south, east, north = (float(v) for v in box)
    except (TypeError, ValueError):
        return None
    if not (-180 <= west <= 180 and -180 <= east <= 180 and -90 <= south <= north <= 90):
        return None
    return (west, south, east, north)


def _build_process(scope: BaseModel | None) -> ToolEntry[Any]:
    kinds = list(scope.kinds) if isinstance(scope, DataScope) else list(ENTRY_KINDS)
    description = (
        "Run Python over copies of entries to make a new entry for the map. The code returns "
        "an envelope {places?, place_connections?, geometries?, fit_on_map?, byod?} with at "
        "least one of places, geometries, fit_on_map, byod. One call writes one entry: "
        "places (Point FeatureCollection; `geometries` beside it are attached to them), else "
        "geometries, else byod ({label, data}); the rest is dropped with a note. "
        "place_connections ([[i, j], ...] indexes into places) need places; fit_on_map (true "
        "or [w, s, e, n]) moves the camera.\n" + kinds_doc(kinds if scope is not None else None)
    )
    if scope is not None:
        description += "\n" + code_names_doc()
    return ToolEntry(
        description=description,
        input_schema=_process_schema(kinds),
        execute=_process,
        effects=frozenset({"runs_code", "code_entry", "display"}),  # display: fit_on_map
        classification_prompt=(
            "Filter, combine, buffer, union or derive new places or shapes for the map."
        ),
        tags=("data", "map"),
        examples=(
            "process_data(geometries_entry_ids=['geometries-1'], code='...return "
            '{"geometries": merged, "fit_on_map": True}\')',
        ),
        example_prompts=("Union these city boundaries", "Only keep the cafés open late"),
        related_tools=("analyse_data", "update_places_display", "update_geometries_display"),
        scope_schema=DataScope,
        scope_prompt=_SCOPE_PROMPT,
        prepare=_build_process,
    )


#: Unscoped and terse; ``PROCESS_DATA.for_scope(scope)`` documents only the scope's kinds.
PROCESS_DATA: Final = _build_process(None)


# -- monitor_analysis --------------------------------------------------------------------


class MonitorInput(BaseModel):
    """Switch a monitored analysis or tracker on or off by name."""

    model_config = ConfigDict(extra="forbid")

    name: str = Field(min_length=1, max_length=100)
    on: bool


async def _monitor(arguments: MonitorInput, ctx: ToolContext) -> dict[str, Any] | ToolResult:
    recipe = ctx.workspace.recipe(arguments.name)
    if (
        arguments.on
        and recipe is not None
        and not (recipe.monitored or recipe.tracker)
        and recipe.tool in (None, "analyse_data")
    ):
        return await _monitor_from_now(ctx, recipe)
    if recipe is None or not (recipe.monitored or recipe.tracker):
        watched = sorted(
            {
                a.name
                for a in ctx.workspace.analyses.values()
                if a.name and (a.monitored or a.tracker)
            }
        )
        raise ToolError(
            f"no monitor or tracker named {arguments.name!r}",
            hint=f"the monitored names are {', '.join(watched)}"
            if watched
            else "start one with analyse_data(monitor=true) or create_tracker",
        )
    ctx.append([MonitorSwitched(name=arguments.name, on=arguments.on)])
    return {"name": arguments.name, "monitoring": arguments.on}


async def _monitor_from_now(ctx: ToolContext, recipe: AnalysisRecorded) -> ToolResult:
    """Switch on an analysis that was not monitored: run its code again, as a monitor, over
    the latest versions of what it read; from then on it re-runs when they change."""
    present = [i.entry_id for i in recipe.inputs if i.entry_id in ctx.workspace.entries]
    extra: dict[str, Any] = {
        "now": ctx.now().isoformat(),
        "previous": stored_result(ctx, recipe),
        "log": [],
    }
    run = await run_code(
        ctx,
        CodeCall(
            tool="analyse_data",
            code=recipe.code,
            ids_by_kind=entry_ids_by_kind(list(dict.fromkeys(present))),
            name=recipe.name,
            output_format=recipe.output_format,
            extra_inputs=extra,
            monitored=True,
        ),
    )
    out = run.for_model(ctx.settings.digest_chars)
    if run.ok:
        out["monitor"] = (
            f"on: {recipe.name!r} ran again as a monitor and re-runs when an input gets a "
            "new version"
        )
    return ToolResult(model=out, failed=not run.ok)


MONITOR_ANALYSIS: Final = ToolEntry(
    description=(
        "Switch a monitored analysis or a tracker on or off by its name. Off: it stops "
        "re-running when its inputs change; on again: it resumes. On for an analysis made "
        "without monitor=true runs it again as a monitor."
    ),
    input_schema=MonitorInput,
    execute=_monitor,
    effects=frozenset({"runs_code"}),  # switching on an unmonitored analysis runs it
    classification_prompt="Stop or resume a monitored analysis or a tracker.",
    tags=("data", "monitor"),
    example_prompts=("Stop watching the delay count",),
    related_tools=("analyse_data", "create_tracker"),
)
