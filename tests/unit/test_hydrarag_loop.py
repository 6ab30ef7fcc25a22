"""HydraRAG's corrective loop: the audit names what is wrong, the next round gets it, answers are never
the question's own entity."""

from __future__ import annotations

from hybridrag.agents.hydrarag import audit as audit
from hybridrag.agents.hydrarag import roles as R
from hybridrag.agents.hydrarag.answering import without_own_entities
from hybridrag.agents.hydrarag.feedback import feedback_block, shortfall
from hybridrag.graphs.hydrarag import HydraRAGContext, graph
from hybridrag.graphs.runtime import resolve_kb

Q = "which movies did Tom Hanks star in"
TOPICS = R.TopicEntities(entities=["Tom Hanks"])
RIGHT = R.QuestionAnalysis(split_questions=[Q], skyline="Tom Hanks - starred in - answer(movie)")
WRONG = R.QuestionAnalysis(split_questions=[Q], skyline="Tom Hanks - directed by - answer(movie)")
REFINED = R.Refinement(summary="Tom Hanks starred in Big.")
YES = R.AnswerCheck(reasoning="The path lists his films.", sufficient="yes", answer="Big")
FOLLOW = R.FollowUp(
    missing="the right relation",
    question=Q,
    skyline="Tom Hanks - starred in - answer(movie)",
    topic_entities=["Tom Hanks"],
)
KG_PATH = {
    "id": "kg:initial:0",
    "source": "kg",
    "phase": "initial",
    "text": "{Tom Hanks} ← starred_actors ← {Big}",
    "path": [{"ids": ["Tom Hanks"]}, {"relations": ["starred_actors"], "inverse": True, "ids": ["Big"]}],
}


def run(kb: str, **kw) -> dict:
    ctx = HydraRAGContext(kb=kb, llm="fake:test", use_web=False, source_selector=False, doc_pool=0, **kw)
    return graph.invoke({"question": Q}, context=ctx)


def state(**kw) -> dict:
    base = {
        "question": Q,
        "mentions": ["Tom Hanks"],
        "unlinked": [],
        "phase": "initial",
        "topics": [{"mention": "Tom Hanks", "id": "Tom Hanks", "name": "Tom Hanks"}],
        "probe": {"sources": ["kg"], "depth": 1, "chains": [{"names": ["Tom Hanks"]}]},
        "skyline": "Tom Hanks - starred in - answer(movie)",
        "selected": [KG_PATH],
        "candidates": [KG_PATH],
    }
    return {**base, **kw}


def test_a_skyline_that_agrees_with_the_paths_has_no_problem(tiny_kb):
    assert audit.problems(resolve_kb(HydraRAGContext(kb=tiny_kb)), state(), 0.8) == {"topic": [], "path": []}


def test_a_skyline_relation_no_selected_path_follows_is_named(tiny_kb):
    found = audit.problems(resolve_kb(HydraRAGContext(kb=tiny_kb)), state(skyline=WRONG.skyline), 0.8)
    assert found["path"] == [
        "no selected path follows the skyline: 'directed by' missing (the closest path follows: starred_actors)"
    ]


def test_a_skyline_without_relation_and_an_empty_kg_search_are_named(tiny_kb):
    kb = resolve_kb(HydraRAGContext(kb=tiny_kb))
    assert audit.path_problems(kb, state(skyline="Tom Hanks - answer(movie)"), 0.8) == [
        "the skyline names no relation between the topic entity and the answer"
    ]
    assert audit.path_problems(kb, state(selected=[], candidates=[]), 0.8) == [
        "the knowledge-graph search from Tom Hanks at depth 1 found no path"
    ]
    two_hops = {**KG_PATH, "path": [*KG_PATH["path"], {"relations": ["directed_by"], "inverse": False}]}
    assert audit.path_problems(kb, state(selected=[two_hops]), 0.8) == [
        "the selected knowledge-graph paths take 2 hop(s), the skyline names 1 relation(s)"
    ]


def test_topic_problems_name_a_missing_an_unknown_and_a_misaligned_entity():
    assert audit.topic_problems(state(mentions=[]), Q) == [
        "the topic extraction named no entity (names found in the question instead: Tom Hanks)"
    ]
    assert audit.topic_problems(state(mentions=["movies", "Tom Hanks"], unlinked=["movies"]), Q) == [
        "extracted topic entity 'movies' is not an entity of the knowledge base"
    ]
    misaligned = [{"mention": "star", "id": "Star Wars", "name": "Star Wars"}]
    assert audit.topic_problems(state(mentions=["star"], topics=misaligned), Q) == [
        "extracted topic entity 'star' was aligned to 'Star Wars', which the question does not name"
    ]


def test_the_feedback_block_carries_every_problem_line():
    fb = shortfall(state(), "held back", {"topic": ["t1"], "path": ["p1", "p2"]})
    block = feedback_block({"shortfall": fb})
    assert "topic_problem: t1" in block and "path_problem: p1" in block and "path_problem: p2" in block
    assert audit.new_problems({"topic": ["t1"], "path": ["p3"]}, fb) == ["p3"]


