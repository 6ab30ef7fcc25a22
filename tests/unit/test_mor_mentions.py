"""MoR's textual edges: entities a node's texts name (or whose texts name it) become neighbours when no graph
edge reaches any; a text-only KB of another domain in tests/unit/test_mor_text_kb.py."""

from __future__ import annotations

import pytest
from kb_fixtures import movie_kb

from hybridrag.agents.mor.graph_first import topic_entities
from hybridrag.agents.mor.mentions import mentioned
from hybridrag.agents.mor.traversal import anchored, traverse_route
from hybridrag.graphs.mor import MoRContext
from hybridrag.graphs.runtime import resolve_kb

TRIPLES = """\
Big|starred_actors|Tom Hanks
A League of Their Own|directed_by|Penny Marshall
A League of Their Own|starred_actors|Geena Davis
"""
PASSAGES = [
    {"id": "p:Big", "entity_id": "Big", "text": "Big was directed by Penny Marshall. Geena Davis did not star in Big."}
]


@pytest.fixture(scope="module")
def held_out_kb(tmp_path_factory) -> str:
    """Big's director is only in Big's passage (the edge is held out of the graph)."""
    return movie_kb(tmp_path_factory, "mention", TRIPLES, PASSAGES)


def test_sentences_naming_the_relation_are_read_first(held_out_kb):
    kb = resolve_kb(MoRContext(kb=held_out_kb))
    assert mentioned(kb, ["Big"], "person", ["directed_by"]) == {"Big": [("Penny Marshall", True)]}
    assert mentioned(kb, ["Big"], "person", ["has_tags"]) == {"Big": [("Penny Marshall", True), ("Geena Davis", True)]}
    assert mentioned(kb, ["Big"], "year", ["release_year"]) == {}


def test_a_missing_edge_is_crossed_by_the_text_only_when_enabled(held_out_kb):
    kb = resolve_kb(MoRContext(kb=held_out_kb))
    route = {
        "nodes": [{"type": "movie", "restriction": "Big"}, {"type": "person", "restriction": ""}],
        "relations": [["directed_by"]],
    }
    rule = lambda seeds: topic_entities(kb, route, seeds)  # noqa: E731
    on = traverse_route(kb, "who directed Big", route, topic_rule=rule, text_edges=True)
    traj = on["candidates"]["Penny Marshall"]
    assert traj[-1]["via"] == "mention" and traj[-1]["edge"] == ["Big", "mentions", "Penny Marshall"]
    assert anchored(traj) and on["layers"][1]["mention"] == 1 and on["layers"][1]["anchored"] >= 1
    off = traverse_route(kb, "who directed Big", route, topic_rule=rule, text_edges=False)
    assert off["layers"][1]["mention"] == 0 and not any(anchored(t) for t in off["candidates"].values())


def test_a_kb_without_relation_types_follows_hops_in_texts():
    from hybridrag.agents.mor.plan import Plan, PlanNode, PlanRoute, validate_plan
    from hybridrag.kb.model import Schema

    text_only = Schema(entity_types={"movie": 3, "person": 2})
    plan = Plan(
        routes=[
            PlanRoute(
                nodes=[PlanNode(type="movie", restriction="Big"), PlanNode(type="person", relation="directed_by")]
            )
        ]
    )
    checked = validate_plan(plan, text_only, [])
    assert checked["valid"] and checked["routes"][0]["relations"] == [["directed_by"]]
    assert not validate_plan(plan, Schema(entity_types={"movie": 3}), [])["valid"]  # unknown type still refused
