"""The UI parts: everything a person is shown of a chat, one pydantic model per kind.

A *durable* part is projected from one stored event (:mod:`geomint.ui.project`) and
carries that event's ``seq``, ``run_id`` and time, so a chat read back shows exactly what
the live run showed, in the same order. Only :class:`TextDeltaPart` (answer text as the model
writes it), :class:`ProgressPart`, :class:`RunStartedPart` and :class:`ClassifiedPart` are
*transient*: they are streamed and never stored.

Parts carry no bulk: an entry names its GeoJSON by URL (a transport may send small ones
inline), an analysis whose result was stored apart names it by URL. :data:`PART_ADAPTER`
parses and dumps any part.

Example:
    >>> part = PART_ADAPTER.validate_python({"type": "text_delta", "delta": "Hel"})
    >>> part.delta, is_durable(part)
    ('Hel', False)
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import (
    AwareDatetime,
    BaseModel,
    ConfigDict,
    Field,
    JsonValue,
    SerializerFunctionWrapHandler,
    TypeAdapter,
    model_serializer,
)

from geomint.provenance import Conflict, EntryVersion, Provenance
from geomint.provenance.citations import Segment
from geomint.state.events import CatalogueSearch, Shortlisted, without_none
from geomint.state.styles import LayerStyle

__all__ = [
    "PART_ADAPTER",
    "AnalysisPart",
    "ApprovalAnsweredPart",
    "ApprovalAskedPart",
    "BasemapPart",
    "ChartPart",
    "ClassifiedPart",
    "DiscoveryPart",
    "DisplayPart",
    "DurablePart",
    "EntryPart",
    "FigureCard",
    "FigurePart",
    "LanguagePart",
    "LayerCard",
    "MapChangePart",
    "MapUndonePart",
    "MissPart",
    "MonitorRanPart",
    "MonitorSwitchedPart",
    "ObservationPart",
    "Part",
    "ProgressPart",
    "QuestionPart",
    "RasterView",
    "RunEndedPart",
    "RunStartedPart",
    "TextDeltaPart",
    "TextPart",
    "ToolCallPart",
    "ToolResultPart",
    "UploadPart",
    "ViewPart",
    "is_durable",
]


class _Part(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class _Durable(_Part):
    """Where a durable part came from: the event's sequence number, run and time."""

    seq: int = Field(ge=1)
    run_id: str
    at: AwareDatetime


# -- records shown inside parts ----------------------------------------------------------


class FigureCard(_Part):
    """A minted value as a card: the number, its unit and label, when it refers to, and
    where it came from. ``period`` is the value's own, else its sources' ("not stated" when
    a source states none); None when nothing it rests on is about a time."""

    id: str
    label: str
    value: JsonValue
    unit: str | None = None
    # Left out when None: a chat stored before periods were kept projects as it did.
    period: str | None = Field(default=None, exclude_if=lambda v: v is None)
    licences: tuple[str, ...] = ()
    sources: tuple[Provenance, ...] = ()
    minted_by: str | None = None
    inputs: tuple[EntryVersion, ...] = ()


class LayerCard(_Part):
    """A minted layer as an analysis lists it: its id, the entry it is, its size."""

    id: str
    entry_id: str
    label: str
    feature_count: int


# -- the conversation --------------------------------------------------------------------


class QuestionPart(_Durable):
    """What the person asked."""

    type: Literal["question"] = "question"
    message_id: str
    text: str


class UploadPart(_Durable):
    """A file the person dropped into the chat, and the layer it became."""

    type: Literal["upload"] = "upload"
    message_id: str
    name: str
    entry_id: str
    label: str
    format: str | None = None
    features: int | None = None
    warnings: tuple[str, ...] = ()


