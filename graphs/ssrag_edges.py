"""SSRAG's conditional edges, each with the labels the drawing shows (``graph.get_graph().draw_mermaid()``).

Every edge reads the state only: LangGraph runs a conditional edge without a runtime context
when a caller writes a state as the node before it (``update_state``, forking a thread).
The corrective edges are :func:`after_entities` (unknown entities: the extractor asked again)
and :func:`after_verify` (a failed answer: re-augmentation from the entities); the router's
own re-ask happens inside ``route_query``. Algorithm 2's two routes are drawn: the local
route runs both branches from ``route_query``, the web route runs the vector branch first
and then the graph of its results (:func:`after_vectors`).
"""

from __future__ import annotations

from typing import Literal

from langgraph.graph import END

from hybridrag.graphs.ssrag_state import State


def after_entities(state: State) -> Literal["entities unknown: ask again", "entities linked", "stalled"]:
    """Ask the extractor again while the entity check has feedback; stop when re-augmenting changed nothing."""
    if state.get("feedback"):
        return "entities unknown: ask again"
    return "stalled" if state.get("stalled") else "entities linked"


Route = Literal["texts (local or web)", "local: graph walk"]
ROUTES: dict[str, str] = {"texts (local or web)": "retrieve_vectors", "local: graph walk": "retrieve_graph"}


def branches(state: State) -> list[Route]:
    """Local route: both branches in parallel; web route: the vector branch fetches first (its graph
    branch follows from :func:`after_vectors`).
    """
    return ["texts (local or web)"] + ([] if state["source"] == "web" else ["local: graph walk"])


WebGraph = Literal["web route: graph of the results", "web route, web unavailable: local graph"]
WEB_GRAPH: dict[str, str] = {
    "web route: graph of the results": "retrieve_web_graph",
    "web route, web unavailable: local graph": "retrieve_graph",
}


def after_vectors(state: State) -> list[WebGraph]:
    """On the web route the graph branch follows: the web results' graph, or the local graph when the
    vector branch fell back to the local corpus. On the local route the graph branch already runs.
    """
    if state["source"] != "web":
        return []
    web = state.get("vector_source") == "web"
    return ["web route: graph of the results" if web else "web route, web unavailable: local graph"]


def route_after_dedup(state: State) -> Literal["answer", "retrieval only"]:
    """Generate the answer unless the run is retrieval-only (read from the state: LangGraph runs a
    conditional edge without a context when a caller writes the state as the node before it).
    """
    return "answer" if state.get("answering", True) else "retrieval only"


def after_verify(state: State) -> Literal["answer failed: re-augment", "accepted"]:
    """Back to the entities while the answer check has feedback (the corrective edge), else the end."""
    return "answer failed: re-augment" if state.get("feedback") else "accepted"


ENTITIES: dict[str, str] = {
    "entities unknown: ask again": "extract_entities",
    "entities linked": "detect_intent",
    "stalled": END,
}
AFTER_DEDUP: dict[str, str] = {"answer": "generate_answer", "retrieval only": END}
AFTER_VERIFY: dict[str, str] = {"answer failed: re-augment": "extract_entities", "accepted": END}
