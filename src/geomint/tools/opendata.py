"""Open-data tools: ``find_sources``, ``resolve_place`` and ``fetch``.

The model chooses; code mints. ``find_sources`` tells the model which published sources
could answer (filtered by country, years and modality, ranked for the query it wrote),
with what the first fetch needs, and when the registry has nothing, searches the
catalogues it names live and hands back a second model's shortlist
(:mod:`geomint.tools._discovery`); ``resolve_place`` turns a name into a spine id without
fetching anything; ``fetch`` reads one number for one unit and one period (``cell=True``:
minted here, with its source, licence, period and retrieval time, or a miss saying what
the narrowing reached) or lands a table as an entry joined to the spine, for
``analyse_data`` to compose. A miss is a result the model reads, never a guess.
"""

from __future__ import annotations

import asyncio
from typing import Any, Final, Literal

from pydantic import BaseModel, ConfigDict, Field, JsonValue

from geomint.intake import IntakeError, aload
from geomint.provenance import Provenance
from geomint.sources import (
    Cell,
    CellMiss,
    LandedTable,
    Source,
    SourceFetchError,
    Sources,
    UnknownPlaceError,
)
from geomint.sources.connectors.base import Download, Grid, Listing
from geomint.state import FetchMade, FetchMissed, ValueMinted
from geomint.tools._discovery import discover, searchable_note
from geomint.tools.context import ToolContext
from geomint.tools.registry import ToolEntry
from geomint.tools.results import ToolError, ToolResult, plain_json

__all__ = ["FETCH", "FIND_SOURCES", "OPEN_DATA_TOOLS", "RESOLVE_PLACE"]

_MAX_INSIDE: Final = 60
#: Hits shown whole (description, guidance, filters, profile); the rest are named briefly,
#: so a result stays inside the model's budget.
_FULL_HITS: Final = 2
_MAX_OTHER_NAMES: Final = 6


def _sources(ctx: ToolContext) -> Sources:
    if ctx.sources is None:
        raise ToolError(
            "no source registry is configured for this agent",
            hint="create the agent with sources=... (geomint.sources.Sources)",
        )
    return ctx.sources


# -- find_sources ------------------------------------------------------------------------


class FindInput(BaseModel):
    """Arguments of ``find_sources``."""

    model_config = ConfigDict(extra="forbid")

    query: str = Field(
        min_length=1,
        max_length=500,
        description="What you are looking for, in your own words (e.g. 'population by "
        "country and year', 'passenger cars per inhabitant'). Put the place in `country`, "
        "not here, unless the source itself should be about it.",
    )
    country: str | None = Field(
        default=None, description="Only sources covering this country: FIN, country:FIN or Finland."
    )
    period: str | None = Field(
        default=None, description="Only sources overlapping these years: 2020 or 2000/2010."
    )
    modality: Literal["table", "vector", "raster"] | None = None
    top: int = Field(default=5, ge=1, le=10)
    search_catalogues: bool = Field(
        default=False,
        description="Also search the open-data catalogues (CKAN portals) live when the "
        "registry has hits that do not fit. On a registry miss they are searched anyway, "
        "where live sources are on.",
    )


def _hit(source: Source, ranks: dict[str, int], score: float) -> dict[str, Any]:
    return {**source.for_model(), "ranked_by": ranks, "score": score}


