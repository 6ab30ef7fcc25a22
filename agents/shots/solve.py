"""Solved examples from questions with gold answers: the KB relation path that connects them.

The topic entity is the question's [bracketed] or given topic name, looked up exactly (id,
name or alias; never a fuzzy match); without one, the entities named by spans of the question
(:func:`agents.shots.mask.find_mentions`). The path is searched breadth-first over the
schema's typed steps (each relation forwards or backwards) up to :data:`MAX_HOPS`; the path
whose end entities match the gold answers best (F1, the topic excluded) wins, the shorter one
on a tie. Paths still tied are settled by the nearest unambiguous examples (:func:`vote`). A
question's known hop count (MetaQA's ``<k>hop`` files) restricts the search to that length.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Protocol

import numpy as np

from hybridrag.agents.shots.example import SolvedExample
from hybridrag.agents.shots.mask import find_mentions, mask_name
from hybridrag.agents.shots.walk import Step, Walker
from hybridrag.kb.base import KnowledgeBase
from hybridrag.kb.model import Entity

MAX_HOPS = 3
EXPAND_CAP = 5000  # a frontier wider than this is scored but not walked further
VOTERS = 30  # nearest unambiguous examples that settle a tie


class GoldQuestion(Protocol):
    """What a question needs to be solved (``evals.datasets.Question`` has it)."""

    question: str
    answers: tuple[str, ...]
    topic: str | None
    hops: int | None


@dataclass
class SolveTally:
    """Why questions were skipped, counted per reason."""

    solved: int = 0
    skipped: Counter = field(default_factory=Counter)
    dropped: list[SolvedExample] = field(default_factory=list)  # solved, but outvoted by look-alikes

    def line(self) -> str:
        """``solved 90, skipped 10 (topic not in KB: 7, ...)``."""
        why = ", ".join(f"{k}: {v}" for k, v in self.skipped.most_common())
        return f"solved {self.solved}, skipped {sum(self.skipped.values())}" + (f" ({why})" if why else "")


def topic_entities(kb: KnowledgeBase, q: GoldQuestion) -> tuple[list[Entity], list[str]]:
    """(entities, names as written) of the question's topic; empty when not in the KB."""
    if q.topic:
        return list(kb.graph.lookup(q.topic)), [q.topic]
    mentions = find_mentions(q.question, kb)
    return [e for m in mentions for e in m.entities], [m.text for m in mentions]


def _f1(reached: set[str], gold: set[str]) -> float:
    hit = len(reached & gold)
    return 0.0 if not hit else 2 * hit / (len(reached) + len(gold))


def best_paths(
    walker: Walker, topic_ids: list[str], gold: set[str], hops: int | None = None
) -> tuple[list[tuple[Step, ...]], list[str]]:
    """(tied best paths, reached ids of the first) from the topic to ``gold``; ([], []) when none.

    Best: highest F1 of the reached entities against ``gold``, then fewest hops.
    """
    top = walker.start(topic_ids)
    best_key, best, reached_ids = (0.0, 0), [], []
    layer: list[tuple[tuple[Step, ...], object]] = [((), top)]
    for depth in range(1, (hops or MAX_HOPS) + 1):
        nxt = []
        for steps, frontier in layer:
            if len(frontier) > EXPAND_CAP:
                continue
            for step in dict.fromkeys(s for t in walker.types(frontier) for s, _ in walker.steps_from(t)):
                reached = walker.minus(walker.step(frontier, *step), top)
                if not len(reached):
                    continue
                path = (*steps, step)
                nxt.append((path, reached))
                if hops is None or depth == hops:
                    ids = walker.ids(reached)
                    key = (_f1(set(ids), gold), -depth)
                    if key[0] > 0 and key > best_key:
                        best_key, best, reached_ids = key, [path], ids
                    elif key[0] > 0 and key == best_key:
                        best.append(path)
        layer = nxt
    return best, reached_ids


def pick_by_words(kb: KnowledgeBase, question: str, paths: list[tuple[Step, ...]]) -> tuple[Step, ...]:
    """Among paths reaching the answers equally well, the one whose relation words are closest to the question.

    ("who is the author of X" reaches the same person by ``written_by`` and ``directed_by``
    when one person did both; the question's words decide.)
    """
    if len({tuple(r for r, _ in p) for p in paths}) == 1:
        return paths[0]
    q = kb.embed(question)
    rels = sorted({r for p in paths for r, _ in p})
    vecs = {r: kb.embed(r.replace("_", " ")) for r in rels}
    return max(paths, key=lambda p: sum(float(vecs[r] @ q) for r, _ in p) / len(p))


@dataclass
class _Found:
    """A question with its topic and the equally good paths to its answers."""

    q: GoldQuestion
    topics: list[Entity]
    names: list[str]
    paths: list[tuple[Step, ...]]
    reached: list[str]
    gold: set[str]

    @property
    def tied(self) -> bool:
        return len({tuple(r for r, _ in p) for p in self.paths}) > 1

    def example(self, kb: KnowledgeBase, steps: tuple[Step, ...], source: str) -> SolvedExample:
        kinds = Counter(e.type for e in kb.graph.get_many(set(self.reached) & self.gold).values())
        return SolvedExample(
            question=self.q.question,
            masked=self.masked(kb),
            topic=tuple(dict.fromkeys(e.name for e in self.topics)),
            topic_types=tuple(dict.fromkeys(e.type for e in self.topics)),
            relations=tuple(r for r, _ in steps),
            answer_type=kinds.most_common(1)[0][0] if kinds else "",
            answers=tuple(self.q.answers),
            source=source,
            directions=tuple(d for _, d in steps),
        )

    def masked(self, kb: KnowledgeBase) -> str:
        return mask_name(self.q.question, self.names, kb)