class TextPart(_Durable):
    """A block of the answer, whole: text between tool calls is its own block.

    ``text`` is as the model wrote it, figures cited by id (``{v3}``). ``segments`` split
    it as a person reads it (:func:`geomint.provenance.citations.check_text`): each
    reference as its value and unit, each typed number matched to a minted value or
    marked unminted; ``cited``, ``matched`` and ``unminted`` count them. Answers kept
    before answers were checked have no segments: their text reads as written.
    """

    type: Literal["text"] = "text"
    message_id: str
    text: str
    segments: tuple[Segment, ...] = Field(default=(), exclude_if=lambda v: not v)
    cited: int = Field(default=0, exclude_if=lambda v: not v)
    matched: int = Field(default=0, exclude_if=lambda v: not v)
    unminted: int = Field(default=0, exclude_if=lambda v: not v)

    @property
    def rendered(self) -> str:
        """The block as a person reads it: references as values with their units."""
        return "".join(s.shown for s in self.segments) if self.segments else self.text


class ToolCallPart(_Durable):
    """The model called a tool (``call_id`` is None in chats written before calls were
    kept, where the call is known only from the answer's summary)."""

    type: Literal["tool_call"] = "tool_call"
    call_id: str | None = None
    tool: str
    args: dict[str, JsonValue] = Field(default_factory=dict)


class ToolResultPart(_Durable):
    """How a tool call ended: the result the model read, or the error it was told."""

    type: Literal["tool_result"] = "tool_result"
    call_id: str | None = None
    tool: str
    ok: bool
    result: JsonValue = None
    error: str | None = None


class RunEndedPart(_Durable):
    """The run ended; ``stopped`` when it did before the model answered. ``cited``,
    ``matched`` and ``unminted`` count the figures the answer cited and the numbers it
    typed (None for runs kept before answers were checked). ``requests``,
    ``input_tokens`` and ``output_tokens`` are what the turn's calls to the chat's model
    cost, ``model`` its name (None for runs kept before they were counted)."""

    type: Literal["run_ended"] = "run_ended"
    steps: int | None = None
    stopped: bool = False
    error: str | None = None
    cited: int | None = Field(default=None, exclude_if=lambda v: v is None)
    matched: int | None = Field(default=None, exclude_if=lambda v: v is None)
    unminted: int | None = Field(default=None, exclude_if=lambda v: v is None)
    requests: int | None = Field(default=None, exclude_if=lambda v: v is None)
    input_tokens: int | None = Field(default=None, exclude_if=lambda v: v is None)
    output_tokens: int | None = Field(default=None, exclude_if=lambda v: v is None)
    model: str | None = Field(default=None, exclude_if=lambda v: v is None)


# -- the map -----------------------------------------------------------------------------


class RasterView(_Part):
    """How the map draws a raster entry: a picture of it, placed by its corners."""

    #: The picture (PNG, coloured from low to high, nodata transparent).
    image_url: str
    #: What the legend needs (JSON): the values at the ramp's ends, its colours, the corners.
    legend_url: str
    #: Where the picture's corners go, ``[lon, lat]``: top left, then clockwise. None when
    #: the raster's extent could not be put in longitude and latitude (it is not drawn).
    coordinates: tuple[tuple[float, float], ...] | None = None
    #: The raster's grid and values: shape, bands, CRS, resolution, nodata, min, max, label.
    summary: dict[str, JsonValue] = Field(default_factory=dict)


class EntryPart(_Durable):
    """A new version of an entry (a layer the map can draw), its data by reference.

    A features entry names its GeoJSON (``geojson_url``); a raster entry has none and names
    its picture instead (``raster``).
    """

    type: Literal["entry"] = "entry"
    entry_id: str
    kind: str
    version: int
    label: str
    sources: tuple[Provenance, ...] = ()
    derived_from: tuple[EntryVersion, ...] = ()
    features: int | None = None
    bbox: tuple[float, float, float, float] | None = None
    bytes: int
    geojson_url: str | None
    #: How the map draws it (geomint.state.styles): the server holds an entry's style.
    style: LayerStyle | None = None
    # Left out when None: an entry part of a features entry reads back as it always did.
    raster: RasterView | None = Field(default=None, exclude_if=lambda v: v is None)


