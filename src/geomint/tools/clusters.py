"""``cluster_incidents``: traffic incidents grouped by distance, each group drawn as an area.

The clustering itself is :func:`geomint.geo.cluster`, the same function code calls as
``geo.cluster(...)``. Without code, the tool writes the body that calls it (with the
call's ``eps_m``, ``min_members``, ``max_clusters`` and ``pre_filter``), so the run's
record shows exactly what was computed, and the model can copy it. Code may instead return
the features to cluster (the host clusters them with the call's arguments) or a
clustering it made with ``geo.cluster``. Either way the ids are matched to the last run of
the same call, so a cluster that persists keeps its id and colour.
"""

from __future__ import annotations

import ast
import hashlib
import json
from collections.abc import Mapping
from typing import Any, Final

import shapely
from pydantic import BaseModel, ConfigDict, Field

from geomint import geo
from geomint.tools._analysis import CodeCall, run_code, sources_of, stored_result
from geomint.tools.context import ToolContext
from geomint.tools.registry import ToolEntry
from geomint.tools.results import ToolError, ToolResult

__all__ = ["CLUSTER_INCIDENTS", "ClusterInput"]

#: Incidents the host clusters when code returned features (it runs in the host).
_MAX_INCIDENTS: Final = 50_000
_PRE_FILTER_HINT: Final = (
    "write one Python expression over one incident `f`, e.g. "
    "\"f['properties']['magnitude'] >= 3\" or \"f['properties']['category'] == 'jam'\""
)


class ClusterInput(BaseModel):
    """Arguments of ``cluster_incidents``."""

    model_config = ConfigDict(extra="forbid")

    incidents_entry_ids: list[str] = Field(min_length=1)
    code: str | None = Field(
        default=None,
        max_length=20_000,
        description="Optional body over `incidents` and `previous` (this call's last "
        "clustering, None at first) returning the features to cluster (a FeatureCollection "
        "or a list of Features) or geo.cluster(...)'s result.",
    )
    eps_m: float = Field(default=250.0, gt=0, le=50_000, description="Neighbourhood, metres.")
    min_members: int = Field(default=2, ge=1, le=1_000)
    max_clusters: int | None = Field(default=None, ge=1, le=1_000)
    pre_filter: str | None = Field(
        default=None,
        min_length=1,
        max_length=2_000,
        description="Cluster only the incidents for which this Python expression over one "
        "incident `f` is true, e.g. \"f['properties']['magnitude'] >= 3\"; the others "
        "count as skipped. Not with code (filter in the code there).",
    )


async def _cluster(arguments: ClusterInput, ctx: ToolContext) -> ToolResult:
    ids = arguments.incidents_entry_ids
    wrong = [i for i in ids if not i.startswith("incidents-")]
    if wrong:
        raise ToolError(
            f"{', '.join(wrong)} are not incidents entries",
            hint="cluster_incidents reads incidents-<n> entries",
        )
    if arguments.code is not None and arguments.pre_filter is not None:
        raise ToolError(
            "pre_filter and code were both given; pre_filter filters the incidents of a "
            "call without code",
            hint="drop pre_filter and filter in the code, e.g. return geo.cluster(incidents, "
            f"pre_filter={_pre_filter(arguments.pre_filter)}, previous=previous); or drop code",
        )
    code = arguments.code or _body(arguments)
    recipe = _recipe_name(arguments)
    previous_record = ctx.workspace.recipe(recipe)
    previous = _previous(stored_result(ctx, previous_record)) if previous_record else None
    found: dict[str, Any] = {}

    def judge(value: Any) -> dict[str, Any]:
        # Runs on the code's result, so the clustering (not the features) is what the run
        # records, and what `previous` reads next time the same call runs.
        found.update(clustering=_clustering(value, arguments, previous))
        found.update(made_by_code=arguments.code is not None and _is_clustering(value))
        return _recorded(found["clustering"])

    run = await run_code(
        ctx,
        CodeCall(
            tool="cluster_incidents",
            code=code,
            ids_by_kind={"incidents": ids},
            name=recipe,
            extra_inputs={"previous": previous},
            check=judge,
        ),
    )
    if not run.ok:
        return ToolResult(model=run.for_model(ctx.settings.digest_chars), failed=True)
    clustering: geo.Clustering = found["clustering"]
    hulls, rows = _hulls(clustering)
    written = None
    if hulls:
        await ctx.require(
            "code_entry", {"label": f"incident clusters ({len(rows)})", "features": len(hulls)}
        )
        written = await ctx.write_entry(
            kind="geometries",
            data={"type": "FeatureCollection", "features": hulls},
            label=f"incident clusters ({len(rows)})",
            sources=sources_of(ctx, run.record.inputs),
            derived_from=run.record.inputs,
        )
    return ToolResult(
        model={
            "analysis_id": run.record.analysis_id,
            "entry_id": written.entry_id if written else None,
            "clusters": rows[:50],
            "cluster_count": len(rows),
            "noise": len(clustering.noise),
            "skipped": len(clustering.skipped),
            "stable_ids": previous is not None,
            "notes": _notes(arguments, made_by_code=found["made_by_code"]),
        }
    )


