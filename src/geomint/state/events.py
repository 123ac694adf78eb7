"""The events of a chat: one tagged union, one JSON adapter, stamped by the store.

Everything a conversation does appends an event: a message, an entry written, a fetch
made or missed, an analysis, a value or layer minted, a conflict observed, an approval
asked and answered, a tool that failed. Nothing is updated or deleted in place; the state
of a chat is a fold over its events (:mod:`geomint.state.workspace`).

Callers build event *bodies* (``EntryWritten(...)``); the store wraps each in an
:class:`Event` envelope with the chat id, the run id, a sequence number and a timestamp
it sets itself, so no caller can forge either.
"""

from __future__ import annotations

import re
import unicodedata
from typing import Annotated, Any, Literal

from pydantic import (
    AwareDatetime,
    BaseModel,
    ConfigDict,
    Field,
    JsonValue,
    SerializerFunctionWrapHandler,
    TypeAdapter,
    field_validator,
    model_serializer,
    model_validator,
)

from geomint.provenance import Conflict, EntryVersion, Layer, Provenance, Value

__all__ = [
    "BODY_ADAPTER",
    "ENTRY_KINDS",
    "EVENT_ADAPTER",
    "MAX_TITLE_CHARS",
    "AnalysisRecorded",
    "ApprovalAsked",
    "ApprovalGiven",
    "ApprovalRefused",
    "BasemapChanged",
    "BlobRef",
    "CatalogueSearch",
    "ChatCreated",
    "ChatDeleted",
    "ChatRenamed",
    "DiscoveryRan",
    "EntryDisplayChanged",
    "EntryKind",
    "EntryWritten",
    "Event",
    "EventBody",
    "FetchMade",
    "FetchMissed",
    "FigurePresented",
    "LanguageChanged",
    "LayerMinted",
    "MapChangeUndone",
    "MapChanged",
    "MapUsage",
    "MessageAdded",
    "ModelUsage",
    "MonitorFailed",
    "MonitorSwitched",
    "ObservationRecorded",
    "RunEnded",
    "Shortlisted",
    "ToolCalled",
    "ToolFailed",
    "ToolReturned",
    "ValueMinted",
    "ViewChanged",
    "is_chat_id",
    "title_problem",
    "without_none",
]

EntryKind = Literal[
    "places",
    "routes",
    "ranges",
    "incidents",
    "geometries",
    "traffic_area_analytics",
    "byod",
    "tables",
    "rasters",
]
#: The kinds of entry a workspace holds, in the order tools list them.
ENTRY_KINDS: tuple[str, ...] = EntryKind.__args__  # type: ignore[attr-defined]

_CHAT_ID = re.compile(r"^[A-Za-z0-9_-]{1,64}$")
_ENTRY_ID = r"^[a-z_]+-(0|[1-9][0-9]*)$"
_SHA256 = r"^[0-9a-f]{64}$"


def is_chat_id(text: str) -> bool:
    """Return True when ``text`` is a valid chat id: 1-64 URL-safe characters."""
    return bool(_CHAT_ID.fullmatch(text))  # "$" would also match before a final newline


#: The longest title a person may give a chat, in characters.
MAX_TITLE_CHARS = 200
# Characters that reorder the text around them (bidi embeddings, overrides, isolates):
# a title using them could show as something else than it is.
_BIDI_CONTROLS = frozenset("\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069")


