"""From stored events to the parts a person is shown: one pure function, two callers.

:func:`parts_of` turns one event, with the chat's state folded through it, into its
parts. The live stream calls it on each event a run appends (:class:`Projector`), and a
chat read back calls it on each stored event (:func:`chat_parts`): the same function over
the same events, so a reopened chat shows exactly what was shown, in the order shown.

The state is folded only as far as an event needs (figure cards name minted values,
approval previews name entries' labels), and only when one does, so reading back a long
chat folds it once, not once per event.

Chats written before tool calls and answer blocks were kept as events read back too: an
answer written as one message at the end of its run gives its tool calls (from the
answer's summary, without their results), then its text, then how the run ended.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Mapping
from datetime import datetime
from typing import Any, Final, TypedDict
from urllib.parse import quote

from pydantic import JsonValue

from geomint.codegen.style import map_change_problems
from geomint.geo.errors import GeoInputError
from geomint.geo.raster import image_corners
from geomint.provenance import Value
from geomint.provenance.citations import CheckedText
from geomint.sandbox import RASTER_MEDIA_TYPE
from geomint.state import (
    AnalysisRecorded,
    ApprovalAsked,
    ApprovalGiven,
    ApprovalRefused,
    BasemapChanged,
    BlobRef,
    DiscoveryRan,
    Entry,
    EntryDisplayChanged,
    EntryWritten,
    Event,
    FetchMissed,
    FigurePresented,
    LanguageChanged,
    LayerStyle,
    MapChanged,
    MapChangeUndone,
    MessageAdded,
    MonitorFailed,
    MonitorSwitched,
    ObservationRecorded,
    RunEnded,
    ToolCalled,
    ToolFailed,
    ToolReturned,
    ViewChanged,
    Workspace,
    entry_style,
    fold,
)
from geomint.store import Appended, Chats
from geomint.tools._digest import digest_bbox, digest_count
from geomint.tools.effects import EFFECTS
from geomint.ui.parts import (
    AnalysisPart,
    ApprovalAnsweredPart,
    ApprovalAskedPart,
    BasemapPart,
    ChartPart,
    DiscoveryPart,
    DisplayPart,
    DurablePart,
    EntryPart,
    FigureCard,
    FigurePart,
    LanguagePart,
    LayerCard,
    MapChangePart,
    MapUndonePart,
    MissPart,
    MonitorRanPart,
    MonitorSwitchedPart,
    ObservationPart,
    QuestionPart,
    RasterView,
    RunEndedPart,
    TextPart,
    ToolCallPart,
    ToolResultPart,
    UploadPart,
    ViewPart,
)

__all__ = [
    "BlobReader",
    "Projector",
    "approval_preview",
    "card_period",
    "chat_parts",
    "discovery_summary",
    "entry_url",
    "figure_card",
    "parts_of",
    "raster_url",
    "raster_view",
]


class _Origin(TypedDict):
    """The event a durable part was projected from."""

    seq: int
    run_id: str
    at: datetime


#: Reads a stored blob's bytes (an analysis result or chart kept apart from its event).
BlobReader = Callable[[BlobRef], bytes]

#: The event types whose parts read the folded state; the rest read only the event.
_NEEDS_STATE: Final = (
    AnalysisRecorded,
    FigurePresented,
    ApprovalAsked,
    EntryWritten,
    EntryDisplayChanged,
    MapChanged,
)


def parts_of(event: Event, workspace: Workspace, read: BlobReader) -> list[DurablePart]:
    """The parts one stored event shows, in order.

    Args:
        event: The event.
        workspace: The chat's state folded through ``event`` (read only by analyses,
            figures and approvals).
        read: Reads a blob the event names (a chart stored apart).
    """
    body = event.body
    at = _Origin(seq=event.seq, run_id=event.run_id, at=event.at)
    match body:
        case MessageAdded():
            return _message(body, at)
        case ToolCalled():
            return [ToolCallPart(**at, call_id=body.call_id, tool=body.tool, args=body.arguments)]
        case ToolReturned():
            return [ToolResultPart(**at, call_id=body.call_id, tool=body.tool, ok=True,
                                   result=body.result)]  # fmt: skip
        case ToolFailed() if body.call_id is not None:
            return [ToolResultPart(**at, call_id=body.call_id, tool=body.tool, ok=False,
                                   result=body.result, error=body.error)]  # fmt: skip
        case RunEnded():
            return [
                RunEndedPart(
                    **at,
                    steps=body.steps,
                    stopped=body.stopped,
                    error=body.error,
                    cited=body.cited,
                    matched=body.matched,
                    unminted=body.unminted,
                    requests=body.requests,
                    input_tokens=body.input_tokens,
                    output_tokens=body.output_tokens,
                    model=body.model,
                )
            ]
        case EntryWritten():
            return [_entry(event.chat_id, body, at, entry_style(workspace, body.entry_id))]
        case EntryDisplayChanged():
            style = entry_style(workspace, body.entry_id) if body.style is not None else None
            shown = workspace.entries[body.entry_id]
            removed = shown.removed if body.removed is not None or body.visible else None
            return [DisplayPart(**at, entry_id=body.entry_id, visible=shown.visible if
                                removed is not None else body.visible, style=style,
                                removed=removed)]  # fmt: skip
        case ViewChanged():
            return [ViewPart(**at, center=body.center, zoom=body.zoom, bbox=body.bbox,
                             padding=body.padding)]  # fmt: skip
        case AnalysisRecorded():
            return _analysis(event.chat_id, body, workspace, read, at)
        case FigurePresented():
            values = {v.id: v for v in workspace.values}
            cards = tuple(figure_card(values[v]) for v in body.value_ids if v in values)
            return [FigurePart(**at, title=body.title, figures=cards)]
        case ObservationRecorded():
            return [ObservationPart(**at, conflict=body.conflict)]
        case FetchMissed():
            return [_miss(body, at)]
        case MonitorSwitched():
            return [MonitorSwitchedPart(**at, name=body.name, on=body.on)]
        case MonitorFailed():
            return [MonitorRanPart(**at, name=body.name, tracker=body.tracker,
                                   trigger=body.trigger, ok=False, error=body.error)]  # fmt: skip
        case ApprovalAsked():
            about: dict[str, Any] = dict(body.about)
            proposed = about.get("diff")
            if isinstance(proposed, dict):  # map code: the page draws it as a preview
                about["diff"] = routed_diff(event.chat_id, proposed, workspace.entries)
            preview = approval_preview(
                body.tool, body.arguments, workspace.entries, effects=body.effects,
                about=about,
            )  # fmt: skip
            return [ApprovalAskedPart(**at, approval_id=body.approval_id, tool=body.tool,
                                      args=body.arguments, effects=body.effects,
                                      preview=preview)]  # fmt: skip
        case ApprovalGiven():
            return [ApprovalAnsweredPart(**at, approval_id=body.approval_id, approved=True)]
        case ApprovalRefused():
            return [ApprovalAnsweredPart(**at, approval_id=body.approval_id, approved=False,
                                         reason=body.reason)]  # fmt: skip
        case BasemapChanged():
            return [BasemapPart(**at, style=body.style)]
        case LanguageChanged():
            return [LanguagePart(**at, language=body.language)]
        case MapChanged():
            return [_map_change(event.chat_id, body, workspace, at)]
        case MapChangeUndone():
            return [MapUndonePart(**at, change_id=body.change_id)]
        case DiscoveryRan():
            return [_discovery(body, at)]
    return []


def chat_parts(chats: Chats, chat_id: str, *, run_id: str | None = None) -> list[DurablePart]:
    """A stored chat's parts in order (one run's, with ``run_id``).

    Raises:
        NoSuchChatError: There is no such chat.
    """
    chats.open(chat_id)  # an unknown chat raises here, not as an empty list
    projector = Projector(chats, Workspace(chat_id=chat_id))
    parts = projector.project(chats.trace(chat_id))
    return parts if run_id is None else [p for p in parts if p.run_id == run_id]


class Projector:
    """Projects a chat's events as they come, folding its state only when a part needs it.

    Args:
        chats: Where blobs are read from.
        start: The chat's state before the first event it is given.
    """

    def __init__(self, chats: Chats, start: Workspace) -> None:
        self._chats = chats
        self._state = start
        self._pending: list[Event] = []

    def appended(self, appended: Appended) -> list[DurablePart]:
        """The parts of what one append stored (``appended.before`` is where it began)."""
        if self._state.last_seq + len(self._pending) != appended.before.last_seq:
            # Someone else appended in between (another run of the chat): begin at the
            # state this append was checked against.
            self._state, self._pending = appended.before, []
        return self.project(appended.events)

    def project(self, events: Iterable[Event]) -> list[DurablePart]:
        """The parts of ``events``, which follow those projected before."""
        out: list[DurablePart] = []
        for event in events:
            self._pending.append(event)
            if isinstance(event.body, _NEEDS_STATE):
                self._state, self._pending = fold(self._pending, self._state), []
            out.extend(parts_of(event, self._state, self._read))
        return out

    def _read(self, ref: BlobRef) -> bytes:
        return self._chats.read_blob(self._state.chat_id, ref)


# -- helpers -------------------------------------------------------------------------------


def entry_url(chat_id: str, entry_id: str, version: int) -> str:
    """Where an entry version's GeoJSON is served."""
    chat, entry = quote(chat_id, safe=""), quote(entry_id, safe="")
    return f"/api/chats/{chat}/entries/{entry}?version={version}"


