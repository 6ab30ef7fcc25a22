"""HybGRAG graph on the scripted fake model and a tiny real KB."""

from __future__ import annotations

import pytest

from hybridrag.agents.hybgrag.roles import Answer, Critique, RouterAction, TopicEntity, Validation, check_action
from hybridrag.graphs.hybgrag import HybGRAGContext, builder, graph, render_trace
from hybridrag.tools.list_answer import split

YES = Validation(reasoning="The paths satisfy the question.", verdict="yes")
NO = Validation(reasoning="The reference does not fit.", verdict="no")
TOM = [("Tom Hanks", "person")]


def act(module: str = "hybrid", entities=TOM, relations=("starred_actors",)) -> RouterAction:
    """A router action from (name, type) pairs."""
    return RouterAction(
        module=module, entities=[TopicEntity(name=n, type=t) for n, t in entities], relations=list(relations)
    )


def crit(error_type: str, entities=(), relations=()) -> Critique:
    """A commentor critique."""
    return Critique(
        reasoning="test", error_type=error_type, wrong_entities=list(entities), wrong_relations=list(relations)
    )


def run(kb: str, question: str = "which movies did Tom Hanks act in", **kw) -> dict:
    ctx = HybGRAGContext(kb=kb, llm="fake:test", **kw)
    return graph.invoke({"question": question}, context=ctx)


def steps(out: dict, node: str) -> list[dict]:
    return [s for s in out["trace"] if s["node"] == node]


def calls_by_role(out: dict) -> dict[str, int]:
    return {role: v["llm_calls"] for role, v in out["usage"]["by_role"].items()}


def test_accept_at_iteration_one(tiny_kb, fake_llm):
    fake_llm(act(), YES)
    out = run(tiny_kb)
    assert out["usage"]["llm_calls"] == 2
    assert calls_by_role(out) == {"router": 1, "validator": 1}
    # a list question: every film reached along the router's path (tools/list_answer.py)
    assert set(split(out["answer"])) == {"Big", "A League of Their Own", "Apollo 13"}
    assert {r["source"] for r in out["ranked"]} == {"kg"}
    assert set(out) == {"answer", "ranked", "evidence", "trace", "usage"}
    kg = [e for e in out["evidence"] if e["source"] == "kg"]
    assert kg and all(e["text"].startswith("Tom Hanks → starred_actors (inverse) →") for e in kg)
    assert [s["decision"] for s in out["trace"]][-1] == "accept"
    text = render_trace(out["trace"])
    assert "Action 1: hybrid module" in text and "Entity: Tom Hanks (person)" in text
    assert text.endswith("Feedback 1: Accept ✓")
    assert out["usage"]["stages"]["router"] > 0 and "hybrid_module" in out["usage"]["stages"]


def test_reject_feedback_accept_at_two(tiny_kb, fake_llm):
    fake = fake_llm(act(), NO, crit("missing_entity"), act(), YES)
    out = run(tiny_kb)
    assert out["usage"]["llm_calls"] == 5  # iteration 1: 3 calls, iteration 2: 2 calls
    assert calls_by_role(out) == {"router": 2, "validator": 2, "commentor": 1}
    [comment] = steps(out, "comment_on_routing")
    assert comment["decision"] == "missing_entity" and comment["source"] == "llm"
    reflect = fake.calls[3]["messages"]
    assert reflect[-2].type == "ai" and "Tom Hanks" in reflect[-2].content
    assert "Extract one more entity" in reflect[-1].content
    assert [s["iteration"] for s in steps(out, "route_question")] == [1, 2]
    text = render_trace(out["trace"])
    assert "Feedback 1: The retrieved reference is incorrect." in text and "Feedback 2: Accept ✓" in text


def test_never_accepted_stops_at_max_iterations(tiny_kb, fake_llm):
    fake_llm(act(), NO, crit("missing_entity"), act(module="text"), NO, crit("incorrect_retrieval_module"), act(), NO)
    out = run(tiny_kb, max_iterations=3)
    # 3 + 3 (the LLM commentor judges the text-module rejection too) + 2 (no commentor after the last)
    assert out["usage"]["llm_calls"] == 8
    assert len(steps(out, "route_question")) == 3
    assert out["trace"][-1]["decision"] == "reject" and out["trace"][-1]["iteration"] == 3
    assert steps(out, "retrieve_hybrid")[-1]["top"][0] == out["ranked"][0]["id"]  # the last retrieval
    assert render_trace(out["trace"]).endswith("returning the last retrieval")


def test_default_max_iterations_is_four(tiny_kb, fake_llm):
    fake_llm(*([act(), NO, crit("missing_entity")] * 3), act(), NO)
    out = run(tiny_kb)
    assert len(steps(out, "route_question")) == 4 and out["usage"]["llm_calls"] == 11


