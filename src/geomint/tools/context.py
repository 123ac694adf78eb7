"""What a tool works with during one call: the chat's store and state, the sandbox, and
the run's stream.

A tool never holds state of its own. It reads the chat's :class:`~geomint.state.Workspace`
(folded from the event log) and appends events through :meth:`ToolContext.append`. What a
person is shown is projected from those events (:mod:`geomint.ui`): each append is handed
to the run's stream, so a tool never sends the UI anything of its own, and a chat read
back shows what the run showed. Only progress is sent apart (:meth:`ToolContext.progress`),
and it is not kept. The model gets a handle and a digest.
"""

from __future__ import annotations

import asyncio
import json
from collections import OrderedDict
from collections.abc import Awaitable, Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal, Protocol, TypeVar

from pydantic_ai.models import Model

from geomint.geo.raster import Raster
from geomint.models import TurnBudget
from geomint.provenance import EntryVersion, Provenance
from geomint.providers.base import Providers
from geomint.sandbox import RASTER_MEDIA_TYPE, Sandbox, bytes_raster, raster_bytes
from geomint.sandbox import Entry as SandboxEntry
from geomint.sources import Sources
from geomint.state import EntryDisplayChanged, EntryWritten, EventBody, Workspace
from geomint.state.events import EntryKind
from geomint.store import Appended, Chats
from geomint.tools._digest import entry_digest, raster_digest
from geomint.tools.basemaps import BUILTIN_STYLES, MapStyle
from geomint.tools.effects import Effect

__all__ = ["EntryCache", "OnAppend", "OnProgress", "ToolContext", "ToolSettings"]


#: ``(effect, preview)``: returns to go ahead, raises EffectRefusedError to refuse.
class Authorize(Protocol):
    """Asks for an effect before it happens: returns to go ahead, raises to refuse.
    ``always`` asks even where the application's policy does not require the effect."""

    def __call__(
        self, effect: Effect, about: dict[str, Any], *, always: bool = False, again: bool = False
    ) -> Awaitable[Mapping[str, Any] | None]: ...


#: Receives each append's stored events (the run's stream projects them into parts).
OnAppend = Callable[[Appended], None]
#: ``(tool, name, state, ms)``: code started running (``"running"``) or finished.
OnProgress = Callable[[str, "str | None", Literal["running", "done"], "int | None"], None]


@dataclass(frozen=True, kw_only=True)
class ToolSettings:
    """Limits and permissions the tools apply, set once per agent.

    Attributes:
        byod_dirs: Folders ``add_byod_layer(path=...)`` may read from. A path outside them
            is refused: the model must not be able to read the host's files.
        allowed_networks: Private networks ``add_byod_layer(url=...)`` may reach (CIDR).
        max_upload_bytes: Largest file or download ``add_byod_layer`` accepts.
        fetch_timeout_s: Whole-download deadline for ``add_byod_layer(url=...)``.
        digest_chars: Size budget of what one tool result tells the model.
        map_styles: The basemap styles ``set_map_style`` may switch to; the first is the
            map's default.
    """

    byod_dirs: tuple[Path, ...] = ()
    allowed_networks: tuple[str, ...] = ()
    max_upload_bytes: int = 25_000_000
    fetch_timeout_s: float = 15.0
    digest_chars: int = 4_000
    map_styles: tuple[MapStyle, ...] = BUILTIN_STYLES


