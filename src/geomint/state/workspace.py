"""The workspace of one chat, as a pure fold over its events.

:func:`fold` reads events in sequence order and returns a :class:`Workspace`: the chat's
entries by kind with every version, what the map shows, the analyses (monitored ones and
trackers among them), the value ledger, conflicts, approvals, misses and failures, and
the figures a chat list needs (title, last activity). Nothing here touches a store; a
store keeps a snapshot of a folded workspace so that opening a chat folds only the
events after it.

A workspace also says what may be appended next (:meth:`Workspace.refusal`): an entry
version that skips one, a value id already issued, an approval answered twice. The code
that appends asks first, so the log only ever holds events that fold.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from datetime import datetime
from functools import cached_property
from typing import Any, Literal

from pydantic import AwareDatetime, BaseModel, ConfigDict, Field

from geomint.errors import OperatorError
from geomint.provenance import Conflict, Layer, Ledger, Value
from geomint.state.events import (
    ENTRY_KINDS,
    AnalysisRecorded,
    ApprovalAsked,
    ApprovalGiven,
    ApprovalRefused,
    BasemapChanged,
    ChatCreated,
    ChatDeleted,
    ChatRenamed,
    EntryDisplayChanged,
    EntryWritten,
    Event,
    EventBody,
    FetchMade,
    FetchMissed,
    FigurePresented,
    LanguageChanged,
    LayerMinted,
    MapChanged,
    MapChangeUndone,
    MessageAdded,
    MonitorSwitched,
    ObservationRecorded,
    ToolFailed,
    ValueMinted,
    ViewChanged,
)

__all__ = ["Approval", "CorruptLogError", "Entry", "Workspace", "fold"]

_TITLE_CHARS = 80


class CorruptLogError(OperatorError, ValueError):
    """The stored events do not fold: one contradicts what came before it.

    An operator's error: the log was written wrongly or changed outside geomint, and the
    chat cannot be opened until it is repaired. It is a ``ValueError`` too.
    """


class Entry(BaseModel):
    """One entry with every version written, and what the map shows of it.

    Attributes:
        entry_id: ``<kind>-<n>``.
        kind: Its collection.
        versions: Every write, oldest first; ``versions[-1]`` is the latest.
        visible: Whether the map shows it.
        style: Display style set for it, if any.
        removed: Taken off the map and its layer list (still in the chat).
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    entry_id: str
    kind: str
    versions: tuple[EntryWritten, ...]
    visible: bool = True
    style: dict[str, Any] | None = None
    removed: bool = False

    @property
    def latest(self) -> EntryWritten:
        """The newest version."""
        return self.versions[-1]

    @property
    def version(self) -> int:
        """The newest version number."""
        return self.versions[-1].version


