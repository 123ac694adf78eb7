"""get_current_location: the person's position, asked of their page, as a places entry."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pytest

from geomint.tools import ToolContext, ToolError
from geomint.tools.effects import EffectRefusedError
from geomint.ui import EntryPart

from .conftest import MakeCtx, UiLog
from .helpers import call

pytestmark = pytest.mark.anyio


def _page(reply: Mapping[str, Any] | None, asked: list[tuple[str, bool]]) -> Any:
    """An authorize that answers ``location`` with ``reply``, as the page would."""

    async def authorize(
        effect: str, about: dict[str, Any], *, always: bool = False, again: bool = False
    ) -> Mapping[str, Any] | None:
        asked.append((effect, always))
        return reply if effect == "location" else None

    return authorize


async def test_a_shared_position_lands_as_a_place_from_the_device(
    make_ctx: MakeCtx, ui: UiLog
) -> None:
    asked: list[tuple[str, bool]] = []
    reply = {"lon": 24.9414, "lat": 60.1699, "accuracy_m": 25.4}
    ctx = make_ctx(authorize=_page(reply, asked))
    result = await call(ctx, "get_current_location", {"purpose": "to find cafés near you"})

    assert asked[0] == ("location", True)  # asked always, whatever the policy
    assert result["entry_id"] == "places-1"
    assert result["place_id"] == "device:current-location"
    entry = ctx.refresh().entries["places-1"]
    assert entry.latest.label == "your location (within 25 m)"
    (source,) = entry.latest.sources
    assert source.source_id == "device-geolocation"
    assert source.evidence == "user-supplied"
    assert "accuracy 25 m" in source.title
    data = ctx.entry_data("places-1")
    (feature,) = data["features"]
    assert feature["geometry"]["coordinates"] == [24.9414, 60.1699]
    assert feature["properties"]["accuracy_m"] == 25.4
    assert [p.entry_id for p in ui if isinstance(p, EntryPart)] == ["places-1"]


async def test_without_a_page_it_says_so(ctx: ToolContext) -> None:
    with pytest.raises(ToolError) as caught:
        await call(ctx, "get_current_location", {})
    assert caught.value.message.startswith("no location came back: the person's location can ")
    assert "a terminal chat" in caught.value.message
    assert "locate_place" in (caught.value.hint or "")
    assert not ctx.refresh().entries


async def test_a_refusal_is_the_models_to_read(make_ctx: MakeCtx) -> None:
    async def refuse(effect: str, about: dict[str, Any], **_: bool) -> None:
        raise EffectRefusedError("get_current_location was refused: permission denied")

    ctx = make_ctx(authorize=refuse)
    with pytest.raises(EffectRefusedError, match="permission denied"):
        await call(ctx, "get_current_location", {})
    assert not ctx.refresh().entries


async def test_a_reply_that_is_not_a_position_is_refused(make_ctx: MakeCtx) -> None:
    ctx = make_ctx(authorize=_page({"lon": 500, "lat": 60, "accuracy_m": 5}, []))
    with pytest.raises(ToolError, match="not a position"):
        await call(ctx, "get_current_location", {})
