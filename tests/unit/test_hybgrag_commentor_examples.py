"""HybGRAG's commentor examples under ``examples=kb`` show Table 4's six error types as the paper defines them.

Also: both intersection errors reach the router under the default LLM commentor (its reply is
checked against the intersection the retrieval found).
"""

from __future__ import annotations

import pytest

from hybridrag.agents.hybgrag.experience import passage_aspect, textual_aspect
from hybridrag.agents.hybgrag.paths import follow_path
from hybridrag.agents.hybgrag.retrieval import hybrid_retrieve, link_entity
from hybridrag.agents.hybgrag.roles import (
    ERROR_TYPES,
    Critique,
    RouterAction,
    TopicEntity,
    Validation,
    render_experience,
)
from hybridrag.agents.hybgrag.shots import examples_for
from hybridrag.graphs.hybgrag import HybGRAGContext, graph
from hybridrag.kb.base import open_kb

YES = Validation(reasoning="fits", verdict="yes")
QUESTION = "which movies did Tom Hanks act in"


@pytest.fixture(scope="module")
def kb(tiny_kb):
    return open_kb(tiny_kb)


@pytest.fixture(scope="module")
def shots(kb):
    assert HybGRAGContext().examples == "kb" and HybGRAGContext().num_experiences == 30
    return examples_for(kb, "commentor", QUESTION, "kb", 30)


def by_type(shots: list[dict], etype: str) -> list[dict]:
    return [e for e in shots if e["error_type"] == etype]


def test_all_six_types_of_table_4_are_shown_and_rendered(shots):
    assert {e["error_type"] for e in shots} == set(ERROR_TYPES)
    prompt = render_experience(shots)
    assert all(f'"error_type": "{t}"' in prompt for t in ERROR_TYPES)
    assert all(e["reasoning"] for e in shots)


def test_incorrect_entity_shows_a_textual_aspect_taken_for_an_entity(kb, shots):
    aspects = [e for e in by_type(shots, "incorrect_entity_relation") if e["wrong_entities"]]
    assert aspects, "the paper's main error (a textual aspect taken for an entity) is never shown"
    for e in aspects:
        [wrong] = e["wrong_entities"]
        assert wrong in e["question"] and wrong in [x["name"] for x in e["entities"]]
        assert not kb.graph.lookup(wrong)  # no KB entity: it is text, not a node
        assert any(x["name"] != wrong and link_entity(kb, x["name"], x["type"]) for x in e["entities"])
    relations = [e for e in by_type(shots, "incorrect_entity_relation") if e["wrong_relations"]]
    assert relations and all(set(e["wrong_relations"]) <= set(e["relations"]) for e in relations)


def test_missing_entity_drops_an_entity_the_question_names(kb, shots):
    entries = by_type(shots, "missing_entity")
    assert entries
    for e in entries:
        [kept] = e["entities"]  # Table 4: "there is only one entity but there may be more"
        dropped = e["dropped_entity"]
        assert dropped["name"] in e["question"] and dropped["relation"] not in e["relations"]
        topic = link_entity(kb, kept["name"], kept["type"]).id
        answers = set(follow_path(kb, topic, tuple(e["relations"])))
        assert answers & set(follow_path(kb, dropped["id"], (dropped["relation"],)))  # the two meet at an answer


def test_no_entity_and_module_and_intersections_as_table_4_defines_them(kb, shots):
    assert all(e["entities"] == [] for e in by_type(shots, "no_entity"))
    assert all(e["module"] == "text" and e["entities"] for e in by_type(shots, "incorrect_retrieval_module"))
    for etype in ("no_intersection", "incorrect_intersection"):
        assert by_type(shots, etype)
        for e in by_type(shots, etype):
            assert len(e["entities"]) == 2
            ids = [link_entity(kb, x["name"], x["type"]).id for x in e["entities"]]
            res = hybrid_retrieve(kb, e["question"], ids, e["relations"], 1, 5)
            assert bool(res.intersection) == (etype == "incorrect_intersection")


