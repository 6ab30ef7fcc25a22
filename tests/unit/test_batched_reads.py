"""Graph reads in batches: SSRAG's branches, HybGRAG's text and hybrid modules, MoR, HydraRAG.

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
from agents.hydrarag import kg as hkg
from agents.hydrarag import kg_paths as hkp
from agents.hydrarag import kg_text as hkt
from agents.hydrarag import pruning as hprune
from agents.hydrarag import text as htext
from agents.mor import matching
from agents.mor import traversal as trav
from agents.mor.plan import Plan, PlanNode, PlanRoute, validate_plan
from agents.ssrag import nodes as N
from agents.ssrag import retrieval as ss_ret
from agents.ssrag import vectors as V
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
    for h in base.dense_search(V.query_vector(base, "a film about astronauts and the moon"), 8):
        d = h.doc  # the old item: one name read per hit
        name = base.name(d.id) if d.kind == "entity" else f"passage about {base.name(d.entity_id or d.id)}"
        want.append({"id": d.id, "kind": d.kind, "name": name, "text": d.text, "source": "doc",
                     "entity_id": d.entity_id, "path": None, "score": float(h.score)})
    assert used == "local" and items == want and len(items) == 8
    assert any(i["kind"] == "passage" for i in items) and any(i["kind"] == "entity" for i in items)
    assert (calls["get"], calls["get_many"]) == (0, 1)


def _doc_tables(monkeypatch) -> dict:
    """MoR's per-KB document tables, emptied again after the test (the counting twins are throw-away KBs)."""
    monkeypatch.setattr(matching, "_TABLES", {})
    return matching._TABLES


def _old_structural(kb, current, category, relations, scores):
    """MoR's structural step as it read before: one ``graph.get`` per child (the specification)."""
    out, types = {}, {}

    def type_of(eid):
        if eid not in types:
            ent = kb.graph.get(eid)
            types[eid] = ent.type if ent else ""
        return types[eid]

    roles = kb.graph.schema().relation_types
    for t in kb.graph.neighbors(list(current), relations, "both"):
        for parent, child, is_tail in ((t.head, t.tail, True), (t.tail, t.head, False)):
            rel = roles.get(t.type)
            plays = rel is not None and category in (rel.tail_types if is_tail else rel.head_types)
            if parent not in current or child == parent or (type_of(child) != category and not plays):
                continue
            traj = [*current[parent], trav._step(child, category, "struct", scores.of(child), [t.head, t.type, t.tail])]
            if child not in out or trav._key(traj) > trav._key(out[child]):
                out[child] = traj
    return out


@pytest.mark.parametrize("types", [["person", "movie", "person"], ["person", "movie", "person", "movie"]])
def test_mor_traversal_reads_types_once_per_layer(tiny_kb, monkeypatch, types):
    base = open_kb(tiny_kb)
    nodes = [PlanNode(type=t, restriction="Tom Hanks" if i == 0 else "", relation="") for i, t in enumerate(types)]
    route = validate_plan(Plan(routes=[PlanRoute(nodes=nodes)]), base.graph.schema(), [])["routes"][0]
    kb, calls = counting(base)
    _doc_tables(monkeypatch)
    matching.doc_table(kb)  # once per KB, read in batches (test above); not counted here
    calls.clear()
    got = trav.traverse_route(kb, "Tom Hanks films", route, layer_k=3)
    structural = sum(x["struct"] for x in got["layers"])
    assert structural >= 2  # neighbours were typed, so the count below can fail
    assert calls["get"] == 0 and calls["get_many"] == calls["neighbors"] == len(types) - 1
    monkeypatch.setattr(trav, "_structural", _old_structural)
    old, old_calls = counting(base)
    assert trav.traverse_route(old, "Tom Hanks films", route, layer_k=3) == got
    assert old_calls["get"] > calls["get_many"]


def test_mor_text_candidates_read_types_at_once(tiny_kb, monkeypatch):
    base = open_kb(tiny_kb)
    kb, calls = counting(base)
    _doc_tables(monkeypatch)
    matching.doc_table(kb)
    calls.clear()
    got = trav.text_candidates(kb, "Tom Hanks movie", ["movie", "person"], 3, "dense", exclude={"Big"})
    want = {}  # the old loop: one get per kept candidate
    for eid, s in matching.LayerScores(base, "Tom Hanks movie", "dense").top(["movie", "person"], 4):
        if eid != "Big" and len(want) < 3:
            ent = base.graph.get(eid)
            want[eid] = [trav._step(eid, ent.type if ent else "", "text", s)]
    assert got == want and len(got) == 3
    assert (calls["get"], calls["get_many"]) == (0, 1)


