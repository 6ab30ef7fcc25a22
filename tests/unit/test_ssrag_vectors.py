"""SSRAG's vectors on the tiny real KB: stored vectors reused, facts scored by their parts, and
nothing encoded twice (the speed work of issue 13 must not change what is scored)."""

from __future__ import annotations

import numpy as np
import pytest

from hybridrag.agents.ssrag import unify as uni
from hybridrag.agents.ssrag import vectors as V
from hybridrag.agents.ssrag.nodes import nodes_facts
from hybridrag.graphs.runtime import resolve_kb
from hybridrag.graphs.ssrag import SSRAGContext


@pytest.fixture
def kb(tiny_kb):
    return resolve_kb(SSRAGContext(kb=tiny_kb))


@pytest.fixture
def encoded(monkeypatch):
    """Every text the model encodes from now on (the caches start empty)."""
    seen: list[str] = []
    real = V.embed_matrix
    monkeypatch.setattr(V, "_cache", type(V._cache)())
    monkeypatch.setattr(V, "_parts", type(V._parts)())
    monkeypatch.setattr(V, "embed_matrix", lambda emb, texts, progress=False: (seen.extend(texts), real(emb, texts))[1])
    return seen


def test_kb_documents_use_the_vectors_the_index_holds(kb, encoded):
    hits = kb.dense_search(kb.embed("Tom Hanks"), 4)
    items = [{"id": h.doc.id, "kind": h.doc.kind, "name": h.doc.id, "text": h.doc.text, "source": "doc"} for h in hits]
    encoded.clear()
    mat = V.doc_vectors(kb, items)
    assert encoded == []  # read from the index, not encoded
    assert np.allclose(mat, V.vectors(kb, [h.doc.text for h in hits]), atol=1e-5)  # the texts' own vectors
    changed = [{**items[0], "text": "another text"}]
    V.doc_vectors(kb, changed)
    assert encoded[-1] == "another text"  # a text that is not the indexed one is encoded


def test_name_vectors_are_stored_for_bare_name_entities(kb, encoded):
    mat = V.name_vectors(kb, ["Tom Hanks", "Penny Marshall"])
    assert encoded == []
    assert float(mat[0] @ kb.embed("Tom Hanks")) == pytest.approx(1.0, abs=1e-5)


def test_a_triple_is_scored_by_its_parts_and_a_relation_is_encoded_once(kb, encoded):
    rows = [["Big", "directed_by", "Penny Marshall"], ["Big", "release_year", "1988"]]
    facts = ["Big directed by Penny Marshall", "Big release year 1988"]
    mat = V.fact_vectors(kb, facts, rows)
    assert sorted(encoded) == ["directed by", "release year"]  # the names come from the index
    parts = V.name_vectors(kb, ["Big", "Penny Marshall"]).sum(0) + V.vectors(kb, ["directed by"])[0]
    assert np.allclose(mat[0], parts / np.linalg.norm(parts), atol=1e-6)
    encoded.clear()
    V.fact_vectors(kb, ["Apollo 13 directed by Ron Howard"], [["Apollo 13", "directed_by", "Ron Howard"]])
    assert encoded == []  # a known relation between stored names costs no encoding


def test_a_text_fact_is_its_mentions_and_the_rest_of_its_words(kb):
    ids, rest = V.fact_parts(kb, "Tom Hanks starred in Big", None)
    assert set(ids) == {"Tom Hanks", "Big"} and rest == "starred in"


def test_sentence_scoring_encodes_each_fact_whole(kb, encoded):
    facts = ["Big directed by Penny Marshall"]
    mat = V.fact_vectors(kb, facts, [["Big", "directed_by", "Penny Marshall"]], "sentence")
    assert encoded == facts and np.allclose(mat, V.vectors(kb, facts))
    with pytest.raises(ValueError, match="fact_scoring must be one of"):
        V.fact_vectors(kb, facts, [None], "exact")


@pytest.mark.parametrize(
    ("question", "fact"),
    [("when was Big released", "Big release year 1988"), ("what genre is Big", "Big has genre Comedy")],
)
def test_the_relevant_fact_ranks_first_with_parts_as_with_sentences(kb, question, fact):
    qv = kb.embed(question)
    for scoring in ("parts", "sentence"):
        [node] = nodes_facts(kb, ["Big"], 25, qv, scoring=scoring)
        assert node["facts"][0] == fact, scoring


def test_a_graph_context_scores_as_its_best_fact_and_text_mode_encodes_it(kb, encoded):
    qv = kb.embed("who directed Big")
    [node] = nodes_facts(kb, ["Big"], 25, qv)
    item = {
        "id": "Big",
        "kind": "entity",
        "name": "Big",
        "text": "Big is a film.",
        "source": "kg",
        "entity_id": "Big",
        "path": node["facts"],
        "score": 0.0,
    }
    [score] = uni.item_scores(kb, [item], qv, {"Big": node})
    best = float((V.fact_vectors(kb, node["facts"], node["triples"]) @ qv).max())
    assert score == pytest.approx(best, abs=1e-6)
    assert "Big is a film." not in encoded  # the converted text is not encoded by default
    [paper] = uni.item_scores(kb, [item], qv, {"Big": node}, graph="text")
    assert "Big is a film." in encoded and paper == pytest.approx(float(V.vectors(kb, ["Big is a film."])[0] @ qv))


def test_query_vectors_are_encoded_once(kb, encoded):
    V.query_vector(kb, "who directed Big")
    V.query_vector(kb, "who directed Big")
    assert encoded == ["who directed Big"]
