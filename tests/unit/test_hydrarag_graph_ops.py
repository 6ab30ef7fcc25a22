"""HydraRAG's array-level graph operations give what the generic graph-store code gives."""

from __future__ import annotations

import random

import pytest

from hybridrag.agents.hydrarag import graph_ops, kg, kg_paths, kg_text
from hybridrag.kb.build import assemble
from hybridrag.kb.memory_store import InMemoryGraphStore
from hybridrag.kb.model import Entity, Triple

RELATIONS = ("directed_by", "starred_actors", "written_by", "has_genre")


@pytest.fixture(scope="module")
def store() -> InMemoryGraphStore:
    rng = random.Random(7)
    ids = [f"e{i}" for i in range(60)]
    names = {i: rng.choice(["Alpha", "beta", "Gamma", "delta", "Alpha"]) + f" {rng.randrange(9)}" for i in ids}
    triples = {Triple(rng.choice(ids), rng.choice(RELATIONS), rng.choice(ids)) for _ in range(240)}
    ents = {i: Entity(i, names[i]) for i in ids}
    return InMemoryGraphStore(*assemble(sorted(triples, key=str), ents))


class _Generic:
    """The store behind an interface graph_ops does not handle (the generic code path)."""

    def __init__(self, inner: InMemoryGraphStore) -> None:
        self.inner = inner

    def __getattr__(self, name: str):
        return getattr(self.inner, name)


class _KB:
    def __init__(self, graph) -> None:
        self.graph = graph

    def name(self, entity_id: str) -> str:
        e = self.graph.get(entity_id)
        return e.name if e else entity_id


@pytest.mark.parametrize("depth", [0, 1, 2, 3])
def test_within_hops_is_the_ego_graph_node_set(store, depth):
    seeds = ["e1", "e5", "missing"]
    fast = graph_ops.within_hops(graph_ops.arrays(store), seeds, depth)
    assert sorted(fast) == sorted(store.ego_graph(seeds, radius=depth).distance)
    assert kg.detect_subgraph(_KB(store), [], 3) == []


@pytest.mark.parametrize("depth", [1, 2, 3, 5])
def test_within_hops_on_a_sparse_chain_and_a_dense_star_is_the_ego_graph(depth):
    chain = [Triple(f"c{i}", "next", f"c{i + 1}") for i in range(200)]  # frontiers far below a quarter of the edges
    star = [Triple("hub", "near", f"s{i}") for i in range(50)]
    star += [Triple(f"s{i}", "next", f"s{i + 1}") for i in range(49)]
    for triples, seeds in ((chain, ["c100"]), (star, ["s3"])):  # the star's second hop spans the whole graph
        g = InMemoryGraphStore(*assemble(triples, {}))
        fast = graph_ops.within_hops(graph_ops.arrays(g), seeds, depth)
        assert sorted(fast) == sorted(g.ego_graph(seeds, radius=depth).distance)
        assert len(fast) == len(set(fast))


def test_path_expansion_and_verbalising_match_the_generic_code(store):
    fast_kb, slow_kb = _KB(store), _KB(_Generic(store))
    assert graph_ops.arrays(slow_kb.graph) is None
    for topic in ("e0", "e3", "e9", "e17"):
        frontier = [kg_paths.Chain((frozenset([topic]),))]
        for _ in range(3):
            fast = [c for f in frontier for c in kg_paths.expand(fast_kb, f)]
            slow = [c for f in frontier for c in kg_paths.expand(slow_kb, f)]
            assert fast == slow
            assert [kg_text.verbalise(fast_kb, c, n) for c in fast for n in (2, 6)] == [
                kg_text.verbalise(slow_kb, c, n) for c in slow for n in (2, 6)
            ]
            frontier = fast[:5]


def test_first_names_are_the_sorted_names_and_count_unknown_ids_by_their_id(store):
    ids = ["e2", "e4", "e8", "zz-unknown", "e11", "e30"]
    names, total = graph_ops.first_names(graph_ops.arrays(store), ids, 3)
    assert total == 6
    assert names == sorted(store.get(i).name if store.get(i) else i for i in ids)[:3]


def test_path_overlaps_are_the_jaccard_of_the_key_sets(store):
    from hybridrag.agents.hydrarag.pruning import jaccard

    chains = kg_paths.expand(_KB(store), kg_paths.Chain((frozenset(["e0"]),)))
    chains += [c for f in chains[:3] for c in kg_paths.expand(_KB(store), f)]
    topic_keys = ["id:e0", "id:e7", "name:somebody"]
    want = [jaccard(set(topic_keys), {f"id:{i}" for i in c.entity_ids()}) for c in chains]
    assert kg_paths.overlaps(chains, topic_keys).tolist() == pytest.approx(want)
    assert kg_paths.overlaps([], topic_keys).tolist() == []


def test_joined_paths_are_tightened_as_the_generic_code_does(store):
    fast_kb, slow_kb = _KB(store), _KB(_Generic(store))
    a = [c for f in kg_paths.expand(fast_kb, kg_paths.Chain((frozenset(["e0"]),))) for c in kg_paths.expand(fast_kb, f)]
    b = [c for f in kg_paths.expand(fast_kb, kg_paths.Chain((frozenset(["e1"]),))) for c in kg_paths.expand(fast_kb, f)]
    fast, slow = kg_paths.join_pair(fast_kb, a, b, "e1"), kg_paths.join_pair(slow_kb, a, b, "e1")
    assert fast and sorted(fast, key=str) == sorted(slow, key=str)
