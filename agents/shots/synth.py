"""Solved examples synthesized from a KB's schema and its own entities (no LLM).

Schema paths of 1..``max_hops`` steps are enumerated from the relation types (a step walks a
relation forwards, head to tail, or backwards); for each path, entities of its start type
are drawn at random until ``per_path`` of them reach between 1 and :data:`MAX_ANSWERS`
entities of the path's end type. The question is written from a template built from the
relation names and entity types only (agents/shots/wording.py), e.g. ``which person that Heat
is directed by``, ``what person is Heat directed by`` and ``who directed Heat``.
"""

from __future__ import annotations

import random

from hybridrag.agents.shots.example import SolvedExample
from hybridrag.agents.shots.mask import mask_spans
from hybridrag.agents.shots.walk import Step, Walker
from hybridrag.agents.shots.wording import ask, natural, phrase, relation_words
from hybridrag.kb.base import KnowledgeBase

__all__ = ["ask", "phrase", "schema_paths", "synthesize", "write_question"]

MAX_ANSWERS = 60
HUB_DEGREE = 20.0  # a step reaching this many entities on average (year -> its movies) is a hub
MAX_FRONTIER = 2000  # an intermediate hop wider than this goes through a hub: not a question
TRIES_PER_PATH = 25
MAX_PATHS_PER_HOP = 150
MAX_PREFIXES = 2000  # paths of one length extended to the next (a bound on the enumeration)
STYLES = (0, 1, 2)  # a noun phrase, a direct question, and the usual wording where there is one (wording.py)

SchemaPath = tuple[str, tuple[tuple[Step, str], ...]]  # start type, ((step, type reached), ...)


def schema_paths(walker: Walker, max_hops: int = 3, seed: int = 0) -> list[SchemaPath]:
    """Every typed relation path of 1..``max_hops`` steps the schema allows, shortest first.

    Paths grow one step a level. A level of more than ``MAX_PREFIXES`` paths is extended from a seeded
    sample of that many: a KB with hundreds of relations (an extracted graph) has millions of 3-step
    paths, and the bank keeps at most ``MAX_PATHS_PER_HOP`` a length anyway.
    """
    rng = random.Random(seed)
    level: list[SchemaPath] = [(t, ()) for t in sorted(walker.schema.entity_types)]
    out: list[SchemaPath] = []
    for _ in range(max_hops):
        grown: list[SchemaPath] = []
        for start, steps in level:
            at = steps[-1][1] if steps else start
            for step, reached in walker.steps_from(at):
                if steps and walker.mean_degree(step) > HUB_DEGREE:
                    continue  # through a hub (all movies of a year or genre) only from the topic itself
                if len(steps) >= 2 and steps[-2][0] == step and steps[-1][0][0] == step[0]:
                    continue  # there and back and there again: the same entities as one step
                grown += [(start, (*steps, (step, t))) for t in reached]
        out += grown
        if len(grown) > MAX_PREFIXES:
            kept = sorted(rng.sample(range(len(grown)), MAX_PREFIXES))
            grown = [grown[i] for i in kept]
        level = grown
    return out


def _units(steps: tuple[tuple[Step, str], ...]) -> list[tuple[str, Step, str, str]]:
    """Steps grouped for writing: ("share", step, middle type, reached) for there-and-back pairs, else ("step", ...)."""
    out, i = [], 0
    while i < len(steps):
        (rel, direction), reached = steps[i]
        if i + 1 < len(steps) and steps[i + 1][0] == (rel, "in" if direction == "out" else "out"):
            out.append(("share", (rel, direction), reached, steps[i + 1][1]))
            i += 2
        else:
            out.append(("step", (rel, direction), "", reached))
            i += 1
    return out