@pytest.mark.parametrize("seed", [None, 0])
def test_hydrarag_expansion_reads_one_neighbours_call_per_hop(tiny_kb, seed):
    base = open_kb(tiny_kb)
    kb, calls = counting(base)  # a store without the array path: the generic reads
    assert hkg.graph_ops.arrays(kb.graph) is None
    widest = 0
    for topic in ("Tom Hanks", "Big", "Kevin Bacon"):
        frontier = [hkp.Chain((frozenset([topic]),))]
        for _ in range(3):
            rng, rng_old = (random.Random(seed), random.Random(seed)) if seed is not None else (None, None)
            before = calls["neighbors"]
            got = hkp.expand_all(kb, frontier, rng)
            assert calls["neighbors"] == before + 1
            assert got == [c for f in frontier for c in hkp.expand(base, f, rng_old)]  # one chain at a time
            widest, frontier = max(widest, len(frontier)), got[:6]
    assert widest > 1  # several chains read with one call


def test_hydrarag_set_names_are_one_read_for_all_sets(tiny_kb):
    base = open_kb(tiny_kb)
    kb, calls = counting(base)
    chains = [c for f in hkp.expand(base, hkp.Chain((frozenset(["Tom Hanks"]),))) for c in hkp.expand(base, f)]
    assert len(chains) > 2
    memo: hkt.Names = {}
    hkt.remember_names(kb, chains, memo)
    assert (calls["get"], calls["get_many"]) == (0, 1)
    for c in chains:
        for ids in c.nodes:  # the old reading: one name per entity, sorted
            names = sorted(base.name(i) for i in ids)
            assert memo[ids] == (names[:hkt.SHOWN_NAMES], len(names))
        assert hkt.verbalise(kb, c, 2, memo) == hkt.verbalise(base, c, 2)
    assert calls["get_many"] == 1


def test_hydrarag_explore_kg_generic_reads_match_the_array_path(tiny_kb):
    base = open_kb(tiny_kb)
    kb, calls = counting(base)
    probe = {"phase": "initial", "depth": 2, "floor": False,
             "chains": [{"topics": ["Tom Hanks"], "names": ["Tom Hanks"], "indicator": "Tom Hanks - movie - director"}]}
    want, _ = hkg.explore_kg(base, "q", probe, ["id:Tom Hanks"], hprune.PruneSettings())
    got, _ = hkg.explore_kg(kb, "q", probe, ["id:Tom Hanks"], hprune.PruneSettings())
    assert got == want and len(got) > 2
    assert calls["get"] == 0 and calls["neighbors"] == 2 and calls["get_many"] == 1


def test_hydrarag_ranked_answers_and_documents_read_names_at_once(tiny_kb):
    base = open_kb(tiny_kb)
    kb, calls = counting(base)
    paths = [{"answers": ["Big", "Tom Hanks", "Apollo 13"], "score": 0.5, "source": "kg"},
             {"answers": ["Kevin Bacon", "Big"], "score": 0.7, "source": "kg", "doc_id": "p:Big"}]
    ranked = hprune.to_ranked(kb, paths, {"Tom Hanks"}, 10)
    entities = [r for r in ranked if r["kind"] == "entity"]
    assert [r["name"] for r in entities] == [base.name(r["id"]) for r in entities]  # the old reading
    assert {r["id"] for r in entities} == {"Big", "Apollo 13", "Kevin Bacon"}
    assert (calls["get"], calls["get_many"]) == (0, 1)
    calls.clear()
    docs = htext.gather_docs(kb, ["Big", "Amelie"], "a film about the moon", 2)
    want = {}  # the old loop: one name per document
    own = [d for d in base.passages_of({"Big", "Amelie"}) if d.kind == "passage" or d.text != base.name(d.id)]
    for d in own + [h.doc for h in base.dense_search("a film about the moon", k=2, kind="passage")]:
        want.setdefault(d.id, (d.id, base.name(d.entity_id) if d.entity_id else d.id, d.text))
    assert docs == list(want.values()) and len(docs) >= 3
    assert calls["get"] == 0 and calls["get_many"] <= 2
