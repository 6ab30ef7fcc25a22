"""SSRAG's ``answer`` is never the question's own entity (issue 13), with the LLM or without it."""

from __future__ import annotations

from hybridrag.agents.ssrag import support as support
from hybridrag.agents.ssrag import unify as uni
from hybridrag.agents.ssrag.augment import AugmentedQuery, IntentCues, KeyEntities, NamedEntity, SubQuestions
from hybridrag.agents.ssrag.retrieval import GraphText
from hybridrag.agents.ssrag.routing import RouteLabel
from hybridrag.agents.ssrag.unify import Answer, Redundancy
from hybridrag.graphs.ssrag import SSRAGContext, graph

QUESTION = "which movies did Tom Hanks act in"
AUGMENT = [
    SubQuestions(sub_questions=[QUESTION]),
    KeyEntities(entities=[NamedEntity(name="Tom Hanks", type="person")]),
    IntentCues(intent="which"),
    AugmentedQuery(query="Which films did Tom Hanks act in?"),
    RouteLabel(label="FACTUAL"),
]
KEEP = Redundancy(reasoning="Nothing repeats.", redundant=[])


def run(kb: str, **kw) -> dict:
    settings = {"top_k": 4, "vector_k": 3, "graph_k": 2, "max_iterations": 1, **kw}
    return graph.invoke({"question": QUESTION}, context=SSRAGContext(kb=kb, llm="fake:test", **settings))


def test_an_answer_naming_only_the_question_entity_is_rejected(tiny_kb, fake_llm):
    fake_llm(
        *AUGMENT,
        GraphText(text="Tom Hanks starred in Big."),
        KEEP,
        Answer(reasoning="The contexts are about him.", answer="tom hanks"),
    )
    out = run(tiny_kb, llm_nodes=1)
    [step] = [s for s in out["trace"] if s["node"] == "generate_answer"]
    assert "the question's own entity" in step["fallback"]
    assert out["answer"] and out["answer"].lower() != "tom hanks"
    assert out["answer"] == out["ranked"][0]["name"]  # the best context that is not the question's entity


def test_an_answer_listing_other_entities_too_is_kept(tiny_kb, fake_llm):
    fake_llm(
        *AUGMENT,
        GraphText(text="Tom Hanks starred in Big."),
        KEEP,
        Answer(reasoning="He starred in Big.", answer="Big"),
    )
    assert run(tiny_kb, llm_nodes=1)["answer"] == "Big"


def test_retrieval_only_answer_skips_the_question_entity(tiny_kb, fake_llm):
    fake_llm(*AUGMENT)
    out = run(tiny_kb, graph_to_text="template", llm_dedup=False, answer=False)
    assert out["answer"] and out["answer"] != "Tom Hanks"


def test_fallback_answer_skips_entities_and_passages_of_the_question():
    own = {"kind": "entity", "id": "Tom Hanks", "entity_id": "Tom Hanks", "name": "Tom Hanks"}
    about = {"kind": "passage", "id": "p:Tom Hanks", "entity_id": "Tom Hanks", "name": "passage about Tom Hanks"}
    other = {"kind": "passage", "id": "p:Big", "entity_id": "Big", "name": "passage about Big"}
    assert uni.fallback_answer([own, about, other], {"Tom Hanks"}) == "Big"
    assert uni.fallback_answer([own, about], {"Tom Hanks"}) == ""
    assert uni.fallback_answer([own]) == "Tom Hanks"  # nothing asked: the top context


def test_own_entity_reads_every_part_of_the_answer():
    assert support.own_entity("Tom Hanks", ["Tom Hanks", "Hanks"])
    assert support.own_entity("hanks", ["Tom Hanks", "Hanks"])
    assert not support.own_entity("Big, Tom Hanks", ["Tom Hanks"])
    assert not support.own_entity("Big", [])


def test_a_short_tag_written_in_the_contexts_is_supported():
    shown = [
        {
            "name": "Carmen Jones",
            "kind": "passage",
            "source": "doc",
            "path": None,
            "text": "Carmen Jones is tagged as bd-r. Carmen Jones is tagged as world war ii.",
        }
    ]
    question = "describe the movie Carmen Jones in a few words"
    assert support.supported("bd-r, world war ii", question, shown).ok  # no content word in "bd-r"
    assert not support.supported("bd-r, Tom Cruise", question, shown).ok
