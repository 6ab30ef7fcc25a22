"""HybGRAG on a KB whose facts are only in passages (no relation in the schema), not about movies.

The router names relations as phrases, the hybrid module follows them through the passages'
sentences, and no answer is ever the question's own entity.
"""

from __future__ import annotations

import json

import pytest

from hybridrag.agents.hybgrag.paths import path_retrieve
from hybridrag.agents.hybgrag.roles import RouterAction, TopicEntity, Validation, check_action, router_first_messages
from hybridrag.graphs.hybgrag import HybGRAGContext, graph
from hybridrag.tools.text_hops import mentions_in, relation_words, sentences

ENTITIES = [
    ("Acme", "company"),
    ("Globex", "company"),
    ("Initech", "company"),
    ("Ada Lovelace", "person"),
    ("Grace Hopper", "person"),
    ("Hank J. Scorpio", "person"),
    ("Ada Lovelace Institute", "company"),
    ("Lyon", "city"),
    ("Springfield", "city"),
    ("Rocket Skates", "product"),
    ("founding myth", "tag"),
]
PASSAGES = [
    (
        "Acme",
        "Acme was founded by Ada Lovelace. Acme is headquartered in Lyon. Acme makes the Rocket Skates. "
        "Grace Hopper works at Acme.",
    ),
    (
        "Globex",
        "Globex was founded by Hank J. Scorpio. Globex is headquartered in Springfield. Ada Lovelace works at Globex.",
    ),
    (
        "Initech",
        "Initech was founded by the Ada Lovelace Institute. Initech is headquartered in Springfield. "
        "Initech is tagged as founding myth.",
    ),
]


@pytest.fixture(scope="module")
def text_kb(tmp_path_factory) -> str:
    from hybridrag.kb.ingest import ingest

    src = tmp_path_factory.mktemp("text-only-src")
    ents = [{"id": n, "name": n, "type": t} for n, t in ENTITIES]
    (src / "e.jsonl").write_text("\n".join(json.dumps(e) for e in ents), encoding="utf-8")
    rows = [{"id": f"p:{owner}", "entity_id": owner, "text": text} for owner, text in PASSAGES]
    (src / "p.jsonl").write_text("\n".join(json.dumps(p) for p in rows), encoding="utf-8")
    (src / "t.txt").write_text("", encoding="utf-8")
    out = tmp_path_factory.mktemp("text-only-kb") / "kb"
    ingest(out, [src / "t.txt"], entities=src / "e.jsonl", passages=src / "p.jsonl", progress=False)
    return str(out)


@pytest.fixture(scope="module")
def kb(text_kb):
    from hybridrag.kb.base import open_kb

    return open_kb(text_kb)


def names(res) -> list[str]:
    return [r.name for r in res.references]


def test_without_relation_types_the_router_is_asked_for_phrases_and_they_are_kept(kb):
    schema = kb.graph.schema()
    assert not schema.relation_types
    user = router_first_messages("who founded Acme", schema, [])[1]["content"]
    assert "Relation types: (none: this knowledge base states its facts only in text" in user
    action = check_action(
        RouterAction(
            module="hybrid",
            entities=[TopicEntity(name="Acme", type="company")],
            relations=["Founded by", "headquartered_in"],
        ),
        schema,
    )
    assert action["relations"] == ["founded_by", "headquartered_in"] and action["dropped_relations"] == []


def test_a_relation_phrase_is_followed_through_the_sentence_that_carries_it(kb):
    res = path_retrieve(kb, "who founded Acme", ["Acme"], ["founded_by"], 1)
    assert names(res) == ["Ada Lovelace"]  # not the city, the product or the employee of the same passage
    assert res.references[0].paths[0][0].type == "founded_by (text)"
    assert names(path_retrieve(kb, "where is Acme headquartered", ["Acme"], ["headquartered_in"], 1)) == ["Lyon"]


def test_a_relation_word_inside_a_name_does_not_state_the_relation(kb):
    # "founding myth" carries "found" only inside the tag's name
    assert names(path_retrieve(kb, "who founded Initech", ["Initech"], ["founded_by"], 1)) == ["Ada Lovelace Institute"]


def test_a_relation_naming_a_type_needs_no_word_of_it_in_the_sentence(kb):
    assert names(path_retrieve(kb, "in which city is Acme", ["Acme"], ["in_city"], 1)) == ["Lyon"]
    assert names(path_retrieve(kb, "what does Acme make", ["Acme"], ["makes_product"], 1)) == ["Rocket Skates"]


def test_backward_steps_need_the_relation_and_a_whole_mention(kb):
    # Ada Lovelace works at Globex; she founded Acme (other relation); "Ada Lovelace Institute" is not her
    assert names(path_retrieve(kb, "where does Ada Lovelace work", ["Ada Lovelace"], ["works_at"], 1)) == ["Globex"]
    assert names(path_retrieve(kb, "what did Ada Lovelace found", ["Ada Lovelace"], ["founded_by"], 1)) == ["Acme"]


