"""The Prime-sized synthesiser on a tiny size, and the walk-question sampler."""

from __future__ import annotations

import json
from collections import Counter

import numpy as np
import pytest

from benchmarks.scale.prime_questions import sample_cases
from benchmarks.scale.prime_synth import SCHEMA, TYPES, entity_name, plan, write_prime
from hybridrag.kb.ingest import build_graph
from hybridrag.kb.loaders import read_entities, read_triples, read_type_map

N, E = 3000, 20_000


@pytest.fixture(scope="module")
def src(tmp_path_factory):
    out = tmp_path_factory.mktemp("prime")
    return out, write_prime(out, N, E, seed=7)


def test_counts_match_the_request_and_the_files(src):
    out, res = src
    triples = list(read_triples(out / "kb.txt"))
    ents = list(read_entities(out / "entities.jsonl"))
    assert len(triples) == E == res["edges"]
    assert len({(t.head, t.type, t.tail) for t in triples}) == E  # distinct edges, as counted
    assert all(t.head != t.tail for t in triples)
    assert len(ents) == N == res["entities"]
    assert {t.type for t in triples} == {r for r, _, _ in SCHEMA}
    assert Counter(e.type for e in ents).keys() == set(TYPES)
    assert read_type_map(out / "types.json") == {r: (h, t) for r, h, t in SCHEMA}


def test_every_edge_respects_the_schema(src):
    out, _ = src
    type_of = {e.id: e.type for e in read_entities(out / "entities.jsonl")}
    schema = {r: (h, t) for r, h, t in SCHEMA}
    assert all((type_of[t.head], type_of[t.tail]) == schema[t.type] for t in read_triples(out / "kb.txt"))


def test_names_are_unique_and_pipe_free(src):
    out, _ = src
    names = [e.name for e in read_entities(out / "entities.jsonl")]
    assert len(set(names)) == len(names)
    assert not any("|" in n for n in names)
    assert len({entity_name(c, "disease") for c in range(5000)}) == 5000


def test_degrees_are_heavy_tailed(src):
    out, res = src
    deg = Counter()
    for t in read_triples(out / "kb.txt"):
        deg[t.head] += 1
        deg[t.tail] += 1
    d = np.array(sorted(deg.values()))
    assert res["degree"]["max"] == d.max()
    assert d.max() > 8 * d.mean()  # a Poisson graph of this mean degree stays within ~2x of it
    assert np.percentile(d, 99) > 3 * np.median(d)


def test_same_seed_same_files_other_seed_other_files(src, tmp_path):
    out, _ = src
    write_prime(tmp_path / "a", N, E, seed=7)
    write_prime(tmp_path / "b", N, E, seed=8)
    for name in ("kb.txt", "entities.jsonl"):
        assert (tmp_path / "a" / name).read_bytes() == (out / name).read_bytes()
        assert (tmp_path / "b" / name).read_bytes() != (out / name).read_bytes()


def test_impossible_sizes_are_refused():
    with pytest.raises(ValueError, match="at least"):
        plan(50, 1000)
    with pytest.raises(ValueError, match="distinct edges"):
        plan(100, 10**6)


def test_sampled_questions_follow_paths_that_exist(src, tmp_path):
    out, _ = src
    store = build_graph(
        tmp_path / "g", [out / "kb.txt"], entities=out / "entities.jsonl", type_map=out / "types.json", progress=False
    )
    cases = sample_cases(store, 5, seed=3)
    assert [c.rec.hops for c in cases] == [1] * 5 + [2] * 5 + [3] * 5
    for c in cases:
        frontier = {c.topic}
        for rel, typ in zip(c.relations, c.rec.types[1:], strict=True):
            frontier = {
                t.tail if t.head in frontier else t.head
                for t in store.neighbors(frontier, relations=[rel])
                if store.get(t.tail if t.head in frontier else t.head).type == typ
            }
            assert frontier, f"{c.question}: no {rel} edge to a {typ}"
        assert c.rec.answers[0] in {store.get(i).name for i in frontier}
        assert c.rec.topic in c.question and c.rec.types[0] == store.get(c.topic).type
    assert [c.question for c in sample_cases(store, 5, seed=3)] == [c.question for c in cases]
    assert json.dumps([c.question for c in sample_cases(store, 5, seed=4)]) != json.dumps([c.question for c in cases])
