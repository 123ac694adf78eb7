"""What a person is shown: typed UI parts, projected from the chat's event log.

:mod:`geomint.ui.parts` holds one pydantic model per kind of part and the one adapter;
:mod:`geomint.ui.project` turns stored events into parts, for the live stream and for a
chat read back alike. The web stream, the terminal, :class:`~geomint.agent.RunResult` and
the page consume nothing else.
"""

from __future__ import annotations

from geomint.ui.parts import (
    PART_ADAPTER,
    AnalysisPart,
    ApprovalAnsweredPart,
    ApprovalAskedPart,
    ChartPart,
    ClassifiedPart,
    DisplayPart,
    DurablePart,
    EntryPart,
    FigureCard,
    FigurePart,
    LayerCard,
    MissPart,
    MonitorRanPart,
    MonitorSwitchedPart,
    ObservationPart,
    Part,
    ProgressPart,
    QuestionPart,
    RunEndedPart,
    RunStartedPart,
    TextDeltaPart,
    TextPart,
    ToolCallPart,
    ToolResultPart,
    UploadPart,
    ViewPart,
    is_durable,
)
from geomint.ui.project import (
    BlobReader,
    Projector,
    approval_preview,
    chat_parts,
    entry_url,
    figure_card,
    parts_of,
)

__all__ = [
    "PART_ADAPTER",
    "AnalysisPart",
    "ApprovalAnsweredPart",
    "ApprovalAskedPart",
    "BlobReader",
    "ChartPart",
    "ClassifiedPart",
    "DisplayPart",
    "DurablePart",
    "EntryPart",
    "FigureCard",
    "FigurePart",
    "LayerCard",
    "MissPart",
    "MonitorRanPart",
    "MonitorSwitchedPart",
    "ObservationPart",
    "Part",
    "ProgressPart",
    "Projector",
    "QuestionPart",
    "RunEndedPart",
    "RunStartedPart",
    "TextDeltaPart",
    "TextPart",
    "ToolCallPart",
    "ToolResultPart",
    "UploadPart",
    "ViewPart",
    "approval_preview",
    "chat_parts",
    "entry_url",
    "figure_card",
    "is_durable",
    "parts_of",
]
