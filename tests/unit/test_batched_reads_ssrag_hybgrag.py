"""Graph reads in batches, SSRAG and HybGRAG: each module is run on the tiny KB with its graph store
wrapped in a counter (:mod:`counting_store`) and compared with the same module reading one node (or
one name) at a time: the results must be equal and the number of store calls bounded by hops (or by
batches), not by nodes or hits. MoR and HydraRAG: test_batched_reads_mor_hydrarag.py.
"""

from __future__ import annotations

import random
from types import SimpleNamespace

import pytest
from counting_store import counting, store_of

from hybridrag.agents.hybgrag import experience as hexp
from hybridrag.agents.hybgrag import retrieval as hyb
from hybridrag.agents.hybgrag import shots as hshots
from hybridrag.agents.hybgrag.paths import path_retrieve
from hybridrag.agents.ssrag import nodes as N
from hybridrag.agents.ssrag import retrieval as ss_ret
from hybridrag.agents.ssrag import vectors as V
from hybridrag.kb.base import KnowledgeBase, open_kb
from hybridrag.kb.model import Triple
from hybridrag.tools import text_hops as th
from hybridrag.tools.fused_text import hybrid_search


def test_split_by_node_gives_each_node_its_own_neighbours_in_order(tiny_kb):
    store = open_kb(tiny_kb).graph
    ids = [e.id for e in store.entities]
    rng = random.Random(0)
    groups = [
        ["Big", "Tom Hanks"],
        ["Tom Hanks", "Big"],
        ["Apollo 13", "Kevin Bacon", "Tremors"],
        ["nobody", "Amelie", "Amelie"],
    ] + [rng.sample(ids, rng.randint(1, len(ids))) for _ in range(20)]
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


@pytest.mark.parametrize(
    ("seeds", "hops", "text_edges"),
    [(["Tom Hanks"], 2, False), (["Kevin Bacon", "Penny Marshall"], 2, True), (["Big"], 1, False)],
)
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


def test_ssrag_name_vectors_read_all_names_at_once(tiny_kb):
    base = open_kb(tiny_kb)
    kb, calls = counting(base)
    ids = ["Big", "Tom Hanks", "nobody", "Apollo 13", "Big", "Kevin Bacon"]
    got = V.name_vectors(kb, ids)
    want = V.vectors(base, [base.name(i) for i in ids])  # the old reading: each name on its own, encoded
    assert got.shape == want.shape and abs(got - want).max() < 1e-5
    assert (calls["get"], calls["get_many"]) == (0, 1)
    V.name_vectors(kb, ids[:3])
    assert calls["get_many"] == 1  # cached per KB


def test_ssrag_fact_rest_reads_the_names_once(tiny_kb):
    base = open_kb(tiny_kb)
    kb, calls = counting(base)
    ids = ["Tom Hanks", "Big", "Penny Marshall"]
    sentence = "Tom Hanks starred in Big, which Penny Marshall directed"
    out = f" {' '.join(V.words(sentence))} "  # the old reading: one name per id
    for name in sorted({" ".join(V.words(base.name(i))) for i in ids}, key=len, reverse=True):
        out = out.replace(f" {name} ", " ")
    assert V._rest(kb, sentence, ids) == " ".join(out.split()) == "starred in which directed"
    assert (calls["get"], calls["get_many"]) == (0, 1)


def test_ssrag_vector_branch_reads_hit_names_at_once(tiny_kb):
    base = open_kb(tiny_kb)
    kb, calls = counting(base)
    items, used, _ = ss_ret.vector_branch(kb, "a film about astronauts and the moon", "local", 8, 0)
    want = []
    q = "a film about astronauts and the moon"
    dense = lambda text, n: base.dense_search(V.query_vector(base, text), n)  # noqa: E731
    for h in hybrid_search(base, q, 8, dense=dense):  # the branch's pool: dense and BM25 fused
        d = h.doc  # the old item: one name read per hit
        name = base.name(d.id) if d.kind == "entity" else f"passage about {base.name(d.entity_id or d.id)}"
        want.append(
            {
                "id": d.id,
                "kind": d.kind,
                "name": name,
                "text": d.text,
                "source": "doc",
                "entity_id": d.entity_id,
                "path": None,
                "score": float(h.score),
            }
        )
    assert used == "local" and items == want and len(items) == 8
    assert any(i["kind"] == "passage" for i in items) and any(i["kind"] == "entity" for i in items)
    assert (calls["get"], calls["get_many"]) == (0, 1)


