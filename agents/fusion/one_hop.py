"""Fusion's one-hop graph branch over the in-memory store: every edge around the seeds, scored by Dice.

s_graph (Eq. 3) is the mean Dice of the question with seed, relation and neighbour labels; the
answer-aware score is (Dice(seed) + Dice(relation label and the neighbour's type) + the lexicon's
cue bonus) / 2, the neighbour's own Dice only ordering ties (:mod:`agents.fusion.paths`; the bonus:
:mod:`tools.lexicon`, "who made X" cues ``directed_by``). A MetaQA seed has a handful
of edges, where numpy's per-call cost outweighs the work: up to :data:`LISTED_EDGES` edges are
scored in plain Python, more over the CSR arrays; both give the same floats and the same order.
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np

from hybridrag.kb.base import KnowledgeBase
from hybridrag.kb.memory_store import InMemoryGraphStore
from hybridrag.kb.model import Triple
from hybridrag.tools.dice import LabelTable, Tokenizer, dice, tokens
from hybridrag.tools.lexicon import asked_text, cue_bonus

LISTED_EDGES = 64  # at most this many edges are scored without numpy
_TABLES: dict[tuple[int, str], LabelTable] = {}
_KINDS: dict[int, tuple[list[str], np.ndarray]] = {}


def label_table(kb: KnowledgeBase, tokenizer: Tokenizer) -> LabelTable:
    """Token sets of every entity name of an in-memory graph (built once per KB and tokenizer)."""
    key = (id(kb), tokenizer)
    if key not in _TABLES:
        _TABLES[key] = LabelTable([e.name for e in kb.graph.entities], tokenizer)  # type: ignore[attr-defined]
    return _TABLES[key]


def entity_kinds(kb: KnowledgeBase) -> tuple[list[str], np.ndarray]:
    """The entity types of an in-memory graph and each entity's type index."""
    if id(kb) not in _KINDS:
        names = [e.type or "" for e in kb.graph.entities]  # type: ignore[attr-defined]
        kinds = sorted(set(names))
        index = {k: i for i, k in enumerate(kinds)}
        _KINDS[id(kb)] = kinds, np.array([index[n] for n in names], dtype=np.int64)
    return _KINDS[id(kb)]


def rel_dice(q: frozenset[str], relation: str, tokenizer: Tokenizer, kind: str = "") -> float:
    """Dice of the question with a relation label (and, answer-aware, the type of the entity it leads to)."""
    return dice(q, _rel_tokens(relation, kind, tokenizer))


@lru_cache(maxsize=4096)
def _rel_tokens(relation: str, kind: str, tokenizer: Tokenizer) -> frozenset[str]:
    """Tokens of a relation label and an entity type (a KB has few of each: tokenised once)."""
    return tokens(f"{relation.replace('_', ' ')} {kind}", tokenizer)


@lru_cache(maxsize=16384)
def _label_tokens(name: str, tokenizer: Tokenizer) -> frozenset[str]:
    return tokens(name, tokenizer)


def top_positions(score: np.ndarray, tie: np.ndarray, limit: int) -> np.ndarray:
    """Positions of the ``limit`` best scores, ties broken by ``tie`` (higher first), then by position."""
    k = min(limit, len(score))
    if k <= 0:
        return np.zeros(0, np.int64)
    cut = np.partition(-score, k - 1)[k - 1]
    pool = np.flatnonzero(-score <= cut)
    return pool[np.lexsort((-tie[pool], -score[pool]))][:k]


