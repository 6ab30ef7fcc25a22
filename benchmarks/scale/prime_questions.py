"""Questions over the synthetic Prime graph: seeded random walks, the walk's relation path as gold.

A question starts at a random entity (seeded) and walks ``hops`` edges, each drawn uniformly
from the edges touching the current entity (either direction, as MetaQA's paths run against
the edge direction too), never revisiting an entity. The gold record is the walk: topic, the
relation of every hop, the type of every entity on it, the entity reached as the answer. Its
text names the topic and the relations, so the query embedding has the words a user's question
would share with the graph.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, replace

from benchmarks.scale.modules import Case
from hybridrag.evals.oracle.gold import GoldRecord, relation_words


@dataclass(frozen=True)
class WalkRecord(GoldRecord):
    """A gold record whose entity types are given (a MetaQA record derives them from its question type)."""

    path_types: tuple[str, ...] = ()

    @property
    def types(self) -> tuple[str, ...]:
        """KB entity type of every position of the walk."""
        return self.path_types


def question_text(topic: str, relations: list[str], answer_type: str) -> str:
    """The question of a walk, e.g. ``Which effect phenotype is reached from Bacedi disease by phenotype present?``."""
    path = " then ".join(relation_words(r) for r in relations)
    return f"Which {answer_type.replace('_', ' ')} is reached from {topic} by {path}?"


def walk(store, start: int, hops: int, rng: random.Random) -> list[tuple[str, int]] | None:
    """``hops`` (relation, entity index) steps from entity index ``start``, or None at a dead end."""
    seen, here, steps = {start}, start, []
    for _ in range(hops):
        edges, nbrs = store.edge_ids([here])
        fresh = [i for i in range(len(nbrs)) if int(nbrs[i]) not in seen]
        if not fresh:
            return None
        i = rng.choice(fresh)
        here = int(nbrs[i])
        steps.append((store.relation_names[int(store.rels[edges[i]])], here))
        seen.add(here)
    return steps


def sample_cases(
    store, per_hop: int, seed: int = 0, max_tries: int = 1000, hops_list: tuple[int, ...] = (1, 2, 3)
) -> list[Case]:
    """``per_hop`` walk questions of each hop count in ``hops_list`` over an in-memory graph store (seeded).

    The walks of one hop count do not depend on which other counts are asked for.
    """
    n = len(store.entities)
    out: list[Case] = []
    for hops in hops_list:
        rng = random.Random(f"{seed}-{hops}")
        made = tries = 0
        while made < per_hop:
            tries += 1
            if tries > max_tries * per_hop:
                raise ValueError(
                    f"found only {made} of {per_hop} {hops}-hop walks in {tries - 1} tries: "
                    "the graph is too sparse for walks this long"
                )
            start = rng.randrange(n)
            steps = walk(store, start, hops, rng)
            if steps is None:
                continue
            topic = store.entities[start]
            ents = [topic] + [store.entities[i] for _, i in steps]
            rels = tuple(r for r, _ in steps)
            types = tuple(e.type for e in ents)
            text = question_text(topic.name, list(rels), types[-1])
            rec = WalkRecord(
                f"prime-{hops}hop-{made}", text, topic.name, types, rels, (ents[-1].name,), path_types=types
            )
            out.append(Case(text, rec, topic.id))
            made += 1
    return out


def renamed(c: Case, question: str) -> Case:
    """The case with its question text replaced (in the record too)."""
    return Case(question, replace(c.rec, question=question), c.topic)
