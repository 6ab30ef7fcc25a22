"""The vectorised graph assembly (kb.build) gives exactly what the plain per-triple loops gave."""

from __future__ import annotations

import gc
import random
from collections import Counter, defaultdict

import numpy as np
import pytest

from hybridrag.kb.build import assemble, gc_paused
from hybridrag.kb.memory_store import InMemoryGraphStore
from hybridrag.kb.model import Entity, RelationType, Schema, Triple


def reference_assemble(triples, entities, type_map=None):
    """The assembly as first written: one Python loop per triple (the specification)."""
    type_map = type_map or {}
    unique = list(dict.fromkeys(triples))
    inferred: dict[str, str] = {}
    for t in unique:
        if t.type in type_map:
            inferred.setdefault(t.head, type_map[t.type][0])
    for t in unique:
        if t.type in type_map:
            inferred.setdefault(t.tail, type_map[t.type][1])
    ents = dict(entities)
    for t in unique:
        for eid in (t.head, t.tail):
            if eid not in ents:
                ents[eid] = Entity(eid, eid, inferred.get(eid, "entity"))
    ent_list = list(ents.values())
    index = {e.id: i for i, e in enumerate(ent_list)}
    rel_names = list(dict.fromkeys(t.type for t in unique))
    rel_index = {r: i for i, r in enumerate(rel_names)}
    heads = np.array([index[t.head] for t in unique], np.int32)
    tails = np.array([index[t.tail] for t in unique], np.int32)
    rels = np.array([rel_index[t.type] for t in unique], np.int16)
    types = [e.type for e in ent_list]
    head_t: dict[int, Counter] = defaultdict(Counter)
    tail_t: dict[int, Counter] = defaultdict(Counter)
    for h, r, t in zip(heads.tolist(), rels.tolist(), tails.tolist(), strict=True):
        head_t[r][types[h]] += 1
        tail_t[r][types[t]] += 1
    rel_types = {
        name: RelationType(
            name,
            tuple(k for k, _ in head_t[i].most_common()),
            tuple(k for k, _ in tail_t[i].most_common()),
            int(sum(head_t[i].values())),
        )
        for i, name in enumerate(rel_names)
    }
    return ent_list, heads, rels, tails, rel_names, Schema(dict(Counter(types).most_common()), rel_types)


def random_kb(seed: int):
    """Triples with repeats, relations typed and untyped, some entities given with their own types."""
    rng = random.Random(seed)
    names = [f"e{i}" for i in range(60)]
    rels = [f"r{i}" for i in range(7)]
    type_map = {r: (rng.choice("ABC"), rng.choice("ABCD")) for r in rels[:4]}
    triples = [Triple(rng.choice(names), rng.choice(rels), rng.choice(names)) for _ in range(400)]
    triples += rng.sample(triples, 50)
    rng.shuffle(triples)
    given = {
        n: Entity(n, n.upper(), rng.choice(["X", "A", "entity"]), "doc", ("alias",))
        for n in rng.sample(names, 10) + ["lonely"]
    }
    return triples, given, type_map


def assert_same(got, want):
    for g, w in zip(got, want, strict=True):
        if isinstance(w, np.ndarray):
            assert g.dtype == w.dtype
            np.testing.assert_array_equal(g, w)
        else:
            assert g == w


@pytest.mark.parametrize("seed", range(8))
def test_assemble_matches_the_per_triple_loops(seed):
    triples, given, type_map = random_kb(seed)
    got = assemble(triples, given, type_map)
    assert_same(got, reference_assemble(triples, given, type_map))
    assert list(got[5].relation_types) == got[4]  # schema relations in first-seen order
    assert any(len(r.head_types) > 1 for r in got[5].relation_types.values())  # ties and ranking exercised


def test_assemble_without_type_map_or_triples():
    triples, given, _ = random_kb(1)
    assert_same(assemble(triples, given), reference_assemble(triples, given))
    assert_same(assemble([], given), reference_assemble([], given))
    ents, heads, rels, tails, names, schema = assemble([], {})
    assert ents == [] and len(heads) == len(rels) == len(tails) == 0 and names == []
    assert schema.entity_types == {} and schema.relation_types == {}


def test_saved_files_are_byte_identical(tmp_path):
    triples, given, type_map = random_kb(3)
    for name, parts in (
        ("new", assemble(triples, given, type_map)),
        ("old", reference_assemble(triples, given, type_map)),
    ):
        InMemoryGraphStore(*parts).save(tmp_path / name)
    for f in ("graph.npz", "entities.jsonl", "graph.json"):
        assert (tmp_path / "new" / f).read_bytes() == (tmp_path / "old" / f).read_bytes()


def test_gc_paused_restores_the_previous_state():
    assert gc.isenabled()
    with gc_paused():
        assert not gc.isenabled()
    assert gc.isenabled()
    gc.disable()
    try:
        with gc_paused():
            pass
        assert not gc.isenabled()
    finally:
        gc.enable()