async def _find(arguments: FindInput, ctx: ToolContext) -> ToolResult:
    sources = _sources(ctx)
    try:
        found = await asyncio.to_thread(
            sources.find,
            arguments.query,
            country=arguments.country,
            period=arguments.period,
            modality=arguments.modality,
            top=arguments.top,
        )
    except UnknownPlaceError as exc:
        raise ToolError(
            str(exc), hint="pass an ISO code such as FIN, or leave country out"
        ) from None
    kept, total = found.filtered
    filters = {
        k: v
        for k, v in (
            ("country", arguments.country),
            ("period", arguments.period),
            ("modality", arguments.modality),
        )
        if v is not None
    }
    out: dict[str, Any] = {
        "query": arguments.query,
        "searched": f"{kept} of {total} sources pass the filters"
        + (f" ({', '.join(f'{k}={v}' for k, v in filters.items())})" if filters else ""),
        "arms": list(found.arms),
        "hits": [
            _hit(h.source, h.ranks, h.score)
            if rank < _FULL_HITS
            else {**h.source.brief(), "ranked_by": h.ranks}
            for rank, h in enumerate(found.hits)
        ],
    }
    notes = list(found.notes)
    if found.offline:
        out["need_network"] = [
            {"source_id": s.id, "title": s.title, "connector": s.connector} for s in found.offline
        ]
        notes.append(
            "need_network lists sources that matched but are read over the network, which is "
            "off here; they cannot be fetched"
        )
    # A catalogue's own row is where to search, not an answer: hits that are only
    # catalogues are a miss, and the catalogues are searched live.
    searchers = sources.searchers
    answers = [h for h in found.hits if not sources.is_catalogue(h.source)]
    candidates: list[Any] = []
    if arguments.search_catalogues or not answers:
        live = await discover(ctx, sources, query=arguments.query, country=arguments.country)
        out["catalogues"] = live
        candidates = live.get("candidates", [])
    elif searchers:
        said = await asyncio.to_thread(searchable_note, sources, arguments.country)
        if said:
            notes.append(said)
    if notes:
        out["notes"] = notes
    if not found.hits:
        out["miss"] = (
            f"no source here answers {arguments.query!r}: searched {kept} of {total} sources"
            + (f" passing {', '.join(f'{k}={v}' for k, v in filters.items())}" if filters else "")
            + (
                f". The live catalogue search shortlisted {len(candidates)} datasets "
                "(catalogues.candidates): fetch one to see its files before using it, or say "
                "that nothing was found"
                if candidates
                else ". Say so plainly rather than estimate"
            )
        )
    return ToolResult(model=out)


FIND_SOURCES: Final = ToolEntry(
    description=(
        "Find published data sources for a question. They hold figures such as population, "
        "GDP per capita, life expectancy, city populations and statistics offices' tables. "
        "Write the "
        "query yourself; filter by country (ISO code), period (2020, 2000/2010) and "
        "modality. Each hit has its licence, coverage, guidance, filters and profile (what "
        "one fetch returns), so the first fetch is the right one. When the registry has "
        "nothing, the open-data catalogues it names are searched live (where live sources "
        "are on) and a shortlist of at most five datasets comes back, each with why and the "
        "fetch arguments that read it. No hits is a result: say that nothing was found."
    ),
    input_schema=FindInput,
    execute=_find,
    effects=frozenset({"network"}),
    classification_prompt="Statistics or published figures about places: population, "
    "GDP, life expectancy, any indicator from a named source.",
    tags=("data", "sources"),
    examples=("find_sources(query='population by country and year', country='FIN')",),
    example_prompts=("What is the population of Finland?", "GDP per capita of Sweden over time"),
    related_tools=("resolve_place", "fetch"),
    changes_chat=False,
    result_chars=8_000,
)


# -- resolve_place -----------------------------------------------------------------------


class ResolveInput(BaseModel):
    """Arguments of ``resolve_place``."""

    model_config = ConfigDict(extra="forbid")

    name: str = Field(min_length=1, max_length=200, description="A place's name, in any language.")
    level: Literal["country", "admin1", "city", "area"] | None = None
    country: str | None = Field(default=None, description="Only places in this country (FIN).")


async def _resolve(arguments: ResolveInput, ctx: ToolContext) -> ToolResult:
    sources = _sources(ctx)
    try:
        resolved = await asyncio.to_thread(
            sources.resolve, arguments.name, level=arguments.level, country=arguments.country
        )
    except UnknownPlaceError as exc:
        raise ToolError(str(exc)) from None
    spine = sources.spine
    if not resolved.matches:
        out: dict[str, Any] = {
            "miss": f"no place named {arguments.name!r} on the place spine",
            "near": list(resolved.near),
        }
        if resolved.notes:
            out["notes"] = list(resolved.notes)
        return ToolResult(model=out)
    matches = []
    for place in resolved.matches:
        parent = spine.get(place.parent) if place.parent else None
        matches.append(
            {
                "id": place.id,
                "name": place.name,
                "level": place.level,
                "names": dict(place.names),
                "other_names": list(place.other_names[:_MAX_OTHER_NAMES]),
                "kind": place.kind,
                "parent": parent.summary() if parent else None,
                "country": place.country,
                "point": list(place.point) if place.point else None,
                "bbox": list(place.bbox) if place.bbox else None,
            }
        )
    first = resolved.matches[0]
    out = {"matches": matches}
    if len(matches) > 1:
        out["ambiguous"] = (
            f"{len(matches)} places are called {arguments.name!r}; claim one by its id"
        )
    inside = resolved.inside
    out["units_inside"] = {
        "of": first.id,
        "count": len(inside),
        "units": [p.summary() for p in inside[:_MAX_INSIDE]],
        **({"left_out": len(inside) - _MAX_INSIDE} if len(inside) > _MAX_INSIDE else {}),
    }
    if resolved.notes:
        out["notes"] = list(resolved.notes)
    return ToolResult(model=out)