def test_unparseable_router_output_takes_text_module(tiny_kb, fake_llm):
    fake_llm("entities: Tom Hanks", "{not json", YES)
    out = run(tiny_kb, question="a comedy about a boy who wakes up as an adult")
    assert calls_by_role(out) == {"router": 2, "validator": 1}  # one retry, then the fallback
    [route] = steps(out, "route_question")
    assert route["module"] == "text" and route["fallback"].startswith("unparseable router output")
    assert steps(out, "retrieve_text") and out["answer"] == "Big"


def test_unparseable_validator_output_rejects(tiny_kb, fake_llm):
    fake_llm(act(), "maybe", "perhaps")
    out = run(tiny_kb, max_iterations=1, judge="llm")  # the paper's fallback ("auto" asks the rule instead)
    assert out["trace"][-1]["decision"] == "reject" and calls_by_role(out)["validator"] == 2


def _feedback_run(
    kb: str, fake_llm, first: RouterAction, critique: Critique | None = None, validated: bool = True
) -> dict:
    script = [first] + ([NO] if validated else []) + ([critique] if critique else []) + [act(), YES]
    fake_llm(*script)
    out = run(kb, max_iterations=2, commentor="rules")  # the rules option (the default asks the LLM)
    [comment] = steps(out, "comment_on_routing")
    return comment


@pytest.mark.parametrize(
    ("first", "critique", "decision", "source", "phrase"),
    [
        (
            act(
                entities=[("Tom Hanks", "person"), ("Zqxjv Vrrblt Kkpw", "person")],
                relations=["starred_actors", "produced_by"],
            ),
            None,
            "incorrect_entity_relation",
            "rule",
            'Entity "Zqxjv Vrrblt Kkpw" is incorrect',
        ),
        (act(), crit("missing_entity"), "missing_entity", "llm", "Extract one more entity"),
        (act(entities=[], relations=[]), None, "no_entity", "rule", "No entity was extracted"),
        (
            act(
                entities=[("Tom Hanks", "person"), ("French", "language")], relations=["starred_actors", "in_language"]
            ),
            None,
            "no_intersection",
            "rule",
            "do not intersect",
        ),
        (
            act(entities=[("Tom Hanks", "person"), ("Kevin Bacon", "person")]),
            None,
            "incorrect_intersection",
            "rule",
            "the answer is not in the intersection",
        ),
        (act(module="text"), None, "incorrect_retrieval_module", "rule", "may not help narrow down"),
    ],
)
def test_each_feedback_type(tiny_kb, fake_llm, first, critique, decision, source, phrase):
    # an empty intersection retrieves nothing, which is rejected without asking the validator
    comment = _feedback_run(tiny_kb, fake_llm, first, critique, validated=decision != "no_intersection")
    assert comment["decision"] == decision and comment["source"] == source
    assert phrase in comment["feedback"]


def test_rule_names_relation_outside_schema(tiny_kb, fake_llm):
    comment = _feedback_run(tiny_kb, fake_llm, act(relations=["starred_actors", "produced_by"]))
    assert 'Relation "produced_by" is incorrect' in comment["feedback"]


def test_llm_names_wrong_entity_and_relation(tiny_kb, fake_llm):
    first = act(entities=[("Tom Hanks", "person"), ("Kevin Bacon", "person")])
    fake_llm(first, NO, crit("incorrect_entity_relation", ["Kevin Bacon", "x"], ["starred_actors"]), act(), YES)
    [comment] = steps(run(tiny_kb, max_iterations=2), "comment_on_routing")  # the default: LLM commentor
    assert comment["source"] == "llm"
    assert 'Entity "Kevin Bacon" is incorrect' in comment["feedback"]
    assert 'Relation "starred_actors" is incorrect' in comment["feedback"]


def test_unparseable_commentor_falls_back(tiny_kb, fake_llm):
    fake_llm(act(), NO, "??", "??", act(), YES)
    out = run(tiny_kb, max_iterations=2)
    [comment] = steps(out, "comment_on_routing")
    assert comment["source"] == "fallback" and comment["decision"] == "missing_entity"
    assert calls_by_role(out)["commentor"] == 2


def test_qa_mode_generates_answer(tiny_kb, fake_llm):
    fake_llm(act(), YES, Answer(reasoning="from the paths", answer="Big, Apollo 13"))
    out = run(tiny_kb, answer=True)
    assert out["answer"] == "Big, Apollo 13" and calls_by_role(out)["answerer"] == 1