def raster_url(
    chat_id: str, entry_id: str, version: int | None = None, *, legend: bool = False
) -> str:
    """Where a raster entry version's picture (a PNG) is served, or with ``legend`` what
    its legend needs (JSON: the values at the colour ramp's ends, its colours, the corners).
    Without a version, the entry's latest."""
    chat, entry = quote(chat_id, safe=""), quote(entry_id, safe="")
    name = "raster.json" if legend else "raster.png"
    return f"/api/chats/{chat}/entries/{entry}/{name}" + (
        "" if version is None else f"?version={version}"
    )


def map_blob_url(chat_id: str, sha256: str) -> str:
    """Where a blob a map change names (GeoJSON or a PNG the code built) is served."""
    return f"/api/chats/{quote(chat_id, safe='')}/map-blobs/{sha256}"


def _map_change(chat_id: str, body: MapChanged, workspace: Workspace, at: _Origin) -> MapChangePart:
    """The change with its sources pointing at geomint's routes; a stored change that does
    not pass the checks again (an import) is shown with its problem and an empty diff."""
    # The workspace is folded through this change, so it is the newest applied one and is
    # checked over the map the changes before it made.
    problem = map_change_problems(workspace).get(body.change_id)
    diff = routed_diff(chat_id, body.diff, workspace.entries) if problem is None else EMPTY_DIFF
    return MapChangePart(
        **at, change_id=body.change_id, intent=body.intent, description=body.description,
        diff=diff, code=body.code, attempts=body.attempts,
        usage=body.usage.model_dump(mode="json"), spec_version=body.spec_version,
        problem=problem,
    )  # fmt: skip