RESOLVE_PLACE: Final = ToolEntry(
    description=(
        "Turn a place's name into its place spine id. Any language works (Helsingfors); ids "
        "look like country:FIN, admin1:FI-18, city:658225; it gives the parent and the units one "
        "level down (units_inside). No data is fetched; fetch filters take these ids, never "
        "names."
    ),
    input_schema=ResolveInput,
    execute=_resolve,
    classification_prompt="A named country, region or city must be identified before "
    "reading figures about it.",
    tags=("data", "sources"),
    examples=("resolve_place(name='Espoo')",),
    example_prompts=("Population of Helsinki and Espoo",),
    related_tools=("find_sources", "fetch"),
    changes_chat=False,
)


# -- fetch -------------------------------------------------------------------------------


class FetchInput(BaseModel):
    """Arguments of ``fetch``."""

    model_config = ConfigDict(extra="forbid")

    source_id: str = Field(min_length=1, max_length=100, description="From find_sources.")
    filters: dict[str, JsonValue] = Field(
        default_factory=dict,
        description="The source's filter keys: unit (a spine id, or a list for a table), "
        "period (2020, 2000/2010 or 'latest'), and any the source declares.",
    )
    cell: bool = Field(
        default=False,
        description="True: read one number for one unit and one period, minted as a figure "
        "(or a miss). False: land the rows as a table entry for analyse_data.",
    )
    label: str | None = Field(
        default=None,
        max_length=200,
        description="A label for a landed table's entry. A cell's label is written by code "
        "from the source and the unit, so a figure is never named for another place.",
    )


def _label(source: Source, place_name: str) -> str:
    concept = source.concepts[0].replace("_", " ") if source.concepts else source.title
    return f"{concept} of {place_name}"


def _request(arguments: FetchInput) -> dict[str, Any]:
    asked: dict[str, Any] = plain_json(
        {"source_id": arguments.source_id, "filters": arguments.filters, "cell": arguments.cell}
    )
    return asked


def _missed(ctx: ToolContext, arguments: FetchInput, provider: str, reason: str, code: str) -> None:
    ctx.append(
        [
            FetchMissed(
                tool="fetch",
                provider=provider,
                request=_request(arguments),
                reason=reason[:2_000],
                code=code[:64],
            )
        ]
    )


async def _fetch(arguments: FetchInput, ctx: ToolContext) -> ToolResult:
    sources = _sources(ctx)
    registry_source = sources.registry.get(arguments.source_id)
    provider = registry_source.connector if registry_source is not None else "registry"
    connector = sources.connectors.get(provider)
    if connector is not None and connector.needs_network:
        await ctx.require("network", {"tool": "fetch", "request": _request(arguments)})
    try:
        answer = await asyncio.to_thread(
            sources.read, arguments.source_id, arguments.filters, cell=arguments.cell
        )
    except UnknownPlaceError as exc:
        raise ToolError(str(exc), hint="resolve_place(name=...) gives the id") from None
    except SourceFetchError as exc:
        _missed(ctx, arguments, provider, str(exc), exc.code)
        out: dict[str, Any] = {"miss": str(exc), "code": exc.code, "source_id": arguments.source_id}
        if exc.options:
            out["options"] = list(exc.options[:50])
        if exc.retry_after is not None:
            out["retry_after_s"] = exc.retry_after
        # What the source does not have is an answer; a refused or failed fetch is not.
        return ToolResult(model=out, failed=exc.code not in ("not_found", "not_covered"))
    assert registry_source is not None
    if isinstance(answer, Cell):
        return _minted(ctx, arguments, answer)
    if isinstance(answer, CellMiss):
        code = "no_row" if answer.reached == 0 else "several_rows"
        if answer.reached and all(r.get("value") is None for r in answer.rows):
            code = "no_value"
        _missed(ctx, arguments, provider, answer.reason, code)
        out = {"miss": answer.reason, "code": code, "source_id": arguments.source_id}
        if answer.rows:
            out["rows"] = list(answer.rows)
        if answer.periods:
            out["periods"] = list(answer.periods)
        return ToolResult(model=out)
    if isinstance(answer, LandedTable):
        return await _landed(ctx, arguments, registry_source, answer)
    if isinstance(answer, Listing):
        return _listed(ctx, arguments, registry_source, answer)
    if isinstance(answer, Grid):
        return await _gridded(ctx, arguments, registry_source, answer)
    return await _downloaded(ctx, arguments, registry_source, answer)


