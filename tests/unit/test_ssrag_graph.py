"""SSRAG's graph as Studio sees it: choice fields as enums, every branch drawn with its label, and
edges that read the state only (a state written from outside runs without a context)."""

from __future__ import annotations

import re
from typing import get_args

import pytest
from langgraph.checkpoint.memory import InMemorySaver

from hybridrag.agents.ssrag.context import CHOICES
from hybridrag.graphs.ssrag import SSRAGContext, builder, graph, route_after_routing, route_after_vectors

DRAWN = re.compile(r"^\s*(\w+) -\. &nbsp;(.+?)&nbsp; \.-> (\w+);$", re.MULTILINE)


def test_choice_fields_are_enums_in_the_context_schema():
    props = graph.get_context_jsonschema()["properties"]
    for name in ("structured_method", "graph_to_text", "routing", "rerank_query", "fact_scoring", "graph_vectors"):
        assert sorted(props[name]["enum"]) == sorted(get_args(CHOICES[name])), name


def test_a_value_outside_its_choices_is_refused_with_the_choices(tiny_kb, fake_llm):
    fake_llm()
    with pytest.raises(ValueError, match=r"unknown ssrag fact_scoring 'exact'; use parts, sentence"):
        graph.invoke(
            {"question": "who directed Big"}, context=SSRAGContext(kb=tiny_kb, llm="fake:test", fact_scoring="exact")
        )


def test_every_branch_is_drawn_with_its_label():
    drawn = {(a, label, b) for a, label, b in DRAWN.findall(graph.get_graph().draw_mermaid())}
    assert drawn == {
        ("extract_entities", "entities unknown: ask again", "extract_entities"),  # corrective edge
        ("extract_entities", "entities linked", "detect_intent"),
        ("extract_entities", "stalled", "__end__"),
        ("route_query", "texts (local or web)", "retrieve_vectors"),
        ("route_query", "local: graph walk", "retrieve_graph"),
        ("retrieve_vectors", "web route: graph of the results", "retrieve_web_graph"),
        ("retrieve_vectors", "web route, web unavailable: local graph", "retrieve_graph"),
        ("deduplicate_contexts", "answer", "generate_answer"),
        ("deduplicate_contexts", "retrieval only", "__end__"),
        ("verify_answer", "answer failed: re-augment", "extract_entities"),  # corrective edge
        ("verify_answer", "accepted", "__end__"),
    }


def test_web_and_local_routes_take_different_branches():
    assert route_after_routing({"source": "local"}) == ["texts (local or web)", "local: graph walk"]
    assert route_after_routing({"source": "web"}) == ["texts (local or web)"]
    assert route_after_vectors({"source": "local", "vector_source": "local"}) == []
    assert route_after_vectors({"source": "web", "vector_source": "web"}) == ["web route: graph of the results"]
    assert route_after_vectors({"source": "web", "vector_source": "local"}) == [
        "web route, web unavailable: local graph"
    ]


def test_a_state_written_as_dedup_continues_without_a_context():
    """update_state as the node before a conditional edge evaluates the edge with no runtime
    context: the retrieval-only choice is read from the state, not from the context."""
    app = builder.compile(checkpointer=InMemorySaver())
    config = {"configurable": {"thread_id": "t"}}
    app.update_state(config, {"question": "who directed Big", "answering": False}, as_node="deduplicate_contexts")
    assert app.get_state(config).next == ()  # retrieval only: the run is over
    app.update_state(config, {"answering": True}, as_node="deduplicate_contexts")
    assert app.get_state(config).next == ("generate_answer",)