def _notes(arguments: ClusterInput, *, made_by_code: bool) -> list[str]:
    """How the clusters were made and drawn."""
    drawn = "so it reaches past its outermost incidents"
    if made_by_code:
        return [
            "the clusters are those the code's geo.cluster call made; each is drawn as its "
            f"hull, the area within eps_m / 2 of its members' convex hull, {drawn}"
        ]
    eps = arguments.eps_m
    notes = [
        f"a cluster grows from each incident with at least {arguments.min_members} incidents "
        f"(itself included) within {eps:g} m, through those neighbours (DBSCAN, distances "
        f"between whole geometries); each is drawn as the area within {eps / 2:g} m of its "
        f"members' convex hull, {drawn}"
    ]
    if arguments.max_clusters is not None:
        notes.append(
            f"only the {arguments.max_clusters} largest clusters are kept; incidents of the "
            "others count as noise"
        )
    return notes


def _is_clustering(value: Any) -> bool:
    return isinstance(value, Mapping) and "clusters" in value


def _body(arguments: ClusterInput) -> str:
    """The body a call without code runs: ``geo.cluster`` with the call's arguments."""
    keep = f", pre_filter={_pre_filter(arguments.pre_filter)}" if arguments.pre_filter else ""
    return (
        f"return geo.cluster(incidents, eps_m={arguments.eps_m!r}, "
        f"min_members={arguments.min_members!r}, max_clusters={arguments.max_clusters!r}"
        f"{keep}, previous=previous)"
    )


def _pre_filter(text: str) -> str:
    """``pre_filter`` as a lambda to put in the body; the sandbox checks and runs it.

    The text is only parsed here, never evaluated: Gate 1 reads the body it ends up in.
    """
    text = text.strip()
    try:
        tree = ast.parse(text, mode="eval")
    except (SyntaxError, ValueError, RecursionError, MemoryError) as exc:
        reason = exc.msg if isinstance(exc, SyntaxError) else type(exc).__name__
        raise ToolError(
            f"pre_filter {text[:200]!r} is not one Python expression ({reason})",
            hint=_PRE_FILTER_HINT,
        ) from None
    expression = tree.body
    if isinstance(expression, ast.Lambda):
        args = expression.args
        if len(args.args) != 1 or args.vararg or args.kwonlyargs or args.kwarg:
            raise ToolError(
                f"pre_filter {text[:200]!r} must take one incident", hint=_PRE_FILTER_HINT
            )
        return f"({ast.unparse(expression)})"
    return f"(lambda f: ({ast.unparse(expression)}))"