async def _gridded(
    ctx: ToolContext, arguments: FetchInput, source: Source, grid: Grid
) -> ToolResult:
    provenance = Provenance(
        source_id=source.id,
        title=grid.title[:500],
        publisher=(grid.publisher or source.publisher)[:200],
        licence=(grid.licence or "not stated")[:200],
        url=grid.url or None,
        retrieved_at=grid.retrieved_at,
        evidence=source.evidence,
        period=grid.period,
        recipe=grid.recipe[:1_000] if grid.recipe else None,
    )
    label = arguments.label or grid.title
    rows, cols = grid.raster.shape
    await ctx.require(
        "fetched_entry",
        {"label": label, "raster": f"{rows:,} x {cols:,} cells", "provider": source.connector},
    )
    written = await ctx.write_entry(
        kind="rasters", data=grid.raster, label=label, sources=(provenance,)
    )
    ctx.append(
        [
            FetchMade(
                tool="fetch",
                provider=source.connector,
                request=_request(arguments),
                entry_id=written.entry_id,
                sources=(provenance,),
            )
        ]
    )
    out: dict[str, Any] = {
        "entry_id": written.entry_id,
        "raster": written.digest.get("raster"),
        "value_unit": grid.unit,
        "period": grid.period,
        "licence": provenance.licence,
        "evidence": provenance.evidence,
        "next": "analyse_data(rasters_entry_ids=[...], ...) reads it: zonal_stats(raster, "
        "zones) mints a figure per zone, load(id, like=other, method=...) puts it on "
        "another grid, cell_area(raster) gives each cell's m²",
    }
    if grid.recipe:
        out["recipe"] = grid.recipe
    if grid.notes:
        out["notes"] = list(grid.notes)
    return ToolResult(model=out)


def _minted(ctx: ToolContext, arguments: FetchInput, cell: Cell) -> ToolResult:
    value, _ = ctx.workspace.ledger.mint_value(
        label=_label(cell.source, cell.place.name),
        value=cell.value,
        unit=cell.unit,
        period=cell.period,
        sources=(cell.provenance,),
    )
    ctx.append(
        [
            FetchMade(
                tool="fetch",
                provider=cell.source.connector,
                request=_request(arguments),
                sources=(cell.provenance,),
            ),
            ValueMinted(value=value),
        ]
    )
    figure = {
        "id": value.id,
        "label": value.label,
        "value": value.value,
        "unit": value.unit,
        "period": value.period,
        "unit_id": cell.place.id,
        "source": cell.source.id,
        "licence": cell.source.licence,
        "retrieved_at": cell.provenance.retrieved_at.isoformat(),
    }
    out: dict[str, Any] = {"figures": [figure]}
    notes = list(cell.notes)
    if value.period == "not stated":
        notes.append(f"{cell.source.id} states no period for this figure: say so when you cite it")
    if notes:
        out["notes"] = notes
    return ToolResult(model=out)


async def _landed(
    ctx: ToolContext, arguments: FetchInput, source: Source, table: LandedTable
) -> ToolResult:
    if not table.rows:
        reason = f"{source.id} has no rows for {arguments.filters!r}"
        _missed(ctx, arguments, source.connector, reason, "not_found")
        return ToolResult(model={"miss": reason, "code": "not_found", "notes": list(table.notes)})
    label = arguments.label or f"{source.title} ({table.provenance.period})"
    await ctx.require(
        "fetched_entry", {"label": label, "features": table.rows, "provider": source.connector}
    )
    written = await ctx.write_entry(
        kind="tables", data=table.data, label=label, sources=(table.provenance,)
    )
    ctx.append(
        [
            FetchMade(
                tool="fetch",
                provider=source.connector,
                request=_request(arguments),
                entry_id=written.entry_id,
                sources=(table.provenance,),
            )
        ]
    )
    out: dict[str, Any] = {
        "entry_id": written.entry_id,
        "rows": table.rows,
        "units": table.units,
        "periods": list(table.periods[:5])
        + ([f"... {len(table.periods) - 5} more"] if len(table.periods) > 5 else []),
        "period": table.provenance.period,
        "columns": ["unit_id", "unit_name", "unit_code", "period", "value"]
        + [c.name for c in source.profile.columns if c.name not in ("value", "period")],
        "value_unit": source.profile.unit,
        "licence": source.licence,
        "digest": written.digest,
        "next": "analyse_data(tables_entry_ids=[...]) reads it; mint each figure you "
        "present with mint.value",
    }
    if table.notes:
        out["notes"] = list(table.notes)
    return ToolResult(model=out)