def test_check_action_drops_unknown_types_and_relations(tiny_kb):
    from hybridrag.graphs.runtime import resolve_kb

    schema = resolve_kb(HybGRAGContext(kb=tiny_kb)).graph.schema()
    action = RouterAction(
        module="hybrid",
        relations=["Starred Actors", "produced_by"],
        entities=[TopicEntity(name="Tom Hanks", type="Person"), TopicEntity(name="Big", type="film")],
    )
    out = check_action(action, schema)
    assert out["relations"] == ["starred_actors"] and out["dropped_relations"] == ["produced_by"]
    assert out["entities"] == [{"name": "Tom Hanks", "type": "person"}, {"name": "Big", "type": None}]
    assert out["dropped_types"] == ["Big (film)"]


def test_context_env_and_builder(monkeypatch):
    monkeypatch.setenv("HYBRIDRAG_LLM", "local:smollm2")
    monkeypatch.setenv("HYBRIDRAG_ANSWER", "true")
    ctx = HybGRAGContext()
    assert ctx.llm == "local:smollm2" and ctx.answer is True and ctx.radius == 0  # path-following default
    assert builder.compile(name="again").get_graph().nodes.keys() >= {"route_question", "comment_on_routing"}


def test_model_per_role(tiny_kb, fake_llm):
    from fake_chat import ScriptedChatModel

    from hybridrag.agents.llm.models import forget_model, register_model

    router = fake_llm(act())
    validator = ScriptedChatModel(script=[YES])
    register_model("fake:validator", validator)
    try:
        out = run(tiny_kb, validator_llm="fake:validator")
    finally:
        forget_model("fake:validator")
    assert not validator.script and len(router.calls) == 1 and out["trace"][-1]["decision"] == "accept"


# -- the radius follows the router's relation path (radius=0, the default) -------------------


def test_radius_follows_the_relation_path(tiny_kb, fake_llm):
    fake_llm(act(), YES)
    one = run(tiny_kb)  # one relation: one hop, the films only (no co-actors two hops away)
    assert {r["id"] for r in one["ranked"]} == {"Big", "A League of Their Own", "Apollo 13"}
    assert steps(one, "retrieve_hybrid")[0]["hops"] == 1
    fake_llm(act(relations=("starred_actors", "directed_by")), YES)
    two = run(tiny_kb, question="who directed the movies Tom Hanks starred in")
    assert {r["id"] for r in two["ranked"]} == {"Penny Marshall", "Ron Howard"}  # the path's end only
    assert steps(two, "retrieve_hybrid")[0]["hops"] == 2
    fake_llm(act(), YES)
    paper = run(tiny_kb, radius=2)  # the paper's fixed ego-graph, one setting away
    assert {"Kevin Bacon", "Geena Davis", "Big"} <= {r["id"] for r in paper["ranked"]}


def test_same_action_rejected_searches_one_hop_deeper(tiny_kb, fake_llm):
    big = act(entities=[("Big", "movie")], relations=("directed_by",))
    fake_llm(big, NO, crit("missing_entity"), big, YES)
    out = run(tiny_kb, question="which movies share a director with Big")
    assert steps(out, "retrieve_hybrid")[0]["top"] == ["Penny Marshall"]
    assert [r["id"] for r in out["ranked"]] == ["A League of Their Own"]  # never back to Big itself
    assert [s["hops"] for s in steps(out, "retrieve_hybrid")] == [1, 2]


def test_stretched_paths_keep_the_router_order():
    from hybridrag.agents.hybgrag.paths import next_hops, stretched_paths

    assert stretched_paths(["a"], 3) == [("a", "a", "a")]
    assert stretched_paths(["a", "b"], 2) == [("a", "b")]
    assert set(stretched_paths(["a", "b"], 3)) == {("a", "a", "b"), ("a", "b", "b")}
    assert next_hops(None, ["t", "|", "a"], ["a", "b"], 1) == 2
    assert next_hops({"key": ["t", "|", "a"], "hops": 2}, ["t", "|", "a"], ["a"], 1) == 3
    assert next_hops({"key": ["t", "|", "a"], "hops": 3}, ["t", "|", "a"], ["a"], 1) == 3  # at most 3
    assert next_hops({"key": ["u", "|", "a"], "hops": 2}, ["t", "|", "a"], ["a"], 1) == 1  # new action


def test_a_last_retrieval_that_finds_nothing_ends_with_the_text_modules_references(tiny_kb, fake_llm):
    fake_llm(act(relations=("has_genre",)), NO)  # Tom Hanks has no genre: the walk finds nothing
    out = run(tiny_kb, max_iterations=1, judge="llm")
    notes = [s for s in steps(out, "retrieve_hybrid") if s["decision"].startswith("nothing on the last iteration")]
    assert notes and steps(out, "retrieve_text") and out["ranked"] and out["answer"]
