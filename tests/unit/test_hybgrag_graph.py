"""HybGRAG's graph as Studio shows it: choice settings are enums, every branch is a labelled edge."""

from __future__ import annotations

import pytest

from hybridrag.graphs.hybgrag import FEEDBACK_ROUTES, ROUTING_ROUTES, VALIDATION_ROUTES, HybGRAGContext, graph

CHOICES = {
    "structured_method": {"function_calling", "json_schema", "json_mode"},
    "examples": {"kb", "bundled"},
    "commentor": {"llm", "rules"},
}


@pytest.mark.parametrize(("name", "choices"), sorted(CHOICES.items()))
def test_choice_settings_are_enums_in_the_context_schema(name, choices):
    prop = graph.get_context_jsonschema()["properties"][name]
    assert set(prop["enum"]) == choices and prop["description"]


@pytest.mark.parametrize("name", sorted(CHOICES))
def test_an_unknown_choice_is_refused_naming_the_field(name):
    with pytest.raises(ValueError, match=f"hybgrag {name} must be one of"):
        HybGRAGContext(**{name: "nonsense"})


def _edges() -> set[tuple[str, str, str | None]]:
    return {(e.source, e.target, e.data) for e in graph.get_graph().edges}


def test_every_branch_is_a_labelled_edge_in_the_drawing():
    edges = _edges()
    for routes, source in (
        (ROUTING_ROUTES, "route_question"),
        (VALIDATION_ROUTES, "validate_retrieval"),
        (FEEDBACK_ROUTES, "comment_on_routing"),
    ):
        for label, target in routes.items():
            assert (source, target, label) in edges
    assert ("route_question", "retrieve_hybrid", "hybrid") in edges
    assert ("route_question", "retrieve_text", "text") in edges


def test_the_corrective_edges_are_drawn_with_their_labels():
    edges = _edges()
    assert ("validate_retrieval", "comment_on_routing", "rejected: corrective feedback") in edges
    assert ("comment_on_routing", "route_question", "feedback to the router") in edges
    assert {t for s, t, _ in edges if s == "validate_retrieval"} == {"__end__", "generate_answer", "comment_on_routing"}