def test_a_yes_on_a_wrong_skyline_goes_to_a_refined_round_that_names_the_relation(tiny_kb, fake_llm):
    fake = fake_llm(TOPICS, WRONG, REFINED, YES, FOLLOW, R.Choice(reasoning="r", selected=[1]), REFINED, YES)
    out = run(tiny_kb)
    assert out["answer"] == "Big" and len(fake.calls) == 8  # the first {Yes} was held back: a second round
    assert fake.calls[4]["schema"] == "FollowUp"
    follow_up = fake.calls[4]["messages"][-1].content
    assert (
        "path_problem: no selected path follows the skyline: 'directed by' missing "
        "(the closest path follows: starred_actors)" in follow_up
    )
    second_check = fake.calls[7]["messages"][-1].content  # the refined round reads the follow-up's skyline
    assert fake.calls[7]["schema"] == "AnswerCheck" and FOLLOW.skyline in second_check


def test_without_the_audit_or_a_round_left_the_yes_stands(tiny_kb, fake_llm):
    fake_llm(TOPICS, WRONG, REFINED, YES)
    assert run(tiny_kb, audit=False)["answer"] == "Big"
    fake_llm(TOPICS, WRONG, REFINED, YES)
    assert run(tiny_kb, max_iterations=1)["answer"] == "Big"


def test_the_answer_is_never_the_questions_own_entity(tiny_kb, fake_llm):
    films = {"Big", "A League of Their Own", "Apollo 13"}
    own = R.AnswerCheck(reasoning="r", sufficient="yes", answer="Tom Hanks")
    fake_llm(TOPICS, RIGHT, REFINED, own)  # the check's answer
    assert run(tiny_kb, max_iterations=1)["answer"] in films
    no = R.AnswerCheck(reasoning="r", sufficient="no", missing="more")
    fake_llm(TOPICS, RIGHT, REFINED, no, R.FinalAnswer(reasoning="r", answer="Tom Hanks"))  # the generated one
    assert run(tiny_kb, max_iterations=1)["answer"] in films
    s = state()
    assert without_own_entities(s, "Tom Hanks, Big") == "Big" and without_own_entities(s, "tom hanks") == ""


# --- the perfect-LLM stand-in reads the problem lines --------------------------------------------


def _stand_in(types: str):
    from hybridrag.evals.datasets import Question
    from hybridrag.evals.oracle import GoldSet, build_oracle

    q = Question(
        "bacon",
        "what movies did Kevin Bacon act in",
        ("Apollo 13", "Tremors"),
        qtype="actor_to_movie",
        topic="Kevin Bacon",
        hops=1,
    )
    return q.question, build_oracle(f"oracle:p=1,types={types}", GoldSet.from_questions([q], ("kg",)))


def _follow_up(model, question: str, paths: str, feedback: str) -> R.FollowUp:
    from hybridrag.prompts.data_block import data_block, data_list

    return R.follow_up(
        model,
        "function_calling",
        question=question,
        topics=data_list(["act"]),
        paths=paths,
        skyline=data_block("Kevin Bacon - starred actors - answer(movie)"),
        splits=data_list([question]),
        feedback=feedback,
    )[0]


def test_the_stand_in_repairs_an_entity_error_only_when_a_problem_line_names_it():
    from hybridrag.agents.hydrarag.pruning import path_blocks

    paths = path_blocks([{"source": "kg", "text": "{Kevin Bacon} ← starred_actors ← {Apollo 13, Tremors}"}])
    for types, flagged in (("wrong_entity", None), ("missing_entity", "the topic extraction named no entity")):
        question, model = _stand_in(types)
        [topic] = R.extract_topics(model, question, "function_calling")[0].entities or [""]
        silent = feedback_block({"shortfall": shortfall(state(), "more", {"topic": [], "path": []})})
        wrong = _follow_up(model, question, paths, silent)  # the paths name the topic, nothing flags the error
        assert wrong.topic_entities == ([topic] if types == "wrong_entity" else [])
        assert not model.log.entries()[0]["repaired"]
        line = flagged or f"extracted topic entity '{topic}' is not an entity of the knowledge base"
        named = feedback_block({"shortfall": shortfall(state(), "more", {"topic": [line], "path": []})})
        assert _follow_up(model, question, paths, named).topic_entities == ["Kevin Bacon"]
        assert model.log.entries()[0]["repaired"]


def test_each_selected_path_is_held_to_the_whole_skyline(tiny_kb):
    kb = resolve_kb(HydraRAGContext(kb=tiny_kb))
    directed = {**KG_PATH, "path": [{"ids": ["Big"]}, {"relations": ["directed_by"], "inverse": False}]}
    two = "Tom Hanks - starred in - movie - directed by - answer(person)"
    assert audit.path_problems(kb, state(skyline=two, selected=[KG_PATH, directed]), 0.8) == [
        "no selected path follows the skyline: 'directed by' missing (the closest path follows: starred_actors)"
    ]


def test_topics_joined_only_by_too_short_paths_fall_back_to_per_topic_paths(tiny_kb, monkeypatch):
    from hybridrag.agents.hydrarag import kg_paths

    kb = resolve_kb(HydraRAGContext(kb=tiny_kb))
    short = kg_paths.Chain((frozenset(["Tom Hanks"]), frozenset(["Big"])), ((("starred_actors",), True),))
    monkeypatch.setattr(kg_paths, "join_pair", lambda *a: [short])  # one hop: not above |Topic|·(D-1) = 2
    paths, joined = kg_paths.explore(
        kb, ["Tom Hanks", "Penny Marshall"], 2, 100, lambda cs: [0.0] * len(cs), floor=True
    )
    assert not joined and paths and all(p.length == 2 for p in paths)
    assert {next(iter(p.nodes[0])) for p in paths} == {"Tom Hanks", "Penny Marshall"}