def test_textual_aspects_come_from_the_question_or_an_answer_passage(kb):
    from hybridrag.agents.shots import bank_for

    bank = bank_for(kb)
    with_passage = [ex for ex in bank.examples if textual_aspect(kb, ex) is None and passage_aspect(kb, ex)]
    assert with_passage  # the tiny KB's questions are synthesized: their aspects come from passages
    aspect = passage_aspect(kb, with_passage[0])
    assert not kb.graph.lookup(aspect) and len(aspect.split()) >= 2


def act(entities, relations) -> RouterAction:
    return RouterAction(
        module="hybrid", entities=[TopicEntity(name=n, type=t) for n, t in entities], relations=list(relations)
    )


@pytest.mark.parametrize("said", ["no_intersection", "incorrect_intersection"])
def test_llm_commentor_intersection_is_checked_against_the_retrieval(tiny_kb, fake_llm, said):
    apart = act([("Tom Hanks", "person"), ("French", "language")], ["starred_actors", "in_language"])
    fake_llm(apart, Critique(reasoning="x", error_type=said), act([("Tom Hanks", "person")], ["starred_actors"]), YES)
    out = graph.invoke({"question": QUESTION}, context=HybGRAGContext(kb=tiny_kb, llm="fake:test", max_iterations=2))
    [step] = [s for s in out["trace"] if s["node"] == "comment_on_routing"]
    assert step["source"] == "llm" and step["decision"] == "no_intersection"  # the neighbourhoods share nothing
    assert "do not intersect" in step["feedback"]


def test_llm_commentor_no_intersection_on_meeting_neighbourhoods_is_an_incorrect_intersection(tiny_kb, fake_llm):
    meet = act([("Tom Hanks", "person"), ("Kevin Bacon", "person")], ["starred_actors"])
    no = Validation(reasoning="no", verdict="no")
    fake_llm(meet, no, Critique(reasoning="x", error_type="no_intersection"), meet, YES)
    out = graph.invoke({"question": QUESTION}, context=HybGRAGContext(kb=tiny_kb, llm="fake:test", max_iterations=2))
    [step] = [s for s in out["trace"] if s["node"] == "comment_on_routing"]
    assert step["source"] == "llm" and step["decision"] == "incorrect_intersection"


def test_router_calls_2_extracts_then_picks_the_module_in_a_second_call(tiny_kb, fake_llm):
    from hybridrag.agents.hybgrag.roles import RouterExtraction, RouterModule

    assert HybGRAGContext().router_calls == 1
    extraction = RouterExtraction(entities=[TopicEntity(name="Tom Hanks", type="person")], relations=["starred_actors"])
    fake = fake_llm(extraction, RouterModule(module="hybrid"), YES)
    out = graph.invoke({"question": QUESTION}, context=HybGRAGContext(kb=tiny_kb, llm="fake:test", router_calls=2))
    assert [c["schema"] for c in fake.calls] == ["RouterExtraction", "RouterModule", "Validation"]
    second = fake.calls[1]["messages"]
    assert '"Tom Hanks"' in second[-2].content and "which would narrow down the search" in second[-1].content
    assert "the module is asked next" in fake.calls[0]["messages"][-1].content
    assert [s["decision"] for s in out["trace"] if s["node"] == "route_question"] == ["hybrid"]
    with pytest.raises(ValueError, match="router_calls must be 1 or 2"):
        HybGRAGContext(router_calls=3)


@pytest.mark.parametrize("etype", ["wrong_module", "wrong_entity"])
def test_stand_in_router_in_two_calls_carries_and_repairs_the_drawn_error(tiny_kb, etype):
    from hybridrag.agents.llm.models import forget_model, register_model
    from hybridrag.evals.datasets import Question
    from hybridrag.evals.oracle import GoldSet, build_oracle

    q = Question("big", "who directed Big", ("Penny Marshall",), qtype="movie_to_director", topic="Big", hops=1)
    spec = f"oracle:p=1,types={etype}"
    m = build_oracle(spec, GoldSet.from_questions([q]))
    register_model(spec, m)
    try:
        out = graph.invoke({"question": q.question}, context=HybGRAGContext(kb=tiny_kb, llm=spec, router_calls=2))
    finally:
        forget_model(spec)
    [entry] = m.log.entries()
    assert entry["applied"] and entry["repaired"] and entry["repaired_at"] == 1
    assert out["ranked"][0]["name"] == "Penny Marshall" and out["usage"]["by_role"]["router"]["llm_calls"] == 4
