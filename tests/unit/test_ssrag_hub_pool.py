"""A node's fact pool, and its order, do not depend on the order a graph backend lists its edges in."""

from __future__ import annotations

import random

from hybridrag.agents.ssrag import facts as F
from hybridrag.kb.model import Triple


def _hub(n: int) -> list[Triple]:
    rels = ("has_genre", "release_year", "in_language")
    return [Triple(f"film{i:04d}", rels[i % 3], "Drama") for i in range(n)]


def test_a_hub_pool_is_the_same_in_any_edge_order():
    edges = _hub(F.FACT_POOL + 300)
    shuffled = edges[:]
    random.Random(7).shuffle(shuffled)
    assert shuffled != edges
    pool = F.pool_of(edges)
    assert len(pool) == F.FACT_POOL
    assert F.pool_of(shuffled) == pool
    assert F.pool_of(list(reversed(edges))) == pool
    assert pool == sorted(edges, key=lambda t: (t.type, t.head, t.tail))[: F.FACT_POOL]


def test_a_node_under_the_pool_keeps_all_its_facts_in_one_order_whatever_the_store_sends():
    edges = _hub(F.FACT_POOL)
    shuffled = edges[:]
    random.Random(3).shuffle(shuffled)
    assert shuffled != edges
    assert F.pool_of(shuffled) == F.pool_of(edges) == sorted(edges, key=lambda t: (t.type, t.head, t.tail))


class _Graph:
    def __init__(self, edges: list[Triple]) -> None:
        self.edges = edges

    def neighbors(self, ids, *args, **kwargs):  # noqa: ANN001, ANN002, ANN003
        wanted = set(ids)
        return [t for t in self.edges if t.head in wanted or t.tail in wanted]


class _KB:
    def __init__(self, edges: list[Triple]) -> None:
        self.graph = _Graph(edges)

    def names(self, ids):  # noqa: ANN001
        return {i: i for i in ids}


def test_prefetch_and_one_node_reads_keep_the_same_hub_pool():
    edges = _hub(F.FACT_POOL + 50)
    backwards = _KB(list(reversed(edges)))
    forwards = _KB(edges)
    F.prefetch(backwards, ["Drama"])
    assert F._node_triples(backwards, "Drama") == F._node_triples(forwards, "Drama") == F.pool_of(edges)
