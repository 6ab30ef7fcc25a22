"""HybGRAG's rules for small models: the shown examples' path, rule re-routes, and linking that reads the question."""

from __future__ import annotations

from hybridrag.agents.hybgrag import reroute, validator
from hybridrag.agents.hybgrag.linking import link_action, link_entity, question_name, relation_end_types
from hybridrag.agents.hybgrag.paths import hybrid_request, path_retrieve
from hybridrag.agents.hybgrag.report import reference_dicts
from hybridrag.graphs.hybgrag import HybGRAGContext, graph
from hybridrag.kb.base import open_kb
from hybridrag.kb.model import Entity, RelationType, Schema

SA, DB, RY = "starred_actors", "directed_by", "release_year"


def test_the_examples_path_is_taken_only_when_every_shown_example_follows_it_and_holds_the_relations():
    three = (SA, SA, DB)
    assert reroute.examples_path([SA, DB], [three, three, three]) == three  # a repeated relation collapsed
    assert reroute.examples_path([DB], [(SA, DB)] * 3) == (SA, DB)  # a hop dropped
    assert reroute.examples_path([SA, DB], [three, three, (SA, DB)]) is None  # not unanimous
    assert reroute.examples_path([RY], [three] * 3) is None  # a relation the path lacks
    assert reroute.examples_path([SA, SA, DB], [three] * 3) is None  # already the path
    assert reroute.examples_path([], [three]) is None and reroute.examples_path([DB], []) is None
    text = {"module": "text", "relations": [DB]}
    assert reroute.with_examples_path(text, [(SA, DB)]) == text
    walked = reroute.with_examples_path({"module": "hybrid", "relations": [DB]}, [(SA, DB)])
    assert walked["path"] == [SA, DB] and walked["rule"].startswith("rule: the shown examples' path")


def test_a_rejection_is_rerouted_one_hop_deeper_then_to_a_shown_path_adding_a_relation():
    first = {"module": "hybrid", "relations": [DB], "linked": [{"id": "x"}]}
    paths = [(DB,), (DB, DB), (SA, DB), (DB, SA), (DB, DB, RY), (SA, RY)]
    second = reroute.rerouted(first, paths)  # the same action one hop deeper, as a router repeating itself
    assert "path" not in second and second["deeper"] == 1 and "no router call" in second["rule"]
    third = reroute.rerouted(second, paths)
    assert third["deeper"] == 2 and second["walked"] == [[DB]]
    fourth = reroute.rerouted(third, paths)  # 1 + 2 hops is the deepest: the nearest path adding a relation
    assert fourth["path"] == [SA, DB] and fourth["deeper"] == 0
    fifth = reroute.rerouted(fourth, paths)  # that path one hop deeper, then the next one
    assert (fifth["path"], fifth["deeper"]) == ([SA, DB], 1)
    assert reroute.rerouted(fifth, paths)["path"] == [DB, SA]
    spent = {**first, "path": [DB, DB, RY]}  # three hops walked, no shown path left
    assert "the same action, no router call" in reroute.rerouted(spent, [(DB, DB, RY)])["rule"]
    assert reroute.walked_path(fourth) == [SA, DB] and reroute.walked_path(first) == [DB]
    kept = reroute.rerouted(third, paths, found=True)  # the last walk found references: kept, not swapped
    assert "path" not in kept and "the same action, no router call" in kept["rule"]
    two = {**first, "relations": [SA, DB], "path": [SA, SA, DB]}  # the router's order is kept
    assert reroute.rerouted(two, [(DB, SA, RY), (SA, DB, RY)])["path"] == [SA, DB, RY]


def test_the_hybrid_module_and_the_validator_rule_follow_a_rules_path(tiny_kb):
    kb = open_kb(tiny_kb)
    action = {"relations": [SA], "path": [SA, SA], "linked": [{"id": "Big", "kb_type": "movie"}]}
    args, facts = hybrid_request("films sharing an actor with Big", action, None, 0, True, 5)
    assert (args["relations"], args["hops"]) == ([SA, SA], 2)
    res = path_retrieve(kb, "films sharing an actor with Big", ["Big"], args["relations"], 2, 5)
    refs = reference_dicts(kb, res.references)
    assert {r["id"] for r in refs} == {"A League of Their Own", "Apollo 13"}
    facts = {"module": "hybrid", "intersection": res.intersection, "unused_relations": res.unused_relations}
    assert validator.expected_types(kb, action, "films sharing an actor with Big", use_bank=False) == {"movie"}
    assert validator.rule_verdict(kb, action, facts, refs, {"movie"})[0] == "yes"
    router_only = {**action, "path": []}  # the router's one relation reaches people, not films
    assert validator.expected_types(kb, router_only, "films sharing an actor with Big", use_bank=False) == {"person"}


