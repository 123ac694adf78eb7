"""The workspace of one chat (entries, versions, display state, analyses, monitors,
trackers, the value ledger) as a pure fold over its event log.

Events are defined in :mod:`geomint.state.events`; :func:`fold` turns them into a
:class:`Workspace`. Nothing here touches a store.
"""

from __future__ import annotations

from geomint.state.events import (
    BODY_ADAPTER,
    ENTRY_KINDS,
    EVENT_ADAPTER,
    AnalysisRecorded,
    ApprovalAsked,
    ApprovalGiven,
    ApprovalRefused,
    BlobRef,
    ChatCreated,
    ChatDeleted,
    EntryDisplayChanged,
    EntryWritten,
    Event,
    EventBody,
    FetchMade,
    FetchMissed,
    FigurePresented,
    LayerMinted,
    MessageAdded,
    MonitorSwitched,
    ObservationRecorded,
    ToolFailed,
    ValueMinted,
    ViewChanged,
)
from geomint.state.workspace import Approval, CorruptLogError, Entry, Workspace, fold

__all__ = [
    "BODY_ADAPTER",
    "ENTRY_KINDS",
    "EVENT_ADAPTER",
    "AnalysisRecorded",
    "Approval",
    "ApprovalAsked",
    "ApprovalGiven",
    "ApprovalRefused",
    "BlobRef",
    "ChatCreated",
    "ChatDeleted",
    "CorruptLogError",
    "Entry",
    "EntryDisplayChanged",
    "EntryWritten",
    "Event",
    "EventBody",
    "FetchMade",
    "FetchMissed",
    "FigurePresented",
    "LayerMinted",
    "MessageAdded",
    "MonitorSwitched",
    "ObservationRecorded",
    "ToolFailed",
    "ValueMinted",
    "ViewChanged",
    "Workspace",
    "fold",
]