#: What the page is given for a stored change it must not apply.
EMPTY_DIFF: Final[dict[str, Any]] = {
    "added": {"sources": {}, "layers": []}, "removed": {"sources": [], "layers": []},
    "updated": {"layers": []}, "camera": None, "animations": [], "order": [],
}  # fmt: skip


def routed_diff(
    chat_id: str, stored: Mapping[str, Any], entries: Mapping[str, Entry]
) -> dict[str, Any]:
    """A map diff with its sources' data at geomint's routes: an entry at its version when
    the change was made (a raster entry's picture), a blob by its hash (a copy; ``stored``
    is unchanged). An image of a raster entry the chat does not hold as a raster gets no
    URL: the page refuses it rather than ask for it."""
    diff: dict[str, Any] = json.loads(json.dumps(stored))
    for source in ((diff.get("added") or {}).get("sources") or {}).values():
        data = source.get("data")
        if source.get("type") == "geojson" and isinstance(data, dict):
            entry = entries.get(str(data.get("entry")))
            if entry is not None:
                source["data"] = entry_url(chat_id, entry.entry_id, entry.latest.version)
            elif isinstance(data.get("blob"), str):
                source["data"] = map_blob_url(chat_id, data["blob"])
        elif source.get("type") == "image" and "raster" in source:
            named = source.pop("raster")
            entry = entries.get(str(named.get("entry"))) if isinstance(named, dict) else None
            if entry is not None and entry.latest.blob.media_type == RASTER_MEDIA_TYPE:
                source["url"] = raster_url(chat_id, entry.entry_id, entry.latest.version)
        elif source.get("type") == "image":
            image = source.pop("image", {})
            source["url"] = map_blob_url(chat_id, str(image.get("sha256")))
    return diff


def card_period(value: Value) -> str | None:
    """The period a card shows: the value's own, and beside it its sources' when they
    differ (``"2007 (of 1952/2007)"``), so a period code chose never hides the one the
    source states; without its own, the sources' distinct periods."""
    periods = list(dict.fromkeys(s.period for s in value.sources if s.period is not None))
    if value.period is None:
        return "; ".join(periods) or None
    if not periods or periods == [value.period]:
        return value.period
    return f"{value.period} (of {'; '.join(periods)})"


def figure_card(value: Value) -> FigureCard:
    """A minted value as a figure card: the number, its unit and label, and its sources."""
    return FigureCard(
        id=value.id,
        label=value.label,
        value=value.value,
        unit=value.unit,
        period=card_period(value),
        licences=tuple(value.licences),
        sources=value.sources,
        minted_by=value.minted_by,
        inputs=value.inputs,
    )


