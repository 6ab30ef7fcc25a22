"""Names a question writes with a slip: in lower case, or with one typo (issue 26, free wording).

People type "who acted in movies written by Josh Bonoe" and "films by director burt reynolds".
SSRAG's entity step keeps only the entities the question writes, so a model that names the KB
entity "Josh Boone" had its right answer dropped as absent from the question, and a small
model decoding within the question's KB names found none. Here:

- :func:`written_close`: ``name`` is written in the question, ignoring case, or a run of the
  question's words as long as the name matches it word for word with at most one slip per
  word of :data:`~tools.names.TYPO_MIN_LETTERS` letters or more (two neighbouring letters
  swapped, one letter dropped or added); shorter words must match exactly;
- :func:`spelled`: the question's spans that name a KB entity with one typo
  (:func:`tools.names.close_spellings`; a lone lower-case word is no such span), each with the
  name as the KB spells it, so a model
  can be shown the KB's spelling and a name copied with its typo still links;
- :func:`plain_words`: among several KB names the question writes, the ones that are words of
  the sentence rather than its names: a one-word name the question writes only in lower case
  beside a name it writes with a capital or a typo ("who made the films Anton Wlabrook was in"
  writes the title "Made", "the writer of High Tension" the tag "writer"), and a name inside
  another one ("Short" in "Short Circuit").
"""

from __future__ import annotations

import re

from hybridrag.agents.ssrag.cues import written_in
from hybridrag.kb.base import KnowledgeBase
from hybridrag.tools.names import TYPO_MIN_LETTERS, close_spellings
from hybridrag.tools.text import WORD, name_pattern


def one_slip(a: str, b: str) -> bool:
    """Whether ``a`` and ``b`` (case ignored) differ by at most one swap of neighbours, drop or addition."""
    a, b = a.casefold(), b.casefold()
    if a == b:
        return True
    if min(len(a), len(b)) < TYPO_MIN_LETTERS or abs(len(a) - len(b)) > 1:
        return False
    if len(a) == len(b):
        diff = [i for i in range(len(a)) if a[i] != b[i]]
        return len(diff) == 2 and diff[1] == diff[0] + 1 and a[diff[0]] == b[diff[1]] and a[diff[1]] == b[diff[0]]
    short, long_ = (a, b) if len(a) < len(b) else (b, a)
    return any(long_[:k] + long_[k + 1 :] == short for k in range(len(long_)))


def written_close(question: str, name: str) -> bool:
    """Whether the question writes ``name`` exactly (case ignored) or with one slip per long word."""
    if written_in(question, name):
        return True
    want, words = WORD.findall(name), WORD.findall(question)
    if not want:
        return False
    n = len(want)
    runs = (words[i : i + n] for i in range(len(words) - n + 1))
    return any(all(one_slip(w, q) for w, q in zip(want, run, strict=True)) for run in runs)


_RUN = re.compile(r"[A-Z][\w'.!-]*(?:(?:\s+[a-z]{1,3})*\s+[A-Z][\w'.!-]*)*")  # "The Oslen Gang on the Track"


def spelled(kb: KnowledgeBase, question: str) -> dict[str, str]:
    """``{span as the question writes it: KB name}`` for the spans that name a KB entity with one typo.

    The question's runs of capitalised words (short lower-case words inside them) are read first,
    each on its own: the whole question's spans can spend :func:`tools.names.close_spellings`'
    lookup bound before they reach its name. A lone lower-case word is left as written: read with
    a typo it is too often another word ("zero mostel" would give the tag "motel").
    """
    found: list[tuple[int, int, list[str]]] = []
    for run in _RUN.finditer(question):
        found += [(run.start() + a, run.start() + b, ids) for a, b, ids in close_spellings(kb, run.group())]
    found += [
        (a, b, ids) for a, b, ids in close_spellings(kb, question) if not any(a < y and x < b for x, y, _ in found)
    ]
    spans = ((question[a:b], ids) for a, b, ids in found if ids)
    return {span: kb.name(ids[0]) for span, ids in spans if len(WORD.findall(span)) > 1 or not span.islower()}


def respelled(name: str, spellings: dict[str, str]) -> str:
    """The KB's spelling of ``name`` when the question writes it with a typo, else ``name``."""
    return next((kb_name for span, kb_name in spellings.items() if span.casefold() == name.casefold()), name)


def _inside(name: str, other: str) -> bool:
    """Whether ``name``'s words are a run of ``other``'s longer list of words (case ignored)."""
    a, b = [w.casefold() for w in WORD.findall(name)], [w.casefold() for w in WORD.findall(other)]
    return 0 < len(a) < len(b) and any(b[i : i + len(a)] == a for i in range(len(b) - len(a) + 1))


def _named(question: str, name: str) -> bool:
    """Whether the question writes ``name`` as a name: with a capital letter, or with a typo."""
    found = name_pattern(name).search(question)
    return found is None or found.group(0) != found.group(0).lower()


def plain_words(question: str, names: list[str]) -> list[str]:
    """The ``names`` that are words of the question rather than its names (see the module doc).

    A lower-case word is one only beside a name the question writes as a name (:func:`_named`):
    "list the other movies of the director of targets" names nothing so, and keeps both. Never
    all of the names: with nothing else named, a lower-case word stays (a tag such as "reunion").
    """
    out = []
    for name in names:
        written = [w for w in WORD.findall(question) if w.casefold() == name.casefold()]
        lower = len(WORD.findall(name)) == 1 and bool(written) and all(w.islower() for w in written)
        beside = any(_named(question, other) for other in names if other != name)
        if (lower and beside) or any(_inside(name, other) for other in names if other != name):
            out.append(name)
    return out if len(out) < len(names) else []
