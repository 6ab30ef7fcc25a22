"""List questions: when a question asks for several things, and how a one-string answer holds them.

The rule (:func:`asks_for_list`) reads the question's wording only:

- a wh-determiner before a plural noun: "what movies ...", "which films ...", "what genres ...",
  "what other films ..." (one word may stand between: "what other movies"); a word ending in
  "s" counts as plural unless it is a verb or pronoun form ("is", "was", "does", "has", "this")
  or ends in "ss" / "us" / "is"; "people", "men", "women", "children" are plural too;
- an acting verb with "who" ("who starred in", "who stars in", "who acted in", "who appeared
  in", "who played in", "X starred who") or "who are", or "what does X act / appear / star in":
  a cast, a filmography is a list;
- "words" ("describe X in a few words", "what words describe X"): tags are a list.

Everything else ("who directed Big", "what language is Amelie in", "which person wrote X") asks
for one thing. A method whose ``answer`` is one string answers a list question with every top
answer that shares the first answer's score band (within :data:`BAND` of its score, relatively),
at most as many as the run returns items (``top_k``), joined by :data:`SEPARATOR` in rank order.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from typing import TypeVar

T = TypeVar("T")

BAND = 0.01  # relative: an answer scoring within 1% of the first shares its band
SEPARATOR = "; "  # titles hold commas ("Crouching Tiger, Hidden Dragon"), never this
_NOT_PLURAL = frozenset({"is", "was", "does", "has", "this", "its", "his", "hers", "yours", "ours", "whose"})
_IRREGULAR = frozenset({"people", "men", "women", "children"})
_WH = re.compile(r"\b(?:what|which)\s+(?:([a-z']+)\s+)?([a-z']+)", re.IGNORECASE)
_ACT = r"(?:star|stars|starred|act|acts|acted|appear|appears|appeared|play|plays|played)"
_CAST = re.compile(
    rf"\bwho\s+(?:{_ACT}|are)\b|\b{_ACT}\s+who\b|\bwhat\s+(?:does|did|do)\b.*\b{_ACT}\s+in\b|\bwords\b",
    re.IGNORECASE,
)


def _plural(word: str) -> bool:
    w = word.casefold()
    if w in _IRREGULAR:
        return True
    return w.endswith("s") and w not in _NOT_PLURAL and not w.endswith(("ss", "us", "is", "'s"))


def asks_for_list(question: str) -> bool:
    """Whether ``question`` asks for several answers (the rule in this module's docstring)."""
    if _CAST.search(question):
        return True
    for m in _WH.finditer(question):
        first, second = m.group(1), m.group(2)
        if first and _plural(first):  # "what movies did ..."
            return True
        if first and first.casefold() not in _NOT_PLURAL and _plural(second):  # "what other movies"
            return True
        if not first and _plural(second):
            return True
    return False


def top_band(items: Iterable[T], score: Callable[[T], float], answer: Callable[[T], str], limit: int) -> list[str]:
    """The distinct answers of ``items`` (in rank order) sharing the first answer's score band, at most ``limit``.

    ``items`` come best first; ``answer(item)`` is the item's answer ("" for none). Items before
    the first answer are skipped, and the walk stops at the first item below the band.
    """
    found: list[str] = []
    first: float | None = None
    for item in items:
        if len(found) >= limit:
            break
        s = score(item)
        if first is not None and s < first - BAND * abs(first):
            break
        name = answer(item)
        if not name:
            continue
        first = s if first is None else first
        if name.casefold() not in {f.casefold() for f in found}:
            found.append(name)
    return found


def joined(answers: list[str]) -> str:
    """One answer string of several answers."""
    return SEPARATOR.join(answers)


def split(answer: str) -> list[str]:
    """The answers a joined answer holds (one, for a single answer)."""
    return [a.strip() for a in answer.split(SEPARATOR.strip()) if a.strip()]
