"""Discovery's sub-agent: a second model reads a live search's results and keeps a few.

Sub-agents read; the model decides. The shortlisting model is given the question's
words and the search results (titles, publishers, licences, descriptions), and nothing
of the conversation. It has no tools, so it cannot fetch, land or mint anything; its
answer is a list of result ids with one line each on why. Code then holds it to that:

* only ids that appeared in the search results are kept; an id it invented is dropped,
  and the result says so;
* at most :data:`MAX_SHORTLIST` are kept, each once;
* a reason is one line; a reason quoting a number the search result does not hold is
  not kept (a shortlist is no place for a figure);
* everything shown of a kept dataset but its reason is the catalogue's, copied by code.

When the model cannot be asked (no model, the turn's budget spent) or its answer is not
the JSON asked for, the shortlist is the catalogues' own first results, said to be so,
with no reasons.
"""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Final, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError
from pydantic_ai.models import Model

from geomint.models import DISCOVERY_MARKER, TurnBudget, Usage, second_call
from geomint.sources.discovery import Candidate

__all__ = ["MAX_SHORTLIST", "Pick", "Shortlist", "prompt_for", "shortlist_results"]

#: Most datasets a shortlist keeps.
MAX_SHORTLIST: Final = 5
#: Longest reason kept, in characters.
MAX_WHY: Final = 240
#: Most characters of a description the shortlisting model reads per result.
_DESCRIPTION_CHARS: Final = 600
#: Longest answer asked of the shortlisting model, in tokens.
_ANSWER_TOKENS: Final = 800
#: How long the shortlisting model may take.
_TIMEOUT_S: Final = 60.0
_NUMBER: Final = re.compile(r"\d+(?:[.,]\d+)*")
_JSON_OBJECT: Final = re.compile(r"\{.*\}", re.DOTALL)

_RULES: Final = f"""{DISCOVERY_MARKER} A person asked a question; a live search of \
open-data catalogues returned the datasets below. Another model answers the person and \
will choose what to fetch: your job is only to keep the few results worth its reading.

Rules:
- Keep at most {MAX_SHORTLIST} results that could hold data answering the question, best \
first. Keep none if none could.
- Name each by its "id" exactly as listed; never make one up.
- Give one short line on why each could answer: what it holds, its area, its years.
- Never state a figure, a total or an estimate; never say which one the person should \
use. You read; the other model decides.
- Answer with JSON only: {{"shortlist": [{{"id": "...", "why": "..."}}]}}"""


class _Said(BaseModel):
    """One line of the shortlisting model's answer, as it wrote it."""

    model_config = ConfigDict(extra="ignore")

    id: str = Field(max_length=1_000)
    why: str = Field(default="", max_length=5_000)


class _Answer(BaseModel):
    model_config = ConfigDict(extra="ignore")

    shortlist: list[_Said] = Field(max_length=100)


@dataclass(frozen=True, kw_only=True)
class Pick:
    """One kept result: the catalogue's record, and why (None when no reason was kept).

    Attributes:
        candidate: The search result, as the catalogue gave it.
        why: The shortlisting model's one line, or None.
    """

    candidate: Candidate
    why: str | None = None


@dataclass(frozen=True, kw_only=True)
class Shortlist:
    """What the shortlist kept, and how.

    Attributes:
        picks: The kept results, best first (at most :data:`MAX_SHORTLIST`).
        ranked_by: ``model`` when the shortlisting model chose, ``catalogue`` when its
            answer was not used and these are the catalogues' first results.
        read: How many results the shortlisting model was given.
        dropped: Ids it named that no search returned (each cut to 200 characters).
        problem: Why its answer was not used, when it was not.
        notes: What code changed in its answer (a reason not kept, a repeat), in words.
        usage: What it cost.
    """

    picks: tuple[Pick, ...]
    ranked_by: Literal["model", "catalogue"]
    read: int
    dropped: tuple[str, ...] = ()
    problem: str | None = None
    notes: tuple[str, ...] = ()
    usage: Usage = field(default_factory=Usage)


def _one_line(text: str | None, limit: int) -> str:
    flat = " ".join((text or "").split())
    return flat if len(flat) <= limit else flat[: limit - 1].rstrip() + "…"


def prompt_for(query: str, candidates: Sequence[Candidate], *, country: str | None) -> str:
    """The user prompt: the question's words, then one JSON object a result."""
    lines = [
        f"Question (as the answering model wrote it): {query}",
        f"Country: {country or 'not given'}",
        f"Search results ({len(candidates)}), one JSON object a line:",
    ]
    for found in candidates:
        record = {
            "id": found.ref,
            "title": _one_line(found.title, 300),
            "kind": found.kind,
            "publisher": found.publisher,
            "licence": found.licence,
            "formats": list(found.formats),
            "modified": found.modified,
            "description": _one_line(found.description, _DESCRIPTION_CHARS) or None,
        }
        lines.append(json.dumps(record, ensure_ascii=False))
    return "\n".join(lines)


