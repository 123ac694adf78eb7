"""Running model-written code over entries, and turning what it minted into provenance.

Every code-taking tool (``analyse_data``, ``process_data``, ``create_tracker``,
``cluster_incidents``) and every monitor re-run goes through :func:`run_code`: the entries
are handed to the sandbox by reference under fixed names (``places``, ``routes``, ...,
``None`` when not requested, plus ``<kind>_by_entry``), the code runs isolated, and each
``mint.value`` / ``mint.layer`` it called becomes a value or a layer in the chat's ledger
with the union of its inputs' provenance. The run is recorded as an ``AnalysisRecorded``
event whatever its outcome.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final, Literal

from geomint.geo.raster import Raster
from geomint.intake import IntakeError
from geomint.intake import aload as intake_aload
from geomint.intake import offload as intake_offload
from geomint.provenance import PERIOD_NOT_STATED, EntryVersion, Provenance, Value, hash_code, union
from geomint.sandbox import Entry as SandboxEntry
from geomint.sandbox import SandboxResult, validate_chart
from geomint.sandbox.results import ChartError
from geomint.sources.model import period_years
from geomint.state import (
    ENTRY_KINDS,
    AnalysisRecorded,
    EventBody,
    LayerMinted,
    ValueMinted,
)
from geomint.tools._digest import cut_to_budget, digest_bbox, digest_count, json_size
from geomint.tools.context import ToolContext
from geomint.tools.effects import EffectRefusedError
from geomint.tools.results import ToolError

__all__ = [
    "INPUT_NAMES",
    "CodeCall",
    "CodeRun",
    "entry_ids_by_kind",
    "figure_digests",
    "gather_inputs",
    "run_code",
    "sources_of",
    "stored_result",
]

#: Names every code body can use: one per entry kind, and its per-entry view.
INPUT_NAMES: Final = (*ENTRY_KINDS, *(f"{k}_by_entry" for k in ENTRY_KINDS))
_INLINE_RESULT: Final = 32_000
#: What a result keeps of the model's budget however much the handles beside it take.
_MIN_RESULT_CHARS: Final = 200


@dataclass(frozen=True)
class CodeRun:
    """One finished run of model-written code."""

    record: AnalysisRecorded
    sandbox: SandboxResult
    value: Any
    figures: tuple[Value, ...] = ()
    layers: tuple[dict[str, Any], ...] = ()
    error: str | None = None
    hint: str | None = None
    notes: tuple[str, ...] = field(default=())

    @property
    def ok(self) -> bool:
        return self.error is None

    def for_model(self, budget: int) -> dict[str, Any]:
        """The handle and digest of this run for the model, within ``budget`` characters.

        The handles (ids, figures, layers, the error) are kept whole; the result is cut to
        what they leave, so the whole fits and is not cut again on its way to the model.
        """
        out: dict[str, Any] = {
            "analysis_id": self.record.analysis_id,
            "ok": self.ok,
        }
        if self.record.name:
            out["name"] = self.record.name
        if not self.ok:
            out["error"] = self.error
            if self.hint:
                out["hint"] = self.hint
        if self.figures:
            out["figures"] = figure_digests(self.figures)
        if self.layers:
            out["layers"] = self.layers
        if self.sandbox.stdout:
            out["stdout"] = self.sandbox.stdout[-1_000:]
        if self.notes:
            out["notes"] = list(self.notes)
        if self.ok:
            left = budget - json_size(out) - len(',"result":')
            out = {**out, "result": cut_to_budget(self.value, max(left, _MIN_RESULT_CHARS))}
        return out


def entry_ids_by_kind(entry_ids: Sequence[str]) -> dict[str, list[str]]:
    """Group entry ids by the kind their prefix names."""
    grouped: dict[str, list[str]] = {}
    for entry_id in entry_ids:
        grouped.setdefault(entry_id.rsplit("-", 1)[0], []).append(entry_id)
    return grouped


def gather_inputs(
    ctx: ToolContext, ids_by_kind: Mapping[str, Sequence[str]]
) -> tuple[dict[str, Any], list[EntryVersion]]:
    """Resolve requested entry ids to sandbox inputs, checking each names an entry of its kind.

    Returns:
        The inputs (every name in :data:`INPUT_NAMES`, None when not requested) and the
        entry versions read.

    Raises:
        ToolError: An id names no entry, or an entry of another kind.
    """
    workspace = ctx.workspace
    inputs: dict[str, Any] = dict.fromkeys(INPUT_NAMES)
    read: list[EntryVersion] = []
    for kind, ids in ids_by_kind.items():
        if kind not in ENTRY_KINDS:
            raise ToolError(
                f"{kind!r} is not an entry kind", hint=f"kinds are {', '.join(ENTRY_KINDS)}"
            )
        unique = list(dict.fromkeys(ids))
        if not unique:
            continue
        for entry_id in unique:
            entry = workspace.entries.get(entry_id)
            if entry is None or entry.kind != kind:
                known = [e.entry_id for e in workspace.of_kind(kind)]
                raise ToolError(
                    f"no {kind} entry {entry_id!r} in this chat",
                    hint=(
                        f"the {kind} entries are {', '.join(known)}"
                        if known
                        else f"this chat has no {kind} entries yet; call recall_state to see "
                        "what it has"
                    ),
                )
        by_entry = {entry_id: ctx.sandbox_entry(entry_id) for entry_id in unique}
        read.extend(EntryVersion(entry_id=i, version=e.version) for i, e in by_entry.items())
        # Features of several entries merge into one collection; rasters cannot (their
        # grids differ): ``rasters`` is the first asked, ``rasters_by_entry`` has them all.
        single = len(by_entry) == 1 or kind == "rasters"
        inputs[kind] = next(iter(by_entry.values())) if single else _merged(ctx, by_entry)
        inputs[f"{kind}_by_entry"] = by_entry
    return inputs, read


def _merged(ctx: ToolContext, by_entry: Mapping[str, SandboxEntry]) -> SandboxEntry:
    key = "+".join(f"{e.id}@{e.version}" for e in by_entry.values())
    features: list[Any] = []
    for entry_id in by_entry:
        features.extend(ctx.entry_data(entry_id)["features"])
    collection = {"type": "FeatureCollection", "features": features}
    return ctx.cache.sandbox_entry(
        (ctx.chat_id, key, 1), lambda: SandboxEntry(f"merged:{_short_hash(key)}", 1, collection)
    )


def _short_hash(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()[:16]


@dataclass(frozen=True, kw_only=True)
class CodeCall:
    """One run of model-written code to make: what runs, over what, and how it is kept.

    Attributes:
        tool: The tool running it, for the record.
        code: A Python function body ending in ``return``.
        ids_by_kind: Entry ids per kind to hand to the code.
        name: The analysis name (monitors and trackers re-run by it).
        output_format: ``"chart"`` checks the result is a chart config the UI can draw.
        extra_inputs: More names for the code (``previous``, ``now``, ``log``).
        monitored: Record it as re-running when an input gets a new version.
        tracker: Record it as a tracker.
        rule: A tracker's rule.
        trigger: The entry version that caused a re-run.
        check: ``(value) -> value`` raising ``ToolError`` when the result's shape is wrong;
            it runs off the event loop.
    """

    tool: str
    code: str
    ids_by_kind: Mapping[str, Sequence[str]]
    name: str | None = None
    output_format: Literal["json", "chart"] = "json"
    extra_inputs: Mapping[str, Any] = field(default_factory=dict)
    monitored: bool = False
    tracker: bool = False
    rule: str | None = None
    trigger: EntryVersion | None = None
    check: Callable[[Any], Any] | None = None


@dataclass(frozen=True)
class _Judged:
    """The code's result as the run keeps it: the value, or why it is refused."""

    value: Any
    error: str | None
    hint: str | None