def find(kb: KnowledgeBase, walker: Walker, q: GoldQuestion) -> tuple[_Found | None, str]:
    """(topic and best paths, "") for a solvable question, else (None, reason it is skipped)."""
    topics, names = topic_entities(kb, q)
    if not topics:
        return None, "topic not in KB" if q.topic else "no entity of the KB named"
    gold = {e.id for a in q.answers for e in kb.graph.lookup(a)}
    if not gold:
        return None, "answers not in KB"
    paths, reached = best_paths(walker, [e.id for e in topics], gold, q.hops)
    if not paths:
        return None, f"no path of <= {q.hops or MAX_HOPS} hops to the answers"
    return _Found(q, topics, names, paths, reached, gold), ""


def solve(kb: KnowledgeBase, walker: Walker, q: GoldQuestion, source: str = "run") -> tuple[SolvedExample | None, str]:
    """(example, "") for a solvable question, else (None, reason it was skipped); ties by relation words."""
    found, why = find(kb, walker, q)
    if found is None:
        return None, why
    return found.example(kb, pick_by_words(kb, q.question, found.paths), source), ""


def vote(kb: KnowledgeBase, tied: list[_Found], voters: list[SolvedExample]) -> list[tuple[Step, ...] | None]:
    """For each tied question, the tied path its nearest unambiguous examples (masked) follow most, or None."""
    from hybridrag.agents.shots.bank import embed_texts

    if not tied or not voters:
        return [None] * len(tied)
    mat = embed_texts(kb, [v.masked for v in voters])
    asked = embed_texts(kb, [f.masked(kb) for f in tied])
    out: list[tuple[Step, ...] | None] = []
    for f, scores in zip(tied, asked @ mat.T, strict=True):
        near = np.argsort(-scores)[:VOTERS]
        # the closest example following each tied path decides (a paraphrase beats a crowd of look-alikes)
        weight = {
            p: max((float(scores[i]) for i in near if voters[i].relations == tuple(r for r, _ in p)), default=0.0)
            for p in f.paths
        }
        best = max(weight, key=weight.get)
        out.append(best if weight[best] > 0 else None)
    return out


def solve_all(
    kb: KnowledgeBase,
    questions: Iterable[GoldQuestion],
    source: str = "run",
    progress: bool = False,
    walker: Walker | None = None,
    voters: Iterable[SolvedExample] = (),
    consensus: bool = True,
) -> tuple[list[SolvedExample], SolveTally]:
    """Solve every question; skipped ones are counted by reason, never dropped silently.

    A question whose answers several paths reach equally well (a person who wrote and directed
    the film) takes the path of its nearest unambiguous examples, entity masked: this batch's
    and ``voters`` (e.g. the bank's); without any, the path closest to its words. With
    ``consensus``, a solved example whose path its look-alikes outvote
    (:func:`agents.shots.consensus.outliers`) is left out, counted, and kept in ``tally.dropped``.
    """
    from tqdm import tqdm

    walker = walker or Walker(kb.graph)
    tally = SolveTally()
    done: list[SolvedExample | _Found] = []
    for q in tqdm(list(questions), desc="solve questions", unit=" q", disable=not progress):
        found, why = find(kb, walker, q)
        if found is None:
            tally.skipped[why] += 1
            continue
        tally.solved += 1
        done.append(found if found.tied else found.example(kb, found.paths[0], source))
    tied = [f for f in done if isinstance(f, _Found)]
    clear = [e for e in done if isinstance(e, SolvedExample)]
    solved_voters = [v for v in voters if v.source != "schema"]
    picks = dict(zip(map(id, tied), vote(kb, tied, clear + solved_voters), strict=True))
    out = []
    for item in done:
        if isinstance(item, _Found):
            item = item.example(kb, picks[id(item)] or pick_by_words(kb, item.q.question, item.paths), source)
        out.append(item)
    return _agreeing(kb, out, solved_voters, tally) if consensus else out, tally


def _agreeing(
    kb: KnowledgeBase, solved: list[SolvedExample], voters: list[SolvedExample], tally: SolveTally
) -> list[SolvedExample]:
    """``solved`` without the outliers among them (peers: ``solved`` and ``voters``), tallied."""
    from hybridrag.agents.shots.bank import embed_texts
    from hybridrag.agents.shots.consensus import REASON, outliers

    if not solved:
        return solved
    peers = solved + voters
    vectors = embed_texts(kb, [e.masked for e in peers])
    bad = set(outliers(solved, vectors[: len(solved)], peers, vectors))
    tally.dropped += [e for i, e in enumerate(solved) if i in bad]
    if bad:
        tally.solved -= len(bad)
        tally.skipped[REASON] += len(bad)
    return [e for i, e in enumerate(solved) if i not in bad]
