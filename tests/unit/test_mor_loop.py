"""MoR's corrective edge (the problems named, the re-plan, the single pass) and KB-drawn planner examples."""

from __future__ import annotations

import json

import pytest
from test_hybgrag_examples import COMPANY_TRIPLES, COMPANY_TYPES, MOVIE_WORDS  # noqa: F401
from test_mor import node, plan, steps

from hybridrag.agents.mor.critique import critique
from hybridrag.agents.mor.examples import as_shot, planner_shots
from hybridrag.agents.mor.plan import Plan, PlanNode, PlanRoute
from hybridrag.agents.shots import SolvedExample
from hybridrag.evals.oracle.mor import names_error
from hybridrag.evals.oracle.noise import Injected
from hybridrag.graphs.mor import MoRContext, graph
from hybridrag.graphs.runtime import resolve_kb

PENNY = "which films did Penny Marshall direct"
WRONG_HOP = plan([node("person", "Penny Marshall"), node("movie", relation="starred_actors")])
RIGHT_HOP = plan([node("person", "Penny Marshall"), node("movie", relation="directed_by")])


def run(kb: str, question: str, **kw) -> dict:
    return graph.invoke({"question": question}, context=MoRContext(kb=kb, llm="fake:test", **kw))


def planner_calls(out: dict) -> int:
    return out["usage"]["by_role"]["planner"]["llm_calls"]


def test_hop_reaching_nothing_is_replanned_with_the_relation_named(tiny_kb, fake_llm):
    fake = fake_llm(WRONG_HOP, RIGHT_HOP)
    out = run(tiny_kb, PENNY)
    first, second = steps(out, "intersect_routes")
    assert first["decision"].endswith(": re-plan") and not second["problems"]
    said = 'relation starred_actors from type person from "Penny Marshall" reached no type movie'
    assert said in first["problems"][0]
    replan = fake.calls[1]["messages"]
    assert replan[-2].type == "ai" and "starred_actors" in replan[-2].content
    assert "relation starred_actors" in replan[-1].content and "Repair each part" in replan[-1].content
    assert planner_calls(out) == 2 and steps(out, "rerank_trajectories")[0]["attempt"] == 2
    assert {r["name"] for r in out["ranked"][:2]} == {"Big", "A League of Their Own"}


def test_single_pass_with_max_iterations_1(tiny_kb, fake_llm):
    fake_llm(WRONG_HOP)
    out = run(tiny_kb, PENNY, max_iterations=1)
    [merge] = steps(out, "intersect_routes")
    assert merge["problems"] and not merge["decision"].endswith("re-plan")  # traced, not acted on
    assert planner_calls(out) == 1 and len(steps(out, "plan_question")) == 1


def test_restriction_naming_no_entity_and_unnamed_hop_are_named(tiny_kb, fake_llm):
    fake = fake_llm(
        plan([node("person", "films"), node("movie")]),
        plan([node("person", "Tom Hanks"), node("movie", relation="starred_actors")]),
    )
    out = run(tiny_kb, "which films did Tom Hanks star in")
    feedback = fake.calls[1]["messages"][-1].content
    assert 'restriction "films" names no person entity' in feedback
    assert "hop person → movie names no relation, and 2 link them" in feedback
    assert names_error(Injected("wrong_entity", entity="films"), feedback)
    assert names_error(Injected("missing_relation"), feedback)
    assert not names_error(Injected("wrong_category", category="year"), feedback)
    assert {r["name"] for r in out["ranked"][:3]} == {"Big", "A League of Their Own", "Apollo 13"}


def test_a_repeated_plan_ends_the_loop(tiny_kb, fake_llm):
    fake_llm(WRONG_HOP, WRONG_HOP)
    out = run(tiny_kb, PENNY, max_iterations=3)
    assert planner_calls(out) == 2 and [s["repeated"] for s in steps(out, "plan_question")] == [False, True]
    assert not steps(out, "intersect_routes")[-1]["decision"].endswith("re-plan")


def test_schema_problems_name_the_type_and_relation(tiny_kb):
    from hybridrag.agents.mor.plan import validate_plan

    schema = resolve_kb(MoRContext(kb=tiny_kb)).graph.schema()
    wrong_type = validate_plan(plan([node("movie", "Big"), node("year", relation="directed_by")]), schema, [])
    text = " ".join(wrong_type["problems"])
    assert names_error(Injected("wrong_category", category="year"), text)
    assert names_error(Injected("wrong_relation", relation="directed_by"), text)
    cannot = validate_plan(plan([node("person", "Tom Hanks"), node("year")]), schema, [])
    assert names_error(Injected("wrong_category", category="year"), " ".join(cannot["problems"]))
    anchorless = validate_plan(plan([node("person"), node("movie")]), schema, [])
    assert names_error(Injected("missing_entity"), " ".join(anchorless["problems"]))


def test_empty_intersection_is_a_problem(tiny_kb):
    kb = resolve_kb(MoRContext(kb=tiny_kb))
    route = {
        "nodes": [{"type": "language", "restriction": "French"}, {"type": "movie", "restriction": ""}],
        "relations": [["in_language"]],
        "named": [True],
    }
    res = {"layers": [{"struct": 0}, {"struct": 1, "anchored": 1}], "seeds": ["French"], "topics": ["French"]}
    problems = critique(kb, {"problems": [], "routes": [route, route]}, [res, res], "union (empty intersection)")
    assert problems == [
        "the routes language<French> → movie and language<French> → movie share no candidate; "
        "check which condition the answer really meets"
    ]


# -- planner examples from the KB at hand --------------------------------------------------


