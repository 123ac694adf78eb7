"""Matching names the way people type them: accents, case and plurals aside."""

from __future__ import annotations

import difflib
import re
import threading
import unicodedata
from collections.abc import Iterable
from typing import Final

__all__ = ["WORD_MATCH", "bare_query", "did_you_mean", "match_score", "normalise", "singular"]

_SPACES: Final = re.compile(r"[\s_\-]+")
_PLURALS: Final = (
    ("ies", "y"),
    ("sses", "ss"),
    ("ches", "ch"),
    ("shes", "sh"),
    ("xes", "x"),
    ("s", ""),
)


#: Letters that are no accented letter, folded as the bundled cities' ASCII names fold
#: them (GeoNames files København as "Kobenhavn").
_FOLD: Final = str.maketrans(
    {
        "ß": "ss",
        "ø": "o",
        "ł": "l",
        "đ": "d",
        "ð": "d",
        "þ": "th",
        "æ": "ae",
        "œ": "oe",
        "ı": "i",
        "ħ": "h",
        "ŀ": "l",
    }
)
#: What may surround a name as typed and is no part of it: "Paris.", "'Kiasma'".
_SURROUND: Final = " .,;:!?'\"()[]{}…“”‘’«»"
#: Words too common to find a place by, unless they are its whole name.
_TOO_COMMON: Final = frozenset({"a", "an", "the", "of", "and", "in", "at", "de", "la"})


def normalise(text: str) -> str:
    """Casefold, strip accents, fold ø, æ and the like, and collapse spaces, dashes and
    underscores.

    Example:
        >>> normalise("  Café  Ekberg ")
        'cafe ekberg'
        >>> normalise("København")
        'kobenhavn'
    """
    decomposed = unicodedata.normalize("NFKD", text)
    bare = "".join(c for c in decomposed if not unicodedata.combining(c))
    return _SPACES.sub(" ", bare.casefold().translate(_FOLD)).strip()


def bare_query(text: str) -> str:
    """A place name as typed, normalised, without what surrounds it ("Paris." is
    "paris"). Not for every text: punctuation inside a query can matter elsewhere.

    Example:
        >>> bare_query("  'Kiasma'?! ")
        'kiasma'
    """
    return normalise(text).strip(_SURROUND).strip()


def singular(word: str) -> str:
    """A plain English singular, good enough for categories.

    Example:
        >>> [singular(w) for w in ("cafes", "pharmacies", "churches", "glass", "museums")]
        ['cafe', 'pharmacy', 'church', 'glass', 'museum']
    """
    if word.endswith("ss"):
        return word
    for ending, replacement in _PLURALS:
        if len(word) > len(ending) + 2 and word.endswith(ending):
            return word[: -len(ending)] + replacement
    return word


#: At or above this, a match is by the name's own words; below it, a near miss (a part
#: of a word, or a spelling about as close as "helsinky"), which may be a coincidence.
WORD_MATCH: Final = 0.6


_MATCHERS: Final = threading.local()


def _matcher(query: str) -> difflib.SequenceMatcher[str]:
    """A matcher with ``query`` as its second sequence, kept for the thread: difflib
    indexes the second sequence once, so comparing one query with 40,000 names costs one
    index, not 40,000."""
    kept: tuple[str, difflib.SequenceMatcher[str]] | None = getattr(_MATCHERS, "kept", None)
    if kept is None or kept[0] != query:
        kept = (query, difflib.SequenceMatcher(None, "", query))
        _MATCHERS.kept = kept
    return kept[1]


def match_score(query: str, name: str) -> float:
    """How well ``name`` answers ``query`` (both normalised): 1 exact, down to 0.

    Every word asked, found among the name's words, scores 0.6 to 0.95: more the larger
    the share of the name they make, and more when the name starts with them. So
    "senate square" is "helsinki senate square" before it is "senate square city bike
    station", and "helsinki central station" is "helsinki central railway station".

    Example:
        >>> [round(match_score("senate square", n), 3) for n in
        ...  ("senate square", "helsinki senate square", "senate square city bike station")]
        [1.0, 0.8, 0.77]
        >>> match_score("helsinki central station", "helsinki central railway station")
        0.825
        >>> match_score("the cathedral", "cathedral")
        1.0
        >>> match_score("helsinky", "helsinki") < WORD_MATCH
        True
    """
    if not query or not name:
        return 0.0
    if query.startswith("the ") and not name.startswith("the "):
        query = query[4:]  # "the central station" is "central station"
    if query == name:
        return 1.0
    if len(query) <= 2 or query in _TOO_COMMON:
        return 0.0  # "uk", "a", "of": a whole name or code, or nothing
    words = query.split()
    # Substring tests first: they are cheap, and most names fail them (this runs against
    # some 40,000 city names per query).
    if all(word in name for word in words):
        named = name.split()
        if set(words) <= set(named):
            share = len(words) / len(named)
            return 0.6 + 0.3 * share + (0.05 if name.startswith(query + " ") else 0.0)
    if name.startswith(query):  # the start of a word: "esplanad", or "pori" of "porio"
        return WORD_MATCH - 0.02
    if query in name:
        return 0.55
    # A near miss ("helsinky"): only names of about the same length can be one, and the
    # cheap bound rules most out before the full comparison.
    if abs(len(query) - len(name)) > max(2, len(query) // 4):
        return 0.0
    matcher = _matcher(query)
    matcher.set_seq1(name)
    if matcher.real_quick_ratio() < 0.8 or matcher.quick_ratio() < 0.8:
        return 0.0
    ratio = matcher.ratio()
    return 0.5 * ratio if ratio >= 0.8 else 0.0


def did_you_mean(query: str, names: Iterable[str], n: int = 3) -> str:
    """``"; did you mean A, B?"`` with the names closest to ``query``, or ``""``: the
    tail of a miss that suggests what was meant."""
    close = difflib.get_close_matches(query, list(names), n=n, cutoff=0.6)
    return f"; did you mean {', '.join(close)}?" if close else ""