class Approval(BaseModel):
    """A tool call waiting for, or answered by, a person."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    asked: ApprovalAsked
    answer: Literal["pending", "given", "refused"] = "pending"
    reason: str = ""


class Workspace(BaseModel):
    """Everything one chat has gathered, folded from its events.

    Attributes:
        chat_id: The chat.
        last_seq: The sequence number of the last event folded in (0 for none).
        created_at: When the chat's first event was appended.
        updated_at: When its last event was appended.
        deleted: Whether a tombstone was appended.
        title: What the chat is called: the title a person gave it (``named``), else
            its first user question, else the name of the first file dropped on it.
        named: The title a person gave it last (:class:`ChatRenamed`), or None.
        first_question: The chat's first user question, cut to 80 characters.
        first_upload: The name of the first file dropped on the chat, cut likewise.
        message_count: Messages in the chat.
        last_message_at: When the newest message was added (the chat list's order).
        entries: Every entry by id, in the order they were first written.
        analyses: Every analysis by id.
        values: Every value minted, in id order.
        layers: Every layer minted, in id order.
        observations: Conflicts recorded between values.
        approvals: Approvals by id.
        fetches: How many fetches were made.
        misses: The fetches that missed, with their reasons.
        failures: The tool calls that failed.
        switched_off: Names of monitors and trackers switched off.
        view: The map's last camera move, if any.
        presented: The figures put in front of the person, in order.
        basemap: The basemap style the map was last switched to (None: the default).
        language: The language the map's labels were last switched to (None: ``name``).
        map_changes: Every change map code made to the map's style, in order.
        undone: The ids of the map changes taken back.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    chat_id: str
    last_seq: int = 0
    created_at: AwareDatetime | None = None
    updated_at: AwareDatetime | None = None
    deleted: bool = False
    title: str | None = None
    named: str | None = None
    first_question: str | None = None
    first_upload: str | None = None
    message_count: int = 0
    last_message_at: AwareDatetime | None = None
    entries: dict[str, Entry] = Field(default_factory=dict)
    analyses: dict[str, AnalysisRecorded] = Field(default_factory=dict)
    values: tuple[Value, ...] = ()
    layers: tuple[Layer, ...] = ()
    observations: tuple[Conflict, ...] = ()
    approvals: dict[str, Approval] = Field(default_factory=dict)
    fetches: int = 0
    misses: tuple[FetchMissed, ...] = ()
    failures: tuple[ToolFailed, ...] = ()
    switched_off: frozenset[str] = frozenset()
    view: ViewChanged | None = None
    presented: tuple[FigurePresented, ...] = ()
    basemap: str | None = None
    language: str | None = None
    map_changes: tuple[MapChanged, ...] = ()
    undone: frozenset[str] = frozenset()

    # -- entries by kind ---------------------------------------------------------------

    def of_kind(self, kind: str) -> tuple[Entry, ...]:
        """Return the entries of one kind, in the order they were first written."""
        if kind not in ENTRY_KINDS:
            raise ValueError(f"unknown entry kind {kind!r}; kinds are {', '.join(ENTRY_KINDS)}")
        return tuple(e for e in self.entries.values() if e.kind == kind)

    @property
    def places(self) -> tuple[Entry, ...]:
        """Point layers from place searches."""
        return self.of_kind("places")

    @property
    def routes(self) -> tuple[Entry, ...]:
        """Routes."""
        return self.of_kind("routes")

    @property
    def ranges(self) -> tuple[Entry, ...]:
        """Reachable-area polygons."""
        return self.of_kind("ranges")

    @property
    def incidents(self) -> tuple[Entry, ...]:
        """Traffic incidents."""
        return self.of_kind("incidents")

    @property
    def geometries(self) -> tuple[Entry, ...]:
        """Boundaries and other polygons."""
        return self.of_kind("geometries")

    @property
    def traffic_area_analytics(self) -> tuple[Entry, ...]:
        """Traffic analytics tiles."""
        return self.of_kind("traffic_area_analytics")

    @property
    def byod(self) -> tuple[Entry, ...]:
        """Data the user brought."""
        return self.of_kind("byod")

    @property
    def tables(self) -> tuple[Entry, ...]:
        """Tables read from published sources, one feature per row."""
        return self.of_kind("tables")

    def next_entry_id(self, kind: str) -> str:
        """The id a new entry of ``kind`` takes: ids are never reused within a chat."""
        numbers = [int(e.entry_id.rsplit("-", 1)[1]) for e in self.of_kind(kind)]
        return f"{kind}-{max(numbers, default=0) + 1}"

    # -- analyses, the ledger ------------------------------------------------------------

    @property
    def monitored(self) -> tuple[AnalysisRecorded, ...]:
        """Analyses that re-run when an input entry gets a new version."""
        return tuple(a for a in self.analyses.values() if a.monitored)

    @property
    def trackers(self) -> tuple[AnalysisRecorded, ...]:
        """Analyses that re-run with ``previous`` and ``now``, keeping a history."""
        return tuple(a for a in self.analyses.values() if a.tracker)

    def runs_of(self, name: str) -> tuple[AnalysisRecorded, ...]:
        """Every recorded run of the analysis named ``name``, oldest first."""
        return tuple(a for a in self.analyses.values() if a.name == name)

    def analyses_of(self, entry_id: str) -> tuple[AnalysisRecorded, ...]:
        """Every analysis that read ``entry_id`` (any version): what is recorded against it."""
        return tuple(
            a for a in self.analyses.values() if any(i.entry_id == entry_id for i in a.inputs)
        )

    def recipe(self, name: str) -> AnalysisRecorded | None:
        """The latest run of the analysis named ``name``, or None."""
        runs = self.runs_of(name)
        return runs[-1] if runs else None

    def watching(self, entry_id: str) -> tuple[AnalysisRecorded, ...]:
        """The monitors and trackers (switched on) that read ``entry_id``: their latest runs."""
        latest: dict[str, AnalysisRecorded] = {}
        succeeded: set[str] = set()
        for analysis in self.analyses.values():
            if analysis.name is not None:
                latest[analysis.name] = analysis
                if analysis.error is None:
                    succeeded.add(analysis.name)
        # A recipe that never ran cleanly is not watching anything: its first run failed.
        return tuple(
            a
            for name, a in latest.items()
            if (a.monitored or a.tracker)
            and name in succeeded
            and name not in self.switched_off
            and any(i.entry_id == entry_id for i in a.inputs)
        )

    def next_analysis_id(self) -> str:
        """The id the next analysis takes."""
        return f"a{len(self.analyses) + 1}"

    @cached_property
    def ledger(self) -> Ledger:
        """The chat's value ledger: what may be cited, and the next ids."""
        return Ledger.from_records(self.values, self.layers)

    @property
    def manifest(self) -> Mapping[str, Layer]:
        """The latest write per layer id."""
        return {layer.id: layer for layer in self.layers}

    @property
    def pending_approvals(self) -> tuple[Approval, ...]:
        """Approvals no one has answered yet."""
        return tuple(a for a in self.approvals.values() if a.answer == "pending")

    @property
    def applied_map_changes(self) -> tuple[MapChanged, ...]:
        """The map changes the map shows now (made and not undone), oldest first."""
        return tuple(c for c in self.map_changes if c.change_id not in self.undone)

    def next_map_change_id(self) -> str:
        """The id the next map change takes."""
        return f"m{len(self.map_changes) + 1}"

    def map_change_blocker(self, change_id: str) -> MapChanged | None:
        """A later applied change that builds on what ``change_id`` added (a layer or source
        it styles or draws from), which must be undone first; None when there is none."""
        applied = self.applied_map_changes
        index = next((i for i, c in enumerate(applied) if c.change_id == change_id), None)
        if index is None:
            return None
        # What it added (later changes may draw on it) and what it removed (later changes
        # may have taken the id again): undoing it would break or duplicate those.
        ids = _added_ids(applied[index].diff) | _removed_ids(applied[index].diff)
        for later in reversed(applied[index + 1 :]):
            if ids & _touched_ids(later.diff):
                return later
        return None

    # -- what may come next --------------------------------------------------------------

    def refusal(self, body: EventBody) -> str | None:
        """Say why ``body`` cannot be appended to this chat now, or None when it can."""
        if self.deleted:
            return f"chat {self.chat_id!r} was deleted"
        if isinstance(body, EntryWritten):
            entry = self.entries.get(body.entry_id)
            expected = 1 if entry is None else entry.version + 1
            if body.version != expected:
                return (
                    f"{body.entry_id} version {body.version} cannot follow "
                    f"{'nothing' if entry is None else f'version {entry.version}'}; "
                    f"write version {expected}"
                )
        elif isinstance(body, EntryDisplayChanged):
            if body.entry_id not in self.entries:
                return f"no entry {body.entry_id!r} in this chat"
        elif isinstance(body, AnalysisRecorded):
            if body.analysis_id in self.analyses:
                return f"analysis {body.analysis_id} was already recorded"
        elif isinstance(body, ValueMinted | LayerMinted):
            record = body.value if isinstance(body, ValueMinted) else body.layer
            try:
                self.ledger.apply(record)
            except ValueError as exc:
                return str(exc)
        elif isinstance(body, MonitorSwitched):
            recipe = self.recipe(body.name)
            if recipe is None or not (recipe.monitored or recipe.tracker):
                return f"no monitor or tracker named {body.name!r} in this chat"
        elif isinstance(body, FigurePresented):
            for value_id in body.value_ids:
                if value_id not in self.ledger:
                    return f"{value_id} was never minted in this chat"
        elif isinstance(body, ObservationRecorded):
            for value_id in (body.conflict.a.id, body.conflict.b.id):
                if value_id not in self.ledger:
                    return f"{value_id} was never minted in this chat"
        elif isinstance(body, MapChanged):
            if body.change_id != self.next_map_change_id():
                return f"the next map change is {self.next_map_change_id()}, not {body.change_id}"
        elif isinstance(body, MapChangeUndone):
            known = {c.change_id for c in self.map_changes}
            if body.change_id not in known:
                return f"no map change {body.change_id!r} in this chat"
            if body.change_id in self.undone:
                return f"map change {body.change_id} was already undone"
            blocker = self.map_change_blocker(body.change_id)
            if blocker is not None:
                return (
                    f"{blocker.change_id} builds on what {body.change_id} added; "
                    f"undo {blocker.change_id} first"
                )
        elif isinstance(body, ApprovalAsked):
            if body.approval_id in self.approvals:
                return f"approval {body.approval_id!r} was already asked"
        elif isinstance(body, ApprovalGiven | ApprovalRefused):
            approval = self.approvals.get(body.approval_id)
            if approval is None:
                return f"no approval {body.approval_id!r} was asked in this chat"
            if approval.answer != "pending":
                return f"approval {body.approval_id!r} was already {approval.answer}"
        return None


class _Fold:
    """The mutable accumulator :func:`fold` uses; frozen into a Workspace at the end."""

    def __init__(self, start: Workspace) -> None:
        self.data: dict[str, Any] = {name: getattr(start, name) for name in Workspace.model_fields}
        self.entries: dict[str, Entry] = dict(start.entries)
        self.analyses = dict(start.analyses)
        self.approvals = dict(start.approvals)
        self.values = list(start.values)
        self.layers = list(start.layers)
        self.observations = list(start.observations)
        self.misses = list(start.misses)
        self.failures = list(start.failures)
        self.switched_off = set(start.switched_off)
        self.presented = list(start.presented)
        self.map_changes = list(start.map_changes)
        self.undone = set(start.undone)
        # The ids minted so far, so an observation is checked without building a ledger.
        self.minted = {v.id for v in start.values} | {layer.id for layer in start.layers}

    def apply(self, event: Event) -> None:
        data = self.data
        if event.chat_id != data["chat_id"]:
            raise CorruptLogError(
                f"event {event.seq} belongs to chat {event.chat_id!r}, not {data['chat_id']!r}"
            )
        if event.seq != data["last_seq"] + 1:
            raise CorruptLogError(
                f"event {event.seq} follows event {data['last_seq']}: the log has a gap"
            )
        if data["deleted"]:
            raise CorruptLogError(f"event {event.seq} follows the chat's deletion")
        data["last_seq"] = event.seq
        data["created_at"] = data["created_at"] or event.at
        data["updated_at"] = event.at
        body = event.body
        handler = _HANDLERS.get(type(body))
        if handler is not None:
            handler(self, body, event.at)

    def finish(self) -> Workspace:
        data = self.data
        # A person's title wins; a question says more than a file's name.
        data["title"] = data["named"] or data["first_question"] or data["first_upload"]
        self.data.update(
            entries=self.entries,
            analyses=self.analyses,
            approvals=self.approvals,
            values=tuple(self.values),
            layers=tuple(self.layers),
            observations=tuple(self.observations),
            misses=tuple(self.misses),
            failures=tuple(self.failures),
            switched_off=frozenset(self.switched_off),
            presented=tuple(self.presented),
            map_changes=tuple(self.map_changes),
            undone=frozenset(self.undone),
        )
        # Every part was validated when its event was parsed: build without re-validating.
        return Workspace.model_construct(**self.data)

    # -- one method per event type -------------------------------------------------------

    def message(self, body: MessageAdded, at: datetime) -> None:
        self.data["message_count"] += 1
        self.data["last_message_at"] = at
        if body.role != "user":
            return
        if self.data["first_question"] is None:
            self.data["first_question"] = _cut(" ".join(body.text().split()))
        if self.data["first_upload"] is None:
            names = (p.get("name") for p in body.parts if p.get("kind") == "upload")
            self.data["first_upload"] = next(
                (_cut(" ".join(n.split())) for n in names if isinstance(n, str)), None
            )

    def entry(self, body: EntryWritten, _: datetime) -> None:
        entry = self.entries.get(body.entry_id)
        expected = 1 if entry is None else entry.version + 1
        if body.version != expected:
            raise CorruptLogError(
                f"{body.entry_id} version {body.version} where version {expected} was due"
            )
        if entry is None:
            self.entries[body.entry_id] = Entry.model_construct(
                entry_id=body.entry_id, kind=body.kind, versions=(body,), visible=True, style=None
            )
        else:
            self.entries[body.entry_id] = entry.model_copy(
                update={"versions": (*entry.versions, body)}
            )

    def display(self, body: EntryDisplayChanged, _: datetime) -> None:
        entry = self.entries.get(body.entry_id)
        if entry is None:
            raise CorruptLogError(f"display change for {body.entry_id}, which was never written")
        update: dict[str, Any] = {}
        if body.visible is not None:
            update["visible"] = body.visible
            if body.visible:
                update["removed"] = False  # shown again: back on the map and in the list
        if body.removed is not None:
            # Removed is hidden as well; put back, it is shown unless the change says not.
            update["removed"] = body.removed
            update["visible"] = not body.removed if body.visible is None else body.visible
        if body.style is not None:
            # A change sets the keys it names over the ones set before (a key set to None
            # goes back to its default: geomint.state.styles.entry_style).
            update["style"] = {**(entry.style or {}), **body.style}
        self.entries[body.entry_id] = entry.model_copy(update=update)

    def fetch(self, _: FetchMade, __: datetime) -> None:
        self.data["fetches"] += 1

    def miss(self, body: FetchMissed, _: datetime) -> None:
        self.data["fetches"] += 1
        self.misses.append(body)

    def analysis(self, body: AnalysisRecorded, _: datetime) -> None:
        if body.analysis_id in self.analyses:
            raise CorruptLogError(f"analysis {body.analysis_id} recorded twice")
        self.analyses[body.analysis_id] = body

    def value(self, body: ValueMinted, _: datetime) -> None:
        self._check_new(body.value.id, self.values)
        self.values.append(body.value)
        self.minted.add(body.value.id)

    def layer(self, body: LayerMinted, _: datetime) -> None:
        self._check_new(body.layer.id, self.layers)
        self.layers.append(body.layer)
        self.minted.add(body.layer.id)

    @staticmethod
    def _check_new(record_id: str, minted: list[Value] | list[Layer]) -> None:
        last = int(minted[-1].id[1:]) if minted else 0
        if int(record_id[1:]) <= last:
            raise CorruptLogError(f"{record_id} minted after {minted[-1].id}: ids only grow")

    def map_changed(self, body: MapChanged, _: datetime) -> None:
        if body.change_id != f"m{len(self.map_changes) + 1}":
            raise CorruptLogError(f"map change {body.change_id} out of order")
        self.map_changes.append(body)

    def map_undone(self, body: MapChangeUndone, _: datetime) -> None:
        if body.change_id not in {c.change_id for c in self.map_changes}:
            raise CorruptLogError(f"undo of map change {body.change_id}, which was never made")
        self.undone.add(body.change_id)

    def observation(self, body: ObservationRecorded, _: datetime) -> None:
        for value_id in (body.conflict.a.id, body.conflict.b.id):
            if value_id not in self.minted:
                raise CorruptLogError(f"observation of {value_id}, which was never minted")
        self.observations.append(body.conflict)

    def asked(self, body: ApprovalAsked, _: datetime) -> None:
        if body.approval_id in self.approvals:
            raise CorruptLogError(f"approval {body.approval_id!r} asked twice")
        self.approvals[body.approval_id] = Approval.model_construct(
            asked=body, answer="pending", reason=""
        )

    def answered(self, body: ApprovalGiven | ApprovalRefused, _: datetime) -> None:
        approval = self.approvals.get(body.approval_id)
        if approval is None or approval.answer != "pending":
            raise CorruptLogError(f"approval {body.approval_id!r} answered out of turn")
        refused = isinstance(body, ApprovalRefused)
        self.approvals[body.approval_id] = approval.model_copy(
            update={
                "answer": "refused" if refused else "given",
                "reason": body.reason if isinstance(body, ApprovalRefused) else "",
            }
        )

    def failed(self, body: ToolFailed, _: datetime) -> None:
        self.failures.append(body)

    def switched(self, body: MonitorSwitched, _: datetime) -> None:
        if body.on:
            self.switched_off.discard(body.name)
        else:
            self.switched_off.add(body.name)

    def viewed(self, body: ViewChanged, _: datetime) -> None:
        self.data["view"] = body

    def presented_figure(self, body: FigurePresented, _: datetime) -> None:
        for value_id in body.value_ids:
            if value_id not in self.minted:
                raise CorruptLogError(f"figure presents {value_id}, which was never minted")
        self.presented.append(body)

    def basemap(self, body: BasemapChanged, _: datetime) -> None:
        self.data["basemap"] = body.style

    def language(self, body: LanguageChanged, _: datetime) -> None:
        self.data["language"] = body.language

    def created(self, _: ChatCreated, __: datetime) -> None:
        pass

    def deleted(self, _: ChatDeleted, __: datetime) -> None:
        self.data["deleted"] = True

    def renamed(self, body: ChatRenamed, _: datetime) -> None:
        self.data["named"] = body.title


def _cut(text: str) -> str | None:
    """``text`` cut to a title's length, or None when it is empty."""
    if not text:
        return None
    return text if len(text) <= _TITLE_CHARS else text[: _TITLE_CHARS - 1] + "…"


_HANDLERS: dict[type, Any] = {
    ChatCreated: _Fold.created,
    MessageAdded: _Fold.message,
    EntryWritten: _Fold.entry,
    EntryDisplayChanged: _Fold.display,
    FetchMade: _Fold.fetch,
    FetchMissed: _Fold.miss,
    AnalysisRecorded: _Fold.analysis,
    ValueMinted: _Fold.value,
    LayerMinted: _Fold.layer,
    ObservationRecorded: _Fold.observation,
    ApprovalAsked: _Fold.asked,
    ApprovalGiven: _Fold.answered,
    ApprovalRefused: _Fold.answered,
    ToolFailed: _Fold.failed,
    ChatDeleted: _Fold.deleted,
    ChatRenamed: _Fold.renamed,
    MonitorSwitched: _Fold.switched,
    ViewChanged: _Fold.viewed,
    FigurePresented: _Fold.presented_figure,
    BasemapChanged: _Fold.basemap,
    LanguageChanged: _Fold.language,
    MapChanged: _Fold.map_changed,
    MapChangeUndone: _Fold.map_undone,
}


def fold(events: Iterable[Event], start: Workspace | str) -> Workspace:
    """Fold events, in sequence order, onto a workspace.

    Args:
        events: The chat's events after ``start.last_seq``, oldest first.
        start: A workspace to continue (a snapshot), or a chat id to start from empty.

    Returns:
        The new workspace; ``start`` is unchanged.

    Raises:
        CorruptLogError: An event does not follow from the ones before it.
    """
    accumulator = _Fold(Workspace(chat_id=start) if isinstance(start, str) else start)
    for event in events:
        accumulator.apply(event)
    return accumulator.finish()


def _added_ids(diff: Mapping[str, Any]) -> set[str]:
    added = _part(diff, "added")
    sources = added.get("sources")
    layers = added.get("layers")
    out = {str(k) for k in sources} if isinstance(sources, dict) else set()
    return out | _ids(layers, "id")


def _removed_ids(diff: Mapping[str, Any]) -> set[str]:
    removed = _part(diff, "removed")
    return _ids(removed.get("layers"), None) | _ids(removed.get("sources"), None)


def _touched_ids(diff: Mapping[str, Any]) -> set[str]:
    """Every layer and source id a diff names: what it adds, draws from, styles, moves,
    removes or animates."""
    added = _part(diff, "added")
    layers = added.get("layers")
    updates = _part(diff, "updated").get("layers")
    ids = _added_ids(diff) | _removed_ids(diff)
    ids |= _ids(layers, "source") | _ids(layers, "before")
    ids |= _ids(updates, "id") | _ids(updates, "before")
    return ids | _ids(diff.get("animations"), "layer_id")


def _part(diff: Mapping[str, Any], key: str) -> Mapping[str, Any]:
    # A stored diff is data that may have come from an import: read it defensively.
    value = diff.get(key) if isinstance(diff, Mapping) else None
    return value if isinstance(value, Mapping) else {}


def _ids(items: object, key: str | None) -> set[str]:
    if not isinstance(items, list):
        return set()
    if key is None:
        return {str(i) for i in items}
    return {str(i.get(key)) for i in items if isinstance(i, Mapping) and i.get(key) is not None}
