"""MoR grounds a small model's plan in the question's KB names and in its shown examples."""

from __future__ import annotations

import pytest

from hybridrag.agents.mor.context import MoRContext
from hybridrag.agents.mor.examples import needed_relations
from hybridrag.agents.mor.grounding import ground_anchor, ground_plan, ruled_plan
from hybridrag.agents.mor.plan import Plan, PlanNode
from hybridrag.graphs.mor import graph
from hybridrag.kb.base import open_kb

ACTORS_DIRECTORS = {
    "question": "who directed the films Tom Hanks starred in",
    "plan": {
        "routes": [
            {
                "nodes": [
                    {"type": "person", "restriction": "Tom Hanks"},
                    {"type": "movie", "relation": "starred_actors"},
                    {"type": "person", "relation": "directed_by"},
                ]
            }
        ]
    },
}
DIRECTOR = {
    "question": "who directed Big",
    "plan": {
        "routes": [{"nodes": [{"type": "movie", "restriction": "Big"}, {"type": "person", "relation": "directed_by"}]}]
    },
}


def _route(plan: Plan) -> list[tuple[str, str, str]]:
    return [(n.type, n.restriction, n.relation) for n in plan.routes[0].nodes]


def test_a_misspelt_name_in_a_phrase_typed_wrong_takes_the_name_its_type_and_the_examples_path(tiny_kb):
    kb = open_kb(tiny_kb)
    asked = "who directed the films kevin bacno was in"
    wrote = Plan.model_validate(DIRECTOR["plan"] | {})
    wrote.routes[0].nodes[0].restriction = "kevin bacno was in"  # typed movie, one hop dropped
    grounded = ground_plan(kb, asked, wrote, [ACTORS_DIRECTORS, DIRECTOR])
    assert _route(grounded) == [
        ("person", "Kevin Bacon", ""),
        ("movie", "", "starred_actors"),
        ("person", "", "directed_by"),
    ]


def test_a_plan_naming_its_entity_along_a_shown_path_is_kept(tiny_kb):
    kb = open_kb(tiny_kb)
    wrote = Plan.model_validate(DIRECTOR["plan"])
    grounded = ground_plan(kb, "who directed Big", wrote, [ACTORS_DIRECTORS, DIRECTOR])
    assert grounded == wrote


def test_a_lone_node_without_a_name_becomes_the_nearest_example_route_from_the_named_entity(tiny_kb):
    kb = open_kb(tiny_kb)
    wrote = Plan.model_validate({"routes": [{"nodes": [{"type": "person", "restriction": "films"}]}]})
    grounded = ground_plan(kb, "who made the films tom hanks acted in", wrote, [ACTORS_DIRECTORS])
    assert _route(grounded)[0] == ("person", "Tom Hanks", "")
    assert [n.relation for n in grounded.routes[0].nodes[1:]] == ["starred_actors", "directed_by"]


def test_a_name_of_two_types_takes_the_type_a_shown_example_starts_from(tiny_kb):
    kb = open_kb(tiny_kb)
    names = [("burt reynolds", "burt reynolds", "tag"), ("burt reynolds", "Burt Reynolds", "person")]
    node = PlanNode(type="movie", restriction="burt reynolds")
    assert ground_anchor(kb, node, names, ["person"]) == ("Burt Reynolds", "person")
    assert ground_anchor(kb, node, names, []) == ("burt reynolds", "tag")


def test_a_question_naming_no_kb_entity_leaves_the_plan_as_written(tiny_kb):
    kb = open_kb(tiny_kb)
    wrote = Plan.model_validate({"routes": [{"nodes": [{"type": "movie", "restriction": "moon films"}]}]})
    assert ground_plan(kb, "which moon films are sad", wrote, [DIRECTOR]) == wrote


def test_examples_name_a_relation_only_where_two_types_have_several(tiny_kb):
    schema = open_kb(tiny_kb).graph.schema()
    nodes = [
        {"type": "person", "restriction": "Tom Hanks"},
        {"type": "movie", "relation": "starred_actors"},
        {"type": "year", "relation": "release_year"},
    ]
    assert needed_relations(nodes, schema) == [nodes[0], nodes[1], {"type": "year"}]


def test_a_small_model_plans_once_unless_told_otherwise(tiny_kb):
    assert MoRContext(kb=tiny_kb, llm="local:smollm2").plans() == 1
    assert MoRContext(kb=tiny_kb, llm="local:smollm2", small_model_iterations=2).plans() == 2
    assert MoRContext(kb=tiny_kb, llm="openai:gpt-4o-mini").plans() == 3
    with pytest.raises(ValueError, match="small_model_iterations must be at least 1"):
        MoRContext(kb=tiny_kb, llm="local:smollm2", small_model_iterations=0)


WROTE = '{"routes":[{"nodes":[{"type":"movie","restriction":"kevin bacno"},{"type":"tag","relation":"has_tags"}]}]}'


@pytest.mark.parametrize(
    ("grounding", "route", "found", "calls"),
    [("auto", "person<Kevin Bacon> → movie", True, 0), ("off", "movie<kevin bacno> → tag", False, 1)],
)
def test_a_small_models_misspelt_question_is_planned_by_rule_or_asked_once(
    tiny_kb, tiny_llama, grounding, route, found, calls
):
    """Grounded (auto): the tiny bank's examples share one route, so the rule writes it and no call is made."""
    model = tiny_llama(*([WROTE] * calls))  # a second planner call would find the script used up
    ctx = MoRContext(kb=tiny_kb, llm="local:tiny", ground_plan=grounding)
    out = graph.invoke({"question": "what films did kevin bacno act in"}, context=ctx)
    plans = [t for t in out["trace"] if t["node"] == "plan_question"]
    assert len(model.calls) == calls and len(plans) == 1
    assert plans[0]["routes"] == [route]
    assert ("rule" in plans[0]["raw"]) is (calls == 0)
    assert ({"Tremors", "Apollo 13"} <= {r["name"] for r in out["ranked"][:2]}) is found


ACTED = {"question": "what films did Meg Ryan act in", "plan": ACTORS_DIRECTORS["plan"] | {}}


def test_a_rule_plans_only_when_the_examples_share_one_route_and_one_name_of_its_start_type(tiny_kb):
    kb = open_kb(tiny_kb)
    same = [ACTORS_DIRECTORS, ACTED]
    ruled = ruled_plan(kb, "who directed the films kevin bacno was in", same)
    assert ruled is not None and _route(ruled) == [
        ("person", "Kevin Bacon", ""),
        ("movie", "", "starred_actors"),
        ("person", "", "directed_by"),
    ]
    assert ruled_plan(kb, "who directed the films kevin bacno was in", [ACTORS_DIRECTORS, DIRECTOR]) is None
    assert ruled_plan(kb, "who directed the films kevin bacno was in", [ACTORS_DIRECTORS]) is None
    assert ruled_plan(kb, "who directed the films Tom Hanks and Kevin Bacon were in", same) is None
    assert ruled_plan(kb, "who directed the films nobody was in", same) is None
