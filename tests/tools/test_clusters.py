"""cluster_incidents: incidents grouped by distance (geo.cluster), each group drawn as an area."""

from __future__ import annotations

from typing import Any

import pytest

from geomint.tools import DEFAULT_TOOLS, ToolContext, ToolError, ToolResult
from geomint.tools._kinds import DataScope

from .helpers import cafes, call, collection, point, seed

pytestmark = pytest.mark.anyio


def incidents() -> dict[str, Any]:
    """Three incidents about 50 m apart, two more together 1 km east, one far away."""
    return collection(
        point(24.9400, 60.1700, id="i1", category="jam"),
        point(24.9409, 60.1700, id="i2", category="jam"),  # ~50 m east of i1
        point(24.9400, 60.1704, id="i3", category="jam"),  # ~45 m north of i1
        point(24.9580, 60.1700, id="i4", category="roadworks"),
        point(24.9589, 60.1700, id="i5", category="roadworks"),
        point(25.1000, 60.2500, id="i6", category="accident"),  # ~11 km away
    )


async def cluster(ctx: ToolContext, **arguments: Any) -> ToolResult:
    result = await call(
        ctx,
        "cluster_incidents",
        {"incidents_entry_ids": ["incidents-1"], "eps_m": 200, **arguments},
    )
    assert isinstance(result, ToolResult)
    return result


async def test_clusters_are_found_and_drawn_as_hulls(ctx: ToolContext) -> None:
    await seed(ctx, "incidents", incidents())
    result = await cluster(ctx)

    assert not result.failed
    assert result.model["cluster_count"] == 2
    assert [c["members"] for c in result.model["clusters"]] == [3, 2]
    assert result.model["noise"] == 1
    assert result.model["stable_ids"] is False
    assert result.model["entry_id"] == "geometries-1"
    hulls = ctx.entry_data("geometries-1")["features"]
    assert [h["geometry"]["type"] for h in hulls] == ["Polygon", "Polygon"]  # a pair: an area too
    assert [h["properties"]["members"] for h in hulls] == [3, 2]
    record = ctx.refresh().analyses[result.model["analysis_id"]]
    assert record.tool == "cluster_incidents"
    assert record.name is not None
    assert record.name.startswith("clusters-")


async def test_the_same_recipe_keeps_its_cluster_ids(ctx: ToolContext) -> None:
    await seed(ctx, "incidents", incidents())
    first = await cluster(ctx)
    second = await cluster(ctx)

    assert second.model["stable_ids"] is True
    assert [c["id"] for c in second.model["clusters"]] == [c["id"] for c in first.model["clusters"]]
    assert second.model["entry_id"] == "geometries-2"


async def test_code_can_filter_incidents_before_clustering(ctx: ToolContext) -> None:
    await seed(ctx, "incidents", incidents())
    code = "return [f for f in incidents['features'] if f['properties']['category'] == 'jam']"
    result = await cluster(ctx, code=code)

    assert result.model["cluster_count"] == 1
    assert result.model["clusters"][0]["members"] == 3
    assert result.model["noise"] == 0


async def test_cluster_code_must_return_features(ctx: ToolContext) -> None:
    await seed(ctx, "incidents", incidents())
    result = await cluster(ctx, code="return 5")
    assert result.failed
    assert "the cluster code returned int" in result.model["error"]
    assert ctx.refresh().geometries == ()


async def test_no_clusters_write_no_entry(ctx: ToolContext) -> None:
    await seed(ctx, "incidents", collection(point(24.9, 60.1), point(25.9, 61.1)))
    result = await call(ctx, "cluster_incidents", {"incidents_entry_ids": ["incidents-1"]})
    assert result.model["cluster_count"] == 0 and result.model["entry_id"] is None
    assert set(ctx.refresh().entries) == {"incidents-1"}


async def test_cluster_incidents_refuses_other_kinds(ctx: ToolContext) -> None:
    await seed(ctx, "places", cafes())
    await seed(ctx, "incidents", incidents())
    with pytest.raises(ToolError) as caught:
        await call(ctx, "cluster_incidents", {"incidents_entry_ids": ["places-1", "incidents-1"]})
    assert caught.value.message == "places-1 are not incidents entries"
    with pytest.raises(ToolError) as unknown:
        await call(ctx, "cluster_incidents", {"incidents_entry_ids": ["incidents-7"]})
    assert unknown.value.hint == "the incidents entries are incidents-1"


