"""The demo model as discovery's second model: it shortlists a live catalogue search.

A shortlisting request (:mod:`geomint.sources.shortlist`) lists the search results one
JSON object a line. The demo reads no descriptions: it keeps the first few results in
the catalogues' own order and says so in each line, so a person trying geomint without a
key sees the shape of a shortlist, never a judgement it did not make.
"""

from __future__ import annotations

import json
from typing import Final

__all__ = ["DISCOVERY_MARKER", "write_shortlist"]

#: How a shortlisting request's system prompt begins.
DISCOVERY_MARKER: Final = "You shortlist open-data search results for geomint."
_KEPT: Final = 3


def write_shortlist(prompt: str) -> str:
    """The demo's answer to a shortlisting request: the first results, in order."""
    ids: list[str] = []
    for line in prompt.splitlines():
        if not line.startswith('{"id"'):
            continue
        try:
            found = json.loads(line)
        except ValueError:
            continue
        if isinstance(found, dict) and isinstance(found.get("id"), str):
            ids.append(found["id"])
        if len(ids) == _KEPT:
            break
    why = "among the first the catalogue listed for this search (the demo model reads no further)"
    return json.dumps({"shortlist": [{"id": i, "why": why} for i in ids]})