@dataclass
class _Minted:
    """What a run minted into the ledger, and the events that say so."""

    events: list[EventBody] = field(default_factory=list)
    figures: list[Value] = field(default_factory=list)
    layers: list[dict[str, Any]] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


async def run_code(ctx: ToolContext, call: CodeCall) -> CodeRun:
    """Run ``call``'s code over the requested entries, mint what it minted, record the run.

    The steps: gather the inputs, run the code in the sandbox, judge the result (a chart,
    the call's check), mint its layers and figures into the ledger, and append them with
    the run's record in one batch.

    Raises:
        ToolError: An entry id is wrong (nothing ran, nothing recorded).
    """
    inputs, read = gather_inputs(ctx, call.ids_by_kind)
    inputs.update(call.extra_inputs)
    await ctx.require("runs_code", {"code": call.code, "reads": [r.entry_id for r in read]})
    ctx.progress(call.tool, call.name, "running")
    result = await ctx.sandbox.arun(call.code, inputs)
    ctx.progress(call.tool, call.name, "done", round(result.duration_ms))
    judged = await _judge(call, result)
    analysis_id = ctx.workspace.next_analysis_id()
    minted = await _mint(ctx, call, result, read, analysis_id)
    if judged.error is not None and (minted.figures or minted.layers):
        kept = [v.id for v in minted.figures] + [str(layer["id"]) for layer in minted.layers]
        minted.notes.append(f"{', '.join(kept)} minted before the error, and kept")
    record = _record(
        ctx,
        analysis_id=analysis_id,
        code=call.code,
        code_hash=hash_code(call.code),
        inputs=tuple(read),
        values=tuple(v.id for v in minted.figures),
        layers=tuple(str(layer["id"]) for layer in minted.layers),
        error=judged.error,
        monitored=call.monitored,
        tracker=call.tracker,
        name=call.name,
        tool=call.tool,
        output_format=call.output_format,
        result=judged.value if judged.error is None else None,
        rule=call.rule,
        trigger=call.trigger,
    )
    ctx.append([*minted.events, record])
    return CodeRun(
        record=record,
        sandbox=result,
        value=judged.value,
        figures=tuple(minted.figures),
        layers=tuple(minted.layers),
        error=judged.error,
        hint=judged.hint,
        notes=tuple(minted.notes),
    )