# -- clustering from code, and pre_filter ---------------------------------------------------


def _jams_and_more() -> dict[str, Any]:
    """The incidents, and four more together far north: the largest group of them all."""
    more = [point(24.9300, 60.2000 + i * 0.0004, id=f"n{i}", category="jam") for i in range(4)]
    return collection(*incidents()["features"], *more)


async def test_without_code_the_tool_runs_geo_cluster_in_the_sandbox(ctx: ToolContext) -> None:
    await seed(ctx, "incidents", incidents())
    result = await cluster(ctx)
    record = ctx.refresh().analyses[result.model["analysis_id"]]
    assert record.code == (
        "return geo.cluster(incidents, eps_m=200.0, min_members=2, max_clusters=None, "
        "previous=previous)"
    )


def test_the_schema_takes_pre_filter_and_says_what_it_is() -> None:
    schema = DEFAULT_TOOLS["cluster_incidents"].input_schema
    arguments = schema.model_validate(
        {"incidents_entry_ids": ["incidents-1"], "pre_filter": "f['properties']['delay_s'] > 60"}
    )
    assert arguments.pre_filter == "f['properties']['delay_s'] > 60"  # type: ignore[attr-defined]
    described = schema.model_json_schema()["properties"]["pre_filter"]["description"]
    assert described == (
        "Cluster only the incidents for which this Python expression over one incident `f` "
        "is true, e.g. \"f['properties']['magnitude'] >= 3\"; the others count as skipped. "
        "Not with code (filter in the code there)."
    )


async def test_pre_filter_clusters_only_the_incidents_it_holds_for(ctx: ToolContext) -> None:
    await seed(ctx, "incidents", incidents())
    result = await cluster(ctx, pre_filter="f['properties']['category'] == 'jam'")

    assert not result.failed
    assert result.model == {
        "analysis_id": "a1",
        "entry_id": "geometries-1",
        "clusters": [{"id": 0, "members": 3, "centroid": [24.9403, 60.170133]}],
        "cluster_count": 1,
        "noise": 0,
        "skipped": 3,
        "stable_ids": False,
        "notes": [
            "a cluster grows from each incident with at least 2 incidents (itself included) "
            "within 200 m, through those neighbours (DBSCAN, distances between whole "
            "geometries); each is drawn as the area within 100 m of its members' convex hull, "
            "so it reaches past its outermost incidents"
        ],
    }
    record = ctx.refresh().analyses["a1"]
    assert record.code == (
        "return geo.cluster(incidents, eps_m=200.0, min_members=2, max_clusters=None, "
        "pre_filter=(lambda f: (f['properties']['category'] == 'jam')), previous=previous)"
    )


async def test_pre_filter_may_be_a_lambda_of_its_own(ctx: ToolContext) -> None:
    await seed(ctx, "incidents", incidents())
    result = await cluster(
        ctx, pre_filter="lambda incident: incident['properties']['category'] != 'accident'"
    )
    assert [c["members"] for c in result.model["clusters"]] == [3, 2]
    assert (result.model["noise"], result.model["skipped"]) == (0, 1)


@pytest.mark.parametrize(
    ("pre_filter", "message"),
    [
        (
            "f['properties']['category'] ==",
            "pre_filter \"f['properties']['category'] ==\" is not one Python expression "
            "(invalid syntax)",
        ),
        ("x = 1", "pre_filter 'x = 1' is not one Python expression (invalid syntax)"),
        ("lambda a, b: True", "pre_filter 'lambda a, b: True' must take one incident"),
    ],
)
async def test_a_pre_filter_that_is_not_one_expression_is_refused(
    ctx: ToolContext, pre_filter: str, message: str
) -> None:
    await seed(ctx, "incidents", incidents())
    with pytest.raises(ToolError) as caught:
        await cluster(ctx, pre_filter=pre_filter)
    assert caught.value.message == message
    assert caught.value.hint == (
        "write one Python expression over one incident `f`, e.g. "
        "\"f['properties']['magnitude'] >= 3\" or \"f['properties']['category'] == 'jam'\""
    )
    assert ctx.refresh().analyses == {}  # nothing ran


