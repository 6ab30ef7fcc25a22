"""SSRAG graph branch: the relevant nodes and their relations (Algorithm 3's relevantNodes, GetRelation).

A node's knowledge is its facts (read by :mod:`agents.ssrag.facts`: KG triples as "subject
relation object" sentences and, with ``text_edges``, sentences of passages). Nodes are chosen
hop by hop from the seeds (the query's linked entities): at each hop the unvisited neighbours of
the last hop's nodes (KG neighbours, and entities named in their text facts) are ranked per
parent by the cosine to the question of the fact leading to them, and the next hop takes each
parent's best candidate in turn, parents in order of their path relevance (the sum of the fact
cosines walked), then each one's second, and so on (a diverse beam: one parent with many
lexically similar neighbours, e.g. a genre hub, cannot fill the hop). The seeds come first, then
each hop's nodes, best first, at most ``k`` in all; the room left after the seeds is shared
equally by the hops.

``hops=1`` is the paper's reading (the seeds' one-hop neighbourhood): a node's facts already
reach one edge further, so a one-hop neighbourhood covers answers two edges from the topic
and no further. ``hops=2`` (the default) reaches three edges.

Each kept node keeps its ``max_facts`` facts most relevant to the question (cosine of the
fact's sentence to the question vector; the first ``FACT_POOL`` KG facts and the text facts
are scored), most relevant first. A fact's vector is the sum of its parts by default
(:func:`agents.ssrag.vectors.fact_vectors`, ``scoring="parts"``); ``"sentence"`` encodes it
whole.
"""

from __future__ import annotations

import numpy as np

from hybridrag.agents.ssrag.facts import (  # noqa: F401 - re-exported: callers and tests import them from here
    FACT_POOL,
    TEXT_HITS,
    TEXT_POOL,
    _text_facts,
    build_fact_table,
    facts_of,
    passage_sentences,
    prefetch,
    sentence,
    split_by_node,
    text_facts,
)
from hybridrag.agents.ssrag.vectors import fact_parts, fact_vectors
from hybridrag.kb.base import KnowledgeBase
from hybridrag.kb.cancel import check_cancelled


def nodes_facts(
    kb: KnowledgeBase,
    nodes: list[str],
    max_facts: int,
    qv: np.ndarray | None = None,
    text_edges: bool = False,
    search: bool = True,
    scoring: str = "parts",
) -> list[dict]:
    """GetRelation for each of ``nodes``: the node with up to ``max_facts`` of its relations.

    With a question vector ``qv`` the facts kept are the most relevant ones (cosine of each
    fact's vector to ``qv``, ties in storage order, KG facts before text facts), most relevant
    first; without, the first ones. ``triples`` holds ``[head, relation, tail]`` for a KG
    fact and ``None`` for a text fact; ``links`` maps every neighbour a scored fact leads to
    onto the best score of such a fact (the walk's next candidates). The facts of all the
    nodes are scored together (one batch for whatever has no vector yet).
    """
    node_names = prefetch(kb, nodes)  # one neighbours read and one names read for all of them, not one per node
    per = [
        facts_of(kb, n, FACT_POOL if qv is not None else max_facts, text_edges, search, node_names[n]) for n in nodes
    ]
    every = [f for facts, _ in per for f in facts]
    scored = qv is not None and bool(every)
    all_scores = fact_vectors(kb, every, [r for _, rows in per for r in rows], scoring) @ qv if scored else None
    out, at = [], 0
    for node, (facts, rows) in zip(nodes, per, strict=True):
        check_cancelled()
        scores, order = np.zeros(len(facts)), list(range(len(facts)))
        if all_scores is not None:
            scores = all_scores[at : at + len(facts)]
            order = [int(i) for i in np.argsort(-scores, kind="stable")]
        at += len(facts)
        links: dict[str, float] = {}
        for rank, i in enumerate(order):
            named = fact_parts(kb, facts[i], None)[0] if rows[i] is None and rank < max_facts else []
            row = rows[i]
            ends = [row[0], row[2]] if row else named
            for e in ends:
                if e != node and e not in links:
                    links[e] = round(float(scores[i]), 4)
        order = order[:max_facts]
        out.append(
            {
                "id": node,
                "name": node_names[node],
                "facts": [facts[i] for i in order],
                "triples": [rows[i] for i in order],
                "links": links,
            }
        )
    return out


def node_facts(
    kb: KnowledgeBase,
    node: str,
    max_facts: int,
    qv: np.ndarray | None = None,
    text_edges: bool = False,
    search: bool = True,
    scoring: str = "parts",
) -> dict:
    """GetRelation(node): :func:`nodes_facts` for one node."""
    return nodes_facts(kb, [node], max_facts, qv, text_edges, search, scoring)[0]


def template_text(node: dict) -> str:
    """The facts of a node as plain sentences (no LLM)."""
    return ". ".join(node["facts"]) + "." if node["facts"] else node["name"]


def _round_robin(lists: list[list[str]], cap: int) -> list[str]:
    """Each parent's best candidate in turn (parents best first), then each one's second... (no repeats)."""
    out: list[str] = []
    for rank in range(max(map(len, lists), default=0)):
        for lst in lists:
            if rank < len(lst) and lst[rank] not in out:
                out.append(lst[rank])
                if len(out) >= cap:
                    return out
    return out


def relevant_nodes(
    kb: KnowledgeBase,
    seeds: list[str],
    qv: np.ndarray,
    hops: int,
    k: int,
    max_facts: int,
    fact_qv: np.ndarray | None = None,
    text_edges: bool = False,
    scoring: str = "parts",
) -> list[dict]:
    """Seeds, then hop by hop the neighbours reached by the facts most relevant to the question.

    A candidate's score is its best path sum: the cosines to the question of the facts walked
    from a seed to it (the facts are scored anyway to rank each node's facts, so the walk
    costs no extra embedding); ``prior`` is that sum per hop. Each kept node's facts are the
    ``max_facts`` most relevant to ``fact_qv`` (the question's vector; ``qv`` when not given).
    A node's ``hop`` is its distance in the walk, ``prior`` the score it was chosen with (None
    for a seed).
    """
    if not seeds or k <= 0:
        return []
    fact_qv = qv if fact_qv is None else fact_qv
    nodes = [
        {**n, "prior": None, "hop": 0, "path": 0.0}
        for n in nodes_facts(kb, seeds[:k], max_facts, fact_qv, text_edges, scoring=scoring)
    ]
    seen, frontier = {n["id"] for n in nodes}, list(nodes)
    for hop in range(1, max(hops, 0) + 1):
        check_cancelled()
        room = k - len(nodes)
        if room <= 0 or not frontier:
            break
        beam = -(-room // (hops - hop + 1))  # an equal share of what is left for this and later hops
        best: dict[str, float] = {}  # candidate → best path sum (the facts' scores along the walk)
        by_parent: list[list[str]] = []
        for n in sorted(frontier, key=lambda n: -n["path"]):
            mine = [e for e in n["links"] if e not in seen]
            for e in mine:
                best[e] = max(best.get(e, -1e9), n["path"] + n["links"][e])
            by_parent.append(sorted(mine, key=lambda e: -n["links"][e]))
        chosen = _round_robin(by_parent, beam)
        seen.update(chosen)
        frontier = [
            {**n, "prior": round(best[n["id"]] / hop, 4), "hop": hop, "path": best[n["id"]]}
            for n in nodes_facts(kb, chosen, max_facts, fact_qv, text_edges, scoring=scoring)
        ]
        nodes += frontier
    return nodes
