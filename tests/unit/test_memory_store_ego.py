"""The embedded store's vectorised ego-graph against a plain node-at-a-time BFS kept here as the reference.

The reference expands one node at a time (FIFO), reading each node's out-edges then in-edges
through :meth:`InMemoryGraphStore.edge_ids`, exactly as the store did before the frontier was
gathered per level. Both must agree on seeds, distances, parents and the order of every field.
"""

from __future__ import annotations

import numpy as np
import pytest

from benchmarks.speed.ego import baseline_ego_graph as reference_ego  # node-at-a-time BFS, the former store code
from hybridrag.kb.memory_store import InMemoryGraphStore
from hybridrag.kb.model import Entity, Schema, Subgraph

RELATIONS = ["acted_in", "directed_by", "written_by", "has_genre", "release_year"]


def random_store(seed: int, n: int = 60, m: int = 200) -> InMemoryGraphStore:
    """A random multigraph with parallel edges, self-loops and isolated nodes."""
    rng = np.random.default_rng(seed)
    heads = rng.integers(0, n - 5, m).astype(np.int32)  # the last 5 nodes stay isolated
    tails = rng.integers(0, n - 5, m).astype(np.int32)
    rels = rng.integers(0, len(RELATIONS), m).astype(np.int32)
    heads[:3], tails[:3] = 7, 7  # self-loops
    heads[3:6], tails[3:6], rels[3:6] = 1, 2, 0  # parallel edges of one relation
    entities = [Entity(f"e{i}", f"Entity {i}") for i in range(n)]
    return InMemoryGraphStore(entities, heads, rels, tails, list(RELATIONS), Schema())


def same(got: Subgraph, want: Subgraph) -> None:
    assert got.seeds == want.seeds
    assert list(got.distance.items()) == list(want.distance.items())  # same values, same order
    assert list(got.parent.items()) == list(want.parent.items())
    assert got.triples == want.triples


@pytest.mark.parametrize("graph_seed", [0, 1, 2])
@pytest.mark.parametrize("radius", [1, 2, 3])
@pytest.mark.parametrize("relations", [None, ["acted_in"], ["directed_by", "has_genre"], ["no_such", "written_by"]])
def test_ego_graph_matches_the_node_at_a_time_bfs(graph_seed, radius, relations):
    store = random_store(graph_seed)
    rng = np.random.default_rng(100 + graph_seed)
    for size in (1, 2, 4):
        seeds = [f"e{i}" for i in rng.choice(len(store.entities), size, replace=False)]
        got = store.ego_graph(seeds, radius=radius, relations=relations)
        same(got, reference_ego(store, seeds, radius, relations))
        assert len(got.distance) > 0 and all(d <= radius for d in got.distance.values())


def test_unknown_seeds_empty_relations_and_zero_radius():
    store = random_store(3)
    same(store.ego_graph(["nobody", "e1", "e1"], radius=2), reference_ego(store, ["nobody", "e1"], 2))
    empty = store.ego_graph(["e1"], radius=2, relations=[])
    assert empty.distance == {"e1": 0} and empty.triples == [] and empty.parent == {}
    assert store.ego_graph(["nobody"], radius=3).distance == {}
    zero = store.ego_graph(["e1", "e2"], radius=0)
    assert zero.distance == {"e1": 0, "e2": 0} and zero.triples == []


def test_isolated_seed_and_paths_lead_back_to_a_seed():
    store = random_store(4)
    assert store.ego_graph(["e59"], radius=3).distance == {"e59": 0}
    sub = store.ego_graph(["e0", "e9"], radius=3)
    for node, d in sub.distance.items():
        path = sub.path_to(node)
        assert len(path) == d
        if path:
            start = path[0]
            assert start.head in sub.seeds or start.tail in sub.seeds
