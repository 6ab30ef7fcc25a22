"""Seeded graph expansion for the fusion method, scored by Dice–Sørensen overlap with the question.

One hop is the paper's graph branch (Figure 2): every triple around the seeds, scored by
s_graph (Eq. 3), the mean Dice of the query with seed, relation and neighbour labels. The
answer-aware score drops the neighbour's name: (Dice(seed) + Dice(relation label and the
neighbour's type) + a cue bonus when the question uses an everyday word for the relation,
:mod:`tools.lexicon`) / 2, since a candidate whose own label overlaps the question is more likely
the thing asked about than its answer, while its type is part of what the question asks for
("what language ..."), as it is for a fact read from text (:mod:`agents.fusion.facts`).
Optionally up to three hops: each newly reached entity once, with its best path, scored by the
mean Dice of every label on the path (paper), or answer-aware by the mean of Dice(seed) and
Dice(the union of the path's relation labels; no type), so a path is not penalised for covering more of
the question. In memory the expansion is vectorised over the CSR arrays; any other graph store
goes through the ``GraphStore`` protocol (and the Figure 2 Cypher query when it has one). One hop in
memory: :mod:`agents.fusion.one_hop`.
"""

from __future__ import annotations

import numpy as np

from hybridrag.agents.fusion.one_hop import label_table, one_hop_in_memory, rel_dice, top_positions
from hybridrag.kb.base import KnowledgeBase
from hybridrag.kb.cancel import check_cancelled
from hybridrag.kb.memory_store import InMemoryGraphStore
from hybridrag.kb.model import Triple
from hybridrag.tools.dice import Tokenizer, dice, tokens
from hybridrag.tools.lexicon import asked_text, cue_bonus

Scored = tuple[list[Triple], float, str]  # (path from a seed, score, the entity reached)
MAX_HOPS = 3


def score_graph(
    kb: KnowledgeBase,
    question: str,
    seeds: list[str],
    limit: int,
    tokenizer: Tokenizer = "bigram",
    hops: int = 1,
    answer_aware: bool = False,
) -> list[Scored]:
    """The graph branch: entities within ``hops`` of the seeds, best ``limit`` first, with their path."""
    if not 1 <= hops <= MAX_HOPS:
        raise ValueError(f"hops must be between 1 and {MAX_HOPS}, got {hops}")
    if hops == 1:
        return [([t], s, n) for t, s, n in score_one_hop(kb, question, seeds, limit, tokenizer, answer_aware)]
    store = kb.graph
    if isinstance(store, InMemoryGraphStore):
        return _paths_in_memory(kb, store, question, seeds, limit, tokenizer, hops, answer_aware)
    return _paths_generic(kb, question, seeds, limit, tokenizer, hops, answer_aware)


def score_one_hop(
    kb: KnowledgeBase,
    question: str,
    seeds: list[str],
    limit: int,
    tokenizer: Tokenizer = "bigram",
    answer_aware: bool = False,
) -> list[tuple[Triple, float, str]]:
    """Triples around the seeds (either direction) ranked by mean Dice of seed, relation, neighbour.

    Returns (triple in its stored direction, s_graph, the neighbour entity id) — the neighbour is
    the candidate, the triple is its evidence. ``answer_aware`` drops the neighbour term from the
    score and uses it only to order ties.
    """
    store = kb.graph
    if isinstance(store, InMemoryGraphStore):
        return one_hop_in_memory(kb, store, question, seeds, limit, tokenizer, answer_aware)
    if not answer_aware and tokenizer == "bigram":
        via_cypher = getattr(store, "one_hop_dice", lambda *a: None)(seeds, question, limit)
        if via_cypher is not None:  # Figure 2's query returns seed-first triples
            return [(t, s, t.tail) for t, s in via_cypher]
    q = tokens(question, tokenizer)
    per_seed = {seed: store.neighbors([seed]) for seed in dict.fromkeys(seeds)}  # like UNWIND $seeds
    names = kb.names({e for ts in per_seed.values() for t in ts for e in (t.head, t.tail)} | set(per_seed))
    scored = []
    kinds = {e: (ent.type or "") if (ent := store.get(e)) else "" for e in names} if answer_aware else {}
    for seed, triples in per_seed.items():
        seed_dice = dice(q, tokens(names[seed], tokenizer))
        asked = asked_text(question, names[seed]) if answer_aware else ""
        for t in triples:
            other = t.tail if t.head == seed else t.head
            nbr = dice(q, tokens(names[other], tokenizer))
            total = seed_dice + rel_dice(q, t.type, tokenizer, kinds.get(other, ""))
            total += cue_bonus(asked, t.type, kinds.get(other, "")) if answer_aware else 0.0
            s = total / 2.0 if answer_aware else (total + nbr) / 3.0
            scored.append((t, s, other, nbr))
    scored.sort(key=lambda x: (-x[1], -x[3]))
    return [(t, s, o) for t, s, o, _ in scored[:limit]]


