"""HybGRAG's text hops: a relation followed through passages where the graph lacks the edge."""

from __future__ import annotations

import json

import pytest
from kb_fixtures import movie_kb

from hybridrag.agents.hybgrag.paths import path_retrieve
from hybridrag.agents.hybgrag.roles import RouterAction, TopicEntity, Validation
from hybridrag.graphs.hybgrag import HybGRAGContext, graph

TRIPLES = """\
Big|starred_actors|Tom Hanks
Awakenings|directed_by|Penny Marshall
Pleasantville|written_by|Gary Ross
Splash|starred_actors|Tom Hanks
Cocoon|directed_by|Albert S. Rogell
Amelie|in_language|French
"""
PASSAGES = [
    {"id": "p:Big", "entity_id": "Big", "text": "Big was directed by Penny Marshall. Big was written by Gary Ross."},
    {"id": "p:Splash", "entity_id": "Splash", "text": "Splash was directed by Albert S. Rogell. Splash is in French."},
]


@pytest.fixture(scope="module")
def half_kb(tmp_path_factory) -> str:
    return movie_kb(tmp_path_factory, "half", TRIPLES, PASSAGES)


def test_forward_text_hop_takes_the_sentence_with_the_relation(half_kb):
    from hybridrag.kb.base import open_kb

    kb = open_kb(half_kb)
    res = path_retrieve(kb, "who directed Big", ["Big"], ["directed_by"], 1)
    assert [r.name for r in res.references] == ["Penny Marshall"]  # not the writer named in the same passage
    assert res.references[0].paths[0][0].type == "directed_by (text)"
    assert res.unused_relations == []
    assert path_retrieve(kb, "who directed Big", ["Big"], ["directed_by"], 1, text=False).references == []


def test_backward_text_hop_joins_the_graph_edge(half_kb):
    from hybridrag.kb.base import open_kb

    kb = open_kb(half_kb)
    res = path_retrieve(kb, "which films did Penny Marshall direct", ["Penny Marshall"], ["directed_by"], 1)
    assert {r.name for r in res.references} == {"Big", "Awakenings"}


def test_graph_accepts_a_text_hop_and_shows_it_in_the_path(half_kb, fake_llm):
    fake_llm(
        RouterAction(module="hybrid", entities=[TopicEntity(name="Big", type="movie")], relations=["directed_by"]),
        Validation(reasoning="fits", verdict="yes"),
    )
    out = graph.invoke({"question": "who directed Big"}, context=HybGRAGContext(kb=half_kb, llm="fake:test"))
    assert out["ranked"][0]["name"] == "Penny Marshall"
    assert any(e["text"] == "Big → directed_by (text) → Penny Marshall" for e in out["evidence"])


def test_initials_do_not_end_a_sentence_and_a_sole_relation_needs_no_word(half_kb):
    from hybridrag.kb.base import open_kb

    kb = open_kb(half_kb)
    res = path_retrieve(kb, "which films did Albert S. Rogell direct", ["Albert S. Rogell"], ["directed_by"], 1)
    assert {r.name for r in res.references} == {"Splash", "Cocoon"}
    # in_language is the only movie-language relation: "Splash is in French" counts without the word
    language = path_retrieve(kb, "what language is Splash in", ["Splash"], ["in_language"], 1)
    assert [r.name for r in language.references] == ["French"]
    # starred_actors shares its types with directed_by: no "starred" word, no step
    stars = path_retrieve(kb, "who starred in Splash", ["Splash"], ["starred_actors"], 1)
    assert [r.name for r in stars.references] == ["Tom Hanks"]


def test_a_kb_without_relations_and_no_relation_phrase_takes_the_text_module(tmp_path, fake_llm):
    from hybridrag.kb.ingest import ingest

    ents = [
        {"id": "Big", "name": "Big", "type": "movie"},
        {"id": "Penny Marshall", "name": "Penny Marshall", "type": "person"},
    ]
    (tmp_path / "e.jsonl").write_text("\n".join(json.dumps(e) for e in ents), encoding="utf-8")
    (tmp_path / "p.jsonl").write_text(json.dumps(PASSAGES[0]), encoding="utf-8")
    (tmp_path / "t.txt").write_text("", encoding="utf-8")
    ingest(
        tmp_path / "kb",
        [tmp_path / "t.txt"],
        entities=tmp_path / "e.jsonl",
        passages=tmp_path / "p.jsonl",
        progress=False,
    )
    fake_llm(
        RouterAction(module="hybrid", entities=[TopicEntity(name="Big", type="movie")], relations=[]),
        Validation(reasoning="fits", verdict="yes"),
    )
    ctx = HybGRAGContext(kb=str(tmp_path / "kb"), llm="fake:test")
    out = graph.invoke({"question": "who directed Big"}, context=ctx)
    [route] = [s for s in out["trace"] if s["node"] == "route_question"]
    assert route["fallback"] == "no relation to follow: text"
    assert [s["node"] for s in out["trace"]][1] == "retrieve_text"
