"""``find_sources``' live catalogue search: the searches, the sub-agent, the trace row.

When the registry has nothing for a question (or the model asks), the catalogues the
registry names are searched live (:mod:`geomint.sources.discovery`) and a second model
shortlists the results (:mod:`geomint.sources.shortlist`). The model reads the shortlist
only: at most five datasets, each with one line on why and the ``fetch`` arguments that
read it next. The person is shown one row, kept as a
:class:`~geomint.state.DiscoveryRan` event, that expands into the searches and the
shortlist. Nothing is fetched, landed or minted here.
"""

from __future__ import annotations

import asyncio
from typing import Any, Final

from geomint.sources import (
    Candidate,
    CataloguePlan,
    Pick,
    Searched,
    Sources,
    search_catalogues,
    shortlist_results,
)
from geomint.state import CatalogueSearch, DiscoveryRan, ModelUsage, Shortlisted
from geomint.tools.context import ToolContext
from geomint.tools.effects import EffectRefusedError
from geomint.tools.results import plain_json

__all__ = ["PER_CATALOGUE", "discover", "searchable_note"]

#: Results read from each catalogue (what the shortlisting model is given, per catalogue).
PER_CATALOGUE: Final = 20
_NEXT: Final = (
    "call fetch with a candidate's `fetch` arguments to list its files (each dataset "
    "states its own licence), then fetch again with filters={'dataset': ..., 'resource': "
    "...} to land one. A candidate is not data: no figure comes from this list"
)


def _clip(text: str | None, limit: int) -> str | None:
    if text is None:
        return None
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _known(plan: CataloguePlan) -> list[dict[str, Any]]:
    return [
        {
            "source_id": s.id,
            "title": s.title,
            "connector": s.connector,
            "covers": list(s.coverage.countries) or ["world"],
        }
        for s in plan.known
    ]


def searchable_note(sources: Sources, country: str | None) -> str | None:
    """What a result with registry hits says of the catalogues it did not search live."""
    plan = sources.catalogues(country)
    if not plan.searchable:
        return None
    names = ", ".join(s.id for s, _ in plan.searchable)
    return (
        f"the registry had hits, so no catalogue was searched live; if none of them fits, "
        f"find_sources(..., search_catalogues=true) searches {names}"
    )


async def discover(ctx: ToolContext, sources: Sources, *, query: str, country: str | None) -> (
    dict[str, Any]
):  # fmt: skip
    """Search the catalogues live and shortlist what they return; what the model reads.

    Appends one :class:`~geomint.state.DiscoveryRan` event when a search ran. Where none
    can run (live sources off, no catalogue for the country, the network refused) the
    answer says so, and names the catalogues that exist.
    """
    plan = await asyncio.to_thread(sources.catalogues, country)
    if not plan.searchable:
        return {
            "searched": False,
            "why": f"live catalogue search was not available: {plan.unavailable}",
            "catalogues": _known(plan),
        }
    ids = [s.id for s, _ in plan.searchable]
    try:
        await ctx.require("network", {"tool": "find_sources", "search": query, "catalogues": ids})
    except EffectRefusedError as refused:
        return {
            "searched": False,
            "why": f"live catalogue search was not run: {refused.message}",
            "catalogues": _known(plan),
        }
    searched = await search_catalogues(
        plan.searchable,
        query,
        place=plan.place,
        bbox=plan.bbox,
        limit=PER_CATALOGUE,
        policy=sources.policy,
    )
    candidates = [c for s in searched if s.results for c in s.results.candidates]
    ctx.progress("find_sources", "shortlist", "running")
    try:
        kept = await shortlist_results(
            query, candidates, model=ctx.discovery_model, budget=ctx.budget, country=country
        )
    finally:
        ctx.progress("find_sources", "shortlist", "done")
    ctx.append(
        [
            DiscoveryRan(
                call_id=ctx.call_id,
                query=query,
                searches=tuple(_step(s) for s in searched),
                shortlist=tuple(_kept(p) for p in kept.picks),
                ranked_by=kept.ranked_by,
                dropped=kept.dropped,
                problem=_clip(kept.problem, 2_000),
                usage=ModelUsage(**kept.usage.as_dict()),
            )
        ]
    )
    out: dict[str, Any] = {
        "searched": _searched(searched),
        "read": kept.read,
        "candidates": [_for_model(p) for p in kept.picks],
    }
    if kept.ranked_by == "model":
        out["shortlisted_by"] = (
            f"a second model that read the {kept.read} results and kept these; it fetched "
            "and chose nothing: which to read, if any, is yours to decide"
        )
    else:
        out["shortlisted_by"] = (
            f"the catalogues' own order, with no reasons: the shortlist was not made "
            f"({kept.problem})"
        )
    if kept.dropped:
        out["dropped"] = (
            "the shortlisting model named ids no search returned; they were not kept: "
            + ", ".join(kept.dropped)
        )
    notes = list(kept.notes)
    if plan.left_out:
        notes.append(
            f"{len(plan.left_out)} more catalogues were not searched: "
            + ", ".join(s.id for s in plan.left_out)
        )
    if notes:
        out["notes"] = notes
    if kept.picks:
        out["next"] = _NEXT
    return out


def _step(searched: Searched) -> CatalogueSearch:
    catalogue = searched.catalogue
    results = searched.results
    error = searched.error
    return CatalogueSearch(
        catalogue=catalogue.id,
        title=catalogue.title,
        searcher=searched.searcher,
        ok=results is not None,
        read=len(results.candidates) if results else 0,
        matched=results.matched if results else None,
        error=_clip(str(error), 2_000) if error else None,
        code=error.code if error else None,
    )


def _kept(pick: Pick) -> Shortlisted:
    found: Candidate = pick.candidate
    return Shortlisted(
        id=found.ref,
        title=_clip(found.title, 500) or found.id,
        catalogue=found.catalogue,
        kind=_clip(found.kind, 40) or "dataset",
        why=pick.why,
        publisher=_clip(found.publisher, 200),
        licence=_clip(found.licence, 200),
        url=found.url if found.url and len(found.url) <= 2_000 else None,
        fetch=plain_json(dict(found.fetch)),
    )


def _for_model(pick: Pick) -> dict[str, Any]:
    found = pick.candidate
    out: dict[str, Any] = {
        "id": found.ref,
        "title": _clip(found.title, 200),
        "catalogue": found.catalogue,
        "kind": found.kind,
        "publisher": _clip(found.publisher, 200),
        "licence": _clip(found.licence, 200) or "not stated",
        "formats": list(found.formats),
        "why": pick.why,
        "fetch": plain_json(dict(found.fetch)),
    }
    return {k: v for k, v in out.items() if v not in (None, [])}


def _searched(searched: list[Searched]) -> str:
    said = []
    for one in searched:
        if one.results is None:
            code = one.error.code if one.error else "failed"
            said.append(f"{one.catalogue.id} (failed: {code}: {_clip(str(one.error), 300)})")
            continue
        matched = one.results.matched
        of = f"{matched} match, " if matched is not None else ""
        said.append(f"{one.catalogue.id} ({of}read {len(one.results.candidates)})")
    count = len(searched)
    return f"{count} catalogue{'s' * (count != 1)} live: " + "; ".join(said)
