"""Which ranked items are relevant to a question, and which gold answers are reachable at all.

Relevance of one ranked item (``{"id", "kind", "name", ...}``) to the gold answers:

1. By identity: the item's id is a gold entity. Gold ids are the question's ``answer_ids``
   plus every KB entity whose id, name or alias equals a gold answer name, compared
   case-insensitively through the graph's lookup (MetaQA answers sometimes differ from
   entity names only by case).
2. By text, for evidence items (any kind but ``entity``: passages, triples, documents):
   the item's text (its ``text`` field, else the KB document with its id, else its
   ``name``) contains a gold answer name as a whole phrase, case-insensitively, with no
   word character on either side. This is the fusion paper's "evidence bearing the answer".

An item is labelled with the gold keys it covers (the answer id when the question has
``answer_ids``, else the answer name), which is what :mod:`evals.metrics` scores.

Reachable-answer ceiling (MetaQA): a gold answer is reachable when one of its entities lies
within ``hops`` edges (either direction) of the topic entity in a given graph, the
``ego_graph`` of radius ``hops``; a question without topic or hop count has no ceiling.
"""

from __future__ import annotations

import re
import threading
from collections import defaultdict
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np
from scipy import sparse

from hybridrag.evals.datasets import Question
from hybridrag.kb.memory_store import InMemoryGraphStore
from hybridrag.kb.store import GraphStore
from hybridrag.tools.text import name_pattern


@dataclass(frozen=True)
class Gold:
    """One gold answer: its key in records, its name and the KB entity ids that denote it."""

    key: str
    name: str
    ids: frozenset[str]
    pattern: re.Pattern | None


def phrase_pattern(name: str) -> re.Pattern | None:
    """A case-insensitive whole-phrase regex for ``name`` (None for an empty name)."""
    name = name.strip()
    return name_pattern(name) if name else None


def gold_answers(q: Question, graph: GraphStore) -> list[Gold]:
    """The gold answers of ``q`` with their entity ids in ``graph``."""
    out = []
    if q.answer_ids:
        for i, aid in enumerate(q.answer_ids):
            ent = graph.get(aid)
            name = q.answers[i] if len(q.answers) == len(q.answer_ids) else (ent.name if ent else "")
            out.append(Gold(aid, name, frozenset({aid}), phrase_pattern(name)))
        return out
    for name in dict.fromkeys(q.answers):
        ids = frozenset(e.id for e in graph.lookup(name))
        out.append(Gold(name, name, ids, phrase_pattern(name)))
    return out


class Judge:
    """Labels ranked items with the gold answers they cover and computes the ceiling."""

    def __init__(
        self,
        graph: GraphStore,
        doc_text: Mapping[str, str] | None = None,
        ceiling_graph: GraphStore | None = None,
    ) -> None:
        """Judge against ``graph`` (the KB used); ``ceiling_graph`` defaults to it."""
        self.graph, self.doc_text = graph, doc_text or {}
        self.ceiling_graph = ceiling_graph or graph
        self._adjacency: dict[int, sparse.csr_matrix] = {}
        self._lock = threading.Lock()
        self._documents: dict[str, str] | None = None

    @classmethod
    def for_kb(cls, kb, ceiling_graph: GraphStore | None = None) -> Judge:
        """Judge for an opened :class:`kb.base.KnowledgeBase` (document texts by id)."""
        return cls(kb.graph, {d.id: d.text for d in kb.docs}, ceiling_graph)

    def covers(self, item: Mapping, golds: Sequence[Gold]) -> list[str]:
        """Gold keys one ranked item covers (see the module docstring)."""
        iid = str(item.get("id", ""))
        keys = [g.key for g in golds if iid in g.ids]
        if keys or item.get("kind") == "entity":
            return keys
        text = item.get("text") or self.doc_text.get(iid) or item.get("name") or ""
        return [g.key for g in golds if g.pattern is not None and g.pattern.search(text)]

    def label(self, q: Question, ranked: Sequence[Mapping]) -> list[list[str]]:
        """Gold keys covered by each ranked item, in rank order."""
        golds = gold_answers(q, self.graph)
        return [self.covers(item, golds) for item in ranked]

    def reachable(self, q: Question, graph: GraphStore | None = None) -> list[str] | None:
        """Gold keys within ``q.hops`` of the topic entity in ``graph`` (None: no ceiling)."""
        graph = graph or self.ceiling_graph
        if q.topic is None or q.hops is None:
            return None
        seeds = [e.id for e in graph.lookup(q.topic)]
        near = self._within(graph, seeds, q.hops)
        return [g.key for g in gold_answers(q, graph) if any(near(i) for i in g.ids)]

    def judge(self, q: Question, ranked: Sequence[Mapping]) -> dict:
        """Everything a record needs to be scored without the KB."""
        golds = gold_answers(q, self.graph)
        reachable_kg = self.reachable(q, self.graph)
        same = self.ceiling_graph is self.graph
        gold = {"answers": list(q.answers), "answer_ids": list(q.answer_ids), "keys": [g.key for g in golds]}
        if q.supporting:  # documents KBs: which documents support the answer, which were planted
            gold.update(supporting=list(q.supporting), planted=list(q.planted), unsupported=list(q.unsupported))
        return {
            "gold": gold,
            "relevant": [self.covers(item, golds) for item in ranked],
            "reachable": reachable_kg if same else self.reachable(q, self.ceiling_graph),
            "reachable_kg": reachable_kg,
        }

    def planted_answer(self, gold: dict, answer: str) -> bool:
        """Whether ``answer`` is stated by a planted document of the question and by none of its real ones."""
        from hybridrag.evals.documents_qa import planted_answer

        if self._documents is None:
            grouped: dict[str, list[str]] = defaultdict(list)
            for doc_id, text in self.doc_text.items():
                grouped[doc_id.split("#", 1)[0]].append(text)
            self._documents = {d: " ".join(parts) for d, parts in grouped.items()}
        return planted_answer(answer, self._documents, gold)

    def _within(self, graph: GraphStore, seeds: list[str], hops: int) -> Callable[[str], bool]:
        """A test of whether an entity id lies within ``hops`` of the seeds."""
        if not isinstance(graph, InMemoryGraphStore):
            return set(graph.ego_graph(seeds, radius=hops).distance).__contains__
        # Level-synchronous BFS on a sparse adjacency: ego_graph builds every triple of a
        # 3-hop neighbourhood (most of MetaQA), far too slow to run once per question.
        adj = self._adjacency_of(graph)
        visited = np.zeros(adj.shape[0], dtype=bool)
        frontier = np.array([graph.index_of[s] for s in seeds if s in graph.index_of], dtype=np.int64)
        visited[frontier] = True
        for _ in range(hops):
            if not len(frontier):
                break
            nbrs = np.unique(adj[frontier].indices)
            frontier = nbrs[~visited[nbrs]]
            visited[frontier] = True
        return lambda eid: eid in graph.index_of and bool(visited[graph.index_of[eid]])

    def _adjacency_of(self, graph: InMemoryGraphStore) -> sparse.csr_matrix:
        with self._lock:
            if id(graph) not in self._adjacency:
                n = len(graph.entities)
                ones = np.ones(len(graph.heads), dtype=np.int8)
                a = sparse.csr_matrix((ones, (graph.heads, graph.tails)), shape=(n, n))
                self._adjacency[id(graph)] = (a + a.T).tocsr()
            return self._adjacency[id(graph)]
