"""help (what the registry offers, by tag) and the digests a model reads instead of bytes."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest

import geomint.geo
from geomint.providers import OfflineProvider, Providers
from geomint.state import ENTRY_KINDS
from geomint.tools import DEFAULT_TOOLS, ToolContext, ToolError, ToolSettings, help_entries
from geomint.tools._digest import cut_to_budget, entry_digest
from geomint.tools._kinds import DataScope
from geomint.tools.help import HELP

from .conftest import MakeCtx
from .helpers import call, collection, point, square

# -- help -----------------------------------------------------------------------------


@pytest.fixture
def helped(make_ctx: MakeCtx) -> ToolContext:
    return make_ctx(registry_help=lambda tag: help_entries(DEFAULT_TOOLS, tag))


@pytest.mark.anyio
async def test_help_lists_every_tool(helped: ToolContext) -> None:
    out = await call(helped, "help", {})
    names = [t["name"] for t in out["tools"]]
    assert names == list(DEFAULT_TOOLS)
    (analyse,) = [t for t in out["tools"] if t["name"] == "analyse_data"]
    assert analyse["does"].startswith("Run Python over copies of entries")
    assert "\n" not in analyse["does"] and len(analyse["does"]) <= 80
    assert "data" in out["tags"] and "help(tag=" in out["more"]
    # The whole registry fits what help's result may tell the model.
    assert len(json.dumps(out, separators=(",", ":"))) <= (HELP.result_chars or 0)


@pytest.mark.anyio
async def test_help_says_where_the_providers_have_data(make_ctx: MakeCtx) -> None:
    # A turn asking what the agent can do is offered help alone, not the place tools whose
    # descriptions carry their coverage: help says it, or the model promises the world.
    offline = OfflineProvider()
    helped = make_ctx(
        registry_help=lambda tag: help_entries(DEFAULT_TOOLS, tag),
        providers=Providers.single(offline),
    )
    out = await call(helped, "help", {})
    assert out["coverage"] == {"offline": offline.coverage}
    assert "central Helsinki" in out["coverage"]["offline"]
    assert len(json.dumps(out, separators=(",", ":"))) <= (HELP.result_chars or 0)
    unconfigured = make_ctx(registry_help=lambda tag: help_entries(DEFAULT_TOOLS, tag))
    assert "coverage" not in await call(unconfigured, "help", {})


@pytest.mark.anyio
async def test_help_with_a_tag_gives_examples(helped: ToolContext) -> None:
    out = await call(helped, "help", {"tag": "analysis"})
    (analyse,) = [t for t in out["tools"] if t["name"] == "analyse_data"]
    assert len(analyse["examples"]) <= 2
    assert "Bar chart of these places by category" in analyse["example_prompts"]


@pytest.mark.anyio
async def test_help_filters_by_tag(helped: ToolContext) -> None:
    out = await call(helped, "help", {"tag": "recall"})
    assert [t["name"] for t in out["tools"]] == [
        "recall_places",
        "recall_routes",
        "recall_ranges",
        "recall_geometries",
        "recall_byod",
        "recall_state",
    ]
    assert all("recall" in t["tags"] for t in out["tools"])


@pytest.mark.anyio
async def test_help_refuses_an_unknown_tag_naming_the_tags(helped: ToolContext) -> None:
    with pytest.raises(ToolError) as caught:
        await call(helped, "help", {"tag": "routing"})
    assert caught.value.message.startswith("no tool is tagged 'routing'; the tags are ")
    for tag in ("data", "map", "recall", "figures", "byod", "monitor"):
        assert tag in caught.value.message


@pytest.mark.anyio
async def test_help_without_a_registry_is_refused(ctx: ToolContext) -> None:
    with pytest.raises(ToolError, match="help is not available in this context"):
        await call(ctx, "help", {})


def test_the_tags_help_describes_exist() -> None:
    for tag in ("data", "map", "recall", "figures", "byod", "monitor"):
        assert help_entries(DEFAULT_TOOLS, tag)


# -- digests --------------------------------------------------------------------------


def _mixed() -> dict[str, Any]:
    return collection(
        point(24.94, 60.17, name="A" * 200, count=3, open=True, tags=["x"], extra=None),
        point(24.96, 60.15, name="B", count="many", open=False, tags=["y"], extra={"k": 1}),
        square(24.90, 60.10, 0.02, name="C"),
        {"type": "Feature", "geometry": None, "properties": {"name": "D"}},
    )


def test_a_digest_counts_bounds_and_types_the_features() -> None:
    digest = entry_digest(_mixed())

    assert digest["feature_count"] == 4
    assert digest["geometry_types"] == {"Point": 2, "Polygon": 1, "null": 1}
    assert digest["bbox"] == [24.9, 60.1, 24.96, 60.17]
    assert digest["properties"] == {
        "name": "string",
        "count": "mixed",
        "open": "boolean",
        "tags": "array",
        "extra": "object",
    }
    assert "members" not in digest


def test_a_digest_samples_three_rows_with_text_cut_to_80_characters() -> None:
    digest = entry_digest(_mixed())

    assert len(digest["sample"]) == 3
    first = digest["sample"][0]
    assert len(first["name"]) == 80
    assert first["name"] == "A" * 79 + "…"
    assert first["tags"] == ["x"]
    assert digest["sample"][2] == {"name": "C"}
    long_list = entry_digest(collection(point(0, 0, ids=list(range(100)))))
    assert len(long_list["sample"][0]["ids"]) == 80


def test_a_digest_names_foreign_members_and_handles_no_geometry() -> None:
    data = {
        "type": "FeatureCollection",
        "features": [],
        "connections": [],
        "attached_geometries": {},
    }
    digest = entry_digest(data)
    assert digest["feature_count"] == 0
    assert digest["bbox"] is None
    assert digest["members"] == ["attached_geometries", "connections"]


def test_a_digest_stays_small_for_a_large_layer() -> None:
    big = collection(
        *(point(24 + i / 10_000, 60, name=f"place {i}", note="x" * 500) for i in range(5_000))
    )
    digest = entry_digest(big)
    assert digest["feature_count"] == 5_000
    assert len(json.dumps(digest)) < 2_000


def _size(value: Any) -> int:
    return len(json.dumps(value, ensure_ascii=False, separators=(",", ":")))


def test_cut_to_budget_leaves_a_small_value_alone() -> None:
    value = {"count": 3, "names": ["a", "b"]}
    assert cut_to_budget(value, 4_000) is value


@pytest.mark.parametrize(
    "value",
    [
        {"rows": [{"i": i, "text": "y" * 50} for i in range(2_000)], "total": 2_000},
        {f"key{i}": "z" * 300 for i in range(200)},
        {"nested": {"deep": {"list": list(range(50_000))}}, "sample": ["s" * 1_000] * 10},
        {f"quoted{i}": '"quoted" \\ text ' * 20 for i in range(200)},
    ],
    ids=["rows", "many-keys", "nested", "escapes"],
)
def test_cut_to_budget_fits_a_huge_dict_and_says_so(value: dict[str, Any]) -> None:
    budget = 4_000
    cut = cut_to_budget(value, budget)
    # Measured as the model receives it: JSON escapes of quotes and backslashes count.
    assert _size(cut) <= budget
    assert cut["truncated"] is True


def test_cut_to_budget_keeps_the_head_of_a_long_list() -> None:
    cut = cut_to_budget(list(range(10_000)), 500)
    assert _size(cut) <= 500
    assert cut["truncated"] is True
    assert cut["total"] == 10_000
    assert cut["items"][:3] == [0, 1, 2]


@pytest.mark.parametrize("text", ["w" * 10_000, '"' * 10_000, "a\\b" * 5_000])
def test_cut_to_budget_shortens_a_long_text(text: str) -> None:
    cut = cut_to_budget(text, 100)
    assert isinstance(cut, str)
    assert 90 <= _size(cut) <= 100
    assert cut.endswith("…")
    assert text.startswith(cut[:-1])


@pytest.mark.anyio
async def test_a_huge_analysis_result_reaches_the_model_cut(make_ctx: MakeCtx) -> None:
    ctx = make_ctx(settings=ToolSettings(digest_chars=1_000))
    await ctx.write_entry(kind="places", data=collection(point(24.9, 60.1)), label="p")
    result = await call(
        ctx,
        "analyse_data",
        {"places_entry_ids": ["places-1"], "name": "big", "code": "return list(range(100000))"},
    )
    assert result.model["result"]["truncated"] is True
    assert result.model["result"]["total"] == 100_000
    assert _size(result.model["result"]) <= 1_000
    # The whole answer fits the budget with its handles whole, so it is not cut again.
    assert _size(result.model) <= 1_000
    assert cut_to_budget(result.model, 1_000) == result.model
    assert result.model["analysis_id"] == "a1" and result.model["name"] == "big"
    record = ctx.refresh().analyses["a1"]
    assert record.result is None  # too large to keep inline: stored as a blob
    assert record.result_blob is not None


def test_every_geo_helper_the_model_is_told_of_exists() -> None:
    # The model once read of `geo.route_progress`, which never existed, and its code failed.
    texts = [entry.description for entry in DEFAULT_TOOLS.values()]
    for name in ("analyse_data", "process_data"):
        everything = DataScope(kinds=list(ENTRY_KINDS))
        texts.append(DEFAULT_TOOLS[name].for_scope(everything).description)
    named = {m for text in texts for m in re.findall(r"\bgeo\.([a-z_]\w*)", text)}
    assert named, "the descriptions name no geo helper: the check would pass on nothing"
    assert sorted(n for n in named if n not in geomint.geo.__all__) == []


@pytest.mark.anyio
@pytest.mark.parametrize("tag", [None, "data"])
async def test_help_never_cuts_a_word(ctx: ToolContext, tag: str | None) -> None:
    ctx.registry_help = lambda t: help_entries(DEFAULT_TOOLS, t)
    shown = await call(ctx, "help", {"tag": tag} if tag else {})
    cut = [row["does"] for row in shown["tools"] if row["does"].endswith("…")]
    assert cut, "no description was long enough to be cut: the check would pass on nothing"
    descriptions = [entry.description for entry in DEFAULT_TOOLS.values()]
    for does in cut:
        head = does[:-1]
        (whole,) = [d for d in descriptions if d.startswith(head)][:1]
        assert whole[len(head)] in " ,;:.", (does, whole[: len(head) + 10])