def _encode_and_describe(data: dict[str, Any] | Raster) -> tuple[bytes, str, dict[str, Any]]:
    if isinstance(data, Raster):
        return raster_bytes(data), RASTER_MEDIA_TYPE, raster_digest(data)
    text = json.dumps(data, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    return text.encode("utf-8"), "application/geo+json", entry_digest(data)


class EntryCache:
    """Decoded entry versions, shared across runs of one agent (versions never change)."""

    def __init__(self, capacity: int = 64) -> None:
        self._capacity = capacity
        self._data: OrderedDict[tuple[str, str, int], dict[str, Any]] = OrderedDict()
        self._sandbox: OrderedDict[tuple[str, str, int], SandboxEntry] = OrderedDict()

    def data(self, key: tuple[str, str, int], load: Callable[[], dict[str, Any]]) -> dict[str, Any]:
        return _cached(self._data, key, load, self._capacity)

    def sandbox_entry(
        self, key: tuple[str, str, int], load: Callable[[], SandboxEntry]
    ) -> SandboxEntry:
        return _cached(self._sandbox, key, load, self._capacity)


_T = TypeVar("_T")


def _cached(
    cache: OrderedDict[tuple[str, str, int], _T],
    key: tuple[str, str, int],
    load: Callable[[], _T],
    capacity: int,
) -> _T:
    if key in cache:
        cache.move_to_end(key)
        return cache[key]
    value = load()
    cache[key] = value
    while len(cache) > capacity:
        cache.popitem(last=False)
    return value


@dataclass(kw_only=True)
class ToolContext:
    """The run a tool call belongs to.

    Attributes:
        chats: The store's chats.
        chat_id: This chat.
        run_id: This run (one user turn).
        sandbox: Where model-written code runs.
        settings: Limits and permissions.
        scope: The scope the classifier chose for the tool being called, if any.
        cache: Decoded entry versions.
        registry_help: What ``help`` lists: the active registry, set by the agent.
        providers: Who answers place, route and traffic questions (None: nobody).
        authorize: Asks for an effect before it happens (set per call by the agent);
            None lets every effect through.
        on_append: Given every append (the agent's stream projects them for the UI).
        on_progress: Told when code starts and stops running.
        call_id: The tool call this context serves (None outside a model's call).
        codegen_model: The model that writes map code (``execute_map_code``); None when
            only code the calling model wrote can be checked.
        budget: What second model calls (map code's generation, discovery's
            shortlist) have spent in this turn, and may still (None: not counted).
        sources: The open-data registry, spine and connectors ``find_sources``,
            ``resolve_place`` and ``fetch`` answer from (None: those tools refuse).
        discovery_model: The model that shortlists a live catalogue search for
            ``find_sources`` (a sub-agent with no tools); None: the catalogues' own
            first results are listed, without reasons.
    """

    chats: Chats
    chat_id: str
    run_id: str
    sandbox: Sandbox
    settings: ToolSettings = field(default_factory=ToolSettings)
    scope: Mapping[str, Any] | None = None
    cache: EntryCache = field(default_factory=EntryCache)
    registry_help: Callable[[str | None], list[dict[str, Any]]] | None = None
    providers: Providers | None = None
    _workspace: Workspace | None = field(default=None, repr=False)
    #: Set while monitors re-run, so a re-run never triggers another (no cascades).
    rerunning: bool = False
    after_entry_written: Callable[[ToolContext, EntryWritten], Awaitable[None]] | None = None
    authorize: Authorize | None = None
    on_append: OnAppend | None = None
    on_progress: OnProgress | None = None
    call_id: str | None = None
    codegen_model: Model | None = None
    budget: TurnBudget | None = None
    sources: Sources | None = None
    discovery_model: Model | None = None

    # -- effects -------------------------------------------------------------------------

    async def require(
        self,
        effect: Effect,
        preview: Mapping[str, Any] | None = None,
        *,
        always: bool = False,
        again: bool = False,
    ) -> Mapping[str, Any] | None:
        """Go ahead with ``effect`` only if the application allows it here and now.

        ``preview`` says what is about to happen (the code, the layer's label and size),
        for the person asked. ``always`` asks the person even where the application does
        not require approval for ``effect`` (a URL the person never gave). ``again`` asks
        even when the call was approved for ``effect`` already: a second look at what it
        turned into (map code's diff, after its intent was approved).

        Returns:
            What the person's page sent back with a yes, when the question asked it
            for something (the device's position for ``location``); None otherwise,
            and when no one was asked.

        Raises:
            EffectRefusedError: The effect needs approval and was refused.
        """
        if self.authorize is not None:
            return await self.authorize(effect, dict(preview or {}), always=always, again=again)
        return None

    # -- state ---------------------------------------------------------------------------

    @property
    def workspace(self) -> Workspace:
        """The chat's state as of the last append (opened on first use)."""
        if self._workspace is None:
            self._workspace = self.chats.open(self.chat_id)
        return self._workspace

    def refresh(self) -> Workspace:
        """Re-read the chat's state from the store."""
        self._workspace = self.chats.open(self.chat_id)
        return self._workspace

    def append(self, bodies: Sequence[EventBody]) -> Workspace:
        """Append events (checked against the chat's state) and return the new state.

        The stored events go to the run's stream, which turns them into what the person
        is shown.
        """
        appended = self.chats.append_traced(self.chat_id, self.run_id, list(bodies))
        self._workspace = appended.workspace
        if self.on_append is not None:
            self.on_append(appended)
        return self._workspace

    def progress(
        self, tool: str, name: str | None, state: Literal["running", "done"], ms: int | None = None
    ) -> None:
        """Tell the person code started (``"running"``) or finished running (not kept)."""
        if self.on_progress is not None:
            self.on_progress(tool, name, state, ms)

    def for_call(self, **changes: Any) -> ToolContext:
        """A context of its own for one tool call: the same run, with ``changes``."""
        return replace(self, **changes)

    # -- entries ---------------------------------------------------------------------------

    def entry_data(self, entry_id: str, version: int | None = None) -> dict[str, Any]:
        """Return an entry version's FeatureCollection (the latest version by default).

        Raises:
            KeyError: No such entry or version in this chat.
            TypeError: The entry is a raster (:meth:`entry_raster` reads those).
        """
        written = self.entry_version(entry_id, version)
        if written.blob.media_type == RASTER_MEDIA_TYPE:
            raise TypeError(f"{entry_id} is a raster, not features")
        key = (self.chat_id, entry_id, written.version)
        return self.cache.data(
            key, lambda: json.loads(self.chats.read_blob(self.chat_id, written.blob))
        )

    def entry_version(self, entry_id: str, version: int | None = None) -> EntryWritten:
        """Return the event that wrote an entry version (the latest by default)."""
        entry = self.workspace.entries.get(entry_id)
        if entry is None:
            raise KeyError(entry_id)
        if version is None:
            return entry.latest
        for written in entry.versions:
            if written.version == version:
                return written
        raise KeyError(f"{entry_id} v{version}")

    def entry_raster(self, entry_id: str, version: int | None = None) -> Raster:
        """Return a raster entry version's Raster (the latest version by default).

        Raises:
            KeyError: No such entry or version in this chat.
            TypeError: The entry holds features, not a raster.
        """
        written = self.entry_version(entry_id, version)
        if written.blob.media_type != RASTER_MEDIA_TYPE:
            raise TypeError(f"{entry_id} holds features, not a raster")
        return bytes_raster(self.chats.read_blob(self.chat_id, written.blob))

    def sandbox_entry(self, entry_id: str) -> SandboxEntry:
        """The latest version of an entry as the sandbox takes it (by reference, cached)."""
        written = self.entry_version(entry_id)
        key = (self.chat_id, entry_id, written.version)
        # The sandbox keeps layers by (id, version) across every chat it serves, so the id
        # it is given names the content: another chat's places-1 is another layer.
        handle = f"{entry_id}@{written.blob.sha256[:20]}"

        def load() -> SandboxEntry:
            if written.blob.media_type == RASTER_MEDIA_TYPE:
                return SandboxEntry(handle, written.version, self.entry_raster(entry_id))
            return SandboxEntry(handle, written.version, self.entry_data(entry_id))

        return self.cache.sandbox_entry(key, load)

    async def write_entry(
        self,
        *,
        kind: EntryKind,
        data: dict[str, Any] | Raster,
        label: str,
        sources: Iterable[Provenance] = (),
        derived_from: Iterable[EntryVersion] = (),
        entry_id: str | None = None,
        extra: Sequence[EventBody] = (),
        show: bool = True,
    ) -> EntryWritten:
        """Store a FeatureCollection or a raster as a new entry (or a new version of
        ``entry_id``).

        The blob is stored by content hash, the event appended with the digest the model
        will read (the UI is shown the entry from that event, its GeoJSON by reference),
        and monitors watching the entry re-run.

        Args:
            kind: The entry kind (``"places"``, ``"geometries"``, ``"byod"``, ...).
            data: The FeatureCollection, or the Raster (for a ``rasters`` entry).
            label: A short name for people.
            sources: Its provenance.
            derived_from: The entry versions it was computed from.
            entry_id: Write a new version of this entry instead of a new entry.
            extra: Events to append in the same batch, after the entry.
            show: Whether the map shows it.
        """
        workspace = self.workspace
        if entry_id is None:
            entry_id = workspace.next_entry_id(kind)
            version = 1
        else:
            version = workspace.entries[entry_id].version + 1
        # Serialising and describing a large layer takes a while: off the event loop.
        if (kind == "rasters") != isinstance(data, Raster):
            raise TypeError("a rasters entry holds a Raster, and only a rasters entry does")
        encoded, media_type, digest = await asyncio.to_thread(_encode_and_describe, data)
        blob = self.chats.store.put_blob(self.chat_id, encoded, media_type)
        body = EntryWritten(
            entry_id=entry_id,
            kind=kind,
            version=version,
            label=label[:300] or entry_id,
            blob=blob,
            digest=digest,
            sources=tuple(sources),
            derived_from=tuple(derived_from),
        )
        hidden = [] if show else [EntryDisplayChanged(entry_id=entry_id, visible=False)]
        self.append([body, *hidden, *extra])
        if self.after_entry_written is not None and not self.rerunning:
            await self.after_entry_written(self, body)
        return body

    @staticmethod
    def now() -> datetime:
        """The current time (UTC)."""
        return datetime.now(UTC)
