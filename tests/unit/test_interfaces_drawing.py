"""What Studio shows of every method (issue 14): the drawing labels every conditional edge and
draws every corrective loop and every route a router can take; the context form offers the
fixed choices as ``enum``s.

Each check runs on the graph Python callers get (``graphs.get_graph``) and on the graph the
Agent Server serves (``app.studio.served_graph``: the same graph with its approval node).
"""

from __future__ import annotations

import typing
from dataclasses import fields

import pytest

from hybridrag.app.policy import RULES
from hybridrag.app.studio import served_graph
from hybridrag.graphs import context_class, get_builder, get_graph, list_graphs
from hybridrag.graphs.approval import POINTS

CORRECTIVE = {
    "fusion": set(),
    "hybgrag": {("validate_retrieval", "comment_on_routing"), ("comment_on_routing", "route_question")},
    "mor": {("intersect_routes", "plan_question"), ("plan_question", "plan_question")},
    "hydrarag": {
        ("check_answer", "plan_refined_exploration"),
        ("check_answer", "plan_predicted_exploration"),
        ("plan_refined_exploration", "explore_source"),
        ("plan_predicted_exploration", "explore_source"),
    },
    "ssrag": {("verify_answer", "extract_entities"), ("extract_entities", "extract_entities")},
}
"""The corrective loops docs/architecture.md describes, as (from, to) edges of the drawing."""

GRAPHS = {"python": get_graph, "studio": served_graph}


def drawing(method: str, where: str):
    return GRAPHS[where](method).get_graph()


def literal_values(annotation) -> set[str]:
    """Every value of every ``Literal[...]`` inside a type annotation (``list[Send] | Literal[...]``)."""
    if typing.get_origin(annotation) is typing.Literal:
        return {str(v) for v in typing.get_args(annotation)}
    return set().union(*(literal_values(a) for a in typing.get_args(annotation)), set())


def routers(method: str):
    """(node, router function, its path map) of every conditional edge of the method's builder."""
    for source, specs in get_builder(method).branches.items():
        for name, spec in specs.items():
            func = getattr(spec.path, "func", None)
            yield source, getattr(func, "router", func) or name, spec.ends  # forkable wraps some routers


@pytest.mark.parametrize("where", list(GRAPHS))
@pytest.mark.parametrize("method", list_graphs())
def test_every_conditional_edge_is_labelled_in_the_mermaid_drawing(method, where):
    drawn = drawing(method, where)
    mermaid = drawn.draw_mermaid()
    conditional = [e for e in drawn.edges if e.conditional]
    unlabelled = sorted(f"{e.source} -> {e.target}" for e in conditional if not e.data or e.data == e.target)
    assert not unlabelled, f"{method}: conditional edges without a label: {unlabelled}"
    for e in conditional:
        assert f"{e.source} -. &nbsp;{e.data}&nbsp; .-> {e.target};" in mermaid, (method, e)


@pytest.mark.parametrize("where", list(GRAPHS))
@pytest.mark.parametrize("method", list_graphs())
def test_every_corrective_edge_is_drawn(method, where):
    edges = {(e.source, e.target) for e in drawing(method, where).edges}
    expected = CORRECTIVE[method]
    point = POINTS.get(method)
    if where == "studio" and point:  # the decision's edges leave its approval node there
        expected = {(point.node if s == point.after else s, t) for s, t in expected}
    missing = sorted(expected - edges)
    assert not missing, f"{method}: corrective edges not in the drawing: {missing}"


@pytest.mark.parametrize("method", list_graphs())
def test_every_route_a_router_returns_is_a_drawn_label(method):
    """A router's ``Literal`` return values are the labels of its path map, so the drawing holds
    exactly the routes it can take (no path map: LangGraph would draw an edge to every node)."""
    for source, router, ends in routers(method):
        name = getattr(router, "__name__", router)
        assert ends is not None, f"{method}: {source} → {name} has no path map"
        assert callable(router), f"{method}: {source} → {name}: router not found"
        returns = literal_values(typing.get_type_hints(router).get("return"))
        assert returns, f"{method}: {name} does not declare its routes as Literal[...]"
        assert returns == set(ends), f"{method}: {name} returns {sorted(returns)}, draws {sorted(ends)}"


@pytest.mark.parametrize("where", list(GRAPHS))
@pytest.mark.parametrize("method", list_graphs())
def test_choice_fields_are_enums_in_the_context_schema(method, where):
    """The context schema Studio renders (the Agent Server's /schemas) lists each fixed choice."""
    props = GRAPHS[where](method).get_context_jsonschema()["properties"]
    hints = typing.get_type_hints(context_class(method))
    for f in fields(context_class(method)):
        rule = RULES.get(f.name)
        if rule is None or rule.kind != "choice":
            continue
        prop = props[f.name]
        allowed = set(rule.choices) | {f.default}  # a shared rule, narrowed by the method's own Literal
        own = set(typing.get_args(hints[f.name])) if typing.get_origin(hints[f.name]) is typing.Literal else allowed
        assert set(prop.get("enum", ())) == own & allowed, f"{method}.{f.name}: {prop}"
        assert prop.get("description"), f"{method}.{f.name} has no description"
