"""Fusion on a checkpointed thread (human in the loop) and its Studio-facing shape (issue 14).

``update_state`` writes a state as if a node had produced it, then runs that node's outgoing
edges; a conditional edge that asked for the runtime context failed there with "Missing
required config key 'N/A' for 'route_after_vectors'".
"""

from __future__ import annotations

import pytest
from langgraph.checkpoint.memory import InMemorySaver
from pydantic import TypeAdapter

from hybridrag.graphs import context_for
from hybridrag.graphs.fusion import ROUTES, FusionContext, builder

QUESTION = "who directed Forrest Gump"


@pytest.fixture
def thread():
    graph = builder.compile(checkpointer=InMemorySaver())
    config = {"configurable": {"thread_id": "fusion-hitl"}}
    out = graph.invoke({"question": QUESTION}, config, context=context_for("fusion"))
    return graph, config, out


def _after_vectors(graph, config):
    return next(s for s in graph.get_state_history(config) if s.next == ("expand_seeds",))


def test_update_state_as_the_routing_node_works(thread):
    graph, config, _ = thread
    new = graph.update_state(_after_vectors(graph, config).config, {"seeds": []}, as_node="retrieve_vectors")
    assert graph.get_state(new).next == ("fuse_results",)  # no seeds left: the edge skips the graph branch


def test_a_forked_thread_resumes_from_the_edited_state(thread):
    graph, config, first = thread
    fork = graph.update_state(
        _after_vectors(graph, config).config, {"seeds": ["Tom Hanks"]}, as_node="retrieve_vectors"
    )
    assert graph.get_state(fork).next == ("expand_seeds",)
    resumed = graph.invoke(None, fork, context=context_for("fusion"))
    expand = [s for s in resumed["trace"] if s["node"] == "expand_seeds"][-1]
    assert "Tom Hanks" in expand["decision"]
    assert resumed["ranked"] != first["ranked"]


def test_update_state_without_as_node_works(thread):
    graph, config, _ = thread
    new = graph.update_state(_after_vectors(graph, config).config, {"seeds": []})
    assert graph.get_state(new).next == ("fuse_results",)


def test_conditional_edge_is_drawn_with_its_labels():
    drawn = builder.compile().get_graph()
    edges = {(e.source, e.target): e for e in drawn.edges if e.source == "retrieve_vectors"}
    assert set(edges) == {("retrieve_vectors", t) for t in ROUTES.values()}
    assert all(e.conditional for e in edges.values())
    assert {e.data for e in edges.values()} == set(ROUTES)


@pytest.mark.parametrize(
    ("name", "choices"),
    [
        ("mode", ["bm25", "graph", "hybrid", "vector"]),
        ("tokenizer", ["bigram", "word"]),
        ("scoring", ["evidence", "normalised", "paper", "rrf"]),
    ],
)
def test_choice_fields_are_enums_in_the_schema(name, choices):
    prop = TypeAdapter(FusionContext).json_schema()["properties"][name]
    assert sorted(prop["enum"]) == choices
    assert prop["description"]


@pytest.mark.parametrize(("name", "value"), [("mode", "dense"), ("tokenizer", "trigram"), ("scoring", "magic")])
def test_a_choice_outside_its_literal_is_a_clear_error(name, value):
    graph = builder.compile()
    with pytest.raises(ValueError, match=f"unknown fusion {name} '{value}'; use "):
        graph.invoke({"question": QUESTION}, context=context_for("fusion", **{name: value}))


def test_a_resumed_thread_checks_the_context_it_is_given(thread):
    graph, config, _ = thread
    fork = graph.update_state(
        _after_vectors(graph, config).config, {"seeds": ["Tom Hanks"]}, as_node="retrieve_vectors"
    )
    with pytest.raises(ValueError, match="unknown fusion scoring 'magic'"):
        graph.invoke(None, fork, context=context_for("fusion", scoring="magic"))