def title_problem(title: str) -> str | None:
    r"""Say why ``title`` cannot be a chat's title, or return None when it can.

    A title is the text as given with no space around it: not empty, at most
    :data:`MAX_TITLE_CHARS` characters, without control characters (line breaks, tabs),
    text-direction overrides or unpaired surrogates.

    >>> title_problem("Cafés in Helsinki") is None
    True
    >>> title_problem("two\nlines")
    'a chat title must be one line of text: it cannot hold control characters (U+000A)'
    """
    if not title:
        return "a chat title cannot be empty"
    if title != title.strip():
        return "a chat title cannot begin or end with spaces"
    if len(title) > MAX_TITLE_CHARS:
        return (
            f"a chat title may be at most {MAX_TITLE_CHARS} characters; this one is {len(title):,}"
        )
    for char in title:
        if char in _BIDI_CONTROLS:
            return (
                f"a chat title cannot hold text-direction overrides (U+{ord(char):04X}): "
                "they would show it in another order than it is written"
            )
        if unicodedata.category(char) in ("Cc", "Cs"):
            return (
                "a chat title must be one line of text: it cannot hold control characters "
                f"(U+{ord(char):04X})"
            )
    return None


def without_none(data: dict[str, Any], *names: str) -> dict[str, Any]:
    """``data`` without the keys ``names`` where they are None: a field added to a stored
    or streamed model later is left out when unset, so what an earlier geomint wrote
    is written back the same."""
    return {k: v for k, v in data.items() if not (k in names and v is None)}