def one_hop_in_memory(
    kb, store: InMemoryGraphStore, question: str, seeds: list[str], limit: int, tokenizer: Tokenizer, answer_aware: bool
) -> list[tuple[Triple, float, str]]:
    """(triple in its stored direction, score, the neighbour's id) of the best ``limit`` edges around the seeds."""
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
    bonus = _cue_bonuses(kb, store, question, seed_a, edge_a, nbr_a) if answer_aware else np.zeros(len(edge_a))
    if len(edge_a) <= LISTED_EDGES:
        score, tie = _listed_scores(kb, store, q, tokenizer, seed_a, edge_a, nbr_a, answer_aware, bonus.tolist())
        listed = sorted(range(len(score)), key=lambda j: (-score[j], -tie[j]))[: max(limit, 0)]
        top: list[int] | np.ndarray = listed
        best_scores = [score[j] for j in listed]
    else:
        table = label_table(kb, tokenizer)
        nbr_dice, seed_dice = np.split(table.scores(q, np.concatenate((nbr_a, seed_a))), [len(nbr_a)])
        total = seed_dice + _edge_rel_dice(kb, store, q, tokenizer, edge_a, nbr_a, answer_aware) + bonus
        score_a = total / 2.0 if answer_aware else (total + nbr_dice) / 3.0
        top = top_positions(score_a, nbr_dice if answer_aware else np.zeros(len(score_a)), limit)
        best_scores = score_a[top].tolist()
    ents, rels, best = store.entities, store.relation_names, edge_a[top]
    return [
        (Triple(ents[h].id, rels[r], ents[t].id), s, ents[n].id)
        for h, r, t, s, n in zip(
            store.heads[best].tolist(),
            store.rels[best].tolist(),
            store.tails[best].tolist(),
            best_scores,
            nbr_a[top].tolist(),
            strict=True,
        )
    ]


def _listed_scores(kb, store: InMemoryGraphStore, q, tokenizer, seed_a, edge_a, nbr_a, answer_aware, bonus):
    """Each edge's score and tie-breaker as Python floats (the same operations as the array path)."""
    ents, names = store.entities, store.relation_names
    kinds, kind_of = entity_kinds(kb) if answer_aware else ([], np.zeros(0, np.int64))
    label: dict[int, float] = {}

    def label_dice(i: int) -> float:
        if i not in label:
            label[i] = dice(q, _label_tokens(ents[i].name, tokenizer))
        return label[i]

    score, tie = [], []
    for s, r, n, b in zip(seed_a.tolist(), store.rels[edge_a].tolist(), nbr_a.tolist(), bonus, strict=True):
        total = label_dice(s) + rel_dice(q, names[r], tokenizer, kinds[kind_of[n]] if answer_aware else "") + b
        nbr = label_dice(n)
        score.append(total / 2.0 if answer_aware else (total + nbr) / 3.0)
        tie.append(nbr if answer_aware else 0.0)
    return score, tie


def _edge_rel_dice(kb, store: InMemoryGraphStore, q, tokenizer, edge_a, nbr_a, answer_aware) -> np.ndarray:
    """Each edge's relation term: Dice with its label, answer-aware with its label and the neighbour's type."""
    rels = store.rels[edge_a].astype(np.int64)
    if not answer_aware:
        return np.array([rel_dice(q, r, tokenizer) for r in store.relation_names])[rels]
    kinds, kind_of = entity_kinds(kb)
    pairs, inverse = np.unique(rels * len(kinds) + kind_of[nbr_a], return_inverse=True)
    names = store.relation_names
    return np.array([rel_dice(q, names[p // len(kinds)], tokenizer, kinds[p % len(kinds)]) for p in pairs])[inverse]


def _cue_bonuses(kb, store: InMemoryGraphStore, question: str, seed_a, edge_a, nbr_a) -> np.ndarray:
    """Each edge's lexicon bonus (:func:`tools.lexicon.cue_bonus`), read without its seed's name."""
    kinds, kind_of = entity_kinds(kb)
    names, rels = store.relation_names, store.rels[edge_a].astype(np.int64)
    keys = (seed_a * len(names) + rels) * len(kinds) + kind_of[nbr_a]
    uniq, inverse = np.unique(keys, return_inverse=True)
    asked: dict[int, str] = {}
    out = []
    for key in uniq.tolist():
        seed, rest = divmod(key, len(names) * len(kinds))
        if seed not in asked:
            asked[seed] = asked_text(question, store.entities[seed].name)
        out.append(cue_bonus(asked[seed], names[rest // len(kinds)], kinds[rest % len(kinds)]))
    return np.array(out)[inverse]
