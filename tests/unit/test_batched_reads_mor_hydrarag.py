"""Graph reads in batches, MoR and HydraRAG: each module is run on the tiny KB with its graph store
wrapped in a counter (:mod:`counting_store`) and compared with the same module reading one node (or
one name) at a time: the results must be equal and the number of store calls bounded by hops (or by
batches), not by nodes or hits. SSRAG and HybGRAG: test_batched_reads_ssrag_hybgrag.py.
"""

from __future__ import annotations

import math
import random

import pytest
from counting_store import counting

from hybridrag.agents.hydrarag import kg as hkg
from hybridrag.agents.hydrarag import kg_paths as hkp
from hybridrag.agents.hydrarag import kg_text as hkt
from hybridrag.agents.hydrarag import pruning as hprune
from hybridrag.agents.hydrarag import text as htext
from hybridrag.agents.mor import critique, graph_first, matching, output, trajectory
from hybridrag.agents.mor import traversal as trav
from hybridrag.agents.mor.plan import Plan, PlanNode, PlanRoute, validate_plan
from hybridrag.kb.base import open_kb


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
            traj = [
                *current[parent],
                trajectory.step(child, category, "struct", scores.of(child), [t.head, t.type, t.tail]),
            ]
            if child not in out or trajectory.rank_key(traj) > trajectory.rank_key(out[child]):
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
            want[eid] = [trajectory.step(eid, ent.type if ent else "", "text", s)]
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
            assert memo[ids] == (names[: hkt.SHOWN_NAMES], len(names))
        assert hkt.verbalise(kb, c, 2, memo) == hkt.verbalise(base, c, 2)
    assert calls["get_many"] == 1


def test_hydrarag_explore_kg_generic_reads_match_the_array_path(tiny_kb):
    base = open_kb(tiny_kb)
    kb, calls = counting(base)
    probe = {
        "phase": "initial",
        "depth": 2,
        "floor": False,
        "chains": [{"topics": ["Tom Hanks"], "names": ["Tom Hanks"], "indicator": "Tom Hanks - movie - director"}],
    }
    want, _ = hkg.explore_kg(base, "q", probe, ["id:Tom Hanks"], hprune.PruneSettings())
    got, _ = hkg.explore_kg(kb, "q", probe, ["id:Tom Hanks"], hprune.PruneSettings())
    assert got == want and len(got) > 2
    assert calls["get"] == 0 and calls["neighbors"] == 2 and calls["get_many"] == 1


def test_hydrarag_ranked_answers_and_documents_read_names_at_once(tiny_kb):
    base = open_kb(tiny_kb)
    kb, calls = counting(base)
    paths = [
        {"answers": ["Big", "Tom Hanks", "Apollo 13"], "score": 0.5, "source": "kg"},
        {"answers": ["Kevin Bacon", "Big"], "score": 0.7, "source": "kg", "doc_id": "p:Big"},
    ]
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


def _struct(eid: str, etype: str, edge: list[str]) -> dict:
    return {"id": eid, "type": etype, "via": "struct", "tf": 0.0, "edge": edge}


def test_mor_critique_reads_names_and_types_once_a_check(tiny_kb):
    kb, calls = counting(open_kb(tiny_kb))
    route = {
        "nodes": [
            {"type": "person", "restriction": "Tom Hanks"},
            {"type": "movie", "restriction": ""},
            {"type": "person", "restriction": ""},
        ],
        "relations": [["starred_actors"], ["directed_by"]],
    }
    assert critique.restriction_problem(kb, route, ["Big", "Tom Hanks"]) is None
    assert critique.restriction_problem(kb, route, ["Big", "Apollo 13"]).startswith(
        'restriction "Tom Hanks" names no person entity'
    )
    layers = [{"layer": 0, "struct": 0}, {"layer": 1, "struct": 0, "anchored": 0}, {"layer": 2, "struct": 0}]
    [hop] = critique.hop_problems(kb, route, {"topics": ["Tom Hanks", "Big"], "layers": layers})
    assert hop.startswith('relation starred_actors from type person from "Tom Hanks" reached no type movie')
    assert (calls["get"], calls["get_many"]) == (0, 3)
    seed = {"id": "Tom Hanks", "type": "person", "via": "text", "tf": 1.0, "edge": None, "topic": True}
    wrong = {
        **route,
        "nodes": [route["nodes"][0], {"type": "genre", "restriction": ""}, {"type": "movie", "restriction": ""}],
    }
    reached = {
        d: [seed, _struct(m, "genre", [m, "starred_actors", "Tom Hanks"]), _struct(d, "movie", [m, "directed_by", d])]
        for m, d in (("Big", "Penny Marshall"), ("Apollo 13", "Ron Howard"))
    }
    step1, step2 = critique.type_problems(kb, wrong, reached)  # the KB's types, as read one entity at a time
    assert step1.startswith("type genre at step 1") and step1.endswith("are mostly movie")
    assert step2.startswith("type movie at step 2") and step2.endswith("are mostly person")
    assert (calls["get"], calls["get_many"]) == (0, 4)  # both steps' entities in one read