def _listed(
    ctx: ToolContext, arguments: FetchInput, source: Source, listing: Listing
) -> ToolResult:
    # A catalogue's listing is a menu, not data: nothing is minted or landed, and each
    # dataset says its own licence (the portal's row says only that it varies).
    ctx.append([FetchMade(tool="fetch", provider=source.connector, request=_request(arguments))])
    datasets = [
        {
            "dataset": d.name,
            "title": d.title,
            "organisation": d.organisation,
            "licence": d.licence_title or d.licence_id or "not stated",
            "modified": d.metadata_modified,
            "resources": [
                {"resource": r.id, "name": r.name, "format": r.format, "size": r.size}
                for r in d.resources[:10]
            ],
        }
        for d in listing.datasets
    ]
    out: dict[str, Any] = {
        "source_id": source.id,
        "count": listing.count,
        "shown": len(datasets),
        "datasets": datasets,
        "next": listing.next
        or "fetch again with filters={'dataset': ..., 'resource': ...} to land a file",
    }
    if listing.notes:
        out["notes"] = list(listing.notes)
    return ToolResult(model=out)


async def _downloaded(
    ctx: ToolContext, arguments: FetchInput, source: Source, download: Download
) -> ToolResult:
    # A portal's file is hostile bytes: judged by the confined intake, never parsed here.
    try:
        layer = await aload(download.data, label=download.name)
    except IntakeError as exc:
        _missed(ctx, arguments, source.connector, str(exc), "malformed")
        return ToolResult(model={"miss": str(exc), "code": "malformed"}, failed=True)
    provenance = Provenance(
        source_id=source.id,
        title=download.title[:500],
        publisher=(download.publisher or source.publisher)[:200],
        licence=(download.licence or "not stated")[:200],
        url=download.url,
        retrieved_at=download.retrieved_at,
        evidence=source.evidence,
    )
    label = arguments.label or download.title
    await ctx.require(
        "fetched_entry",
        {"label": label, "features": len(layer.data["features"]), "provider": source.connector},
    )
    written = await ctx.write_entry(
        kind="byod", data=layer.data, label=label, sources=(provenance,)
    )
    ctx.append(
        [
            FetchMade(
                tool="fetch",
                provider=source.connector,
                request=_request(arguments),
                entry_id=written.entry_id,
                sources=(provenance,),
            )
        ]
    )
    return ToolResult(
        model={
            "entry_id": written.entry_id,
            "licence": provenance.licence,
            "profile": layer.profile(),
            "digest": written.digest,
        }
    )


FETCH: Final = ToolEntry(
    description=(
        "Read one figure or a table from a source. cell=True reads ONE number for one unit "
        "(filters.unit, a spine id from resolve_place) and one period (filters.period: "
        "2020 or 'latest'); it is minted as a figure with its source, licence and period, "
        "or comes back as a miss naming what the narrowing reached, never a guess. "
        "cell=False lands the rows as a table entry (one feature per row, joined to the "
        "place spine by unit_id) for analyse_data to chart or compute."
    ),
    input_schema=FetchInput,
    execute=_fetch,
    classification_prompt="Read a figure or a table from a source find_sources returned.",
    tags=("data", "sources"),
    examples=(
        "fetch(source_id='un-wpp-2024-population', filters={'unit': 'country:FIN', "
        "'period': 'latest'}, cell=True)",
    ),
    example_prompts=("Population of Helsinki against Espoo",),
    related_tools=("find_sources", "resolve_place", "analyse_data", "present_figure"),
    effects=frozenset({"fetched_entry", "network"}),
)

#: The open-data tools by name.
OPEN_DATA_TOOLS: Final = {
    "find_sources": FIND_SOURCES,
    "resolve_place": RESOLVE_PLACE,
    "fetch": FETCH,
}