async def _judge(call: CodeCall, result: SandboxResult) -> _Judged:
    """The result as kept: an error when the code failed, a chart cannot be drawn, or the
    call's check refuses its shape."""
    if not result.ok:
        return _Judged(result.value, _error_text(result), result.hint)
    value: Any = result.value
    if call.output_format == "chart":
        try:
            value = validate_chart(value)
        except (ChartError, ValueError) as exc:
            return _Judged(value, f"the result is not a chart the UI can draw: {exc}", None)
    if call.check is not None:
        try:
            # A check may validate or cluster a large result: off the event loop.
            value = await intake_offload(call.check, value)
        except ToolError as exc:
            return _Judged(value, exc.message, exc.hint)
    return _Judged(value, None, result.hint)


async def _mint(
    ctx: ToolContext,
    call: CodeCall,
    result: SandboxResult,
    read: list[EntryVersion],
    analysis_id: str,
) -> _Minted:
    """Mint the run's layers (each an entry of its own first) and figures into the ledger."""
    minted = _Minted()
    code_hash = hash_code(call.code)
    sources = sources_of(ctx, read)
    written_layers = []
    for layer_record in result.layers:
        label = layer_record.label
        data: dict[str, Any] | Raster
        try:
            if layer_record.raster is not None:
                # Decompressed against the shape and dtype it declared, off the loop.
                data = await intake_offload(layer_record.raster.to_raster)
            else:
                # A minted layer is checked and repaired like any GeoJSON that reaches the map.
                data = (await intake_aload(layer_record.data, label=label)).data
        except (IntakeError, ValueError, OverflowError) as exc:
            problems = "; ".join(exc.problems[:3]) if isinstance(exc, IntakeError) else str(exc)
            minted.notes.append(f"layer {label!r} was not minted: {problems[:500]}")
            continue
        try:
            await ctx.require("code_entry", _layer_preview(label, data, call.code))
        except EffectRefusedError as refused:
            minted.notes.append(f"layer {label!r} was not added: {refused.message}")
            continue
        written = await ctx.write_entry(
            kind="rasters" if isinstance(data, Raster) else "geometries",
            data=data,
            label=label,
            sources=sources,
            derived_from=read,
        )
        written_layers.append((label, written))
    ledger = ctx.workspace.ledger
    for label, written in written_layers:
        layer, ledger = ledger.mint_layer(
            label=label,
            entry=EntryVersion(entry_id=written.entry_id, version=written.version),
            feature_count=digest_count(written.digest) or 0,
            bbox=digest_bbox(written.digest),
            sources=sources,
            minted_by=analysis_id,
            code_hash=code_hash,
            inputs=read,
        )
        minted.events.append(LayerMinted(layer=layer))
        described = written.digest.get("raster")
        minted.layers.append(
            {
                "id": layer.id,
                "entry_id": written.entry_id,
                "label": layer.label,
                **({"raster": described} if described else {"feature_count": layer.feature_count}),
            }
        )
    for figure in result.figures:
        narrowed = _narrowed(ctx, figure.sources, read, minted.notes)
        outside = _period_outside(figure.period, sources_of(ctx, narrowed))
        if outside is not None:
            minted.notes.append(f"figure {figure.label!r} was not minted: {outside}")
            continue
        try:
            value, ledger = ledger.mint_value(
                label=figure.label,
                value=figure.value,
                unit=figure.unit,
                period=figure.period,
                sources=sources_of(ctx, narrowed),
                minted_by=analysis_id,
                code_hash=code_hash,
                inputs=narrowed,
            )
        except ValueError as exc:
            minted.notes.append(f"figure {figure.label!r} was not minted: {exc}")
            continue
        minted.events.append(ValueMinted(value=value))
        minted.figures.append(value)
    return minted


