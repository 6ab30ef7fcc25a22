"""HydraRAG's paragraph → path rule for a small model (agents/hydrarag/text_rules.py) and the answer
check that reads its paths: a fact only a passage states is answered without a path-construction call."""

from __future__ import annotations

import pytest
from kb_fixtures import movie_kb

from hybridrag.agents.hydrarag import audit as audit
from hybridrag.agents.hydrarag import roles as R
from hybridrag.agents.hydrarag.text_rules import UNMATCHED, answer_kind, rule_paths
from hybridrag.graphs.hydrarag import HydraRAGContext, graph
from hybridrag.graphs.runtime import resolve_kb

TRIPLES = """\
Amelie|directed_by|Jean-Pierre Jeunet
Amelie|starred_actors|Audrey Tautou
Amelie|release_year|2001
Delicatessen|written_by|Guillaume Laurant
Delicatessen|directed_by|Jean-Pierre Jeunet
"""
# the written_by edge of Amelie is only in its passage, as in MetaQA-hybrid
PASSAGES = [
    {
        "id": "p:Amelie",
        "entity_id": "Amelie",
        "text": "Audrey Tautou starred in Amelie. Amelie was written by Guillaume Laurant. "
        "Amelie was released in 2001.",
    }
]


@pytest.fixture(scope="module")
def hybrid_kb(tmp_path_factory: pytest.TempPathFactory) -> str:
    return movie_kb(tmp_path_factory, "hybrid", TRIPLES, PASSAGES)


def sent(text: str, doc: str = "Amelie") -> dict:
    return {"sentence": text, "doc_id": f"p:{doc}", "doc_name": doc, "score": 0.5}


CHAIN = {"topics": ["Amelie"], "names": ["Amelie"], "indicator": "Amelie - written by - answer(person)"}


def test_a_sentence_writing_the_skyline_relation_gives_a_path_that_follows_it(hybrid_kb):
    kb = resolve_kb(HydraRAGContext(kb=hybrid_kb))
    sents = [
        sent("Audrey Tautou starred in Amelie."),
        sent("Amelie was written by Guillaume Laurant."),
        sent("Delicatessen was written by Guillaume Laurant.", doc="Delicatessen"),
    ]
    paths = rule_paths(kb, [CHAIN], sents)
    assert [(p["tokens"], p["follows"]) for p in paths] == [
        (["Amelie", "written by", "Guillaume Laurant"], True),
        (["Amelie", UNMATCHED, "Audrey Tautou"], False),
    ]  # a sentence not naming the topic gives none


def test_the_answer_kind_keeps_names_of_that_kind(hybrid_kb):
    kb = resolve_kb(HydraRAGContext(kb=hybrid_kb))
    mixed = [sent("Amelie was written by Guillaume Laurant in 2001.")]
    [path] = rule_paths(kb, [CHAIN], mixed)
    assert path["names"] == ["Amelie", "Guillaume Laurant"]
    wrong_kind = {**CHAIN, "indicator": "Amelie - written by - answer(movie)"}
    # no name of the wrong kind: the sentence writes the relation, so every other name is kept
    assert {p["names"][1] for p in rule_paths(kb, [wrong_kind], mixed)} == {"Guillaume Laurant", "2001"}
    assert answer_kind("X - y - answer(entity)") == "" and answer_kind("X - y - answer(Year)") == "year"


def test_small_model_answers_a_fact_only_a_passage_states_without_a_path_call(hybrid_kb, tiny_llama):
    plan = R.SkylinePlan(topic="Amelie", relations=["written_by"], answer_type="person")
    tiny_llama(plan.model_dump_json())
    ctx = HydraRAGContext(kb=hybrid_kb, llm="local:tiny", use_web=False, examples="bundled")
    out = graph.invoke({"question": "who wrote Amelie"}, context=ctx)
    assert out["answer"] == "Guillaume Laurant"
    assert {r: v["llm_calls"] for r, v in out["usage"]["by_role"].items()} == {"analysis": 1}
    docs = [s for s in out["trace"] if s["node"] == "explore_source" and s["source"] == "docs"]
    assert docs and "judge rules (small model)" in docs[0]["notes"][0]
    [check] = [s for s in out["trace"] if s["node"] == "check_answer"]
    assert check["reasoning"] == "rule: a selected path follows the skyline's relations and reaches 'Guillaume Laurant'"


def test_the_rule_check_answers_with_the_entity_a_skyline_path_reaches():
    state = {
        "skyline": "Luke Wilson - written by - answer(movie)",
        "question": "which film did Luke Wilson write",
        "mentions": ["Luke Wilson"],
        "topics": [{"id": "LW", "name": "Luke Wilson", "mention": "Luke Wilson"}],
        "selected": [
            {"source": "kg", "answers": ["W"], "path": [{"ids": ["LW"]}, {"relations": ["written_by"], "ids": ["W"]}]},
            {"source": "doc", "answers": ["O"], "path": ["Luke Wilson", UNMATCHED, "Old School"]},
        ],
        "ranked": [
            {"id": "O", "kind": "entity", "name": "Old School"},
            {"id": "W", "kind": "entity", "name": "The Wendell Baker Story"},
        ],
    }
    assert audit.along_skyline(state) == "The Wendell Baker Story"
    assert audit.along_skyline({**state, "selected": state["selected"][1:]}) == ""


def test_the_rule_check_answers_a_list_question_with_every_entity_skyline_paths_reach(tiny_kb):
    from hybridrag.agents.hydrarag.answering import rule_check, without_own_entities
    from hybridrag.kb.base import open_kb

    path = [{"ids": ["Tom Hanks"]}, {"relations": ["starred_actors"], "ids": ["Big", "Apollo 13"]}]
    state = {
        "skyline": "Tom Hanks - starred actors - answer(movie)",
        "question": "which movies did Tom Hanks act in",
        "mentions": ["Tom Hanks"],
        "unlinked": [],
        "topics": [{"id": "Tom Hanks", "name": "Tom Hanks", "mention": "Tom Hanks"}],
        "selected": [{"source": "kg", "answers": ["Big", "Apollo 13"], "path": path, "text": "Tom Hanks starred in"}],
        "ranked": [
            {"id": "Apollo 13", "kind": "entity", "name": "Apollo 13"},
            {"id": "Kevin Bacon", "kind": "entity", "name": "Kevin Bacon"},
            {"id": "Big", "kind": "entity", "name": "Big"},
        ],
        "probe": {"sources": ["kg"]},
    }
    kb = open_kb(tiny_kb)
    assert rule_check(kb, state, 0.8)[0] == "Apollo 13; Big"  # rank order, only what the paths reach
    single = {**state, "question": "which movie did Tom Hanks act in first"}
    assert rule_check(kb, single, 0.8)[0] == "Apollo 13"
    assert without_own_entities(state, "Apollo 13; Tom Hanks; Big") == "Apollo 13; Big"
    assert without_own_entities(state, "Apollo 13, Tom Hanks") == "Apollo 13"
