"""HydraRAG's KG path search (paper §4.2.1, Algorithm 1): clustered paths through the topic entities.

- Node and relation clustering: a path is a chain of entity *sets*; expanding a set groups
  its neighbours by (relation, direction), and relations reaching the same set are merged
  into one edge ``r1 | r2``. HydraRAG-E keeps one random relation of each merged edge.
- Tree-based path retrieval: a beam search from each topic entity, one hop per depth, the
  beam cut to the top W1 paths by relevance after every hop (Relevant_Pruning).
- Multi-entity questions: paths from consecutive topic entities (in skyline order) are
  joined where their end sets meet (bidirectional BFS, IntersectMatchUpdate); the meeting
  set holds the answer candidates. Graph reduction then keeps, in every set of a joined
  path, only the entities on a complete path between the topic entities. Joined paths
  longer than ``|Topic|·D`` are dropped.
  When the topic entities do not meet within D hops, or no joined path has a kept length, the
  per-topic paths are used.

The graph is read through the array path of :mod:`agents.hydrarag.graph_ops` when the store has
one, else through the generic graph-store calls.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from hybridrag.agents.hydrarag import graph_ops as graph_ops
from hybridrag.kb.base import KnowledgeBase
from hybridrag.kb.cancel import check_cancelled

MAX_EXPAND = 100  # entities of one set expanded per hop (bounds the cost on hub sets)

Edge = tuple[tuple[str, ...], bool]  # (relations, inverse)
Scorer = Callable[[list["Chain"]], list[float]]


@dataclass(frozen=True)
class Chain:
    """A clustered KG path: entity-id sets joined by (relations, inverse) edges."""

    nodes: tuple[frozenset[str], ...]
    edges: tuple[Edge, ...] = ()
    answer_at: int = -1

    @property
    def length(self) -> int:
        """Number of hops."""
        return len(self.edges)

    def entity_ids(self) -> set[str]:
        """Every entity on the path."""
        return set().union(*self.nodes)

    def answers(self) -> frozenset[str]:
        """The set holding the answer candidates (the end, or the meeting set of a join)."""
        return self.nodes[self.answer_at]


def _groups(end: frozenset[str], seen: set[str], triples) -> dict[tuple[str, bool], set[str]]:
    """Neighbours of ``end`` not in ``seen`` in ``triples``, grouped by (relation, inverse)."""
    groups: dict[tuple[str, bool], set[str]] = {}
    for t in triples:
        if t.head in end and t.tail not in seen:
            groups.setdefault((t.type, False), set()).add(t.tail)
        if t.tail in end and t.head not in seen:
            groups.setdefault((t.type, True), set()).add(t.head)
    return groups


def _all_groups(kb: KnowledgeBase, chains: list[Chain]) -> list[dict[tuple[str, bool], set[str]]]:
    """Each chain's one-hop groups, the neighbours of every chain's expanded set read at once.

    A store without the array path gets one ``neighbors`` call, split back per chain.
    """
    asked = [sorted(c.nodes[-1])[:MAX_EXPAND] for c in chains]
    fast = graph_ops.arrays(kb.graph)
    if fast is not None:
        return [graph_ops.neighbour_groups(fast, ids, c.entity_ids()) for c, ids in zip(chains, asked, strict=True)]
    every = list(dict.fromkeys(i for ids in asked for i in ids))
    found = kb.graph.neighbors(every) if every else []
    out = []
    for c, ids in zip(chains, asked, strict=True):
        check_cancelled()
        mine = set(ids)  # what neighbors(ids) alone returns: the edges touching them
        out.append(_groups(c.nodes[-1], c.entity_ids(), (t for t in found if t.head in mine or t.tail in mine)))
    return out


def _clustered(chain: Chain, groups: dict[tuple[str, bool], set[str]], rng: random.Random | None) -> list[Chain]:
    merged: dict[tuple[frozenset[str], bool], list[str]] = {}
    for (rel, inverse), ids in groups.items():
        merged.setdefault((frozenset(ids), inverse), []).append(rel)
    out = []
    for (members, inverse), found in sorted(merged.items(), key=lambda kv: (sorted(kv[1]), kv[0][1])):
        rels = sorted(found)
        if rng is not None:  # HydraRAG-E: one random relation of each clustered edge
            rels = [rng.choice(rels)]
        out.append(Chain((*chain.nodes, members), (*chain.edges, (tuple(rels), inverse))))
    return out


def expand_all(kb: KnowledgeBase, chains: list[Chain], rng: random.Random | None = None) -> list[Chain]:
    """:func:`expand` of each chain in turn, the neighbours of all of them read at once."""
    return [
        c for chain, groups in zip(chains, _all_groups(kb, chains), strict=True) for c in _clustered(chain, groups, rng)
    ]


def expand(kb: KnowledgeBase, chain: Chain, rng: random.Random | None = None) -> list[Chain]:
    """One hop from the end set: neighbours grouped by relation and direction, then clustered."""
    return expand_all(kb, [chain], rng)


def beam(
    kb: KnowledgeBase, topic: str, depth: int, width: int, score: Scorer, rng: random.Random | None = None
) -> list[tuple[float, Chain]]:
    """Paths of up to ``depth`` hops from ``topic``, the best ``width`` kept after each hop."""
    kept: list[tuple[float, Chain]] = []
    frontier = [Chain((frozenset([topic]),))]
    for _ in range(depth):
        check_cancelled()
        new = expand_all(kb, frontier, rng)
        if not new:
            break
        kept = sorted(kept + list(zip(score(new), new, strict=True)), key=lambda sc: -sc[0])[:width]
        alive = {id(c) for _, c in kept}
        frontier = [c for c in new if id(c) in alive]
    return kept


def _reverse(chain: Chain) -> tuple[tuple[frozenset[str], ...], tuple[Edge, ...]]:
    return tuple(reversed(chain.nodes)), tuple((rels, not inv) for rels, inv in reversed(chain.edges))


def _linked(kb: KnowledgeBase, ids: frozenset[str], edge: Edge, others: frozenset[str]) -> frozenset[str]:
    """Members of ``ids`` with an ``edge`` (read from ids towards others) into ``others``."""
    rels, inverse = edge
    fast = graph_ops.arrays(kb.graph)
    if fast is not None:
        return graph_ops.linked(fast, ids, rels, inverse, others)
    found = kb.graph.neighbors(sorted(ids), list(rels), direction="in" if inverse else "out")
    if inverse:
        return frozenset(t.tail for t in found if t.head in others)
    return frozenset(t.head for t in found if t.tail in others)


def tighten(kb: KnowledgeBase, chain: Chain) -> Chain | None:
    """Graph reduction along a joined path: keep only entities on a complete start-to-end path."""
    check_cancelled()  # join_pair tightens up to width² joined paths
    nodes = list(chain.nodes)
    for i in range(len(chain.edges) - 1, -1, -1):
        nodes[i] = _linked(kb, nodes[i], chain.edges[i], nodes[i + 1])
    for i, (rels, inverse) in enumerate(chain.edges):
        nodes[i + 1] = _linked(kb, nodes[i + 1], (rels, not inverse), nodes[i])
    return None if any(not n for n in nodes) else Chain(tuple(nodes), chain.edges, chain.answer_at)


def join_pair(kb: KnowledgeBase, a_paths: list[Chain], b_paths: list[Chain], b_topic: str) -> list[Chain]:
    """Paths from topic a to topic b: a reaches b, or a's and b's end sets meet (then tightened)."""
    out: dict[tuple, Chain] = {}
    for ca in a_paths:
        check_cancelled()
        if b_topic in ca.nodes[-1] and ca.length > 1:
            joined = Chain((*ca.nodes[:-1], frozenset([b_topic])), ca.edges, answer_at=ca.length - 1)
            out.setdefault((joined.nodes, joined.edges), joined)
        for cb in b_paths:
            meet = ca.nodes[-1] & cb.nodes[-1]
            if not meet:
                continue
            rev_nodes, rev_edges = _reverse(cb)
            joined = Chain((*ca.nodes[:-1], meet, *rev_nodes[1:]), ca.edges + rev_edges, answer_at=ca.length)
            out.setdefault((joined.nodes, joined.edges), joined)
    tight: dict[tuple, Chain] = {}
    for c in out.values():
        t = tighten(kb, c)
        if t is not None:
            tight.setdefault((t.nodes, t.edges), t)
    return list(tight.values())


def _concat(first: Chain, second: Chain) -> Chain:
    answer_at = first.answer_at % len(first.nodes)
    return Chain(first.nodes + second.nodes[1:], first.edges + second.edges, answer_at)


def within(chains: list[Chain], n_topics: int, depth: int, floor: bool) -> list[Chain]:
    """Paths with ``n·(D-1) < length ≤ n·D`` (Algorithm 1's Paths_I); without ``floor`` only ``≤ n·D``."""
    low = n_topics * (depth - 1) if floor else 0
    return [c for c in chains if low < c.length <= n_topics * depth]


def explore(
    kb: KnowledgeBase,
    topics: list[str],
    depth: int,
    width: int,
    score: Scorer,
    rng: random.Random | None = None,
    floor: bool = False,
) -> tuple[list[Chain], bool]:
    """Candidate paths covering every topic entity in order; returns (paths, joined?).

    ``floor`` applies Algorithm 1's lower bound: per-topic paths of exactly ``depth`` hops, joined
    paths longer than ``|Topic|·(depth-1)``.
    """
    beams = {t: beam(kb, t, depth, width, score, rng) for t in dict.fromkeys(topics)}
    singles = within([c for t in beams for _, c in beams[t]], 1, depth, floor)
    if len(beams) < 2:
        return singles, False
    order = list(beams)
    segments = []
    for a, b in zip(order, order[1:], strict=False):
        seg = join_pair(kb, [c for _, c in beams[a]], [c for _, c in beams[b]], b)
        if not seg:
            return singles, False
        segments.append(sorted(zip(score(seg), seg, strict=True), key=lambda sc: -sc[0]))
    per_segment = max(1, int(width ** (1 / len(segments))))
    chains = [c for _, c in segments[0][: width if len(segments) == 1 else per_segment]]
    for later in segments[1:]:
        chains = [_concat(c, s) for c in chains for _, s in later[:per_segment]]
    joined = within(chains, len(order), depth, floor)
    return (joined, True) if joined else (singles, False)  # no joined path of a kept length: per-topic paths


def overlaps(chains: list[Chain], topic_keys: list[str]) -> np.ndarray:
    """Jaccard(Topic(q), Ent(p)) per path, counted without building each path's key strings."""
    topics = set(topic_keys)
    ids = [k[3:] for k in topics if k.startswith("id:")]
    out = []
    for c in chains:
        ents = c.entity_ids()
        common = sum(i in ents for i in ids)
        union = len(topics) + len(ents) - common
        out.append(common / union if union else 0.0)
    return np.array(out, dtype=np.float32)