async def test_a_pre_filter_that_fails_says_where_and_why(ctx: ToolContext) -> None:
    await seed(ctx, "incidents", incidents())
    result = await cluster(ctx, pre_filter="f['properties']['magnitude'] >= 3")
    assert result.failed
    assert result.model["error"] == (
        "KeyError: 'magnitude' (line 1: return geo.cluster(incidents, eps_m=200.0, "
        "min_members=2, max_clusters=None, pre_filter=(lambda f: "
        "(f['properties']['magnitude'] >= 3)), previous=previous))"
    )
    assert result.model["hint"] == (
        "Not every feature has the property 'magnitude'. Properties seen: id, category. "
        "Read optional keys with `f['properties'].get('magnitude')`."
    )


async def test_pre_filter_and_code_together_are_refused_with_the_code_to_write(
    ctx: ToolContext,
) -> None:
    await seed(ctx, "incidents", incidents())
    with pytest.raises(ToolError) as caught:
        await cluster(ctx, code="return incidents", pre_filter="f['properties']['delay_s'] > 60")
    assert caught.value.message == (
        "pre_filter and code were both given; pre_filter filters the incidents of a call "
        "without code"
    )
    assert caught.value.hint == (
        "drop pre_filter and filter in the code, e.g. return geo.cluster(incidents, "
        "pre_filter=(lambda f: (f['properties']['delay_s'] > 60)), previous=previous); "
        "or drop code"
    )


async def test_code_can_return_a_clustering_it_made(ctx: ToolContext) -> None:
    await seed(ctx, "incidents", incidents())
    code = (
        "jams = [f for f in incidents['features'] if f['properties']['category'] != 'accident']\n"
        "return geo.cluster(jams, eps_m=60, min_members=1, previous=previous)"
    )
    result = await call(
        ctx, "cluster_incidents", {"incidents_entry_ids": ["incidents-1"], "code": code}
    )

    assert not result.failed
    # At 60 m, i2 (~50 m east of i1) joins i1 and i3 (~45 m north of i1); i4 and i5 are
    # ~50 m apart; min_members=1 would make the loner a cluster, but it was left out.
    assert [c["members"] for c in result.model["clusters"]] == [3, 2]
    assert (result.model["noise"], result.model["skipped"]) == (0, 0)
    hulls = ctx.entry_data(result.model["entry_id"])["features"]
    assert [h["geometry"]["type"] for h in hulls] == ["Polygon", "Polygon"]
    assert [h["properties"] for h in hulls] == [
        {"cluster": 0, "members": 3},
        {"cluster": 1, "members": 2},
    ]


async def test_the_notes_say_how_the_clusters_were_made_and_drawn(ctx: ToolContext) -> None:
    await seed(ctx, "incidents", incidents())
    kept = await cluster(ctx, max_clusters=1)
    assert kept.model["notes"][1] == (
        "only the 1 largest clusters are kept; incidents of the others count as noise"
    )
    assert kept.model["noise"] == 3
    by_code = await cluster(ctx, code="return geo.cluster(incidents, eps_m=300)")
    assert by_code.model["notes"] == [
        "the clusters are those the code's geo.cluster call made; each is drawn as its hull, "
        "the area within eps_m / 2 of its members' convex hull, so it reaches past its "
        "outermost incidents"
    ]
    features = await cluster(ctx, code="return incidents['features']", eps_m=150)
    assert features.model["notes"][0].startswith(
        "a cluster grows from each incident with at least 2 incidents (itself included) "
        "within 150 m"
    )


async def test_ids_of_a_clustering_code_made_stay_stable(ctx: ToolContext) -> None:
    # The code does not pass `previous`: the tool matches the ids to the last run itself.
    await seed(ctx, "incidents", incidents())
    code = "return geo.cluster(incidents, eps_m=200)"
    first = await cluster(ctx, code=code)
    await seed(ctx, "incidents", _jams_and_more(), entry_id="incidents-1")
    later = await cluster(ctx, code=code)

    assert [(c["id"], c["members"]) for c in first.model["clusters"]] == [(0, 3), (1, 2)]
    # The new group is the largest, so it comes first, under a fresh id.
    assert [(c["id"], c["members"]) for c in later.model["clusters"]] == [(2, 4), (0, 3), (1, 2)]
    assert later.model["stable_ids"] is True