class DisplayPart(_Durable):
    """What the map shows of an entry changed: shown, hidden or styled.

    ``style`` is the entry's whole style after the change, not only what changed.
    """

    type: Literal["display"] = "display"
    entry_id: str
    visible: bool | None = None
    style: LayerStyle | None = None
    #: Taken off the map and its layer list (True) or put back (False); None: unchanged.
    removed: bool | None = None

    @model_serializer(mode="wrap")
    def _without_unset_removed(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        # Left out when unset, as in the event: parts read back from a chat written before
        # it are the same (tests/store/test_fixture_chats.py).
        return without_none(handler(self), "removed")


class ViewPart(_Durable):
    """The camera moved: to a centre and zoom, or to fit a box."""

    type: Literal["view"] = "view"
    center: tuple[float, float] | None = None
    zoom: float | None = None
    bbox: tuple[float, float, float, float] | None = None
    padding: int = 40


# -- analysis and figures ----------------------------------------------------------------


class AnalysisPart(_Durable):
    """Model-written code ran: what it read, what it minted, how it ended.

    ``result`` is the code's return value when it was stored inline; a larger one is at
    ``result_url``.
    """

    type: Literal["analysis"] = "analysis"
    analysis_id: str
    tool: str | None = None
    name: str | None = None
    ok: bool
    output_format: str = "json"
    result: JsonValue = None
    result_url: str | None = None
    error: str | None = None
    figures: tuple[FigureCard, ...] = ()
    layers: tuple[LayerCard, ...] = ()
    code: str
    inputs: tuple[EntryVersion, ...] = ()
    trigger: EntryVersion | None = None


class ChartPart(_Durable):
    """A chart an analysis drew (a Chart.js-style config the page and terminal render)."""

    type: Literal["chart"] = "chart"
    analysis_id: str
    name: str | None = None
    config: dict[str, JsonValue]


class FigurePart(_Durable):
    """Figure cards put in front of the person."""

    type: Literal["figure"] = "figure"
    title: str | None = None
    figures: tuple[FigureCard, ...]


class ObservationPart(_Durable):
    """Two minted values disagree; the comparison was computed by code."""

    type: Literal["observation"] = "observation"
    conflict: Conflict


class MissPart(_Durable):
    """A fetch found nothing or failed; a miss is a result, with its reason."""

    type: Literal["miss"] = "miss"
    tool: str
    provider: str
    code: str | None = None
    reason: str


class DiscoveryPart(_Durable):
    """``find_sources`` searched catalogues live and a second model shortlisted what they
    returned: one row (``summary``) that expands into its steps, the searches run and
    the shortlist kept.

    ``summary`` is written by code from the event ("Searched 2 catalogues, 3
    candidates"), so every surface says the same. Each shortlisted dataset is the
    catalogue's record with the shortlisting model's one line on why; nothing here was
    fetched.
    """

    type: Literal["discovery"] = "discovery"
    call_id: str | None = None
    summary: str
    query: str
    searches: tuple[CatalogueSearch, ...] = ()
    shortlist: tuple[Shortlisted, ...] = ()
    ranked_by: str = "model"
    dropped: tuple[str, ...] = ()
    problem: str | None = None
    usage: dict[str, JsonValue] = Field(default_factory=dict)


class MonitorRanPart(_Durable):
    """A monitor or tracker re-ran after an entry it reads changed (or could not)."""

    type: Literal["monitor_ran"] = "monitor_ran"
    name: str | None = None
    tracker: bool = False
    analysis_id: str | None = None
    trigger: EntryVersion
    ok: bool
    result: JsonValue = None
    error: str | None = None


class MonitorSwitchedPart(_Durable):
    """A monitor or tracker was switched off or on."""

    type: Literal["monitor"] = "monitor"
    name: str
    on: bool


# -- approvals ---------------------------------------------------------------------------


class ApprovalAskedPart(_Durable):
    """A tool call waits for a person; ``preview`` says what it would do."""

    type: Literal["approval"] = "approval"
    approval_id: str
    tool: str
    args: dict[str, JsonValue] = Field(default_factory=dict)
    effects: tuple[str, ...] = ()
    preview: dict[str, JsonValue] = Field(default_factory=dict)


class ApprovalAnsweredPart(_Durable):
    """The person's answer (or the run's, when it was stopped while waiting)."""

    type: Literal["approval_answered"] = "approval_answered"
    approval_id: str
    approved: bool
    reason: str | None = None


# -- map code ----------------------------------------------------------------------------


class MapChangePart(_Durable):
    """Map code changed the map's style: the verified diff for the page to apply.

    The diff is data (MapLibre sources and layers); its sources' ``data`` and ``url`` are
    geomint's own routes, made here from the entry ids and blob hashes the event keeps.
    """

    type: Literal["map_change"] = "map_change"
    change_id: str
    intent: str
    description: str
    diff: dict[str, JsonValue]
    code: str
    attempts: int = 1
    usage: dict[str, JsonValue] = Field(default_factory=dict)
    spec_version: str
    #: Why the stored change is not shown (an import that does not pass the checks); its
    #: diff is then empty. Left out when there is none.
    problem: str | None = None

    @model_serializer(mode="wrap")
    def _without_unset_problem(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        return without_none(handler(self), "problem")


class MapUndonePart(_Durable):
    """A map change was taken back; the page shows the map without it."""

    type: Literal["map_undone"] = "map_undone"
    change_id: str


# -- transient ---------------------------------------------------------------------------


class RunStartedPart(_Part):
    """A run began (transient: the question part is what is kept)."""

    type: Literal["run_started"] = "run_started"
    chat_id: str
    run_id: str


class ClassifiedPart(_Part):
    """Which tools and scopes the classifier chose for the turn (transient)."""

    type: Literal["classified"] = "classified"
    active: tuple[str, ...] = ()
    scopes: dict[str, JsonValue] = Field(default_factory=dict)
    unscoped: tuple[str, ...] = ()
    retries: int = 0
    failed: str | None = None


class TextDeltaPart(_Part):
    """Answer text as the model writes it (transient: the block is kept as a Text)."""

    type: Literal["text_delta"] = "text_delta"
    delta: str


class ProgressPart(_Part):
    """Code is running, or has finished (transient)."""

    type: Literal["progress"] = "progress"
    tool: str
    name: str | None = None
    state: Literal["running", "done"]
    ms: int | None = None


class BasemapPart(_Durable):
    """The map was switched to another basemap style (by name; the page knows where each
    style is served, from ``/api/map``)."""

    type: Literal["basemap"] = "basemap"
    style: str


class LanguagePart(_Durable):
    """The map's labels were switched to a language (``name:<language>``, else ``name``)."""

    type: Literal["language"] = "language"
    language: str


DurablePart = Annotated[
    QuestionPart
    | UploadPart
    | TextPart
    | ToolCallPart
    | ToolResultPart
    | RunEndedPart
    | EntryPart
    | DisplayPart
    | ViewPart
    | AnalysisPart
    | ChartPart
    | FigurePart
    | ObservationPart
    | MissPart
    | DiscoveryPart
    | MonitorRanPart
    | MonitorSwitchedPart
    | ApprovalAskedPart
    | ApprovalAnsweredPart
    | BasemapPart
    | LanguagePart
    | MapChangePart
    | MapUndonePart,
    Field(discriminator="type"),
]

Part = Annotated[
    QuestionPart
    | UploadPart
    | TextPart
    | ToolCallPart
    | ToolResultPart
    | RunEndedPart
    | EntryPart
    | DisplayPart
    | ViewPart
    | AnalysisPart
    | ChartPart
    | FigurePart
    | ObservationPart
    | MissPart
    | DiscoveryPart
    | MonitorRanPart
    | MonitorSwitchedPart
    | ApprovalAskedPart
    | ApprovalAnsweredPart
    | BasemapPart
    | LanguagePart
    | MapChangePart
    | MapUndonePart
    | RunStartedPart
    | ClassifiedPart
    | TextDeltaPart
    | ProgressPart,
    Field(discriminator="type"),
]

#: Parses and dumps any part; the one adapter every consumer uses.
PART_ADAPTER: TypeAdapter[Part] = TypeAdapter(Part)


def is_durable(part: _Part) -> bool:
    """Whether ``part`` was projected from a stored event (and reads back the same)."""
    return isinstance(part, _Durable)
