"""The fusion method's scoring steps (no LLM): vector branch, seeded 1-hop Dice, ε-biased union."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from kb.base import KnowledgeBase
from kb.memory_store import InMemoryGraphStore
from kb.model import Triple
from tools.dice import LabelTable, Tokenizer, dice, tokens

_TABLES: dict[tuple[int, str], LabelTable] = {}


@dataclass
class Candidate:
    """One ranked item: an entity or a passage, with the branch that scored it."""

    id: str
    kind: str
    name: str
    score: float
    source: str
    text: str = ""
    path: list[str] = field(default_factory=list)
    entity_id: str | None = None

    def as_ranked(self) -> dict:
        """The common ``ranked`` entry."""
        return {"id": self.id, "kind": self.kind, "name": self.name, "score": self.score, "source": self.source}

    def as_evidence(self) -> dict:
        """The common ``evidence`` entry."""
        src = "kg" if self.source == "graph" else "doc"
        return {"source": src, "id": self.id, "text": self.text or self.name, "score": self.score, "path": self.path}


def hits_to_candidates(kb: KnowledgeBase, hits, source: str) -> list[Candidate]:
    """Turn text-search hits into candidates (entity documents → entities, passages stay passages)."""
    out = []
    for h in hits:
        d = h.doc
        if d.kind == "entity":
            name = kb.name(d.id)
        else:
            name = f"passage about {kb.name(d.entity_id)}" if d.entity_id else _snippet(d.text)
        out.append(Candidate(d.id, d.kind, name, float(h.score), source, d.text, [], d.entity_id))
    return out


def _snippet(text: str, words: int = 8) -> str:
    parts = text.split()
    return " ".join(parts[:words]) + (" …" if len(parts) > words else "")


def seeds_of(candidates: list[Candidate]) -> list[str]:
    """E_seed: entities of the vector branch (a passage seeds the entity it is about)."""
    return list(dict.fromkeys(c.entity_id for c in candidates if c.entity_id))


def _label_table(kb: KnowledgeBase, tokenizer: Tokenizer) -> LabelTable:
    key = (id(kb), tokenizer)
    if key not in _TABLES:
        _TABLES[key] = LabelTable([e.name for e in kb.graph.entities], tokenizer)  # type: ignore[attr-defined]
    return _TABLES[key]


def score_one_hop(
    kb: KnowledgeBase, question: str, seeds: list[str], limit: int, tokenizer: Tokenizer = "bigram"
) -> list[tuple[Triple, float, str]]:
    """Triples around the seeds (either direction) ranked by mean Dice of seed, relation, neighbour.

    Returns (triple in its stored direction, s_graph, the neighbour entity id) — the neighbour is
    the candidate, the triple is its evidence.
    """
    store = kb.graph
    if isinstance(store, InMemoryGraphStore):
        return _score_in_memory(kb, store, question, seeds, limit, tokenizer)
    via_cypher = getattr(store, "one_hop_dice", lambda *a: None)(seeds, question, limit)
    if via_cypher is not None and tokenizer == "bigram":  # Figure 2's query returns seed-first triples
        return [(t, s, t.tail) for t, s in via_cypher]
    q = tokens(question, tokenizer)
    per_seed = {seed: store.neighbors([seed]) for seed in dict.fromkeys(seeds)}  # like UNWIND $seeds
    names = kb.names({e for ts in per_seed.values() for t in ts for e in (t.head, t.tail)} | set(per_seed))
    scored = []
    for seed, triples in per_seed.items():
        seed_dice = dice(q, tokens(names[seed], tokenizer))
        for t in triples:
            other = t.tail if t.head == seed else t.head
            s = (seed_dice + dice(q, tokens(t.type.replace("_", " "), tokenizer))
                 + dice(q, tokens(names[other], tokenizer))) / 3.0
            scored.append((t, s, other))
    scored.sort(key=lambda x: -x[1])
    return scored[:limit]


def _score_in_memory(kb, store: InMemoryGraphStore, question, seeds, limit, tokenizer):
    table = _label_table(kb, tokenizer)
    q = tokens(question, tokenizer)
    seed_idx, edges, nbrs = [], [], []
    for s in seeds:
        i = store.index_of.get(s)
        if i is None:
            continue
        e, n = store.edge_ids([i])
        seed_idx.append(np.full(len(e), i, dtype=np.int64))
        edges.append(e)
        nbrs.append(n)
    if not edges:
        return []
    seed_a, edge_a, nbr_a = np.concatenate(seed_idx), np.concatenate(edges), np.concatenate(nbrs).astype(np.int64)
    rel_scores = np.array([dice(q, tokens(r.replace("_", " "), tokenizer)) for r in store.relation_names])
    total = table.scores(q, seed_a) + rel_scores[store.rels[edge_a]] + table.scores(q, nbr_a)
    score = total / 3.0
    k = min(limit, len(score))
    top = np.argpartition(-score, k - 1)[:k]
    top = top[np.argsort(-score[top], kind="stable")]
    ents, rels = store.entities, store.relation_names
    return [
        (Triple(ents[store.heads[edge_a[j]]].id, rels[store.rels[edge_a[j]]], ents[store.tails[edge_a[j]]].id),
         float(score[j]), ents[nbr_a[j]].id)
        for j in top
    ]


def fuse(vector: list[Candidate], graph: list[Candidate], epsilon: float, k: int) -> list[Candidate]:
    """R = V ∪ G with s_final = s_graph + ε for graph items; dedupe keeping the max; top-k."""
    best: dict[str, Candidate] = {}
    for c in [*vector, *(_biased(g, epsilon) for g in graph)]:
        if c.id not in best or c.score > best[c.id].score:
            best[c.id] = c
    return sorted(best.values(), key=lambda c: (-c.score, c.source != "graph"))[:k]


def _biased(c: Candidate, epsilon: float) -> Candidate:
    return Candidate(c.id, c.kind, c.name, c.score + epsilon, c.source, c.text, c.path, c.entity_id)