def _paths_in_memory(kb, store: InMemoryGraphStore, question, seeds, limit, tokenizer, hops, answer_aware):
    """Level-synchronous expansion over the CSR arrays; each entity keeps its best first-reached path."""
    table, q = label_table(kb, tokenizer), tokens(question, tokenizer)
    frontier = np.unique([store.index_of[s] for s in seeds if s in store.index_of]).astype(np.int64)
    if not len(frontier):
        return []
    n, n_rel = len(store.entities), len(store.relation_names)
    rel = np.array([rel_dice(q, r, tokenizer) for r in store.relation_names])
    run, score = np.zeros(n), np.zeros(n)  # running sum of Dice terms (paper) / path score
    level, parent, rels_of = np.zeros(n, np.int64), np.full(n, -1, np.int64), np.zeros(n, np.int64)
    seed_dice = np.zeros(n)
    seed_dice[frontier] = run[frontier] = table.scores(q, frontier)
    combos: dict[frozenset[int], int] = {frozenset(): 0}  # relation sets along paths (answer-aware)
    combo_dice = [0.0]
    seen = np.zeros(n, dtype=bool)
    seen[frontier] = True
    for h in range(1, hops + 1):
        check_cancelled()
        edges, nbr = store.edge_ids(frontier.tolist())
        edges, nbr = edges.astype(np.int64), nbr.astype(np.int64)
        keep = ~seen[nbr]
        edges, nbr = edges[keep], nbr[keep]
        if not len(nbr):
            break
        owner = np.where(store.heads[edges] == nbr, store.tails[edges], store.heads[edges])
        r = store.rels[edges].astype(np.int64)
        if answer_aware:  # (Dice(seed) + Dice(all relation labels of the path)) / 2
            pairs, inverse = np.unique(rels_of[owner] * n_rel + r, return_inverse=True)
            ids = np.array([_combo(combos, combo_dice, kb, q, tokenizer, p // n_rel, p % n_rel) for p in pairs])
            new_rels = ids[inverse]
            s = (seed_dice[owner] + np.asarray(combo_dice)[new_rels]) / 2.0
            total = s
        else:  # the mean of every label's Dice along the path (Eq. 3 for one hop)
            total = run[owner] + rel[r] + table.scores(q, nbr)
            s, new_rels = total / (1 + 2 * h), np.zeros(len(nbr), np.int64)
        order = np.lexsort((-s, nbr))  # grouped by entity, best path first
        first = order[np.r_[True, nbr[order][1:] != nbr[order][:-1]]]
        frontier = nbr[first]
        run[frontier], score[frontier], level[frontier] = total[first], s[first], h
        parent[frontier], rels_of[frontier] = edges[first], new_rels[first]
        seed_dice[frontier] = seed_dice[owner[first]]
        seen[frontier] = True
    reached = np.flatnonzero(level > 0)
    top = reached[top_positions(score[reached], level[reached].astype(float), limit)]
    ents, names = store.entities, store.relation_names
    out = []
    for node in top:
        path, cur = [], node
        while parent[cur] >= 0:
            e = parent[cur]
            path.append(Triple(ents[store.heads[e]].id, names[store.rels[e]], ents[store.tails[e]].id))
            cur = store.tails[e] if store.heads[e] == cur else store.heads[e]
        out.append((path[::-1], float(score[node]), ents[node].id))
    return out


def _combo(combos, combo_dice, kb, q, tokenizer, parent_id: int, rel: int) -> int:
    """Id of the relation set ``parent ∪ {rel}``, scoring a new set by Dice with its labels' tokens."""
    key = list(combos)[parent_id] | {rel}
    if key not in combos:
        combos[key] = len(combo_dice)
        names = kb.graph.relation_names
        combo_dice.append(dice(q, frozenset().union(*(tokens(names[i].replace("_", " "), tokenizer) for i in key))))
    return combos[key]


def _paths_generic(kb, question, seeds, limit, tokenizer, hops, answer_aware) -> list[Scored]:
    """The same expansion through the GraphStore protocol (any backend)."""
    q, store = tokens(question, tokenizer), kb.graph
    rel_toks = lambda path: frozenset().union(*(tokens(t.type.replace("_", " "), tokenizer) for t in path))  # noqa: E731
    frontier: dict[str, tuple[list[Triple], float, float]] = {}  # entity → (path, running sum of Dice terms, seed Dice)
    for s in dict.fromkeys(seeds):
        if store.get(s):
            d = dice(q, tokens(kb.name(s), tokenizer))
            frontier[s] = ([], d, d)
    seen, found = set(frontier), []
    for h in range(1, hops + 1):
        check_cancelled()
        triples = store.neighbors(list(frontier)) if frontier else []
        names = kb.names({e for t in triples for e in (t.head, t.tail)})
        nxt: dict[str, tuple[list[Triple], float, float, float]] = {}
        for t in triples:
            for here, there in ((t.head, t.tail), (t.tail, t.head)):
                if here not in frontier or there in seen:
                    continue
                path, run, seed_d = frontier[here]
                path = [*path, t]
                if answer_aware:
                    run = score = (seed_d + dice(q, rel_toks(path))) / 2.0
                else:
                    run += rel_dice(q, t.type, tokenizer) + dice(q, tokens(names[there], tokenizer))
                    score = run / (1 + 2 * h)
                if there not in nxt or score > nxt[there][3]:
                    nxt[there] = (path, run, seed_d, score)
        seen |= set(nxt)
        found += [(p, s, e) for e, (p, _, _, s) in nxt.items()]
        frontier = {e: v[:3] for e, v in nxt.items()}
    found.sort(key=lambda x: (-x[1], -len(x[0])))
    return found[:limit]