async def test_previous_in_code_is_the_last_clustering_of_the_same_call(
    ctx: ToolContext,
) -> None:
    await seed(ctx, "incidents", incidents())
    code = (
        "mint.value(0 if previous is None else len(previous['clusters']), 'clusters before')\n"
        "return geo.cluster(incidents, eps_m=200, previous=previous)"
    )
    await cluster(ctx, code=code)
    await cluster(ctx, code=code)
    assert [v.value for v in ctx.refresh().ledger.values] == [0, 2]


async def test_a_clustering_that_does_not_read_is_a_failed_result(ctx: ToolContext) -> None:
    await seed(ctx, "incidents", incidents())
    result = await cluster(ctx, code="return {'clusters': [{'id': 1}]}")
    assert result.failed
    assert result.model["error"] == (
        "the cluster code returned a clustering that does not read: clusters[0] lacks "
        "members, keys, centroid, bbox, hull; pass what cluster() returned, unchanged"
    )
    assert result.model["hint"] == (
        "return geo.cluster(...)'s result unchanged, or the features to cluster"
    )


async def test_the_clusters_alone_are_not_a_clustering(ctx: ToolContext) -> None:
    await seed(ctx, "incidents", incidents())
    result = await cluster(ctx, code="return geo.cluster(incidents, eps_m=200).clusters")
    assert result.failed
    assert result.model["error"] == (
        "the cluster code returned a list of clusters, not the features to cluster or a "
        "whole clustering"
    )
    assert result.model["hint"] == "return geo.cluster(...)'s whole result, not its .clusters"


async def test_a_bare_cluster_call_is_pointed_to_geo_cluster(ctx: ToolContext) -> None:
    await seed(ctx, "incidents", incidents())
    result = await cluster(ctx, code="return cluster(incidents)")
    assert result.model["error"] == (
        "NameError: name 'cluster' is not defined (line 1: return cluster(incidents))"
    )
    assert result.model["hint"].startswith(
        "`cluster` is not defined. Did you mean `geo.cluster`? The names you have: `places`, "
    )


async def test_analyse_data_code_can_cluster_and_read_each_cluster(ctx: ToolContext) -> None:
    await seed(ctx, "incidents", incidents())
    code = (
        "found = geo.cluster(incidents, eps_m=200, "
        "pre_filter=lambda f: f['properties']['category'] == 'jam')\n"
        "(jam,) = found.clusters\n"
        "return {'members': jam.members, 'keys': jam.keys, 'hull': jam.hull.geom_type, "
        "'m2': round(geo.area_m2(jam.hull), -2), 'skipped': found.skipped}"
    )
    result = await call(
        ctx,
        "analyse_data",
        {"incidents_entry_ids": ["incidents-1"], "name": "jams", "code": code},
    )
    assert result.model["result"] == {
        "members": [0, 1, 2],
        "keys": ["i1", "i2", "i3"],
        "hull": "Polygon",
        "m2": 48500.0,  # the ~50 m by ~45 m triangle, 100 m (eps_m / 2) wider all round
        "skipped": [3, 4, 5],
    }


def test_the_model_reads_how_to_call_geo_cluster_and_what_it_returns() -> None:
    scoped = DEFAULT_TOOLS["analyse_data"].for_scope(DataScope(kinds=["incidents"]))
    assert (
        "`geo.cluster(features, eps_m=250, min_members=2, max_clusters=None, pre_filter=None, "
        "previous=None)` groups them by distance in metres (DBSCAN) and returns `.clusters` "
        "(largest first, each with `.id`, `.members` (indices into features), `.keys`, "
        "`.centroid` (lng, lat), `.bbox` and `.hull`, a shapely Polygon), `.noise` and "
        "`.skipped` (indices); `pre_filter` is a function of one Feature, true for those to "
        "cluster; `previous` is an earlier result, to keep ids."
    ) in scoped.description
    assert DEFAULT_TOOLS["cluster_incidents"].description == (
        "Group traffic incidents that lie within eps_m metres of each other (DBSCAN over "
        "whole geometries) and draw each group as an area. pre_filter keeps only the "
        "incidents an expression over one incident `f` is true for. Optional code filters "
        "or combines `incidents` and returns the features to cluster, or "
        "`geo.cluster(features, eps_m=250, min_members=2, max_clusters=None, "
        "pre_filter=lambda f: ..., previous=previous)`, whose clusters each have id, "
        "members (indices into features), keys, centroid [lng, lat], bbox and hull. "
        "Cluster ids stay stable across calls with the same arguments."
    )
