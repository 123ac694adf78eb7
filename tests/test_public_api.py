"""The public surface is declared and pinned: a change to it is a deliberate change here."""

from __future__ import annotations

import geomint
import geomint.sandbox


def test_package_root_exports() -> None:
    assert sorted(geomint.__all__) == sorted([
        "GeomintError", "ModelFacingError", "OperatorError", "SandboxUnavailableError",
        "UsageError", "__version__", "create_map_agent", "MapAgent", "RunResult",
        "AgentEvent", "DEFAULT_TOOLS", "ToolEntry", "ToolBuilder",
    ])  # fmt: skip
    for name in geomint.__all__:
        assert getattr(geomint, name) is not None


def test_agent_exports() -> None:
    import geomint.agent
    import geomint.tools

    assert sorted(geomint.agent.__all__) == sorted([
        "AgentEvent", "ApprovalRequest", "Classification", "MapAgent", "RunResult",
        "approval_preview", "classify", "create_map_agent",
    ])  # fmt: skip
    assert geomint.create_map_agent is geomint.agent.create_map_agent
    assert geomint.DEFAULT_TOOLS is geomint.tools.DEFAULT_TOOLS
    assert "analyse_data" in geomint.DEFAULT_TOOLS


def test_sandbox_exports() -> None:
    assert sorted(geomint.sandbox.__all__) == sorted([
        "CHART_TYPES", "ChartError", "CodeError", "Entry", "Mode", "PreparedCode", "Sandbox",
        "SandboxResult", "Violation", "digest", "prepare", "to_json_safe", "validate_chart",
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
        "EXPORT_FORMAT", "ChatSummary", "Chats", "ConcurrentAppendError", "CorruptStoreError",
        "MemoryStore", "NoSuchChatError", "RefusedEventError", "SQLiteStore",
        "SchemaTooNewError", "Store", "StoreError", "StoreUnavailableError", "default_path",
        "open_store",
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
        "Repair",
        "aload",
        "confinement_level",
        "load",
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
        "WorkerProcess",
        "WorkerStartError",
        "confine",
        "default_read_paths",
        "worker_environment",
    ]


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
