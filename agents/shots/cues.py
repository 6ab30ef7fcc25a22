"""Relation cues of a question and how well an example's relation path agrees with them.

The embedding of a masked question is close to a bag of words: "who wrote movies starring <E>"
sits as near "who acted in the films written by <E>" (the reversed path) as the asked one. The
cues here read the order of the words instead. A *cue* is a span of the masked question that is
an everyday word or phrase for a relation label of the KB (:func:`tools.lexicon.cues_of`:
"made" → ``directed_by``, "was in" → ``starred_actors``, "come out" → ``release_year``), so
the cues come from the KB's own labels and no question set. English puts the path's hops in
reverse order around the entity: the cue next to ``<E>`` ("by" and "of" between them not counted)
is the first hop ("the films <E> was in"), the cue nearest the question word is the last ("*who
wrote* the films <E> was in"); the cues of one relation count as one ("when ... released"). A word of
sharing ("share", "same", "also", "worked with") asks for one relation walked there and back,
and so does an agent asked for by "by" ("films by the writer of <E>", "films by whoever directed
<E>": the writer's films); that relation is the first hop's, walked *twice*.

:func:`agreement` scores an example's path (relations, their order, its hop count) against these
cues; :meth:`agents.shots.bank.Bank.nearest` adds it to the embedding similarity of the examples of its
:data:`CANDIDATES` most similar wordings. A question without cues leaves the ranking as it was.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from hybridrag.agents.shots.example import MASK, SolvedExample
from hybridrag.tools.lexicon import cues_of

CANDIDATES = 30  # distinct masked wordings (most similar first, after the bank's filters) whose paths are re-scored
FIRST_WEIGHT = 0.10  # the path's first relation is cued next to <E>
LAST_WEIGHT = 0.10  # the path's last relation is cued nearest the question word
TWICE_WEIGHT = 0.05  # the path starts with the first hop's relation walked twice when the question asks for that
COVER_WEIGHT = 0.05  # per cue whose relation is on the path, / the number of cues
HOPS_WEIGHT = 0.05  # per hop the path has more or fewer than the cues ask for
QUESTION_WORDS = frozenset("who whom whose what which when where how list name".split())
SHARING = ("share", "shares", "shared", "sharing", "same", "also", "other", "worked with", "work with", "co-star")
LINKS = frozenset({"by", "of"})  # "directed by <E>", "the writer of <E>": the cue is next to <E>
AGENT_GAP = frozenset({"the", "a", "an", "whoever"})  # words between "by" and an agent cue: "by the writer of"
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
    twice: bool = False


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


def _gap(words: list[str], cue: Cue, at: int) -> int:
    """Words between the cue and word position ``at``, links of a phrase ("directed by", "writer of") not counted."""
    between = words[at + 1 : cue.start] if cue.start > at else words[cue.end : at]
    return sum(w not in LINKS for w in between)


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
    groups: dict[frozenset[str], list[Cue]] = {}
    for c in cues:  # "when were films ... released": one hop cued twice
        groups.setdefault(c.relations, []).append(c)

    def near(group: list[Cue], at: int) -> int:
        return min(_gap(words, c, at) for c in group)

    first = min(groups.values(), key=lambda g: (near(g, entity), -near(g, asking)))
    rest = [g for g in groups.values() if g is not first] or [first]
    last = min(rest, key=lambda g: (near(g, asking), -near(g, entity)))
    twice = _sharing(words) or _by_agent(words, min(first, key=lambda c: _gap(words, c, entity)))
    return Cues(tuple(cues), first[0].relations, last[0].relations, len(groups) + twice, twice)


def _sharing(words: list[str]) -> bool:
    text = f" {' '.join(words)} "
    return any(f" {w} " in text for w in SHARING)


def _by_agent(words: list[str], first: Cue) -> bool:
    """Whether the first hop's cue names an agent "by" asks for: "by the writer of", "by whoever directed"."""
    gap = []
    for w in reversed(words[: first.start]):
        if w == "by":
            return bool(gap) and all(g in AGENT_GAP for g in gap)
        gap.append(w)
    return False


def agreement(cues: Cues, example: SolvedExample) -> float:
    """How well the example's relation path follows the question's cues (0 without cues)."""
    if not cues.cues:
        return 0.0
    rels = example.relations
    score = FIRST_WEIGHT * (rels[0] in cues.first) + LAST_WEIGHT * (rels[-1] in cues.last)
    score += TWICE_WEIGHT * (cues.twice and len(rels) > 1 and rels[0] == rels[1] and rels[0] in cues.first)
    score += COVER_WEIGHT * sum(bool(c.relations & set(rels)) for c in cues.cues) / len(cues.cues)
    return score - HOPS_WEIGHT * abs(len(rels) - max(cues.hops, 1))


def follow_cues(
    masked: str, relations: tuple[str, ...], examples: Sequence[SolvedExample], scores: np.ndarray
) -> np.ndarray:
    """``scores`` (one per example) plus the cue agreement of the examples of the best :data:`CANDIDATES` wordings.

    A bank holds many examples of one masked wording; the candidates are those of the
    :data:`CANDIDATES` most similar distinct masked questions, so a wording repeated thirty times
    does not crowd out the others. Examples outside the candidates and unranked ones (``-inf``)
    keep their scores.
    """
    asked = question_cues(masked, relations)
    if not asked.cues:
        return scores
    scores, wordings, by_path = scores.copy(), set(), {}
    for i in np.argsort(-scores, kind="stable"):
        if not np.isfinite(scores[i]):
            break
        wordings.add(examples[i].masked)
        if len(wordings) > CANDIDATES:
            break
        rels = examples[i].relations
        if rels not in by_path:
            by_path[rels] = agreement(asked, examples[i])
        scores[i] += by_path[rels]
    return scores