class _Body(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class BlobRef(BaseModel):
    """Where an entry version's data is: stored once, by content hash, read on demand.

    Attributes:
        sha256: Hex SHA-256 of the stored bytes.
        size: Their length in bytes.
        media_type: What the bytes are, e.g. ``"application/geo+json"``.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    sha256: str = Field(pattern=_SHA256)
    size: int = Field(ge=0)
    media_type: str = "application/geo+json"


class ChatCreated(_Body):
    """The chat began. Its title and order are computed from its messages, not stored."""

    type: Literal["chat_created"] = "chat_created"


class MessageAdded(_Body):
    """A message, with its parts (text, tool calls, tool returns) kept as they were.

    Attributes:
        message_id: The caller's id for the message, unique within the chat.
        role: Who wrote it.
        parts: The message parts, each a JSON object with a ``"kind"`` member.
    """

    type: Literal["message_added"] = "message_added"
    message_id: str = Field(min_length=1, max_length=128)
    role: Literal["user", "assistant", "system"]
    parts: tuple[dict[str, JsonValue], ...]

    @field_validator("parts")
    @classmethod
    def _parts_have_kinds(
        cls, parts: tuple[dict[str, JsonValue], ...]
    ) -> tuple[dict[str, JsonValue], ...]:
        for index, part in enumerate(parts):
            if not isinstance(part.get("kind"), str):
                raise ValueError(f"parts[{index}] needs a 'kind' string, e.g. 'text'")
        return parts

    def text(self) -> str:
        """Return the message's text parts joined by blank lines."""
        return "\n\n".join(str(p.get("text", "")) for p in self.parts if p.get("kind") == "text")


class EntryWritten(_Body):
    """A new version of an entry: a fetch, a user upload or an analysis wrote data.

    Attributes:
        entry_id: ``<kind>-<n>``, numbered per chat and never reused.
        kind: Which collection the entry belongs to.
        version: 1 for a new entry, then 2, 3, ... for each rewrite.
        label: A short name for people, e.g. ``"cafés in Utrecht"``.
        blob: Where the data is; it is read only when asked for.
        digest: What a model may read of it: counts, bbox, property names, samples.
        sources: The provenance of the data.
        derived_from: The entry versions it was computed from, if any.
    """

    type: Literal["entry_written"] = "entry_written"
    entry_id: str = Field(pattern=_ENTRY_ID)
    kind: EntryKind
    version: int = Field(ge=1)
    label: str = Field(min_length=1, max_length=300)
    blob: BlobRef
    digest: dict[str, JsonValue] = Field(default_factory=dict)
    sources: tuple[Provenance, ...] = ()
    derived_from: tuple[EntryVersion, ...] = ()

    @model_validator(mode="after")
    def _kind_prefix(self) -> EntryWritten:
        if self.entry_id.rsplit("-", 1)[0] != self.kind:
            raise ValueError(
                f"entry id {self.entry_id!r} does not start with its kind {self.kind!r}"
            )
        return self


class EntryDisplayChanged(_Body):
    """What the map shows of an entry changed (shown, hidden, styled, focused, removed).

    ``removed`` takes the entry off the map and out of its layer list (the entry stays in
    the chat, for the model, the figures and exports); showing it puts it back.
    """

    type: Literal["entry_display_changed"] = "entry_display_changed"
    entry_id: str = Field(pattern=_ENTRY_ID)
    visible: bool | None = None
    style: dict[str, JsonValue] | None = None
    removed: bool | None = None

    @model_serializer(mode="wrap")
    def _without_unset_removed(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        # ``removed`` came later: left out when unset, so a chat written before it is
        # written back byte for byte (tests/store/test_fixture_chats.py).
        return without_none(handler(self), "removed")


class FetchMade(_Body):
    """A tool fetched data from a provider; ``entry_id`` is where it landed, if anywhere."""

    type: Literal["fetch_made"] = "fetch_made"
    tool: str
    provider: str
    request: dict[str, JsonValue] = Field(default_factory=dict)
    entry_id: str | None = Field(default=None, pattern=_ENTRY_ID)
    sources: tuple[Provenance, ...] = ()


class FetchMissed(_Body):
    """A fetch that found nothing or failed: a miss is a result, kept with its reason."""

    type: Literal["fetch_missed"] = "fetch_missed"
    tool: str
    provider: str
    request: dict[str, JsonValue] = Field(default_factory=dict)
    reason: str = Field(min_length=1)
    #: The miss's kind (``not_found``, ``unavailable``, ...). Chats written before it was
    #: kept have it as the reason's prefix; left out when None, as they stored it.
    code: str | None = Field(default=None, max_length=64, exclude_if=lambda v: v is None)


class AnalysisRecorded(_Body):
    """Model-written code ran over entries; what it read, what it minted, how it ended.

    Attributes:
        analysis_id: ``a<n>`` per chat.
        code: The code as it ran.
        code_hash: SHA-256 of the code.
        inputs: The entry versions it read.
        values: Ids of the values it minted.
        layers: Ids of the layers it minted.
        error: Why it failed, or None.
        monitored: Re-run when an input entry gets a new version.
        tracker: Re-run with ``previous`` and ``now`` injected, keeping a history.
        name: The name the model gave it; re-runs of a monitor or tracker share it.
        tool: The tool that ran it (``analyse_data``, ``create_tracker``, ...).
        output_format: ``"json"`` or ``"chart"``.
        result: What the code returned, when it is small enough to keep inline.
        result_blob: Where a larger result is stored instead.
        rule: A tracker's rule, in the model's words.
        trigger: For a re-run, the entry version that caused it.
    """

    type: Literal["analysis_recorded"] = "analysis_recorded"
    analysis_id: str = Field(pattern=r"^a[1-9][0-9]*$")
    code: str
    code_hash: str = Field(pattern=_SHA256)
    inputs: tuple[EntryVersion, ...] = ()
    values: tuple[str, ...] = ()
    layers: tuple[str, ...] = ()
    error: str | None = None
    monitored: bool = False
    tracker: bool = False
    name: str | None = Field(default=None, min_length=1, max_length=100)
    tool: str | None = None
    output_format: Literal["json", "chart"] = "json"
    result: JsonValue = None
    result_blob: BlobRef | None = None
    rule: str | None = Field(default=None, max_length=1_000)
    trigger: EntryVersion | None = None


class MonitorSwitched(_Body):
    """A monitored analysis or tracker was switched off (or back on) by name."""

    type: Literal["monitor_switched"] = "monitor_switched"
    name: str = Field(min_length=1, max_length=100)
    on: bool


class ViewChanged(_Body):
    """The map's camera was moved: to a centre and zoom, or to fit a bounding box.

    Attributes:
        center: ``(longitude, latitude)`` for a fly-to.
        zoom: The zoom level of a fly-to.
        bbox: ``(west, south, east, north)`` to fit.
        padding: Pixels kept clear around a fitted box.
    """

    type: Literal["view_changed"] = "view_changed"
    center: tuple[float, float] | None = None
    zoom: float | None = Field(default=None, ge=0, le=24)
    bbox: tuple[float, float, float, float] | None = None
    padding: int = Field(default=40, ge=0, le=500)

    @model_validator(mode="after")
    def _one_target(self) -> ViewChanged:
        if (self.center is None) == (self.bbox is None):
            raise ValueError("a view change has either a center (fly to) or a bbox (fit)")
        if self.center is not None:
            lon, lat = self.center
            if not (-180 <= lon <= 180 and -90 <= lat <= 90):
                raise ValueError(f"center must be (longitude, latitude); got {self.center!r}")
        if self.bbox is not None:
            west, south, east, north = self.bbox
            if not (-180 <= west <= 180 and -180 <= east <= 180 and -90 <= south <= north <= 90):
                raise ValueError(f"bbox must be (west, south, east, north); got {self.bbox!r}")
        return self


class FigurePresented(_Body):
    """Figures were put in front of the person: minted value ids only, never numbers.

    Attributes:
        value_ids: The values shown, in order.
        title: A heading for the figure card, in the model's words.
    """

    type: Literal["figure_presented"] = "figure_presented"
    value_ids: tuple[str, ...] = Field(min_length=1, max_length=50)
    title: str | None = Field(default=None, max_length=200)


class ValueMinted(_Body):
    """Code minted a value; its id comes from the chat's ledger."""

    type: Literal["value_minted"] = "value_minted"
    value: Value


class LayerMinted(_Body):
    """Code minted a layer; its id comes from the chat's ledger."""

    type: Literal["layer_minted"] = "layer_minted"
    layer: Layer


class ObservationRecorded(_Body):
    """Two minted values disagree; code computed the comparison."""

    type: Literal["observation_recorded"] = "observation_recorded"
    conflict: Conflict


class ApprovalAsked(_Body):
    """A tool that needs a person's approval is waiting for it."""

    type: Literal["approval_asked"] = "approval_asked"
    approval_id: str = Field(min_length=1, max_length=128)
    tool: str
    arguments: dict[str, JsonValue] = Field(default_factory=dict)
    #: The effects asked for (``code_entry``, ...); empty for the whole call, and in
    #: chats written before approvals were by effect. Left out when empty, so an event
    #: without them is stored, and exported, as an earlier geomint wrote it.
    effects: tuple[str, ...] = Field(default=(), exclude_if=lambda v: not v)
    #: What the effect would do (a layer's label and size, a re-run's code), when known.
    about: dict[str, JsonValue] = Field(default_factory=dict, exclude_if=lambda v: not v)


class ApprovalGiven(_Body):
    """A person approved a waiting tool call."""

    type: Literal["approval_given"] = "approval_given"
    approval_id: str = Field(min_length=1, max_length=128)


class ApprovalRefused(_Body):
    """A person refused a waiting tool call."""

    type: Literal["approval_refused"] = "approval_refused"
    approval_id: str = Field(min_length=1, max_length=128)
    reason: str = ""


class ToolCalled(_Body):
    """The model called a tool; ``call_id`` pairs it with how it ended.

    Attributes:
        call_id: The model's id for the call, unique within the run.
        tool: The tool's name.
        arguments: The arguments as the model sent them (plain JSON).
    """

    type: Literal["tool_called"] = "tool_called"
    call_id: str = Field(min_length=1, max_length=200)
    tool: str
    arguments: dict[str, JsonValue] = Field(default_factory=dict)


class ToolReturned(_Body):
    """A tool call succeeded; ``result`` is what the model read (cut to its budget)."""

    type: Literal["tool_returned"] = "tool_returned"
    call_id: str = Field(min_length=1, max_length=200)
    tool: str
    result: JsonValue = None


class ToolFailed(_Body):
    """A tool call failed; the message is what the model was told.

    Attributes:
        call_id: The call it ended (None in chats written before calls were kept).
        result: The whole result the model read (the error, its hint), when kept.
    """

    type: Literal["tool_failed"] = "tool_failed"
    tool: str
    error: str
    arguments: dict[str, JsonValue] = Field(default_factory=dict)
    call_id: str | None = Field(default=None, max_length=200, exclude_if=lambda v: v is None)
    result: JsonValue = Field(default=None, exclude_if=lambda v: v is None)


class MonitorFailed(_Body):
    """A monitor or tracker could not re-run after a change (it failed, or was skipped)."""

    type: Literal["monitor_failed"] = "monitor_failed"
    name: str = Field(min_length=1, max_length=100)
    tracker: bool = False
    trigger: EntryVersion
    error: str = Field(min_length=1, max_length=2_000)


class RunEnded(_Body):
    """A run (one user turn) ended: answered, stopped early, or failed.

    Attributes:
        steps: Model steps it used.
        stopped: It ended before the model answered (stopped, out of steps, failed).
        error: Why it ended early, when it did.
        cited: Minted figures the answer cited by id.
        matched: Numbers the model typed that match a minted value as displayed.
        unminted: Numbers the model typed that match none.
        requests: Requests the turn made to the chat's model that it answered (the
            classifier's and the tool loop's; retries of a failed request not counted).
        input_tokens: Tokens those requests sent, as the model server reported them.
        output_tokens: Tokens its answers held, as it reported them (both None for the
            demo model, which spends none). Second model calls (map code, discovery's
            shortlist) are counted on their own events.
        model: The chat model's name.
    """

    type: Literal["run_ended"] = "run_ended"
    steps: int = Field(default=0, ge=0)
    stopped: bool = False
    error: str | None = Field(default=None, max_length=2_000)
    #: Figures the answer cited, typed numbers that matched a minted value, and typed
    #: numbers that matched none (left out for runs kept before answers were checked).
    cited: int | None = Field(default=None, ge=0, exclude_if=lambda v: v is None)
    matched: int | None = Field(default=None, ge=0, exclude_if=lambda v: v is None)
    unminted: int | None = Field(default=None, ge=0, exclude_if=lambda v: v is None)
    #: What the turn's model calls cost (left out for runs kept before it was counted).
    requests: int | None = Field(default=None, ge=0, exclude_if=lambda v: v is None)
    input_tokens: int | None = Field(default=None, ge=0, exclude_if=lambda v: v is None)
    output_tokens: int | None = Field(default=None, ge=0, exclude_if=lambda v: v is None)
    model: str | None = Field(default=None, max_length=200, exclude_if=lambda v: v is None)


class ChatRenamed(_Body):
    """A person gave the chat a title; it wins over the one derived from its messages.

    Attributes:
        title: The title, trimmed (see :func:`title_problem` for what one may be).
    """

    type: Literal["chat_renamed"] = "chat_renamed"
    title: str

    @field_validator("title")
    @classmethod
    def _a_title(cls, title: str) -> str:
        problem = title_problem(title)
        if problem is not None:
            raise ValueError(problem)
        return title


class ChatDeleted(_Body):
    """A tombstone: the chat is gone from listings; data goes when retention runs."""

    type: Literal["chat_deleted"] = "chat_deleted"


class BasemapChanged(_Body):
    """The map was switched to another basemap style, by the style's name.

    Attributes:
        style: The style's name (``"light"``, ``"dark"``, or one the application
            registered). Only the name is kept: where the style is served is the
            application's configuration, so a chat stays readable when that moves.
    """

    type: Literal["basemap_changed"] = "basemap_changed"
    style: str = Field(pattern=r"^[a-z][a-z0-9_-]{0,39}$")


class LanguageChanged(_Body):
    """The map's labels were switched to another language.

    Attributes:
        language: A language code (``"fi"``, ``"sv"``, ``"en"``): labels show the
            ``name:<code>`` property where a feature has one, else its ``name``.
    """

    type: Literal["language_changed"] = "language_changed"
    language: str = Field(pattern=r"^[a-z]{2,3}$")


class ModelUsage(BaseModel):
    """What a second model call cost (map code's generation, discovery's shortlist).

    Attributes:
        requests: Model calls made (one per attempt that asked the model).
        input_tokens: Tokens sent, as the model reported them.
        output_tokens: Tokens received.
        ms: Wall time of the calls, in milliseconds.
        model: The model's name.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    requests: int = Field(default=0, ge=0)
    input_tokens: int = Field(default=0, ge=0)
    output_tokens: int = Field(default=0, ge=0)
    ms: float = Field(default=0.0, ge=0)
    model: str | None = Field(default=None, max_length=200)


#: What generating map code cost (the name map changes were first kept under).
MapUsage = ModelUsage


class MapChanged(_Body):
    """Map code changed the map's style: the verified diff the page applies.

    Nothing here is code the page runs: ``diff`` is MapLibre style data, validated against
    the style specification and geomint's caps before it was appended
    (``docs/map-code.md`` has its shape). Sources built from an entry name it
    (``{"entry": "places-1"}``); GeoJSON and PNGs the code built are blobs, named by hash.

    Attributes:
        change_id: ``m1``, ``m2``, ... in order.
        intent: What should change, in the person's terms.
        description: The diff in words (``adds a heatmap layer cafe-heat over places-1``).
        diff: ``{added, removed, updated, camera, animations}``.
        blobs: The GeoJSON and PNG blobs the diff names.
        code: The verified body that made the diff; ``code_hash`` its hash.
        entry_ids: The entries the intent concerns.
        attempts: Bodies written before one passed (1 when the first did).
        usage: The second model's cost (zero when the calling model wrote the code).
        spec_version: The MapLibre style specification the diff was validated against.
    """

    type: Literal["map_changed"] = "map_changed"
    change_id: str = Field(pattern=r"^m[1-9][0-9]*$")
    intent: str = Field(min_length=1, max_length=2_000)
    description: str = Field(max_length=4_000)
    diff: dict[str, JsonValue]
    blobs: tuple[BlobRef, ...] = ()
    code: str
    code_hash: str = Field(pattern=_SHA256)
    entry_ids: tuple[str, ...] = ()
    attempts: int = Field(default=1, ge=1, le=10)
    usage: ModelUsage = Field(default_factory=ModelUsage)
    spec_version: str = Field(max_length=40)


class MapChangeUndone(_Body):
    """A map change was taken back: the page shows the map without it.

    Attributes:
        change_id: The change undone.
    """

    type: Literal["map_change_undone"] = "map_change_undone"
    change_id: str = Field(pattern=r"^m[1-9][0-9]*$")


class CatalogueSearch(BaseModel):
    """One catalogue searched live by discovery: which, with what, and what came back.

    Attributes:
        catalogue: The registry id of the catalogue (``hri-catalogue``).
        title: Its title.
        searcher: The searcher that read it (``ckan``, ``stac``).
        ok: Whether the search answered.
        read: Results read from it (what the shortlisting model was given).
        matched: How many results the catalogue said match in all, when it said.
        error: Why it failed, when it did.
        code: The failure's kind (``timeout``, ``unavailable``...), when it failed.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    catalogue: str = Field(min_length=1, max_length=100)
    title: str = Field(max_length=500)
    searcher: str = Field(min_length=1, max_length=40)
    ok: bool
    read: int = Field(default=0, ge=0)
    matched: int | None = Field(default=None, ge=0)
    error: str | None = Field(default=None, max_length=2_000)
    code: str | None = Field(default=None, max_length=64)


class Shortlisted(BaseModel):
    """One dataset a live catalogue search returned and the shortlist kept.

    Every field but ``why`` is the catalogue's, copied by code from the search result
    whose id the shortlisting model named; ``why`` is that model's one line.

    Attributes:
        id: The result's id as the search gave it (``hri-catalogue/<dataset>``).
        title: Its title in the catalogue.
        catalogue: The registry id of the catalogue it is in.
        kind: What it is (``dataset``; a STAC ``collection`` or ``item``).
        why: Why it could answer, in one line; None when none was kept.
        publisher: Who publishes it, as the catalogue says.
        licence: Its licence, as the catalogue says (None: not stated).
        url: Where a person reads about it.
        fetch: The ``fetch`` arguments that read it next.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    id: str = Field(min_length=1, max_length=400)
    title: str = Field(max_length=500)
    catalogue: str = Field(min_length=1, max_length=100)
    kind: str = Field(min_length=1, max_length=40)
    why: str | None = Field(default=None, max_length=300)
    publisher: str | None = Field(default=None, max_length=200)
    licence: str | None = Field(default=None, max_length=200)
    url: str | None = Field(default=None, max_length=2_000)
    fetch: dict[str, JsonValue] = Field(default_factory=dict)


class DiscoveryRan(_Body):
    """``find_sources`` searched catalogues live and a second model shortlisted the results.

    The searches and the shortlist are one step of the call (``call_id``), shown as one
    row that expands: the person sees what was searched and what was kept, the model
    reads only the shortlist. Nothing here is a figure or a fetch: a shortlisted dataset
    is read only when the model fetches it.

    Attributes:
        call_id: The ``find_sources`` call it belongs to.
        query: The words searched (the model's query).
        searches: Each catalogue searched, in order.
        shortlist: What was kept, best first (at most five).
        ranked_by: ``model`` (the shortlisting model chose and said why) or
            ``catalogue`` (it did not run or answer: the catalogues' own first results).
        dropped: Ids the shortlisting model named that no search returned (not kept).
        problem: Why the shortlisting model's answer was not used, when it was not.
        usage: What the shortlisting model cost.
    """

    type: Literal["discovery_ran"] = "discovery_ran"
    call_id: str | None = Field(default=None, max_length=200)
    query: str = Field(min_length=1, max_length=500)
    searches: tuple[CatalogueSearch, ...] = Field(default=(), max_length=20)
    shortlist: tuple[Shortlisted, ...] = Field(default=(), max_length=5)
    ranked_by: Literal["model", "catalogue"] = "model"
    dropped: tuple[str, ...] = Field(default=(), max_length=20)
    problem: str | None = Field(default=None, max_length=2_000)
    usage: ModelUsage = Field(default_factory=ModelUsage)


EventBody = Annotated[
    ChatCreated
    | MessageAdded
    | EntryWritten
    | EntryDisplayChanged
    | FetchMade
    | FetchMissed
    | AnalysisRecorded
    | ValueMinted
    | LayerMinted
    | ObservationRecorded
    | ApprovalAsked
    | ApprovalGiven
    | ApprovalRefused
    | ToolFailed
    | ToolCalled
    | ToolReturned
    | MonitorFailed
    | RunEnded
    | ChatDeleted
    | ChatRenamed
    | MonitorSwitched
    | ViewChanged
    | FigurePresented
    | BasemapChanged
    | LanguageChanged
    | MapChanged
    | MapChangeUndone
    | DiscoveryRan,
    Field(discriminator="type"),
]


class Event(BaseModel):
    """One stored event: the body a caller built, in the envelope the store stamped.

    Attributes:
        seq: 1, 2, 3, ... per chat, without gaps, assigned by the store.
        at: When the store appended it (UTC).
        chat_id: The chat it belongs to.
        run_id: The agent run (one user turn) that caused it.
        body: What happened.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    seq: int = Field(ge=1)
    at: AwareDatetime
    chat_id: str = Field(pattern=_CHAT_ID.pattern)
    run_id: str = Field(min_length=1, max_length=128)
    body: EventBody


#: Parses and dumps events; the one JSON adapter for everything persisted.
EVENT_ADAPTER: TypeAdapter[Event] = TypeAdapter(Event)
BODY_ADAPTER: TypeAdapter[EventBody] = TypeAdapter(EventBody)
