"""Turning a provider's answer into an entry, and its miss into a result.

Every fetch is an event: ``FetchMade`` beside the entry it wrote (with the provider,
endpoint and provenance), or ``FetchMissed`` with the reason. A miss is something the model
reads and acts on (``{"miss": ..., "code": ...}``), never an exception in the loop.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Any

from geomint.provenance import Provenance
from geomint.providers.base import Found, ProviderMiss
from geomint.state import FetchMade, FetchMissed
from geomint.state.events import EntryKind
from geomint.tools._judged import judged_answer
from geomint.tools.context import ToolContext
from geomint.tools.results import ToolError, ToolResult, plain_json

__all__ = ["fetch_into_entry", "no_provider"]


def no_provider(capability: str) -> ToolError:
    """The refusal when no provider offers a capability."""
    return ToolError(
        f"no provider here offers {capability}",
        hint="configure one (TOMTOM_API_KEY, or the OpenStreetMap stack), or use the data "
        "this chat already has",
    )


async def fetch_into_entry(
    ctx: ToolContext,
    *,
    tool: str,
    kind: EntryKind,
    label: str | Callable[[Found], str],
    request: Mapping[str, Any],
    call: Callable[[], Awaitable[Found]],
    extra: Mapping[str, Any] | None = None,
    typed: Sequence[Provenance] = (),
) -> ToolResult:
    """Run a provider call; store what it found as a ``kind`` entry, or record the miss.

    ``typed`` are inputs the model typed itself (a coordinate from memory): they join the
    entry's sources, so every figure computed from it says what it rests on. ``label`` may
    be worked out from what was found (a place is labelled by the name that matched).
    """
    await ctx.require("network", {"tool": tool, "request": plain_json(request)})
    try:
        found = await call()
        if found.count:  # judged like a user's file before anything here computes on it
            data, repaired = await judged_answer(found)
    except ProviderMiss as miss:
        return await _missed(ctx, tool, request, miss)
    if not found.count:
        # A provider says what it does have (its categories, the names nearest) in notes.
        reason = "; ".join(found.notes)[:2_000] or "nothing matched"
        ctx.append(
            [
                FetchMissed(
                    tool=tool,
                    provider=found.provider,
                    request=plain_json(found.request),
                    reason=reason,
                    code="not_found",
                )
            ]
        )
        return ToolResult(model={"miss": reason, "code": "not_found", "provider": found.provider})
    if callable(label):
        label = label(found)
    await ctx.require(
        "fetched_entry", {"label": label, "features": found.count, "provider": found.provider}
    )
    sources = (*found.sources, *typed)
    written = await ctx.write_entry(kind=kind, data=data, label=label, sources=sources)
    # The tool's request (what the model asked, areas by name) with the provider's
    # endpoint: what a person reading the log needs to know what was searched.
    ctx.append(
        [
            FetchMade(
                tool=tool,
                provider=found.provider,
                request=plain_json({**request, "endpoint": found.endpoint}),
                entry_id=written.entry_id,
                sources=found.sources,
            )
        ]
    )
    out: dict[str, Any] = {
        "entry_id": written.entry_id,
        "provider": found.provider,
        "digest": written.digest,
        "licences": sorted({s.licence for s in found.sources}),
    }
    rests_on = [
        f"{p.title}: every figure computed from this entry says so; pass a place_id or a "
        "query instead to rest it on a source"
        for p in typed
    ]
    if found.notes or repaired or rests_on:
        out["notes"] = [*found.notes, *repaired, *rests_on]
    out.update(extra or {})
    return ToolResult(model=out)


async def _missed(
    ctx: ToolContext, tool: str, request: Mapping[str, Any], miss: ProviderMiss
) -> ToolResult:
    ctx.append(
        [
            FetchMissed(
                tool=tool,
                provider=miss.provider,
                request=plain_json(request),
                reason=miss.reason[:2_000] or miss.code,
                code=miss.code[:64],
            )
        ]
    )
    return ToolResult(
        model={"miss": miss.reason, "code": miss.code, "provider": miss.provider},
        failed=miss.code not in ("not_found",),
    )
