"""Skill documents for map code, and matching an intent to them with BM25.

The skills ship in the package (``geomint/codegen/skills/*.md``), written by us from the
MapLibre style specification: each has a name, a description, keywords, and examples in
``mapview``'s API. :func:`match_skills` ranks them against an intent with BM25 (``bm25s``)
over the name, description and keywords, so "heatmap of the cafés" brings the heatmap
skill into the generation prompt and leaves the extrusion one out.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from importlib import resources
from typing import Any, Final

__all__ = ["Skill", "load_skills", "match_skills"]

_FRONT: Final = re.compile(r"\A---\n(.*?)\n---\n(.*)\Z", re.DOTALL)


@dataclass(frozen=True, kw_only=True)
class Skill:
    """One skill document.

    Attributes:
        name: Its name (the file's stem).
        description: One sentence: what it helps write.
        keywords: Words an intent needing it may use.
        body: The Markdown text the generation prompt includes.
    """

    name: str
    description: str
    keywords: tuple[str, ...]
    body: str

    @property
    def searchable(self) -> str:
        """What BM25 ranks: the name, description and keywords (not the body, whose
        examples mention every layer type and would match everything)."""
        return " ".join([self.name.replace("-", " "), self.description, *self.keywords])


@functools.cache
def load_skills() -> tuple[Skill, ...]:
    """Every shipped skill, by name."""
    folder = resources.files("geomint.codegen") / "skills"
    skills = []
    for item in sorted(folder.iterdir(), key=lambda p: p.name):
        if item.name.endswith(".md"):
            skills.append(_parse(item.name[:-3], item.read_text(encoding="utf-8")))
    return tuple(skills)


def _parse(name: str, text: str) -> Skill:
    found = _FRONT.match(text)
    if found is None:
        raise ValueError(f"skill {name}: no front matter")
    fields: dict[str, str] = {}
    for line in found.group(1).splitlines():
        key, _, value = line.partition(":")
        fields[key.strip()] = value.strip()
    if fields.get("name") != name or not fields.get("description"):
        raise ValueError(f"skill {name}: the front matter needs its name and a description")
    return Skill(
        name=name,
        description=fields["description"],
        keywords=tuple(fields.get("keywords", "").split()),
        body=found.group(2).strip(),
    )


@functools.cache
def _index() -> Any:
    import bm25s  # type: ignore[import-untyped]  # noqa: PLC0415 - paid only when map code runs

    skills = load_skills()
    retriever = bm25s.BM25()
    retriever.index(_tokens([s.searchable for s in skills]), show_progress=False)
    return retriever


def _tokens(texts: list[str]) -> Any:
    import bm25s  # noqa: PLC0415

    return bm25s.tokenize(texts, stopwords="en", show_progress=False)


def match_skills(intent: str, *, top: int = 3) -> list[tuple[Skill, float]]:
    """The skills that best match ``intent``, best first, with their BM25 scores.

    Skills scoring zero (no word in common) are left out, so an intent about nothing the
    skills cover gets none rather than three at random.

    Example:
        >>> [skill.name for skill, _ in match_skills("heatmap of the cafés", top=1)]
        ['heatmap']
    """
    skills = load_skills()
    if not intent.strip():
        return []
    query = _tokens([intent])
    if not query.vocab:
        return []
    found, scores = _index().retrieve(query, k=min(top, len(skills)), show_progress=False)
    return [
        (skills[int(i)], float(score))
        for i, score in zip(found[0], scores[0], strict=True)
        if score > 0
    ]