def test_a_routed_part_of_a_longer_name_the_question_writes_links_to_that_name(tiny_kb):
    kb = open_kb(tiny_kb)
    question = "which movies did Tom Hanks act in?"
    assert question_name(kb, "Hanks", question) == "Tom Hanks"
    assert question_name(kb, "hanks", question) == "Tom Hanks"  # case as written by a small model
    assert question_name(kb, "Big", "who directed Big") == "Big"  # a KB name stays itself
    assert question_name(kb, "League", "who starred in A League of Their Own, the film?") == "A League of Their Own"
    assert question_name(kb, "Apollo", "was Apollo 13, in 1995, a hit") == "Apollo 13"  # punctuation kept apart
    assert question_name(kb, "A", "who starred in A League of Their Own") == "A League of Their Own"  # five words on
    assert question_name(kb, "Hanks", "") == "Hanks"  # link_rules off: no question read
    assert question_name(kb, "Meg Ryan", question) == "Meg Ryan"  # not in the question
    assert question_name(kb, "Tom Hanks act in", question) == "Tom Hanks"  # a span run on past the name
    assert question_name(kb, "movies did Tom", question) == "movies did Tom"  # no KB-name prefix: kept
    action = {"entities": [{"name": "Hanks", "type": "person"}], "relations": [SA]}
    linked = link_action(kb, action, question)["linked"]
    assert [(e["name"], e["id"]) for e in linked] == [("Tom Hanks", "Tom Hanks")]
    two = {"entities": [{"name": "Tom Hanks", "type": "person"}, {"name": "movies did Tom", "type": "movie"}]}
    out = link_action(kb, {**two, "relations": [SA]}, question)  # the dense-only name shares "Tom": merged
    assert [e["id"] for e in out["linked"]] == ["Tom Hanks"] and out["merged"] == ["movies did Tom"]
    assert len(link_action(kb, {**two, "relations": [SA]})["linked"]) == 2  # link_rules off


class _Graph:
    """Two KB entities named alike (a tag and a person) and MetaQA's directed_by: a stub of the graph store."""

    def lookup(self, name):
        return [Entity("steve martin", "steve martin", "tag"), Entity("Steve Martin", "Steve Martin", "person")]

    def schema(self):
        return Schema(
            entity_types={"movie": 1, "person": 1, "tag": 1},
            relation_types={
                DB: RelationType(DB, ("movie",), ("person",)),
                "has_tags": RelationType("has_tags", ("movie",), ("tag",)),
            },
        )


class _KB:
    graph = _Graph()


def test_without_a_candidate_of_the_routers_type_the_one_taking_the_first_relation_is_linked():
    kb = _KB()
    assert relation_end_types(kb, DB) == {"movie", "person"} and relation_end_types(kb, "nope") == set()
    assert link_entity(kb, "steve martin", "movie").type == "tag"  # no rule: the first candidate
    assert link_entity(kb, "steve martin", "movie", {"movie", "person"}).id == "Steve Martin"
    assert link_entity(kb, "steve martin", "tag", {"movie", "person"}).type == "tag"  # the router's type wins
    action = {"entities": [{"name": "steve martin", "type": "movie"}], "relations": [DB]}
    assert link_action(kb, action, "who directed the films steve martin was in")["linked"][0]["id"] == "Steve Martin"
    assert link_action(kb, action)["linked"][0]["id"] == "steve martin"


def _router_reply() -> str:
    return '{"entities":[{"name":"Tremors","type":"movie"}],"relations":["directed_by"],"module":"hybrid"}'


def test_a_small_model_is_asked_once_and_rejections_are_rerouted_by_rule(tiny_kb, tiny_llama):
    tiny_llama(_router_reply())  # a second router call would find no script and fail the test
    ctx = HybGRAGContext(kb=tiny_kb, llm="local:tiny", examples="bundled")
    out = graph.invoke({"question": "who directed Tremors"}, context=ctx)
    assert out["usage"]["by_role"]["router"]["llm_calls"] == 1
    routes = [s for s in out["trace"] if s["node"] == "route_question"]
    assert len(routes) == ctx.max_iterations and all("no router call" in s["rule"] for s in routes[1:])
    hops = [s["hops"] for s in out["trace"] if s["node"] == "retrieve_hybrid" and "hops" in s]
    assert hops[:3] == [1, 2, 3]  # the same action, one hop deeper each time


def test_with_router_rules_off_the_small_model_is_asked_again_each_iteration(tiny_kb, tiny_llama):
    tiny_llama(*[_router_reply()] * 4)
    ctx = HybGRAGContext(kb=tiny_kb, llm="local:tiny", examples="bundled", router_rules=False)
    out = graph.invoke({"question": "who directed Tremors"}, context=ctx)
    assert out["usage"]["by_role"]["router"]["llm_calls"] == ctx.max_iterations == 4
