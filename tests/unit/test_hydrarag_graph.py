"""HydraRAG's graph as Studio shows it: choice settings are enums, every branch is a labelled edge."""

from __future__ import annotations

import pytest

from hybridrag.graphs.hydrarag import CHECK_ROUTES, HydraRAGContext, graph

CHOICES = {
    "structured_method": {"function_calling", "json_schema", "json_mode"},
    "variant": {"hydrarag", "hydrarag-e"},
    "beam_score": {"cross", "relevance"},
    "beam_text": {"relations", "path"},
    "examples": {"kb", "bundled"},
}


@pytest.mark.parametrize(("name", "choices"), sorted(CHOICES.items()))
def test_choice_settings_are_enums_in_the_context_schema(name, choices):
    prop = graph.get_context_jsonschema()["properties"][name]
    assert set(prop["enum"]) == choices and prop["description"]


@pytest.mark.parametrize("name", sorted(CHOICES))
def test_an_unknown_choice_is_refused_naming_the_field(name):
    with pytest.raises(ValueError, match=name):
        HydraRAGContext(**{name: "nonsense"})


def _edges() -> set[tuple[str, str, str | None]]:
    drawn = graph.get_graph()
    return {(e.source, e.target, e.data) for e in drawn.edges}


def test_every_branch_is_a_labelled_edge_in_the_drawing():
    edges = _edges()
    for source in ("select_sources", "plan_refined_exploration", "plan_predicted_exploration"):
        assert (source, "explore_source", "to the selected sources") in edges
        assert (source, "prune_evidence", "no source selected") in edges
    assert ("refine_paths", "check_answer", "a round's paths") in edges
    assert ("refine_paths", "generate_answer", "the final paths") in edges
    assert ("collect_final_paths", "prune_evidence", "several rounds: prune the union") in edges
    assert ("collect_final_paths", "generate_answer", "one round: answer") in edges


def test_the_corrective_edges_of_the_answer_check_are_drawn_with_their_labels():
    edges = _edges()
    for label, target in CHECK_ROUTES.items():
        assert ("check_answer", target, label) in edges
    assert {t for s, t, _ in edges if s == "check_answer"} == {
        "__end__",
        "plan_refined_exploration",
        "plan_predicted_exploration",
        "collect_final_paths",
    }
