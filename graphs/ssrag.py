"""SSRAG: query augmentation, agentic routing, and vector ∥ graph retrieval unified in one rerank.

decompose_query → extract_entities → detect_intent → enhance_query (Algorithm 1) → route_query
(Algorithm 2: TEMPORAL → web, FACTUAL → local corpus, nothing local → web) → retrieve_vectors ∥
retrieve_graph (web route: the texts first, then retrieve_web_graph over them) →
convert_graph_to_text → rerank_jointly (top 2k) → deduplicate_contexts (top k) (Algorithm 3) →
generate_answer → verify_answer. Corrective edges (``max_iterations=1`` is the paper's single
pass): unknown entities re-ask the extractor, a failed answer re-runs from the entities, each
with the reason. The nodes are wiring: the work is in :mod:`agents.ssrag.query`,
:mod:`agents.ssrag.branches` and :mod:`agents.ssrag.answering`; settings in
:mod:`agents.ssrag.context`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Literal, cast

from langchain_core.language_models import BaseChatModel
from langgraph.graph import END, START, StateGraph
from langgraph.runtime import Runtime

from hybridrag.agents.llm.models import load_chat_model
from hybridrag.agents.ssrag import answering, branches, query
from hybridrag.agents.ssrag.context import SSRAGContext, check
from hybridrag.agents.ssrag.outcome import Outcome
from hybridrag.graphs.runtime import InputState, OutputState, context_of, resolve_kb, timed, traced
from hybridrag.kb.base import KnowledgeBase

__all__ = ["SSRAGContext", "State", "builder", "graph"]


class State(InputState, OutputState, total=False):
    """Full SSRAG state: the augmentation, the route, both branches and the common output."""

    sub_questions: list[str]
    examples: list[str]
    entities: list[dict]
    cues: dict
    query: str
    route: str
    source: str
    vector: list[dict]
    vector_source: str
    nodes: list[dict]
    graph: list[dict]
    pool: list[dict]
    context: list[dict]
    entity_rounds: int
    entity_reply: str
    feedback: str
    answer_note: str
    answer_rounds: int
    stalled: bool
    answering: bool


def _ctx(runtime: Runtime[SSRAGContext]) -> SSRAGContext:
    return check(cast(SSRAGContext, context_of(runtime, SSRAGContext)))


def _setup(runtime: Runtime[SSRAGContext]) -> tuple[SSRAGContext, KnowledgeBase, BaseChatModel]:
    ctx = _ctx(runtime)
    return ctx, resolve_kb(ctx), load_chat_model(ctx.llm, ctx.llm_base_url)


def _run(node: str, stage: str, work: Callable[[], Outcome]) -> dict:
    """Run ``work`` timed as ``stage``: its state update, trace entry and usage (LLM calls, stage seconds)."""
    usage: dict = {}
    with timed(stage, usage):
        done = work()
    entry = traced(node, done.decision, fallback=done.note, **done.facts)
    return {**done.update, "trace": [entry], "usage": {**done.calls, **usage}}


def decompose_query(state: State, runtime: Runtime[SSRAGContext]) -> dict:
    """DecomposeQuery: the question as self-contained sub-questions."""
    ctx, kb, model = _setup(runtime)
    return _run("decompose_query", "decompose", lambda: query.decompose(model, kb, ctx, state["question"]))


def extract_entities(state: State, runtime: Runtime[SSRAGContext]) -> dict:
    """ExtractKeyEntities and the entity check."""
    ctx, kb, model = _setup(runtime)
    return _run("extract_entities", "extract_entities", lambda: query.entities(model, kb, ctx, state))


def detect_intent(state: State, runtime: Runtime[SSRAGContext]) -> dict:
    """DetectIntent: question word, subtopics, temporal and factual cues."""
    ctx, _, model = _setup(runtime)
    return _run("detect_intent", "detect_intent", lambda: query.intent(model, ctx, state))


def enhance_query(state: State, runtime: Runtime[SSRAGContext]) -> dict:
    """EnhanceQuery: the augmented query Q_aug."""
    ctx, _, model = _setup(runtime)
    return _run("enhance_query", "enhance_query", lambda: query.rewrite(model, ctx, state))


def route_query(state: State, runtime: Runtime[SSRAGContext]) -> dict:
    """Agentic router: TEMPORAL or FACTUAL, then web or the local corpus."""
    ctx, kb, model = _setup(runtime)
    return _run("route_query", "route", lambda: query.route(model, kb, ctx, state))


def retrieve_vectors(state: State, runtime: Runtime[SSRAGContext]) -> dict:
    """Vector branch: local texts, or web snippets on the web route."""
    ctx = _ctx(runtime)
    return _run("retrieve_vectors", "vector_retrieval", lambda: branches.vectors(resolve_kb(ctx), ctx, state))


def retrieve_graph(state: State, runtime: Runtime[SSRAGContext]) -> dict:
    """Graph branch, local corpus: the KB graph walked from the linked entities."""
    ctx, kb, _ = _setup(runtime)
    chain = branches.chain_of(kb, ctx, state["question"])
    return _run("retrieve_graph", "graph_retrieval", lambda: branches.local_graph(kb, ctx, state, chain))


def retrieve_web_graph(state: State, runtime: Runtime[SSRAGContext]) -> dict:
    """Graph branch, web route: a graph of the triples extracted from the web results."""
    ctx, kb, model = _setup(runtime)
    return _run("retrieve_web_graph", "graph_retrieval", lambda: branches.web_graph(model, kb, ctx, state))


def convert_graph_to_text(state: State, runtime: Runtime[SSRAGContext]) -> dict:
    """LLM_Convert: each node and its relations as prose."""
    ctx, _, model = _setup(runtime)
    return _run("convert_graph_to_text", "graph_to_text", lambda: branches.to_text(model, ctx, state.get("nodes", [])))


def rerank_jointly(state: State, runtime: Runtime[SSRAGContext]) -> dict:
    """Joint rerank: vector and graph texts by cosine to Qv, top 2k."""
    ctx = _ctx(runtime)
    kb = resolve_kb(ctx)
    return _run("rerank_jointly", "rerank", lambda: answering.rerank(kb, ctx, state))


def deduplicate_contexts(state: State, runtime: Runtime[SSRAGContext]) -> dict:
    """TextDedup, then the top k as the unified context."""
    ctx, kb, model = _setup(runtime)
    return _run("deduplicate_contexts", "dedup", lambda: answering.dedup(model, kb, ctx, state))


def generate_answer(state: State, runtime: Runtime[SSRAGContext]) -> dict:
    """Answer generation over the unified context."""
    ctx, kb, model = _setup(runtime)
    return _run("generate_answer", "answer", lambda: answering.answer(model, kb, ctx, state))


def verify_answer(state: State, runtime: Runtime[SSRAGContext]) -> dict:
    """The answer check (no LLM call, no usage)."""
    done = answering.verify(_ctx(runtime), state)
    return {**done.update, "trace": [traced("verify_answer", done.decision, fallback=None, **done.facts)]}


# Routers read the state only: LangGraph runs a conditional edge without a context when a caller
# writes a state as the node before it (update_state, forking a thread).
AfterEntities = Literal["entities unknown: ask again", "entities linked", "stalled"]
Branch = Literal["texts (local or web)", "local: graph walk"]
WebGraph = Literal["web route: graph of the results", "web route, web unavailable: local graph"]
AfterDedup = Literal["answer", "retrieval only"]
AfterVerify = Literal["answer failed: re-augment", "accepted"]


def route_after_entities(state: State) -> AfterEntities:
    """Ask the extractor again while the entity check has feedback; stop when re-augmenting changed nothing."""
    if state.get("feedback"):
        return "entities unknown: ask again"
    return "stalled" if state.get("stalled") else "entities linked"


def route_after_routing(state: State) -> list[Branch]:
    """Local route: both branches in parallel; web route: the vector branch first."""
    texts: list[Branch] = ["texts (local or web)"]
    return texts if state["source"] == "web" else [*texts, "local: graph walk"]


def route_after_vectors(state: State) -> list[WebGraph]:
    """Web route: the graph of the web results, or the local graph when the web was unavailable; local: none."""
    if state["source"] != "web":
        return []
    web = state.get("vector_source") == "web"
    return ["web route: graph of the results" if web else "web route, web unavailable: local graph"]


def route_after_dedup(state: State) -> AfterDedup:
    """Generate the answer unless the run is retrieval-only."""
    return "answer" if state.get("answering", True) else "retrieval only"


def route_after_verify(state: State) -> AfterVerify:
    """Back to the entities while the answer check has feedback (the corrective edge), else the end."""
    return "answer failed: re-augment" if state.get("feedback") else "accepted"


builder = StateGraph(State, context_schema=SSRAGContext, input_schema=InputState, output_schema=OutputState)
for _node in (
    decompose_query,
    extract_entities,
    detect_intent,
    enhance_query,
    route_query,
    retrieve_vectors,
    retrieve_graph,
    retrieve_web_graph,
    convert_graph_to_text,
    rerank_jointly,
    deduplicate_contexts,
    generate_answer,
    verify_answer,
):
    builder.add_node(_node)
builder.add_edge(START, "decompose_query")  # Algorithm 1 starts by decomposing the question
builder.add_edge("decompose_query", "extract_entities")  # entities come from the sub-questions
# unknown entities: the extractor is asked again with the reason; a stalled re-augmentation ends the run
builder.add_conditional_edges(
    "extract_entities",
    route_after_entities,
    {"entities unknown: ask again": "extract_entities", "entities linked": "detect_intent", "stalled": END},
)
builder.add_edge("detect_intent", "enhance_query")  # the rewrite uses the entities, the time hints and the intent
builder.add_edge("enhance_query", "route_query")  # Algorithm 2 routes the augmented query
# local: both branches in parallel; web: the texts first
builder.add_conditional_edges(
    "route_query",
    route_after_routing,
    {"texts (local or web)": "retrieve_vectors", "local: graph walk": "retrieve_graph"},
)
# web route: the graph of the fetched results follows (the local graph when the web was unavailable)
builder.add_conditional_edges(
    "retrieve_vectors",
    route_after_vectors,
    {
        "web route: graph of the results": "retrieve_web_graph",
        "web route, web unavailable: local graph": "retrieve_graph",
    },
)
builder.add_edge("retrieve_graph", "convert_graph_to_text")  # graph nodes become text
builder.add_edge("retrieve_web_graph", "convert_graph_to_text")  # the web graph's nodes too
# the two branches join in the joint rerank
builder.add_edge(["retrieve_vectors", "convert_graph_to_text"], "rerank_jointly")
builder.add_edge("rerank_jointly", "deduplicate_contexts")  # top 2k → dedup → top k
# answer, or end a retrieval-only run
builder.add_conditional_edges(
    "deduplicate_contexts", route_after_dedup, {"answer": "generate_answer", "retrieval only": END}
)
builder.add_edge("generate_answer", "verify_answer")  # every answer is checked
# a failed answer re-augments from the entities, with the reason
builder.add_conditional_edges(
    "verify_answer", route_after_verify, {"answer failed: re-augment": "extract_entities", "accepted": END}
)

graph = builder.compile(name="ssrag")