def test_mor_topic_entities_read_the_seed_names_once(tiny_kb):
    kb, calls = counting(open_kb(tiny_kb))
    route = {
        "nodes": [{"type": "movie", "restriction": "big"}, {"type": "person", "restriction": ""}],
        "relations": [["starred_actors"]],
    }
    assert graph_first.topic_entities(kb, route, ["Tom Hanks", "Big", "A League of Their Own"]) == {"Big"}
    league = {**route, "nodes": [{"type": "movie", "restriction": "the film A League of Their Own"}, route["nodes"][1]]}
    seeds = ["Big", "A League of Their Own", "Tom Hanks"]
    assert graph_first.topic_entities(kb, league, seeds) == {"A League of Their Own"}
    assert (calls["get"], calls["get_many"]) == (0, 2)


def _old_path(kb, trajectory: list[dict]) -> str:
    """MoR's path text as it read before: one name per entity on the path."""
    node, parts = trajectory[0]["id"], [kb.name(trajectory[0]["id"])]
    for step in trajectory[1:]:
        head, rel, tail = step["edge"]
        parts.append(rel if head == node else f"{rel} (inverse)")
        node = tail if head == node else head
        parts.append(kb.name(node))
    return " → ".join(parts)


def test_mor_outputs_read_every_name_shown_at_once(tiny_kb, monkeypatch):
    base = open_kb(tiny_kb)
    nodes = [
        PlanNode(type=t, restriction="Tom Hanks" if i == 0 else "", relation="")
        for i, t in enumerate(["person", "movie", "person"])
    ]
    route = validate_plan(Plan(routes=[PlanRoute(nodes=nodes)]), base.graph.schema(), [])["routes"][0]
    found = trav.traverse_route(base, "Tom Hanks films", route, layer_k=3)["candidates"]
    top = [{"id": e, "score": 1.0 / i, "trajectory": t} for i, (e, t) in enumerate(found.items(), 1)]
    assert len(top) > 2 and sum(len(c["trajectory"]) > 2 for c in top) > 1
    kb, calls = counting(base)
    _doc_tables(monkeypatch)
    matching.doc_table(kb)
    calls.clear()
    got = output.outputs(kb, "Tom Hanks films", top)
    assert [r["name"] for r in got["ranked"]] == [base.name(c["id"]) for c in top]
    paths = [e["text"] for e in got["evidence"] if e["path"]]
    assert paths == [_old_path(base, c["trajectory"]) for c in top if len(c["trajectory"]) > 1]
    assert any("(inverse)" in p for p in paths)
    assert (calls["get"], calls["get_many"]) == (0, 1)
    assert output.verbalise_trajectory(kb, top[0]["trajectory"]) == _old_path(base, top[0]["trajectory"])
    assert (calls["get"], calls["get_many"]) == (0, 2)


def test_mor_text_links_read_the_parents_names_once(tiny_kb):
    from hybridrag.agents.mor import mentions

    plain = open_kb(tiny_kb)
    kb, calls = counting(plain)
    parents = ["Tom Hanks", "Big", "Penny Marshall"]
    got = mentions.mentioned(kb, parents, "movie", ["starred_actors"], max_rows=20)
    assert got == mentions.mentioned(plain, parents, "movie", ["starred_actors"], max_rows=20)
    assert calls["get"] == 0 and calls["get_many"] >= 1