def approval_preview(
    name: str,
    args: Mapping[str, Any],
    entries: Mapping[str, Entry],
    *,
    effects: Iterable[str] = (),
    about: Mapping[str, Any] | None = None,
) -> dict[str, JsonValue]:
    """What a call would do, as far as it can be known before it runs.

    For a code tool: the code, the entries it would read (with their labels), and what it
    would add to the map (a new entry, or a new version of the one it replaces). Any other
    tool shows its arguments only. ``entries`` are the chat's, for the labels. The
    ``effects`` asked for come each with what it means; ``about`` is what the effect would
    do (``{"label", "features"}`` of a layer, ``rerun`` for a monitor's re-run).
    """
    meanings: dict[str, str] = {str(k): v for k, v in EFFECTS.items()}
    out: dict[str, JsonValue] = {}
    shown: list[JsonValue] = [{"effect": e, "means": meanings[e]} for e in effects if e in meanings]
    if shown:
        out["effects"] = shown
    if about:
        out["about"] = dict(about)
    code = args.get("code")
    if isinstance(code, str):
        out["code"] = code
    # By argument name, not the arguments' order: a store may keep a JSON object's keys
    # in another order (PostgreSQL's jsonb does), and the preview must read back the same.
    reads: list[JsonValue] = [
        {"entry_id": e, "label": entries[e].latest.label}
        for key, ids in sorted(args.items())
        if key.endswith("_entry_ids") and isinstance(ids, list)
        for e in ids
        if isinstance(e, str) and e in entries
    ]
    if reads:
        out["reads"] = reads
    if name == "process_data":
        replaces = args.get("replace")
        label = args.get("label")
        out["adds"] = (
            f"a new version of {replaces}"
            if isinstance(replaces, str)
            else f"new map layers{f' labelled {label!r}' if isinstance(label, str) else ''}"
        )
    return out


def _message(body: MessageAdded, at: _Origin) -> list[DurablePart]:
    out: list[DurablePart] = []
    text = body.text()
    if body.role == "user":
        for part in body.parts:
            if part.get("kind") == "upload":
                out.append(_upload(body.message_id, part, at))
        if text:
            out.append(QuestionPart(**at, message_id=body.message_id, text=text))
        return out
    # An answer. Today each block is its own message; before, a run's one message held
    # its text and a summary of its tool calls, and said whether the run was stopped.
    legacy = [p for p in body.parts if p.get("kind") in ("tool", "stopped")]
    for part in legacy:
        if part.get("kind") == "tool":
            name = str(part.get("name") or "")
            args = part.get("args")
            ok = part.get("ok")
            out.append(ToolCallPart(**at, tool=name, args=args if isinstance(args, dict) else {}))
            out.append(ToolResultPart(**at, tool=name, ok=bool(ok) if ok is not None else True))
    if text:
        out.append(TextPart(**at, message_id=body.message_id, text=text, **_checked(body)))
    if legacy or body.message_id.endswith("-a"):
        stopped = any(p.get("kind") == "stopped" for p in body.parts)
        out.append(RunEndedPart(**at, stopped=stopped))
    return out


def _checked(body: MessageAdded) -> dict[str, Any]:
    """An answer block's check (``{"kind": "checked", ...}``), as TextPart fields."""
    for part in body.parts:
        if part.get("kind") == "checked":
            checked = CheckedText.model_validate({k: v for k, v in part.items() if k != "kind"})
            return {
                "segments": checked.segments,
                "cited": checked.cited,
                "matched": checked.matched,
                "unminted": checked.unminted,
            }
    return {}


def _upload(message_id: str, part: Mapping[str, Any], at: _Origin) -> UploadPart:
    def text(key: str) -> str:
        value = part.get(key)
        return value if isinstance(value, str) else ""

    features = part.get("features")
    warnings = part.get("warnings")
    return UploadPart(
        **at,
        message_id=message_id,
        name=text("name"),
        entry_id=text("entry_id"),
        label=text("label"),
        format=text("format") or None,
        features=features if isinstance(features, int) else None,
        warnings=tuple(str(w) for w in warnings) if isinstance(warnings, list) else (),
    )