def test_two_text_hops(kb):
    res = path_retrieve(
        kb,
        "where is the company Ada Lovelace works at headquartered",
        ["Ada Lovelace"],
        ["works_at", "headquartered_in"],
        2,
    )
    assert names(res) == ["Springfield"]
    assert [t.type for t in res.references[0].paths[0]] == ["works_at (text)", "headquartered_in (text)"]


def test_names_with_punctuation_are_found_and_sentences_are_not_cut_inside_a_name(kb):
    assert "Hank J. Scorpio" in mentions_in(kb, "Globex was founded by Hank J. Scorpio.")
    assert names(path_retrieve(kb, "who founded Globex", ["Globex"], ["founded_by"], 1)) == ["Hank J. Scorpio"]
    import re

    keep = re.compile(re.escape("Mrs. Brown's Boys"))
    assert sentences("Mrs. Brown's Boys was made by Ann Lee. It won.", keep) == [
        "Mrs. Brown's Boys was made by Ann Lee.",
        "It won.",
    ]


def test_relation_words_drop_function_words_and_plurals():
    assert relation_words("has_tags") == ["tag"] and relation_words("works at") == ["work"]
    assert relation_words("headquartered_in") == ["headquartered"]


def test_graph_answers_a_text_only_kb_through_the_hybrid_module(text_kb, fake_llm):
    fake_llm(
        RouterAction(module="hybrid", entities=[TopicEntity(name="Acme", type="company")], relations=["founded_by"]),
        Validation(reasoning="fits", verdict="yes"),
    )
    out = graph.invoke({"question": "who founded Acme"}, context=HybGRAGContext(kb=text_kb, llm="fake:test"))
    route = next(s for s in out["trace"] if s["node"] == "route_question")
    assert route["fallback"] is None and route["relations"] == ["founded_by"]
    assert out["ranked"][0]["name"] == out["answer"] == "Ada Lovelace"
    assert any(e["text"] == "Acme → founded_by (text) → Ada Lovelace" for e in out["evidence"])


def test_the_answer_is_never_the_questions_own_entity(text_kb, fake_llm):
    # text module: Acme's own passage is the nearest text, so Acme would rank first
    fake_llm(
        RouterAction(module="text", entities=[TopicEntity(name="Acme", type="company")], relations=[]),
        Validation(reasoning="fits", verdict="yes"),
    )
    out = graph.invoke({"question": "Acme"}, context=HybGRAGContext(kb=text_kb, llm="fake:test"))
    ranked = [r["id"] for r in out["ranked"]]
    assert "Acme" in ranked and ranked[-1] == "Acme"
    assert out["answer"] and out["answer"] != "Acme" and out["answer"] == out["ranked"][0]["name"]


def test_a_hop_that_reaches_nothing_takes_the_sentence_nearest_to_the_relation(kb):
    # no sentence carries "creator" and no entity type is named by it: the nearest sentence decides
    res = path_retrieve(kb, "who is the creator of Acme", ["Acme"], ["creator"], 1)
    assert names(res) == ["Ada Lovelace"]
    assert res.references[0].paths[0][0].type == "creator (text, nearest sentence)"
    assert res.unused_relations == []


def test_in_qa_mode_an_answer_naming_the_questions_own_entity_falls_back(text_kb, fake_llm):
    # the topic is no retrieved entity, so the grounding check refuses it; the fallback skips it too
    from hybridrag.agents.hybgrag.roles import Answer

    fake_llm(
        RouterAction(module="hybrid", entities=[TopicEntity(name="Acme", type="company")], relations=["founded_by"]),
        Validation(reasoning="fits", verdict="yes"),
        Answer(reasoning="it is about Acme", answer="Acme"),
    )
    out = graph.invoke(
        {"question": "who founded Acme"}, context=HybGRAGContext(kb=text_kb, llm="fake:test", answer=True)
    )
    step = next(s for s in out["trace"] if s["node"] == "generate_answer")
    assert out["answer"] == "Ada Lovelace" and step["decision"].startswith("fallback: top reference")


def test_without_text_hops_a_kb_without_relations_takes_the_text_module(text_kb, fake_llm):
    fake_llm(
        RouterAction(module="hybrid", entities=[TopicEntity(name="Acme", type="company")], relations=["founded_by"]),
        Validation(reasoning="fits", verdict="yes"),
    )
    out = graph.invoke(
        {"question": "who founded Acme"}, context=HybGRAGContext(kb=text_kb, llm="fake:test", text_hops=False)
    )
    route = next(s for s in out["trace"] if s["node"] == "route_question")
    assert route["fallback"] == "no relation to follow: text"
    assert [s["node"] for s in out["trace"]][1] == "retrieve_text" and out["answer"] != "Acme"
