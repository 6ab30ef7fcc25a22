"""Walking relation paths over a KB graph, vectorised for the embedded store.

A frontier is a sorted int array of entity indexes for the in-memory store (one sparse
matrix per relation and direction, so a step over thousands of entities is one C call), or a
frozenset of entity ids for any other :class:`kb.store.GraphStore` (one ``neighbors`` call
per step).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable

import numpy as np
from scipy import sparse

from hybridrag.kb.model import Schema
from hybridrag.kb.store import GraphStore

Step = tuple[str, str]  # (relation, "out" | "in")
MIN_SHARE = 0.10


class Walker:
    """Relation steps over one graph store; frontiers stay opaque to callers."""

    def __init__(self, graph: GraphStore) -> None:
        """Index the store: sparse adjacency per relation when it is the embedded store."""
        self.graph = graph
        self.schema: Schema = graph.schema()
        self.fast = all(hasattr(graph, a) for a in ("heads", "rels", "tails", "entities", "index_of"))
        self._adj: dict[Step, sparse.csr_matrix] = {}
        self._ends: dict[Step, tuple[str, ...]] = {}
        if self.fast:
            n = len(graph.entities)
            self._types = np.array([e.type for e in graph.entities], dtype=object)
            for r, name in enumerate(graph.relation_names):
                keep = graph.rels == r
                h, t = graph.heads[keep], graph.tails[keep]
                ones = np.ones(len(h), dtype=np.int8)
                self._adj[(name, "out")] = sparse.csr_matrix((ones, (h, t)), shape=(n, n))
                self._adj[(name, "in")] = sparse.csr_matrix((ones, (t, h)), shape=(n, n))
                self._ends[(name, "out")] = self._main_types(h, t)
                self._ends[(name, "in")] = self._main_types(t, h)

    def _main_types(self, src: np.ndarray, dst: np.ndarray) -> tuple[str, ...]:
        """Encoded (source type, target type) pairs covering at least MIN_SHARE of a relation's edges.

        Entity ids are names, so a movie called "1984" makes ``release_year`` look like it
        reaches movies too; such rare pairs are no schema step.
        """
        pairs = Counter(zip(self._types[src].tolist(), self._types[dst].tolist(), strict=True))
        total = max(sum(pairs.values()), 1)
        return tuple(f"{a}\t{b}" for (a, b), c in pairs.items() if c / total >= MIN_SHARE)

    def start(self, entity_ids: Iterable[str]):
        """The frontier holding these entities (unknown ids left out)."""
        if self.fast:
            idx = [self.graph.index_of[i] for i in entity_ids if i in self.graph.index_of]
            return np.unique(np.asarray(idx, dtype=np.int64))
        return frozenset(entity_ids)

    def step(self, frontier, relation: str, direction: str):
        """Entities one ``relation`` edge away from ``frontier`` in ``direction``."""
        if self.fast:
            adj = self._adj.get((relation, direction))
            if adj is None or not len(frontier):
                return np.zeros(0, np.int64)
            starts, ends = adj.indptr[frontier], adj.indptr[frontier + 1]
            lens = ends - starts
            total = int(lens.sum())
            if not total:
                return np.zeros(0, np.int64)
            # positions of every neighbour in adj.indices, without a Python loop over the frontier
            offsets = np.repeat(starts - np.concatenate(([0], np.cumsum(lens)[:-1])), lens)
            return np.unique(adj.indices[offsets + np.arange(total)]).astype(np.int64)
        triples = self.graph.neighbors(frontier, [relation], direction)
        return frozenset(t.tail if direction == "out" else t.head for t in triples)

    def minus(self, frontier, other):
        """``frontier`` without the entities of ``other``."""
        if self.fast:
            if len(other) <= 4:  # a topic: one or a few entities
                for i in other.tolist():
                    frontier = frontier[frontier != i]
                return frontier
            return np.setdiff1d(frontier, other, assume_unique=True)
        return frontier - other

    def ids(self, frontier) -> list[str]:
        """Entity ids of a frontier."""
        if self.fast:
            ents = self.graph.entities
            return [ents[i].id for i in frontier.tolist()]
        return sorted(frontier)

    def types(self, frontier) -> Counter:
        """Entity types in a frontier, with counts."""
        if self.fast:
            return Counter(self._types[frontier].tolist())
        return Counter(e.type for e in self.graph.get_many(frontier).values())

    def mean_degree(self, step: Step) -> float:
        """Mean number of neighbours one ``step`` reaches from an entity that has the step (0 when unknown)."""
        adj = self._adj.get(step)
        if adj is None:
            return 0.0
        deg = np.diff(adj.indptr)
        return float(deg[deg > 0].mean()) if (deg > 0).any() else 0.0

    def has_step(self, entity_ids: list[str], step: Step) -> list[str]:
        """The entities of ``entity_ids`` with at least one edge for ``step`` (all of them when unknown)."""
        adj = self._adj.get(step)
        if not self.fast or adj is None:
            return entity_ids
        idx = np.array([self.graph.index_of[i] for i in entity_ids], dtype=np.int64)
        keep = np.diff(adj.indptr)[idx] > 0
        return [i for i, k in zip(entity_ids, keep.tolist(), strict=True) if k]

    def of_type(self, frontier, entity_type: str):
        """The entities of ``frontier`` that have type ``entity_type``."""
        if self.fast:
            return frontier[self._types[frontier] == entity_type]
        return frozenset(i for i, e in self.graph.get_many(frontier).items() if e.type == entity_type)

    def steps_from(self, entity_type: str) -> list[tuple[Step, tuple[str, ...]]]:
        """Schema steps leaving ``entity_type``: ((relation, direction), types reached)."""
        out = []
        for rel in self.schema.relation_types.values():
            for direction, here, there in (
                ("out", rel.head_types, rel.tail_types),
                ("in", rel.tail_types, rel.head_types),
            ):
                ends = self._ends.get((rel.name, direction))
                if ends is not None:  # the types the edges really join, rare pairs left out
                    reached = tuple(e.split("\t")[1] for e in ends if e.split("\t")[0] == entity_type)
                else:
                    reached = tuple(there) if entity_type in here else ()
                if reached:
                    out.append(((rel.name, direction), reached))
        return out

    def walk(self, topic_ids: Iterable[str], steps: Iterable[Step], cap: int | None = None):
        """Follow ``steps`` from the topic; the end frontier without the topic (None past ``cap``)."""
        topic = self.start(topic_ids)
        frontier = topic
        for rel, direction in steps:
            frontier = self.minus(self.step(frontier, rel, direction), topic)
            if cap is not None and len(frontier) > cap:
                return None
        return frontier