def _by_catalogue_order(candidates: Sequence[Candidate]) -> tuple[Pick, ...]:
    """The catalogues' first results, taken in turn from each, when no model chose."""
    queues: dict[str, list[Candidate]] = {}
    for found in candidates:
        queues.setdefault(found.catalogue, []).append(found)
    picks: list[Pick] = []
    while len(picks) < MAX_SHORTLIST and any(queues.values()):
        for queue in queues.values():
            if queue and len(picks) < MAX_SHORTLIST:
                picks.append(Pick(candidate=queue.pop(0)))
    return tuple(picks)


def _parsed(text: str) -> _Answer | None:
    found = _JSON_OBJECT.search(text)
    if found is None:
        return None
    try:
        return _Answer.model_validate_json(found.group(0))
    except (ValidationError, ValueError, RecursionError):
        return None


def _held(why: str, found: Candidate) -> bool:
    """Whether every number in ``why`` is in what the catalogue said of ``found``."""
    said = " ".join(
        t or ""
        for t in (found.title, found.description, found.publisher, found.licence, found.modified)
    )
    return all(
        re.search(rf"(?<!\d){re.escape(number)}(?!\d)", said) for number in _NUMBER.findall(why)
    )


def _checked(answer: _Answer, candidates: Sequence[Candidate]) -> tuple[
    list[Pick], list[str], list[str]
]:  # fmt: skip
    """The picks an answer names, the ids it invented, and what code changed."""
    by_ref = {c.ref: c for c in candidates}
    picks: list[Pick] = []
    dropped: list[str] = []
    notes: list[str] = []
    seen: set[str] = set()
    for said in answer.shortlist:
        ref = said.id.strip()
        found = by_ref.get(ref)
        if found is None:
            if len(dropped) < 20:
                dropped.append(_one_line(ref, 200) or "(empty)")
            continue
        if ref in seen:
            continue
        seen.add(ref)
        if len(picks) == MAX_SHORTLIST:
            notes.append(f"the shortlist named more than {MAX_SHORTLIST}; the rest were not kept")
            break
        why: str | None = _one_line(said.why, MAX_WHY) or None
        if why is not None and not _held(why, found):
            notes.append(
                f"the reason given for {ref} quoted a number its search result does not hold, "
                "so it was not kept"
            )
            why = None
        picks.append(Pick(candidate=found, why=why))
    return picks, dropped, notes


async def shortlist_results(
    query: str,
    candidates: Sequence[Candidate],
    *,
    model: Model | None,
    budget: TurnBudget | None = None,
    country: str | None = None,
) -> Shortlist:
    """Have ``model`` read ``candidates`` and keep at most five, each with why.

    Never raises for the model's sake: a model that fails, is over the turn's budget or
    answers in another shape gives the catalogues' first results, with the problem said.

    Args:
        query: The question's words (the main model's query).
        candidates: Every result the searches returned, in their catalogues' order.
        model: The shortlisting model, or None when there is none.
        budget: The turn's cap on second model calls; the call is counted against it.
        country: The country asked about, as the main model gave it.
    """
    read = len(candidates)
    if not candidates:
        return Shortlist(picks=(), ranked_by="model", read=0)

    def fallback(problem: str, usage: Usage | None = None) -> Shortlist:
        return Shortlist(
            picks=_by_catalogue_order(candidates),
            ranked_by="catalogue",
            read=read,
            problem=problem,
            usage=usage or Usage(),
        )

    if model is None:
        return fallback("no model is configured to shortlist with")
    refused = budget.refusal() if budget is not None else None
    if refused is not None:
        return fallback(refused)
    user = prompt_for(query, candidates, country=country)
    try:
        text, usage = await asyncio.wait_for(
            second_call(model, system=_RULES, user=user, max_tokens=_ANSWER_TOKENS),
            timeout=_TIMEOUT_S,
        )
    except TimeoutError:
        return fallback(f"the shortlisting model did not answer within {_TIMEOUT_S:g} s")
    except Exception as exc:  # any provider's failure: the searches still stand
        return fallback(f"the shortlisting model failed ({type(exc).__name__}: {str(exc)[:200]})")
    if budget is not None:
        budget.spend(usage)
    answer = _parsed(text)
    if answer is None:
        return fallback(
            'the shortlisting model did not answer with the JSON asked for ({"shortlist": [...]})',
            usage,
        )
    picks, dropped, notes = _checked(answer, candidates)
    return Shortlist(
        picks=tuple(picks),
        ranked_by="model",
        read=read,
        dropped=tuple(dropped),
        notes=tuple(notes),
        usage=usage,
    )