def _clustering(
    value: Any, arguments: ClusterInput, previous: Mapping[str, Any] | None
) -> geo.Clustering:
    """The code's result as a clustering: one it made, or the features it returned, clustered."""
    if _is_clustering(value):
        try:
            return geo.Clustering.from_json(value).with_ids_from(previous)
        except ValueError as exc:
            raise ToolError(
                f"the cluster code returned a clustering that does not read: {exc}",
                hint="return geo.cluster(...)'s result unchanged, or the features to cluster",
            ) from None
    features = _features(value)
    if features and all(isinstance(f, Mapping) and "members" in f for f in features):
        raise ToolError(
            "the cluster code returned a list of clusters, not the features to cluster or "
            "a whole clustering",
            hint="return geo.cluster(...)'s whole result, not its .clusters",
        )
    if len(features) > _MAX_INCIDENTS:
        raise ToolError(
            f"{len(features):,} incidents to cluster; at most {_MAX_INCIDENTS:,}",
            hint="filter them first in code (by category, magnitude or area)",
        )
    try:
        return geo.cluster(
            features,
            eps_m=arguments.eps_m,
            min_members=arguments.min_members,
            max_clusters=arguments.max_clusters,
            previous=previous,
        )
    except ValueError as exc:
        raise ToolError(f"clustering failed: {exc}") from None


def _features(value: Any) -> list[Any]:
    if isinstance(value, Mapping) and value.get("type") == "FeatureCollection":
        return list(value.get("features") or [])
    if isinstance(value, list):
        return value
    raise ToolError(
        f"the cluster code returned {type(value).__name__}; return a FeatureCollection or "
        "a list of Features, or geo.cluster(...)'s result"
    )


def _recorded(clustering: geo.Clustering) -> dict[str, Any]:
    """What the run keeps of a clustering: each cluster without its hull (the hulls are
    the entry it writes), enough to be the next run's ``previous``."""
    return {
        "clusters": [
            {
                "id": c.id,
                "members": list(c.members),
                "keys": [_key(k) for k in c.keys],
                "centroid": list(c.centroid),
                "bbox": list(c.bbox),
            }
            for c in clustering.clusters
        ],
        "noise": len(clustering.noise),
        "skipped": len(clustering.skipped),
    }


def _hulls(clustering: geo.Clustering) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """Each cluster as an area (its hull) and a row for the model."""
    hulls, rows = [], []
    for group in clustering.clusters:
        hulls.append(
            {
                "type": "Feature",
                "geometry": shapely.geometry.mapping(group.hull),
                "properties": {"cluster": group.id, "members": len(group.members)},
            }
        )
        rows.append(
            {
                "id": group.id,
                "members": len(group.members),
                "centroid": [round(c, 6) for c in group.centroid],
            }
        )
    return hulls, rows


def _previous(result: Any) -> dict[str, Any] | None:
    """The last run's clustering, as code reads it and ``geo.cluster`` takes it back."""
    if isinstance(result, Mapping) and isinstance(result.get("clusters"), list):
        return dict(result)
    return None


def _recipe_name(arguments: ClusterInput) -> str:
    text = json.dumps(
        [
            sorted(arguments.incidents_entry_ids),
            arguments.code,
            arguments.eps_m,
            arguments.min_members,
            arguments.max_clusters,
            arguments.pre_filter,
        ]
    )
    return "clusters-" + hashlib.sha256(text.encode()).hexdigest()[:12]


def _key(key: Any) -> Any:
    return key if isinstance(key, str | int | float) else json.dumps(key, sort_keys=True)


CLUSTER_INCIDENTS: Final = ToolEntry(
    description=(
        "Group traffic incidents that lie within eps_m metres of each other (DBSCAN over "
        "whole geometries) and draw each group as an area. pre_filter keeps only the "
        "incidents an expression over one incident `f` is true for. Optional code filters "
        "or combines `incidents` and returns the features to cluster, or "
        "`geo.cluster(features, eps_m=250, min_members=2, max_clusters=None, "
        "pre_filter=lambda f: ..., previous=previous)`, whose clusters each have id, "
        "members (indices into features), keys, centroid [lng, lat], bbox and hull. "
        "Cluster ids stay stable across calls with the same arguments."
    ),
    input_schema=ClusterInput,
    execute=_cluster,
    effects=frozenset({"runs_code", "code_entry"}),
    # It reads incidents entries, and only a traffic provider writes them: offline it
    # could never run, so it is not offered (help used to list it as something it can do).
    needs=frozenset({"traffic"}),
    classification_prompt="Group traffic incidents into hotspots or clusters.",
    tags=("traffic", "data"),
    example_prompts=("Where are the incident hotspots?",),
    related_tools=("analyse_data",),
)