def _entry(chat_id: str, body: EntryWritten, at: _Origin, style: LayerStyle | None) -> EntryPart:
    if body.blob.media_type == RASTER_MEDIA_TYPE:
        return EntryPart(
            style=style, **at, entry_id=body.entry_id, kind=body.kind, version=body.version,
            label=body.label, sources=body.sources, derived_from=body.derived_from,
            bbox=digest_bbox(body.digest), bytes=body.blob.size, geojson_url=None,
            raster=raster_view(chat_id, body),
        )  # fmt: skip
    return EntryPart(
        style=style,
        **at,
        entry_id=body.entry_id,
        kind=body.kind,
        version=body.version,
        label=body.label,
        sources=body.sources,
        derived_from=body.derived_from,
        features=digest_count(body.digest),
        bbox=digest_bbox(body.digest),
        bytes=body.blob.size,
        geojson_url=entry_url(chat_id, body.entry_id, body.version),
    )


def raster_view(chat_id: str, body: EntryWritten) -> RasterView:
    """How the map draws a raster entry version: its picture's URL, its legend's, where its
    corners go (from the digest's lon/lat bbox, as the picture is drawn) and its summary."""
    bbox = digest_bbox(body.digest)
    coordinates = None
    if bbox is not None:
        try:
            coordinates = image_corners(bbox)
        except GeoInputError:  # a bbox of no height, or beyond Web Mercator's latitudes
            coordinates = None
    summary = body.digest.get("raster")
    return RasterView(
        image_url=raster_url(chat_id, body.entry_id, body.version),
        legend_url=raster_url(chat_id, body.entry_id, body.version, legend=True),
        coordinates=coordinates,
        summary=summary if isinstance(summary, dict) else {},
    )


def _analysis(
    chat_id: str,
    body: AnalysisRecorded,
    workspace: Workspace,
    read: BlobReader,
    at: _Origin,
) -> list[DurablePart]:
    values = {v.id: v for v in workspace.values}
    manifest = workspace.manifest
    cards = tuple(figure_card(values[v]) for v in body.values if v in values)
    layers = tuple(
        LayerCard(
            id=layer.id,
            entry_id=layer.entry.entry_id,
            label=layer.label,
            feature_count=layer.feature_count,
        )
        for layer in (manifest[i] for i in body.layers if i in manifest)
    )
    ok = body.error is None
    result_url = None
    if body.result_blob is not None:
        analysis = quote(body.analysis_id, safe="")
        result_url = f"/api/chats/{quote(chat_id, safe='')}/analyses/{analysis}"
    out: list[DurablePart] = [
        AnalysisPart(
            **at,
            analysis_id=body.analysis_id,
            tool=body.tool,
            name=body.name,
            ok=ok,
            output_format=body.output_format,
            result=body.result if ok else None,
            result_url=result_url,
            error=body.error,
            figures=cards,
            layers=layers,
            code=body.code,
            inputs=body.inputs,
            trigger=body.trigger,
        )
    ]
    if ok and body.output_format == "chart":
        config = body.result
        if body.result_blob is not None:
            config = json.loads(read(body.result_blob))
        if isinstance(config, dict):
            out.append(ChartPart(**at, analysis_id=body.analysis_id, name=body.name,
                                 config=config))  # fmt: skip
    if body.trigger is not None:
        out.append(
            MonitorRanPart(
                **at,
                name=body.name,
                tracker=body.tracker,
                analysis_id=body.analysis_id,
                trigger=body.trigger,
                ok=ok,
                result=body.result if ok else None,
                error=body.error,
            )
        )
    return out


def discovery_summary(body: DiscoveryRan) -> str:
    """The one line a discovery's row shows: "Searched 2 catalogues, 3 candidates"."""
    searched = len(body.searches)
    kept = len(body.shortlist)
    failed = sum(1 for s in body.searches if not s.ok)
    line = (
        f"Searched {searched} catalogue{'s' * (searched != 1)}, {kept} candidate{'s' * (kept != 1)}"
    )
    return line + (f" ({failed} failed)" if failed else "")


def _discovery(body: DiscoveryRan, at: _Origin) -> DiscoveryPart:
    return DiscoveryPart(
        **at, call_id=body.call_id, summary=discovery_summary(body), query=body.query,
        searches=body.searches, shortlist=body.shortlist, ranked_by=body.ranked_by,
        dropped=body.dropped, problem=body.problem, usage=body.usage.model_dump(mode="json"),
    )  # fmt: skip


def _miss(body: FetchMissed, at: _Origin) -> MissPart:
    code, reason = body.code, body.reason
    if code is None:
        # Chats written before the code was kept stored it as the reason's prefix.
        head, sep, rest = reason.partition(": ")
        if sep and head.isidentifier() and head.islower() and rest:
            code, reason = head, rest
    return MissPart(**at, tool=body.tool, provider=body.provider, code=code, reason=reason)
