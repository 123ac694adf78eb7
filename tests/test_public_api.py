"""The public surface is declared and pinned: a change to it is a deliberate change here."""

from __future__ import annotations

import geomint
import geomint.sandbox


def test_package_root_exports() -> None:
    assert sorted(geomint.__all__) == sorted([
        "GeomintError", "ModelFacingError", "OperatorError", "SandboxUnavailableError",
        "UsageError", "__version__", "create_map_agent", "MapAgent", "RunResult",
        "Part", "DEFAULT_TOOLS", "ToolEntry",
    ])  # fmt: skip
    for name in geomint.__all__:
        assert getattr(geomint, name) is not None


def test_agent_exports() -> None:
    import geomint.agent
    import geomint.tools

    assert sorted(geomint.agent.__all__) == sorted([
        "ApprovalRequest", "Classification", "MapAgent", "RunResult", "ToolCallOutcome", "classify",
        "create_map_agent",
    ])  # fmt: skip
    assert geomint.create_map_agent is geomint.agent.create_map_agent
    assert geomint.DEFAULT_TOOLS is geomint.tools.DEFAULT_TOOLS
    assert "analyse_data" in geomint.DEFAULT_TOOLS


def test_ui_exports() -> None:
    import geomint.ui

    assert sorted(geomint.ui.__all__) == sorted([
        "PART_ADAPTER", "AnalysisPart", "ApprovalAnsweredPart", "ApprovalAskedPart",
        "BasemapPart", "BlobReader", "ChartPart", "ClassifiedPart", "DiscoveryPart",
        "DisplayPart", "DurablePart",
        "EntryPart", "LanguagePart",
        "FigureCard", "FigurePart", "LayerCard", "MapChangePart", "MapUndonePart", "MissPart",
        "MonitorRanPart",
        "MonitorSwitchedPart", "ObservationPart", "Part", "ProgressPart", "Projector",
        "QuestionPart", "RasterView", "RunEndedPart", "RunStartedPart", "TextDeltaPart", "TextPart",
        "ToolCallPart", "ToolResultPart", "UploadPart", "ViewPart", "approval_preview",
        "chat_parts", "discovery_summary", "entry_url", "figure_card", "is_durable", "parts_of",
        "raster_url", "raster_view",
    ])  # fmt: skip
    for name in geomint.ui.__all__:
        assert getattr(geomint.ui, name) is not None
    assert geomint.Part is geomint.ui.Part


def test_sandbox_exports() -> None:
    assert sorted(geomint.sandbox.__all__) == sorted([
        "CHART_TYPES", "ChartError", "CodeError", "Entry", "MapCodeError", "MapOp", "MapView",
        "MintedFigure", "MintedLayer", "MintedRaster", "Mode", "PreparedCode",
        "RASTER_MEDIA_TYPE", "Sandbox", "SandboxResult", "Violation", "bytes_raster", "digest",
        "png_size", "prepare", "raster_bytes", "replay", "to_json_safe", "validate_chart",
    ])  # fmt: skip
    for name in geomint.sandbox.__all__:
        assert getattr(geomint.sandbox, name) is not None


def test_sandbox_result_fields() -> None:
    fields = set(geomint.sandbox.SandboxResult.__dataclass_fields__)
    assert {"ok", "value", "error", "hint", "violations", "figures", "layers", "stdout",
            "duration_ms", "mode"} <= fields  # fmt: skip


def test_state_and_store_exports() -> None:
    import geomint.state
    import geomint.store

    assert sorted(geomint.store.__all__) == sorted([
        "EXPORT_FORMAT", "Appended", "ChatSummary", "Chats", "ConcurrentAppendError",
        "CorruptStoreError", "MemoryStore", "NoSuchChatError", "RefusedEventError", "SQLiteStore",
        "SchemaTooNewError", "Store", "StoreError", "StoreUnavailableError", "default_path",
        "export_text", "open_store",
    ])  # fmt: skip
    assert {"Event", "EventBody", "Workspace", "fold", "EVENT_ADAPTER"} <= set(
        geomint.state.__all__
    )
    for module in (geomint.state, geomint.store):
        for name in module.__all__:
            assert getattr(module, name) is not None


