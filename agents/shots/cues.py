"""Relation cues of a question and how well an example's relation path agrees with them.

The embedding of a masked question is close to a bag of words: "who wrote movies starring <E>"
sits as near "who acted in the films written by <E>" (the reversed path) as the asked one. The
cues here read the order of the words instead. A *cue* is a span of the masked question that is
an everyday word or phrase for a relation label of the KB (:func:`tools.lexicon.cues_of`:
"made" → ``directed_by``, "was in" → ``starred_actors``, "come out" → ``release_year``), so
the cues come from the KB's own labels and no question set. English puts the path's hops in
reverse order around the entity: the cue next to ``<E>`` is the first hop ("the films <E> was in"),
the cue nearest the question word is the last ("*who wrote* the films <E> was in"). A word of
sharing ("share", "same", "also", "worked with") asks for one relation walked there and back.

:func:`agreement` scores an example's path (relations, their order, its hop count) against these
cues; :meth:`agents.shots.bank.Bank.nearest` adds it to the embedding similarity of its best
:data:`CANDIDATES` examples. A question without cues leaves the ranking as it was.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from hybridrag.agents.shots.example import MASK, SolvedExample
from hybridrag.tools.lexicon import cues_of

CANDIDATES = 30  # examples (by embedding similarity, after the bank's filters) whose paths are re-scored
FIRST_WEIGHT = 0.10  # the path's first relation is cued next to <E>
LAST_WEIGHT = 0.10  # the path's last relation is cued nearest the question word
COVER_WEIGHT = 0.05  # per cue whose relation is on the path, / the number of cues
HOPS_WEIGHT = 0.05  # per hop the path has more or fewer than the cues ask for
QUESTION_WORDS = frozenset("who whom whose what which when where how list name".split())
SHARING = ("share", "shares", "shared", "sharing", "same", "also", "other", "worked with", "work with", "co-star")
_TOKEN = re.compile(re.escape(MASK) + r"|[\w'-]+")


@dataclass(frozen=True)
class Cue:
    """A span of words (``start``..``end`` word positions) cueing the ``relations`` it names."""

    start: int
    end: int
    relations: frozenset[str]


@dataclass(frozen=True)
class Cues:
    """What a masked question asks for: its cues in order, the first and last hop's, and its hop count."""

    cues: tuple[Cue, ...]
    first: frozenset[str]
    last: frozenset[str]
    hops: int


def _words(masked: str) -> list[str]:
    return [w if w == MASK else w.casefold() for w in _TOKEN.findall(masked)]


def _spans(words: list[str], phrases: dict[tuple[str, ...], set[str]]) -> list[Cue]:
    """Cue spans in word order, longest phrase first where phrases overlap."""
    taken = [False] * len(words)
    found = []
    for phrase in sorted(phrases, key=len, reverse=True):
        n = len(phrase)
        for i in range(len(words) - n + 1):
            if tuple(words[i : i + n]) == phrase and not any(taken[i : i + n]):
                taken[i : i + n] = [True] * n
                found.append(Cue(i, i + n, frozenset(phrases[phrase])))
    return sorted(found, key=lambda c: c.start)


def _gap(cue: Cue, at: int) -> int:
    """Words between the cue and word position ``at``."""
    return cue.start - at - 1 if cue.start > at else max(at - cue.end, 0)


def question_cues(masked: str, relations: tuple[str, ...] | list[str]) -> Cues:
    """The cues of a masked question for these relation labels (see the module docstring)."""
    words = _words(masked)
    phrases: dict[tuple[str, ...], set[str]] = {}
    for rel in relations:
        for cue in cues_of(rel):
            phrases.setdefault(tuple(cue.split()), set()).add(rel)
    cues = _spans(words, phrases)
    if not cues:
        return Cues((), frozenset(), frozenset(), 0)
    entity = words.index(MASK) if MASK in words else len(words)
    asking = next((i for i, w in enumerate(words) if w in QUESTION_WORDS), 0)
    first = min(cues, key=lambda c: (_gap(c, entity), -_gap(c, asking)))
    rest = [c for c in cues if c is not first] or [first]
    last = min(rest, key=lambda c: (_gap(c, asking), -_gap(c, entity)))
    text = f" {' '.join(words)} "
    sharing = any(f" {w} " in text for w in SHARING)
    distinct = len({c.relations for c in cues})
    return Cues(tuple(cues), first.relations, last.relations, distinct + sharing)


def agreement(cues: Cues, example: SolvedExample) -> float:
    """How well the example's relation path follows the question's cues (0 without cues)."""
    if not cues.cues:
        return 0.0
    rels = example.relations
    score = FIRST_WEIGHT * (rels[0] in cues.first) + LAST_WEIGHT * (rels[-1] in cues.last)
    score += COVER_WEIGHT * sum(bool(c.relations & set(rels)) for c in cues.cues) / len(cues.cues)
    return score - HOPS_WEIGHT * abs(len(rels) - max(cues.hops, 1))


def follow_cues(
    masked: str, relations: tuple[str, ...], examples: Sequence[SolvedExample], scores: np.ndarray
) -> np.ndarray:
    """``scores`` (one per example) with the cue agreement added to the best :data:`CANDIDATES` finite ones."""
    asked = question_cues(masked, relations)
    if not asked.cues:
        return scores
    scores = scores.copy()
    for i in np.argsort(-scores, kind="stable")[:CANDIDATES]:
        if np.isfinite(scores[i]):
            scores[i] += agreement(asked, examples[i])
    return scores