@pytest.fixture(scope="module")
def company_kb(tmp_path_factory) -> str:
    from hybridrag.kb.ingest import ingest

    src = tmp_path_factory.mktemp("company-src")
    (src / "triples.txt").write_text(COMPANY_TRIPLES, encoding="utf-8")
    (src / "types.json").write_text(json.dumps(COMPANY_TYPES), encoding="utf-8")
    out = tmp_path_factory.mktemp("company-kb") / "kb"
    ingest(out, [src / "triples.txt"], type_map=src / "types.json", progress=False)
    return str(out)


def test_solved_example_becomes_a_route(company_kb):
    schema = resolve_kb(MoRContext(kb=company_kb)).graph.schema()
    ex = SolvedExample(
        question="where do the founders of Globex live",
        masked="where do the founders of <E> live",
        topic=("Globex",),
        topic_types=("company",),
        relations=("founded_by", "lives_in"),
        answer_type="city",
        answers=("Cypress Creek",),
        source="schema",
    )
    shot = as_shot(ex, schema, "paths")
    assert shot["plan"]["routes"][0]["nodes"] == [
        {"type": "company", "restriction": "Globex"},
        {"type": "person", "relation": "founded_by"},
        {"type": "city", "relation": "lives_in"},
    ]
    triplets = as_shot(ex, schema, "triplets")["triplets"]
    assert triplets["target"] == "city" and [t["relation"] for t in triplets["triplets"]] == ["founded_by", "lives_in"]


def test_every_planner_prompt_names_only_the_kb_at_hand(company_kb, fake_llm):
    kb = resolve_kb(MoRContext(kb=company_kb))
    shots = planner_shots(kb, "which products does Acme Corp make", "kb", 4)
    assert shots and all(
        s["plan"]["routes"][0]["nodes"][0]["type"] in {"company", "person", "city", "product"} for s in shots
    )
    bad = Plan(
        routes=[
            PlanRoute(
                nodes=[
                    PlanNode(type="company", restriction="Acme Corp"),
                    PlanNode(type="product", relation="founded_by"),
                ]
            )
        ]
    )
    good = Plan(
        routes=[
            PlanRoute(
                nodes=[PlanNode(type="company", restriction="Acme Corp"), PlanNode(type="product", relation="makes")]
            )
        ]
    )
    fake = fake_llm(bad, good)
    out = run(company_kb, "which products does Acme Corp make", num_few_shot=4)
    assert {r["name"] for r in out["ranked"][:2]} == {"Rocket Skates", "Giant Magnet"}
    [first, _] = steps(out, "plan_question")
    assert first["examples"] and all(q in [s["question"] for s in shots] for q in first["examples"])
    for call in fake.calls:
        text = "\n".join(str(m.content) for m in call["messages"])
        assert not MOVIE_WORDS.search(text), MOVIE_WORDS.search(text)
        assert "makes" in text and "company" in text
    assert "relation founded_by does not link type company and type product" in fake.calls[1]["messages"][-1].content


def test_bundled_examples_stay_one_setting_away(tiny_kb):
    kb = resolve_kb(MoRContext(kb=tiny_kb))
    bundled = planner_shots(kb, "who directed Big", "bundled", 3)
    assert len(bundled) == 3 and bundled[0]["question"] == "what movies did Meryl Streep act in"
    with pytest.raises(ValueError, match="unknown examples source"):
        planner_shots(kb, "who directed Big", "web", 3)


def test_planned_type_the_reached_entities_do_not_have_is_named(tiny_kb):
    from hybridrag.agents.mor.critique import type_problems

    kb = resolve_kb(MoRContext(kb=tiny_kb))
    route = {
        "nodes": [{"type": "movie", "restriction": "Big"}, {"type": "genre", "restriction": ""}],
        "relations": [["starred_actors"]],
    }
    seed = {"id": "Big", "type": "movie", "via": "text", "tf": 1.0, "edge": None, "topic": True}
    reached = {
        "Tom Hanks": [
            seed,
            {
                "id": "Tom Hanks",
                "type": "genre",
                "via": "struct",
                "tf": 0.0,
                "edge": ["Big", "starred_actors", "Tom Hanks"],
            },
        ]
    }
    [problem] = type_problems(kb, route, reached)
    assert problem.startswith("type genre at step 1") and problem.endswith("are mostly person")
    assert names_error(Injected("wrong_category", category="genre"), problem)
    reached["Tom Hanks"][1]["type"] = "person"
    assert (
        type_problems(kb, route | {"nodes": [route["nodes"][0], {"type": "person", "restriction": ""}]}, reached) == []
    )


def test_a_later_hop_reaching_nothing_also_names_the_relations_before_it(tiny_kb):
    from hybridrag.agents.mor.critique import hop_problems

    kb = resolve_kb(MoRContext(kb=tiny_kb))
    route = {
        "nodes": [
            {"type": "person", "restriction": "Tom Hanks"},
            {"type": "movie", "restriction": ""},
            {"type": "person", "restriction": ""},
        ],
        "relations": [["directed_by"], ["written_by"]],
    }
    layers = [
        {"layer": 0, "struct": 0},
        {"layer": 1, "struct": 2, "anchored": 2},
        {"layer": 2, "struct": 0, "anchored": 0},
    ]
    [said] = hop_problems(kb, route, {"topics": ["Tom Hanks"], "layers": layers})
    assert said.startswith(
        'relation written_by from type movie (the type movie entities reached from "Tom Hanks" '
        "along relation directed_by) reached no type person entity"
    )
    assert names_error(Injected("wrong_relation", hop=0, relation="directed_by"), said)  # the earlier hop is named
    first = hop_problems(kb, route, {"topics": ["Tom Hanks"], "layers": [layers[0], {**layers[2], "layer": 1}]})
    assert first == [
        'relation directed_by from type person from "Tom Hanks" reached no type movie entity '
        "(route person<Tom Hanks> → movie → person)"
    ]