def test_intake_exports() -> None:
    import geomint.intake

    assert sorted(geomint.intake.__all__) == [
        "IntakeError",
        "IntakeReport",
        "Layer",
        "RasterLayer",
        "Repair",
        "aload",
        "aload_raster",
        "confinement_level",
        "is_tiff",
        "load",
        "load_raster",
        "offload",
    ]


def test_confine_exports() -> None:
    import geomint.confine

    assert sorted(geomint.confine.__all__) == [
        "CallTimeoutError",
        "Child",
        "ChildDiedError",
        "ChildLostError",
        "ConfineConfig",
        "ConfinementError",
        "ConfinementRefusedError",
        "Pool",
        "WorkerProcess",
        "WorkerStartError",
        "confine",
        "default_read_paths",
        "worker_environment",
    ]


def test_providers_exports() -> None:
    import geomint.providers
    import geomint.providers.offline
    import geomint.providers.osm
    import geomint.providers.tomtom

    assert sorted(geomint.providers.__all__) == sorted([
        "Avoid", "BoundarySource", "Found", "Geocoder", "LonLat", "OfflineProvider",
        "OsmProvider", "PlaceSearch", "ProviderMiss", "Providers", "RangeFinder", "Router",
        "TomTomProvider", "TrafficSource", "TravelMode", "default_providers",
    ])  # fmt: skip
    assert geomint.providers.offline.__all__ == ["OfflineProvider", "category_of"]
    assert geomint.providers.osm.__all__ == ["OsmProvider"]
    assert geomint.providers.tomtom.__all__ == ["TomTomProvider"]
    for module in (geomint.providers, geomint.providers.offline, geomint.providers.osm,
                   geomint.providers.tomtom):  # fmt: skip
        for name in module.__all__:
            assert getattr(module, name) is not None


def test_http_exports() -> None:
    import geomint.http

    assert sorted(geomint.http.__all__) == sorted([
        "FetchError", "FetchErrorCode", "FetchPolicy", "Fetched", "Method", "address_refusal",
        "exchange", "fetch", "printable", "redact", "shown_url",
        "USER_AGENT", "CacheMode", "DiskCache", "MemoryCache", "ParamValue", "RateLimiter",
        "RequestPolicy", "ResponseCache", "arequest", "arequest_json", "default_cache_dir",
        "request", "request_json",
        "ScriptedTransport",
    ])  # fmt: skip
    for name in geomint.http.__all__:
        assert getattr(geomint.http, name) is not None


def test_testing_exports() -> None:
    import geomint.http
    import geomint.models.demo
    import geomint.store
    import geomint.testing

    assert sorted(geomint.testing.__all__) == sorted([
        "Script", "Step", "tool_returns", "scripted_model", "DemoModel",
        "StubLLMServer", "StubReply", "StubRequest", "StubToolCall",
        "RecordedServer", "RecordedReply", "RecordedRequest", "RecordedRoute",
        "ScriptedTransport", "MemoryStore", "in_process_sandbox",
        "offline", "NetworkGuard", "OfflineError",
    ])  # fmt: skip
    for name in geomint.testing.__all__:
        assert getattr(geomint.testing, name) is not None
    # Re-exports are the library's own objects, not copies.
    assert geomint.testing.MemoryStore is geomint.store.MemoryStore
    assert geomint.testing.ScriptedTransport is geomint.http.ScriptedTransport
    assert geomint.testing.scripted_model is geomint.models.demo.scripted_model


def test_mcp_exports() -> None:
    import geomint.mcp

    assert sorted(geomint.mcp.__all__) == sorted([
        "MCP_TOOLS", "ChatFor", "build_server", "http_app", "mcp_tools", "new_chat_id",
        "serve_stdio",
    ])  # fmt: skip
    for name in geomint.mcp.__all__:
        assert getattr(geomint.mcp, name) is not None


def test_replay_exports() -> None:
    import geomint.replay

    assert sorted(geomint.replay.__all__) == sorted([
        "Bundle", "CellReport", "ExportFormat", "FigureCheck", "InputChangedError", "LayerCheck",
        "Replay", "ReplayError", "data_folder", "escape_markdown", "export_chat", "export_zip",
        "notebook_text", "open_replay", "read_chat", "script_text",
    ])  # fmt: skip
    for name in geomint.replay.__all__:
        assert getattr(geomint.replay, name) is not None