def test_hybgrag_text_reads_all_hit_names_at_once(tiny_kb):
    base = open_kb(tiny_kb)
    kb, calls = counting(base)
    got = hyb.text_retrieve(kb, "a film about astronauts and the moon", k=6)
    refs: dict[str, hyb.Reference] = {}  # the old loop: one name read per hit
    for hit in hybrid_search(base, "a film about astronauts and the moon", 24):  # dense and BM25 fused
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
    path = [
        Triple("Big", "starred_actors", "Tom Hanks"),
        Triple("Apollo 13", "starred_actors", "Tom Hanks"),
        Triple("Apollo 13", "starred_actors", "Kevin Bacon"),
    ]
    assert hyb.verbalise_path(kb, "Big", path) == (
        "Big → starred_actors → Tom Hanks → starred_actors (inverse) → Apollo 13 → starred_actors → Kevin Bacon"
    )
    assert (calls["get"], calls["get_many"]) == (0, 1)


def _text_step(parent: str, child: str, relation: str, owner_first: bool = False) -> tuple[str, str, Triple]:
    head, tail = (child, parent) if owner_first else (parent, child)
    return parent, child, Triple(head, relation + th.TEXT, tail)


@pytest.mark.parametrize(("relation", "backward"), [("has_genre", False), ("movie genre", True)])
def test_hybgrag_text_steps_read_two_batches_a_hop(tiny_kb, relation, backward):
    """The frontier's names, then every entity the sentences name: two reads however many sentences
    (the old loop read a name or an entity per sentence and per entity found in it)."""
    kb, calls = counting(open_kb(tiny_kb))
    got = th.text_steps(kb, ["Big", "Amelie", "Comedy", "Romance", "Tom Hanks"], relation)
    want = [_text_step("Big", "Comedy", relation), _text_step("Amelie", "Romance", relation)]
    if backward:  # "movie genre" names the movie type: the passage owner is a supported step back
        want += [_text_step("Comedy", "Big", relation, True), _text_step("Romance", "Amelie", relation, True)]
    assert got == want  # as the one-at-a-time reading gave them
    assert (calls["get"], calls["get_many"]) == (0, 2)
    assert th.text_steps(kb, [], relation) == [] and calls["get_many"] == 2


def test_hybgrag_nearest_steps_read_the_frontier_names_once(tiny_kb):
    kb, calls = counting(open_kb(tiny_kb))
    got = th.nearest_steps(kb, ["Big", "Amelie"], "has_genre")
    assert [(p, c, t.type) for p, c, t in got] == [
        ("Big", "Comedy", "has_genre" + th.NEAREST),
        ("Amelie", "Romance", "has_genre" + th.NEAREST),
    ]
    assert (calls["get"], calls["get_many"]) == (0, 1)


def test_hybgrag_path_retrieve_reads_reference_names_at_once(tiny_kb):
    base = open_kb(tiny_kb)
    kb, calls = counting(base)
    got = path_retrieve(kb, "who starred in films with Kevin Bacon", ["Kevin Bacon"], ["starred_actors"], 2, text=False)
    assert {r.id for r in got.references} == {"Tom Hanks"}
    assert [(r.name, r.text) for r in got.references] == [(base.name(r.id), r.text) for r in got.references]
    assert (calls["get"], calls["get_many"]) == (0, 1)


def test_hybgrag_example_references_read_names_in_batches(tiny_kb):
    base = open_kb(tiny_kb)
    kb, calls = counting(base)
    ex = SimpleNamespace(relations=["starred_actors"], answers=["Tom Hanks"], topic=["Big"], topic_types=["movie"])
    assert hshots._positive(kb, ex, "Big") == {"name": "Tom Hanks", "path": "Big → starred_actors → Tom Hanks"}
    assert hshots._negative(kb, ex, "Big") == {"name": "Penny Marshall", "path": "Big → directed_by → Penny Marshall"}
    two = SimpleNamespace(relations=["starred_actors", "directed_by"], answers=["Penny Marshall"])
    assert hshots._negative(kb, two, "Tom Hanks") == {  # no other relation: a path one hop short
        "name": "A League of Their Own",
        "path": "Tom Hanks → starred_actors (inverse) → A League of Their Own",
    }
    other = SimpleNamespace(
        relations=["starred_actors"], answers=["Geena Davis"], topic=["Apollo 13"], topic_types=["movie"]
    )
    second = hexp._second_entity(kb, other, ex, "incorrect_intersection")
    assert second == {"id": "A League of Their Own", "name": "A League of Their Own", "type": "movie"}
    assert calls["get"] == 0 and calls["get_many"] == 8  # a read per list of entities and per path shown
