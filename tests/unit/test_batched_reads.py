"""Graph reads in batches: SSRAG's graph branch, HybGRAG's text and hybrid modules, MoR's document table.

Each module is run on the tiny KB with its graph store wrapped in a counter, and compared with the
same module reading one node (or one name) at a time: the results must be equal and the number of
store calls bounded by hops (or by batches), not by nodes or hits.
"""

from __future__ import annotations

import copy
import math
import random
from collections import Counter

import pytest

from agents.hybgrag import retrieval as hyb
from agents.mor import matching
from agents.ssrag import nodes as N
from kb.base import KnowledgeBase, open_kb
from kb.build import assemble
from kb.memory_store import InMemoryGraphStore
from kb.model import Triple


class CountingStore:
    """Delegates to a store and counts the calls of each of its methods."""

    def __init__(self, store) -> None:
        self.store, self.calls = store, Counter()

    def __getattr__(self, name: str):
        attr = getattr(self.store, name)
        if not callable(attr):
            return attr

        def counted(*args, **kwargs):
            self.calls[name] += 1
            return attr(*args, **kwargs)
        return counted


def counting(kb: KnowledgeBase) -> tuple[KnowledgeBase, Counter]:
    """A copy of ``kb`` (its own per-KB caches) whose graph store counts its calls."""
    twin = copy.copy(kb)
    twin.graph = CountingStore(kb.graph)
    return twin, twin.graph.calls


def store_of(lines: list[str]) -> InMemoryGraphStore:
    return InMemoryGraphStore(*assemble([Triple(*line.split("|")) for line in lines], {}))


def test_split_by_node_gives_each_node_its_own_neighbours_in_order(tiny_kb):
    store = open_kb(tiny_kb).graph
    ids = [e.id for e in store.entities]
    rng = random.Random(0)
    groups = [["Big", "Tom Hanks"], ["Tom Hanks", "Big"], ["Apollo 13", "Kevin Bacon", "Tremors"],
              ["nobody", "Amelie", "Amelie"]] + [rng.sample(ids, rng.randint(1, len(ids))) for _ in range(20)]
    for nodes in groups:
        split = N.split_by_node(store.neighbors(nodes), nodes)
        assert list(split) == list(dict.fromkeys(nodes))
        for n in nodes:
            assert split[n] == store.neighbors([n]), (nodes, n)


def test_split_by_node_keeps_self_loops_and_edges_between_asked_nodes():
    store = store_of(["a|r|a", "a|r|b", "b|s|a", "b|r|c", "c|r|a"])
    for nodes in (["a", "b", "c"], ["c", "b", "a"], ["b", "a"], ["a"]):
        split = N.split_by_node(store.neighbors(nodes), nodes)
        assert {n: split[n] for n in nodes} == {n: store.neighbors([n]) for n in nodes}, nodes
    once = [Triple("a", "r", "b")]  # a store that sends an edge between two asked nodes only once
    assert N.split_by_node(once, ["a", "b"]) == {"a": once, "b": once}


def _one_at_a_time(kb: KnowledgeBase, nodes: list[str]) -> dict[str, str]:
    """The old reads: no prefetch, so each node's triples and names are read on their own."""
    return {n: kb.name(n) for n in nodes}


@pytest.mark.parametrize(("seeds", "hops", "text_edges"), [
    (["Tom Hanks"], 2, False), (["Kevin Bacon", "Penny Marshall"], 2, True), (["Big"], 1, False)])
def test_ssrag_reads_one_neighbours_call_per_hop(tiny_kb, monkeypatch, seeds, hops, text_edges):
    base = open_kb(tiny_kb)
    qv = base.embed("Which films did Tom Hanks star in?")
    batched, calls = counting(base)
    got = N.relevant_nodes(batched, seeds, qv, hops=hops, k=12, max_facts=5, text_edges=text_edges)
    old, old_calls = counting(base)
    monkeypatch.setattr(N, "prefetch", _one_at_a_time)
    want = N.relevant_nodes(old, seeds, qv, hops=hops, k=12, max_facts=5, text_edges=text_edges)
    assert got == want
    assert len(got) > hops + 1  # more nodes than reads, so the bound below can fail
    assert calls["neighbors"] <= hops + 1  # the seeds, then one per hop
    assert old_calls["neighbors"] == len(got)
    assert calls["get"] < old_calls["get"]


