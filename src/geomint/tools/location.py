"""``get_current_location``: where the person is, read from their device with their yes.

The tool cannot reach a device itself: it asks the person's page, through the approval
round trip (:meth:`~geomint.tools.ToolContext.require` with the ``location`` effect, asked
always). The page asks the browser's Geolocation API and sends the position back with the
answer; the position lands as a places entry whose provenance says it came from the
person's device, with its accuracy. A refusal, a browser that will not tell, or a session
with no page (a terminal chat, a program) is an error the model reads.
"""

from __future__ import annotations

from typing import Any, Final

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from geomint.provenance import LICENCE_NOT_STATED, Provenance
from geomint.tools.context import ToolContext
from geomint.tools.registry import ToolEntry
from geomint.tools.results import ToolError

__all__ = ["GET_CURRENT_LOCATION", "DevicePosition", "LocationInput"]

#: The id of the feature a location entry holds: what ``near={"place_id": ...}`` names.
PLACE_ID: Final = "device:current-location"
_NO_PAGE: Final = (
    "the person's location can only be read by the geomint web page, from their browser; "
    "this session has no page to ask (a terminal chat, or a program)"
)


class DevicePosition(BaseModel):
    """A position the person's browser reported (the Geolocation API's coordinates).

    Attributes:
        lon: Longitude, degrees.
        lat: Latitude, degrees.
        accuracy_m: The radius, in metres, the browser is 95% sure the person is within.
    """

    model_config = ConfigDict(extra="forbid", frozen=True, strict=True)  # no "24.9" or true

    lon: float = Field(ge=-180, le=180)
    lat: float = Field(ge=-90, le=90)
    accuracy_m: float = Field(ge=0, le=1_000_000)


class LocationInput(BaseModel):
    """Ask the person where they are."""

    model_config = ConfigDict(extra="forbid")

    purpose: str = Field(
        default="",
        max_length=200,
        description="Why you ask, in a few words the person reads ('to find cafés near you')",
    )


def _position(reply: Any) -> DevicePosition:
    if reply is None:
        raise ToolError(
            f"no location came back: {_NO_PAGE}",
            hint="ask the person for an address or a place name, and use locate_place",
        )
    try:
        return DevicePosition.model_validate(reply)
    except ValidationError:
        raise ToolError(
            "the page sent back something that is not a position",
            hint="ask the person for an address or a place name instead",
        ) from None


async def _locate(arguments: LocationInput, ctx: ToolContext) -> dict[str, Any]:
    about = {"asks": "location", "purpose": arguments.purpose or None}
    position = _position(await ctx.require("location", about, always=True))
    accuracy = round(position.accuracy_m)
    label = f"your location (within {accuracy:,} m)"
    feature = {
        "type": "Feature",
        "id": PLACE_ID,
        "geometry": {"type": "Point", "coordinates": [position.lon, position.lat]},
        "properties": {
            "id": PLACE_ID,
            "name": "Your location",
            "category": "current_location",
            "accuracy_m": position.accuracy_m,
            "source": "the person's device (browser Geolocation API)",
        },
    }
    source = Provenance(
        source_id="device-geolocation",
        title=f"The person's device, via the browser's Geolocation API (accuracy {accuracy:,} m)",
        publisher="the person's device",
        licence=LICENCE_NOT_STATED,
        retrieved_at=ctx.now(),
        evidence="user-supplied",
    )
    data = {"type": "FeatureCollection", "features": [feature]}
    await ctx.require("fetched_entry", {"label": label, "features": 1})
    written = await ctx.write_entry(kind="places", data=data, label=label, sources=(source,))
    return {
        "entry_id": written.entry_id,
        "place_id": PLACE_ID,
        "lon": position.lon,
        "lat": position.lat,
        "accuracy_m": position.accuracy_m,
        "note": f"search around it with near={{'place_id': '{PLACE_ID}'}}; the position is "
        f"only as good as its accuracy ({accuracy:,} m)",
    }


GET_CURRENT_LOCATION: Final = ToolEntry(
    description=(
        "Ask the person's browser where they are (with their permission, asked every "
        "time). The position lands as a places entry with one point, its provenance the "
        "person's device and its accuracy in metres; use its place_id as `near` for "
        "'near me' questions. Fails when the person refuses, the browser cannot tell, "
        "or there is no web page to ask (a terminal chat)."
    ),
    input_schema=LocationInput,
    execute=_locate,
    effects=frozenset({"location", "fetched_entry"}),
    classification_prompt="The person asks about places near them, 'near me', 'where am "
    "I', 'around here'.",
    tags=("places",),
    example_prompts=("Cafés near me", "Where am I?"),
    related_tools=("search_places",),
)