def write_question(name: str, steps: tuple[tuple[Step, str], ...], style: int = 0) -> tuple[str, str] | None:
    """(question, masked question) for a topic name and a typed path, or None when ``style`` has no wording.

    ``style`` 0 writes one noun phrase (``which person that <E> is directed by``), 1 a direct
    question on the last step (``what person is <E> directed by``), 2 the usual question on the
    last step (``who directed <E>``; only for a ``<participle> by`` step walked from its head).
    """
    texts = []
    units = _units(steps)
    kind, (rel, direction), _, reached = units[-1]
    if style == 2 and (kind != "step" or natural("", rel, direction, reached) is None):
        return None
    for inner in (name, "\0"):
        np_ = inner
        for n, (kind, (rel, direction), mid, reached) in enumerate(units):
            last = n == len(units) - 1
            if kind == "share":
                head = f"what {reached} shares" if last and style else f"the {reached} that shares"
                np_ = f"{head} a {mid} ({relation_words(rel)}) with {np_}"
            elif last and style == 2:
                np_ = natural(np_, rel, direction, reached) or np_
            elif last and style:
                np_ = ask(np_, rel, direction, reached)
            else:
                np_ = phrase(np_, rel, direction, reached)
        texts.append(np_ if style else "which " + np_.removeprefix("the "))
    question, marked = texts
    at = marked.index("\0")
    return question, mask_spans(marked, [(at, at + 1)])


_POOLS: dict[tuple[str, str], dict[str, list[str]]] = {}


def entities_by_type(kb: KnowledgeBase, walker: Walker) -> dict[str, list[str]]:
    """Entity ids of each type (from the KB's entity documents when the store cannot list them)."""
    cache = _POOLS.setdefault((str(kb.directory), kb.build_token), {})
    if not cache:
        if walker.fast:
            ents = walker.graph.entities
        else:
            ids = [d.id for d in kb.docs if d.kind == "entity"]
            ents = list(kb.graph.get_many(ids).values())
        for e in ents:
            cache.setdefault(e.type, []).append(e.id)
    return cache


def _examples(
    kb: KnowledgeBase, walker: Walker, topic_id: str, start: str, steps: tuple[tuple[Step, str], ...], answers
) -> list[SolvedExample]:
    """The solved path written in each style that has a wording for it (see :func:`write_question`)."""
    name = kb.name(topic_id)
    names = tuple(sorted(kb.name(i) for i in walker.ids(answers)))
    out = []
    for style in STYLES:
        written = write_question(name, steps, style)
        if written is None:
            continue
        question, masked = written
        out.append(
            SolvedExample(
                question=question,
                masked=masked,
                topic=(name,),
                topic_types=(start,),
                relations=tuple(s[0][0] for s in steps),
                answer_type=steps[-1][1],
                answers=names,
                source="schema",
                directions=tuple(s[0][1] for s in steps),
            )
        )
    return out


def synthesize(
    kb: KnowledgeBase, per_path: int = 2, max_hops: int = 3, seed: int = 0, walker: Walker | None = None
) -> list[SolvedExample]:
    """Up to ``per_path`` solved examples per schema path of 1..``max_hops`` steps (seeded)."""
    walker = walker or Walker(kb.graph)
    rng = random.Random(seed)
    every, paths = schema_paths(walker, max_hops), []
    for hops in range(1, max_hops + 1):  # a cap per length: the many long paths would swamp the short ones
        level = [p for p in every if len(p[1]) == hops]
        paths += level if len(level) <= MAX_PATHS_PER_HOP else rng.sample(level, MAX_PATHS_PER_HOP)
    pools = entities_by_type(kb, walker)
    out: list[SolvedExample] = []
    starters: dict[tuple[str, Step], list[str]] = {}
    for start, steps in paths:
        pool = starters.get((start, steps[0][0]))
        if pool is None:
            pool = starters[(start, steps[0][0])] = walker.has_step(pools.get(start, []), steps[0][0])
        found = 0
        for topic_id in rng.sample(pool, min(TRIES_PER_PATH, len(pool))):
            end = walker.walk([topic_id], [s for s, _ in steps], cap=MAX_FRONTIER)
            if end is None:
                continue
            answers = walker.of_type(end, steps[-1][1])
            if 1 <= len(answers) <= MAX_ANSWERS:
                out += _examples(kb, walker, topic_id, start, steps, answers)
                found += 1
                if found >= per_path:
                    break
    return out
