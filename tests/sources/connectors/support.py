"""What the connector tests share: the live catalogue's rows pointed at a loopback server
of hand-written recordings, a request policy that never waits, and spine units."""

from __future__ import annotations

import json
import struct
from collections.abc import Callable, Sequence
from importlib import resources
from pathlib import Path
from typing import Any

from geomint.http import RequestPolicy
from geomint.sources.connectors import _cog_child, _sdmx_child
from geomint.sources.connectors.base import Unit
from geomint.sources.model import Source

#: Earth Search answers geomint ships for its demo (geomint.sources.replay); tests serve them too.
EARTH_SEARCH = (
    Path(__file__).parents[3] / "src" / "geomint" / "sources" / "recorded" / "earth_search"
)
RECORDED = Path(__file__).parent / "recorded"

FINLAND = Unit(id="country:FIN", name="Finland", level="country", iso2="FI", iso3="FIN", m49=246)
SWEDEN = Unit(id="country:SWE", name="Sweden", level="country", iso2="SE", iso3="SWE", m49=752)
GREECE = Unit(id="country:GRC", name="Greece", level="country", iso2="GR", iso3="GRC", m49=300)
HELSINKI = Unit(id="city:658225", name="Helsinki", level="city", geonameid=658225, country="FIN")
AFGHANISTAN = Unit(
    id="country:AFG", name="Afghanistan", level="country", iso2="AF", iso3="AFG", m49=4
)
SUDAN = Unit(id="country:SDN", name="Sudan", level="country", iso2="SD", iso3="SDN", m49=729)
KABUL_PROVINCE = Unit(
    id="admin1:AF-KAB", name="Kabul", level="admin1", iso2="AF-KAB", country="AFG"
)


def live_source(source_id: str, **config: Any) -> Source:
    """A row of the live catalogue, with ``config`` settings replaced (a loopback base URL)."""
    for row in json.loads(_catalogue()):
        if row["id"] == source_id:
            source = Source.model_validate(row)
            return source.model_copy(update={"config": {**source.config, **config}})
    raise KeyError(source_id)


def fast(**overrides: Any) -> RequestPolicy:
    """One attempt, no sleeping, a short deadline: a failing test fails at once."""
    settings: dict[str, Any] = {"max_attempts": 1, "sleep": lambda s: None, "timeout_s": 3.0}
    return RequestPolicy(**{**settings, **overrides})


def _catalogue() -> str:
    return (resources.files("geomint.sources") / "catalogue" / "live.json").read_text("utf-8")


def sdmx_in_process(body: bytes, timeout_s: float, what: str) -> bytes:
    """The SDMX child's parse, run in this process: everything but the process boundary
    (the installed geomint, not this tree, is what a confined child imports)."""
    return _sdmx_child.answer(body)


def cog_in_process(payload: bytes, answer: Callable[[bytes], bytes], timeout_s: float) -> bytes:
    """The raster child's read, run in this process over the same questions and answers
    (the host's range fetcher answers them): everything but the process boundary."""
    (length,) = struct.unpack_from("<I", payload)
    request = json.loads(payload[4 : 4 + length])
    refused: list[Exception] = []

    def ask(ranges: Sequence[tuple[int, int]]) -> list[bytes]:
        try:
            reply = answer(b"".join(struct.pack("<QQ", offset, size) for offset, size in ranges))
        except Exception as exc:  # the host refused: a real child is killed here
            refused.append(exc)
            reply = bytes(sum(size for _, size in ranges))
        parts, at = [], 0
        for _, size in ranges:
            parts.append(reply[at : at + size])
            at += size
        return parts

    answered = _cog_child.answer(request, payload[4 + length :], ask)
    if refused:
        raise refused[0]
    return answered