def test_ssrag_nodes_facts_reads_cached_nodes_not_again(tiny_kb):
    kb, calls = counting(open_kb(tiny_kb))
    first = N.nodes_facts(kb, ["Big", "Apollo 13", "Tom Hanks"], max_facts=10)
    reads = calls["neighbors"]
    assert reads == 1
    assert N.nodes_facts(kb, ["Apollo 13", "Big", "Tom Hanks"], max_facts=10) == [first[1], first[0], first[2]]
    assert calls["neighbors"] == reads


def test_hybgrag_text_reads_all_hit_names_at_once(tiny_kb):
    base = open_kb(tiny_kb)
    kb, calls = counting(base)
    got = hyb.text_retrieve(kb, "a film about astronauts and the moon", k=6)
    refs: dict[str, hyb.Reference] = {}  # the old loop: one name read per hit
    for hit in base.dense_search("a film about astronauts and the moon", 24):
        d = hit.doc
        key = d.entity_id or d.id
        if key not in refs:
            name = base.name(d.entity_id) if d.entity_id else d.id
            refs[key] = hyb.Reference(key, "entity" if d.entity_id else "passage", name, hit.score, "doc", d.text)
    assert got.references == list(refs.values())[:6]
    assert len(got.references) == 6
    assert (calls["get"], calls["get_many"]) == (0, 1)


def test_hybgrag_hybrid_reads_candidate_names_at_once(tiny_kb):
    base = open_kb(tiny_kb)
    kb, calls = counting(base)
    got = hyb.hybrid_retrieve(kb, "Who starred in films with Tom Hanks?", ["Tom Hanks"], ["starred_actors"], 2, 5)
    assert len(got.references) >= 2
    assert [r.name for r in got.references] == [base.name(r.id) for r in got.references]
    assert calls["get"] == 0 and calls["get_many"] == 1


def test_hybgrag_path_names_are_one_read_per_path(tiny_kb):
    base = open_kb(tiny_kb)
    kb, calls = counting(base)
    path = [Triple("Big", "starred_actors", "Tom Hanks"), Triple("Apollo 13", "starred_actors", "Tom Hanks"),
            Triple("Apollo 13", "starred_actors", "Kevin Bacon")]
    assert hyb.verbalise_path(kb, "Big", path) == (
        "Big → starred_actors → Tom Hanks → starred_actors (inverse) → Apollo 13 → starred_actors → Kevin Bacon")
    assert (calls["get"], calls["get_many"]) == (0, 1)


@pytest.mark.parametrize("batch", [3, matching.GET_BATCH])
def test_mor_doc_table_reads_entities_in_batches(tiny_kb, monkeypatch, batch):
    base = open_kb(tiny_kb)
    kb, calls = counting(base)
    monkeypatch.setattr(matching, "GET_BATCH", batch)
    try:
        table = matching.doc_table(kb)
    finally:
        matching._TABLES.pop(id(kb), None)
    owners = [base.graph.get(d.entity_id) if d.entity_id is not None else None for d in base.docs]
    assert table.row_entity == [e.id if e else None for e in owners]
    assert table.row_type.tolist() == [e.type if e else "" for e in owners]
    assert table.has_entity.tolist() == [e is not None for e in owners]
    assert sum(map(len, table.rows_of.values())) == sum(e is not None for e in owners)
    distinct = len({d.entity_id for d in base.docs if d.entity_id is not None})
    assert distinct > 3
    assert calls["get"] == 0 and calls["get_many"] == math.ceil(distinct / batch)