def _record(ctx: ToolContext, *, result: Any, **fields: Any) -> AnalysisRecorded:
    text = json.dumps(result, ensure_ascii=False, separators=(",", ":"), default=str)
    if len(text) <= _INLINE_RESULT:
        return AnalysisRecorded(result=result, **fields)
    blob = ctx.chats.store.put_blob(ctx.chat_id, text.encode("utf-8"), "application/json")
    return AnalysisRecorded(result=None, result_blob=blob, **fields)


def stored_result(ctx: ToolContext, record: AnalysisRecorded) -> Any:
    """The result a recorded run returned, read back from its blob when it was large."""
    if record.result_blob is not None:
        return json.loads(ctx.chats.read_blob(ctx.chat_id, record.result_blob))
    return record.result


def _error_text(result: SandboxResult) -> str:
    error = result.error
    if error is None:
        return "the code did not complete"
    where = (
        f" (line {error.line}: {error.code_line.strip()})" if error.line and error.code_line else ""
    )
    return f"{error.type}: {error.message}{where}"


def sources_of(ctx: ToolContext, read: Sequence[EntryVersion]) -> tuple[Provenance, ...]:
    """The union of the provenance of the entry versions read."""
    groups = [ctx.entry_version(i.entry_id, i.version).sources for i in read]
    return union(*groups) if groups else ()


def _period_outside(period: str | None, sources: Sequence[Provenance]) -> str | None:
    """Why a figure's period cannot be the one its sources state, or None when it can.

    A period model code wrote must lie inside the years the sources it rests on state: a
    figure read off a 1952 row of a 1952/2007 table may say 1952, not 2024.
    """
    if period is None:
        return None
    stated = [s.period for s in sources if s.period is not None]
    spans = [y for p in stated if (y := period_years(p)) is not None]
    if not spans:
        return None
    years = period_years(period)
    if years is None:
        if period == PERIOD_NOT_STATED:
            return None
        return f"period {period!r} names no year"
    if any(start <= years[0] and years[1] <= end for start, end in spans):
        return None
    return (
        f"its period {period!r} is outside what its sources state "
        f"({', '.join(dict.fromkeys(stated))}); pass the row's own period"
    )


def _narrowed(
    ctx: ToolContext, named: Any, read: list[EntryVersion], notes: list[str]
) -> list[EntryVersion]:
    """The inputs a figure rests on: those it named (when all were read), else all."""
    if not named:
        return read
    chosen = [i for i in read if i.entry_id in set(named)]
    unknown = sorted(set(named) - {i.entry_id for i in read})
    if unknown:
        notes.append(
            f"mint.value sources {', '.join(unknown)} were not inputs of this call; the "
            "figure rests on all of its inputs instead"
        )
        return read
    return chosen


def figure_digests(values: Sequence[Value]) -> list[dict[str, Any]]:
    """Minted values as the model reads them: id, label, value and unit."""
    return [
        {
            "id": v.id,
            "label": v.label,
            "value": v.value,
            **({"unit": v.unit} if v.unit else {}),
            **({"period": v.period} if v.period else {}),
        }
        for v in values
    ]


def _layer_preview(label: str, data: Mapping[str, Any] | Raster, code: str) -> dict[str, Any]:
    """What a person approving a code-made layer reads: its label, size and the code."""
    if isinstance(data, Raster):
        rows, cols = data.shape
        return {"label": label, "raster": f"{rows:,} x {cols:,} cells", "code": code}
    return {"label": label, "features": len(data.get("features") or []), "code": code}
